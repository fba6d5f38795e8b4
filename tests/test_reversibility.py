"""Reversibility from the working tree (S3.2), on real git repositories.

Every deleting or overwriting form, against a file in each state: tracked and clean (git restores
it: not destructive), modified, untracked, ignored, and outside any repository (work that would
be lost: destructive, and the reason names the file and its state). The git verbs that discard
work name what they would lose, so the remedy fits the state. Nothing is executed: each command
is only decided.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from gatesh._types import Action, Outcome, Rung, Verdict
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.rater.builtin import BuiltinRater
from gatesh.rater.probe import Probe
from gatesh.reading import read
from gatesh.worktree import State
from tests._homes import unchanged

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None, reason="git is not installed: the states are git's"
)

_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@x",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@x",
}

# Each form names the target as {f}; {src} is a file outside the tree to copy, move or link from.
FORMS = (
    "rm {f}",
    "rm -f {f}",
    "unlink {f}",
    "echo x > {f}",
    ": > {f}",
    "> {f}",
    "echo x >| {f}",
    "truncate -s 0 {f}",
    "cp {src} {f}",
    "mv {src} {f}",
    "ln -sf {src} {f}",
    "install -m 644 {src} {f}",
    "sed -i s/a/b/ {f}",
    "perl -pi -e s/a/b/ {f}",
    "echo x | tee {f}",
    "sort -o {f} {f}",
    "find . -name {f} -delete",
    "find . -name {f} -exec rm {{}} +",
    # A program find hands each match to is read as it would be with a path in its place.
    "find . -name {f} -exec truncate -s0 {{}} +",
    "find . -name {f} -exec sed -i s/a/b/ {{}} ;",
    "shred -u {f}",
)
STATES = {
    "tracked-clean": "clean.txt",
    "tracked-modified": "modified.txt",
    "untracked": "untracked.txt",
    "ignored": "ignored.log",
    "outside": "loose.txt",
}
# The words a reason uses for each state of lost work.
SAYS = {
    "tracked-modified": "uncommitted edit",
    "untracked": "untracked",
    "ignored": "ignored",
    "outside": "no git repository",
}


def git(repo: Path, *args: str) -> str:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **_ENV}
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


def _lay_out(tmp_path: Path) -> dict[str, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "clean.txt").write_text("a tracked line\n")
    (repo / "modified.txt").write_text("a tracked line\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    (repo / "modified.txt").write_text("a tracked line\nand an edit not committed\n")
    (repo / "untracked.txt").write_text("never added\n")
    (repo / "ignored.log").write_text("ignored data\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "loose.txt").write_text("no repository holds this\n")
    src = tmp_path / "source.txt"
    src.write_text("new content\n")
    return {"repo": repo, "outside": outside, "src": src, "home": tmp_path}


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """A repository holding a file in each state, for a test that changes it."""
    return _lay_out(tmp_path)


@pytest.fixture(scope="module")
def shared_tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """The same layout once for the module's tests that only rate commands in it (a hundred
    forms and states, three git runs each otherwise); they must leave it as it is."""
    root = tmp_path_factory.mktemp("states")
    laid_out = _lay_out(root)
    with unchanged(root):
        yield laid_out


def rate(cmd: str, cwd: Path, home: Path) -> Verdict:
    return BuiltinRater(home=str(home)).rate(read(cmd, cwd=str(cwd), home=str(home)), cwd=str(cwd))


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("form", FORMS)
def test_each_form_in_each_state(form: str, state: str, shared_tree: dict[str, Path]) -> None:
    tree = shared_tree
    cwd = tree["outside"] if state == "outside" else tree["repo"]
    cmd = form.format(f=STATES[state], src=tree["src"])
    v = rate(cmd, cwd, tree["home"])
    ids = {f.rule_id for f in v.findings if f.outcome is not Outcome.SAFE}
    if state == "tracked-clean":
        assert "files.work-loss" not in ids and v.outcome is Outcome.SAFE, (cmd, v.reason)
        assert "nothing git cannot restore" in v.reason, v.reason  # the reason says why it may run
        return
    assert "files.work-loss" in ids and v.outcome is Outcome.DESTRUCTIVE, (cmd, state, v.reason)
    loss = next(f for f in v.findings if f.rule_id == "files.work-loss")
    assert STATES[state] in loss.reason and SAYS[state] in loss.reason, loss.reason
    assert loss.remedy


def test_clean_file_delete_runs_and_modified_file_delete_does_not(tree: dict[str, Path]) -> None:
    cfg = default()
    assert (
        decide("rm clean.txt", cwd=str(tree["repo"]), config=cfg, rung=Rung.AUTO).action
        is Action.ALLOW
    )
    d = decide("rm modified.txt", cwd=str(tree["repo"]), config=cfg, rung=Rung.AUTO)
    assert d.action is not Action.ALLOW and "modified.txt" in d.reason


def test_appending_or_refusing_to_clobber_loses_nothing(tree: dict[str, Path]) -> None:
    for cmd in (
        "echo x >> untracked.txt",
        "cp -n {src} untracked.txt",
        "echo x | tee -a untracked.txt",
        "ln -s {src} untracked.txt",
        "cat untracked.txt",
        "rm missing.txt",
    ):
        v = rate(cmd.format(src=tree["src"]), tree["repo"], tree["home"])
        assert v.outcome is Outcome.SAFE, (cmd, v.reason)


def test_a_folder_counts_with_everything_inside(tree: dict[str, Path]) -> None:
    repo = tree["repo"]
    (repo / "pkg").mkdir()
    (repo / "pkg" / "a.txt").write_text("a\n")
    git(repo, "add", "pkg")
    git(repo, "commit", "-q", "-m", "pkg")
    assert rate("rm -rf pkg", repo, tree["home"]).outcome is Outcome.SAFE  # all tracked and clean
    (repo / "pkg" / "b.txt").write_text("new\n")
    v = rate("rm -rf pkg", repo, tree["home"])
    assert v.outcome is Outcome.DESTRUCTIVE and "pkg/b.txt" in v.reason
    v = rate("rm -rf .", repo, tree["home"])
    assert v.outcome is Outcome.CATASTROPHIC and ".git" in v.reason  # the repository itself


def test_a_symlink_in_the_tree_is_followed(tree: dict[str, Path]) -> None:
    repo = tree["repo"]
    (repo / "link.txt").symlink_to(tree["outside"] / "loose.txt")
    v = rate("echo x > link.txt", repo, tree["home"])
    assert v.outcome is Outcome.DESTRUCTIVE and "loose.txt" in v.reason, v.reason


def test_git_cannot_answer_fails_closed(tree: dict[str, Path]) -> None:
    repo = tree["repo"]
    (repo / ".git" / "index").write_bytes(
        b"DIRC\x00\x00\x00\x63\x00\x00\x00\x01"
    )  # an index version nobody writes
    v = rate("rm clean.txt", repo, tree["home"])
    assert v.outcome is Outcome.DESTRUCTIVE and "index could not be read" in v.reason, v.reason


def test_probe_states(tree: dict[str, Path]) -> None:
    repo, probe = tree["repo"], Probe(home=str(tree["home"]))
    assert probe.losses(str(repo / "clean.txt")) == []
    assert [x.state for x in probe.losses(str(repo / "modified.txt"))] == [State.MODIFIED]
    assert [x.state for x in probe.losses(str(repo / "untracked.txt"))] == [State.UNTRACKED]
    assert [x.state for x in probe.losses(str(repo / "ignored.log"))] == [State.IGNORED]
    assert [x.state for x in probe.losses(str(tree["outside"] / "loose.txt"))] == [State.OUTSIDE]
    assert probe.losses(str(repo / "nothing-here.txt")) == []


# --- git verbs: what they would lose ----------------------------------------------------------------


@pytest.fixture
def clean_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "clean"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "first commit")
    (repo / "a.txt").write_text("two\n")
    git(repo, "commit", "-q", "-am", "second commit")
    return repo


def test_reset_hard_on_a_clean_tree_loses_nothing(clean_repo: Path) -> None:
    assert rate("git reset --hard", clean_repo, clean_repo).outcome is Outcome.SAFE
    assert rate("git reset --hard HEAD", clean_repo, clean_repo).outcome is Outcome.SAFE


def test_reset_hard_to_an_older_commit_names_the_commit_and_says_branch_not_stash(
    clean_repo: Path,
) -> None:
    v = rate("git reset --hard HEAD~1", clean_repo, clean_repo)
    assert v.outcome is Outcome.DESTRUCTIVE
    assert "1 commit" in v.reason and "second commit" in v.reason, v.reason
    assert "branch" in v.remedy and "stash" not in v.remedy, v.remedy
    git(
        clean_repo, "branch", "keep"
    )  # the commit is now held by another branch: nothing is dropped
    assert rate("git reset --hard HEAD~1", clean_repo, clean_repo).outcome is Outcome.SAFE


def test_reset_hard_with_an_edit_names_the_file_and_says_stash(clean_repo: Path) -> None:
    (clean_repo / "a.txt").write_text("three\n")
    v = rate("git reset --hard", clean_repo, clean_repo)
    assert v.outcome is Outcome.DESTRUCTIVE and "a.txt" in v.reason and "stash" in v.remedy, (
        v.reason,
        v.remedy,
    )


def test_staged_new_file_is_lost_to_reset_hard(clean_repo: Path) -> None:
    (clean_repo / "new.txt").write_text("staged\n")
    git(clean_repo, "add", "new.txt")
    v = rate("git reset --hard", clean_repo, clean_repo)
    assert v.outcome is Outcome.DESTRUCTIVE and "new.txt" in v.reason, v.reason


@pytest.mark.parametrize(
    "cmd",
    [
        "git checkout -- .",
        "git checkout .",
        "git restore .",
        "git restore a.txt",
        "git restore --source=HEAD~1 .",  # the whole tree: its staged changes are asked for
        "git checkout HEAD~1 -- .",
        "git checkout -f main",
        "git switch --discard-changes main",
    ],
)
def test_discarding_verbs_follow_the_state(cmd: str, clean_repo: Path) -> None:
    assert rate(cmd, clean_repo, clean_repo).outcome is Outcome.SAFE, cmd
    (clean_repo / "a.txt").write_text("an edit\n")
    v = rate(cmd, clean_repo, clean_repo)
    assert v.outcome is Outcome.DESTRUCTIVE and "a.txt" in v.reason, (cmd, v.reason)


def test_clean_names_what_its_dry_run_lists(clean_repo: Path) -> None:
    assert rate("git clean -fd", clean_repo, clean_repo).outcome is Outcome.SAFE
    (clean_repo / ".gitignore").write_text("*.db\n")
    (clean_repo / "data.db").write_text("ignored\n")
    assert (
        rate("git clean -fd", clean_repo, clean_repo).findings[0].rule_id == "git.clean-force"
    )  # .gitignore
    git(clean_repo, "add", ".gitignore")
    git(clean_repo, "commit", "-q", "-m", "ignore")
    assert (
        rate("git clean -fd", clean_repo, clean_repo).outcome is Outcome.SAFE
    )  # ignored files stay without -x
    v = rate("git clean -fdx", clean_repo, clean_repo)
    assert v.outcome is Outcome.DESTRUCTIVE and "data.db" in v.reason and "ignored" in v.reason, (
        v.reason
    )


def test_stash_drop_names_the_stash(clean_repo: Path) -> None:
    assert (
        rate("git stash drop", clean_repo, clean_repo).outcome is Outcome.SAFE
    )  # no stash: nothing to drop
    (clean_repo / "a.txt").write_text("saved\n")
    git(clean_repo, "stash", "push", "-q", "-m", "half-done idea")
    v = rate("git stash drop", clean_repo, clean_repo)
    assert v.outcome is Outcome.DESTRUCTIVE and "half-done idea" in v.reason, v.reason
    assert "half-done idea" in rate("git stash clear", clean_repo, clean_repo).reason
    assert rate("git stash drop stash@{3}", clean_repo, clean_repo).outcome is Outcome.SAFE


def test_git_verbs_outside_a_repository_fail_closed(tmp_path: Path) -> None:
    v = rate("git reset --hard", tmp_path, tmp_path)
    assert v.outcome is Outcome.DESTRUCTIVE and "could not tell" in v.reason, v.reason

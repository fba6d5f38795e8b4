"""Undo (S17): the snapshot engine, the restore, coverage and the guard, on real git repositories.

Every change a test makes to a repository is made here, by Python, in the test's own folder; no
command the gate decides is run. The end-to-end runs through ``gatesh -c`` are in
tests/test_undo_e2e.py.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from _undo_repo import build, differences, state

from gatesh import explain, undo_cli
from gatesh._errors import ConfigError
from gatesh._json import plain
from gatesh._types import Action, Stage
from gatesh.audit import record_for
from gatesh.audit_entry import entry_of
from gatesh.audit_record import as_json
from gatesh.check_reply import check_reply
from gatesh.config import default, load_config
from gatesh.daemon.admin import format_record
from gatesh.daemon.replies import Undone
from gatesh.finish import dry_run
from gatesh.pipeline import decide
from gatesh.session import SessionState
from gatesh.undo import cover, guard, ops, restore, snapshot
from gatesh.undo.reply import SinceUnknown
from gatesh.undo.store import REF_PREFIX, Book
from gatesh.wire_json import from_wire, reply_object
from gatesh.worktree import Loss, State, find_repo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@x",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@x",
}


def git(argv: Sequence[str], cwd: str) -> str:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **_ENV}
    return subprocess.run(
        list(argv), cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


_TEMPLATE: list[str] = []


@pytest.fixture
def repo(tmp_path: Path) -> str:
    """A fresh copy of the task's repository (tests/_undo_repo.py) for the test to change. It is
    built with git once per process and copied: its two dozen git runs cost more than most of
    these tests. A copy is the same repository; only its remote's path is rewritten to the copy's
    own remote."""
    if not _TEMPLATE:
        base = tempfile.mkdtemp(prefix="gatesh-undo-repo-")
        atexit.register(shutil.rmtree, base, True)
        build(base, git)
        _TEMPLATE.append(base)
    base = str(tmp_path / "work")
    shutil.copytree(_TEMPLATE[0], base, symlinks=True)
    config = Path(base, "repo", ".git", "config")
    config.write_text(config.read_text().replace(_TEMPLATE[0], base))
    return os.path.join(base, "repo")


@pytest.fixture
def book(tmp_path: Path) -> Book:
    return Book(str(tmp_path / "state"))


def budget(**kw: float) -> snapshot.Budget:
    values = {"max_bytes": 1 << 28, "max_file_bytes": 1 << 25, "seconds": 30.0, **kw}
    return snapshot.Budget(
        int(values["max_bytes"]),
        int(values["max_file_bytes"]),
        time.monotonic() + values["seconds"],
    )


def take(repo: str, book: Book, **config: object) -> guard.Shot:
    undo = replace(default().undo, **config)  # type: ignore[arg-type]
    r = find_repo(repo)
    assert r is not None
    return guard.take([r], [], command="test", session="s", cwd=repo, config=undo, book=book)


def tree_files(repo: str, commit: str) -> set[str]:
    return set(git(["git", "ls-tree", "-r", "--name-only", f"{commit}:worktree"], repo).split())


# --- the snapshot ------------------------------------------------------------------------------


def test_a_snapshot_holds_every_kind_of_work_and_leaves_regenerable_output_out(
    repo: str, book: Book
) -> None:
    shot = take(repo, book)
    rs = shot.repos[0]
    files = tree_files(repo, rs.commit)
    for held in ("src/mod01.py", "src/mod02.py", "src/new_module.py", "notes/todo.md", ".env"):
        assert held in files
    assert "app.db" in files and "link.py" in files
    assert not any(f.startswith("node_modules") for f in files)
    meta = json.loads(git(["git", "cat-file", "blob", f"{rs.commit}:meta.json"], repo))
    assert meta["modes"][".env"] == "600"  # a permission git's modes cannot hold
    assert meta["head"] == "ref: refs/heads/main"
    assert set(meta["refs"]) == {"refs/heads/main", "refs/heads/feature", "refs/stash"}
    assert meta["stash_log"].count("\n") == 2
    blob = git(["git", "rev-parse", f"{rs.commit}:worktree/src/new_module.py"], repo).strip()
    assert git(["git", "cat-file", "blob", blob], repo) == "NEW = True\n"


def test_a_snapshot_touches_nothing_the_user_sees(repo: str, book: Book) -> None:
    index = Path(repo, ".git", "index")
    before = (index.read_bytes(), index.stat().st_mtime_ns, state(repo, git))
    logs = sorted(str(p) for p in Path(repo, ".git", "logs").rglob("*"))
    take(repo, book)
    take(repo, book)
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before[:2]
    assert differences(before[2], state(repo, git)) == []
    assert sorted(str(p) for p in Path(repo, ".git", "logs").rglob("*")) == logs  # no reflog
    refs = git(["git", "for-each-ref", "--format=%(refname)", "refs/gatesh"], repo).split()
    assert refs == [f"{REF_PREFIX}1", f"{REF_PREFIX}2"]
    assert git(["git", "fsck", "--no-dangling"], repo) == ""


def test_commits_and_stash_entries_stay_reachable_through_the_snapshot(
    repo: str, book: Book
) -> None:
    shot = take(repo, book)
    parents = git(["git", "rev-list", "--parents", "-n", "1", shot.repos[0].commit], repo).split()
    stash = git(["git", "log", "-g", "--format=%H", "refs/stash"], repo).split()
    heads = git(["git", "for-each-ref", "--format=%(objectname)", "refs/heads"], repo).split()
    assert set(stash) | set(heads) <= set(parents[1:])


def test_a_second_snapshot_reads_only_what_changed(repo: str, book: Book) -> None:
    time.sleep(snapshot.RACY_NS / 1e9 + 0.1)  # files written just now are read again once
    first = take(repo, book)
    second = take(repo, book)
    assert second.repos[0].new_bytes == 0 and second.repos[0].tree == first.repos[0].tree
    Path(repo, "notes", "todo.md").write_text("changed\n")
    third = take(repo, book)
    assert third.repos[0].new_bytes == len("changed\n")
    assert third.repos[0].tree != first.repos[0].tree


def test_no_filter_or_conversion_runs_and_bytes_are_kept(repo: str, book: Book) -> None:
    marker = Path(repo).parent / "filter-ran"
    Path(repo, ".gitattributes").write_text("*.txt filter=probe text eol=crlf\n")
    git(["git", "config", "filter.probe.clean", f"touch {marker}; cat"], repo)
    Path(repo, "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    shot = take(repo, book)
    assert not marker.exists()
    oid = git(["git", "rev-parse", f"{shot.repos[0].commit}:worktree/crlf.txt"], repo).strip()
    raw = subprocess.run(["git", "cat-file", "blob", oid], cwd=repo, capture_output=True).stdout
    assert raw == b"one\r\ntwo\r\n"


def test_past_the_byte_budget_it_is_skipped_before_anything_is_stored(
    repo: str, book: Book
) -> None:
    objects = sum(1 for _ in Path(repo, ".git", "objects").rglob("*"))
    with pytest.raises(snapshot.Skipped, match="max_bytes"):
        take(repo, book, max_bytes=100)
    assert sum(1 for _ in Path(repo, ".git", "objects").rglob("*")) == objects
    r = find_repo(repo)
    assert r is not None
    last = book.attempt(r.git_dir, r.root)
    assert last is not None and not last.ok and last.too_large
    with pytest.raises(snapshot.Skipped, match="tried again"):  # not tried again at once
        take(repo, book)
    last.time -= cover.SKIPPED_MEMORY_S + 1
    book.note_attempt(r.git_dir, r.root, last)
    shot = take(repo, book)
    assert shot.repos[0].files > 50


def test_past_the_time_budget_it_is_skipped(repo: str, book: Book) -> None:
    r = find_repo(repo)
    assert r is not None
    with pytest.raises(snapshot.Skipped):
        snapshot.snapshot_repo(r, 7, book, budget(seconds=-1), command="x", when=time.time())
    assert git(["git", "for-each-ref", "refs/gatesh"], repo) == ""


class _Ticks:
    """A clock for the snapshot module that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 1
        return self.now

    time_ns = staticmethod(time.time_ns)
    sleep = staticmethod(time.sleep)


def test_what_a_snapshot_cut_short_read_stays_reachable_until_one_holds_it(
    repo: str, book: Book, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = find_repo(repo)
    assert r is not None
    ticks = _Ticks()
    with monkeypatch.context() as m:
        m.setattr(snapshot, "time", ticks)
        cut = snapshot.Budget(1 << 28, 1 << 25, 5.0)  # a few files read, then out of time
        with pytest.raises(snapshot.Skipped, match="not yet held"):
            snapshot.snapshot_repo(r, 7, book, cut, command="x", when=time.time())
    held = snapshot.cache_ref(book.tree_dir(r.git_dir, r.root))
    refs = git(["git", "for-each-ref", "--format=%(refname)", "refs/gatesh"], repo).split()
    assert refs == [held]  # no snapshot, but what was read is reachable: gc keeps it
    shot = take(repo, book)
    refs = git(["git", "for-each-ref", "--format=%(refname)", "refs/gatesh"], repo).split()
    assert refs == [shot.repos[0].ref]
    git(["git", "fsck", "--no-dangling", "--connectivity-only"], repo)


def test_a_tree_with_no_snapshot_left_forgets_its_cache(repo: str, book: Book) -> None:
    take(repo, book)
    folder = book.tree_dir(*_dirs(repo))
    assert os.path.exists(os.path.join(folder, "cache"))
    assert guard.expire(book, replace(default().undo, max_age_days=1e-9)) == 1
    assert not os.path.exists(os.path.join(folder, "cache"))
    assert folder not in snapshot._MEMORY
    shot = take(repo, book)  # reads every file again: its tree names no pruned object
    assert shot.repos[0].new_bytes > 0


def _dirs(repo: str) -> tuple[str, str]:
    r = find_repo(repo)
    assert r is not None
    return r.git_dir, r.root


def test_a_file_over_the_file_cap_is_left_out_and_its_loss_not_held(
    repo: str, book: Book, tmp_path: Path
) -> None:
    shot = take(repo, book, max_file_bytes=1000)
    assert "app.db" in shot.repos[0].left_out  # 1,800 bytes
    assert "app.db" not in tree_files(repo, shot.repos[0].commit)
    policy = cover.Policy(1 << 28, 1000, str(tmp_path / "state"))
    app = os.path.join(repo, "app.db")
    assert policy.holds(app, [Loss("app.db", State.IGNORED)]) == ""
    env = os.path.join(repo, ".env")
    assert policy.holds(env, [Loss(".env", State.IGNORED)]) == os.path.realpath(repo)


def test_expiry_keeps_the_newest(repo: str, book: Book) -> None:
    for _ in range(4):
        take(repo, book)
    dropped = guard.expire(book, replace(default().undo, keep=2))
    assert dropped == 2
    assert [s.id for s in book.shots()] == [3, 4]
    refs = git(["git", "for-each-ref", "--format=%(refname)", "refs/gatesh"], repo).split()
    assert refs == [f"{REF_PREFIX}3", f"{REF_PREFIX}4"]


# --- restoring ----------------------------------------------------------------------------------


def _damage(repo: str) -> None:
    """What the commands of issue 33 do, done by hand: files removed, emptied and made, a branch
    moved back, the stash dropped, the index changed."""
    shutil.rmtree(os.path.join(repo, "notes"))
    Path(repo, "src", "mod01.py").write_text("")
    os.unlink(os.path.join(repo, ".env"))
    Path(repo, "made-after.txt").write_text("new\n")
    git(["git", "reset", "-q", "--hard", "HEAD~2"], repo)
    git(["git", "stash", "clear"], repo)


def test_restore_brings_every_byte_and_ref_back(repo: str, book: Book) -> None:
    before = state(repo, git)
    shot = take(repo, book)
    _damage(repo)
    p = restore.plan(book, shot.id)
    assert {f.path for f in p.files} >= {"notes/todo.md", "src/mod01.py", ".env", "made-after.txt"}
    assert p.stash and p.index and any(r.ref == "refs/heads/main" for r in p.refs)
    done, safety = restore.restore(book, shot.id, p.fingerprint, lambda roots, out: "safety")
    assert safety == "safety" and done.fingerprint == p.fingerprint
    assert differences(before, state(repo, git)) == []
    assert os.stat(os.path.join(repo, ".env")).st_mode & 0o777 == 0o600
    assert restore.plan(book, shot.id).empty


def test_a_restore_is_refused_when_the_tree_changed_since_the_plan(repo: str, book: Book) -> None:
    shot = take(repo, book)
    Path(repo, "notes", "todo.md").write_text("edited\n")
    p = restore.plan(book, shot.id)
    Path(repo, "notes", "todo.md").write_text("edited again\n")
    with pytest.raises(restore.RestoreFailed, match="changed since"):
        restore.restore(book, shot.id, p.fingerprint, lambda roots, out: "")
    assert Path(repo, "notes", "todo.md").read_text() == "edited again\n"


def test_edits_after_the_command_are_named(repo: str, book: Book) -> None:
    first = take(repo, book)
    Path(repo, "notes", "todo.md").write_text("the command's change\n")
    take(repo, book)  # the next command's snapshot
    Path(repo, "src", "mod05.py").write_text("an edit after the command\n")
    p = restore.plan(book, first.id)
    later = {f.path for f in p.later}
    assert later == {"src/mod05.py"}
    assert {f.path for f in p.files} == {"notes/todo.md", "src/mod05.py"}


def test_an_unknown_snapshot_is_a_clear_error(book: Book) -> None:
    with pytest.raises(restore.RestoreFailed, match="no snapshot 9"):
        restore.plan(book, 9)


def test_a_file_outside_any_repository_is_copied_and_put_back(tmp_path: Path, book: Book) -> None:
    outside = tmp_path / "loose"
    outside.mkdir()
    f = outside / "notes.txt"
    f.write_text("outside\n")
    os.chmod(f, 0o640)
    made = outside / "made.txt"
    shot = guard.take(
        [], [str(f), str(made)], command="x", session="s", cwd=str(outside),
        config=default().undo, book=book,
    )  # fmt: skip
    f.write_text("")
    made.write_text("made by the command\n")
    p = restore.plan(book, shot.id)
    assert {c.path for c in p.outside} == {str(f), str(made)}
    restore.restore(book, shot.id, p.fingerprint, lambda roots, out: "")
    assert f.read_text() == "outside\n" and os.stat(f).st_mode & 0o777 == 0o640
    assert not made.exists()


# --- judging with the snapshot ------------------------------------------------------------------

COVERED = (
    "rm -rf src",
    "git checkout -- .",
    "git restore --source=HEAD~3 .",
    "git clean -fdx",
    "git reset --hard HEAD~2",
    "git stash drop",
    "git stash clear",
    "sed -i 's/VALUE/value/' src/*.py",
    "find . -name '*.py' -exec truncate -s0 {} +",
    ": > app.db",
)


@pytest.mark.parametrize("command", COVERED)
def test_a_loss_a_snapshot_holds_runs_and_rests_on_it(
    command: str, repo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    policy = cover.Policy(1 << 28, 1 << 25, str(tmp_path / "state"))
    without = decide(command, cwd=repo, config=default())
    assert without.action is not Action.ALLOW, without.reason
    with_undo = decide(command, cwd=repo, config=default(), undo=policy)
    assert with_undo.action is Action.ALLOW, with_undo.reason
    assert with_undo.undo == (os.path.realpath(repo),)
    assert "undo can put it back" in with_undo.reason


def test_explain_foresees_the_snapshot_a_decision_rests_on(
    repo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    state_dir, config, here = str(tmp_path / "state"), default(), os.path.realpath(repo)
    policy = cover.Policy(1 << 28, 1 << 25, state_dir)
    rests = decide("rm -rf src", cwd=repo, config=config, undo=policy)
    without = decide("rm -rf src", cwd=repo, config=config)
    seen = guard.foresee(rests, cwd=repo, config=config, state_dir=state_dir, without=without)
    shown = plain(seen)
    assert shown == {
        "enabled": True,
        "snapshot": True,
        "trees": [here],
        "outside": [],
        "rests_on": [here],
        "last_skipped": {},
        "without": without.action.value,
    }
    assert list(shown) == ["enabled", "snapshot", "trees", "outside", "rests_on", "last_skipped", "without"]  # fmt: skip
    assert f"judged without undo: {without.action.value.upper()}\n" in explain._undo_lines(seen)
    read_only = decide("ls", cwd=repo, config=config)
    seen = guard.foresee(read_only, cwd=repo, config=config, state_dir=state_dir, without=None)
    assert plain(seen) == {"enabled": True, "snapshot": False}


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("rm -rf .", "the repository itself"),
        ("rm -rf .git/refs", "inside .git"),
        ("git push --force origin main", "sent elsewhere"),
        ("rm ~/notes.txt", "outside the tree, larger than the budget"),
    ],
)
def test_what_no_snapshot_holds_is_judged_as_without_undo(
    command: str, why: str, repo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "notes.txt").write_text("x" * 5000)
    policy = cover.Policy(1000, 1000, str(tmp_path / "state"))
    a = decide(command, cwd=repo, config=default())
    b = decide(command, cwd=repo, config=default(), undo=policy)
    assert (a.action, a.outcome, b.undo) == (b.action, b.outcome, ()), why


def test_a_tree_whose_last_snapshot_was_too_large_is_judged_without_undo(
    repo: str, book: Book, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(snapshot.Skipped):
        take(repo, book, max_bytes=100)
    policy = cover.Policy(1 << 28, 1 << 25, book.root[: -len("/undo")])
    assert decide(": > app.db", cwd=repo, config=default(), undo=policy).action is not Action.ALLOW


# --- the guard ----------------------------------------------------------------------------------


def _protect(decision, repo: str, tmp_path: Path, **undo: object):  # type: ignore[no-untyped-def]
    config = replace(default(), undo=replace(default().undo, **undo))  # type: ignore[arg-type]
    return guard.protect(
        decision,
        cwd=repo,
        session="s",
        config=config,
        state_dir=str(tmp_path / "state"),
        redecide=lambda: decide(": > app.db", cwd=repo, config=default()),
    )


def test_the_guard_takes_a_snapshot_before_an_allowed_command_that_writes(
    repo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    policy = cover.Policy(1 << 28, 1 << 25, str(tmp_path / "state"))
    d = _protect(decide(": > app.db", cwd=repo, config=default(), undo=policy), repo, tmp_path)
    assert d.action is Action.ALLOW and d.snapshot == "1" and d.undo
    read_only = _protect(decide("git status", cwd=repo, config=default()), repo, tmp_path)
    assert read_only.stage is Stage.READ_ONLY and not read_only.snapshot
    refused = _protect(decide(": > app.db", cwd=repo, config=default()), repo, tmp_path)
    assert refused.action is not Action.ALLOW and not refused.snapshot


def test_a_decision_resting_on_a_snapshot_not_taken_is_decided_without_undo(
    repo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    policy = cover.Policy(1 << 28, 1 << 25, str(tmp_path / "state"))
    covered = decide(": > app.db", cwd=repo, config=default(), undo=policy)
    d = _protect(covered, repo, tmp_path, max_bytes=10)
    assert d.action is not Action.ALLOW and not d.snapshot and not d.undo
    assert "judged without undo" in d.undo_note and "max_bytes" in d.undo_note
    rec = record_for(d, session="s", pid=1, cwd=repo)
    assert "judged without undo" in rec.undo_note


def test_a_snapshot_not_taken_for_a_command_that_does_not_rest_on_one_is_noted(
    repo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    d = _protect(decide("make test", cwd=repo, config=default()), repo, tmp_path, max_bytes=10)
    assert d.action is Action.ALLOW and not d.snapshot
    assert d.undo_note.startswith("no snapshot was taken")


def test_the_audit_line_and_the_log_name_the_snapshot(
    repo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    policy = cover.Policy(1 << 28, 1 << 25, str(tmp_path / "state"))
    d = _protect(decide(": > app.db", cwd=repo, config=default(), undo=policy), repo, tmp_path)
    done = dry_run(d, state=SessionState(id="s"), cwd=repo)
    assert done.record is not None and done.record.snapshot == "1"
    assert "undo 1" in format_record(entry_of(as_json(done.record)))
    assert done.undo_line == "gatesh: undo 1 restores the files this changed"
    assert check_reply(done, session="s", shell="bash").undo == done.undo_line


# --- config and the verb -------------------------------------------------------------------------


def test_undo_config_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / ".config" / "gatesh" / "config.toml"
    cfg.parent.mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    cfg.write_text("[undo]\nenabled = false\nmax_bytes = 1000\nmax_seconds = 0.5\n")
    c = load_config(str(tmp_path))
    assert (c.undo.enabled, c.undo.max_bytes, c.undo.max_seconds) == (False, 1000, 0.5)
    cfg.write_text("[undo]\nkeep = -3\n")
    with pytest.raises(ConfigError, match=r"undo\.keep") as exc:
        load_config(str(tmp_path))
    assert exc.value.line == 2
    (tmp_path / "proj").mkdir()
    cfg.write_text("")
    (tmp_path / "proj" / ".gatesh.toml").write_text("[undo]\nenabled = false\n")
    with pytest.raises(ConfigError, match=r"undo\.enabled"):  # an agent can write a project file
        load_config(str(tmp_path / "proj"))


def test_the_verb_needs_a_list_or_an_id(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in ([], ["--list", "3"]):
        with pytest.raises(SystemExit) as exc:
            undo_cli.main(argv)
        assert exc.value.code == 2


def test_the_list_says_what_changed_since() -> None:
    rows = [
        {
            "id": 4,
            "time": time.time() - 30,
            "cwd": "~/proj",
            "command": "rm -rf src",
            "since": {"files": 3, "refs": 1, "stash": True, "later": 0},
        },
        {"id": 3, "time": time.time() - 7200, "cwd": "~/proj", "command": "make", "since": {}},
        {"id": 2, "time": 1, "command": "x", "since": {"error": "its objects are gone"}},
    ]  # as an older daemon may write them: what a row leaves out reads as empty
    listed = from_wire(Undone, {"ok": True, "snapshots": rows}).snapshots
    assert listed is not None and isinstance(listed[2].since, SinceUnknown)
    text = undo_cli._list(listed)
    assert "rm -rf src" in text and "changed since: 3 files, 1 ref, the stash" in text
    assert "nothing changed since" in text and "its objects are gone" in text


def test_the_undo_reply_is_the_json_gatesh_undo_reads_back(
    repo: str, book: Book, tmp_path: Path
) -> None:
    shot = take(repo, book)
    _damage(repo)
    state_dir, config = str(tmp_path / "state"), default().undo
    listed = Undone(snapshots=ops.list_shots(state_dir, config))
    planned = Undone(plan=ops.plan_of(state_dir, config, shot.id))
    assert planned.plan is not None
    restored = Undone(restored=ops.restore_to(state_dir, config, shot.id, planned.plan.fingerprint))
    for reply in (listed, planned, restored):
        wire = json.loads(json.dumps(reply_object(reply)))
        assert from_wire(Undone, wire) == reply
    # The members and their order, as `gatesh undo --json` prints them.
    row = reply_object(listed)["snapshots"][0]
    assert list(row) == [
        "id",
        "time",
        "session",
        "cwd",
        "command",
        "trees",
        "files",
        "bytes",
        "since",
    ]
    assert list(row["since"]) == ["files", "later", "refs", "index", "stash", "outside"]
    plan = reply_object(planned)["plan"]
    members = ["id", "command", "time", "files", "refs", "head", "index", "stash", "outside"]
    assert list(plan) == [*members, "fingerprint"]
    assert {f["action"] for f in plan["files"]} == {"write", "remove"}
    assert list(plan["files"][0]) == ["root", "path", "action", "later"]
    assert list(plan["refs"][0]) == ["root", "ref", "now", "then"]
    assert plan["index"] == plan["stash"] == [os.path.realpath(repo)]
    done = reply_object(restored)["restored"]
    assert list(done) == [*members, "fingerprint", "undone_by", "millis"]
    assert done["undone_by"] == str(shot.id + 1)  # the snapshot of what the restore replaced

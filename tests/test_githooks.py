"""git hooks in real temporary repositories: what they stop, what they let through."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gatesh import githooks
from gatesh.githooks import HOOK_NAMES, hook_script

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_source_tree_scripts_are_the_rendered_ones() -> None:
    for name in HOOK_NAMES:
        path = REPO_ROOT / "hooks" / "git" / name
        assert path.read_text() == hook_script(name), f"regenerate hooks/git/{name}"
        assert path.stat().st_mode & stat.S_IXUSR


def test_scripts_are_valid_sh() -> None:
    for name in HOOK_NAMES:
        subprocess.run(["sh", "-n", "-c", hook_script(name, "/opt/x y/gatesh")], check=True)


def test_main_usage() -> None:
    assert githooks.main([]) == 2
    assert githooks.main(["post-commit"]) == 2
    assert githooks.main(["--help"]) == 0


def test_pre_push_line_checks_without_git(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(githooks, "_is_ancestor", lambda old, new: old == "a" * 40)
    z = "0" * 40
    protected = frozenset({"main"})
    ok = githooks.check_pre_push(
        "origin", [f"refs/heads/f {'b' * 40} refs/heads/f {'a' * 40}"], protected
    )
    assert ok == []
    new_branch = githooks.check_pre_push(
        "origin", [f"refs/heads/f {'b' * 40} refs/heads/f {z}"], protected
    )
    assert new_branch == []
    rules = [
        r.rule_id
        for r in githooks.check_pre_push(
            "origin",
            [
                f"(delete) {z} refs/heads/f {'a' * 40}",
                f"refs/heads/f {'b' * 40} refs/heads/f {'c' * 40}",
                f"refs/heads/main {'b' * 40} refs/heads/main {'a' * 40}",
                "garbage",
            ],
            protected,
        )
    ]
    assert rules == [
        "git:delete-remote-ref",
        "git:force-push",
        "git:push-protected",
        "git:unreadable",
    ]


def test_reference_transaction_only_prepared_vetoes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(githooks, "_is_ancestor", lambda old, new: False)
    z = "0" * 40
    lines = [
        f"{'a' * 40} {z} refs/heads/topic",
        f"{'a' * 40} {'b' * 40} refs/heads/main",
        f"{'a' * 40} {z} refs/remotes/origin/gone",
        f"{'a' * 40} {z} refs/tags/v1",
        f"{z} {'b' * 40} refs/heads/new",
        f"{'a' * 40} {'b' * 40} refs/heads/topic",
    ]
    assert githooks.check_reference_transaction("committed", lines, frozenset({"main"})) == []
    rules = [
        r.rule_id
        for r in githooks.check_reference_transaction("prepared", lines, frozenset({"main"}))
    ]
    assert rules == ["git:delete-branch", "git:rewrite-protected", "git:delete-tag"]


# --- real repositories --------------------------------------------------------------------------


def git(
    cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture
def world(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A bare remote with main, a clone with history, and a `gatesh` on PATH (this checkout)."""
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(var, raising=False)
    for key, value in (
        ("user.name", "Dev"),
        ("user.email", "dev@example.com"),
        ("init.defaultBranch", "main"),
        ("advice.detachedHead", "false"),
    ):
        subprocess.run(["git", "config", "--global", key, value], check=True)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    launcher = bindir / "gatesh"
    launcher.write_text(f'#!/bin/sh\nPYTHONPATH={REPO_ROOT} exec {sys.executable} -m gatesh "$@"\n')
    launcher.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "--bare", "-b", "main", str(remote))
    work = tmp_path / "work"
    git(tmp_path, "clone", str(remote), str(work))
    for n in range(2):
        (work / f"f{n}").write_text(f"{n}\n")
        git(work, "add", ".")
        git(work, "commit", "-m", f"c{n}")
    git(work, "push", "origin", "main")
    git(work, "switch", "-c", "feature")
    (work / "feat").write_text("x\n")
    git(work, "add", ".")
    git(work, "commit", "-m", "feature")
    git(work, "push", "origin", "feature")
    git(work, "switch", "main")
    return {"remote": remote, "work": work, "launcher": launcher}


def install_hooks(work: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "gatesh", "install", "git", *extra],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.slow
def test_force_push_to_main_is_stopped_with_the_gates_message(world: dict[str, Path]) -> None:
    work = world["work"]
    # Rewrite main before the hooks exist (with them, the rewrite itself is refused).
    git(work, "reset", "--hard", "HEAD~1")
    (work / "other").write_text("y\n")
    git(work, "add", ".")
    git(work, "commit", "-m", "diverged")
    install_hooks(work)
    before = git(world["remote"], "rev-parse", "main").stdout
    proc = git(work, "push", "--force", "origin", "main", check=False)
    assert proc.returncode != 0
    assert "gatesh: refused to force-push" in proc.stderr and "[git:force-push]" in proc.stderr
    assert git(world["remote"], "rev-parse", "main").stdout == before


@pytest.mark.slow
def test_branch_deletions_are_stopped(world: dict[str, Path]) -> None:
    work = world["work"]
    install_hooks(work)
    proc = git(work, "push", "origin", "--delete", "feature", check=False)
    assert proc.returncode != 0 and "[git:delete-remote-ref]" in proc.stderr
    assert (
        git(world["remote"], "rev-parse", "--verify", "refs/heads/feature", check=False).returncode
        == 0
    )
    proc = git(work, "branch", "-D", "feature", check=False)
    assert proc.returncode != 0 and "[git:delete-branch]" in proc.stderr
    assert git(work, "rev-parse", "--verify", "refs/heads/feature", check=False).returncode == 0
    git(work, "tag", "v1")
    proc = git(work, "tag", "-d", "v1", check=False)
    assert proc.returncode != 0 and "[git:delete-tag]" in proc.stderr


@pytest.mark.slow
def test_ordinary_commit_and_push_pass(world: dict[str, Path]) -> None:
    work = world["work"]
    install_hooks(work)
    git(work, "switch", "feature")
    (work / "more").write_text("z\n")
    git(work, "add", ".")
    git(work, "commit", "-m", "more work")
    git(work, "push", "origin", "feature")
    git(work, "switch", "-c", "topic")
    git(work, "push", "-u", "origin", "topic")
    assert (
        git(world["remote"], "rev-parse", "topic").stdout == git(work, "rev-parse", "HEAD").stdout
    )
    # A commit on main is fine too while git.pre_commit is off (the default).
    git(work, "switch", "main")
    (work / "m").write_text("m\n")
    git(work, "add", ".")
    git(work, "commit", "-m", "on main")


@pytest.mark.slow
def test_protected_branch_push_rewrite_and_rebase_are_stopped(world: dict[str, Path]) -> None:
    work = world["work"]
    install_hooks(work)
    (work / "m").write_text("m\n")
    git(work, "add", ".")
    git(work, "commit", "-m", "on main")
    proc = git(work, "push", "origin", "main", check=False)
    assert proc.returncode != 0 and "[git:push-protected]" in proc.stderr
    proc = git(work, "commit", "--amend", "-m", "rewritten", check=False)
    assert proc.returncode != 0 and "[git:rewrite-protected]" in proc.stderr
    proc = git(work, "rebase", "feature", check=False)
    assert proc.returncode != 0 and "[git:rebase-protected]" in proc.stderr
    git(work, "rebase", "--abort", check=False)


@pytest.mark.slow
def test_remote_default_branch_is_protected(world: dict[str, Path]) -> None:
    work = world["work"]
    git(work, "switch", "-c", "trunk")
    git(work, "push", "origin", "trunk")
    git(world["remote"], "symbolic-ref", "HEAD", "refs/heads/trunk")
    git(work, "remote", "set-head", "origin", "--auto")
    install_hooks(work)
    (work / "t").write_text("t\n")
    git(work, "add", ".")
    git(work, "commit", "-m", "on trunk")
    proc = git(work, "push", "origin", "trunk", check=False)
    assert proc.returncode != 0 and "'trunk'" in proc.stderr


@pytest.mark.slow
def test_pre_commit_when_enabled(world: dict[str, Path], isolated_home: Path) -> None:
    config = isolated_home / ".config" / "gatesh" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[git]\npre_commit = true\n")
    work = world["work"]
    install_hooks(work)
    (work / "m").write_text("m\n")
    git(work, "add", ".")
    proc = git(work, "commit", "-m", "on main", check=False)
    assert proc.returncode != 0 and "[git:commit-protected]" in proc.stderr
    git(work, "switch", "feature")
    git(work, "commit", "-m", "on feature")


@pytest.mark.slow
def test_invalid_config_stops_git(world: dict[str, Path], isolated_home: Path) -> None:
    work = world["work"]
    install_hooks(work)
    config = isolated_home / ".config" / "gatesh" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[git]\nprotected_branches = 3\n")
    proc = git(work, "push", "origin", "feature", check=False)
    assert proc.returncode != 0 and "could not decide" in proc.stderr


@pytest.mark.slow
def test_existing_hook_is_chained_and_restored(world: dict[str, Path]) -> None:
    work = world["work"]
    hook = work / ".git" / "hooks" / "pre-commit"
    marker = work.parent / "own-hook-ran"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    out = install_hooks(work).stdout
    assert "pre-gatesh" in out
    git(work, "switch", "feature")
    git(work, "commit", "--allow-empty", "-m", "chained")
    assert marker.exists()
    install_hooks(work)  # idempotent: the saved hook is not overwritten
    assert (work / ".git" / "hooks" / "pre-commit.pre-gatesh").read_text().endswith(f"{marker}\n")
    install_hooks(work, "--uninstall")
    assert hook.read_text() == f"#!/bin/sh\ntouch {marker}\n"
    assert not (work / ".git" / "hooks" / "pre-push").exists()


@pytest.mark.slow
def test_global_install_sets_hooks_path_and_runs_repo_hooks(
    world: dict[str, Path], isolated_home: Path
) -> None:
    work = world["work"]
    install_hooks(work, "--global")
    folder = isolated_home / ".local" / "share" / "gatesh" / "git-hooks"
    assert git(work, "config", "--global", "core.hooksPath").stdout.strip() == str(folder)
    assert str(world["launcher"]) in (folder / "pre-push").read_text()
    proc = git(work, "push", "origin", "--delete", "feature", check=False)
    assert proc.returncode != 0 and "[git:delete-remote-ref]" in proc.stderr
    marker = work.parent / "repo-hook-ran"
    own = work / ".git" / "hooks" / "pre-commit"
    own.write_text(f"#!/bin/sh\ntouch {marker}\n")
    own.chmod(0o755)
    git(work, "switch", "feature")
    git(work, "commit", "--allow-empty", "-m", "x")
    assert marker.exists()
    install_hooks(work, "--global", "--uninstall")
    assert git(work, "config", "--global", "core.hooksPath", check=False).returncode != 0
    assert not folder.exists()


@pytest.mark.slow
def test_global_install_refuses_a_foreign_hooks_path(world: dict[str, Path]) -> None:
    git(world["work"], "config", "--global", "core.hooksPath", "/somewhere/else")
    proc = subprocess.run(
        [sys.executable, "-m", "gatesh", "install", "git", "--global"],
        cwd=world["work"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "will not replace it" in proc.stderr


@pytest.mark.slow
def test_pack_refs_and_gc_are_not_deletions(world: dict[str, Path]) -> None:
    work = world["work"]
    install_hooks(work)
    git(work, "tag", "v1")
    git(work, "branch", "spare")
    proc = git(work, "pack-refs", "--all", "--prune", check=False)
    assert proc.returncode == 0 and "gatesh" not in proc.stderr, proc.stderr
    git(work, "branch", "spare2")
    proc = git(work, "gc", "--quiet", check=False)
    assert proc.returncode == 0 and "gatesh" not in proc.stderr, proc.stderr
    for ref in ("refs/tags/v1", "refs/heads/spare", "refs/heads/spare2"):
        git(work, "rev-parse", "--verify", ref)
    # A deletion after packing is still refused.
    proc = git(work, "branch", "-D", "spare", check=False)
    assert proc.returncode != 0 and "[git:delete-branch]" in proc.stderr


@pytest.mark.slow
def test_branch_rename_is_not_a_deletion(world: dict[str, Path]) -> None:
    work = world["work"]
    install_hooks(work)
    tip = git(work, "rev-parse", "feature").stdout
    proc = git(work, "branch", "-m", "feature", "renamed", check=False)
    assert proc.returncode == 0 and "gatesh" not in proc.stderr, proc.stderr
    assert git(work, "rev-parse", "renamed").stdout == tip
    assert git(work, "rev-parse", "--verify", "refs/heads/feature", check=False).returncode != 0
    # Renaming a protected branch away is still a deletion of that branch.
    proc = git(work, "branch", "-m", "main", "old-main", check=False)
    assert proc.returncode != 0 and "[git:delete-branch]" in proc.stderr
    git(work, "rev-parse", "--verify", "refs/heads/main")

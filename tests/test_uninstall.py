"""install.sh, then `man gatesh`, then `./install.sh --uninstall --purge` on a HOME where a person
had harness settings of their own and ran `gatesh install git` in two repositories (one with a hook
of its own): afterwards nothing of gatesh's is left anywhere install put it, and those repositories
commit and branch as before, their own hook running again (issue 18, items 12 and 13)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _daemon import stop_daemon_at

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[1]
SETTINGS = {"theme": "dark", "permissions": {"allow": ["Bash(ls:*)"]}}
# The repository's own pre-commit hook: harmless, and leaves a trace when it runs.
OWN_HOOK = '#!/bin/sh\ntouch "$(git rev-parse --git-dir)/own-hook-ran"\n'


def _env(tmp: Path, home: Path, runtime: Path) -> dict[str, str]:
    bindir = home / ".local" / "bin"
    env = {
        "HOME": str(home),
        "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
        "XDG_RUNTIME_DIR": str(runtime),
        "PIP_CACHE_DIR": str(tmp / "pip-cache"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GATESH_PYTHON": sys.executable,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "LANG": "C.UTF-8",
    }
    if sys.prefix == sys.base_prefix:
        env.update(GATESH_INSTALL_SYSTEM_SITE="1", GATESH_INSTALL_PIP_ARGS="--no-deps")
    else:
        env["PIP_CACHE_DIR"] = os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))
    return env


def _run(
    args: list[str], env: dict[str, str], cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _repo(path: Path, env: dict[str, str], own_hook: bool) -> None:
    path.mkdir()
    assert _run(["git", "init", "-q", "-b", "main"], env, path).returncode == 0
    (path / "f").write_text("1\n")
    _run(["git", "add", "f"], env, path)
    assert _run(["git", "commit", "-qm", "first"], env, path).returncode == 0
    if own_hook:
        hook = path / ".git" / "hooks" / "pre-commit"
        hook.write_text(OWN_HOOK)
        hook.chmod(0o755)


def _commits_and_branches(repo: Path, env: dict[str, str]) -> None:
    for args in (
        ["git", "commit", "-q", "--allow-empty", "-m", "after"],
        ["git", "branch", "topic"],
        ["git", "branch", "-D", "topic"],
        ["git", "checkout", "-q", "-b", "other"],
        ["git", "checkout", "-q", "main"],
    ):
        out = _run(args, env, repo)
        assert out.returncode == 0, (args, out.stdout + out.stderr)


class Installed:
    """One install.sh run on a HOME with a person's settings and two repositories."""

    def __init__(self, tmp: Path) -> None:
        self.home, self.runtime = tmp / "home", tmp / "run"
        self.home.mkdir()
        self.runtime.mkdir(mode=0o700)
        self.env = _env(tmp, self.home, self.runtime)
        (self.home / ".claude").mkdir()
        (self.home / ".claude" / "settings.json").write_text(json.dumps(SETTINGS))
        self.repos = [self.home / "src" / "plain", self.home / "src" / "own-hook"]
        (self.home / "src").mkdir()
        _repo(self.repos[0], self.env, own_hook=False)
        _repo(self.repos[1], self.env, own_hook=True)
        self.launcher = str(self.home / ".local" / "bin" / "gatesh")
        proc = _run(["sh", str(REPO_ROOT / "install.sh")], self.env, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    world = Installed(tmp_path_factory.mktemp("inst"))
    yield world
    stop_daemon_at(world.runtime)


@pytest.mark.skipif(
    shutil.which("man") is None, reason="man is not installed (apt-get install man-db)"
)
def test_man_gatesh_works_after_install(installed: Installed) -> None:
    """The README promises `man gatesh`: install.sh puts the page where man finds it from PATH."""
    where = _run(["man", "-w", "gatesh"], installed.env)
    assert where.returncode == 0 and where.stdout.strip().startswith(str(installed.home)), (
        where.stderr
    )
    page = _run(["man", "-P", "cat", "gatesh"], {**installed.env, "MANWIDTH": "80"})
    assert page.returncode == 0 and "SYNOPSIS" in page.stdout and "gatesh watch" in page.stdout, (
        page.stderr
    )


def test_uninstall_removes_everything_install_added_and_repos_still_commit(
    installed: Installed,
) -> None:
    home, runtime, env, repos, launcher = (
        installed.home,
        installed.runtime,
        installed.env,
        installed.repos,
        installed.launcher,
    )
    assert _run([launcher, "install", "claude-code"], env).returncode == 0
    for repo in repos:
        out = _run([launcher, "install", "git"], env, repo)
        assert out.returncode == 0, out.stderr
    assert list((home / ".claude").glob("settings.json.bak-gatesh-*"))  # install made a backup
    assert _run([launcher, "-c", "echo ok"], env).stdout == "ok\n"  # the daemon is up
    assert (runtime / "gatesh").is_dir()
    proc = _run(["sh", str(REPO_ROOT / "install.sh"), "--uninstall", "--purge"], env)
    try:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert json.loads((home / ".claude" / "settings.json").read_text()) == SETTINGS
        assert not list((home / ".claude").glob("*bak-gatesh*")), list((home / ".claude").iterdir())
        assert not (runtime / "gatesh").exists(), list(
            (runtime / "gatesh").iterdir()
        )  # socket, lock
        for repo in repos:
            hooks = repo / ".git" / "hooks"
            assert not [h for h in hooks.iterdir() if "gatesh" in h.read_text(errors="replace")], (
                list(hooks.iterdir())
            )
            _commits_and_branches(repo, env)
        assert (repos[1] / ".git" / "hooks" / "pre-commit").read_text() == OWN_HOOK
        assert (repos[1] / ".git" / "own-hook-ran").exists()  # its own hook runs again
        left = [
            p for p in home.rglob("*") if "gatesh" in p.name and not p.is_relative_to(home / "src")
        ]
        assert not left, left
        assert not (home / ".local" / "share" / "man" / "man1" / "gatesh.1").exists()
    finally:
        stop_daemon_at(runtime)

"""Shared fixtures: every test runs with its own HOME and XDG folders, so nothing touches the
developer's real config, state or daemon; every daemon a test started is stopped afterwards."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._homes import HOMES, new_home, point_home
from tests.harness import clis


def pytest_report_header() -> list[str]:
    """Name the real harness CLIs the run drives (S11.4), so a CI log says which versions its
    tests/harness results are for, or that they skip and why."""
    if not clis.runs_here():
        return [
            f"harness CLIs: none (the pinned builds are Linux {clis.MACHINE}; tests/harness skip)"
        ]
    named = [
        f"{c.spec}{' on ' + clis.NODE.spec if c.on_node else ''}{'' if clis.ready(c) else ' MISSING'}"
        for c in clis.CLIS.values()
    ]
    line = f"harness CLIs (in {clis.CACHE}): {', '.join(named)}"
    if "MISSING" in line:
        line += "; run `python3 tests/harness/clis.py install` (.ci/run does)"
    return [line]


#: This checkout: the suite must leave its repository as it found it.
CHECKOUT = Path(__file__).resolve().parent.parent
_REFS_BEFORE = pytest.StashKey[frozenset[str]]()


def _gatesh_refs() -> frozenset[str] | None:
    """The refs under ``refs/gatesh/`` (undo snapshots, S17) of this checkout's repository; None
    when it is not a git checkout."""
    try:
        got = subprocess.run(
            ["git", "-C", str(CHECKOUT), "for-each-ref", "--format=%(refname)", "refs/gatesh/"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return frozenset(got.stdout.split()) if got.returncode == 0 else None


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the run itself, not an xdist worker
        refs = _gatesh_refs()
        if refs is not None:
            session.config.stash[_REFS_BEFORE] = refs


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when it left an undo snapshot in this checkout's own repository: a test
    gated a command in the checkout instead of a scratch repository of its own (the
    ``isolated_home`` fixture's working folder, or a ``tmp_path``)."""
    before = session.config.stash.get(_REFS_BEFORE, None)
    after = _gatesh_refs() if before is not None else None
    if before is None or after is None or not after - before:
        return
    left = ", ".join(sorted(after - before))
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_line(
            f"FAILED: the suite left {left} in this checkout's repository ({CHECKOUT}): a test "
            "gated a command here instead of in a scratch repository",
            red=True,
        )
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _daemons_under(root: str) -> list[int]:
    """Pids of gatesh daemons whose runtime folder (from their environment) lies under ``root``."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            if b"gatesh" not in b" ".join(argv) or b"daemon" not in argv:
                continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
        except OSError:
            continue
        runtime = env.get(b"XDG_RUNTIME_DIR", b"").decode(errors="replace")
        home = env.get(b"HOME", b"").decode(errors="replace")
        if runtime.startswith(root) or home.startswith(root):
            pids.append(int(entry))
    return pids


def _running(pid: int) -> bool:
    """True while ``pid`` runs. A zombie has exited: the daemon is a grandchild of init (it double
    forks), and an init that reaps slowly (some containers' take ~2 s) must not count as a slow exit."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b") ", 1)[1][:1] != b"Z"
    except (OSError, IndexError):
        return False


def stop_daemons(root: str) -> None:
    """SIGTERM, then SIGKILL after a short grace, every daemon started under ``root``."""
    pids = _daemons_under(root)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 3
    while pids and time.monotonic() < deadline:
        pids = [p for p in pids if _running(p)]
        if pids:
            time.sleep(0.02)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture(scope="session", autouse=True)
def _no_daemon_outlives_the_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    root = str(tmp_path_factory.getbasetemp())
    yield
    stop_daemons(root)
    stop_daemons(HOMES)
    shutil.rmtree(HOMES, ignore_errors=True)


@pytest.fixture(autouse=True)
def isolated_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = new_home()
    point_home(monkeypatch, home)
    yield home
    if _may_hold_a_daemon(home):
        stop_daemons(str(home))
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def shared_home() -> Iterator[Path]:
    """One HOME for all the tests of a module that only decide commands (tests/_homes.py): the
    module overrides ``isolated_home`` to point each test at it, and lays out what its cases are
    decided in once, inside :func:`_homes.unchanged`. Nothing that decides starts a daemon."""
    home = new_home()
    yield home
    shutil.rmtree(home, ignore_errors=True)


def _may_hold_a_daemon(home: Path) -> bool:
    """Whether a daemon may have started under ``home``: it left its lock or socket there (the
    fixture points the runtime folder into ``home``). Most tests start none, and looking through
    every process after each of them cost more than many a test (~3-5 ms); the session's last
    sweep still stops a daemon started with a runtime folder elsewhere."""
    for _, _, files in os.walk(home):
        if "daemon.lock" in files or "daemon.sock" in files:
            return True
    return False


@pytest.fixture(scope="module")
def scratch_tree(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A realistic working tree (gatesh.testing.worktree) for one test module: rules that read the
    files' git state (S3.2) are decided there. Skips visibly without git."""
    import shutil

    from gatesh.testing import worktree

    if shutil.which("git") is None:
        pytest.skip("git is not installed: these cases are decided in a real git working tree")
    return worktree.build(str(tmp_path_factory.mktemp("tree")))

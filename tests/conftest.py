"""Shared fixtures: every test runs with its own HOME and XDG folders, so nothing touches the
developer's real config, state or daemon; every daemon a test started is stopped afterwards."""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

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


# Every test's HOME lives in a folder of its own directly under /tmp, not beside the thousands of
# folders of the run's basetemp: a command gatesh lets run is confined to a boundary (S16) whose
# rules walk around the credential stores and gatesh's files in HOME, one rule per sibling of each
# folder on the way there.
# One folder per test process: a worker stops only its own daemons at the end of its run.
HOMES = f"/tmp/gatesh-test-homes/p{os.getpid()}"


@pytest.fixture(scope="session", autouse=True)
def _no_daemon_outlives_the_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    root = str(tmp_path_factory.getbasetemp())
    yield
    stop_daemons(root)
    stop_daemons(HOMES)
    shutil.rmtree(HOMES, ignore_errors=True)


@pytest.fixture(autouse=True)
def isolated_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    import shutil
    import tempfile

    os.makedirs(HOMES, mode=0o755, exist_ok=True)
    os.chmod(os.path.dirname(HOMES), 0o755)
    # Short paths: a Unix socket path must fit in 108 bytes.
    home = Path(tempfile.mkdtemp(prefix="h", dir=HOMES))
    runtime = home / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local/state"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local/share"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("GATESH_SYSTEM_CONFIG", str(home / "etc-gatesh/config.toml"))
    for var in ("GATESH_SESSION", "GATESH_GATED", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    # Every command a test gates runs outside this checkout: an allowed command is snapshotted
    # (S17) into the repository it runs in, and the checkout's own repository is not a test's.
    work = home / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    yield home
    if _may_hold_a_daemon(home):
        stop_daemons(str(home))
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

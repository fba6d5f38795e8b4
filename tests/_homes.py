"""HOME folders for tests: every test gets one of its own (``isolated_home`` in conftest.py), and a
module whose tests only *decide* commands may share one (``shared_home``), laid out once.

A module of hundreds of corpus cases that laid its repository or installation out again for every
case spent most of its time doing so (a third of the fast loop's CPU). ``decide`` is pure, so the
cases can share one layout; :func:`unchanged` checks that they did not change it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

# Every test's HOME lives in a folder of its own directly under /tmp, not beside the thousands of
# folders of the run's basetemp: a command gatesh lets run is confined to a boundary (S16) whose
# rules walk around the credential stores and gatesh's files in HOME, one rule per sibling of each
# folder on the way there.
# One folder per test process: a worker stops only its own daemons at the end of its run.
HOMES = f"/tmp/gatesh-test-homes/p{os.getpid()}"


def new_home() -> Path:
    """A fresh, empty HOME under :data:`HOMES`, with its runtime folder and the folder a test
    works in (``cwd``)."""
    os.makedirs(HOMES, mode=0o755, exist_ok=True)
    os.chmod(os.path.dirname(HOMES), 0o755)
    # Short paths: a Unix socket path must fit in 108 bytes.
    home = Path(tempfile.mkdtemp(prefix="h", dir=HOMES))
    (home / "run").mkdir(mode=0o700)
    # Every command a test gates runs outside this checkout: an allowed command is snapshotted
    # (S17) into the repository it runs in, and the checkout's own repository is not a test's.
    (home / "cwd").mkdir()
    return home


def point_home(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """Point HOME, the XDG folders and gatesh's system config into ``home`` (made by
    :func:`new_home`), clear what a session or a rater would read, and work in its ``cwd``."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local/state"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local/share"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(home / "run"))
    monkeypatch.setenv("GATESH_SYSTEM_CONFIG", str(home / "etc-gatesh/config.toml"))
    for var in ("GATESH_SESSION", "GATESH_GATED", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(home / "cwd")


def _listing(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every entry under ``root`` with its mode, size and modification time (ns)."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            st = os.lstat(path)
            out[os.path.relpath(path, root)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


@contextmanager
def unchanged(root: Path) -> Iterator[None]:
    """Fail, on leaving, if any entry under ``root`` was added, removed or changed (mode, size,
    modification time) meanwhile: the tests sharing a laid-out HOME must leave it as it was."""
    before = _listing(root)
    yield
    after = _listing(root)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"tests that only decide changed their shared HOME: {changed[:10]}"

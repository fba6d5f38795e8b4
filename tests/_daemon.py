"""Helpers for tests that start a real daemon: find it by its lock file, stop it."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from gatesh import _paths


def daemon_pid() -> int | None:
    """The pid the running daemon wrote into its lock file (this test's runtime folder), or None."""
    try:
        text = Path(_paths.current().lock).read_text().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


def alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie child of ours counts as dead."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def stop_daemon() -> None:
    """SIGTERM the daemon, then SIGKILL after 1 s: a test daemon has nothing left to flush."""
    pid = daemon_pid()
    if pid is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    for _ in range(20):
        if not alive(pid):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)

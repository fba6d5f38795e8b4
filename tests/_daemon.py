"""Helpers for tests that start a real daemon: find it by its lock file, stop it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import time
from pathlib import Path
from typing import Any

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


def stop_daemon_at(runtime: Path) -> None:
    """Stop the daemon listening under ``runtime`` (a test's own XDG_RUNTIME_DIR), found by its
    socket's SO_PEERCRED pid."""
    sock = runtime / "gatesh" / "daemon.sock"
    if not sock.exists():
        return
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            s.connect(str(sock))
            pid, uid, _ = struct.unpack(
                "3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
            )
        if uid == os.getuid() and pid > 1:
            os.kill(pid, signal.SIGTERM)
    except OSError:
        pass


def connect(role: str, timeout: float = 30.0) -> tuple[socket.socket, bytes]:
    """A raw connection to the running daemon for ``role``, and the hello to send on it: the
    person's channel (an abstract socket, with the credential of the socket folder) for the
    ``watch`` and ``human`` roles, the daemon's socket otherwise."""
    from gatesh.daemon import protocol as P

    paths = _paths.current()
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    hello: dict[str, Any] = {"v": 1, "hello": role, "pid": os.getpid()}
    if role in P.PERSON_ROLES:
        s.connect(P.person_address(paths.socket))
        hello["token"] = Path(paths.runtime_dir, P.TOKEN_FILE).read_text().strip()
    else:
        s.connect(paths.socket)
    return s, json.dumps(hello).encode() + b"\n"


def subscribe(
    role: str = "watch", timeout: float = 30.0
) -> tuple[socket.socket, Any, dict[str, Any]]:
    """A raw subscriber (``watch``: asked and answering; ``admin``: view only) on the running
    daemon: its socket, the socket's file, and the subscribe reply (sessions, pending, observations)."""
    s, hello = connect(role, timeout)
    f = s.makefile("rwb")
    f.write(hello + b'{"op":"subscribe"}\n')
    f.flush()
    assert "welcome" in json.loads(f.readline())
    reply: dict[str, Any] = json.loads(f.readline())
    assert reply["subscribed"] is True, reply
    return s, f, reply


def judge_without_undo() -> None:
    """Have this test's gate judge without undo (``[undo] enabled = false`` appended to its user
    config). For a flow that needs a work-tree loss the rater refuses (a negotiation, a bound, an
    escalation): with undo (S17) a loss the snapshot holds runs; tests/test_undo*.py cover that."""
    path = Path(_paths.current().user_config)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write("\n[undo]\nenabled = false\n")

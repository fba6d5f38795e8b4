"""``gatesh install service``, and stopping this user's daemon (for the service, and uninstall)."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from typing import Final

from gatesh import _paths
from gatesh.install.hookentry import launcher_path
from gatesh.install.record import InstallError, RecordChange, launchers_with, record


def install_daemon_service(*, uninstall: bool = False) -> str:
    """Have the user's service manager run the daemon (socket activation, S9.7), or stop that.

    Installing stops a daemon a client started, so the service manager's socket is the one
    clients find; the units are recorded for uninstall and doctor."""
    from gatesh import service

    paths = _paths.current()
    if uninstall:
        _, said = service.install_service("", paths.socket, uninstall=True)
        record(RecordChange(service=()))
        return "\n".join(said)
    launcher = launcher_path()
    if not os.path.isabs(launcher):
        raise InstallError(
            "cannot find the gatesh launcher for the service to run; run ./install.sh first"
        )
    stopped = stop_daemon()
    units, said = service.install_service(launcher, paths.socket)
    record(RecordChange(service=tuple(units), launchers=launchers_with(launcher)))
    return "\n".join(([stopped] if stopped else []) + said)


# How long uninstall waits for the daemon to exit after SIGTERM (it exits in ~30 ms; a model call
# in flight is abandoned within its grace).
_DAEMON_EXIT_S: Final = 5.0


def stop_daemon_and_runtime() -> str:
    """Stop this user's daemon (found by its socket's peer credentials) and remove its runtime
    folder — the socket and the lock — once it is gone."""
    paths = _paths.current()
    stopped = stop_daemon()
    if not os.path.isdir(paths.runtime_dir):
        return stopped
    shutil.rmtree(paths.runtime_dir)
    return (f"{stopped} and removed " if stopped else "removed ") + paths.runtime_dir


def stop_daemon() -> str:
    """Stop this user's daemon (found by its socket's peer credentials): "stopped the daemon",
    or "" when none answered. Raises InstallError when it does not stop."""
    import signal
    import socket
    import struct

    paths = _paths.current()
    pid = 0
    with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(2)
        s.connect(paths.socket)
        peer, uid, _ = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        if uid == os.getuid() and peer > 1:
            pid = peer
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + _DAEMON_EXIT_S
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.02)
        if _alive(pid):
            raise InstallError(
                f"the daemon (pid {pid}) did not stop; its runtime folder "
                f"{paths.runtime_dir} is kept"
            )
    return "stopped the daemon" if pid else ""


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie has exited)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b") ", 1)[1][:1] != b"Z"
    except (OSError, IndexError):
        return False

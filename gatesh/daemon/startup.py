"""The daemon process's setup and end (S9.4, S9.5): where it may start, the socket folder, the lock,
the sockets (its own, or the service manager's), the person's channel and its credential, and
leaving when threads are stuck.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import os
import secrets
import signal
import socket
import stat
import struct
import sys
import threading
import time
from collections.abc import Iterator
from typing import Final

from gatesh import _paths, _person
from gatesh.daemon import limits
from gatesh.daemon import protocol as P

#: What stops the daemon: a service manager's or a person's SIGTERM, Ctrl-C at a --foreground
#: daemon, its terminal closing. Handled from the first step of start-up, so each stops it
#: cleanly at any point, SIGINT too when whoever started the daemon ignored it (a background
#: job's SIGINT is ignored, and an ignored disposition is inherited across exec).
STOP_SIGNALS: Final = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Stopping:
    """The stop signals until the event loop takes them over (:func:`gatesh.daemon.server.serve`).

    While the sockets and the lock are taken, a stop signal is only noted; from
    :meth:`cut_short` on (the socket bound, its removal on the way out), it ends start-up where
    it is (the parsers load for seconds, clients queuing meanwhile) by SystemExit(0), so the
    caller's cleanup runs; during that cleanup (:meth:`settled`) a second one is ignored."""

    def __init__(self) -> None:
        self.noted = False
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._note)

    def _note(self, signum: int, frame: object) -> None:
        self.noted = True

    @staticmethod
    def _stop(signum: int, frame: object) -> None:
        raise SystemExit(0)

    def cut_short(self) -> None:
        """From here a stop signal ends start-up at once (one already noted: now)."""
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._stop)
        if self.noted:
            raise SystemExit(0)

    @contextlib.contextmanager
    def settled(self) -> Iterator[None]:
        """Ignore the stop signals while the daemon removes its socket and lets go of its lock."""
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        yield


def refusal() -> str:
    """Why the daemon may not start here, or "": never inside a boundary or a gated session (S9.7),
    whose settings would be the agent's; inside a boundary, only a scratch world's own daemon
    (:func:`gatesh._person.scratch_world`), which listens where no person's client connects."""
    where = _person.context()
    if where.standing is _person.Standing.BOUNDARY:
        if _person.scratch_world(os.environ):
            return ""  # a scratch world's own daemon (a confined test suite's): no person's
        return f"{where.why}: a daemon started here would be confined with it"
    if where.standing is _person.Standing.MARKED:
        # Started from a command the gate let run: its environment may be the agent's. It runs
        # on the person's (the process its client named, or the person's files), or not at all.
        return _person.settle_daemon_environ()
    return ""


def harden() -> str:
    """Out of reach of the user's other processes (S9.5): no trace, no descriptor taken, no
    environment (a key) or memory (the channel's credential) read; returns what still can trace
    it ("" for nothing). A write past RLIMIT_FSIZE must fail (EFBIG → refusal), not kill the
    daemon; room for MAX_CONNECTIONS clients."""
    traceable = _person.untraceable()
    if traceable:
        print(
            f"gatesh daemon: other processes of this user can trace it: {traceable}",
            file=sys.stderr,
        )
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    limits.raise_fd_limit()
    return traceable


def listening(
    path: str, activated: socket.socket | None, *, shared: bool
) -> tuple[socket.socket, tuple[int, int] | None]:
    """The listening socket: the service manager's when it started us, else bound at ``path``;
    with the socket file's identity when it is ours, to remove it on exit only if it still is.
    (Not fstat of the socket: that names the socket's own inode, never the file's.)"""
    if activated is not None:
        activated.setblocking(False)
        return activated, None
    sock = bind_socket(path, shared=shared)
    return sock, file_id(path)


def ensure_runtime_dir(path: str, *, shared: bool = False) -> None:
    """Create the socket folder 0700 (0711 with watchers), refusing one owned by another uid."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.lstat(path)  # a symbolic link is never the folder, wherever it points
    if not stat.S_ISDIR(st.st_mode):
        raise SystemExit(
            f"gatesh daemon: {path} is not a folder (a link or a file); refusing to use it"
        )
    if st.st_uid != os.getuid():
        raise SystemExit(
            f"gatesh daemon: {path} belongs to uid {st.st_uid}, not to you; refusing to use it"
        )
    want = 0o711 if shared else 0o700
    if st.st_mode & 0o777 != want:
        os.chmod(path, want)


def acquire_lock(path: str) -> int | None:
    """The daemon lock's fd (held for the process's life), or None when another daemon holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return None
        raise
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def bind_socket(path: str, *, shared: bool = False) -> socket.socket:
    """Bind the listening socket (0600, or 0666 with watchers), replacing a stale one.

    Called only with the lock held, so any socket file already there belongs to a dead daemon.
    """
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(path)
    finally:
        os.umask(old)
    if shared:
        os.chmod(path, 0o666)
    sock.listen(limits.MAX_CONNECTIONS)
    sock.setblocking(False)
    return sock


def write_token(folder: str) -> str:
    """A fresh credential for the person's channel, written to :data:`P.TOKEN_FILE` in the
    socket folder (0600, replaced atomically); "" when it cannot be written (then no client of
    our own uid can use the channel: fail closed)."""
    token = secrets.token_hex(32)
    path = os.path.join(folder, P.TOKEN_FILE)
    tmp = f"{path}.{os.getpid()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, token.encode() + b"\n")
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        print(f"gatesh daemon: the person's channel has no credential: {exc}", file=sys.stderr)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return ""
    return token


def bind_person_channel(socket_path: str) -> tuple[socket.socket | None, str]:
    """The listening person's channel (:func:`gatesh.daemon.protocol.person_address`), or None
    and why not: another process holds the address (named, with its uid and pid)."""
    address = P.person_address(socket_path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(address)
        sock.listen(limits.MAX_CONNECTIONS)
        sock.setblocking(False)
        return sock, ""
    except OSError as exc:
        sock.close()
        holder = _holder(address)
        why = f"the person's channel cannot be opened ({exc.strerror or exc}){holder}"
        print(
            f"gatesh daemon: {why}; human-only verbs and watchers cannot reach it", file=sys.stderr
        )
        return None, why


def _holder(address: str) -> str:
    """ ", held by pid P (uid U)" for whoever listens on ``address``; "" when nobody answers."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1.0)
        probe.connect(address)
        raw = probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid, uid, _ = struct.unpack("3i", raw)
        return f", held by pid {pid} (uid {uid})"
    except OSError:
        return ""
    finally:
        probe.close()


def activated_paths(paths: _paths.GatePaths, sock: socket.socket) -> _paths.GatePaths:
    """``paths`` with the runtime folder the service manager's socket is in: the lock, the
    person's channel and its credential go next to the socket clients reach, whatever this
    process's environment says."""
    name = sock.getsockname()
    if isinstance(name, str) and os.path.isabs(name):
        if os.path.basename(name) != "daemon.sock":
            print(
                f"gatesh daemon: the socket handed over is {name}, not a daemon.sock",
                file=sys.stderr,
            )
        return dataclasses.replace(paths, runtime_dir=os.path.dirname(name))
    return paths


def activation_socket() -> socket.socket | None:
    """The listening socket the service manager handed over (``LISTEN_FDS``/``LISTEN_PID``, fd 3,
    systemd's socket activation), or None. The variables are removed either way: they are for
    this process only."""
    pid, count = os.environ.pop("LISTEN_PID", ""), os.environ.pop("LISTEN_FDS", "")
    os.environ.pop("LISTEN_FDNAMES", None)
    if pid != str(os.getpid()) or not count.isdigit() or int(count) < 1:
        return None
    try:
        sock = socket.socket(fileno=3)
    except OSError:
        return None
    if (
        sock.family != socket.AF_UNIX
        or sock.type != socket.SOCK_STREAM
        or not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
    ):
        sock.detach()
        return None
    os.set_inheritable(3, False)
    return sock


def file_id(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def leave_stuck_threads(grace: float) -> None:
    """Return once every other non-daemon thread has ended, waiting at most ``grace`` s; past that,
    end the process here. A worker thread can be inside a model call for its whole timeout, and
    the interpreter would wait for it on exit; whatever it decides can no longer be used (its
    client was hung up on and refuses), and the audit log, the state file, the socket and the
    lock are already settled when this runs."""
    deadline = time.monotonic() + grace
    me = threading.current_thread()
    for t in threading.enumerate():
        if t is not me and not t.daemon:
            t.join(max(0.0, deadline - time.monotonic()))
    if any(t is not me and not t.daemon and t.is_alive() for t in threading.enumerate()):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(0)

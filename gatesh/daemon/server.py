"""The per-user daemon (S9): one asyncio server on a Unix socket; the connection and its requests.

Guarantees:

- At most one daemon per user and runtime folder: the daemon holds an ``flock`` on
  ``daemon.lock`` for its whole life; a second one exits at once (status 0).
- The socket's folder is 0700 and the socket 0600 (0711/0666 only when ``watchers`` are configured,
  S9.6); every peer's uid is checked with ``SO_PEERCRED``.
- A check is allowed only after its audit line is written (fsync-ed right after the reply, see
  :class:`~gatesh.daemon.auditpipe.AuditPipe`); an audit failure refuses it (S13, S15).
- No input can crash the daemon: every connection handler catches everything and answers with an
  error reply (a refusal to a check client), see :mod:`gatesh.daemon.protocol`.

Where the rest lives: the wire protocol in :mod:`~gatesh.daemon.protocol`; the state every handler
shares (connections, config and backends, watchers) in :mod:`~gatesh.daemon.core`; sessions and
pending records in :mod:`~gatesh.daemon.sessions`; the ``check`` op and the routing of what a
person must rule on in :mod:`~gatesh.daemon.routing`; the human-only verbs in
:mod:`~gatesh.daemon.verbs`; process facts in :mod:`~gatesh.daemon.procs`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import fcntl
import os
import signal
import socket
import stat
import sys
import threading
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any, Final

from gatesh import __version__, _paths, messages
from gatesh._errors import ConfigError, GateshError, ProtocolError
from gatesh.audit import AuditError, fold_home, read_tail
from gatesh.captures import default_ring
from gatesh.config import SessionConfig, load_config
from gatesh.daemon import deadline, limits, procs, routing, verbs
from gatesh.daemon import protocol as P
from gatesh.daemon.auditpipe import AuditPipe
from gatesh.daemon.core import Conn, Daemon, cleaned
from gatesh.negotiation import session_end_observation
from gatesh.pending import OPEN, UNANSWERED
from gatesh.reading import preload

__all__ = ["AuditPipe", "Daemon", "main", "serve"]

MAX_CONNECTIONS: Final = limits.MAX_CONNECTIONS
HELLO_TIMEOUT_S: Final = limits.HELLO_TIMEOUT_S
SWEEP_S: Final = 30.0
# How long a stopping daemon waits for its clients' connections to close and for worker threads to
# end: idle threads and hang-ups take milliseconds; a model call can take its whole timeout (s).
EXIT_GRACE_S: Final = 0.25

Handler = Callable[[Daemon, Conn, dict[str, Any]], Awaitable[dict[str, Any]]]


# --- connection handling ----------------------------------------------------------------------


async def handle(d: Daemon, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Serve one connection (steps 1–4 of the protocol). Never raises."""
    conn = Conn(reader, writer)
    if len(d.conns) >= MAX_CONNECTIONS:
        # Full: the longest-idle connection makes room, so a check always gets through.
        d.flood.full(len(d.conns))
        evictee = limits.pick_evictee(d.conns)
        if evictee is not None:
            _hang_up(evictee)
    d.conns.add(conn)
    try:
        if len(d.conns) > MAX_CONNECTIONS:
            conn.send(
                P.error_reply(None, "too many connections (every one is answering a request)")
            )
            return
        # 1. The hello.
        try:
            async with asyncio.timeout(HELLO_TIMEOUT_S):  # a timer, not wait_for's task per read
                line = await reader.readline()
        except (TimeoutError, ValueError, asyncio.LimitOverrunError):
            conn.send(P.error_reply(None, "no valid hello"))
            return
        if not line:
            return
        try:
            role = _hello(conn, line)
        except ProtocolError as exc:
            conn.send(P.error_reply(None, str(exc)))
            return
        # 2. The peer's uid.
        if conn.uid != os.getuid() and not (
            conn.uid in d.backends.watchers and role in P.WATCHER_ROLES
        ):
            conn.send(P.error_reply(None, f"uid {conn.uid} may not use this daemon"))
            return
        if limits.role_full(
            (c for c in d.conns if c is not conn), role.value
        ):  # counted only for a capped role
            conn.send(P.error_reply(None, f"too many {role.value} connections"))
            return
        conn.role = role
        welcome = {
            "v": P.VERSION,
            "welcome": role,
            "daemon_pid": os.getpid(),
            "version": __version__,
        }
        if conn.request_follows:  # the client reads it with the first reply (protocol step 2)
            conn.hold(welcome)
        else:
            conn.send(welcome)
        # 3. Requests; a connection with nothing to say is closed (a watcher listens: exempt).
        while not conn.closed:
            conn.since = time.monotonic()
            try:
                if conn.is_watcher:
                    line = await reader.readline()
                else:
                    async with asyncio.timeout(limits.IDLE_S):
                        line = await reader.readline()
            except TimeoutError:
                return
            except (ValueError, asyncio.LimitOverrunError):
                conn.send(P.error_reply(None, f"line longer than {P.MAX_LINE} bytes"))
                return
            if not line:
                return
            line = line.rstrip(b"\n")
            if not line.strip():
                continue
            conn.busy += 1
            try:
                await dispatch(d, conn, line)
                await conn.drain()
            finally:
                conn.busy -= 1
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    except Exception:  # never let a connection take the daemon down
        traceback.print_exc(file=sys.stderr)
    finally:
        was_watcher = conn.is_watcher
        d.conns.discard(conn)
        d.flood.settle(len(d.conns))
        d.events.subscribers.discard(conn)
        conn.closed = True
        if was_watcher and not d.events.watchers:
            routing.nobody_left(d)
        with contextlib.suppress(Exception):
            if writer.can_write_eof():
                writer.write_eof()
        with contextlib.suppress(Exception):
            writer.close()
            await writer.wait_closed()


def _hang_up(conn: Conn) -> None:
    """Close ``conn`` for a newcomer; its handler sees the end and cleans up."""
    conn.closed = True
    with contextlib.suppress(Exception):
        conn.writer.close()


def _hello(conn: Conn, line: bytes) -> P.Role:
    """The role a hello names; ProtocolError when it is not a valid hello of this version."""
    hello = P.decode(line.rstrip(b"\n"))
    version = hello.get("v")
    role = hello.get("hello")
    if version != P.VERSION:
        raise ProtocolError(
            f"unsupported protocol version {version!r} (this daemon speaks {P.VERSION})"
        )
    if not isinstance(role, str) or role not in P.ROLES:
        raise ProtocolError(f"unknown role {role!r}")
    claimed = hello.get("pid")
    conn.claimed_pid = (
        claimed if isinstance(claimed, int) and not isinstance(claimed, bool) else None
    )
    conn.request_follows = hello.get("request_follows") is True
    return P.Role(role)


async def dispatch(d: Daemon, conn: Conn, line: bytes) -> None:
    """Answer one request (step 4: any bad input becomes an error reply)."""
    op: P.Op | None = None
    rid: Any = None
    try:
        msg = P.decode(line)
        rid = msg.get("id")
        name = msg.get("op")
        if not isinstance(name, str) or name not in P.OPS:
            raise ProtocolError(f"unknown op {name!r}")
        op = P.Op(name)
        if conn.uid != os.getuid() and op in P.OWNER_OPS:
            raise ProtocolError(f"op {op.value!r} is not open to watcher uids")
        if op in P.HUMAN_OPS or op is P.Op.END:
            why = await human_refusal(d, conn, msg)
            if why:
                conn.send(
                    {
                        "re": op.value,
                        "id": rid,
                        "ok": False,
                        "refused": True,
                        "error": f"refused: {why}",
                    }
                )
                return
        reply = await HANDLERS[op](d, conn, msg)
        reply.setdefault("ok", True)
        reply["re"] = op.value
        if rid is not None:
            reply["id"] = rid
        conn.send(reply)
    except (ProtocolError, GateshError) as exc:
        conn.send(P.error_reply(op.value if op else None, str(exc), rid))
    except Exception as exc:  # an internal error: a refusal, never a crash
        traceback.print_exc(file=sys.stderr)
        reply = P.error_reply(
            op.value if op else None, f"internal error: {type(exc).__name__}: {exc}", rid
        )
        reply["message"] = messages.error(f"{type(exc).__name__}: {exc}")
        conn.send(reply)


async def human_refusal(d: Daemon, conn: Conn, msg: dict[str, Any]) -> str | None:
    """Why ``conn`` may not use a human-only op (S9.5), or None. Fails closed."""
    pid = msg.get("pid", conn.claimed_pid)
    if not isinstance(pid, int) or isinstance(pid, bool):
        return "human-only requests must carry the client's pid"
    if pid != conn.pid:
        return f"the request's pid {pid} is not the connected process ({conn.pid})"
    return await d.off_loop(procs.gated_ancestry, conn.pid, d.registry)


# --- session ops (the surfaces) ---------------------------------------------------------------


async def op_register(d: Daemon, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
    """A PTY shell marks its pid as gated and names its session."""
    sid = P.field(msg, "session", str)
    pid = P.field(msg, "pid", int, required=False, default=conn.pid)
    surface = P.field(msg, "surface", str, required=False, default="pty")
    d.registry.add(pid, sid)
    sess, new = d.sessions.get(sid, surface=surface)
    if sess.anchor_pid is None:
        # The session lives as long as its shell (S6: only a session with no process to outlive
        # ends after session.idle_end_s); its first check may have come before this request.
        shell = procs.info(pid)
        if shell is not None:
            sess.anchor_pid, sess.anchor_start = shell.pid, shell.start
    if new:
        d.events.publish("session_start", sid, anchor=pid, surface=surface)
    return {"session": sid, "shell": d.backends.shell}


async def op_end(d: Daemon, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
    return {"observation": end_session(d, P.field(msg, "session", str))}


def end_session(d: Daemon, sid: str) -> str | None:
    """A session ended: the S6 observation (once per distinct state), then forget it.

    The observation is counts only. It goes to the audit log, and to the watchers — or, with
    nobody watching, to the next watcher that attaches."""
    sess = d.sessions.sessions.get(sid)
    if sess is None:
        return None
    counters = sess.state.negotiation.counters()
    # Escalations no person ruled on: still asked, or refused with nobody watching (approvable).
    unanswered = sum(
        1 for p in d.book.pending.values() if p.session == sid and p.state in UNANSWERED
    )
    obs = session_end_observation(counters, unanswered, session=sid)
    text = obs.text if obs is not None and d.observed.first_time(obs) else None
    if text is not None:
        with contextlib.suppress(AuditError):
            d.audit_pipe.append(
                {
                    "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "ts": round(time.time(), 3),
                    "session": cleaned(sid),
                    "pid": None,
                    "cwd": "",
                    "surface": "gatesh",
                    "command": "",
                    "action": "observation",
                    "stage": "session-end",
                    "observation": text,
                    "negotiation": counters,
                }
            )
        if not d.events.watchers:
            d.unseen.append({"session": cleaned(sid), "observation": text, "counters": counters})
    d.events.publish("session_end", sid, observation=text, counters=counters)
    if not sess.state.halted:
        d.sessions.remove(sid)
    sess.ended = time.time()
    return text


async def sweep(d: Daemon) -> None:
    """Every SWEEP_S: expire asks whose harness is gone, end finished sessions
    (:func:`end_finished_sessions`); prune the gated registry."""
    while not d.stopping.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(d.stopping.wait(), SWEEP_S)
        routing.expire_stale_asks(d)
        end_finished_sessions(d)
        d.registry.prune()


# --- admin ops (status, log, dump, watch) ---------------------------------------------------------


async def op_ping(d: Daemon, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
    return {"pong": True}


async def op_status(d: Daemon, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
    routing.expire_stale_asks(d)  # what status calls waiting is waiting now, not at the next sweep
    return status(d)


def status(d: Daemon) -> dict[str, Any]:
    b = d.backends
    return {
        "daemon": {
            "pid": os.getpid(),
            "version": __version__,
            "started": round(d.started, 3),
            "uptime_s": round(time.time() - d.started, 1),
            "socket": d.paths.socket,
            "audit_log": d.audit.path,
            "audit_failures": d.audit.failures,
            "audit_breaks": d.audit.breaks,
            "audit_last_error": d.audit.last_error,
            "config_error": b.error,
            "rater": b.rater.name if b.rater is not None else "",
            "connections": len(d.conns),
            "gated_pids": len(d.registry),
        },
        "sessions": [
            s.summary() | {"halt_reason": fold_home(s.state.halt_reason)}
            for s in d.sessions.sessions.values()
        ],
        # Commands redacted and home-folded, as everywhere a person reads them (S13, S15).
        "pending": [
            p.summary()
            | {"command": cleaned(p.command), "cwd": fold_home(p.cwd), "reason": cleaned(p.reason)}
            for p in d.book.pending.values()
        ],
        "watchers": d.events.watchers,
        "totals": dict(d.totals),
    }


async def op_tail(d: Daemon, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
    n = max(0, min(10_000, P.field(msg, "n", int, required=False, default=20)))
    return {"records": await d.off_loop(read_tail, d.audit.path, n)}


async def op_captures(d: Daemon, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
    return {"captures": default_ring().snapshot()}


def end_finished_sessions(d: Daemon) -> None:
    """End every session that is over (S6): one anchored on a process (the harness of `-c` calls,
    a PTY's shell) once that process is gone; one grouped by GATESH_SESSION alone (no process to
    outlive) after ``session.idle_end_s`` without a check. Run by the sweep and whenever a watcher
    attaches, so the watcher is told about sessions that ended while nobody watched."""
    idle, now = _idle_end_s(d), time.time()
    for s in list(d.sessions.sessions.values()):
        if s.ended >= s.last:
            continue  # a halted session that ended and has had no check since
        if s.anchor_pid is None:
            if now - s.last >= idle:
                end_session(d, s.id)
            continue
        p = procs.info(s.anchor_pid)
        if p is None or p.start != s.anchor_start:
            end_session(d, s.id)


def _idle_end_s(d: Daemon) -> float:
    try:
        return float(d.backends.config_for("/").session.idle_end_s)
    except ConfigError:
        return float(SessionConfig().idle_end_s)


async def op_subscribe(d: Daemon, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
    routing.expire_stale_asks(d)
    end_finished_sessions(d)
    conn.subscribed = True
    d.events.subscribers.add(conn)
    unseen: list[dict[str, Any]] = []
    if conn.is_watcher:  # said once: to the first watcher who attaches after them
        unseen = list(d.unseen)
        d.unseen.clear()
    return {
        "subscribed": True,
        "watcher": conn.is_watcher,
        "observations": unseen,
        "sessions": [s.summary() for s in d.sessions.sessions.values()],
        "pending": [routing.pending_event(p) for p in d.book.pending.values() if p.state in OPEN],
    }


# Every op's handler (typed dispatch: an op without one is a type error, not a runtime probe).
HANDLERS: Final[dict[P.Op, Handler]] = {
    P.Op.CHECK: routing.check,
    P.Op.STATUS: op_status,
    P.Op.TAIL: op_tail,
    P.Op.CAPTURES: op_captures,
    P.Op.SUBSCRIBE: op_subscribe,
    P.Op.REGISTER: op_register,
    P.Op.END: op_end,
    P.Op.PING: op_ping,
    P.Op.ANSWER: verbs.answer,
    P.Op.APPROVE: verbs.approve,
    P.Op.DENY: verbs.deny,
    P.Op.MANDATE: verbs.mandate,
    P.Op.RESUME: verbs.resume,
    P.Op.WITHDRAW: verbs.withdrawn,
}


# --- process setup ---------------------------------------------------------------------------


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


async def serve(daemon: Daemon, sock: socket.socket) -> None:
    """Serve until SIGTERM/SIGINT/SIGHUP, then stop accepting and hang up on every client.

    Hanging up is what lets the daemon exit at once: a subscribed watcher would otherwise keep
    the server open (``Server.wait_closed`` waits for every connection since Python 3.12), and a
    client whose check is still being decided sees the connection drop and refuses (nothing ran).
    """
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, daemon.stopping.set)

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await handle(daemon, reader, writer)

    server = await asyncio.start_unix_server(
        on_connect, sock=sock, limit=P.MAX_LINE + 2, backlog=limits.MAX_CONNECTIONS
    )
    sweeper = asyncio.create_task(sweep(daemon))
    watchdog = asyncio.create_task(deadline.arm_loop_watchdog(daemon.stopping))
    try:
        await daemon.stopping.wait()
    finally:
        server.close()
        for conn in list(daemon.conns):
            conn.closed = True
            with contextlib.suppress(Exception):
                conn.writer.close()
        sweeper.cancel()
        watchdog.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.wait_closed(), EXIT_GRACE_S)


def main(argv: list[str] | None = None) -> int:
    """``gatesh daemon [--foreground]``: run the daemon until SIGTERM. Steps numbered below."""
    parser = argparse.ArgumentParser(
        prog="gatesh daemon", description="run the per-user gatesh daemon"
    )
    parser.add_argument(
        "--foreground",
        action="store_true",
        help="stay attached to the terminal (the on-demand start detaches)",
    )
    parser.parse_args(argv)
    # 1. Signals: a write past RLIMIT_FSIZE must fail (EFBIG → refusal), not kill the daemon.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    limits.raise_fd_limit()  # room for MAX_CONNECTIONS clients
    paths = _paths.current()
    try:
        shared = bool(load_config("/", paths=paths).watchers)
    except ConfigError:
        shared = False  # the daemon serves anyway, refusing every check with the config's error
    # 2. The lock: a second daemon leaves quietly.
    ensure_runtime_dir(paths.runtime_dir, shared=shared)
    lock = acquire_lock(paths.lock)
    if lock is None:
        print("gatesh daemon: already running", file=sys.stderr)
        return 0
    # 3. The socket first, so clients queue on it while the heavy modules load.
    sock = bind_socket(paths.socket, shared=shared)
    # The socket file's identity, to remove it on exit only if it is still ours. (Not fstat of the
    # socket: that names the socket's own inode, never the file's; and asyncio closes it first.)
    bound = _file_id(paths.socket)
    os.makedirs(paths.state_dir, mode=0o700, exist_ok=True)
    try:
        # 4. Load the parsers once, then serve.
        preload()
        asyncio.run(_run(paths, sock))
    finally:
        with contextlib.suppress(OSError):
            # Remove the socket only if it is still ours (a successor may have replaced it).
            if bound is not None and _file_id(paths.socket) == bound:
                os.unlink(paths.socket)
        sock.close()
        os.close(lock)
    _leave_stuck_threads(EXIT_GRACE_S)
    return 0


def _file_id(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _leave_stuck_threads(grace: float) -> None:
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


async def _run(paths: _paths.GatePaths, sock: socket.socket) -> None:
    daemon = Daemon(paths)
    with contextlib.suppress(ConfigError):
        daemon.backends.config_for(paths.state_dir)
    await serve(daemon, sock)
    daemon.book.flush()
    daemon.executor.shutdown(wait=False, cancel_futures=True)
    daemon.decisions.shutdown()
    daemon.audit_pipe.close()
    daemon.audit.close()

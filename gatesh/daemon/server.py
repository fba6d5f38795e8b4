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
import hmac
import os
import signal
import socket
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Final, Generic, TypeVar

from gatesh import __version__, _paths, _person, messages
from gatesh._errors import EXIT_ERROR, ConfigError, GateshError, ProtocolError
from gatesh.audit import AuditError, fold_home, read_tail
from gatesh.audit_record import ObservationRecord, stamp
from gatesh.boundary import handoff
from gatesh.config import SessionConfig, load_config
from gatesh.daemon import deadline, limits, procs, routing, startup, verbs
from gatesh.daemon import protocol as P
from gatesh.daemon.auditpipe import AuditPipe
from gatesh.daemon.core import Channel, Conn, Daemon, Origin, PersonChannel, cleaned
from gatesh.daemon.publish import SessionEndEvent, SessionStartEvent
from gatesh.daemon.replies import (
    Captures,
    CheckReply,
    DaemonHealth,
    Ended,
    Observation,
    Pong,
    Records,
    Registered,
    Status,
    Subscribed,
)
from gatesh.daemon.requests import (
    AnswerRequest,
    CheckRequest,
    EndRequest,
    Envelope,
    ExitedRequest,
    MandateRequest,
    NoFields,
    PendingRequest,
    RegisterRequest,
    ResumeRequest,
    TailRequest,
    UndoRequest,
)
from gatesh.negotiation import session_end_observation
from gatesh.pending import OPEN, UNANSWERED
from gatesh.rater.captures import default_ring
from gatesh.reading import preload

__all__ = ["AuditPipe", "Daemon", "main", "serve"]

MAX_CONNECTIONS: Final = limits.MAX_CONNECTIONS
HELLO_TIMEOUT_S: Final = limits.HELLO_TIMEOUT_S
SWEEP_S: Final = 30.0
# How long a stopping daemon waits for its clients' connections to close and for worker threads to
# end: idle threads and hang-ups take milliseconds; a model call can take its whole timeout (s).
EXIT_GRACE_S: Final = 0.25

R = TypeVar("R")


# --- connection handling ----------------------------------------------------------------------


async def handle(
    d: Daemon,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    channel: Channel = Channel.SOCKET,
) -> None:
    """Serve one connection (steps 1–4 of the protocol). Never raises."""
    conn = Conn(reader, writer, channel)
    if len(d.conns) >= MAX_CONNECTIONS:
        # Full: the longest-idle connection makes room, so a check always gets through.
        d.flood.full(len(d.conns))
        evictee = limits.pick_evictee(d.conns)
        if evictee is not None:
            _hang_up(evictee)
    d.conns.add(conn)
    try:
        if len(d.conns) > MAX_CONNECTIONS:
            conn.send(P.error_line(None, "too many connections (every one is answering a request)"))
            return
        if await _welcomed(d, conn):
            await _requests(d, conn)
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


async def _welcomed(d: Daemon, conn: Conn) -> bool:
    """Steps 1–2: the hello, the peer's uid and the channel its role speaks on (S9.5); the welcome
    sent (or held for the first reply). False: refused with an error reply, or gone."""
    try:
        async with asyncio.timeout(HELLO_TIMEOUT_S):  # a timer, not wait_for's task per read
            line = await conn.reader.readline()
    except (TimeoutError, ValueError, asyncio.LimitOverrunError):
        conn.send(P.error_line(None, "no valid hello"))
        return False
    if not line:
        return False
    try:
        role = _hello(conn, line)
    except ProtocolError as exc:
        conn.send(P.error_line(None, str(exc)))
        return False
    if conn.uid != os.getuid() and not (
        conn.uid in d.backends.watchers and role in P.WATCHER_ROLES
    ):
        refused = f"uid {conn.uid} may not use this daemon"
    else:
        refused = channel_refusal(d, conn, role)
    if not refused and limits.role_full((c for c in d.conns if c is not conn), role.value):
        refused = f"too many {role.value} connections"  # counted only for a capped role
    if refused:
        conn.send(P.error_line(None, refused))
        return False
    conn.role = role
    welcome = P.welcome_line(role, os.getpid(), __version__)
    if conn.request_follows:  # the client reads it with the first reply (protocol step 2)
        conn.hold(welcome)
    else:
        conn.send(welcome)
    return True


async def _requests(d: Daemon, conn: Conn) -> None:
    """Step 3: requests, one a line; a connection with nothing to say is closed (a watcher
    listens: exempt)."""
    while not conn.closed:
        conn.since = time.monotonic()
        try:
            if conn.is_watcher:
                line = await conn.reader.readline()
            else:
                async with asyncio.timeout(limits.IDLE_S):
                    line = await conn.reader.readline()
        except TimeoutError:
            return
        except (ValueError, asyncio.LimitOverrunError):
            conn.send(P.error_line(None, f"line longer than {P.MAX_LINE} bytes"))
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


def _hang_up(conn: Conn) -> None:
    """Close ``conn`` for a newcomer; its handler sees the end and cleans up."""
    conn.closed = True
    with contextlib.suppress(Exception):
        conn.writer.close()


def channel_refusal(d: Daemon, conn: Conn, role: P.Role) -> str:
    """Why ``role`` may not speak on ``conn``'s channel ("" when it may): the human-only verbs
    and the watcher only on the person's channel, which a client of the daemon's own uid enters
    with the credential of :data:`gatesh.daemon.protocol.TOKEN_FILE`; checks only on the socket."""
    if conn.channel is Channel.SOCKET:
        if role in P.PERSON_ROLES:
            return (
                f"the {role.value} role is heard only on the person's channel, which gatesh's own "
                "commands (gatesh watch, approve, deny, resume, mandate) use from your terminal"
            )
        return ""
    if role is P.Role.CHECK:
        return "the person's channel does not decide commands: checks go to the daemon's socket"
    if conn.uid == os.getuid() and not (
        d.person_token and hmac.compare_digest(conn.token.encode(), d.person_token.encode())
    ):
        return (
            "the person's channel needs the credential in the daemon's socket folder "
            f"({P.TOKEN_FILE}), which a command inside the boundary cannot read"
        )
    return ""


def _hello(conn: Conn, line: bytes) -> P.Role:
    """The role a hello names; ProtocolError when it is not a valid hello of this version."""
    hello = P.decode(line.rstrip(b"\n"))
    version = hello.raw("v")
    role = hello.raw("hello")
    if version != P.VERSION:
        raise ProtocolError(
            f"unsupported protocol version {version!r} (this daemon speaks {P.VERSION})"
        )
    if not isinstance(role, str) or role not in P.ROLES:
        raise ProtocolError(f"unknown role {role!r}")
    claimed = hello.raw("pid")
    conn.claimed_pid = (
        claimed if isinstance(claimed, int) and not isinstance(claimed, bool) else None
    )
    conn.request_follows = hello.is_true("request_follows")
    token = hello.raw("token")
    conn.token = token if isinstance(token, str) and len(token) <= 256 else ""
    return P.Role(role)


async def dispatch(d: Daemon, conn: Conn, line: bytes) -> None:
    """Answer one request (step 4: any bad input becomes an error reply)."""
    op: P.Op | None = None
    rid: object = None
    try:
        fields = P.decode(line)
        rid = fields.raw("id")
        envelope = Envelope.decode(fields)
        op = envelope.op
        if conn.uid != os.getuid() and op in P.OWNER_OPS:
            raise ProtocolError(f"op {op.value!r} is not open to watcher uids")
        if op in P.HUMAN_OPS and conn.channel is not Channel.PERSON:
            why: str | None = "human-only verbs are heard only on the person's channel"
        elif (
            op in P.HUMAN_OPS
            or op is P.Op.END
            or (op is P.Op.SUBSCRIBE and conn.role == P.Role.WATCH)
        ):
            # A watcher is asked and answers (S7): it must be a person as much as a verb's client.
            why = await human_refusal(d, conn, envelope)
        else:
            why = None
        if why:
            conn.send(P.refused_line(op, rid, f"refused: {why}"))
            return
        route = ROUTES[op]
        request = route.decode(fields)
        reply = await route.handle(d, conn, request)
        if (
            isinstance(request, CheckRequest)
            and request.ruleset_fd
            and isinstance(reply, CheckReply)
            and reply.allowed
            and reply.boundary is not None
        ):
            # The client runs it: it gets the ruleset built here (S14; gatesh.boundary.handoff).
            rules = reply.boundary.rules
            spec, fd = handoff.for_client(reply.boundary, d.rulesets)
            reply = replace(reply, boundary=spec)
            if fd >= 0:
                await conn.send_with_fd(P.reply_line(op, rid, reply), fd)
                with contextlib.suppress(RuntimeError):  # a daemon stopping builds nothing
                    d.executor.submit(d.rulesets.refill, rules)  # the next one's, ahead
                return
        conn.send(P.reply_line(op, rid, reply))
    except (ProtocolError, GateshError) as exc:
        conn.send(P.error_line(op, str(exc), rid))
    except Exception as exc:  # an internal error: a refusal, never a crash
        traceback.print_exc(file=sys.stderr)
        why = f"{type(exc).__name__}: {exc}"
        conn.send(P.error_line(op, f"internal error: {why}", rid, message=messages.error(why)))


async def human_refusal(d: Daemon, conn: Conn, envelope: Envelope) -> str | None:
    """Why ``conn`` may not use a human-only op (S9.5), or None. Fails closed.

    Two checks: the gate's marks (:func:`gatesh._person.mark_of`: started by a command gatesh let
    run, however detached, or inside a boundary), then the ancestry (a gated session's process
    above it)."""
    pid = conn.claimed_pid if envelope.absent_pid else envelope.pid
    if not isinstance(pid, int) or isinstance(pid, bool):
        return "human-only requests must carry the client's pid"
    if pid != conn.pid:
        return f"the request's pid {pid} is not the connected process ({conn.pid})"
    return await d.off_loop(person_refusal, conn.pid, d.registry)


def person_refusal(pid: int, registry: procs.GatedRegistry) -> str | None:
    """Why process ``pid`` is not a person (S9.5), or None: its marks, then its ancestry."""
    return _person.mark_of(pid) or procs.gated_ancestry(pid, registry)


# --- session ops (the surfaces) ---------------------------------------------------------------


async def op_register(d: Daemon, conn: Conn, req: RegisterRequest) -> Registered:
    """A PTY shell marks its pid as gated and names its session."""
    sid, surface = req.session, req.surface
    pid = conn.pid if req.pid is None else req.pid
    confined = req.boundary
    _person.mark(pid)  # the shell and all it starts carry the gate's mark (S9.5)
    d.registry.add(pid, sid)
    sess, new = d.sessions.get(sid, surface=surface)
    if sess.anchor_pid is None:
        # The session lives as long as its shell (S6: only a session with no process to outlive
        # ends after session.idle_end_s); its first check may have come before this request.
        shell = procs.info(pid)
        if shell is not None:
            sess.anchor_pid, sess.anchor_start = shell.pid, shell.start
    if confined and surface == "pty" and pid == sess.anchor_pid:
        sess.confined = confined  # checked against the shell itself at each check (routing)
    if new:
        d.events.publish(sid, SessionStartEvent(pid, surface))
    return Registered(sid, d.backends.shell)


async def op_end(d: Daemon, conn: Conn, req: EndRequest) -> Ended:
    return Ended(end_session(d, req.session))


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
            when, ts = stamp()
            d.audit_pipe.append(
                ObservationRecord(
                    time=when, ts=ts, session=cleaned(sid), observation=text, negotiation=counters
                )
            )
        if not d.events.watchers:
            d.unseen.append(Observation(cleaned(sid), text, counters))
    d.events.publish(sid, SessionEndEvent(text, counters))
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


async def op_ping(d: Daemon, conn: Conn, req: NoFields) -> Pong:
    return Pong()


async def op_status(d: Daemon, conn: Conn, req: NoFields) -> Status:
    routing.expire_stale_asks(d)  # what status calls waiting is waiting now, not at the next sweep
    return status(d)


def status(d: Daemon) -> Status:
    b = d.backends
    return Status(
        daemon=DaemonHealth(
            pid=os.getpid(),
            version=__version__,
            started=round(d.started, 3),
            uptime_s=round(time.time() - d.started, 1),
            socket=d.paths.socket,
            audit_log=d.audit.path,
            audit_failures=d.audit.failures,
            audit_breaks=d.audit.breaks,
            started_by=d.origin.started_by if d.origin else "",
            person_channel=d.person_problem or P.person_address(d.paths.socket)[1:],
            traceable=d.person_traceable,
            daemon_env=d.origin.settings if d.origin else (),
            settings_problems=d.origin.problems if d.origin else (),
            audit_last_error=d.audit.last_error,
            config_error=b.error,
            rater=b.rater.name if b.rater is not None else "",
            connections=len(d.conns),
            gated_pids=len(d.registry),
        ),
        sessions=tuple(
            replace(
                s.summary(),
                halt_reason=fold_home(s.state.halt_reason),
                # Over (its process gone, or idle past session.idle_end_s) and not used since:
                # kept only so a halted one can be resumed.
                ended=bool(s.ended) and s.ended >= s.last,
            )
            for s in d.sessions.sessions.values()
        ),
        # Commands redacted and home-folded, as everywhere a person reads them (S13, S15).
        pending=tuple(
            replace(
                p.summary(),
                command=cleaned(p.command),
                cwd=fold_home(p.cwd),
                reason=cleaned(p.reason),
            )
            for p in d.book.pending.values()
        ),
        watchers=d.events.watchers,
        totals=dict(d.totals),
    )


async def op_tail(d: Daemon, conn: Conn, req: TailRequest) -> Records:
    entries = await d.off_loop(read_tail, d.audit.path, req.n)
    return Records(tuple(entries))


async def op_captures(d: Daemon, conn: Conn, req: NoFields) -> Captures:
    return Captures(default_ring().snapshot())


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


async def op_subscribe(d: Daemon, conn: Conn, req: NoFields) -> Subscribed:
    routing.expire_stale_asks(d)
    end_finished_sessions(d)
    conn.subscribed = True
    d.events.subscribers.add(conn)
    unseen: tuple[Observation, ...] = ()
    if conn.is_watcher:  # said once: to the first watcher who attaches after them
        unseen = tuple(d.unseen)
        d.unseen.clear()
    return Subscribed(
        watcher=conn.is_watcher,
        observations=unseen,
        sessions=tuple(s.summary() for s in d.sessions.sessions.values()),
        pending=tuple(routing.pending_event(p) for p in d.book.pending.values() if p.state in OPEN),
    )


@dataclass(frozen=True)
class Route(Generic[R]):
    """An op's request decoder and its handler (typed: a handler reads the request its op's
    decoder makes, and nothing else)."""

    decode: Callable[[P.Fields], R]
    handle: Callable[[Daemon, Conn, R], Awaitable[object]]


# Every op's route (typed dispatch: an op without one is a type error, not a runtime probe).
ROUTES: Final[dict[P.Op, Route[Any]]] = {
    P.Op.CHECK: Route(CheckRequest.decode, routing.check),
    P.Op.STATUS: Route(NoFields.decode, op_status),
    P.Op.TAIL: Route(TailRequest.decode, op_tail),
    P.Op.CAPTURES: Route(NoFields.decode, op_captures),
    P.Op.SUBSCRIBE: Route(NoFields.decode, op_subscribe),
    P.Op.REGISTER: Route(RegisterRequest.decode, op_register),
    P.Op.END: Route(EndRequest.decode, op_end),
    P.Op.PING: Route(NoFields.decode, op_ping),
    P.Op.ANSWER: Route(AnswerRequest.decode, verbs.answer),
    P.Op.APPROVE: Route(PendingRequest.decode, verbs.approve),
    P.Op.DENY: Route(PendingRequest.decode, verbs.deny),
    P.Op.MANDATE: Route(MandateRequest.decode, verbs.mandate),
    P.Op.RESUME: Route(ResumeRequest.decode, verbs.resume),
    P.Op.WITHDRAW: Route(PendingRequest.decode, verbs.withdrawn),
    P.Op.UNDO: Route(UndoRequest.decode, verbs.undo),
    P.Op.EXITED: Route(ExitedRequest.decode, routing.exited),
}


# --- the process ------------------------------------------------------------------------------


async def serve(daemon: Daemon, sock: socket.socket, person: socket.socket | None = None) -> None:
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

    async def on_person(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await handle(daemon, reader, writer, Channel.PERSON)

    server = await asyncio.start_unix_server(
        on_connect, sock=sock, limit=P.MAX_LINE + 2, backlog=limits.MAX_CONNECTIONS
    )
    servers = [server]
    if person is not None:
        servers.append(
            await asyncio.start_unix_server(
                on_person, sock=person, limit=P.MAX_LINE + 2, backlog=limits.MAX_CONNECTIONS
            )
        )
    sweeper = asyncio.create_task(sweep(daemon))
    watchdog = asyncio.create_task(deadline.arm_loop_watchdog(daemon.stopping))
    try:
        await daemon.stopping.wait()
    finally:
        for each in servers:
            each.close()
        for conn in list(daemon.conns):
            conn.closed = True
            with contextlib.suppress(Exception):
                conn.writer.close()
        sweeper.cancel()
        watchdog.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                asyncio.gather(*(each.wait_closed() for each in servers)), EXIT_GRACE_S
            )


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
    stopping = startup.Stopping()  # a stop signal from here on stops it cleanly
    # 1. Never inside a boundary or a gated session (S9.7): its settings would be the agent's.
    activated = startup.activation_socket()
    refused = startup.refusal()
    if refused:
        if activated is not None:
            activated.close()
        print(
            f"gatesh daemon: not started: {refused}. Start it from your own terminal, or let "
            "gatesh start it.",
            file=sys.stderr,
        )
        return EXIT_ERROR
    # 2. Out of reach of the user's other processes (S9.5): no trace, no descriptor taken, no
    #    environment (a key) or memory (the channel's credential) read.
    traceable = startup.harden()
    paths = _paths.current()
    if activated is not None:
        paths = startup.activated_paths(paths, activated)
    origin = Origin.read(activated is not None, paths)
    try:
        shared = bool(load_config("/", paths=paths).watchers)
    except ConfigError:
        shared = False  # the daemon serves anyway, refusing every check with the config's error
    # 3. The lock: a second daemon leaves quietly.
    startup.ensure_runtime_dir(paths.runtime_dir, shared=shared)
    lock = startup.acquire_lock(paths.lock)
    if lock is None:
        print("gatesh daemon: already running", file=sys.stderr)
        if activated is not None:
            activated.close()
        return 0
    # 4. The person's channel: an abstract socket, and the credential a client of our own uid
    #    brings to it (S9.5). Before the socket: a client that reaches the daemon finds both.
    token = startup.write_token(paths.runtime_dir)
    person, channel_problem = startup.bind_person_channel(paths.socket)
    # 5. The socket (the service manager's, when it started us), so clients queue on it while
    #    the heavy modules load.
    sock, bound = startup.listening(paths.socket, activated, shared=shared)
    os.makedirs(paths.state_dir, mode=0o700, exist_ok=True)
    try:
        # 6. Load the parsers once (seconds: a stop signal cuts it short), then serve.
        stopping.cut_short()
        preload()
        asyncio.run(
            _run(paths, sock, origin, PersonChannel(person, token, channel_problem, traceable))
        )
    finally:
        with stopping.settled():
            if person is not None:
                person.close()
            with contextlib.suppress(OSError):
                # Remove the socket only if it is still ours (a successor may have replaced it;
                # the service manager's stays with it).
                if bound is not None and startup.file_id(paths.socket) == bound:
                    os.unlink(paths.socket)
            sock.close()
            os.close(lock)
    startup.leave_stuck_threads(EXIT_GRACE_S)
    return 0


async def _run(
    paths: _paths.GatePaths, sock: socket.socket, origin: Origin, person: PersonChannel
) -> None:
    daemon = Daemon(paths)
    daemon.origin = origin
    daemon.person_token = person.token
    daemon.person_problem = person.problem
    daemon.person_traceable = person.traceable
    with contextlib.suppress(ConfigError):
        daemon.backends.config_for(paths.state_dir)
    await serve(daemon, sock, person.sock)
    daemon.book.flush()
    daemon.executor.shutdown(wait=False, cancel_futures=True)
    daemon.rulesets.close()
    daemon.decisions.shutdown()
    daemon.audit_pipe.close()
    daemon.audit.close()

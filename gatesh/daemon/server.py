"""The per-user daemon (S9): one asyncio server on a Unix socket, the pipeline per check.

Guarantees:

- At most one daemon per user and runtime folder: the daemon holds an ``flock`` on
  ``daemon.lock`` for its whole life; a second one exits at once (status 0).
- The socket's folder is 0700 and the socket 0600 (0711/0666 only when ``watchers`` are configured,
  S9.6); every peer's uid is checked with ``SO_PEERCRED``.
- A check is allowed only after its audit line is written (fsync-ed right after the reply, see
  :class:`AuditPipe`); an audit failure refuses it (S13, S15).
- No input can crash the daemon: every connection handler catches everything and answers with an
  error reply (a refusal to a check client), see :mod:`gatesh.daemon.protocol`.

The wire protocol and event shapes are documented in :mod:`gatesh.daemon.protocol`.
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
import struct
import sys
import threading
import time
import traceback
from collections import Counter, OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final

from gatesh import __version__, _paths
from gatesh._errors import ConfigError, ProtocolError
from gatesh.audit import AuditError, AuditLog, fold_home, read_tail, record_for, send_syslog
from gatesh.daemon import procs
from gatesh.daemon import protocol as P
from gatesh.daemon.sessions import Pending, PendingState, Session, Sessions, round_dict

if TYPE_CHECKING:
    from gatesh._types import Decision
    from gatesh.config import Config

# Worker threads for decisions that may wait on a model (a network backend) or are unusually large.
# The pipeline holds the GIL for the builtin rater, so more threads only help while model calls wait
# on the network; 8 keeps a few slow calls from stalling the rest.
WORKERS: Final = 8
# With only local backends (builtin rater and checker) a decision is pure computation of well under
# a millisecond: it runs on the event loop itself, which saves two thread handoffs and the GIL
# ping-pong they cause under load (S14). Commands longer than this still go to a worker thread (with
# heartbeats), so one pathological parse cannot hold every other client for long.
INLINE_MAX_CHARS: Final = 8192
MAX_CONNECTIONS: Final = 1024
HELLO_TIMEOUT_S: Final = 10.0
# Per-cwd configs cached (each keyed by the files' mtimes, so edits are seen on the next request).
CONFIG_CACHE: Final = 256
SWEEP_S: Final = 30.0
# How long a stopping daemon waits for its clients' connections to close and for worker threads to
# end: idle threads and hang-ups take milliseconds; a model call can take its whole timeout (s).
EXIT_GRACE_S: Final = 0.25
# A subscriber whose unsent output exceeds this is disconnected rather than waited for.
SUBSCRIBER_BUFFER: Final = 4 * 1024 * 1024
CHOICES: Final = ("once", "session", "always", "no", "deny always")
ALLOWING: Final = frozenset({"once", "session", "always", "run anyway"})
HALT_CHOICE: Final = "run anyway"  # the only choice a halt offers, typed in full (S3.7)


def audit_failed_message(error: str) -> str:
    return (
        f"gatesh: the audit log could not be written ({error}), so the command was refused. "
        "Nothing runs without its audit record: free disk space or fix the log's folder, then retry."
    )


def _stat_sig(path: str | None) -> tuple[int, int] | None:
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def summary(d: Decision) -> dict[str, Any]:
    """The ``decision`` object of a check reply."""
    return {
        "stage": d.stage.value,
        "outcome": d.outcome.value if d.outcome else None,
        "rung": d.rung.value,
        "rule_id": d.rule_id,
        "reason": d.reason,
        "remedy": d.remedy,
        "to_person_reason": d.to_person_reason,
        "counters": d.counters,
    }


class AuditPipe:
    """The daemon's audit writer: each line is written before its reply, then fsync-ed right after
    by one background thread.

    :meth:`append` writes the record's line (``O_APPEND``, in decision order) on the event loop and
    returns only then, or raises :class:`AuditError`: so a line is in the file before its allow is
    returned (S13) and killing the daemon can never lose it (the kernel has it, S15). The ``fsync``
    that protects it against a crash of the whole machine follows the reply, in the
    ``gatesh-audit-sync`` thread: at once after a quiet spell, at most every
    :data:`SYNC_INTERVAL_S` under load, one ``fsync`` covering every line written meanwhile.
    Measured on this kind of machine, an ``fsync`` waited for on the allow path plus the two thread
    handoffs around it cost ~0.4 ms of a ``gatesh -c`` call (S14).

    Fail closed: after a background ``fsync`` failed, every append makes its own line durable
    (write and ``fsync``) before returning, so nothing more is allowed on a disk that cannot
    keep it, until an ``fsync`` succeeds again.
    """

    # How long close() waits for the last fsync: a disk that hangs must not hang the daemon's
    # exit (the lines are in the kernel already; only a machine crash could still lose them).
    CLOSE_WAIT_S: Final = 10.0
    # The shortest time between the starts of two background fsyncs (s): a lone check is synced at
    # once; under load a machine crash can lose at most this much more than the fsync in flight.
    SYNC_INTERVAL_S: Final = 0.01

    def __init__(self, log: AuditLog) -> None:
        self.log = log
        self.sync_error = ""  # the last background fsync failure ("" when the last one worked)
        self._cond = threading.Condition()
        self._dirty = False  # lines written since the last fsync began
        self._kick_pending = False
        self._stopping = False
        self._syslog: list[dict[str, Any]] = []  # copies to send once durable (audit.syslog)
        self._thread = threading.Thread(target=self._run, name="gatesh-audit-sync", daemon=True)
        self._thread.start()

    def append(self, record: dict[str, Any]) -> None:
        """Write ``record``'s line now; raises AuditError when it could not be written."""
        if self.sync_error or self._stopping:
            # Durable before returning: the disk failed a sync (this raises while it still fails),
            # or the sync thread is gone (a decision that finished while the daemon stops).
            self.log.append(record)
            self.sync_error = ""
            return
        self.log.write([record])
        with self._cond:
            self._dirty = True
            if self.log.syslog:
                self._syslog.append(record)
        if not self._kick_pending:
            # Wake the sync thread after this task step, i.e. once the reply has been sent: woken
            # now, it would compete for the GIL with the code sending the reply.
            self._kick_pending = True
            try:
                asyncio.get_running_loop().call_soon(self._kick)
            except RuntimeError:  # no loop (shutting down): sync now
                self._kick()

    def _kick(self) -> None:
        self._kick_pending = False
        with self._cond:
            self._cond.notify()

    def _run(self) -> None:
        last = 0.0
        while True:
            # At most one fsync per SYNC_INTERVAL_S: under load each covers more lines, and this
            # thread takes the GIL from the event loop less often (measured with 32 sessions:
            # unbounded, it cost ~0.05 ms of daemon CPU per check).
            time.sleep(max(0.0, last + self.SYNC_INTERVAL_S - time.monotonic()))
            with self._cond:
                while not self._dirty and not self._stopping:
                    self._cond.wait()
                if not self._dirty:
                    return  # stopping, and everything written is synced
                self._dirty = False
                copies, self._syslog = self._syslog, []
            last = time.monotonic()
            try:
                self.log.sync()
            except AuditError as exc:
                self.sync_error = str(exc)
                continue
            except Exception as exc:  # a bug must not end the thread: fail closed instead
                self.sync_error = f"{type(exc).__name__}: {exc}"
                continue
            if copies:
                send_syslog(copies)

    def close(self) -> None:
        """Sync what is left and stop the thread (waits at most CLOSE_WAIT_S)."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._thread.join(self.CLOSE_WAIT_S)


class Conn:
    """One client connection: its peer credentials, hello role and writer."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.pid, self.uid, self.gid = self._peercred()
        self.role = ""
        self.claimed_pid: int | None = None
        self.subscribed = False
        self.closed = False
        # Per-connection memo of /proc facts about the peer (it cannot change while connected):
        # the session it was registered as gated in, and its harness session (S9.3).
        self.gated_as: str | None = None
        self.harness: tuple[str, tuple[int, int] | None] | None = None

    def _peercred(self) -> tuple[int, int, int]:
        sock = self.writer.get_extra_info("socket")
        try:
            raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid, uid, gid = struct.unpack("3i", raw)
            return pid, uid, gid
        except (OSError, AttributeError, struct.error):
            return 0, -1, -1

    def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            return
        try:
            self.writer.write(P.encode(message))
        except (ConnectionError, RuntimeError):
            self.closed = True

    @property
    def backlog(self) -> int:
        try:
            return self.writer.transport.get_write_buffer_size()
        except Exception:
            return 0

    @property
    def is_watcher(self) -> bool:
        return self.subscribed and self.role == "watch" and not self.closed


class Daemon:
    """The daemon's state: config, rater, audit log, sessions, subscribers. Event-loop owned."""

    def __init__(self, paths: _paths.GatePaths) -> None:
        self.paths = paths
        self.started = time.time()
        self.sessions = Sessions(paths.state_dir)
        self.registry = procs.GatedRegistry()
        self.conns: set[Conn] = set()
        self.subscribers: set[Conn] = set()
        self.executor = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="gatesh-decide")
        self.totals: Counter[str] = Counter()
        self.audit = AuditLog(paths.audit_log)
        self.audit_pipe = AuditPipe(self.audit)
        self.rater: Any = None
        self.checker: Any = None
        self.local = False  # every backend is local and deterministic: decide on the loop
        self.base_error = ""
        self.shell = "bash"
        self.watchers: tuple[int, ...] = ()
        self._base_sig: object = object()
        self._configs: OrderedDict[str, tuple[object, Config]] = OrderedDict()
        self.stopping = asyncio.Event()
        from gatesh.negotiation import ObservationMemory

        self.observed = ObservationMemory()

    # --- configuration (reloaded when its files change) ---------------------------------------

    def _reload_base(self, sig: object) -> None:
        """Rebuild what depends on the user/system tiers: rater, checker, audit bounds, shell."""
        from gatesh.config import load_config

        self._base_sig = sig
        self._configs.clear()
        try:
            config = load_config("/", paths=self.paths)
        except ConfigError as exc:
            self.base_error = str(exc)
            return
        try:
            from gatesh.rater import make_rater

            self.rater = make_rater(config)
        except Exception as exc:
            self.base_error = f"the rater could not be built: {type(exc).__name__}: {exc}"
            return
        try:
            from gatesh.alignment import make_checker
        except ImportError:
            self.checker = None
        else:
            try:
                self.checker = make_checker(config)
            except Exception as exc:
                self.base_error = f"the alignment checker could not be built: {type(exc).__name__}: {exc}"
                return
        self.base_error = ""
        self.local = (getattr(self.rater, "name", "") == "builtin"
                      and (self.checker is None or getattr(self.checker, "name", "") == "builtin"))
        self.audit.max_bytes = max(4096, int(config.audit.max_bytes))
        self.audit.keep = max(0, int(config.audit.keep))
        self.audit.syslog = bool(getattr(config.audit, "syslog", False))
        self.shell = config.shell if config.shell in ("bash", "zsh") else "bash"
        self.watchers = tuple(getattr(config, "watchers", ()) or ())

    def config_for(self, cwd: str) -> Config:
        """The effective config for ``cwd``; re-read when any of its files changed. Raises ConfigError."""
        from gatesh.config import find_project_file, load_config

        base = (_stat_sig(self.paths.system_config), _stat_sig(self.paths.user_config))
        if base != self._base_sig:
            self._reload_base(base)
        if self.base_error:
            raise ConfigError(self.paths.user_config, "config", self.base_error)
        project = find_project_file(cwd)
        sig = (base, project, _stat_sig(project))
        hit = self._configs.get(cwd)
        if hit is not None and hit[0] == sig:
            self._configs.move_to_end(cwd)
            return hit[1]
        config = load_config(cwd, paths=self.paths)
        self._configs[cwd] = (sig, config)
        while len(self._configs) > CONFIG_CACHE:
            self._configs.popitem(last=False)
        return config

    # --- publishing -------------------------------------------------------------------------

    def publish(self, event_kind: str, session: str | None = None, /, **fields: Any) -> None:
        """Send one event to every subscriber; a subscriber too far behind is disconnected."""
        event: dict[str, Any] = {"event": event_kind, "time": round(time.time(), 3)}
        if session is not None:
            event["session"] = session
        event.update(fields)
        if not self.subscribers:
            return
        for conn in list(self.subscribers):
            if conn.closed:
                self.subscribers.discard(conn)
                continue
            if conn.backlog > SUBSCRIBER_BUFFER:
                conn.closed = True
                conn.writer.close()
                continue
            conn.send(event)

    @property
    def watcher_count(self) -> int:
        return sum(1 for c in self.subscribers if c.is_watcher)

    # --- connection handling ------------------------------------------------------------------

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one connection (steps 1–4 of the protocol). Never raises."""
        conn = Conn(reader, writer)
        self.conns.add(conn)
        try:
            if len(self.conns) > MAX_CONNECTIONS:
                conn.send(P.error_reply(None, "too many connections"))
                return
            # 1. The hello.
            try:
                line = await asyncio.wait_for(reader.readline(), HELLO_TIMEOUT_S)
            except (TimeoutError, ValueError, asyncio.LimitOverrunError):
                conn.send(P.error_reply(None, "no valid hello"))
                return
            if not line:
                return
            try:
                hello = P.decode(line.rstrip(b"\n"))
                version = hello.get("v")
                role = hello.get("hello")
                if version != P.VERSION:
                    raise ProtocolError(f"unsupported protocol version {version!r} (this daemon speaks {P.VERSION})")
                if role not in P.ROLES:
                    raise ProtocolError(f"unknown role {role!r}")
                claimed = hello.get("pid")
                conn.claimed_pid = claimed if isinstance(claimed, int) and not isinstance(claimed, bool) else None
            except ProtocolError as exc:
                conn.send(P.error_reply(None, str(exc)))
                return
            # 2. The peer's uid.
            if conn.uid != os.getuid() and not (conn.uid in self.watchers and role in ("watch", "human", "admin")):
                conn.send(P.error_reply(None, f"uid {conn.uid} may not use this daemon"))
                return
            conn.role = role
            conn.send({"v": P.VERSION, "welcome": role, "daemon_pid": os.getpid(), "version": __version__})
            # 3. Requests.
            while not conn.closed:
                try:
                    line = await reader.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    conn.send(P.error_reply(None, f"line longer than {P.MAX_LINE} bytes"))
                    return
                if not line:
                    return
                line = line.rstrip(b"\n")
                if not line.strip():
                    continue
                await self.dispatch(conn, line)
                with contextlib.suppress(ConnectionError):
                    await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except Exception:  # never let a connection take the daemon down
            traceback.print_exc(file=sys.stderr)
        finally:
            was_watcher = conn.is_watcher
            self.conns.discard(conn)
            self.subscribers.discard(conn)
            conn.closed = True
            if was_watcher and not self.watcher_count:
                self._nobody_left()
            with contextlib.suppress(Exception):
                writer.write_eof() if writer.can_write_eof() else None
            with contextlib.suppress(Exception):
                writer.close()
                await writer.wait_closed()

    async def dispatch(self, conn: Conn, line: bytes) -> None:
        """Answer one request (step 4: any bad input becomes an error reply)."""
        op: str | None = None
        rid: Any = None
        try:
            msg = P.decode(line)
            rid = msg.get("id")
            op = msg.get("op") if isinstance(msg.get("op"), str) else None
            if op not in P.OPS:
                raise ProtocolError(f"unknown op {msg.get('op')!r}")
            if conn.uid != os.getuid() and op in ("check", "register", "end"):
                raise ProtocolError(f"op {op!r} is not open to watcher uids")
            if op in P.HUMAN_OPS or op == "end":
                why = await self.human_refusal(conn, msg)
                if why:
                    conn.send({"re": op, "id": rid, "ok": False, "refused": True,
                               "error": f"refused: {why}"})
                    return
            handler = getattr(self, "op_" + op)
            reply = await handler(conn, msg)
            reply.setdefault("ok", True)
            reply["re"] = op
            if rid is not None:
                reply["id"] = rid
            conn.send(reply)
        except ProtocolError as exc:
            conn.send(P.error_reply(op, str(exc), rid))
        except Exception as exc:  # an internal error: a refusal, never a crash
            traceback.print_exc(file=sys.stderr)
            from gatesh import messages

            reply = P.error_reply(op, f"internal error: {type(exc).__name__}: {exc}", rid)
            reply["message"] = messages.error(f"{type(exc).__name__}: {exc}")
            conn.send(reply)

    async def human_refusal(self, conn: Conn, msg: dict[str, Any]) -> str | None:
        """Why ``conn`` may not use a human-only op (S9.5), or None. Fails closed."""
        pid = msg.get("pid", conn.claimed_pid)
        if not isinstance(pid, int) or isinstance(pid, bool):
            return "human-only requests must carry the client's pid"
        if pid != conn.pid:
            return f"the request's pid {pid} is not the connected process ({conn.pid})"
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, procs.gated_ancestry, conn.pid, self.registry)

    # --- check --------------------------------------------------------------------------------

    async def op_check(self, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
        """Decide one command. Steps are numbered where they happen."""
        from gatesh._types import Action, Stage

        # 1. Validate the request.
        command = P.field(msg, "command", str)
        cwd = P.field(msg, "cwd", str)
        if not os.path.isabs(cwd) or "\x00" in cwd:
            raise ProtocolError("field 'cwd' must be an absolute path")
        sid = P.field(msg, "session", str, required=False, default="")
        surface = P.field(msg, "surface", str, required=False, default="-c")[:32]
        can_ask = bool(P.field(msg, "can_ask", bool, required=False, default=surface == "hook"))
        if len(sid) > 256 or any(ord(c) < 32 for c in sid):
            raise ProtocolError("field 'session' must be at most 256 printable characters")
        # 2. The session: GATESH_SESSION when given, else the harness process (S9.3).
        anchor = None
        if not sid:
            if conn.harness is None:  # the peer's ancestry is fixed while it is connected
                harness, p = procs.harness_session(conn.pid)
                conn.harness = (harness, (p.pid, p.start) if p is not None else None)
            sid, anchor = conn.harness
        if conn.gated_as != sid:  # the client becomes the command's shell: gated
            # Registered right after this task step (the reply is sent first): the loop runs the
            # callback before it handles any connection that arrives later, so nothing the command
            # starts can ask for a human-only verb before its shell is known to be gated (S9.5).
            asyncio.get_running_loop().call_soon(self.registry.add, conn.pid, sid)
            conn.gated_as = sid
        sess, new = self.sessions.get(sid, anchor=anchor, surface=surface)
        if new:
            self.publish("session_start", sid, anchor=anchor[0] if anchor else None, surface=surface)
        sess.checks += 1
        sess.last = time.time()
        # 3. The config for this folder (a broken config refuses, naming the problem).
        try:
            config = self.config_for(cwd)
        except ConfigError as exc:
            from gatesh import messages

            decision = _error_decision(command, f"invalid configuration: {exc}", messages.error(f"invalid configuration: {exc}"))
            return await self.finish(conn, sess, decision, cwd=cwd, surface=surface)
        async with sess.lock:
            # 4. Decide: on the loop when every backend is local (pure computation, see
            #    INLINE_MAX_CHARS), else in a worker thread with heartbeats (model calls are slow).
            open_rounds = sess.state.negotiation.transcript()
            was_halted = sess.state.halted
            decision = await self._decide(conn, command, cwd, config, sess)
            health = getattr(self.rater, "health_notice", None)
            text = health() if callable(health) else None
            if isinstance(text, str) and text:
                self.publish("notice", sid, text=_clean(text))
            if sess.state.halted != was_halted:
                self.sessions.note_halt(sess)
                if sess.state.halted and decision.action is not Action.HALT:
                    self.publish("halt", sid, cwd=fold_home(cwd), reason=fold_home(sess.state.halt_reason),
                                 command=_clean(decision.facts.text))
            # 5. Escalations: a watcher, the surface's own person, or the no-person refusal (S7);
            #    a halt likewise (S3.7), offering only `run anyway`.
            extra: dict[str, Any] = {}
            if decision.action is Action.ESCALATE:
                extra = await self.escalate(conn, sess, decision, cwd, surface, can_ask, config)
            elif decision.action is Action.HALT:
                decision, extra = await self.halt(conn, sess, decision, cwd, surface, can_ask, config)
            # 6–8. Audit, publish, reply.
            reply = await self.finish(conn, sess, decision, cwd=cwd, surface=surface, **extra)
            if (reply["action"] == "allow" and open_rounds
                    and decision.stage not in (Stage.BYPASS, Stage.HARNESS)
                    and decision.action is not Action.ESCALATE):
                last = open_rounds[-1]
                ends = "agreed" if " ".join(last.command.split()) == _key(decision) else "accepted"
                from gatesh._types import Round

                passed = Round(command=decision.facts.text, justification=decision.facts.justification,
                               outcome=decision.outcome or last.outcome, reason=decision.reason, passed=True)
                self.publish("round", sid, cwd=fold_home(cwd), number=len(open_rounds) + 1,
                             total=len(open_rounds) + 1, round=_clean_round(round_dict(passed)), ends=ends)
            return reply

    async def _decide(self, conn: Conn, command: str, cwd: str, config: Config, sess: Session) -> Decision:
        """The pipeline's decision for ``command`` in ``sess`` (whose lock the caller holds)."""
        from gatesh.pipeline import decide

        def run() -> Decision:
            return decide(command, cwd=cwd, config=config, session=sess.state, rater=self.rater,
                          checker=self.checker, paths=self.paths)

        if self.local and len(command) <= INLINE_MAX_CHARS:
            return run()
        fut = asyncio.get_running_loop().run_in_executor(self.executor, run)
        while True:
            done, _ = await asyncio.wait({fut}, timeout=P.HEARTBEAT_S)
            if done:
                return fut.result()
            conn.send({"re": "check", "interim": "working"})

    async def escalate(self, conn: Conn, sess: Session, decision: Decision, cwd: str, surface: str,
                       can_ask: bool, config: Config) -> dict[str, Any]:
        """Route an escalation (S7); returns the fields that finish the check's reply."""
        from gatesh import messages

        rounds = decision.rounds
        transcript = messages.rounds_of(rounds) if rounds else ""
        why = decision.to_person_reason or decision.reason
        p = self.sessions.add_pending(session=sess.id, command=decision.facts.text, key=_key(decision),
                                      cwd=cwd, reason=why, surface=surface, pid=conn.pid, decision=decision)
        watchers = self.watcher_count
        if watchers or can_ask:
            loop = asyncio.get_running_loop()
            p.future = loop.create_future()
            timeout = float(config.escalation.timeout_s)
            self.publish("escalation", sess.id, pending_id=p.id, kind="escalate", cwd=fold_home(cwd),
                         command=_clean(decision.facts.text),
                         outcome=decision.outcome.value if decision.outcome else None,
                         reason=_clean(decision.reason), remedy=_clean(decision.remedy),
                         to_person_reason=_clean(why), rounds=[_clean_round(round_dict(r)) for r in rounds],
                         transcript=_clean(transcript), choices=list(_choices(decision)), timeout_s=timeout,
                         entry=_entry_pattern(decision))
            sess.state.negotiation.person_reached()  # an escalation shown clears the argument (S6)
            if can_ask and not watchers:
                p.state = PendingState.ASKING
                from gatesh.hooks import escalation_block

                return {"action": "escalate", "pending_id": p.id, "exit": P.EXIT_REFUSED,
                        "message": escalation_block(decision)}
            conn.send({"re": "check", "interim": "waiting", "pending_id": p.id, "message": messages.waiting()})
            with contextlib.suppress(ConnectionError):
                await conn.writer.drain()
            try:
                answer, note = await self._await_person(conn, p.future, timeout)
            except TimeoutError:
                p.move(PendingState.EXPIRED)
                self.sessions.save()
                self.publish("expired", sess.id, pending_id=p.id)
                return self._nobody(decision, why, transcript, p)
            return self._answered(sess, decision, p, answer, note)
        p.state = PendingState.REFUSED
        self.sessions.save()
        return self._nobody(decision, why, transcript, p)

    async def halt(self, conn: Conn, sess: Session, decision: Decision, cwd: str, surface: str,
                   can_ask: bool, config: Config) -> tuple[Decision, dict[str, Any]]:
        """Route a halt (S3.7): the attack banner, and a pending id a person may answer with
        `run anyway` (typed in full) to run this one command once; the halt stays either way.

        With a watcher the agent's call waits for the answer (as an escalation does) and, on
        `run anyway`, the command is decided again (the pipeline lets it through once). The
        surface's own person (``can_ask``) answers through ``answer`` and the surface re-sends the
        check. With nobody reachable it is refused at once; ``gatesh approve ID`` may still let
        the retry run once. Returns the decision to finish with and the reply's extra fields.
        """
        from gatesh import messages

        watchers = self.watcher_count
        state = (PendingState.WAITING if watchers else PendingState.ASKING if can_ask
                 else PendingState.REFUSED)
        p = self.sessions.add_pending(session=sess.id, command=decision.facts.text, key=_key(decision),
                                      cwd=cwd, reason=decision.reason, kind="halt", state=state,
                                      surface=surface, pid=conn.pid, decision=decision)
        timeout = float(config.escalation.timeout_s)
        asked = state is not PendingState.REFUSED
        self.publish("halt", sess.id, cwd=fold_home(cwd), reason=fold_home(sess.state.halt_reason),
                     command=_clean(decision.facts.text), pending_id=p.id if asked else "",
                     choices=[HALT_CHOICE] if asked else [], timeout_s=timeout if watchers else None)
        if state is PendingState.REFUSED:
            self.sessions.save()
            return decision, {"pending_id": p.id}
        if state is PendingState.ASKING:
            return decision, {"pending_id": p.id}
        loop = asyncio.get_running_loop()
        p.future = loop.create_future()
        conn.send({"re": "check", "interim": "waiting", "pending_id": p.id, "message": messages.waiting()})
        with contextlib.suppress(ConnectionError):
            await conn.writer.drain()
        try:
            answer, _note = await self._await_person(conn, p.future, timeout)
        except TimeoutError:
            p.move(PendingState.EXPIRED)
            self.sessions.save()
            self.publish("expired", sess.id, pending_id=p.id)
            return decision, {"pending_id": p.id}
        if answer != HALT_CHOICE:
            return decision, {"pending_id": p.id, "answer": answer}
        # `run anyway`: the halt itself keeps its audit line; then the pipeline decides the command
        # again and lets this exact command through once (never a hardline one). The halt stays.
        rec = record_for(decision, session=sess.id, pid=conn.pid, cwd=cwd, surface=surface,
                         answer=answer, pending_id=p.id, action=decision.action.value)
        try:
            self.audit_pipe.append(rec)
        except AuditError:
            return decision, {"pending_id": p.id, "answer": answer}  # finish() refuses it anyway
        was_halted = sess.state.halted
        sess.state.run_anyway.add(p.key)
        again = await self._decide(conn, p.command, cwd, config, sess)
        sess.state.run_anyway.discard(p.key)  # not used (it did not run): nothing is remembered
        if sess.state.halted != was_halted:
            self.sessions.note_halt(sess)
        return again, {"pending_id": p.id, "answer": answer}

    @staticmethod
    async def _await_person(conn: Conn, future: asyncio.Future[Any], timeout: float) -> Any:
        """A person's answer from ``future``, or TimeoutError after ``timeout`` s. A heartbeat goes
        to the waiting client every HEARTBEAT_S, so its idle timeout never cuts a person short."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError
            done, _ = await asyncio.wait({future}, timeout=min(left, P.HEARTBEAT_S))
            if done:
                return future.result()
            conn.send({"re": "check", "interim": "working"})
            with contextlib.suppress(ConnectionError):
                await conn.writer.drain()

    def _nobody(self, decision: Decision, why: str, transcript: str, p: Pending) -> dict[str, Any]:
        from gatesh import messages

        return {"action": "refuse", "pending_id": p.id, "answer": "nobody-watching",
                "message": messages.nobody_watching(decision.facts.text, why, transcript, p.id)}

    def _answered(self, sess: Session, decision: Decision, p: Pending, answer: str, note: str) -> dict[str, Any]:
        """The result of a person's answer (the pending has already moved to ANSWERED)."""
        from gatesh import messages

        if answer in ALLOWING and (p.kind == "halt") == (answer == "run anyway"):
            if answer == "session" and decision.outcome is not None and decision.outcome.value != "catastrophic":
                sess.state.approved_session.add(p.key)
            sess.state.negotiation.note_progress()
            return {"action": "allow", "pending_id": p.id, "answer": answer, "message": ""}
        return {"action": "reject", "pending_id": p.id, "answer": answer,
                "message": messages.rejected_by_person(decision.facts.text, note)}

    async def finish(self, conn: Conn, sess: Session, decision: Decision, *, cwd: str, surface: str,
                     action: str | None = None, pending_id: str = "", answer: str = "",
                     message: str | None = None, exit: int | None = None) -> dict[str, Any]:
        """Steps 6–8 of a check: the audit line (written before an allow), the events, the reply."""
        action = action or decision.action.value
        message = decision.message if message is None else message
        # 6. The audit line. A failure refuses the command, whatever was decided.
        rec = record_for(decision, session=sess.id, pid=conn.pid, cwd=cwd, surface=surface,
                         answer=answer, pending_id=pending_id, action=action)
        try:
            self.audit_pipe.append(rec)
        except AuditError as exc:
            action, message, exit = "refuse", audit_failed_message(str(exc)), P.EXIT_REFUSED
            self.totals["audit_failed"] += 1
        exit = (0 if action == "allow" else P.EXIT_REFUSED) if exit is None else exit
        if action == "allow":
            exit = 0
            if decision.stage.value == "approved-id":
                self.sessions.consume_approval(sess.id, _key(decision))
        self.totals[action] += 1
        sess.totals[action] = sess.totals.get(action, 0) + 1
        # 7. The events watchers see (nothing to build when nobody subscribed).
        if self.subscribers:
            self._publish_decision(sess, decision, cwd=cwd, surface=surface, action=action,
                                   pending_id=pending_id, answer=answer)
        # 8. The reply.
        return {"action": action, "message": message, "exit": exit, "pending_id": pending_id,
                "notice": decision.notice if action == "allow" else "", "session": sess.id,
                "shell": self.shell, "decision": summary(decision)}

    def _publish_decision(self, sess: Session, decision: Decision, *, cwd: str, surface: str, action: str,
                          pending_id: str, answer: str) -> None:
        if decision.action.value == "reject" and decision.rounds and action == "reject" and not answer:
            n = len(decision.rounds)
            self.publish("round", sess.id, cwd=fold_home(cwd), number=n, total=n,
                         round=_clean_round(round_dict(decision.rounds[-1])), ends=None)
        self.publish("decision", sess.id, cwd=fold_home(cwd), command=_clean(decision.facts.text),
                     surface=surface, action=action, stage=decision.stage.value,
                     outcome=decision.outcome.value if decision.outcome else None,
                     reason=_clean(decision.reason), remedy=_clean(decision.remedy), rule_id=decision.rule_id,
                     rung=decision.rung.value, counters=decision.counters, notice=_clean(decision.notice),
                     pending_id=pending_id, answer=answer)
        if decision.notice and action == "allow":
            self.publish("notice", sess.id, text=_clean(decision.notice))

    # --- human-only ops (S9.5) -------------------------------------------------------------------

    def _pending(self, msg: dict[str, Any]) -> Pending:
        pid = P.field(msg, "pending_id", str)
        p = self.sessions.pending.get(pid.strip().lower())
        if p is None:
            raise ProtocolError(f"no pending escalation {pid!r}")
        return p

    def _by(self, conn: Conn) -> dict[str, Any]:
        return {"uid": conn.uid, "pid": conn.pid, "role": conn.role}

    async def op_answer(self, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
        p = self._pending(msg)
        answer = P.field(msg, "answer", str).strip().lower()
        note = P.field(msg, "note", str, required=False, default="")
        if answer not in P.ANSWERS:
            raise ProtocolError(f"answer must be one of {', '.join(P.ANSWERS)}")
        offered = (("run anyway", "no") if p.kind == "halt" else
                   _choices(p.decision) if p.decision is not None else ("once", "no", "deny always"))
        if answer not in offered:
            raise ProtocolError(f"{answer!r} is not offered for escalation {p.id} ({', '.join(offered)})")
        return await self._rule(conn, p, answer, note)

    async def op_approve(self, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
        p = self._pending(msg)
        return await self._rule(conn, p, "run anyway" if p.kind == "halt" else "once", "")

    async def op_deny(self, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
        p = self._pending(msg)
        return await self._rule(conn, p, "no", P.field(msg, "note", str, required=False, default=""))

    async def _rule(self, conn: Conn, p: Pending, answer: str, note: str) -> dict[str, Any]:
        """A person's ruling on ``p``: the first answer wins; others see who answered."""
        by = self._by(conn)
        if p.state is PendingState.WAITING and p.future is not None and not p.future.done():
            p.move(PendingState.ANSWERED)
            p.answer, p.by = answer, by
            p.future.set_result((answer, note))
            self.publish("answered", p.session, pending_id=p.id, answer=answer, by=by)
            return {"pending_id": p.id, "state": p.state.value}
        if p.state is PendingState.ASKING:
            p.move(PendingState.ANSWERED)
            p.answer, p.by = answer, by
            sess, _ = self.sessions.get(p.session)
            async with sess.lock:
                assert p.decision is not None
                result = self._answered(sess, p.decision, p, answer, note)
                if result["action"] == "allow":  # the surface re-sends the check to run it
                    self._grant(sess, p)
                self.publish("answered", p.session, pending_id=p.id, answer=answer, by=by)
                reply = await self.finish(conn, sess, p.decision, cwd=p.cwd, surface=p.surface, **result)
            return reply | {"state": p.state.value}
        if p.state in (PendingState.REFUSED, PendingState.EXPIRED):
            allow = answer in ALLOWING
            self.sessions.settle(p, PendingState.APPROVED if allow else PendingState.DENIED)
            p.answer, p.by = answer, by
            if allow:
                sess, _ = self.sessions.get(p.session)
                self._grant(sess, p)
            self.publish("answered", p.session, pending_id=p.id, answer=answer, by=by)
            await self._audit_ruling(conn, p)
            return {"pending_id": p.id, "state": p.state.value,
                    "text": (f"approved: `{p.command}` may run once when the agent retries it" if allow
                             else f"denied: `{p.command}` stays refused")}
        who = p.by.get("pid") if p.by else None
        raise ProtocolError(f"escalation {p.id} is already {p.state.value}"
                            + (f" (answered {p.answer!r} by pid {who})" if who else ""))

    @staticmethod
    def _grant(sess: Session, p: Pending) -> None:
        """A person let ``p``'s command run once on the agent's retry: `run anyway` for a halt
        (the halt stays), an approved-once entry otherwise."""
        if p.kind == "halt":
            sess.state.run_anyway.add(p.key)
        else:
            sess.state.approved_once.add(p.key)

    async def _audit_ruling(self, conn: Conn, p: Pending) -> None:
        rec = {"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "ts": round(time.time(), 3),
               "session": p.session, "pid": conn.pid, "cwd": fold_home(p.cwd), "surface": conn.role,
               "command": _clean(p.command), "action": p.state.value, "stage": "person",
               "answer": p.answer, "pending_id": p.id}
        with contextlib.suppress(AuditError):
            self.audit_pipe.append(rec)

    async def op_mandate(self, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
        text = P.field(msg, "text", str).strip()
        if not text:
            raise ProtocolError("field 'text' is empty")
        sid = P.field(msg, "session", str, required=False, default="")
        if len(sid) > 256 or any(ord(c) < 32 for c in sid):
            raise ProtocolError("field 'session' must be at most 256 printable characters")
        # The channel (S5.3): a watcher's words are "watch"; a human-role client (`gatesh mandate`,
        # a harness's prompt hook) names its own. Either way the ancestry check above has already
        # refused any client that descends from a gated session.
        from gatesh.negotiation import TRUSTED_CHANNELS, USER_MESSAGE_MAX_CHARS

        if conn.role == "watch":
            channel = "watch"
        else:
            channel = P.field(msg, "channel", str, required=False, default="mandate")
            if channel not in TRUSTED_CHANNELS or channel == "watch":
                raise ProtocolError(f"unknown channel {channel!r}")
        targets = [self.sessions.get(sid)[0]] if sid else list(self.sessions.sessions.values())
        if not sid:
            if text in self.sessions.mandates:
                self.sessions.mandates.remove(text)
            self.sessions.mandates.append(text)
            del self.sessions.mandates[:-10]
        # A harness replays its transcript on every hook call: words already in every window are
        # admitted again (they stay the newest) but not announced to the watchers a second time.
        short = text[:USER_MESSAGE_MAX_CHARS]
        known = bool(targets) and all(short in s.state.negotiation.user_messages() for s in targets)
        admitted = [s.id for s in targets if s.state.negotiation.admit_user_message(text, channel)]
        if not known:
            self.publish("mandate", sid or None, text=_clean(text), channel=channel)
        return {"sessions": [s.id for s in targets], "admitted": admitted, "channel": channel}

    async def op_resume(self, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
        sid = P.field(msg, "session", str)
        sess = self.sessions.sessions.get(sid)
        if sess is None:
            sess, _ = self.sessions.get(sid)
        was = sess.state.halted
        sess.state.resume()
        self.sessions.note_halt(sess)
        self.publish("resumed", sid, by=self._by(conn))
        return {"session": sid, "was_halted": was}

    # --- session ops ---------------------------------------------------------------------------

    async def op_register(self, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
        sid = P.field(msg, "session", str)
        pid = P.field(msg, "pid", int, required=False, default=conn.pid)
        surface = P.field(msg, "surface", str, required=False, default="pty")
        self.registry.add(pid, sid)
        _, new = self.sessions.get(sid, surface=surface)
        if new:
            self.publish("session_start", sid, anchor=pid, surface=surface)
        return {"session": sid, "shell": self.shell}

    async def op_end(self, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
        sid = P.field(msg, "session", str)
        return {"observation": self.end_session(sid)}

    def end_session(self, sid: str) -> str | None:
        """A session ended: the S6 observation (once per distinct state), then forget it."""
        from gatesh.negotiation import session_end_observation

        sess = self.sessions.sessions.get(sid)
        if sess is None:
            return None
        waiting = sum(1 for p in self.sessions.pending.values() if p.session == sid
                      and p.state in (PendingState.WAITING, PendingState.ASKING))
        counters = sess.state.negotiation.counters()
        obs = session_end_observation(counters, waiting, session=sid)
        text = obs.text if obs is not None and self.observed.first_time(obs) else None
        self.publish("session_end", sid, observation=text, counters=counters)
        if not sess.state.halted:
            self.sessions.remove(sid)
        return text

    # --- admin ops -----------------------------------------------------------------------------

    async def op_ping(self, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
        return {"pong": True}

    async def op_status(self, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
        return self.status()

    def status(self) -> dict[str, Any]:
        return {
            "daemon": {"pid": os.getpid(), "version": __version__, "started": round(self.started, 3),
                       "uptime_s": round(time.time() - self.started, 1), "socket": self.paths.socket,
                       "audit_log": self.audit.path, "audit_failures": self.audit.failures,
                       "audit_last_error": self.audit.last_error, "config_error": self.base_error,
                       "rater": getattr(self.rater, "name", "") if self.rater else "",
                       "connections": len(self.conns), "gated_pids": len(self.registry)},
            "sessions": [s.summary() | {"halt_reason": fold_home(s.state.halt_reason)}
                         for s in self.sessions.sessions.values()],
            # Commands redacted and home-folded, as everywhere a person reads them (S13, S15).
            "pending": [p.summary() | {"command": _clean(p.command), "cwd": fold_home(p.cwd),
                                       "reason": _clean(p.reason)}
                        for p in self.sessions.pending.values()],
            "watchers": self.watcher_count,
            "totals": dict(self.totals),
        }

    async def op_tail(self, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
        n = max(0, min(10_000, P.field(msg, "n", int, required=False, default=20)))
        loop = asyncio.get_running_loop()
        return {"records": await loop.run_in_executor(self.executor, read_tail, self.audit.path, n)}

    async def op_captures(self, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
        try:
            from gatesh.captures import default_ring
        except ImportError:
            return {"captures": None, "note": "this gatesh has no model-call capture ring"}
        return {"captures": default_ring().snapshot()}

    def _nobody_left(self) -> None:
        """No watcher is attached any more: every escalation waiting for one is refused now, as
        with nobody watching (its wait ends as a timeout would)."""
        for p in self.sessions.pending.values():
            if p.state is PendingState.WAITING and p.future is not None and not p.future.done():
                p.future.set_exception(TimeoutError("the last watcher left"))

    async def op_subscribe(self, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
        conn.subscribed = True
        self.subscribers.add(conn)

        def pending(p: Pending) -> dict[str, Any]:
            extra: dict[str, Any] = {}
            if p.decision is not None:
                d = p.decision
                extra = {"outcome": d.outcome.value if d.outcome else None, "choices": list(_choices(d)),
                         "entry": _entry_pattern(d)}
            return p.summary() | {"command": _clean(p.command), "cwd": fold_home(p.cwd)} | extra

        return {"subscribed": True, "watcher": conn.is_watcher,
                "sessions": [s.summary() for s in self.sessions.sessions.values()],
                "pending": [pending(p) for p in self.sessions.pending.values()
                            if p.state in (PendingState.WAITING, PendingState.ASKING)]}

    # --- housekeeping ----------------------------------------------------------------------------

    async def sweep(self) -> None:
        """Every SWEEP_S: end sessions whose harness process is gone; prune the gated registry."""
        while not self.stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), SWEEP_S)
            for s in list(self.sessions.sessions.values()):
                if s.anchor_pid is None:
                    continue
                p = procs.info(s.anchor_pid)
                if p is None or p.start != s.anchor_start:
                    self.end_session(s.id)
            self.registry.prune()


def _key(decision: Decision) -> str:
    from gatesh.pipeline import normalised

    return normalised(decision.facts)


def _clean(text: str) -> str:
    from gatesh.audit import _clean as clean

    return clean(text) if text else text


def _entry_pattern(decision: Decision) -> str:
    """The exact list pattern for this command (as the lists compare it, S3.6), or "" when the
    command holds a secret (redaction changes it): a secret is never written into a config file."""
    import re

    from gatesh.redact import redact

    text = re.sub(r"\s+#\s*why:.*\Z", "", decision.facts.text, flags=re.S | re.I)
    text = " ".join(text.split())
    return text if redact(text) == text else ""


def _clean_round(r: dict[str, Any]) -> dict[str, Any]:
    return {k: _clean(v) if isinstance(v, str) else v for k, v in r.items()}


def _choices(decision: Decision) -> tuple[str, ...]:
    if decision.outcome is not None and decision.outcome.value == "catastrophic":
        return ("once", "no", "deny always")
    return CHOICES


def _error_decision(command: str, reason: str, message: str) -> Decision:
    from gatesh._types import Action, Decision, Facts, Rung, Stage

    return Decision(action=Action.REFUSE, stage=Stage.ERROR, outcome=None, reason=reason, rung=Rung.AUTO,
                    facts=Facts(text=command, readable=False, unreadable="not read"), message=message)


# --- process setup ---------------------------------------------------------------------------


def ensure_runtime_dir(path: str, *, shared: bool = False) -> None:
    """Create the socket folder 0700 (0711 with watchers), refusing one owned by another uid."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.stat(path)
    if st.st_uid != os.getuid():
        raise SystemExit(f"gatesh daemon: {path} belongs to uid {st.st_uid}, not to you; refusing to use it")
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
    sock.listen(1024)
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
    server = await asyncio.start_unix_server(daemon.handle, sock=sock, limit=P.MAX_LINE + 2)
    sweeper = asyncio.create_task(daemon.sweep())
    try:
        await daemon.stopping.wait()
    finally:
        server.close()
        for conn in list(daemon.conns):
            conn.closed = True
            with contextlib.suppress(Exception):
                conn.writer.close()
        sweeper.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.wait_closed(), EXIT_GRACE_S)


def main(argv: list[str] | None = None) -> int:
    """``gatesh daemon [--foreground]``: run the daemon until SIGTERM. Steps numbered below."""
    parser = argparse.ArgumentParser(prog="gatesh daemon", description="run the per-user gatesh daemon")
    parser.add_argument("--foreground", action="store_true",
                        help="stay attached to the terminal (the on-demand start detaches)")
    parser.parse_args(argv)
    # 1. Signals: a write past RLIMIT_FSIZE must fail (EFBIG → refusal), not kill the daemon.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    paths = _paths.current()
    shared = False
    try:
        from gatesh.config import load_config

        shared = bool(getattr(load_config("/", paths=paths), "watchers", ()))
    except Exception:
        pass
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
        # 4. Load the pipeline once (parsers, rater), then serve.
        from gatesh import pipeline  # noqa: F401
        from gatesh.reading import preload

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
        daemon.config_for(paths.state_dir)
    await serve(daemon, sock)
    daemon.sessions.flush()
    daemon.executor.shutdown(wait=False, cancel_futures=True)
    daemon.audit_pipe.close()
    daemon.audit.close()

"""What every part of the daemon shares: its connections, its configuration and backends, the
watchers it publishes to, and the state the request handlers read and change.

Event-loop owned: everything here is used from the daemon's event loop thread only, except
:meth:`Backends.decide`, which a worker thread may run (it reads a session, it changes nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import os
import socket
import struct
import sys
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Final, TypeVar

from gatesh import _paths, _person
from gatesh._errors import ConfigError
from gatesh._paths import GatePaths
from gatesh._types import Decision, Round
from gatesh.alignment import Checker
from gatesh.alignment_model import make_checker
from gatesh.audit import AuditLog, clean
from gatesh.boundary.contain import Containment, here
from gatesh.boundary.handoff import Rulesets
from gatesh.boundary.tickets import Tickets
from gatesh.config import Config, find_project_file, load_config
from gatesh.daemon import procs
from gatesh.daemon import protocol as P
from gatesh.daemon.auditpipe import AuditPipe
from gatesh.daemon.deadline import DecisionPool
from gatesh.daemon.limits import Flood
from gatesh.daemon.publish import Published
from gatesh.daemon.replies import Observation
from gatesh.daemon.sessions import Sessions
from gatesh.events import By
from gatesh.finish import Ruling
from gatesh.negotiation import ObservationMemory
from gatesh.pipeline import decide
from gatesh.rater import Rater, make_rater
from gatesh.session import SessionState

T = TypeVar("T")

# Worker threads for decisions that may wait on a model (a network backend) or are unusually large.
# The pipeline holds the GIL for the builtin rater, so more threads only help while model calls wait
# on the network; 8 keeps a few slow calls from stalling the rest.
WORKERS: Final = 8
# Per-cwd configs cached (each keyed by the files' mtimes, so edits are seen on the next request).
CONFIG_CACHE: Final = 256
# A subscriber whose unsent output exceeds this is disconnected rather than waited for.
SUBSCRIBER_BUFFER: Final = 4 * 1024 * 1024


class Channel(enum.Enum):
    """Where a connection came in: the daemon's socket file, or the person's channel (S9.5)."""

    SOCKET = "socket"
    PERSON = "person"


@dataclass(frozen=True)
class PersonChannel:
    """The person's channel as the daemon opened it: its listening socket (None when it could
    not be opened: ``problem`` says why), the credential a client of its own uid brings, and why
    the user's other processes may trace it (``traceable``; "" when they may not)."""

    sock: socket.socket | None
    token: str
    problem: str = ""
    traceable: str = ""


class Conn:
    """One client connection: its peer credentials, channel, hello role and writer."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        channel: Channel = Channel.SOCKET,
    ) -> None:
        self.reader, self.writer = reader, writer
        self.pid, self.uid, self.gid = self._peercred()
        self.channel = channel
        self.token = ""  # the credential the hello brought (the person's channel, S9.5)
        self.role = ""
        self.claimed_pid: int | None = None
        self.request_follows = False  # the hello said its first request is in the same write
        self.subscribed = False
        self.closed = False
        # Per-connection memo of /proc facts about the peer (it cannot change while connected):
        # the session it was registered as gated in, and its harness session (S9.3).
        self.gated_as: str | None = None
        self.harness: tuple[str, tuple[int, int] | None] | None = None
        # For the connection limits (gatesh.daemon.limits): requests being answered, last activity.
        self.busy = 0
        self.since = time.monotonic()
        # What waits to go out with the next line sent (the welcome, when the hello said its
        # first request follows in the same write): one write and one wake-up of the client less.
        self.held = b""

    def _peercred(self) -> tuple[int, int, int]:
        sock = self.writer.get_extra_info("socket")
        try:
            raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid, uid, gid = struct.unpack("3i", raw)
            return pid, uid, gid
        except (OSError, AttributeError, struct.error):
            return 0, -1, -1

    def send(self, line: bytes) -> None:
        """Write one wire ``line`` (after anything :meth:`hold` kept back), without waiting."""
        if self.closed:
            return
        data, self.held = self.held + line, b""
        try:
            self.writer.write(data)
        except (ConnectionError, RuntimeError):
            self.closed = True

    async def send_with_fd(self, line: bytes, fd: int) -> None:
        """Write one wire ``line`` with the file descriptor ``fd`` on its first bytes (``SCM_RIGHTS``;
        :mod:`gatesh.boundary.handoff`), after everything written before it; ``fd`` is closed
        here either way. The transport's buffer is emptied first, so the bytes keep their order;
        when the descriptor cannot go, the line goes without it (its client then refuses). The
        line goes in the same system call as the descriptor, as far as the socket takes it: the
        client wakes once for the whole reply (S14)."""
        try:
            if self.closed:
                return
            transport = self.writer.transport
            for _ in range(200):  # a reader that takes nothing for ~2 s: send without it
                if not transport.get_write_buffer_size():
                    break
                await self.drain()
                await asyncio.sleep(0.01)
            data, self.held = self.held + line, b""
            sent = 0
            if not transport.get_write_buffer_size() and not self.closed:
                sock = self.writer.get_extra_info("socket").dup()
                try:
                    rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", fd))]
                    sent = sock.sendmsg([data], rights)
                except OSError:
                    sent = 0
                finally:
                    sock.close()
            try:
                self.writer.write(data[sent:])
            except (ConnectionError, RuntimeError):
                self.closed = True
        finally:
            os.close(fd)

    def hold(self, line: bytes) -> None:
        """Send ``line`` with the next :meth:`send`, in the same write. Only for a client that
        does not wait for it (one whose request is already on its way): the next line it reads
        comes with it."""
        self.held += line

    async def drain(self) -> None:
        """Wait until what was sent is handed to the kernel (a closed peer is not an error)."""
        try:
            await self.writer.drain()
        except ConnectionError:
            self.closed = True

    @property
    def backlog(self) -> int:
        transport = self.writer.transport
        return transport.get_write_buffer_size() if transport is not None else 0

    @property
    def is_watcher(self) -> bool:
        return self.subscribed and self.role == "watch" and not self.closed

    @property
    def by(self) -> By:
        """Who this connection is, as a ruling names its author."""
        return By(self.uid, self.pid, self.role)


def _stat_sig(path: str | None) -> tuple[int, int] | None:
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


class Backends:
    """The configuration for each folder, and the rater and checker the user's tiers select.

    Reloaded when a config file changes (checked on every request, by mtime and size). A tier that
    cannot be read, or a backend that cannot be built, is kept as ``error``: every check is then
    refused naming it, until the file is fixed.
    """

    def __init__(self, paths: GatePaths, audit: AuditLog) -> None:
        self.paths = paths
        self.audit = audit
        self.rater: Rater | None = None
        self.checker: Checker | None = None
        self.local = False  # every backend is local and deterministic: decide on the loop
        self.error = ""
        self._error_exc: ConfigError | None = None
        self.shell = "bash"
        self.watchers: tuple[int, ...] = ()
        self._base_sig: object = object()
        self._configs: OrderedDict[str, tuple[object, Config]] = OrderedDict()
        # The containment a confined command gets here, per value of boundary.enabled: what the
        # kernel enforces is fixed for the daemon's life (its Landlock ABI is asked once per
        # process, the machine does not change), so it is asked once, not at every check.
        self._containment: dict[bool, Containment | None] = {}

    def _reload_base(self, sig: object) -> None:
        """Rebuild what depends on the user/system tiers: rater, checker, audit bounds, shell."""
        self._base_sig = sig
        self._configs.clear()
        try:
            config = load_config("/", paths=self.paths)
        except ConfigError as exc:
            self._fail(exc)
            return
        try:
            self.rater = make_rater(config)
        except Exception as exc:
            self._fail(
                ConfigError(
                    self.paths.user_config,
                    "rater",
                    f"the rater could not be built: {type(exc).__name__}: {exc}",
                )
            )
            return
        try:
            self.checker = make_checker(config)
        except Exception as exc:
            self._fail(
                ConfigError(
                    self.paths.user_config,
                    "alignment",
                    f"the alignment checker could not be built: {type(exc).__name__}: {exc}",
                )
            )
            return
        self.error, self._error_exc = "", None
        self.local = self.rater.name == "builtin" and self.checker.name == "builtin"
        self.audit.configure(config.audit)
        self.shell = config.shell
        self.watchers = tuple(config.watchers)

    def _fail(self, exc: ConfigError) -> None:
        """The base tiers cannot be used: every check is refused with ``exc`` (its file named once)."""
        self.error, self._error_exc = str(exc), exc

    def config_for(self, cwd: str) -> Config:
        """The effective config for ``cwd``; re-read when any of its files changed. Raises ConfigError."""
        base = (_stat_sig(self.paths.system_config), _stat_sig(self.paths.user_config))
        if base != self._base_sig:
            self._reload_base(base)
        if self._error_exc is not None:  # a copy: re-raising one object would grow its traceback
            e = self._error_exc
            raise ConfigError(e.path, e.key, e.problem, e.line)
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

    def decide(
        self,
        command: str,
        cwd: str,
        config: Config,
        state: SessionState,
        undo: bool = True,
        contained: bool = False,
        terminal: bool = False,
    ) -> Decision:
        """The pipeline's decision with this daemon's backends (pure: ``state`` is only read).
        ``undo``: judged knowing a snapshot is taken before an allowed command runs (S17);
        ``contained``: knowing it runs inside its boundary, where this kernel enforces one
        (:mod:`gatesh.boundary.contain`); ``terminal``: it runs at a terminal."""
        from gatesh.undo.guard import policy_for

        return decide(
            command,
            cwd=cwd,
            config=config,
            session=state,
            rater=self.rater,
            checker=self.checker,
            paths=self.paths,
            undo=policy_for(config, self.paths.state_dir) if undo else None,
            contain=self.containment(config.boundary.enabled) if contained else None,
            terminal=terminal,
        )

    def containment(self, enabled: bool) -> Containment | None:
        """:func:`gatesh.boundary.contain.here`, remembered (see ``_containment``)."""
        if enabled not in self._containment:
            self._containment[enabled] = here(enabled)
        return self._containment[enabled]

    def snapshot(
        self, decision: Decision, cwd: str, config: Config, session: str
    ) -> tuple[Decision, str]:
        """The undo snapshot before ``decision``'s command runs (S17): see
        :func:`gatesh.undo.guard.snapshot_before`."""
        from gatesh.undo.guard import snapshot_before

        return snapshot_before(
            decision, cwd=cwd, session=session, config=config, state_dir=self.paths.state_dir
        )

    def health_notice(self) -> str | None:
        """The rater's one-line notice after repeated model failures (S4), once."""
        return self.rater.health_notice() if self.rater is not None else None


class Events:
    """The subscribers (``gatesh watch`` and other subscriptions) and what is published to them."""

    def __init__(self) -> None:
        self.subscribers: set[Conn] = set()

    def publish(self, session: str | None, event: Published) -> None:
        """Send ``event`` (of ``session``; None: of none) to every subscriber, encoded once; a
        subscriber too far behind is disconnected. A subscriber decodes it once
        (:func:`gatesh.events.decode`)."""
        if not self.subscribers:
            return
        line = P.event_line(event.KIND, session, event)
        for conn in list(self.subscribers):
            if conn.closed:
                self.subscribers.discard(conn)
                continue
            if conn.backlog > SUBSCRIBER_BUFFER:
                conn.closed = True
                conn.writer.close()
                continue
            conn.send(line)

    @property
    def watchers(self) -> int:
        """How many watchers (a person, S7) are attached now."""
        return sum(1 for c in self.subscribers if c.is_watcher)


def cleaned(text: str) -> str:
    """Event text: redacted and home-folded (S13, S15), as in the audit log."""
    return clean(text) if text else text


def round_event(r: Round) -> Round:
    """A round of the argument as an event carries it (text fields cleaned)."""
    return replace(
        r,
        command=cleaned(r.command),
        justification=cleaned(r.justification),
        reason=cleaned(r.reason),
        remedy=cleaned(r.remedy),
        suggestion=cleaned(r.suggestion),
    )


# Observations kept for a watcher who attaches later: far more sessions than end unwatched
# between two looks; past it the oldest is dropped (each is in the audit log either way).
UNSEEN_OBSERVATIONS: Final = 100


@dataclass(frozen=True)
class Origin:
    """Who started this daemon, so whose environment its settings come from (S9.7), and what
    ``daemon.env`` added (names only: the values may be keys)."""

    started_by: str
    settings: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @classmethod
    def read(cls, activated: bool, paths: _paths.GatePaths) -> Origin:
        """Where this process came from, with ``daemon.env`` applied to its environment."""
        said = os.environ.pop(_person.STARTED_BY_VAR, "")
        if activated:
            who = "the service manager (socket activation): its environment is the person's"
        elif said:
            who = said
        else:
            who = "a person (gatesh daemon): its environment is the person's"
        values, problems = _person.read_daemon_env(paths.config_dir)
        os.environ.update(values)
        return cls(who, tuple(sorted(values)), tuple(problems))


#: Runs kept waiting for their end report: a client killed outright never reports, so the
#: oldest are forgotten past this many (their decision lines are written; only the end is lost).
MAX_RUNS: Final = 4096


@dataclass(frozen=True)
class Run:
    """An allowed command running inside its boundary, as its end report is checked and written:
    only the process that made the check (``pid``) may report how it ended."""

    pid: int
    session: str
    cwd: str
    surface: str
    command: str
    boundary: str  # the boundary's id
    started: float
    key: str = ""  # the normalised command (gatesh.session.normalised)

    def moved_to(self, pid: int) -> Run:
        """This run, reported by ``pid`` (the client that redeemed a hook's ticket for it)."""
        return Run(
            pid,
            self.session,
            self.cwd,
            self.surface,
            self.command,
            self.boundary,
            time.time(),
            self.key,
        )


class Daemon:
    """The daemon's state, shared by its request handlers. Event-loop owned."""

    def __init__(self, paths: GatePaths) -> None:
        self.paths = paths
        self.loop = asyncio.get_running_loop()
        self.started = time.time()
        self.sessions = Sessions(paths.state_dir)
        self.book = self.sessions.book
        self.registry = procs.GatedRegistry()
        self.conns: set[Conn] = set()
        self.flood = Flood()
        self.events = Events()
        self.executor = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="gatesh-decide")
        self.totals: Counter[str] = Counter()
        self.audit = AuditLog(paths.audit_log)
        self.audit_pipe = AuditPipe(self.audit)
        self.backends = Backends(paths, self.audit)
        self.stopping = asyncio.Event()
        # Decisions run here, each with a hard deadline (see gatesh.daemon.deadline).
        self.decisions = DecisionPool(WORKERS, on_give_up=self._give_up)
        self.observed = ObservationMemory()
        # Session-end observations said while nobody watched: shown to the next watcher (S6).
        self.unseen: deque[Observation] = deque(maxlen=UNSEEN_OBSERVATIONS)
        # A watcher's answer for each escalation a check is waiting on (S7).
        self.waiting: dict[str, asyncio.Future[Ruling]] = {}
        # Who started this daemon and what daemon.env set (gatesh.daemon.server.Origin).
        self.origin: Origin | None = None
        # The person's channel: the credential its clients of our uid bring, or why it is shut.
        self.person_token = ""
        self.person_problem = ""
        self.person_traceable = ""  # why the user's other processes may trace us ("" not)
        # The bounded commands allowed and not yet reported ended (S16), oldest first.
        self.runs: OrderedDict[str, Run] = OrderedDict()
        # Hooks' allowed commands waiting for their harness to run them confined (S16).
        self.tickets = Tickets()
        # Rulesets built ahead for the next bounded command (S14, gatesh.boundary.handoff).
        self.rulesets = Rulesets()

    def _give_up(self, why: str) -> None:
        """Stop the daemon (from any thread): the next client starts a fresh one."""
        print(f"gatesh daemon: restarting: {why}", file=sys.stderr, flush=True)
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self.stopping.set)

    async def off_loop(self, func: Callable[..., T], *args: Any) -> T:
        """``func(*args)`` run in a worker thread (for /proc walks, file reads, model calls)."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, func, *args)

"""Pending escalations (S7) and the session facts that outlive a process: halts, approvable ids.

One :class:`PendingBook` per user holds every escalation a person may rule on and every halted
session, and keeps them in ``STATE/sessions.json``. The daemon and the daemon-less fallback share
this module (and so the file's format and the lifecycle below); neither needs the other.

Lifecycle of a :class:`Pending`, enforced by :meth:`Pending.move` (anything else raises
:class:`IllegalTransition` naming both states)::

    opened as   WAITING    a watcher is asked; the agent's call waits for the answer
                ASKING     the surface asks its own person and sends the answer later
                REFUSED    nobody could be asked: refused at once, approvable later
    WAITING  -> ANSWERED | EXPIRED | WITHDRAWN  (EXPIRED: nobody answered in time, or the last
                                        watcher left; WITHDRAWN: the waiting command was interrupted)
    ASKING   -> ANSWERED | EXPIRED | WITHDRAWN  (EXPIRED: nobody answered in time, or its
                                        :class:`Holder` process exited unanswered)
    REFUSED  -> APPROVED | DENIED       (``gatesh approve|deny ID`` after the refusal)
    EXPIRED  -> APPROVED | DENIED
    APPROVED -> USED                    (the approved command ran once; nothing is left to grant)

Guarantees: a halt is on disk before :meth:`PendingBook.note_halt` returns; the file is replaced
atomically (write, fsync, rename), so a reader sees the old state or the new one, never a mix; a
file that cannot be read is an empty state, never an error.
"""

from __future__ import annotations

import enum
import json
import os
import secrets
import time
from collections.abc import Callable, Container
from dataclasses import dataclass, field
from typing import Final

from gatesh._errors import StateError
from gatesh._types import Decision, Round
from gatesh.events import By
from gatesh.session import SessionState
from gatesh.wire_json import OMIT_NONE, wire_value

__all__ = [
    "PENDING_KEEP_S",
    "PENDING_LIMIT",
    "STATE_FILE",
    "UNANSWERED",
    "BookFile",
    "Holder",
    "IllegalTransition",
    "Pending",
    "PendingBook",
    "PendingKind",
    "PendingState",
    "PendingSummary",
    "new_pending_id",
]

# Refused pending ids are kept this long for `gatesh approve ID` (a person may read the refusal
# hours later); past the limit the oldest are forgotten.
PENDING_KEEP_S: Final = 7 * 24 * 3600
# Past this many records the oldest is forgotten: the file stays small whatever the agent does.
PENDING_LIMIT: Final = 1000
STATE_FILE: Final = "sessions.json"


class PendingState(enum.StrEnum):
    """Where a pending escalation is in its lifecycle (see the module docstring)."""

    WAITING = "waiting"
    ASKING = "asking"
    ANSWERED = "answered"
    REFUSED = "refused"
    EXPIRED = "expired"
    APPROVED = "approved"
    DENIED = "denied"
    USED = "used"
    WITHDRAWN = "withdrawn"  # the command was interrupted (Ctrl-C) while a person was asked


class PendingKind(enum.StrEnum):
    """What a person rules on: an escalation (S7), or a halted command (`run anyway`, S3.7)."""

    ESCALATE = "escalate"
    HALT = "halt"


OPENING: Final = frozenset({PendingState.WAITING, PendingState.ASKING, PendingState.REFUSED})
# A person is still being asked: the record must not be pruned.
OPEN: Final = frozenset({PendingState.WAITING, PendingState.ASKING})
# No person has ruled on it: still asked, or refused or expired unanswered (still approvable). A
# session that ends with one says so in its observation (S6).
UNANSWERED: Final = OPEN | {PendingState.REFUSED, PendingState.EXPIRED}
# Kept on disk: what `gatesh approve ID` may still act on, and approvals not yet used.
_DURABLE: Final = frozenset({PendingState.REFUSED, PendingState.EXPIRED, PendingState.APPROVED})

_NEXT: Final[dict[PendingState, frozenset[PendingState]]] = {
    PendingState.WAITING: frozenset(
        {PendingState.ANSWERED, PendingState.EXPIRED, PendingState.WITHDRAWN}
    ),
    PendingState.ASKING: frozenset(
        {PendingState.ANSWERED, PendingState.EXPIRED, PendingState.WITHDRAWN}
    ),
    PendingState.REFUSED: frozenset({PendingState.APPROVED, PendingState.DENIED}),
    PendingState.EXPIRED: frozenset({PendingState.APPROVED, PendingState.DENIED}),
    PendingState.ANSWERED: frozenset(),
    PendingState.APPROVED: frozenset({PendingState.USED}),
    PendingState.DENIED: frozenset(),
    PendingState.USED: frozenset(),
    PendingState.WITHDRAWN: frozenset(),
}


class IllegalTransition(StateError):
    """A pending escalation was asked to move where its lifecycle does not allow."""


@dataclass(frozen=True)
class Holder:
    """The process an ask at a surface (ASKING) lives with: the harness showing a hook's ``ask``
    in its own prompt (the hook process itself has exited by then), or the client that waits for
    its person's answer (a PTY's gate). When it exits unanswered, nobody can answer any more.

    ``start`` is its start time (clock ticks since boot): a later process that reused the pid is
    not it. ``name`` is its process name, as a person reads it in the expiry.
    """

    pid: int
    start: int
    name: str


@dataclass
class Pending:
    """One escalation a person may rule on. ``key`` is the normalised command an approval runs.

    Invariant: ``decision`` is set for a record opened by this process; a record read back from
    the file has none (a restart keeps only what ``gatesh approve ID`` needs).
    """

    id: str
    session: str
    command: str
    key: str
    cwd: str
    reason: str
    kind: PendingKind = PendingKind.ESCALATE
    state: PendingState = PendingState.REFUSED
    created: float = field(default_factory=time.time)
    answer: str = ""
    by: By = field(default_factory=By)  # who ruled
    decision: Decision | None = None
    surface: str = ""
    pid: int | None = None
    holder: Holder | None = None
    ended: str = ""  # why it stopped waiting without a ruling (EXPIRED), as status shows it

    def move(self, to: PendingState) -> None:
        """Go to ``to``; raises IllegalTransition when the lifecycle forbids it."""
        if to not in _NEXT[self.state]:
            raise IllegalTransition(
                f"escalation {self.id} is {self.state.value}; it cannot become {to.value}"
            )
        self.state = to

    def summary(self, *, key: bool = False) -> PendingSummary:
        """What a person (status, a new watcher) and the book's file read of it; ``key`` too for
        the file."""
        return PendingSummary(
            pending_id=self.id,
            session=self.session,
            command=self.command,
            cwd=self.cwd,
            reason=self.reason,
            kind=self.kind,
            state=self.state,
            created=round(self.created, 3),
            answer=self.answer,
            ended=self.ended,
            surface=self.surface,
            key=self.key if key else None,
        )


@dataclass(frozen=True)
class PendingSummary:
    """A pending record as it is shown and kept, field names as on the wire and in the file."""

    pending_id: str
    session: str
    command: str
    cwd: str
    reason: str
    kind: PendingKind
    state: PendingState
    created: float
    answer: str
    ended: str
    surface: str
    key: str | None = field(default=None, metadata=OMIT_NONE)  # in the file only
    # The whole escalation, as the watchers attached when it was asked saw it (S7): for a new
    # watcher, of a record that has its decision (one opened by this process).
    outcome: str | None = field(default=None, metadata=OMIT_NONE)
    stage: str | None = field(default=None, metadata=OMIT_NONE)
    rating: str | None = field(default=None, metadata=OMIT_NONE)
    remedy: str | None = field(default=None, metadata=OMIT_NONE)
    rounds: tuple[Round, ...] | None = field(default=None, metadata=OMIT_NONE)
    choices: tuple[str, ...] | None = field(default=None, metadata=OMIT_NONE)
    entry: str | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class BookFile:
    """What the book's file holds: the halts (session -> reason), and the records
    ``gatesh approve ID`` may act on."""

    halts: dict[str, str]
    pending: tuple[PendingSummary, ...]


def new_pending_id(taken: Container[str]) -> str:
    """A short id a person can type: 6 lowercase hex digits, unique among ``taken``."""
    while True:
        pid = secrets.token_hex(3)
        if pid not in taken:
            return pid


class PendingBook:
    """Every pending escalation and halt of one user, and the file they are kept in.

    Not thread-safe: one owner (the daemon's event loop, or one in-process call) changes it.
    :meth:`save` writes at once; the daemon's book coalesces writes (:mod:`gatesh.daemon.sessions`).
    """

    def __init__(self, state_dir: str | None) -> None:
        """The book kept in ``state_dir``; with None, one kept in memory only (a dry run)."""
        self.path = os.path.join(state_dir, STATE_FILE) if state_dir is not None else ""
        self.pending: dict[str, Pending] = {}
        self.halts: dict[str, str] = {}
        if self.path:
            self._load()

    # --- the records -----------------------------------------------------------------------

    def open(
        self,
        *,
        session: str,
        command: str,
        key: str,
        cwd: str,
        reason: str,
        kind: PendingKind,
        state: PendingState,
        surface: str = "",
        pid: int | None = None,
        decision: Decision | None = None,
        holder: Holder | None = None,
    ) -> Pending:
        """A new record in one of the opening states (WAITING, ASKING, REFUSED); ``holder`` only
        for ASKING (the process the ask lives with)."""
        if state not in OPENING:
            raise IllegalTransition(f"an escalation cannot be opened as {state.value}")
        p = Pending(
            id=new_pending_id(self.pending),
            session=session,
            command=command,
            key=key,
            cwd=cwd,
            reason=reason,
            kind=kind,
            state=state,
            surface=surface,
            pid=pid,
            decision=decision,
            holder=holder if state is PendingState.ASKING else None,
        )
        self.pending[p.id] = p
        self._prune()
        return p

    def find(self, pending_id: str) -> Pending | None:
        """The record a person typed the id of (case and surrounding blanks ignored)."""
        return self.pending.get(pending_id.strip().lower())

    def consume_approval(self, session: str, key: str) -> None:
        """The approved command ``key`` ran in ``session``: its approval is spent, on disk too."""
        spent = False
        for p in self.pending.values():
            if p.session == session and p.key == key and p.state is PendingState.APPROVED:
                p.move(PendingState.USED)
                spent = True
        if spent:
            self.save()

    def asking(self) -> list[Pending]:
        """The asks at a surface (ASKING), oldest first: usually none or a few of the records."""
        return [p for p in self.pending.values() if p.state is PendingState.ASKING]

    def orphaned(
        self, running: Callable[[Holder], bool], asking: list[Pending] | None = None
    ) -> list[Pending]:
        """The asks at a surface (ASKING) whose holder no longer runs, by ``running``: nobody can
        answer them any more (the caller expires them, :func:`gatesh.finish.expire`). ``asking``:
        :meth:`asking`, when the caller has it already."""
        return [
            p
            for p in (self.asking() if asking is None else asking)
            if p.state is PendingState.ASKING and p.holder is not None and not running(p.holder)
        ]

    def open_count(self, session: str) -> int:
        """How many of ``session``'s escalations still wait for a person."""
        return sum(1 for p in self.pending.values() if p.session == session and p.state in OPEN)

    def _prune(self) -> None:
        now = time.time()
        for pid in [
            k
            for k, v in self.pending.items()
            if now - v.created > PENDING_KEEP_S and v.state not in OPEN
        ]:
            del self.pending[pid]
        while len(self.pending) > PENDING_LIMIT:
            oldest = min(self.pending.values(), key=lambda v: v.created)
            del self.pending[oldest.id]

    # --- sessions ----------------------------------------------------------------------------

    def session_state(self, sid: str) -> SessionState:
        """A fresh state for session ``sid`` with what outlives a process: its halt, and the
        approvals a person gave after a refusal (each still lets its command run once)."""
        state = SessionState(id=sid)
        if sid in self.halts:
            state.halt(self.halts[sid])
        for p in self.pending.values():
            if p.session == sid and p.state is PendingState.APPROVED:
                state.approved_once.add(p.key)
        return state

    def note_halt(self, sid: str, state: SessionState) -> str:
        """Persist ``state``'s halt when it changed; on disk before this returns.

        Returns "" or why the file could not be written.
        """
        want = state.halt_reason if state.halted else None
        if want == self.halts.get(sid):
            return ""
        if want is None:
            self.halts.pop(sid, None)
        else:
            self.halts[sid] = want
        return self.save(now=True)

    # --- the file ------------------------------------------------------------------------------

    def save(self, *, now: bool = False) -> str:
        """Write the book now (``now`` matters only to a book that coalesces writes).

        Returns "" or why it could not be written (the previous file then stays as it was).
        """
        return self.write(self.snapshot())

    def snapshot(self) -> BookFile:
        """What the file holds: the halts, and the records ``gatesh approve ID`` may act on."""
        keep = tuple(p.summary(key=True) for p in self.pending.values() if p.state in _DURABLE)
        return BookFile(dict(self.halts), keep)

    def write(self, data: BookFile) -> str:
        """Replace the file with ``data`` atomically. Returns "" or why it failed."""
        if not self.path:
            return ""
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(json.dumps(wire_value(data)))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return f"{self.path}: {exc.strerror or exc}"
        return ""

    def _load(self) -> None:
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
            self.halts = {str(k): str(v) for k, v in dict(data.get("halts", {})).items()}
            items = [p for p in data.get("pending", []) if isinstance(p, dict)]
        except (OSError, ValueError, TypeError, AttributeError):
            return
        for item in items:
            try:
                p = Pending(
                    id=str(item["pending_id"]),
                    session=str(item["session"]),
                    command=str(item["command"]),
                    key=str(item["key"]),
                    cwd=str(item.get("cwd", "")),
                    reason=str(item.get("reason", "")),
                    kind=PendingKind(item.get("kind", "escalate")),
                    state=PendingState(item["state"]),
                    created=float(item.get("created", time.time())),
                    answer=str(item.get("answer", "")),
                    ended=str(item.get("ended", "")),
                )
            except (KeyError, ValueError, TypeError):
                continue
            self.pending[p.id] = p

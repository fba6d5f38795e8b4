"""The daemon's sessions (S9.3) and its pending escalations (S7), with the little that survives a restart.

Guarantees:

- One :class:`~gatesh.session.SessionState` per session id, created on first use with what the
  state file holds for it (a halt, approvals given after a refusal) and the mandates given for
  every session; a session whose anchor process was replaced (same id, different start time)
  starts afresh.
- Halts and approvable pending ids are kept by a :class:`~gatesh.pending.PendingBook`, whose file
  the daemon-less fallback shares. A halt is on disk before its refusal is sent; changes to
  pending ids alone are coalesced and written off the event loop within :data:`SAVE_DELAY_S`
  (a daemon killed in that window forgets them: ``approve`` then fails, which only refuses more).
  Negotiation counts are not persisted: a restart loses at most one argument's rounds.
- Every mutation happens on the daemon's event loop thread, except deciding, which only reads a
  ``SessionState`` (in a worker thread, with the session's lock held).
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from typing import Final

from gatesh.pending import BookFile, PendingBook
from gatesh.session import SessionState
from gatesh.wire_json import OMIT_NONE

# Pending-id changes within this window are written together, off the event loop.
SAVE_DELAY_S: Final = 0.05
# Mandates given for every session (no session named) kept for sessions started later.
MANDATES_KEPT: Final = 10


@dataclass
class Session:
    """A session as the daemon sees it: the pipeline's state plus bookkeeping."""

    id: str
    state: SessionState
    lock: asyncio.Lock
    anchor_pid: int | None = None
    anchor_start: int | None = None
    surface: str = ""
    # The boundary its agent's PTY shell was confined to when it started ("" none; S16): what
    # the shell runs is judged knowing it is contained, while that shell is seen inside one.
    confined: str = ""
    checks: int = 0
    started: float = field(default_factory=time.time)
    last: float = field(default_factory=time.time)
    totals: dict[str, int] = field(default_factory=dict)
    # When it last ended (a halted session is kept after it ends, so `resume` finds it): it is not
    # ended again until it has had a check since.
    ended: float = 0.0

    def summary(self) -> SessionSummary:
        """The session as a new watcher reads it."""
        return SessionSummary(
            session=self.id,
            surface=self.surface,
            anchor_pid=self.anchor_pid,
            checks=self.checks,
            started=round(self.started, 3),
            last=round(self.last, 3),
            halted=self.state.halted,
            halt_reason=self.state.halt_reason,
            counters=self.state.negotiation.counters(),
            totals=dict(self.totals),
        )


@dataclass(frozen=True)
class SessionSummary:
    """A session as ``status`` and a new watcher read it, field names as on the wire. ``ended``
    (status only): over and not used since, kept so a halted one can be resumed."""

    session: str
    surface: str
    anchor_pid: int | None
    checks: int
    started: float
    last: float
    halted: bool
    halt_reason: str
    counters: dict[str, int]
    totals: dict[str, int]
    ended: bool | None = field(default=None, metadata=OMIT_NONE)


class LoopBook(PendingBook):
    """The daemon's pending book: writes are coalesced and made off the event loop.

    Snapshots are numbered on the loop thread; a write never replaces a newer one.
    """

    def __init__(self, state_dir: str) -> None:
        super().__init__(state_dir)
        self._write_lock = threading.Lock()
        self._seq = 0
        self._written = 0
        self._dirty = False
        self._flush_at: asyncio.TimerHandle | None = None
        self._writing = False

    def save(self, *, now: bool = False) -> str:
        """``now`` (or no running event loop): written before this returns. Otherwise coalesced
        with other changes and written off the loop within SAVE_DELAY_S ("" returned at once)."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if now or loop is None:
            self._dirty = False
            return self._numbered(*self._take())
        self._dirty = True
        if self._flush_at is None and not self._writing:
            self._flush_at = loop.call_later(SAVE_DELAY_S, self._flush, loop)
        return ""

    def flush(self) -> None:
        """Write any coalesced change now (the daemon calls this when it stops)."""
        if self._flush_at is not None:
            self._flush_at.cancel()
            self._flush_at = None
        if self._dirty:
            self._dirty = False
            self._numbered(*self._take())

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        self._flush_at = None
        if not self._dirty:
            return
        self._dirty = False
        self._writing = True
        work = loop.run_in_executor(None, self._numbered, *self._take())
        work.add_done_callback(lambda _: self._flushed(loop))

    def _flushed(self, loop: asyncio.AbstractEventLoop) -> None:
        self._writing = False
        if self._dirty and self._flush_at is None and not loop.is_closed():
            self._flush_at = loop.call_later(SAVE_DELAY_S, self._flush, loop)

    def _take(self) -> tuple[int, BookFile]:
        self._seq += 1
        return self._seq, self.snapshot()

    def _numbered(self, seq: int, data: BookFile) -> str:
        with self._write_lock:
            if seq <= self._written:  # a newer snapshot is already on disk
                return ""
            error = self.write(data)
            if not error:
                self._written = seq
            return error


class Sessions:
    """Every session of one daemon, and its pending book. Not thread-safe: event loop only."""

    def __init__(self, state_dir: str) -> None:
        self.book = LoopBook(state_dir)
        self.sessions: dict[str, Session] = {}
        self.mandates: list[str] = []  # words for every session (mandate with no session)

    def get(
        self, sid: str, *, anchor: tuple[int, int] | None = None, surface: str = ""
    ) -> tuple[Session, bool]:
        """The session ``sid`` (created when new; True in the second place then).

        A session opened without a surface (a mandate given before its first command) takes the
        surface of the first request that names one.
        """
        s = self.sessions.get(sid)
        if s is not None and anchor is not None and s.anchor_start not in (None, anchor[1]):
            s = None  # the anchor pid was reused by another process: a new session
        if s is not None:
            if not s.surface:
                s.surface = surface
            return s, False
        state = self.book.session_state(sid)
        for text in self.mandates:
            state.negotiation.admit_user_message(text, "mandate")
        s = Session(id=sid, state=state, lock=asyncio.Lock(), surface=surface)
        if anchor is not None:
            s.anchor_pid, s.anchor_start = anchor
        self.sessions[sid] = s
        return s, True

    def remember_mandate(self, text: str) -> None:
        """Words given for every session: sessions started later hear them too (the newest kept)."""
        if text in self.mandates:
            self.mandates.remove(text)
        self.mandates.append(text)
        del self.mandates[:-MANDATES_KEPT]

    def note_halt(self, s: Session) -> None:
        """Persist ``s``'s halt state when it changed (on disk before this returns)."""
        self.book.note_halt(s.id, s.state)

    def remove(self, sid: str) -> Session | None:
        return self.sessions.pop(sid, None)

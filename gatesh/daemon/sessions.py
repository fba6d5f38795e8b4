"""The daemon's sessions and pending escalations (S9.3, S7), with the little that survives a restart.

Guarantees:

- One :class:`~gatesh.session.SessionState` per session id, created on first use; a session whose
  anchor process was replaced (same id, different start time) starts afresh.
- Halts and refused pending ids are written to ``STATE/sessions.json`` whenever they change, so a
  restarted daemon (or the in-process fallback) still refuses a halted session and still honours
  ``gatesh approve ID`` for an escalation refused before the restart. A halt is on disk before
  :meth:`Sessions.note_halt` returns (before the halted command's refusal is sent); changes to
  pending ids alone are coalesced and written off the event loop within :data:`SAVE_DELAY_S` (a
  daemon killed in that window forgets them: ``approve`` then fails, which only refuses more).
  Negotiation counts are not persisted: a restart loses at most one argument's rounds.
- Every mutation happens on the daemon's event loop thread, except the pipeline's own changes to a
  ``SessionState``, which run in a worker thread while the session's lock is held.
"""

from __future__ import annotations

import asyncio
import enum
import json
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Final

from gatesh._types import Decision, Round
from gatesh.session import SessionState

# Refused pending ids are kept this long for `gatesh approve ID` (a person may read the refusal
# hours later); past the limit the oldest are forgotten.
PENDING_KEEP_S: Final = 7 * 24 * 3600
PENDING_LIMIT: Final = 1000
STATE_FILE: Final = "sessions.json"
# Pending-id changes within this window are written together, off the event loop.
SAVE_DELAY_S: Final = 0.05


class PendingState(enum.StrEnum):
    """Lifecycle: WAITING → ANSWERED | EXPIRED | REFUSED; EXPIRED/REFUSED → APPROVED | DENIED;
    APPROVED → USED once the approved command has run (so a restart cannot grant it again)."""

    WAITING = "waiting"  # a person is being asked; the agent waits
    ASKING = "asking"  # the surface asks its own person and will send `answer`
    ANSWERED = "answered"
    REFUSED = "refused"  # nobody was watching: refused at once, approvable later
    EXPIRED = "expired"  # nobody answered in time: refused, approvable later
    APPROVED = "approved"  # approved after the refusal: the command may run once on retry
    DENIED = "denied"
    USED = "used"  # the approved command ran once; nothing is left to grant


_NEXT: Final = {
    PendingState.WAITING: {PendingState.ANSWERED, PendingState.EXPIRED},
    PendingState.ASKING: {PendingState.ANSWERED, PendingState.EXPIRED},
    PendingState.REFUSED: {PendingState.APPROVED, PendingState.DENIED},
    PendingState.EXPIRED: {PendingState.APPROVED, PendingState.DENIED},
    PendingState.ANSWERED: set(),
    PendingState.APPROVED: {PendingState.USED},
    PendingState.DENIED: set(),
    PendingState.USED: set(),
}


class IllegalTransition(Exception):
    """A pending escalation was asked to move where its lifecycle does not allow."""


@dataclass
class Pending:
    """One escalation a person may rule on. ``key`` is the normalised command an approval runs."""

    id: str
    session: str
    command: str
    key: str
    cwd: str
    reason: str
    kind: str = "escalate"  # escalate | halt
    state: PendingState = PendingState.WAITING
    created: float = field(default_factory=time.time)
    answer: str = ""
    by: dict[str, Any] = field(default_factory=dict)
    decision: Decision | None = None
    surface: str = ""
    pid: int | None = None
    future: asyncio.Future[str] | None = None

    def move(self, to: PendingState) -> None:
        if to not in _NEXT[self.state]:
            raise IllegalTransition(
                f"escalation {self.id} is {self.state.value}; it cannot become {to.value}"
            )
        self.state = to

    def summary(self) -> dict[str, Any]:
        return {
            "pending_id": self.id,
            "session": self.session,
            "command": self.command,
            "cwd": self.cwd,
            "reason": self.reason,
            "kind": self.kind,
            "state": self.state.value,
            "created": round(self.created, 3),
            "answer": self.answer,
        }


@dataclass
class Session:
    """A session as the daemon sees it: the pipeline's state plus bookkeeping."""

    id: str
    state: SessionState
    lock: asyncio.Lock
    anchor_pid: int | None = None
    anchor_start: int | None = None
    surface: str = ""
    checks: int = 0
    started: float = field(default_factory=time.time)
    last: float = field(default_factory=time.time)
    totals: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {
            "session": self.id,
            "surface": self.surface,
            "anchor_pid": self.anchor_pid,
            "checks": self.checks,
            "started": round(self.started, 3),
            "last": round(self.last, 3),
            "halted": self.state.halted,
            "halt_reason": self.state.halt_reason,
            "counters": self.state.negotiation.counters(),
            "totals": dict(self.totals),
        }


def new_pending_id(taken: set[str] | dict[str, Any]) -> str:
    """A short id a person can type: 6 lowercase hex digits, unique among ``taken``."""
    while True:
        pid = secrets.token_hex(3)
        if pid not in taken:
            return pid


class Sessions:
    """Every session and pending escalation of one daemon. Not thread-safe: event loop only."""

    def __init__(self, state_dir: str) -> None:
        self.state_path = os.path.join(state_dir, STATE_FILE)
        self.sessions: dict[str, Session] = {}
        self.pending: dict[str, Pending] = {}
        self.mandates: list[str] = []  # words for every session (mandate with no session)
        self._halts: dict[str, str] = {}
        # Saving: snapshots are numbered; a write never replaces a newer one (see save()).
        self._write_lock = threading.Lock()
        self._seq = 0
        self._written = 0
        self._dirty = False
        self._flush_at: asyncio.TimerHandle | None = None
        self._writing = False
        self._load()

    # --- sessions --------------------------------------------------------------------------

    def get(self, sid: str, *, anchor: tuple[int, int] | None = None, surface: str = "") -> tuple[Session, bool]:
        """The session ``sid`` (created when new; True in the second place then)."""
        s = self.sessions.get(sid)
        if s is not None and anchor is not None and s.anchor_start not in (None, anchor[1]):
            s = None  # the anchor pid was reused by another process: a new session
        if s is not None:
            return s, False
        state = SessionState(id=sid)
        if sid in self._halts:
            state.halt(self._halts[sid])
        for text in self.mandates:
            state.negotiation.admit_user_message(text, "mandate")
        s = Session(id=sid, state=state, lock=asyncio.Lock(), surface=surface)
        if anchor is not None:
            s.anchor_pid, s.anchor_start = anchor
        self.sessions[sid] = s
        return s, True

    def note_halt(self, s: Session) -> None:
        """Persist ``s``'s halt state when it changed."""
        want = s.state.halt_reason if s.state.halted else None
        have = self._halts.get(s.id)
        if want == have:
            return
        if want is None:
            self._halts.pop(s.id, None)
        else:
            self._halts[s.id] = want
        self.save(now=True)

    def remove(self, sid: str) -> Session | None:
        return self.sessions.pop(sid, None)

    # --- pending escalations ---------------------------------------------------------------------

    def add_pending(self, **kw: Any) -> Pending:
        p = Pending(id=new_pending_id(self.pending), **kw)
        self.pending[p.id] = p
        self._prune()
        return p

    def settle(self, p: Pending, to: PendingState) -> None:
        """Move ``p`` and persist when it became approvable or was ruled on."""
        p.move(to)
        self.save()

    def _prune(self) -> None:
        now = time.time()
        for pid in [k for k, v in self.pending.items() if now - v.created > PENDING_KEEP_S
                    and v.state not in (PendingState.WAITING, PendingState.ASKING)]:
            del self.pending[pid]
        while len(self.pending) > PENDING_LIMIT:
            oldest = min(self.pending.values(), key=lambda v: v.created)
            del self.pending[oldest.id]

    # --- persistence ---------------------------------------------------------------------------

    def save(self, *, now: bool = False) -> None:
        """Persist halts and approvable ids atomically (best effort: a failure is not fatal).

        ``now`` (or no running event loop): written before this returns. Otherwise the change is
        coalesced with others and written off the loop within SAVE_DELAY_S.
        """
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if now or loop is None:
            self._dirty = False
            self._write(*self._snapshot())
            return
        self._dirty = True
        if self._flush_at is None and not self._writing:
            self._flush_at = loop.call_later(SAVE_DELAY_S, self._flush, loop)

    def flush(self) -> None:
        """Write any coalesced change now (the daemon calls this when it stops)."""
        if self._flush_at is not None:
            self._flush_at.cancel()
            self._flush_at = None
        if self._dirty:
            self._dirty = False
            self._write(*self._snapshot())

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        self._flush_at = None
        if not self._dirty:
            return
        self._dirty = False
        self._writing = True
        work = loop.run_in_executor(None, self._write, *self._snapshot())
        work.add_done_callback(lambda _: self._flushed(loop))

    def _flushed(self, loop: asyncio.AbstractEventLoop) -> None:
        self._writing = False
        if self._dirty and self._flush_at is None and not loop.is_closed():
            self._flush_at = loop.call_later(SAVE_DELAY_S, self._flush, loop)

    def _snapshot(self) -> tuple[int, dict[str, Any]]:
        """The state to write, numbered (taken on the loop thread, so it is consistent)."""
        keep = [
            p.summary() | {"key": p.key}
            for p in self.pending.values()
            if p.state in (PendingState.REFUSED, PendingState.EXPIRED, PendingState.APPROVED)
        ]
        self._seq += 1
        return self._seq, {"halts": dict(self._halts), "pending": keep}

    def _write(self, seq: int, data: dict[str, Any]) -> None:
        text = json.dumps(data)
        tmp = f"{self.state_path}.{os.getpid()}.tmp"
        with self._write_lock:
            if seq <= self._written:  # a newer snapshot is already on disk
                return
            try:
                os.makedirs(os.path.dirname(self.state_path), mode=0o700, exist_ok=True)
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w") as f:
                    f.write(text)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, self.state_path)
                self._written = seq
            except OSError:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def consume_approval(self, session: str, key: str) -> None:
        """The approved command ``key`` ran in ``session``: its approval is spent, on disk too."""
        spent = False
        for p in self.pending.values():
            if p.session == session and p.key == key and p.state is PendingState.APPROVED:
                p.move(PendingState.USED)
                spent = True
        if spent:
            self.save()

    def _load(self) -> None:
        data = load_state(self.state_path)
        self._halts = data["halts"]
        for item in data["pending"]:
            try:
                p = Pending(id=item["pending_id"], session=item["session"], command=item["command"],
                            key=item["key"], cwd=item.get("cwd", ""), reason=item.get("reason", ""),
                            kind=item.get("kind", "escalate"), state=PendingState(item["state"]),
                            created=float(item.get("created", time.time())))
            except (KeyError, ValueError, TypeError):
                continue
            self.pending[p.id] = p
        # An approval given before the restart still lets the command run once.
        for p in self.pending.values():
            if p.state is PendingState.APPROVED:
                s, _ = self.get(p.session)
                s.state.approved_once.add(p.key)


def load_state(path: str) -> dict[str, Any]:
    """``sessions.json`` as ``{"halts": {id: reason}, "pending": [...]}``; empty when absent or bad."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        halts = {str(k): str(v) for k, v in dict(data.get("halts", {})).items()}
        pending = [p for p in data.get("pending", []) if isinstance(p, dict)]
        return {"halts": halts, "pending": pending}
    except (OSError, ValueError, TypeError, AttributeError):
        return {"halts": {}, "pending": []}


def round_dict(r: Round) -> dict[str, Any]:
    return {
        "command": r.command,
        "justification": r.justification,
        "outcome": r.outcome.value,
        "reason": r.reason,
        "remedy": r.remedy,
        "passed": r.passed,
        "suggestion": r.suggestion,
    }

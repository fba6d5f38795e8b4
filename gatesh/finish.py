"""One place finishes a decision (S7, S13): every surface decides with ``pipeline.decide`` and
finishes here, so the daemon, the daemon-less fallback, the hook adapters, ``explain`` and ``eval``
record and refuse alike.

``decide`` is pure: it returns a :class:`~gatesh._types.Decision` carrying the session change it
implies. :func:`finish` applies that change and then everything a decision still needs before a
command may run, in this order:

1. The session change (approvals and `run anyway` spent, the argument's rounds, a halt — a halt is
   on disk before the refusal is sent).
2. An escalation or a halt opens a pending record in the state :class:`Reach` implies: nobody to
   ask refuses at once with the no-person message (S7); the surface's own person is answered with
   the escalation block; a watcher is asked and the caller waits (then :func:`gatesh.ruling.conclude`). A dry run
   opens nothing.
3. The audit line, written before an allow is returned; when it cannot be written the command is
   refused whatever was decided.
4. An allowed command that used a person's approval spends its pending record.

:func:`decide_and_finish` is the one path every surface takes from a command to this finish. A
person's ruling on what was finished here is :mod:`gatesh.ruling`.
"""

from __future__ import annotations

import enum
import re
import secrets
from collections.abc import Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

from gatesh import messages
from gatesh._errors import EXIT_OK, EXIT_REFUSED, ConfigError
from gatesh._types import Action, Decision, Outcome, Stage
from gatesh.audit import AuditError, record_for
from gatesh.audit_record import AuditRecord, DecisionRecord, RulingRecord
from gatesh.events import By
from gatesh.pending import (
    Holder,
    Pending,
    PendingBook,
    PendingKind,
    PendingState,
)
from gatesh.redact import redact
from gatesh.session import SessionState, normalised
from gatesh.undecided import decide_without_config, failed_decision

if TYPE_CHECKING:
    from gatesh.boundary.compute import Boundary
    from gatesh.config import Config

__all__ = [
    "ALLOWING",
    "NOBODY_WATCHING",
    "Answer",
    "AuditSink",
    "DryRun",
    "Finished",
    "Reach",
    "Ruling",
    "Surface",
    "Where",
    "choices",
    "decide_and_finish",
    "dry_run",
    "entry_pattern",
    "finish",
    "now",
    "offered",
    "record",
    "refuse_unasked",
]


class Reach(enum.StrEnum):
    """Who can be asked about an escalation or a halt now (S7)."""

    NOBODY = "nobody"  # no watcher, and the surface cannot ask: refused at once
    SURFACE = "surface"  # the surface asks its own person (a hook's `ask`, a PTY run by a person)
    WATCHER = "watcher"  # a `gatesh watch` is attached: the agent's call waits for its answer
    DRY_RUN = "dry-run"  # explain, eval: nothing is opened, nothing runs; the decision stands


class Answer(enum.StrEnum):
    """What a person may answer (S7; `run anyway`, typed in full, only for a halt, S3.7)."""

    ONCE = "once"
    SESSION = "session"
    ALWAYS = "always"
    NO = "no"
    DENY_ALWAYS = "deny always"
    RUN_ANYWAY = "run anyway"


ALLOWING: Final = frozenset({Answer.ONCE, Answer.SESSION, Answer.ALWAYS, Answer.RUN_ANYWAY})
# The answer word an audit line carries when nobody could be asked (S7).
NOBODY_WATCHING: Final = "nobody-watching"
_ESCALATION_CHOICES: Final = (
    Answer.ONCE,
    Answer.SESSION,
    Answer.ALWAYS,
    Answer.NO,
    Answer.DENY_ALWAYS,
)
# A catastrophic command is approved one run at a time: the target may differ next time.
_CATASTROPHIC_CHOICES: Final = (Answer.ONCE, Answer.NO, Answer.DENY_ALWAYS)
_HALT_CHOICES: Final = (Answer.RUN_ANYWAY, Answer.NO)


# A widened boundary is one run's (S16): nothing else to remember.
_WIDEN_CHOICES: Final = (Answer.ONCE, Answer.NO)


def choices(decision: Decision) -> tuple[Answer, ...]:
    """The answers an escalation prompt offers for ``decision`` (S7)."""
    if decision.stage is Stage.BOUNDARY:
        return _WIDEN_CHOICES
    if decision.outcome is Outcome.CATASTROPHIC:
        return _CATASTROPHIC_CHOICES
    return _ESCALATION_CHOICES


def offered(p: Pending) -> tuple[Answer, ...]:
    """The answers ``answer`` accepts for ``p``: a halt takes only `run anyway` or no."""
    if p.kind is PendingKind.HALT:
        return _HALT_CHOICES
    return choices(p.decision) if p.decision is not None else _CATASTROPHIC_CHOICES


def entry_pattern(decision: Decision) -> str:
    """The exact list pattern for this command (as the lists compare it, S3.6), or "" when the
    command holds a secret (redaction changes it): a secret is never written into a config file."""
    text = re.sub(r"\s+#\s*why:.*\Z", "", decision.facts.text, flags=re.S | re.I)
    text = " ".join(text.split())
    return text if redact(text) == text else ""


@dataclass(frozen=True)
class Ruling:
    """A person's answer, with their note and who they are (uid, pid, role of the connection)."""

    answer: Answer
    note: str = ""
    by: By = field(default_factory=By)


@dataclass(frozen=True)
class Where:
    """Where a decision is finished, as its audit line names it."""

    session: str
    pid: int | None
    cwd: str
    surface: str
    note: str = ""  # why this surface decided (the in-process gate says so)
    holder: Holder | None = None  # what an ask at this surface lives with (see pending.Holder)
    # The boundary the command runs in when it is allowed (S16); None: it runs in none.
    boundary: Boundary | None = None


class AuditSink(Protocol):
    """Takes one audit record; raises AuditError when it could not be kept."""

    def append(self, record: AuditRecord) -> None: ...


class DryRun:
    """The audit sink of ``explain`` and ``eval``: the lines a real surface would write, kept."""

    def __init__(self) -> None:
        self.records: list[AuditRecord] = []

    def append(self, record: AuditRecord) -> None:
        self.records.append(record)


@dataclass(frozen=True)
class Finished:
    """A decision finished: what the agent is told and what was recorded.

    Invariant: ``exit_code`` is 0 exactly when ``action`` is ALLOW. ``record`` is the audit line
    written, None only while a watcher is being asked (``waiting``); then the transport waits for
    the ruling and calls :func:`gatesh.ruling.conclude`. ``rerun``: a watcher answered `run anyway`; the
    transport decides the command again inside :func:`gatesh.ruling.running_anyway` and finishes that.
    """

    decision: Decision
    action: Action
    message: str
    pending_id: str = ""
    answer: str = ""
    notice: str = ""
    record: DecisionRecord | RulingRecord | None = None
    pending: Pending | None = None
    audit_error: str = ""
    rerun: bool = False
    boundary: Boundary | None = None  # the boundary an allowed command runs in (S16)
    run: str = ""  # names this run of an allowed, bounded command in its audit lines

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.action is Action.ALLOW else EXIT_REFUSED

    @property
    def waiting(self) -> bool:
        return self.record is None and self.pending is not None

    @property
    def undo_line(self) -> str:
        """The line that ends the agent's output (S17) when the command runs because the snapshot
        taken before it holds what it loses; "" otherwise."""
        d = self.decision
        if self.action is Action.ALLOW and d.snapshot and d.undo:
            return messages.undo_line(d.snapshot)
        return ""


# --- the one path to a finished decision ---------------------------------------------------------

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Surface(Protocol[T_co]):
    """What one surface brings to :func:`decide_and_finish`: how it reads its configuration, keeps its session's
    other commands out, decides (its backends, its snapshot and boundary) and finishes."""

    def config(self) -> Config:
        """The effective configuration; raises ConfigError when it is invalid."""
        ...

    def hold(self) -> AbstractAsyncContextManager[object]:
        """Held while the command is decided and finished (the daemon's session lock)."""
        ...

    async def decide(self, config: Config) -> Decision:
        """The pipeline's decision under ``config``."""
        ...

    async def finish(self, decision: Decision, config: Config | None) -> T_co:
        """``decision`` finished (:func:`finish` or :func:`dry_run`); ``config`` None: it was
        decided without one (the configuration is invalid)."""
        ...


async def decide_and_finish(
    command: str, cwd: str, surface: Surface[T], *, cannot_run: str = ""
) -> T:
    """The one path from a command to its finished decision, which every surface takes (the
    daemon, the in-process gate, ``explain`` and ``eval``): the configuration, or the refusal of an
    invalid one (S12); a command its client cannot run (``cannot_run`` says why) refused undecided
    and audited; otherwise the pipeline's decision; each then finished by the surface.

    It lives here, beside :func:`finish`, not in the pipeline: the pipeline is pure, and this path
    ends in finishing, which writes. It is a coroutine because the daemon decides off its event
    loop; a surface that decides in its own thread runs it with :func:`now`.
    """
    try:
        config = surface.config()
    except ConfigError as exc:
        return await surface.finish(decide_without_config(command, cwd=cwd, error=str(exc)), None)
    if cannot_run:
        reason, message = f"cannot run: {cannot_run}", messages.cannot_run(command, cannot_run)
        return await surface.finish(failed_decision(command, reason, message), config)
    async with surface.hold():
        return await surface.finish(await surface.decide(config), config)


def now(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to its end here, for a surface whose steps never wait (it decides in its
    own thread): no event loop is needed. RuntimeError if a step does wait."""
    try:
        coroutine.send(None)
    except StopIteration as end:
        result: T = end.value
        return result
    coroutine.close()
    raise RuntimeError("a surface that decides in its own thread waited")


# --- finishing a decision ---------------------------------------------------------------------


def finish(
    decision: Decision,
    *,
    state: SessionState,
    reach: Reach,
    where: Where,
    book: PendingBook,
    audit: AuditSink,
    pending_id: str = "",
    answer: str = "",
) -> Finished:
    """Apply ``decision`` to its session and record it (the steps of the module docstring).

    ``pending_id`` and ``answer`` carry a person's ruling into the line of a command decided again
    after it (`run anyway`). Raises nothing the caller must handle: an audit failure is a refusal.
    """
    # 1. The session change decide computed (it changed nothing itself).
    state.apply(decision.change)
    if decision.change.halt:
        book.note_halt(where.session, state)
    # 2. A person decides, or nobody can.
    if reach is not Reach.DRY_RUN:
        if decision.action is Action.ESCALATE:
            return _escalate(decision, state, reach, where, book, audit)
        if decision.action is Action.HALT:
            return _halt(decision, reach, where, book, audit)
    # 3–4. The audit line; an allow that used an approval spends it.
    return record(
        decision,
        decision.action,
        decision.message,
        where,
        book,
        audit,
        pending_id=pending_id,
        answer=answer,
        notice=decision.notice,
    )


def dry_run(
    decision: Decision, *, state: SessionState, cwd: str, surface: str = "explain"
) -> Finished:
    """Finish ``decision`` as ``explain`` and ``eval`` do: the session change applied to ``state``,
    nothing opened, nothing written; ``record`` is the audit line a real surface would write."""
    where = Where(state.id, None, cwd, surface)
    return finish(
        decision,
        state=state,
        reach=Reach.DRY_RUN,
        where=where,
        book=PendingBook(None),
        audit=DryRun(),
    )


_OPENS: Final = {
    Reach.NOBODY: PendingState.REFUSED,
    Reach.SURFACE: PendingState.ASKING,
    Reach.WATCHER: PendingState.WAITING,
}


def _open(
    decision: Decision,
    kind: PendingKind,
    reason: str,
    reach: Reach,
    where: Where,
    book: PendingBook,
) -> Pending:
    return book.open(
        session=where.session,
        command=decision.facts.text,
        key=normalised(decision.facts),
        cwd=where.cwd,
        reason=reason,
        kind=kind,
        state=_OPENS[reach],
        surface=where.surface,
        pid=where.pid,
        decision=decision,
        holder=where.holder,
    )


def _escalate(
    decision: Decision,
    state: SessionState,
    reach: Reach,
    where: Where,
    book: PendingBook,
    audit: AuditSink,
) -> Finished:
    why = decision.to_person_reason or decision.reason
    p = _open(decision, PendingKind.ESCALATE, why, reach, where, book)
    if reach is Reach.WATCHER:
        # The argument stays until the person has ruled (S7): cleared by conclude(), not here.
        return Finished(decision, Action.ESCALATE, messages.waiting(), pending_id=p.id, pending=p)
    if reach is Reach.SURFACE:
        # Not a person reached yet: an `ask` nobody answers (a headless harness) must not refill
        # the bounds (S11.4). The person is reached when they answer (rule()).
        return record(
            decision,
            Action.ESCALATE,
            messages.escalation_block(decision),
            where,
            book,
            audit,
            pending_id=p.id,
            pending=p,
        )
    return refuse_unasked(decision, p, where, book, audit)


def refuse_unasked(
    decision: Decision, p: Pending, where: Where, book: PendingBook, audit: AuditSink
) -> Finished:
    """The no-person refusal (S7), with the id `gatesh approve` takes — when it could be kept
    (also when a person's wait ends unanswered, :mod:`gatesh.ruling`)."""
    unsaved = book.save()
    message = messages.nobody_watching(decision, "" if unsaved else p.id)
    note = where.note + (f"; the pending id could not be kept ({unsaved})" if unsaved else "")
    where = Where(
        where.session, where.pid, where.cwd, where.surface, note.lstrip("; "), where.holder
    )
    return record(
        decision,
        Action.REFUSE,
        message,
        where,
        book,
        audit,
        pending_id=p.id,
        answer=NOBODY_WATCHING,
    )


def _halt(
    decision: Decision, reach: Reach, where: Where, book: PendingBook, audit: AuditSink
) -> Finished:
    """A halt (S3.7) offers only `run anyway`: a watcher is asked now; the surface's own person
    answers later; with nobody, `gatesh approve ID` may still let the agent's retry run once."""
    p = _open(decision, PendingKind.HALT, decision.reason, reach, where, book)
    if reach is Reach.WATCHER:
        return Finished(decision, Action.HALT, messages.waiting(), pending_id=p.id, pending=p)
    if reach is Reach.NOBODY:
        book.save()
        return record(decision, Action.HALT, decision.message, where, book, audit, pending_id=p.id)
    return record(
        decision, Action.HALT, decision.message, where, book, audit, pending_id=p.id, pending=p
    )


def record(
    decision: Decision,
    action: Action,
    message: str,
    where: Where,
    book: PendingBook,
    audit: AuditSink,
    *,
    pending_id: str = "",
    answer: str = "",
    notice: str = "",
    pending: Pending | None = None,
) -> Finished:
    """Steps 3–4: the audit line (a failure refuses), then an approval spent (also the line of a
    person's ruling, :mod:`gatesh.ruling`)."""
    bounded = action is Action.ALLOW and where.boundary is not None
    run = secrets.token_hex(8) if bounded else ""
    rec = record_for(
        decision,
        session=where.session,
        pid=where.pid,
        cwd=where.cwd,
        surface=where.surface,
        answer=answer,
        pending_id=pending_id,
        action=action,
        message_reason=where.note,
        boundary=where.boundary if bounded else None,
        run=run,
    )
    try:
        audit.append(rec)
    except AuditError as exc:
        return Finished(
            decision,
            Action.REFUSE,
            messages.audit_failed(str(exc)),
            pending_id=pending_id,
            answer=answer,
            record=rec,
            pending=pending,
            audit_error=str(exc),
        )
    if action is Action.ALLOW and decision.stage is Stage.APPROVED_ID:
        book.consume_approval(where.session, normalised(decision.facts))
    return Finished(
        decision,
        action,
        message,
        pending_id=pending_id,
        answer=answer,
        notice=notice if action is Action.ALLOW else "",
        record=rec,
        pending=pending,
        boundary=where.boundary if run else None,
        run=run,
    )

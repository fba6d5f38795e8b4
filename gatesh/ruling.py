"""A person's ruling on a pending record (S7, S3.7): ``answer``, ``approve``, ``deny``, a watcher's
wait ended with or without one, an ask nobody can answer any more, a waiting command withdrawn.

:func:`rule` records a ruling: first answer wins, and the grant it makes is the one the record's
kind allows. :func:`conclude` finishes the check that waited for it; :func:`expire_ask` ends an ask
at a surface nobody can answer any more (its harness exited); :func:`withdraw` ends the wait of a
command that was interrupted. Every one writes its audit line through
:func:`gatesh.finish.record`, as a decision's own line is written.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from gatesh import messages
from gatesh._errors import StateError
from gatesh._types import Action, Decision, Outcome
from gatesh.audit import AuditError, clean, fold_home
from gatesh.audit_record import RulingAction, RulingRecord, stamp
from gatesh.finish import (
    ALLOWING,
    Answer,
    AuditSink,
    Finished,
    Ruling,
    Where,
    record,
    refuse_unasked,
)
from gatesh.pending import (
    IllegalTransition,
    Pending,
    PendingBook,
    PendingKind,
    PendingState,
)
from gatesh.session import SessionState

__all__ = [
    "WITHDRAWN",
    "AlreadyRuled",
    "Ruled",
    "conclude",
    "expire_ask",
    "rule",
    "running_anyway",
    "withdraw",
]


@dataclass(frozen=True)
class Ruled:
    """What a ruling did: woke a waiting check (``wake``), finished an asking one (``finished``),
    or settled a refused one for the agent's retry (``text`` says so)."""

    pending: Pending
    wake: bool = False
    finished: Finished | None = None
    text: str = ""


class AlreadyRuled(StateError):
    """A ruling on a pending record that is not open to one (answered, used, …)."""


# --- a person's ruling ------------------------------------------------------------------------


def conclude(
    p: Pending,
    ruling: Ruling | None,
    *,
    state: SessionState,
    where: Where,
    book: PendingBook,
    audit: AuditSink,
) -> Finished:
    """End the wait of a check whose person was a watcher: ``ruling`` is the answer :func:`rule`
    recorded, or None when nobody answered in time (the record expires: refused, approvable later).
    """
    decision = _decision_of(p)
    if ruling is not None and p.kind is PendingKind.ESCALATE:
        state.negotiation.person_reached()  # the person has ruled: the argument is over (S6, S7)
    if ruling is None:
        p.move(PendingState.EXPIRED)
        if p.kind is PendingKind.ESCALATE:
            return refuse_unasked(decision, p, where, book, audit)
        book.save()
        return record(decision, Action.HALT, decision.message, where, book, audit, pending_id=p.id)
    if p.kind is PendingKind.HALT:
        # The halt keeps its own line; on `run anyway` the transport decides the command again.
        done = record(
            decision,
            Action.HALT,
            decision.message,
            where,
            book,
            audit,
            pending_id=p.id,
            answer=ruling.answer.value,
        )
        rerun = ruling.answer is Answer.RUN_ANYWAY and not done.audit_error
        return Finished(
            decision,
            done.action,
            done.message,
            pending_id=p.id,
            answer=ruling.answer.value,
            record=done.record,
            audit_error=done.audit_error,
            rerun=rerun,
        )
    if _allows(p, ruling):
        _grant_session(p, ruling, state)
        return record(
            decision,
            Action.ALLOW,
            "",
            where,
            book,
            audit,
            pending_id=p.id,
            answer=ruling.answer.value,
        )
    return record(
        decision,
        Action.REJECT,
        messages.rejected_by_person(decision.facts.text, ruling.note),
        where,
        book,
        audit,
        pending_id=p.id,
        answer=ruling.answer.value,
    )


def expire_ask(
    p: Pending, *, where: Where, book: PendingBook, audit: AuditSink, why: str = ""
) -> str:
    """End a surface's own ask (ASKING: a harness prompt, a person's terminal) that nobody
    answered within the escalation timeout, or — ``why`` says so — that nobody can answer any more
    (the harness showing it exited). It expires: refused, kept so `gatesh approve ID` may still let
    the agent's retry run once (S7), no longer waiting in front of anything a watcher is asked.

    Its own audit line: action ``expired``, stage ``person``, ``reason`` ``why`` (when given).
    Returns "" or why that line could not be written (the expiry stands: it only refuses more).
    Raises IllegalTransition for any other state: a WAITING record's check is waiting and ends it
    itself (:func:`conclude`).
    """
    if p.state is not PendingState.ASKING:
        raise IllegalTransition(
            f"escalation {p.id} is {p.state.value}; only an ask at a surface "
            "expires on its own (a waiting check concludes it)"
        )
    p.move(PendingState.EXPIRED)
    p.ended = why
    book.save()
    return _append(audit, _ruling_record(p, where, RulingAction.EXPIRED, why))


# The answer word of the audit line of an escalation withdrawn by its own command (S10).
WITHDRAWN: Final = "withdrawn"


def withdraw(p: Pending, *, where: Where, book: PendingBook, audit: AuditSink) -> Finished:
    """The command waiting for a person on ``p`` was interrupted (Ctrl-C, S10): the escalation is
    withdrawn — nobody can rule on it any more — and its audit line says so. Nothing ran, and no
    person was reached, so the argument stands."""
    decision = _decision_of(p)
    p.move(PendingState.WITHDRAWN)
    book.save()
    return record(
        decision,
        Action.REFUSE,
        messages.withdrawn(),
        where,
        book,
        audit,
        pending_id=p.id,
        answer=WITHDRAWN,
    )


@contextlib.contextmanager
def running_anyway(state: SessionState, p: Pending) -> Iterator[None]:
    """A watcher's `run anyway`: the halted command may run once while this block decides it
    again; nothing is remembered afterwards, whether it ran or not (S3.7)."""
    state.run_anyway.add(p.key)
    try:
        yield
    finally:
        state.run_anyway.discard(p.key)


def rule(
    p: Pending,
    ruling: Ruling,
    *,
    state: SessionState | None,
    where: Where,
    book: PendingBook,
    audit: AuditSink,
) -> Ruled:
    """A person's ruling on ``p``; the first one wins (later ones raise AlreadyRuled).

    - WAITING: recorded; the waiting check is woken and concludes (``wake``).
    - ASKING: the surface's person answered; the session's own state (``state``) gets the grant
      and the surface sends the check again, which runs once.
    - REFUSED or EXPIRED: approved for the agent's retry (once), or denied.
    The ruling has its own audit line except when a waiting check writes it.
    """
    if p.state is PendingState.WAITING:
        p.move(PendingState.ANSWERED)
        p.answer, p.by = ruling.answer.value, ruling.by
        return Ruled(p, wake=True)
    if p.state is PendingState.ASKING:
        p.move(PendingState.ANSWERED)
        p.answer, p.by = ruling.answer.value, ruling.by
        decision = _decision_of(p)
        allowed = _allows(p, ruling)
        if state is not None:
            state.negotiation.person_reached()  # the person answered (S6)
            if allowed:
                _grant_retry(p, state)
                _grant_session(p, ruling, state)
        rec = _ruling_record(p, where, RulingAction.APPROVED if allowed else RulingAction.DENIED)
        error = _append(audit, rec)
        if error:
            done = Finished(
                decision,
                Action.REFUSE,
                messages.audit_failed(error),
                pending_id=p.id,
                answer=p.answer,
                record=rec,
                audit_error=error,
            )
        elif allowed:
            done = Finished(
                decision, Action.ALLOW, "", pending_id=p.id, answer=p.answer, record=rec
            )
        else:
            done = Finished(
                decision,
                Action.REJECT,
                messages.rejected_by_person(p.command, ruling.note),
                pending_id=p.id,
                answer=p.answer,
                record=rec,
            )
        return Ruled(p, finished=done)
    if p.state in (PendingState.REFUSED, PendingState.EXPIRED):
        allowed = ruling.answer in ALLOWING
        p.move(PendingState.APPROVED if allowed else PendingState.DENIED)
        p.answer, p.by = ruling.answer.value, ruling.by
        book.save()
        if state is not None:
            state.negotiation.person_reached()  # a person ruled on this session's escalation
            if allowed:
                _grant_retry(p, state)
        ruled = RulingAction.APPROVED if allowed else RulingAction.DENIED
        _append(audit, _ruling_record(p, where, ruled))
        text = (
            f"approved: `{p.command}` may run once when the agent retries it"
            if allowed
            else f"denied: `{p.command}` stays refused"
        )
        return Ruled(p, text=text)
    who = p.by.pid
    raise AlreadyRuled(
        f"escalation {p.id} is already {p.state.value}"
        + (f" (answered {p.answer!r} by pid {who})" if who else "")
    )


def _allows(p: Pending, ruling: Ruling) -> bool:
    """Whether ``ruling`` lets ``p``'s command run: `run anyway` for a halt, and only for one."""
    return ruling.answer in ALLOWING and (p.kind is PendingKind.HALT) == (
        ruling.answer is Answer.RUN_ANYWAY
    )


def _grant_session(p: Pending, ruling: Ruling, state: SessionState) -> None:
    """An allowing answer: `session` approves the command for the rest of the session (never a
    catastrophic one, S7); the agent made progress either way."""
    decision = p.decision
    if (
        ruling.answer is Answer.SESSION
        and decision is not None
        and decision.outcome is not Outcome.CATASTROPHIC
    ):
        state.approved_session.add(p.key)
    state.negotiation.note_progress()


def _grant_retry(p: Pending, state: SessionState) -> None:
    """The agent's next try of ``p``'s command runs once: `run anyway` for a halt (the halt
    stays), an approved-once entry otherwise."""
    if p.kind is PendingKind.HALT:
        state.run_anyway.add(p.key)
    else:
        state.approved_once.add(p.key)


def _decision_of(p: Pending) -> Decision:
    if p.decision is None:
        raise AlreadyRuled(
            f"escalation {p.id} was opened before the daemon restarted; "
            "only `gatesh approve` or `gatesh deny` can rule on it"
        )
    return p.decision


def _ruling_record(p: Pending, where: Where, action: RulingAction, why: str = "") -> RulingRecord:
    when, ts = stamp()
    return RulingRecord(
        time=when,
        ts=ts,
        session=p.session,
        pid=where.pid,
        cwd=fold_home(p.cwd),
        surface=where.surface,
        command=clean(p.command),
        action=action,
        answer=p.answer,
        pending_id=p.id,
        reason=clean(why) if why else "",
    )


def _append(audit: AuditSink, rec: RulingRecord) -> str:
    try:
        audit.append(rec)
    except AuditError as exc:
        return str(exc)
    return ""

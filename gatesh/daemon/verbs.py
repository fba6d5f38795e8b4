"""The human-only ops (S9.5): ``answer``, ``approve``, ``deny``, ``mandate``, ``resume``, ``withdraw``,
``undo``.

The server refuses each of them, before it gets here, unless it came on the person's channel from
a process that carries no mark of the gate and whose ancestry holds no gated session
(:func:`gatesh.daemon.server.person_refusal`). A ruling is :func:`gatesh.ruling.rule`:
first answer wins, and the grant it makes is the one the record's kind allows.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

from gatesh._errors import ProtocolError
from gatesh.audit import AuditError
from gatesh.audit_record import RestoreRecord, stamp
from gatesh.daemon import protocol as P
from gatesh.daemon.core import Conn, Daemon, cleaned
from gatesh.daemon.publish import (
    AnsweredEvent,
    MandateEvent,
    NoticeEvent,
    ResumedEvent,
    WithdrawnEvent,
)
from gatesh.daemon.replies import CheckReply, Mandated, Resumed, Ruled, Undone
from gatesh.daemon.requests import (
    AnswerRequest,
    MandateRequest,
    PendingRequest,
    ResumeRequest,
    UndoRequest,
    UndoStep,
)
from gatesh.daemon.routing import reply
from gatesh.finish import Answer, Ruling, Where, offered
from gatesh.negotiation import TRUSTED_CHANNELS, USER_MESSAGE_MAX_CHARS
from gatesh.pending import Pending, PendingKind, PendingState
from gatesh.ruling import AlreadyRuled, rule, withdraw


def _pending(d: Daemon, pending_id: str) -> Pending:
    p = d.book.find(pending_id)
    if p is None:
        raise ProtocolError(f"no pending escalation {pending_id!r}")
    return p


async def answer(d: Daemon, conn: Conn, req: AnswerRequest) -> CheckReply | Ruled:
    p = _pending(d, req.pending_id)
    choices = offered(p)
    if req.answer not in choices:
        raise ProtocolError(
            f"{req.answer.value!r} is not offered for escalation {p.id} "
            f"({', '.join(c.value for c in choices)})"
        )
    # An answer (not approve/deny) from a person's client is one asked at its own terminal (S7).
    return await _rule(
        d, conn, p, Ruling(req.answer, req.note, replace(conn.by, op=P.Op.ANSWER.value))
    )


async def approve(d: Daemon, conn: Conn, req: PendingRequest) -> CheckReply | Ruled:
    p = _pending(d, req.pending_id)
    word = Answer.RUN_ANYWAY if p.kind is PendingKind.HALT else Answer.ONCE
    return await _rule(d, conn, p, Ruling(word, "", conn.by))


async def deny(d: Daemon, conn: Conn, req: PendingRequest) -> CheckReply | Ruled:
    p = _pending(d, req.pending_id)
    return await _rule(d, conn, p, Ruling(Answer.NO, req.note, conn.by))


async def withdrawn(d: Daemon, conn: Conn, req: PendingRequest) -> CheckReply:
    """The surface asking its own person about ``p`` was interrupted (Ctrl-C, S10): the escalation
    is withdrawn, not ruled on (no person's No is recorded), and the refusal goes to the command."""
    p = _pending(d, req.pending_id)
    if p.state is not PendingState.ASKING:
        raise AlreadyRuled(
            f"escalation {p.id} is {p.state.value}; only one its own surface asks can be withdrawn"
        )
    sess, _ = d.sessions.get(p.session)
    async with sess.lock:
        where = Where(p.session, conn.pid, p.cwd, p.surface)
        done = withdraw(p, where=where, book=d.book, audit=d.audit_pipe)
        d.events.publish(p.session, WithdrawnEvent(p.id))
        return replace(reply(d, sess, done, where), state=p.state)


async def _rule(d: Daemon, conn: Conn, p: Pending, ruling: Ruling) -> CheckReply | Ruled:
    """A person's ruling on ``p``: the first answer wins; others see who answered."""
    where = Where(p.session, conn.pid, p.cwd, conn.role)
    if p.state is PendingState.WAITING:
        future = d.waiting.get(p.id)
        if future is None or future.done():
            raise AlreadyRuled(f"escalation {p.id} is already being refused (its wait has ended)")
        rule(p, ruling, state=None, where=where, book=d.book, audit=d.audit_pipe)
        future.set_result(ruling)
        d.events.publish(p.session, AnsweredEvent(p.id, p.answer, p.by))
        return Ruled(p.id, p.state)
    if p.state is PendingState.ASKING:
        sess, _ = d.sessions.get(p.session)
        async with sess.lock:
            ruled = rule(p, ruling, state=sess.state, where=where, book=d.book, audit=d.audit_pipe)
            d.events.publish(p.session, AnsweredEvent(p.id, p.answer, p.by))
            if ruled.finished is None:
                raise AlreadyRuled(f"escalation {p.id} could not be ruled on")
            shown = Where(p.session, conn.pid, p.cwd, p.surface)
            return replace(reply(d, sess, ruled.finished, shown), state=p.state)
    state = d.sessions.get(p.session)[0].state
    ruled = rule(p, ruling, state=state, where=where, book=d.book, audit=d.audit_pipe)
    d.events.publish(p.session, AnsweredEvent(p.id, p.answer, p.by))
    return Ruled(p.id, p.state, ruled.text)


async def mandate(d: Daemon, conn: Conn, req: MandateRequest) -> Mandated:
    """The user's own words (S5.3) for one session, or for every session when none is named."""
    text, sid = req.text, req.session
    # The channel (S5.3): a watcher's words are "watch"; a human-role client (`gatesh mandate`,
    # a harness's prompt hook) names its own. Either way the ancestry check has already refused
    # any client that descends from a gated session.
    if conn.role == P.Role.WATCH:
        channel = "watch"
    else:
        channel = req.channel
        if channel not in TRUSTED_CHANNELS or channel == "watch":
            raise ProtocolError(f"unknown channel {channel!r}")
    targets = [d.sessions.get(sid)[0]] if sid else list(d.sessions.sessions.values())
    if not sid:
        d.sessions.remember_mandate(text)
    # A harness replays its transcript on every hook call: words already in every window are
    # admitted again (they stay the newest) but not announced to the watchers a second time.
    short = text[:USER_MESSAGE_MAX_CHARS]
    known = bool(targets) and all(short in s.state.negotiation.user_messages() for s in targets)
    admitted = [s.id for s in targets if s.state.negotiation.admit_user_message(text, channel)]
    if not known:
        d.events.publish(sid or None, MandateEvent(cleaned(text), channel))
    return Mandated(tuple(s.id for s in targets), tuple(admitted), channel)


async def resume(d: Daemon, conn: Conn, req: ResumeRequest) -> Resumed:
    """Clear a session's halt (S3.7)."""
    sid = req.session
    sess, _ = d.sessions.get(sid)
    was = sess.state.halted
    sess.state.resume()
    d.sessions.note_halt(sess)
    d.events.publish(sid, ResumedEvent(conn.by))
    return Resumed(sid, was)


async def undo(d: Daemon, conn: Conn, req: UndoRequest) -> Undone:
    """``gatesh undo`` (S17): list the snapshots, plan a restore, or restore one."""
    from gatesh.undo import ops

    state_dir = d.paths.state_dir
    config = d.backends.config_for("/").undo
    if req.do is UndoStep.LIST:
        n = ops.LIST_DEFAULT if req.n is None else req.n
        return Undone(snapshots=await d.off_loop(ops.list_shots, state_dir, config, n))
    shot_id = req.id
    if req.do is UndoStep.PLAN:
        return Undone(plan=await d.off_loop(ops.plan_of, state_dir, config, shot_id))
    done = await d.off_loop(ops.restore_to, state_dir, config, shot_id, req.fingerprint)
    text = f"a person restored the files and refs of undo {shot_id} (`{done.command}`)"
    if done.undone_by:
        text += f"; undo {done.undone_by} puts back what it replaced"
    d.events.publish(None, NoticeEvent(cleaned(text)))
    with contextlib.suppress(AuditError):
        when, ts = stamp()
        d.audit_pipe.append(
            RestoreRecord(
                time=when,
                ts=ts,
                pid=conn.pid,
                surface=conn.role,
                command=cleaned(f"gatesh undo {shot_id}"),
                snapshot=done.undone_by or "",
                reason=cleaned(text),
            )
        )
    return Undone(restored=done)

"""The human-only ops (S9.5): ``answer``, ``approve``, ``deny``, ``mandate``, ``resume``, ``withdraw``,
``undo``.

The server refuses each of them, before it gets here, unless it came on the person's channel from
a process that carries no mark of the gate and whose ancestry holds no gated session
(:func:`gatesh.daemon.server.person_refusal`). A ruling is :func:`gatesh.ruling.rule`:
first answer wins, and the grant it makes is the one the record's kind allows.
"""

from __future__ import annotations

import contextlib
from typing import Any

from gatesh._errors import ProtocolError
from gatesh.audit import AuditError
from gatesh.audit_record import RestoreRecord, stamp
from gatesh.daemon import protocol as P
from gatesh.daemon.core import Conn, Daemon, cleaned
from gatesh.daemon.routing import reply, session_field
from gatesh.events import Kind
from gatesh.finish import Answer, Ruling, Where, offered
from gatesh.negotiation import TRUSTED_CHANNELS, USER_MESSAGE_MAX_CHARS
from gatesh.pending import Pending, PendingKind, PendingState
from gatesh.ruling import AlreadyRuled, rule, withdraw

_WORDS = frozenset(a.value for a in Answer)


def _pending(d: Daemon, msg: dict[str, Any]) -> Pending:
    pid = P.field(msg, "pending_id", str)
    p = d.book.find(pid)
    if p is None:
        raise ProtocolError(f"no pending escalation {pid!r}")
    return p


async def answer(d: Daemon, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
    p = _pending(d, msg)
    word = P.field(msg, "answer", str).strip().lower()
    note = P.field(msg, "note", str, required=False, default="")
    if word not in _WORDS:
        raise ProtocolError(f"answer must be one of {', '.join(a.value for a in Answer)}")
    choices = offered(p)
    if Answer(word) not in choices:
        raise ProtocolError(
            f"{word!r} is not offered for escalation {p.id} ({', '.join(c.value for c in choices)})"
        )
    # An answer (not approve/deny) from a person's client is one asked at its own terminal (S7).
    return await _rule(d, conn, p, Ruling(Answer(word), note, conn.by | {"op": P.Op.ANSWER.value}))


async def approve(d: Daemon, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
    p = _pending(d, msg)
    word = Answer.RUN_ANYWAY if p.kind is PendingKind.HALT else Answer.ONCE
    return await _rule(d, conn, p, Ruling(word, "", conn.by))


async def deny(d: Daemon, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
    p = _pending(d, msg)
    return await _rule(
        d,
        conn,
        p,
        Ruling(Answer.NO, P.field(msg, "note", str, required=False, default=""), conn.by),
    )


async def withdrawn(d: Daemon, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
    """The surface asking its own person about ``p`` was interrupted (Ctrl-C, S10): the escalation
    is withdrawn, not ruled on (no person's No is recorded), and the refusal goes to the command."""
    p = _pending(d, msg)
    if p.state is not PendingState.ASKING:
        raise AlreadyRuled(
            f"escalation {p.id} is {p.state.value}; only one its own surface asks can be withdrawn"
        )
    sess, _ = d.sessions.get(p.session)
    async with sess.lock:
        where = Where(p.session, conn.pid, p.cwd, p.surface)
        done = withdraw(p, where=where, book=d.book, audit=d.audit_pipe)
        d.events.publish(Kind.WITHDRAWN, p.session, pending_id=p.id)
        return reply(d, sess, done, where) | {"state": p.state.value}


async def _rule(d: Daemon, conn: Conn, p: Pending, ruling: Ruling) -> dict[str, Any]:
    """A person's ruling on ``p``: the first answer wins; others see who answered."""
    where = Where(p.session, conn.pid, p.cwd, conn.role)
    if p.state is PendingState.WAITING:
        future = d.waiting.get(p.id)
        if future is None or future.done():
            raise AlreadyRuled(f"escalation {p.id} is already being refused (its wait has ended)")
        rule(p, ruling, state=None, where=where, book=d.book, audit=d.audit_pipe)
        future.set_result(ruling)
        d.events.publish(Kind.ANSWERED, p.session, pending_id=p.id, answer=p.answer, by=p.by)
        return {"pending_id": p.id, "state": p.state.value}
    if p.state is PendingState.ASKING:
        sess, _ = d.sessions.get(p.session)
        async with sess.lock:
            ruled = rule(p, ruling, state=sess.state, where=where, book=d.book, audit=d.audit_pipe)
            d.events.publish(Kind.ANSWERED, p.session, pending_id=p.id, answer=p.answer, by=p.by)
            if ruled.finished is None:
                raise AlreadyRuled(f"escalation {p.id} could not be ruled on")
            shown = Where(p.session, conn.pid, p.cwd, p.surface)
            return reply(d, sess, ruled.finished, shown) | {"state": p.state.value}
    state = d.sessions.get(p.session)[0].state
    ruled = rule(p, ruling, state=state, where=where, book=d.book, audit=d.audit_pipe)
    d.events.publish(Kind.ANSWERED, p.session, pending_id=p.id, answer=p.answer, by=p.by)
    return {"pending_id": p.id, "state": p.state.value, "text": ruled.text}


async def mandate(d: Daemon, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
    """The user's own words (S5.3) for one session, or for every session when none is named."""
    text = P.field(msg, "text", str).strip()
    if not text:
        raise ProtocolError("field 'text' is empty")
    sid = session_field(msg)
    # The channel (S5.3): a watcher's words are "watch"; a human-role client (`gatesh mandate`,
    # a harness's prompt hook) names its own. Either way the ancestry check has already refused
    # any client that descends from a gated session.
    if conn.role == P.Role.WATCH:
        channel = "watch"
    else:
        channel = P.field(msg, "channel", str, required=False, default="mandate")
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
        d.events.publish(Kind.MANDATE, sid or None, text=cleaned(text), channel=channel)
    return {"sessions": [s.id for s in targets], "admitted": admitted, "channel": channel}


async def resume(d: Daemon, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
    """Clear a session's halt (S3.7)."""
    sid = P.field(msg, "session", str)
    sess, _ = d.sessions.get(sid)
    was = sess.state.halted
    sess.state.resume()
    d.sessions.note_halt(sess)
    d.events.publish(Kind.RESUMED, sid, by=conn.by)
    return {"session": sid, "was_halted": was}


async def undo(d: Daemon, conn: Conn, msg: dict[str, Any]) -> dict[str, Any]:
    """``gatesh undo`` (S17): list the snapshots, plan a restore, or restore one."""
    from gatesh.undo import ops

    what = P.field(msg, "do", str)
    state_dir = d.paths.state_dir
    config = d.backends.config_for("/").undo
    if what == "list":
        n = P.field(msg, "n", int, required=False, default=ops.LIST_DEFAULT)
        return {"snapshots": await d.off_loop(ops.list_shots, state_dir, config, max(0, n))}
    shot_id = P.field(msg, "id", int)
    if what == "plan":
        return {"plan": await d.off_loop(ops.plan_of, state_dir, config, shot_id)}
    if what != "restore":
        raise ProtocolError("field 'do' must be list, plan or restore")
    fingerprint = P.field(msg, "fingerprint", str)
    done = await d.off_loop(ops.restore_to, state_dir, config, shot_id, fingerprint)
    text = f"a person restored the files and refs of undo {shot_id} (`{done['command']}`)"
    if done.get("undone_by"):
        text += f"; undo {done['undone_by']} puts back what it replaced"
    d.events.publish(Kind.NOTICE, None, text=cleaned(text))
    with contextlib.suppress(AuditError):
        when, ts = stamp()
        d.audit_pipe.append(
            RestoreRecord(
                time=when,
                ts=ts,
                pid=conn.pid,
                surface=conn.role,
                command=cleaned(f"gatesh undo {shot_id}"),
                snapshot=str(done.get("undone_by") or ""),
                reason=cleaned(text),
            )
        )
    return {"restored": done}

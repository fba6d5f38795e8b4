"""The ``check`` op: group the command into its session, decide it, finish it, and route what a
person must rule on (S7, S9.3, S3.7).

Steps are numbered in :func:`check` where they happen. Deciding is :func:`gatesh.pipeline.decide`
(pure) and finishing is :func:`gatesh.finish.finish`, as on every surface; what is the daemon's
own is which person can be asked (:func:`reach`), waiting for a watcher's answer with heartbeats,
and the events watchers see.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from typing import Any, Final

from gatesh import _person, messages
from gatesh._errors import ConfigError, GateshError, ProtocolError
from gatesh._types import Action, Decision, Round, Stage
from gatesh.audit import clean, fold_home
from gatesh.audit_record import ExitRecord, stamp
from gatesh.boundary._parent import QUIET_SIGNALS
from gatesh.boundary.compute import Boundary
from gatesh.boundary.tickets import TICKET_TTL_S, Ticket, launcher_of, wrap
from gatesh.config import Config, EscalationConfig
from gatesh.daemon import deciding, procs
from gatesh.daemon import protocol as P
from gatesh.daemon.core import MAX_RUNS, Conn, Daemon, Run, cleaned, round_event
from gatesh.daemon.protocol import Interim
from gatesh.daemon.publish import (
    DecisionEvent,
    EscalationEvent,
    ExpiredEvent,
    HaltEvent,
    NoticeEvent,
    RoundEvent,
    SessionStartEvent,
    WithdrawnEvent,
)
from gatesh.daemon.replies import CheckReply, DecisionSummary, Done, check_reply
from gatesh.daemon.requests import CheckRequest, ExitedRequest
from gatesh.daemon.sessions import Session
from gatesh.finish import (
    ALLOWING,
    Answer,
    Finished,
    Reach,
    Ruling,
    Where,
    choices,
    decide_and_finish,
    entry_pattern,
    finish,
)
from gatesh.negotiation import NEGOTIATED_APPROVAL_COOLDOWN_S
from gatesh.pending import Holder, Pending, PendingKind, PendingState, PendingSummary
from gatesh.render import pass_label
from gatesh.ruling import conclude, expire_ask, running_anyway, withdraw
from gatesh.session import normalised
from gatesh.surfaces import at_terminal


def reach(d: Daemon, can_ask: bool, person_operated: bool = False) -> Reach:
    """Who can be asked now (S7): a session a person operates asks them at its own terminal;
    otherwise a watcher first, else the surface's own person (a harness's prompt), else nobody."""
    if person_operated and can_ask:
        return Reach.SURFACE
    if d.events.watchers:
        return Reach.WATCHER
    return Reach.SURFACE if can_ask else Reach.NOBODY


async def check(d: Daemon, conn: Conn, req: CheckRequest) -> CheckReply:
    """Decide one command and reply (steps numbered)."""
    # 1. The request (decoded and checked once by the server); a hook's ticket is its own
    #    check's decision.
    if req.ticket:
        redeemed = _redeem(d, conn, req.ticket, req.command, req.cwd)
        if redeemed is not None:
            return redeemed
        # Not a ticket for this command here (used, expired, another one): decided as any other.
    # 2. The session: GATESH_SESSION when given, else the harness process (S9.3).
    sess, new = _session(d, conn, req)
    # 3–7. The config, the decision, the finish: the one path every surface takes, with the
    #      daemon's own steps (_Checked).
    checked = _Checked(d, conn, req, sess, new)
    return await decide_and_finish(req.command, req.cwd, checked, cannot_run=req.cannot_run)


def _session(d: Daemon, conn: Conn, req: CheckRequest) -> tuple[Session, bool]:
    """The session ``req`` is decided in, and whether it is new; the client is gated as it."""
    sid, anchor = req.session, None
    if not sid:
        if conn.harness is None:  # the peer's ancestry is fixed while it is connected
            harness, p = procs.harness_session(conn.pid)
            conn.harness = (harness, (p.pid, p.start) if p is not None else None)
        sid, anchor = conn.harness
    if conn.gated_as != sid and req.surface not in _NOT_THE_SHELL:
        # The client becomes the command's shell: gated.
        if req.exec:
            # Marked now, before the reply (the client execs the command right after reading
            # it): all the command starts, detached or not, carries the mark, never a person.
            _person.mark(conn.pid)
        # Registered right after this task step (the reply is sent first): the loop runs the
        # callback before it handles any connection that arrives later, so nothing the command
        # starts can ask for a human-only verb before its shell is known to be gated (S9.5).
        # A hook client is not registered: it exits after its answer and nothing runs under it
        # (its harness runs the command), so reading its /proc entry would be wasted (S14).
        asyncio.get_running_loop().call_soon(d.registry.add, conn.pid, sid)
        conn.gated_as = sid
    sess, new = d.sessions.get(sid, anchor=anchor, surface=req.surface)
    if new:
        d.events.publish(
            sid,
            SessionStartEvent(
                anchor[0] if anchor else None, req.surface, boundary=_protections(d, req.cwd)
            ),
        )
    sess.checks += 1
    sess.last = time.time()
    if req.operator == "person":
        sess.state.person_operated = True
    return sess, new


class _Checked:
    """The daemon as a surface of the one path (:func:`gatesh.finish.decide_and_finish`): its
    config per folder, the session's lock, deciding off the event loop with heartbeats and a hard
    deadline, and finishing with the person it can reach, the events, and the reply."""

    def __init__(self, d: Daemon, conn: Conn, req: CheckRequest, sess: Session, new: bool):
        self.d, self.conn, self.req, self.sess, self.new = d, conn, req, sess, new
        self.boundary: Boundary | None = None
        self.open_rounds: tuple[Round, ...] = ()

    def config(self) -> Config:
        return self.d.backends.config_for(self.req.cwd)

    def hold(self) -> AbstractAsyncContextManager[object]:
        return self.sess.lock

    async def decide(self, config: Config) -> Decision:
        """4. Decide, in a worker thread with a hard deadline (heartbeats while a model is asked),
        and draw the boundary the command runs in when it is allowed (S16)."""
        d, req, sess = self.d, self.req, self.sess
        expire_stale_asks(d, float(config.escalation.timeout_s))
        self.open_rounds = sess.state.negotiation.transcript()
        bounded = _bounded(d, req.surface, req.wraps)
        decision, self.boundary = await deciding.decide(
            d,
            self.conn,
            req.command,
            req.cwd,
            config,
            sess,
            bounded,
            terminal=at_terminal(req.surface, req.terminal),
            contained=bounded or _shell_confined(sess, req.surface),
        )
        notice = d.backends.health_notice()
        if notice:
            d.events.publish(sess.id, NoticeEvent(cleaned(notice)))
        return decision

    async def finish(self, decision: Decision, config: Config | None) -> CheckReply:
        """5–7. Finish, ask whom it can, publish and reply."""
        d, conn, req, sess = self.d, self.conn, self.req, self.sess
        where = Where(sess.id, conn.pid, req.cwd, req.surface, boundary=self.boundary)
        if config is None:  # decided without a config: nobody is asked, nothing else is due
            done = finish(
                decision,
                state=sess.state,
                reach=Reach.NOBODY,
                where=where,
                book=d.book,
                audit=d.audit_pipe,
            )
            return reply(d, sess, done, where)
        timeout = float(config.escalation.timeout_s)
        # 5. The person who can be asked, the audit line. An ask at the surface lives as long as
        #    the process holding it (expire_stale_asks).
        who = reach(d, req.can_ask, sess.state.person_operated)
        if who is Reach.SURFACE and decision.action in (Action.ESCALATE, Action.HALT):
            where = replace(where, holder=holder(conn, req.surface))
        done = finish(
            decision, state=sess.state, reach=who, where=where, book=d.book, audit=d.audit_pipe
        )
        _announce(d, sess, done, where, timeout)
        # 6. A watcher is asked: wait for the answer (or the timeout), then finish with it.
        if done.waiting and done.pending is not None:
            done = await _wait(d, conn, sess, done.pending, where, config)
        # 7. Publish and reply.
        ends = _ends_argument(done, self.open_rounds)
        if ends:
            _publish_passed(d, sess, done.decision, self.open_rounds, req.cwd)
        answer = reply(d, sess, done, where)
        if self.new and req.surface == "hook" and answer.allowed:
            # A harness shows a hook's notice to its person: the session's first one says which
            # protections of the boundary do not hold here, when one does not (S16).
            missing = _protections(d, req.cwd, only_missing=True)
            if missing:
                answer = replace(answer, notice=" ".join(filter(None, (answer.notice, missing))))
        hold = approval_hold_s(done, ends_argument=ends, watched=bool(d.events.watchers))
        if hold:
            await asyncio.sleep(hold)
        return answer


# These stages end no argument: bypass and boilerplate are not rated; a command a person approved
# (approved-id) runs by their ruling, which is shown as such, not as the rater's pass.
_QUIET: Final = frozenset({Stage.BYPASS, Stage.HARNESS, Stage.APPROVED_ID})


def _ends_argument(done: Finished, open_rounds: tuple[Round, ...]) -> bool:
    """Whether ``done`` ends the session's open argument: allowed by the pipeline, not by a
    person's answer (their ruling, not the rater's pass), at a stage that rates."""
    return (
        done.action is Action.ALLOW
        and bool(open_rounds)
        and done.decision.stage not in _QUIET
        and not done.answer
    )


def _protections(d: Daemon, cwd: str, *, only_missing: bool = False) -> str:
    """One line: which protections of the boundary hold here (S16, :mod:`gatesh.boundary.holds`);
    "" with ``only_missing`` when every one does."""
    from gatesh.boundary import holds

    try:
        enabled = d.backends.config_for(cwd).boundary.enabled
    except ConfigError:
        enabled = True
    here = holds.state(enabled)
    return "" if only_missing and not (here.enabled and here.missing()) else here.summary()


def expire_stale_asks(d: Daemon, timeout: float | None = None) -> None:
    """Expire every surface ask nobody can answer any more (S7), telling the watchers: one whose
    holder process has exited (the harness showing a hook's ``ask`` is gone; see :func:`holder`),
    and one older than the escalation timeout.

    Called before a check is decided, when a watcher attaches, on every ``status`` and by the
    sweep: so a hook's `ask` nobody answered is never shown first to a new watcher, nor waited
    behind, nor listed as "waiting for an answer now". Cheap: one pass over the book for its
    asks (with ``timeout`` given and no ask open, nothing else), one /proc read per open ask."""
    asking = d.book.asking()
    if not asking and timeout is not None:
        return
    for p in d.book.orphaned(lambda h: procs.is_running(h.pid, h.start), asking):
        h = p.holder
        why = (
            f"its harness {h.name} (pid {h.pid}) exited before a person answered"
            if h is not None
            else "its harness exited before a person answered"
        )
        expire_ask(
            p,
            where=Where(p.session, None, p.cwd, p.surface),
            book=d.book,
            audit=d.audit_pipe,
            why=why,
        )
        d.events.publish(p.session, ExpiredEvent(p.id, why))
    if timeout is None:
        try:
            timeout = float(d.backends.config_for("/").escalation.timeout_s)
        except ConfigError:
            timeout = float(EscalationConfig().timeout_s)
    now = time.time()
    for p in asking:
        if p.state is PendingState.ASKING and now - p.created >= timeout:
            expire_ask(
                p, where=Where(p.session, None, p.cwd, "gatesh"), book=d.book, audit=d.audit_pipe
            )
            d.events.publish(p.session, ExpiredEvent(p.id))


def approval_hold_s(done: Finished, *, ends_argument: bool, watched: bool) -> float:
    """How long the reply to an allowed check waits before its command may start (S6): a
    negotiated approval — the argument ended in the agent's favour, or the checker approved what
    the rater refused — stays on a watched screen :data:`NEGOTIATED_APPROVAL_COOLDOWN_S` first, so
    it is its own visible event rather than scrolled away by the command's output. Headless: 0."""
    negotiated = ends_argument or done.decision.stage is Stage.ALIGNMENT
    return (
        NEGOTIATED_APPROVAL_COOLDOWN_S
        if watched and negotiated and done.action is Action.ALLOW
        else 0.0
    )


# Surfaces whose client answers an ask and exits, leaving the question to its harness's prompt.
_HANDS_OFF: Final = frozenset({"hook"})
# Surfaces whose client is not the shell the command runs in, so it is not registered as gated:
# a hook client (its harness runs the command), and a PTY session's relay, which asks for its
# shell (registered with `register`) and delivers its person's answers (S9.5).
_NOT_THE_SHELL: Final = frozenset({"hook", "pty"})


def holder(conn: Conn, surface: str) -> Holder | None:
    """The process an ask at ``conn``'s surface lives with (:class:`gatesh.pending.Holder`).

    A hook client answers ``ask`` and exits: the question lives in its harness, the nearest
    ancestor that is not a shell or gatesh (S9.3). Every other surface that can ask (a PTY's
    gate) waits for its person's answer in the client itself. None when the process cannot be
    read: then the ask never expires on its own, as before there was a holder (it refuses nothing).
    """
    if surface in _HANDS_OFF:
        _, p = procs.harness_session(conn.pid)
    else:
        p = procs.info(conn.pid)
    return Holder(p.pid, p.start, p.comm) if p is not None and p.pid > 1 else None


#: Surfaces whose allowed command runs inside a boundary the client applies (S16): the ``-c``
#: client and the shims; a hook only when it says its harness runs the command it wraps
#: (``wraps``, :data:`gatesh.hooks.REWRITES_INPUT`) and a launcher is there to run it.
BOUNDED_SURFACES: Final = frozenset({"-c", "shim"})


def _bounded(d: Daemon, surface: str, wraps: bool) -> bool:
    """Whether an allowed command of ``surface`` runs inside a boundary (see above): the audit
    line records a boundary only for a command that will run inside it."""
    if surface in BOUNDED_SURFACES:
        return True
    return surface == "hook" and wraps and bool(launcher_of(d.paths.installation()))


def _shell_confined(sess: Session, surface: str) -> bool:
    """Whether a command of ``surface`` runs in an agent's PTY shell that runs inside the
    session's boundary (S10, S16): its relay said it confined the shell when it registered, and
    the shell — the same process, by its start time — shows it now
    (:func:`gatesh.boundary.contain.in_boundary`). Its command then reaches no further than a
    ``-c`` command's, and is judged as contained as one (the pipeline's ``contain``)."""
    from gatesh.boundary.contain import in_boundary

    pid = sess.anchor_pid
    if surface != "pty" or not sess.confined or pid is None:
        return False
    shell = procs.info(pid)
    return shell is not None and shell.start == sess.anchor_start and in_boundary(pid)


def _announce(d: Daemon, sess: Session, done: Finished, where: Where, timeout: float) -> None:
    """The events for a person being asked: an escalation prompt, or the halt banner (S3.7)."""
    p = done.pending
    decision = done.decision
    if decision.action is Action.HALT:
        asked = p is not None
        d.events.publish(
            sess.id,
            HaltEvent(
                cwd=fold_home(where.cwd),
                reason=fold_home(sess.state.halt_reason),
                command=cleaned(decision.facts.text),
                pending_id=p.id if p is not None else "",
                choices=(Answer.RUN_ANYWAY.value,) if asked else (),
                timeout_s=timeout if d.events.watchers else None,
            ),
        )
    elif decision.action is Action.ESCALATE and p is not None:
        rounds = decision.rounds
        d.events.publish(
            sess.id,
            EscalationEvent(
                pending_id=p.id,
                pending_kind=p.kind.value,
                cwd=fold_home(where.cwd),
                command=cleaned(decision.facts.text),
                stage=decision.stage.value,
                asking=p.state is PendingState.ASKING,
                surface=p.surface,
                outcome=decision.outcome.value if decision.outcome else None,
                reason=cleaned(decision.reason),
                remedy=cleaned(decision.remedy),
                to_person_reason=cleaned(p.reason),
                rounds=tuple(round_event(r) for r in rounds),
                transcript=cleaned(messages.rounds_of(rounds) if rounds else ""),
                choices=tuple(c.value for c in choices(decision)),
                timeout_s=timeout,
                entry=entry_pattern(decision),
            ),
        )


async def _wait(
    d: Daemon, conn: Conn, sess: Session, p: Pending, where: Where, config: Config
) -> Finished:
    """Wait for a watcher's ruling on ``p`` and finish the check with it (S7, S3.7)."""
    future: asyncio.Future[Ruling] = asyncio.get_running_loop().create_future()
    d.waiting[p.id] = future
    try:
        conn.send(P.interim_line(Interim.WAITING, pending_id=p.id, message=messages.waiting()))
        await conn.drain()
        try:
            ruling: Ruling | None = await _await_person(
                conn, future, float(config.escalation.timeout_s)
            )
        except TimeoutError:
            ruling = None
        except Withdrawn:
            # The waiting command was interrupted (Ctrl-C, S10): nobody rules on it any more, the
            # session's other commands are decided at once, and the watchers are told.
            done = withdraw(p, where=where, book=d.book, audit=d.audit_pipe)
            d.events.publish(sess.id, WithdrawnEvent(p.id))
            return done
    finally:
        d.waiting.pop(p.id, None)
    if ruling is not None and ruling.answer in ALLOWING and p.kind is PendingKind.ESCALATE:
        p.decision = await deciding.snapshot_before(d, p, where, config)
    done = conclude(p, ruling, state=sess.state, where=where, book=d.book, audit=d.audit_pipe)
    if ruling is None:
        d.events.publish(sess.id, ExpiredEvent(p.id))
    if not done.rerun:
        return done
    # `run anyway`: the halt keeps its audit line; the pipeline decides the command again and lets
    # this exact command through once (never a hardline one). The halt stays.
    with running_anyway(sess.state, p):
        bounded = where.surface in BOUNDED_SURFACES  # an answered surface ask: not a wrapped hook
        again, boundary = await deciding.decide(
            d,
            conn,
            p.command,
            where.cwd,
            config,
            sess,
            bounded,
            terminal=at_terminal(where.surface, False),
            contained=bounded or _shell_confined(sess, where.surface),
        )
        return finish(
            again,
            state=sess.state,
            reach=Reach.NOBODY,
            where=replace(where, boundary=boundary),
            book=d.book,
            audit=d.audit_pipe,
            pending_id=p.id,
            answer=done.answer,
        )


class Withdrawn(GateshError):
    """The client waiting for a person's ruling went away (its command was interrupted)."""


async def _await_person(conn: Conn, future: asyncio.Future[Ruling], timeout: float) -> Ruling:
    """A person's ruling from ``future``, or TimeoutError after ``timeout`` s, or Withdrawn as soon
    as the waiting client closes its connection. A heartbeat goes to the waiting client every
    HEARTBEAT_S, so its idle timeout never cuts a person short.

    The client sends nothing while it waits, so its side of the connection is read here: end of
    file is the client gone. (Bytes instead would be a client misusing the protocol: then the
    connection is no longer watched, and the wait ends only by ruling or timeout.)"""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    gone: asyncio.Future[bytes] | None = asyncio.ensure_future(conn.reader.read(1))
    try:
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError
            watched: set[asyncio.Future[Any]] = {future} if gone is None else {future, gone}
            done, _ = await asyncio.wait(
                watched, timeout=min(left, P.HEARTBEAT_S), return_when=asyncio.FIRST_COMPLETED
            )
            if future in done:
                return future.result()
            if gone is not None and gone in done:
                if gone.exception() is not None or not gone.result():
                    raise Withdrawn
                gone = None
                continue
            conn.send(P.interim_line(Interim.WORKING))
            await conn.drain()
    finally:
        if gone is not None and not gone.done():
            gone.cancel()


def nobody_left(d: Daemon) -> None:
    """No watcher is attached any more: every check waiting for one is refused now, as with
    nobody watching (its wait ends as a timeout would)."""
    for future in d.waiting.values():
        if not future.done():
            future.set_exception(TimeoutError("the last watcher left"))


def _redeem(d: Daemon, conn: Conn, name: str, command: str, cwd: str) -> CheckReply | None:
    """The check reply for a hook's ticket (:mod:`gatesh.boundary.tickets`): the decision the
    hook's check made, not a second one — its boundary, its run, its session — or None when
    ``name`` is no open ticket for ``command`` in ``cwd``. The client that redeems it is gated as
    that session, and reports the run's end."""
    ticket = d.tickets.redeem(name, command, cwd)
    if ticket is None:
        return None
    run = d.runs.get(ticket.run)
    if run is not None:
        d.runs[ticket.run] = run.moved_to(conn.pid)
    asyncio.get_running_loop().call_soon(d.registry.add, conn.pid, ticket.session)
    conn.gated_as = ticket.session
    return CheckReply(
        action=Action.ALLOW,
        message="",
        exit=0,
        pending_id="",
        notice="",
        undo="",
        session=ticket.session,
        shell=ticket.shell,
        decision=DecisionSummary(stage="ticket"),
        boundary=ticket.boundary,
        run=ticket.run,
    )


def _ticketed(d: Daemon, sess: Session, done: Finished, answer: CheckReply, cwd: str) -> CheckReply:
    """For a hook's allowed, bounded command: a ticket, and the command wrapped to redeem it
    (``wrapped``), when a launcher is known to run it."""
    launcher = launcher_of(d.paths.installation())
    if not launcher or answer.boundary is None:
        return answer
    name = d.tickets.issue(
        Ticket(
            command=done.decision.facts.text,
            cwd=cwd,
            session=sess.id,
            boundary=answer.boundary,
            run=done.run,
            shell=answer.shell,
            expires=time.time() + TICKET_TTL_S,
        )
    )
    return replace(answer, wrapped=wrap(done.decision.facts.text, name, launcher))


def reply(d: Daemon, sess: Session, done: Finished, where: Where) -> CheckReply:
    """Count, publish and answer one finished check (or a surface person's ruling)."""
    action = done.action.value
    if done.run and done.boundary is not None and where.pid is not None:
        d.runs[done.run] = Run(
            where.pid,
            sess.id,
            where.cwd,
            where.surface,
            done.decision.facts.text,
            done.boundary.id,
            time.time(),
            normalised(done.decision.facts),
        )
        while len(d.runs) > MAX_RUNS:
            d.runs.popitem(last=False)
    if done.audit_error:
        d.totals["audit_failed"] += 1
    d.totals[action] += 1
    sess.totals[action] = sess.totals.get(action, 0) + 1
    if d.events.subscribers:
        _publish_decision(d, sess, done, where)
    answer = check_reply(done, session=sess.id, shell=d.backends.shell)
    if where.surface == "hook" and done.run:
        return _ticketed(d, sess, done, answer, where.cwd)
    return answer


def _publish_decision(d: Daemon, sess: Session, done: Finished, where: Where) -> None:
    decision, where_cwd = done.decision, fold_home(where.cwd)
    if (
        decision.action is Action.REJECT
        and decision.rounds
        and done.action is Action.REJECT
        and not done.answer
    ):
        n = len(decision.rounds)
        round_ = round_event(decision.rounds[-1])
        d.events.publish(sess.id, RoundEvent(where_cwd, n, n, round_, None, decision.counters))
    d.events.publish(
        sess.id,
        DecisionEvent(
            cwd=where_cwd,
            command=cleaned(decision.facts.text),
            surface=where.surface,
            action=done.action.value,
            stage=decision.stage.value,
            outcome=decision.outcome.value if decision.outcome else None,
            reason=cleaned(decision.reason),
            remedy=cleaned(decision.remedy),
            rule_id=decision.rule_id,
            rung=decision.rung.value,
            counters=decision.counters,
            notice=cleaned(decision.notice),
            pending_id=done.pending_id,
            answer=done.answer,
            snapshot=decision.snapshot,
        ),
    )
    if decision.notice and done.action is Action.ALLOW:
        d.events.publish(sess.id, NoticeEvent(cleaned(decision.notice)))
    if done.undo_line:  # it ran because a snapshot holds what it loses (S17): the watcher sees it
        undo = f"{done.undo_line}: `{decision.facts.text}`"
        d.events.publish(sess.id, NoticeEvent(cleaned(undo)))


def _publish_passed(
    d: Daemon, sess: Session, decision: Decision, open_rounds: tuple[Round, ...], cwd: str
) -> None:
    """An allowed command ends an open argument: "agreed" when it is a command the rater refused in
    any round of it, "accepted" when it is another (S8.2)."""
    last = open_rounds[-1]
    ends = pass_label((r.command for r in open_rounds), decision.facts.text).lower()
    passed = Round(
        command=decision.facts.text,
        justification=decision.facts.justification,
        outcome=decision.outcome or last.outcome,
        reason=decision.reason,
        passed=True,
    )
    n = len(open_rounds) + 1
    d.events.publish(sess.id, RoundEvent(fold_home(cwd), n, n, round_event(passed), ends))


def pending_event(p: Pending) -> PendingSummary:
    """A pending record as a new subscriber receives it (text cleaned), with the whole escalation
    as the watchers attached when it was asked saw it (S7)."""
    shown = replace(p.summary(), command=cleaned(p.command), cwd=fold_home(p.cwd))
    d = p.decision
    if d is None:
        return shown
    return replace(
        shown,
        outcome=d.outcome.value if d.outcome else None,
        stage=d.stage.value,
        rating=cleaned(d.reason),
        remedy=cleaned(d.remedy),
        rounds=tuple(round_event(r) for r in d.rounds),
        choices=tuple(c.value for c in choices(d)),
        entry=entry_pattern(d),
    )


async def exited(d: Daemon, conn: Conn, req: ExitedRequest) -> Done:
    """The ``exited`` op: how a bounded command ended, as its own audit line (S13, S16).

    Only the process that made the check may report its run (the pid the kernel gives for the
    connection): nothing inside the boundary can write another command's ending."""
    run_id, status, signal = req.run, req.status, req.signal
    run = d.runs.get(run_id)
    if run is None:
        raise ProtocolError(f"no run {run_id!r} is waiting for its end report")
    if run.pid != conn.pid:
        raise ProtocolError(f"run {run_id} was not started by process {conn.pid}")
    del d.runs[run_id]
    failed = (status is not None and status != 0) or (
        signal is not None and signal not in QUIET_SIGNALS
    )
    sess = d.sessions.sessions.get(run.session)
    if failed and sess is not None and run.key:
        sess.state.note_boundary_failure(run.key, run.boundary)
    if status is None and signal is None:
        ended = "never started: its boundary could not be set up"
    elif signal is not None:
        ended = f"killed by signal {signal}"
    else:
        ended = f"exit status {status}"
    when, ts = stamp()
    record = ExitRecord(
        time=when,
        ts=ts,
        session=run.session,
        pid=run.pid,
        cwd=fold_home(run.cwd),
        surface=run.surface,
        command=clean(run.command),
        reason=ended,
        run=run_id,
        boundary=run.boundary,
        status=status,
        signal=signal,
        duration_s=round(time.time() - run.started, 3),
    )
    d.audit_pipe.append(record)
    return Done()

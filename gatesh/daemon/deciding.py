"""The daemon's decision of one command (S9.4, S16, S17): the pipeline off the event loop with a
hard deadline and heartbeats, the undo snapshot an allowed command runs after, and the boundary it
runs in.

Always off the event loop (:mod:`gatesh.daemon.deadline`): one input that reads forever must not
hold every other client. Past a deadline the command is refused, never allowed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Final

from gatesh import messages
from gatesh._types import Action, Decision, Stage
from gatesh.boundary.compute import Boundary, boundary_for
from gatesh.config import Config
from gatesh.daemon import protocol as P
from gatesh.daemon.core import Conn, Daemon
from gatesh.daemon.deadline import LOCAL_DEADLINE_S, Overrun, model_deadline
from gatesh.daemon.sessions import Session
from gatesh.finish import Where
from gatesh.pending import Pending, PendingState
from gatesh.session import normalised
from gatesh.undecided import failed_decision
from gatesh.undo.guard import places, wants_snapshot, without_snapshot

__all__ = ["SNAPSHOT_GRACE_S", "decide", "snapshot_before"]


async def decide(
    d: Daemon,
    conn: Conn,
    command: str,
    cwd: str,
    config: Config,
    sess: Session,
    bounded: bool = False,
    *,
    terminal: bool = False,
    contained: bool | None = None,
) -> tuple[Decision, Boundary | None]:
    """The pipeline's decision for ``command`` in ``sess`` (whose lock the caller holds), with
    the undo snapshot taken when it lets the command run (S17, :mod:`gatesh.undo.guard`), and the
    boundary it runs in when ``bounded`` (its surface runs it in one, :func:`gatesh.daemon.routing._bounded`; S16).
    ``contained`` (``bounded`` when None): judged knowing it runs inside a boundary — also an
    agent's PTY session's command, whose shell already runs inside the session's boundary.

    Always off the event loop, with a hard deadline (:mod:`gatesh.daemon.deadline`): one input
    that reads forever must not hold every other client. Past the deadline the command is
    refused as unreadable ("took too long to read"), never allowed. The snapshot is its own step
    with its own deadline; when it is not taken and the decision rested on it, the command is
    decided again without undo.
    """
    contained = bounded if contained is None else contained
    final, drawn = await _snapshot_step(
        d, conn, command, cwd, config, sess, contained, terminal, bounded
    )
    if not bounded or final.action is Action.HALT:
        return final, None
    if drawn is not None:  # drawn in the decision's own worker, for exactly this decision
        if drawn.error:
            return _undrawn(command, drawn.error), None
        return final, drawn.boundary
    # A person widened this one run: they approved a request to widen its boundary, or typed
    # `run anyway` for it (S3.7: their order for this exact command, whatever it touches).
    widened = final.stage is Stage.BOUNDARY or (
        final.stage is Stage.APPROVED_ID
        and (bool(final.change.spent_run_anyway) or _widening_approved(d, sess.id, final))
    )
    try:
        boundary = await asyncio.to_thread(
            boundary_for, final, cwd, config.boundary, d.paths, widened=widened
        )
    except Exception as exc:  # fail closed: a boundary that cannot be drawn runs nothing
        return _undrawn(command, f"{type(exc).__name__}: {exc}"), None
    return final, boundary


def _undrawn(command: str, why: str) -> Decision:
    """The refusal of a command whose boundary could not be drawn (fail closed: nothing runs)."""
    reason = f"its boundary could not be drawn ({why})"
    return failed_decision(command, reason, messages.error(reason))


@dataclass(frozen=True)
class _Drawn:
    """A boundary drawn in the worker that made the decision (None: the kernel has none), or why
    it could not be drawn (``error``)."""

    boundary: Boundary | None
    error: str = ""


def _decide_and_draw(
    d: Daemon,
    command: str,
    cwd: str,
    config: Config,
    sess: Session,
    undo: bool,
    contained: bool,
    terminal: bool,
    bounded: bool,
) -> tuple[Decision, _Drawn | None]:
    """In a decision worker: the decision and, when it is certain to be the final one, the
    boundary it runs in, drawn in the same worker (one hand-off between threads per check
    instead of two or three; each costs ~50 us of CPU, S14). Certain: its surface runs it
    bounded, it is no halt, no person widened it (a widening is read from the pending book, which
    only the event loop reads), and no snapshot can change it (none is due, or there is nothing
    to snapshot: no repository and no outside path, when the snapshot step takes none either).
    Otherwise None, and the boundary is drawn after the snapshot step, as before."""
    decision = d.backends.decide(command, cwd, config, sess.state, undo, contained, terminal)
    if (
        not bounded
        or decision.action is Action.HALT
        or decision.stage in (Stage.BOUNDARY, Stage.APPROVED_ID)
    ):
        return decision, None
    if wants_snapshot(decision, config):
        try:
            repos, outside = places(decision, cwd)
        except Exception:  # the snapshot step says why, as before
            return decision, None
        if repos or outside:
            return decision, None
    try:
        return decision, _Drawn(boundary_for(decision, cwd, config.boundary, d.paths))
    except Exception as exc:  # fail closed: refused by the caller
        return decision, _Drawn(None, f"{type(exc).__name__}: {exc}")


async def _snapshot_step(
    d: Daemon,
    conn: Conn,
    command: str,
    cwd: str,
    config: Config,
    sess: Session,
    contained: bool = False,
    terminal: bool = False,
    bounded: bool = False,
) -> tuple[Decision, _Drawn | None]:
    """The decision, with the undo snapshot taken when it lets the command run (S17); judged
    knowing it runs inside a boundary when ``contained`` (:mod:`gatesh.boundary.contain`), and at
    a terminal when ``terminal``. With it, the boundary drawn in its worker when ``bounded`` and
    that decision is certain to be final (:func:`_decide_and_draw`), else None."""
    decision, drawn = await _decided(
        d,
        conn,
        command,
        cwd,
        config,
        sess,
        undo=True,
        contained=contained,
        terminal=terminal,
        bounded=bounded,
    )
    if drawn is not None or not wants_snapshot(decision, config):
        return decision, drawn
    got = await d.decisions.run(
        d.backends.snapshot,
        decision,
        cwd,
        config,
        sess.id,
        deadline=config.undo.max_seconds + SNAPSHOT_GRACE_S,
        on_wait=lambda: conn.send(P.interim_line(P.Interim.WORKING)),
        wait_step=P.HEARTBEAT_S,
    )
    if isinstance(got, Overrun):
        taken, why = decision, f"it took longer than {got.seconds:g} s"
    else:
        taken, why = got
    if not why:
        return taken, None
    if not decision.undo:
        return without_snapshot(decision, why, lambda: decision), None
    again, _ = await _decided(
        d, conn, command, cwd, config, sess, undo=False, contained=contained, terminal=terminal
    )
    return without_snapshot(decision, why, lambda: again), None


# Past undo.max_seconds, how long a snapshot's worker may take to notice its own deadline.
SNAPSHOT_GRACE_S: Final = 0.5


async def _decided(
    d: Daemon,
    conn: Conn,
    command: str,
    cwd: str,
    config: Config,
    sess: Session,
    *,
    undo: bool,
    contained: bool = False,
    terminal: bool = False,
    bounded: bool = False,
) -> tuple[Decision, _Drawn | None]:
    """The decision in a worker, under its deadline, with the boundary drawn there when it can be
    (:func:`_decide_and_draw`; never when not ``bounded``)."""
    if d.backends.local:
        limit = LOCAL_DEADLINE_S
    else:
        limit = model_deadline(float(config.rater.timeout_s), float(config.alignment.timeout_s))
    got = await d.decisions.run(
        _decide_and_draw,
        d,
        command,
        cwd,
        config,
        sess,
        undo,
        contained,
        terminal,
        bounded,
        deadline=limit,
        on_wait=lambda: conn.send(P.interim_line(P.Interim.WORKING)),
        wait_step=P.HEARTBEAT_S,
    )
    if isinstance(got, Overrun):
        reason = f"unreadable: the command took too long to read (over {got.seconds:g} s)"
        return failed_decision(command, reason, messages.error(reason), unreadable=reason), None
    return got


def _widening_approved(d: Daemon, sid: str, decision: Decision) -> bool:
    """Whether the approval this command runs on was a person's answer to a request to widen
    its boundary (S16): its pending record was a boundary escalation."""
    key = normalised(decision.facts)
    for p in list(d.book.pending.values()):
        if (
            p.session == sid
            and p.key == key
            and p.state in (PendingState.APPROVED, PendingState.ANSWERED)
            and p.decision is not None
            and p.decision.stage is Stage.BOUNDARY
        ):
            return True
    return False


async def snapshot_before(d: Daemon, p: Pending, where: Where, config: Config) -> Decision | None:
    """The escalated command a person just let run, with the undo snapshot taken before it runs
    (S17), off the event loop. A person's ruling does not rest on undo: no snapshot, no change."""
    decision = p.decision
    if decision is None:
        return None
    allowed = replace(decision, action=Action.ALLOW)
    if not wants_snapshot(allowed, config):
        return decision
    got = await d.decisions.run(
        d.backends.snapshot,
        allowed,
        where.cwd,
        config,
        p.session,
        deadline=config.undo.max_seconds + SNAPSHOT_GRACE_S,
    )
    if isinstance(got, Overrun):
        return replace(decision, undo_note=f"no snapshot was taken: over {got.seconds:g} s")
    taken, why = got
    if why:
        return replace(decision, undo_note=f"no snapshot was taken: {why}")
    return replace(decision, snapshot=taken.snapshot)

"""The check reply every transport sends (the daemon, the in-process gate; see
:mod:`gatesh.daemon.protocol`): one dataclass built from a finished decision, encoded by
:mod:`gatesh.wire_json`, read by the client as :class:`gatesh._wire_base.CheckResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gatesh import messages
from gatesh._json import via
from gatesh._types import Action
from gatesh.boundary._spec import Spec
from gatesh.finish import Finished
from gatesh.pending import PendingState
from gatesh.wire_json import OMIT_NONE

__all__ = ["CheckReply", "DecisionSummary", "check_reply"]


@dataclass(frozen=True)
class DecisionSummary:
    """The decision behind a check reply, as a surface shows who decided and why."""

    stage: str
    outcome: str | None = None
    rung: str = ""
    rule_id: str = ""
    reason: str = ""
    remedy: str = ""
    to_person_reason: str = ""
    counters: dict[str, int] = field(default_factory=dict)
    # A person's ruling on this command (once, session, no …), so the surface can say who
    # decided (S7): "" when nobody was asked.
    answer: str = ""


def _spec_json(spec: object) -> object:
    return spec.encode() if isinstance(spec, Spec) else spec


@dataclass(frozen=True)
class CheckReply:
    """The reply to ``check`` (and to a ruling a surface asked its own person for): what the
    client reads as :class:`gatesh._wire_base.CheckResult`. ``exit`` is 0 only for allow."""

    action: Action
    message: str
    exit: int
    pending_id: str
    notice: str
    undo: str
    session: str
    shell: str
    decision: DecisionSummary
    # An allowed command's boundary (gatesh.boundary.compute's, with its note; its JSON form is
    # Spec.encode) and the run it is booked as: absent when it runs in none.
    boundary: Spec | None = field(default=None, metadata={**OMIT_NONE, **via(_spec_json)})
    run: str | None = field(default=None, metadata=OMIT_NONE)
    wrapped: str | None = field(
        default=None, metadata=OMIT_NONE
    )  # a hook's command wrapped to redeem its ticket (S16)
    state: PendingState | None = field(
        default=None, metadata=OMIT_NONE
    )  # a ruling's pending record, after it

    @property
    def allowed(self) -> bool:
        return self.action is Action.ALLOW


def check_reply(done: Finished, *, session: str, shell: str) -> CheckReply:
    """The check reply for ``done`` every transport sends.

    Its text reaches the agent's terminal, a harness or a person as it is: every string in it
    passes :func:`gatesh.render.neutralise_block` here, the one boundary (S8.1).
    """
    from gatesh.render import neutralise_block as safe

    d = done.decision
    allowed = done.action is Action.ALLOW
    reply = CheckReply(
        action=done.action,
        message=safe(done.message),
        exit=done.exit_code,
        pending_id=done.pending_id,
        notice=safe(done.notice) if allowed else "",
        undo=done.undo_line,
        session=session,
        shell=shell,
        decision=DecisionSummary(
            stage=d.stage.value,
            outcome=d.outcome.value if d.outcome else None,
            rung=d.rung.value,
            rule_id=d.rule_id,
            reason=safe(d.reason),
            remedy=safe(d.remedy),
            to_person_reason=safe(d.to_person_reason),
            counters=d.counters,
            answer=done.answer,
        ),
    )
    if done.boundary is not None and allowed:
        note = safe(messages.boundary_note(done.boundary))
        reply = replace(reply, boundary=done.boundary.wire().noted(note), run=done.run)
    return reply

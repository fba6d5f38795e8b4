"""The decision pipeline (S3): one function, the steps in S3 order, first match wins.

``decide`` never raises and never allows by accident: any exception becomes a REFUSE decision
at stage ERROR with a message saying the gate failed.

``decide`` is pure: it reads the session and changes nothing. What the decision changes in the
session (an approval spent, a refused round, a halt, …) travels as ``Decision.change`` and is
applied by :func:`gatesh.finish.finish`, the one place every surface finishes a decision.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

from gatesh import alignment, messages
from gatesh._paths import GatePaths
from gatesh._paths import current as current_paths
from gatesh._types import (
    NO_CHANGE,
    Action,
    AlignmentDecision,
    AlignmentResult,
    CheckerRound,
    Decision,
    Facts,
    Finding,
    Outcome,
    Round,
    Rung,
    SessionChange,
    Stage,
    Verdict,
)
from gatesh.policy import floors, hardline, lists, readonly, selfprotect
from gatesh.reading import read
from gatesh.redact import redact
from gatesh.render import neutralise
from gatesh.session import SessionState, normalised
from gatesh.undecided import failed_decision

if TYPE_CHECKING:
    from gatesh.alignment import Checker
    from gatesh.boundary.contain import Containment
    from gatesh.config import Config
    from gatesh.negotiation import Negotiation
    from gatesh.rater import Rater
    from gatesh.undo.cover import Policy


def decide(
    text: str,
    *,
    cwd: str,
    config: Config,
    session: SessionState | None = None,
    rater: Rater | None = None,
    checker: Checker | None = None,
    paths: GatePaths | None = None,
    rung: Rung | None = None,
    undo: Policy | None = None,
    contain: Containment | None = None,
    terminal: bool = False,
) -> Decision:
    """Decide ``text`` for ``session`` (a fresh one when None). Never raises; fails closed.

    ``undo``: the surface snapshots before an allowed command runs (S17), under this policy: a
    loss such a snapshot holds is judged reversible, and the decision names what it must hold.
    ``contain``: it runs inside a boundary this kernel enforces (:mod:`gatesh.boundary.contain`),
    which judges what it contains contained. ``terminal``: it runs at a terminal (S1). None or
    False (a library call, a test): judged without a snapshot, a boundary, a terminal.
    """
    session = session or SessionState()
    rung = rung or config.rung
    try:
        facts = replace(read(text, cwd=cwd), terminal=True) if terminal else read(text, cwd=cwd)
        paths = paths or current_paths()
        asked = _Asked(facts, cwd, config, session, rater, checker, paths, rung, undo, contain)
        decision = _decide(asked)
        return _widening(decision, session) if session.boundary_failed else decision
    except Exception as exc:  # fail closed: an internal error refuses the command
        detail = f"{type(exc).__name__}: {exc}"
        return failed_decision(
            text,
            f"internal error: {detail}",
            messages.error(detail),
            rung=rung,
            unreadable="internal error",
        )


# Stages of an allowed command that a boundary widening never replaces: a person already ruled
# (approved-id), nothing was the agent's (harness boilerplate), or nothing is gated (bypass).
_NOT_WIDENED: Final = frozenset({Stage.APPROVED_ID, Stage.HARNESS, Stage.BYPASS})


def _widening(decision: Decision, session: SessionState) -> Decision:
    """S16, after the pipeline: an allowed command whose last run in this session failed inside
    its boundary, tried again with a justification, goes to a person, who may let it run once
    with its boundary widened. Without a justification it runs in its boundary again (the agent
    was told its moves); anything not allowed stays as decided."""
    facts = decision.facts
    if decision.action is not Action.ALLOW or decision.stage in _NOT_WIDENED:
        return decision
    if not facts.justification:
        return decision
    boundary = session.boundary_failed.get(normalised(facts))
    if boundary is None:
        return decision
    return replace(
        decision,
        action=Action.ESCALATE,
        stage=Stage.BOUNDARY,
        reason=(
            f"it failed inside its boundary ({boundary}) and the agent asks to run it once with "
            f"the boundary widened: {neutralise(facts.justification)}"
        ),
        to_person_reason=(
            "the agent asks to run it once with its boundary widened: it may then read and write "
            "anywhere your user may (gatesh's own files and your credentials too) and use the "
            "network; it still cannot signal, trace or change the limits of a process outside"
        ),
        change=NO_CHANGE,
    )


def _protects(facts: Facts, config: Config, paths: GatePaths, cwd: str) -> Finding | None:
    """Self-protection's finding (S3.4): paths resolved from ``cwd``, the configured branches."""
    return selfprotect.check(facts, paths, cwd, branches=config.git.protected_branches)


def _entry(found: lists.Match | None) -> str | None:
    return found.entry.describe() if found is not None else None


#: What a layer finds on its own: a rule's finding, the floors', a list entry, "read-only", none.
LayerFinding = Finding | tuple[Finding, ...] | str | bool | None


@dataclass(frozen=True)
class Layer:
    """One policy layer of the pipeline as ``explain`` shows it: its name and its own finding for
    a command, whatever stage decided. The same checks the pipeline's steps make, so explain
    cannot show a layer the pipeline does not ask, nor ask one differently."""

    name: str
    find: Callable[[Facts, Config, GatePaths, str], LayerFinding]


#: The policy layers in S3 order (the rater, the alignment check and the argument are not
#: layers: explain shows them from the decision).
LAYERS: Final = (
    Layer("deny_list", lambda f, c, _p, _d: _entry(lists.find(c.deny, f, kind="deny"))),
    Layer("hardline", lambda f, _c, _p, _d: hardline.check(f)),
    Layer("self_protection", _protects),
    Layer("escalate_list", lambda f, c, _p, _d: _entry(lists.find(c.escalate, f, kind="escalate"))),
    Layer("allow_list", lambda f, c, _p, _d: _entry(lists.find(c.allow, f, kind="allow"))),
    Layer("read_only", lambda f, _c, _p, _d: readonly.is_read_only(f)),
    Layer("floors", lambda f, _c, _p, _d: floors.check(f)),
)


# Why a person decides in a session whose operator is a person: it is theirs to decide.
PERSON_OPERATED: Final = (
    "you operate this session, so a command that needs a decision is yours to make"
)

# The change of every command that is allowed to run: the consecutive count restarts (S6).
PROGRESS: Final = SessionChange(progress=True)


@dataclass(frozen=True)
class _Asked:
    """What every step of the pipeline reads: the command's facts and where, how and for whom it is
    decided. Frozen: a step decides or passes, it changes nothing."""

    facts: Facts
    cwd: str
    config: Config
    session: SessionState
    rater: Rater | None
    checker: Checker | None
    paths: GatePaths
    rung: Rung
    undo: Policy | None
    contain: Containment | None = None

    def done(
        self,
        action: Action,
        stage: Stage,
        outcome: Outcome | None,
        reason: str,
        change: SessionChange = NO_CHANGE,
        *,
        rating: _Rating | None = None,
        message: str = "",
        rule_id: str = "",
        findings: tuple[Finding, ...] = (),
        verdict: Verdict | None = None,
        alignment: AlignmentResult | None = None,
        notice: str = "",
        rounds: tuple[Round, ...] | None = None,
        to_person_reason: str = "",
        undo: tuple[str, ...] = (),
    ) -> Decision:
        """The decision of one step, with the negotiation's counters after it. Whatever sends a
        command to a person, they see the whole argument so far (S7). A ``rating`` (the rater's
        and the floors' findings) names the rule, the findings and the remedy."""
        nego = self.session.negotiation
        counters = nego.counters_after(
            rejected=change.rejection is not None,
            progress=change.progress,
            reached=bool(change.halt),
        )
        if rounds is None:
            rounds = nego.transcript() if action is Action.ESCALATE else ()
        remedy = ""
        floor_findings: tuple[Finding, ...] = ()
        if rating is not None:
            verdict, floor_findings = rating.verdict, rating.floors
            findings, remedy, rule_id = rating.findings, rating.remedy, rating.rule_id
        return Decision(
            action,
            stage,
            outcome,
            reason,
            self.rung,
            self.facts,
            message=message,
            rule_id=rule_id,
            remedy=remedy,
            findings=findings,
            verdict=verdict,
            alignment=alignment,
            floors=floor_findings,
            notice=notice,
            rounds=rounds,
            counters=counters,
            to_person_reason=to_person_reason,
            change=change,
            undo=undo,
        )

    def halt(
        self,
        stage: Stage,
        found: Finding,
        rating: _Rating | None = None,
        verdict: Verdict | None = None,
    ) -> Decision:
        """An attack halts the session (S3.7): refused with no moves, later commands too. The rule
        named is the rating's when there is one, else the finding's."""
        reason = f"{found.rule_id}: {found.reason}"
        return self.done(
            Action.HALT,
            stage,
            Outcome.ATTACK,
            found.reason,
            SessionChange(halt=reason),
            rating=rating,
            rule_id=found.rule_id,
            verdict=verdict,
            message=messages.halted(reason),
        )


def _decide(asked: _Asked) -> Decision:
    """The S3 order: each step decides the command or passes it on; the first that decides wins.
    A command no earlier step decided is rated, the floors raise the rating, and the action
    follows from the outcome."""
    return (
        _halted(asked)
        or _harness(asked)
        or _deny_list(asked)
        or _hardline(asked)
        or _self_protection(asked)
        or _bypass(asked)
        or _approved(asked)
        or _escalate_list(asked)
        or _allow_list(asked)
        or _rung(asked)
        or _read_only(asked)
        or _by_outcome(asked, _rating(asked))
    )


def _halted(a: _Asked) -> Decision | None:
    """1. A halted session refuses everything until a person resumes it (S3.7), except the one
    command a person typed `run anyway` for (never a hardline one)."""
    session = a.session
    if not session.halted:
        return None
    key = normalised(a.facts)
    if key in session.run_anyway and hardline.check(a.facts) is None:
        return a.done(
            Action.ALLOW,
            Stage.APPROVED_ID,
            None,
            "a person typed `run anyway` for this halted command",
            SessionChange(spent_run_anyway=key),
        )
    return a.done(
        Action.REFUSE,
        Stage.HALTED,
        None,
        session.halt_reason,
        message=messages.halted(session.halt_reason),
    )


def _harness(a: _Asked) -> Decision | None:
    """Harness boilerplate recognised whole (S1: a shell-snapshot script, or a wrapper handing the
    command to a gatesh shim that gates it): nothing in it is the agent's, so it is not rated and
    not a negotiation round (the counters do not move)."""
    if not a.facts.boilerplate:
        return None
    return a.done(Action.ALLOW, Stage.HARNESS, None, f"harness boilerplate ({a.facts.boilerplate})")


def _deny_list(a: _Asked) -> Decision | None:
    """2. The deny list: the user's own hardline."""
    found = lists.find(a.config.deny, a.facts, kind="deny")
    if found is None:
        return None
    entry = found.entry
    return a.done(
        Action.DENY,
        Stage.DENY_LIST,
        None,
        f"deny-list entry {entry.describe()}: {found.why}",
        rule_id=entry.describe(),
        message=messages.denied(a.facts.text, entry.describe(), entry.note, found.why),
    )


def _hardline(a: _Asked) -> Decision | None:
    """3. Hardline: never runs, at any rung."""
    found = hardline.check(a.facts)
    if found is None:
        return None
    return a.done(
        Action.REFUSE,
        Stage.HARDLINE,
        found.outcome,
        found.reason,
        rule_id=found.rule_id,
        findings=(found,),
        message=messages.hardline(a.facts.text, found.rule_id, found.reason),
    )


def _self_protection(a: _Asked) -> Decision | None:
    """4. Self-protection: tampering with the gate is an attack, at every rung."""
    found = _protects(a.facts, a.config, a.paths, a.cwd)
    return a.halt(Stage.SELF_PROTECTION, found) if found is not None else None


def _bypass(a: _Asked) -> Decision | None:
    """5. Rung bypass runs everything else (and the audit line records it)."""
    return (
        a.done(Action.ALLOW, Stage.BYPASS, None, "rung bypass") if a.rung is Rung.BYPASS else None
    )


def _approved(a: _Asked) -> Decision | None:
    """A person's own approval of this exact command (answer o/s, `gatesh approve ID`)."""
    session = a.session
    if not (session.approved_once or session.approved_session):
        return None  # a fresh session has none to look up
    key = normalised(a.facts)
    if key not in session.approved_once and key not in session.approved_session:
        return None
    return a.done(
        Action.ALLOW,
        Stage.APPROVED_ID,
        None,
        "approved by a person",
        SessionChange(spent_approval=key, progress=True),
    )


def _escalate_list(a: _Asked) -> Decision | None:
    """6. The escalate list: a person decides, no rating."""
    found = lists.find(a.config.escalate, a.facts, kind="escalate")
    if found is None:
        return None
    entry = found.entry
    return a.done(
        Action.ESCALATE,
        Stage.ESCALATE_LIST,
        None,
        f"escalate-list entry {entry.describe()}: {found.why}",
        rule_id=entry.describe(),
        to_person_reason=f"it matches the escalate-list entry {entry.describe()}",
    )


def _allow_list(a: _Asked) -> Decision | None:
    """6. The allow list; with ``rate = true`` the rater still runs as a tripwire."""
    entry = lists.match(a.config.allow, a.facts, kind="allow")
    if entry is None:
        return None
    named = f"allow-list entry {entry.describe()}"
    if not entry.rate:
        return a.done(
            Action.ALLOW, Stage.ALLOW_LIST, None, named, PROGRESS, rule_id=entry.describe()
        )
    verdict = _rate(a.rater, a.facts, a.cwd)
    if verdict.outcome is Outcome.ATTACK:
        return a.halt(Stage.RATER, _as_finding(verdict), verdict=verdict)
    if verdict.outcome is Outcome.CATASTROPHIC:
        return a.done(
            Action.ESCALATE,
            Stage.RATER,
            verdict.outcome,
            verdict.reason,
            verdict=verdict,
            to_person_reason="the rater judged it catastrophic despite the allow entry",
        )
    return a.done(
        Action.ALLOW,
        Stage.ALLOW_LIST,
        verdict.outcome,
        named,
        PROGRESS,
        rule_id=entry.describe(),
        verdict=verdict,
    )


def _rung(a: _Asked) -> Decision | None:
    """7. Rungs that ask a person without rating: manual asks about everything; write runs known
    read-only commands and asks about the rest."""
    if a.rung is Rung.MANUAL:
        return a.done(
            Action.ESCALATE,
            Stage.RUNG,
            None,
            "rung manual: a person decides every command",
            to_person_reason="the rung is manual",
        )
    if a.rung is not Rung.WRITE:
        return None
    return _read_only(a) or a.done(
        Action.ESCALATE,
        Stage.RUNG,
        None,
        "rung write: only known read-only commands run",
        to_person_reason="the rung is write and this command is not known read-only",
    )


def _read_only(a: _Asked) -> Decision | None:
    """8. The read-only fast path: a command made only of known read-only parts is safe without a
    model."""
    if not readonly.is_read_only(a.facts):
        return None
    return a.done(Action.ALLOW, Stage.READ_ONLY, Outcome.SAFE, "known read-only command", PROGRESS)


@dataclass(frozen=True)
class _Rating:
    """The rater's verdict with the floors that stand over it (S3.5, S4): the outcome and the
    stage that set it, and what a decision made on it names."""

    verdict: Verdict
    floors: tuple[Finding, ...] = ()
    outcome: Outcome = Outcome.SAFE
    stage: Stage = Stage.RATER
    reason: str = ""
    remedy: str = ""
    rule_id: str = ""
    carved_hosts: tuple[str, ...] = ()  # hosts the open-world floor was lifted for
    carve_notice: str = ""

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.verdict.findings + self.floors


def _rating(a: _Asked) -> _Rating:
    """8–9. The rater, then the floors, which raise a safe rating to destructive and never lower
    anything. The floors are computed first, so the rater reads their notes after the command (S4);
    the open-world floor is lifted at auto when every host is named in the person's own request."""
    facts = a.facts
    floor_findings = floors.check(facts)
    rated = (
        replace(facts, floor_notes=tuple(floors.note(f) for f in floor_findings))
        if floor_findings or facts.floor_notes
        else facts
    )  # the same facts: no copy
    verdict = _rate(a.rater, rated, a.cwd, a.undo, a.contain)
    outcome, stage = verdict.outcome, Stage.RATER
    carved: tuple[str, ...] = ()
    if (
        floor_findings
        and a.rung is Rung.AUTO
        and floors.carve_open_world(floor_findings, facts, a.session.negotiation.user_messages())
    ):
        floor_findings = tuple(f for f in floor_findings if f.rule_id != floors.OPEN_WORLD)
        carved = facts.hosts
    if outcome is Outcome.SAFE and floor_findings:
        outcome, stage = Outcome.DESTRUCTIVE, Stage.FLOOR  # floors raise, never lower
    by_rater = stage is Stage.RATER
    top = verdict.findings[0] if by_rater and verdict.findings else (floor_findings or (None,))[0]
    notice = (
        redact(
            f"gatesh: the open-world floor was lifted for `{neutralise(facts.text)}`: every "
            f"host ({', '.join(carved)}) is named in your own request."
        )
        if carved
        else ""
    )
    return _Rating(
        verdict=verdict,
        floors=floor_findings,
        outcome=outcome,
        stage=stage,
        reason=verdict.reason if by_rater else floor_findings[0].reason,
        remedy=verdict.remedy if by_rater else floor_findings[0].remedy,
        rule_id=top.rule_id if top else "",
        carved_hosts=carved,
        carve_notice=notice,
    )


def _by_outcome(a: _Asked, r: _Rating) -> Decision:
    """10. The action by outcome: attack halts, catastrophic goes to a person, safe runs;
    destructive goes to a person at assisted, to one who operates the session, and when no
    rating was obtained; otherwise to the alignment check and the argument (:func:`_argued`)."""
    outcome, stage, reason = r.outcome, r.stage, r.reason
    if outcome is Outcome.ATTACK:
        return a.halt(stage, _as_finding(r.verdict), r)
    if outcome is Outcome.CATASTROPHIC:
        why = "it cannot be undone from inside the session"
        return a.done(Action.ESCALATE, stage, outcome, reason, rating=r, to_person_reason=why)
    if outcome is Outcome.SAFE:
        # A loss judged reversible because a snapshot will hold it: the snapshot must be taken
        # before the command runs, or the command is decided again without undo (S17).
        return a.done(
            Action.ALLOW,
            stage,
            outcome,
            reason,
            PROGRESS,
            rating=r,
            notice=r.carve_notice,
            undo=r.verdict.undo,
        )
    if a.rung is Rung.ASSISTED:
        why = "the rung is assisted"
    elif a.session.person_operated:
        # A person's own command: asked, not argued with (no alignment check, no rounds, S7).
        why = PERSON_OPERATED
    elif r.verdict.fail_cause:
        # Never rated: no checker may lift what nobody assessed.
        why = f"no rating could be obtained ({neutralise(reason)})"
    else:
        return _argued(a, r)
    return a.done(Action.ESCALATE, stage, outcome, reason, rating=r, to_person_reason=why)


def _argued(a: _Asked, r: _Rating) -> Decision:
    """A destructive command at auto (S5, S6): the alignment check may approve it or ask a person;
    a floor that stood goes to a person; otherwise it is rejected, a round of the argument, and
    the argument that has gone on too long goes to a person."""
    facts, outcome, reason = a.facts, r.outcome, r.reason
    result, checked = _align(a.checker, facts, r.verdict, a.session, a.cwd)
    checker_only = SessionChange(checker_rounds=checked)
    if result.decision == AlignmentDecision.APPROVE:
        notice = alignment.approval_notice(facts.text, result, carved_hosts=r.carved_hosts)
        return a.done(
            Action.ALLOW,
            Stage.ALIGNMENT,
            outcome,
            reason,
            SessionChange(checker_rounds=checked, progress=True),
            rating=r,
            alignment=result,
            notice=redact(notice),
        )
    if result.decision == AlignmentDecision.ESCALATE:
        why = f"the alignment check asked for a person: {neutralise(result.reason)}"
        stage, change = Stage.ALIGNMENT, checker_only
    elif r.floors and not r.carved_hosts:
        why, stage, change = f"a floor stood: {r.floors[0].reason}", Stage.FLOOR, checker_only
    else:
        return _rejected(a, r, result, checked)
    return a.done(
        Action.ESCALATE,
        stage,
        outcome,
        reason,
        change,
        rating=r,
        alignment=result,
        to_person_reason=why,
    )


def _rejected(
    a: _Asked, r: _Rating, result: AlignmentResult, checked: tuple[CheckerRound, ...]
) -> Decision:
    """A round of the argument (S6): the agent is told why and may argue; when the argument may
    go on no longer, a person decides it."""
    nego = a.session.negotiation
    this_round = Round(
        command=a.facts.text,
        justification=a.facts.justification,
        outcome=r.outcome,
        reason=r.reason,
        remedy=r.remedy,
        suggestion=result.suggestion,
    )
    rejected = SessionChange(checker_rounds=checked, rejection=this_round)
    rounds = (*nego.transcript(), this_round)
    if nego.rejection_escalates():
        return a.done(
            Action.ESCALATE,
            Stage.NEGOTIATION,
            r.outcome,
            r.reason,
            rejected,
            rating=r,
            alignment=result,
            rounds=rounds,
            to_person_reason="the agent and the rater could not agree",
        )
    message = alignment.with_suggestion(
        messages.rejected_by_rater(a.facts.text, r.reason, r.remedy, findings=r.findings), result
    )
    return a.done(
        Action.REJECT,
        r.stage,
        r.outcome,
        r.reason,
        rejected,
        rating=r,
        alignment=result,
        rounds=rounds,
        message=message,
        notice=r.carve_notice,
    )


def _rate(
    rater: Rater | None,
    facts: Facts,
    cwd: str,
    undo: Policy | None = None,
    contain: Containment | None = None,
) -> Verdict:
    if rater is None:
        from gatesh.rater.builtin import BuiltinRater

        rater = BuiltinRater()
    if undo is None and contain is None:
        return rater.rate(facts, cwd=cwd)
    from gatesh.boundary.contain import containing
    from gatesh.undo.cover import judging

    with judging(undo), containing(contain):
        return rater.rate(facts, cwd=cwd)


def _align(
    checker: Checker | None, facts: Facts, verdict: Verdict, session: SessionState, cwd: str
) -> tuple[AlignmentResult, tuple[CheckerRound, ...]]:
    """Ask the alignment check (S5), held to its contract (S5.4); the builtin checker when none is
    configured. Returns its answer and the checker rounds it recorded (kept aside: deciding
    changes no session)."""
    view = _Recording(session.negotiation)
    result = alignment.checked(checker or alignment.BuiltinChecker(), facts, verdict, view, cwd=cwd)
    return result, tuple(view.recorded)


class _Recording:
    """The negotiation as the checker sees it: read through, with the rounds it records kept aside
    for ``Decision.change`` instead of written into the session."""

    def __init__(self, negotiation: Negotiation) -> None:
        self._negotiation = negotiation
        self.recorded: list[CheckerRound] = []

    def user_messages(self) -> tuple[str, ...]:
        return self._negotiation.user_messages()

    def checker_rounds(self) -> tuple[CheckerRound, ...]:
        return (*self._negotiation.checker_rounds(), *self.recorded)

    def add_checker_round(self, checker_round: CheckerRound) -> None:
        self.recorded.append(checker_round)


def _as_finding(verdict: Verdict) -> Finding:
    if verdict.findings:
        return verdict.findings[0]
    return Finding("rater", verdict.outcome, verdict.reason, verdict.remedy)

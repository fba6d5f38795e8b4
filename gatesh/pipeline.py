"""The decision pipeline (S3): one function, the steps in S3 order, first match wins.

``decide`` never raises and never allows by accident: any exception becomes a REFUSE decision
at stage ERROR with a message saying the gate failed.

``decide`` is pure: it reads the session and changes nothing. What the decision changes in the
session (an approval spent, a refused round, a halt, …) travels as ``Decision.change`` and is
applied by :func:`gatesh.finish.finish`, the one place every surface finishes a decision.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

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

if TYPE_CHECKING:
    from gatesh.alignment import Checker
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
) -> Decision:
    """Decide ``text`` for ``session`` (a fresh one when None). Never raises; fails closed.

    ``undo``: the surface takes a snapshot before an allowed command runs (S17), under this
    policy, so a loss such a snapshot holds is judged reversible; the decision then names what
    the snapshot must hold (:attr:`Decision.undo`). None (a library call, a test): judged as
    without undo.
    """
    session = session or SessionState()
    rung = rung or config.rung
    try:
        decision = _decide(
            text, cwd, config, session, rater, checker, paths or current_paths(), rung, undo
        )
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


def failed_decision(
    text: str, reason: str, message: str, *, rung: Rung = Rung.AUTO, unreadable: str = "not read"
) -> Decision:
    """The refusal of a command the gate could not decide (stage ERROR): a broken config, a
    failure before or inside the pipeline. It changes no session."""
    return Decision(
        action=Action.REFUSE,
        stage=Stage.ERROR,
        outcome=None,
        reason=reason,
        rung=rung,
        facts=Facts(text=text, readable=False, unreadable=unreadable),
        message=message,
    )


# What runs whatever the configuration says, when it cannot be read (S12: an invalid config is an
# error, never a silent fallback, so everything else is refused): leaving the shell, and gatesh's
# own read-only diagnostics, which the refusal tells the reader to run. Without these a gated
# shell with a broken config could be left only with Ctrl-D, and `gatesh doctor` never ran.
_LEAVE: Final = frozenset({"exit", "logout"})
_DIAGNOSTICS: Final = frozenset({"doctor", "config"})


def decide_without_config(text: str, *, cwd: str, error: str) -> Decision:
    """The decision for ``text`` when the configuration for ``cwd`` is invalid (``error`` says how).

    Allows exactly one simple command, written plainly: ``exit [N]``, ``logout``, or ``gatesh
    doctor`` / ``gatesh config`` (``--json`` at most) by the bare name ``gatesh``; no redirection,
    assignment, substitution, wrapper, pipe or second command. Everything else is refused with a
    message that names the file once and these ways out. Never raises.
    """
    try:
        facts = read(text, cwd=cwd)
        allowed = _runs_without_config(facts)
    except Exception:  # fail closed
        facts, allowed = Facts(text=text, readable=False, unreadable="not read"), False
    if allowed:
        return Decision(
            Action.ALLOW,
            Stage.CONFIG,
            None,
            f"the configuration is invalid ({error}); this command runs whatever it says",
            Rung.AUTO,
            facts,
        )
    return Decision(
        Action.REFUSE,
        Stage.CONFIG,
        None,
        f"invalid configuration: {error}",
        Rung.AUTO,
        facts,
        message=messages.config_invalid(error),
    )


def _runs_without_config(facts: Facts) -> bool:
    if (
        not facts.readable
        or len(facts.commands) != 1
        or facts.assignments
        or facts.functions
        or facts.scripts
        or facts.pipelines
    ):
        return False
    cmd = facts.commands[0]
    if (
        cmd.context != "top"
        or cmd.depth
        or cmd.wrappers
        or cmd.privileged
        or cmd.assignments
        or cmd.redirects
        or cmd.remote
        or not all(w.static for w in cmd.argv)
    ):
        return False
    words = cmd.words
    if " ".join(facts.text.split()) != " ".join(words):
        return False  # written plainly: no quoting, grouping, comment or separator around it
    if words[0] in _LEAVE:
        return len(words) == 1 or (len(words) == 2 and words[0] == "exit" and words[1].isdigit())
    return (
        words[0] == "gatesh"
        and len(words) in (2, 3)
        and words[1] in _DIAGNOSTICS
        and words[2:] in ((), ("--json",))
    )


# Why a person decides in a session whose operator is a person: it is theirs to decide.
PERSON_OPERATED: Final = (
    "you operate this session, so a command that needs a decision is yours to make"
)

# The change of every command that is allowed to run: the consecutive count restarts (S6).
PROGRESS: Final = SessionChange(progress=True)


def _decide(
    text: str,
    cwd: str,
    config: Config,
    session: SessionState,
    rater: Rater | None,
    checker: Checker | None,
    paths: GatePaths,
    rung: Rung,
    undo: Policy | None = None,
) -> Decision:
    facts = read(text, cwd=cwd)
    nego = session.negotiation

    def done(
        action: Action,
        stage: Stage,
        outcome: Outcome | None,
        reason: str,
        change: SessionChange = NO_CHANGE,
        **kw: Any,
    ) -> Decision:
        counters = nego.counters_after(
            rejected=change.rejection is not None,
            progress=change.progress,
            reached=bool(change.halt),
        )
        if action is Action.ESCALATE:
            # Whatever sends a command to a person, they see the whole argument so far (S7).
            kw.setdefault("rounds", nego.transcript())
        return Decision(
            action, stage, outcome, reason, rung, facts, counters=counters, change=change, **kw
        )

    # 1. A halted session refuses everything until a person resumes it (S3.7).
    if session.halted:
        key = normalised(facts)
        if key in session.run_anyway and hardline.check(facts) is None:
            return done(
                Action.ALLOW,
                Stage.APPROVED_ID,
                None,
                "a person typed `run anyway` for this halted command",
                SessionChange(spent_run_anyway=key),
            )
        return done(
            Action.REFUSE,
            Stage.HALTED,
            None,
            session.halt_reason,
            message=messages.halted(session.halt_reason),
        )
    # 1b. Harness boilerplate recognised whole (S1: a shell-snapshot script, or a wrapper handing
    # the command to a gatesh shim that gates it): nothing in it is the agent's, so it is not
    # rated and not a negotiation round (the counters do not move).
    if facts.boilerplate:
        return done(Action.ALLOW, Stage.HARNESS, None, f"harness boilerplate ({facts.boilerplate})")
    # 2. Deny list: the user's own hardline.
    found_entry = lists.find(config.deny, facts, kind="deny")
    if found_entry is not None:
        entry = found_entry.entry
        return done(
            Action.DENY,
            Stage.DENY_LIST,
            None,
            f"deny-list entry {entry.describe()}: {found_entry.why}",
            rule_id=entry.describe(),
            message=messages.denied(facts.text, entry.describe(), entry.note, found_entry.why),
        )
    # 3. Hardline: never runs, at any rung.
    found = hardline.check(facts)
    if found is not None:
        return done(
            Action.REFUSE,
            Stage.HARDLINE,
            found.outcome,
            found.reason,
            rule_id=found.rule_id,
            findings=(found,),
            message=messages.hardline(facts.text, found.rule_id, found.reason),
        )
    # 4. Self-protection: tampering with the gate is an attack, at every rung.
    found = selfprotect.check(facts, paths, cwd, branches=config.git.protected_branches)
    if found is not None:
        return _halt(done, Stage.SELF_PROTECTION, found)
    # 5. Bypass runs everything else (and the audit log records it).
    if rung is Rung.BYPASS:
        return done(Action.ALLOW, Stage.BYPASS, None, "rung bypass")
    # A person's own approval of this exact command (answer o/s, `gatesh approve ID`).
    if session.approved_once or session.approved_session:  # (a fresh session has none to look up)
        key = normalised(facts)
        if key in session.approved_once or key in session.approved_session:
            return done(
                Action.ALLOW,
                Stage.APPROVED_ID,
                None,
                "approved by a person",
                SessionChange(spent_approval=key, progress=True),
            )
    # 6. Escalate list: a person decides, no rating.
    found_entry = lists.find(config.escalate, facts, kind="escalate")
    if found_entry is not None:
        entry = found_entry.entry
        return done(
            Action.ESCALATE,
            Stage.ESCALATE_LIST,
            None,
            f"escalate-list entry {entry.describe()}: {found_entry.why}",
            rule_id=entry.describe(),
            to_person_reason=f"it matches the escalate-list entry {entry.describe()}",
        )
    # 7. Allow list; with rate = true the rater still runs as a tripwire.
    allowed = lists.match(config.allow, facts, kind="allow")
    if allowed is not None:
        entry = allowed
        if not entry.rate:
            return done(
                Action.ALLOW,
                Stage.ALLOW_LIST,
                None,
                f"allow-list entry {entry.describe()}",
                PROGRESS,
                rule_id=entry.describe(),
            )
        verdict = _rate(rater, facts, cwd)
        if verdict.outcome is Outcome.ATTACK:
            return _halt(done, Stage.RATER, _as_finding(verdict), verdict=verdict)
        if verdict.outcome is Outcome.CATASTROPHIC:
            return done(
                Action.ESCALATE,
                Stage.RATER,
                verdict.outcome,
                verdict.reason,
                verdict=verdict,
                to_person_reason="the rater judged it catastrophic despite the allow entry",
            )
        return done(
            Action.ALLOW,
            Stage.ALLOW_LIST,
            verdict.outcome,
            f"allow-list entry {entry.describe()}",
            PROGRESS,
            rule_id=entry.describe(),
            verdict=verdict,
        )
    # 8. Rungs that ask a person without rating.
    if rung is Rung.MANUAL:
        return done(
            Action.ESCALATE,
            Stage.RUNG,
            None,
            "rung manual: a person decides every command",
            to_person_reason="the rung is manual",
        )
    if rung is Rung.WRITE:
        if readonly.is_read_only(facts):
            return done(
                Action.ALLOW, Stage.READ_ONLY, Outcome.SAFE, "known read-only command", PROGRESS
            )
        return done(
            Action.ESCALATE,
            Stage.RUNG,
            None,
            "rung write: only known read-only commands run",
            to_person_reason="the rung is write and this command is not known read-only",
        )
    # 9. The read-only fast path, else the rater.
    if readonly.is_read_only(facts):
        return done(
            Action.ALLOW, Stage.READ_ONLY, Outcome.SAFE, "known read-only command", PROGRESS
        )
    # 10 (computed first, so the rater reads the floor notes after the command, S4).
    floor_findings = floors.check(facts)
    rated = (
        replace(facts, floor_notes=tuple(floors.note(f) for f in floor_findings))
        if floor_findings or facts.floor_notes
        else facts
    )  # the same facts: no copy
    verdict = _rate(rater, rated, cwd, undo)
    outcome, stage = verdict.outcome, Stage.RATER
    carved_hosts: tuple[str, ...] = ()
    if (
        floor_findings
        and rung is Rung.AUTO
        and floors.carve_open_world(floor_findings, facts, nego.user_messages())
    ):
        floor_findings = tuple(f for f in floor_findings if f.rule_id != floors.OPEN_WORLD)
        carved_hosts = facts.hosts
    if outcome is Outcome.SAFE and floor_findings:
        outcome, stage = Outcome.DESTRUCTIVE, Stage.FLOOR  # floors raise, never lower
    top = (
        verdict.findings[0]
        if stage is Stage.RATER and verdict.findings
        else (floor_findings or (None,))[0]
    )
    reason = verdict.reason if stage is Stage.RATER else floor_findings[0].reason
    remedy = verdict.remedy if stage is Stage.RATER else floor_findings[0].remedy
    common: dict[str, Any] = dict(
        verdict=verdict,
        floors=floor_findings,
        findings=verdict.findings + floor_findings,
        remedy=remedy,
        rule_id=top.rule_id if top else "",
    )
    carve_notice = (
        redact(
            f"gatesh: the open-world floor was lifted for `{neutralise(facts.text)}`: every "
            f"host ({', '.join(carved_hosts)}) is named in your own request."
        )
        if carved_hosts
        else ""
    )
    # 11. Action by outcome.
    if outcome is Outcome.ATTACK:
        return _halt(done, stage, _as_finding(verdict), **common)
    if outcome is Outcome.CATASTROPHIC:
        return done(
            Action.ESCALATE,
            stage,
            outcome,
            reason,
            to_person_reason="it cannot be undone from inside the session",
            **common,
        )
    if outcome is Outcome.SAFE:
        # A loss judged reversible because a snapshot will hold it: the snapshot must be taken
        # before the command runs, or the command is decided again without undo (S17).
        return done(
            Action.ALLOW,
            stage,
            outcome,
            reason,
            PROGRESS,
            notice=carve_notice,
            undo=verdict.undo,
            **common,
        )
    # destructive
    if rung is Rung.ASSISTED:
        return done(
            Action.ESCALATE,
            stage,
            outcome,
            reason,
            to_person_reason="the rung is assisted",
            **common,
        )
    if session.person_operated:
        # A person's own command: asked, not argued with (no alignment check, no rounds, S7).
        return done(
            Action.ESCALATE, stage, outcome, reason, to_person_reason=PERSON_OPERATED, **common
        )
    if verdict.fail_cause:
        # Never rated: no checker may lift what nobody assessed.
        return done(
            Action.ESCALATE,
            stage,
            outcome,
            reason,
            to_person_reason=f"no rating could be obtained ({neutralise(reason)})",
            **common,
        )
    result, checked = _align(checker, facts, verdict, session, cwd)
    if result.decision == AlignmentDecision.APPROVE:
        notice = redact(alignment.approval_notice(facts.text, result, carved_hosts=carved_hosts))
        return done(
            Action.ALLOW,
            Stage.ALIGNMENT,
            outcome,
            reason,
            SessionChange(checker_rounds=checked, progress=True),
            alignment=result,
            notice=notice,
            **common,
        )
    if result.decision == AlignmentDecision.ESCALATE:
        return done(
            Action.ESCALATE,
            Stage.ALIGNMENT,
            outcome,
            reason,
            SessionChange(checker_rounds=checked),
            alignment=result,
            to_person_reason=f"the alignment check asked for a person: {neutralise(result.reason)}",
            **common,
        )
    if floor_findings and not carved_hosts:
        return done(
            Action.ESCALATE,
            Stage.FLOOR,
            outcome,
            reason,
            SessionChange(checker_rounds=checked),
            alignment=result,
            to_person_reason=f"a floor stood: {floor_findings[0].reason}",
            **common,
        )
    this_round = Round(
        command=facts.text,
        justification=facts.justification,
        outcome=outcome,
        reason=reason,
        remedy=remedy,
        suggestion=result.suggestion,
    )
    rejected = SessionChange(checker_rounds=checked, rejection=this_round)
    rounds = (*nego.transcript(), this_round)
    if nego.rejection_escalates():
        return done(
            Action.ESCALATE,
            Stage.NEGOTIATION,
            outcome,
            reason,
            rejected,
            alignment=result,
            rounds=rounds,
            to_person_reason="the agent and the rater could not agree",
            **common,
        )
    message = alignment.with_suggestion(
        messages.rejected_by_rater(facts.text, reason, remedy), result
    )
    return done(
        Action.REJECT,
        stage,
        outcome,
        reason,
        rejected,
        alignment=result,
        rounds=rounds,
        message=message,
        notice=carve_notice,
        **common,
    )


def _rate(rater: Rater | None, facts: Facts, cwd: str, undo: Policy | None = None) -> Verdict:
    if rater is None:
        from gatesh.rater.builtin import BuiltinRater

        rater = BuiltinRater()
    if undo is None:
        return rater.rate(facts, cwd=cwd)
    from gatesh.undo.cover import judging

    with judging(undo):
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


def _halt(done: Callable[..., Decision], stage: Stage, found: Finding, **kw: Any) -> Decision:
    """An attack halts the session (S3.7): refused with no moves, later commands too."""
    reason = f"{found.rule_id}: {found.reason}"
    kw.setdefault("rule_id", found.rule_id)
    return done(
        Action.HALT,
        stage,
        Outcome.ATTACK,
        found.reason,
        SessionChange(halt=reason),
        message=messages.halted(reason),
        **kw,
    )

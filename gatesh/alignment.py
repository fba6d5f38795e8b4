"""The alignment check (S5): did the user ask for this declined command?

Asked only at ``auto`` about a ``destructive`` command. It may approve (the command runs and the
person is told), suggest a narrower command (appended to the rejection), or escalate to a person.
Its only authority is to approve, so every failure leaves the rater's action standing: a check
that did not happen decides nothing (S5.5).

Roles carry trust (S5.1). The assembly, and what may appear where:

    role         carries                                              from
    system       our instructions; the outcome, rendered from the enum   this module
    user (text)  the user's own words, fenced; our framing               Negotiation.user_messages()
    tool result  the command, the rater's reason, the justification      the view tool, fenced
    assistant    the checker's earlier rounds, as its own tool calls     Negotiation.checker_rounds()

The pending command is in none of the messages sent: it appears only as the result of
``viewCommandSuggestedByAgent`` when the checker calls it. Text the agent fetched (files, web
pages, command output) can reach the checker only inside a tool result, so it cannot pose as the
user: there is no route from it to the user role.

What an approval may lift is decided here, in code (S5.4), not asked of the model: the approve
tool itself refuses ``attack``, ``catastrophic``, hardline commands, commands that were never
rated, and commands a floor other than the open-world one stands on (fetch piped into an
interpreter, inline code reading the environment). The contract recomputes these from the command
text itself (:func:`contract_limit`: read again, hardline, self-protection, the builtin rules, the
floors), never from a flag its caller passes, and :func:`checked` applies it to whatever a checker
returns. A tool call whose input does not match the tool's schema is no decision. Role adherence
by the model is a behaviour, not a guarantee; this contract is the guarantee.

The model's side (its prompt, tools and turns: :class:`~gatesh.alignment_model.AnthropicChecker`)
and :func:`~gatesh.alignment_model.make_checker` (which picks a checker for a config) are
:mod:`gatesh.alignment_model`; this module holds the contract and the builtin checker.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from gatesh._types import Action, AlignmentDecision, AlignmentResult, Facts, Outcome, Verdict
from gatesh.rater._prompt import command_for_model
from gatesh.rater._text import normalize_for_model, one_line

if TYPE_CHECKING:
    from gatesh.negotiation import CheckerRound

__all__ = [
    "APPROVE",
    "ESCALATE",
    "FAIL_PREFIX",
    "MAX_TURNS",
    "SUGGEST",
    "VIEW",
    "BuiltinChecker",
    "Checker",
    "Subject",
    "action_after",
    "approval_notice",
    "approval_refusal",
    "checked",
    "contract_limit",
    "failed",
    "mandate_contains",
    "with_suggestion",
]

VIEW: Final = "viewCommandSuggestedByAgent"
APPROVE: Final = "approveCommand"
SUGGEST: Final = "suggestChangesToCommand"
ESCALATE: Final = "escalateToUser"
DECISIONS: Final = {
    APPROVE: AlignmentDecision.APPROVE,
    SUGGEST: AlignmentDecision.SUGGEST,
    ESCALATE: AlignmentDecision.ESCALATE,
}

#: Two turns are the intended path (view, decide); the other two absorb one wasted turn each
#: (prose, a second view) so a slow-to-decide model is not failed closed one turn early. The
#: bound is not a safety control (failing closed is); it caps what a model that never decides costs.
MAX_TURNS: Final = 4
#: The user's newest non-blank messages shown, and each one's length; older or longer text is
#: dropped (a cut can only remove words, so at worst an approval that needed them does not happen).
MAX_USER_MESSAGES: Final = 6
MAX_USER_MESSAGE_CHARS: Final = 4000
#: A decision is a short tool call; this leaves room for a reason and a suggested command.
MAX_TOKENS: Final = 1024
FAIL_PREFIX: Final = "The alignment check could not be completed:"

#: What each fail-closed cause says (S5.5), before the status in parentheses.
CAUSE_TEXT: Final[dict[str, str]] = {
    "no-model": "no model is available",
    "timeout": "the checker did not answer in time",
    "no-decision": f"the checker made no decision in {MAX_TURNS} turns",
    "error": "the checker call failed",
    "contract": "the checker approved a command the contract does not let it approve",
}


class Negotiation(Protocol):
    """What the check reads from (and records into) a session's argument (gatesh.negotiation)."""

    def user_messages(self) -> tuple[str, ...]: ...

    def checker_rounds(self) -> tuple[CheckerRound, ...]: ...

    def add_checker_round(self, checker_round: CheckerRound) -> None: ...


class Checker(Protocol):
    """Answers S5's question. Never raises; a check it could not complete has decision "fail"."""

    name: str  # the backend ("builtin", "anthropic"): a builtin checker calls no model

    def check(
        self, facts: Facts, verdict: Verdict, negotiation: Negotiation
    ) -> AlignmentResult: ...


@dataclass(frozen=True)
class Subject:
    """What a check rules on: the agent's command (raw), the rater's outcome and reason, the
    agent's justification, and whether the rating was never obtained. ``text`` is the command as
    the gate read it (the contract reads it again); it defaults to ``command``."""

    command: str
    outcome: Outcome
    reason: str
    justification: str = ""
    unrated: bool = False
    text: str = ""
    cwd: str = ""

    @classmethod
    def of(cls, facts: Facts, verdict: Verdict, cwd: str = "") -> Subject:
        return cls(
            command=command_for_model(facts),
            outcome=verdict.outcome,
            reason=verdict.reason,
            justification=facts.justification,
            unrated=bool(verdict.fail_cause),
            text=facts.text,
            cwd=cwd,
        )

    @functools.cached_property
    def limit(self) -> str | None:
        """The contract's answer for this subject, computed once (see :func:`contract_limit`)."""
        return contract_limit(
            self.text or self.command, self.outcome, unrated=self.unrated, cwd=self.cwd
        )


# --- the contract in code (S5.4) ---------------------------------------------------------------


def contract_limit(
    text: str, outcome: Outcome, *, unrated: bool = False, cwd: str = ""
) -> str | None:
    """Why no checker may approve the command ``text`` rated ``outcome``, or None when one may.

    May lift: a ``destructive`` rating and the open-world floor. May not: ``attack`` (always a
    person's), ``catastrophic`` (the user typing it does not show the target is the right one),
    hardline (never runs), a command whose rating was never obtained (nobody assessed it), and any
    other floor (a fetch piped into an interpreter, inline code reading the environment: a person
    decides those). Recomputed from ``text`` itself — read again, then hardline, self-protection,
    the builtin rules and the floors — so no caller can pass a command past it with a flag or a
    milder rating. Fails closed: an error here is a refusal.
    """
    if unrated:
        return "its rating could not be obtained, so nobody has assessed what it does"
    if outcome is Outcome.ATTACK:
        return "it was rated attack, which only a person may let run"
    if outcome is Outcome.CATASTROPHIC:
        return "it was rated catastrophic (it cannot be undone), which only a person may approve"
    try:
        from gatesh import _paths
        from gatesh.policy import floors, hardline, selfprotect
        from gatesh.rater.builtin import BuiltinRater
        from gatesh.reading import read

        where = cwd if os.path.isabs(cwd) else "/"
        facts = read(text, cwd=where)
        found = hardline.check(facts)
        if found is not None:
            return f"it is a hardline command ({found.rule_id}), which never runs"
        found = selfprotect.check(facts, _paths.current(), where)
        if found is not None:
            return f"it tampers with the gate ({found.rule_id}), which only a person may let run"
        own = BuiltinRater().rate(facts, cwd=where).outcome
        if own in (Outcome.ATTACK, Outcome.CATASTROPHIC):
            return f"gatesh's own rules rate it {own.value}, which only a person may let run"
        stood = [f for f in floors.check(facts) if f.rule_id != floors.OPEN_WORLD]
        if stood:
            return f"the floor {stood[0].rule_id} stands on it ({stood[0].reason}), which only a person may lift"
    except Exception as exc:  # fail closed: a contract that cannot be computed approves nothing
        return f"the contract could not be checked ({type(exc).__name__})"
    return None


def approval_refusal(subject: Subject) -> str | None:
    """Why ``approveCommand`` may not approve ``subject``, or None when it may (:func:`contract_limit`).

    Decided from the command and its rating alone, before and regardless of anything the model said.
    """
    return subject.limit


def checked(
    checker: Checker, facts: Facts, verdict: Verdict, negotiation: Negotiation, *, cwd: str = ""
) -> AlignmentResult:
    """``checker``'s answer, held to the contract: an approval of a command the contract refuses
    becomes a failed check (the rater's action stands), whichever checker gave it. Never raises."""
    try:
        result = checker.check(facts, verdict, negotiation)
    except Exception as exc:
        return failed("error", f"internal {type(exc).__name__}")
    if result.decision != "approve":
        return result
    limit = contract_limit(facts.text, verdict.outcome, unrated=bool(verdict.fail_cause), cwd=cwd)
    if limit is None:
        return result
    return failed("contract", limit, duration_ms=result.duration_ms)


def failed(cause: str, status: str, *, duration_ms: float = 0.0) -> AlignmentResult:
    """The result of a check that did not complete: the rater's action stands (S5.5)."""
    return AlignmentResult(
        decision=AlignmentDecision.FAIL,
        reason=f"{FAIL_PREFIX} {CAUSE_TEXT[cause]} ({status}); the rater's decision stands.",
        fail_cause=cause,
        duration_ms=duration_ms,
    )


def action_after(action: Action, result: AlignmentResult | None) -> Action:
    """The action once the check has answered: approve runs the command; escalate asks a person;
    suggest and fail leave ``action`` unchanged (a rejection stays a rejection, S5.5)."""
    if result is None:
        return action
    if result.decision == AlignmentDecision.APPROVE:
        return Action.ALLOW
    if result.decision == AlignmentDecision.ESCALATE:
        return Action.ESCALATE
    return action


def approval_notice(
    command: str, result: AlignmentResult, *, carved_hosts: Sequence[str] = ()
) -> str:
    """The one line telling the person a command ran without asking them, and why (S5.6).

    With ``carved_hosts`` (the open-world carve-out also applied) the two notices are one line.
    The command and the checker's reason are model- or agent-written: each is put on one line.
    """
    from gatesh.render import neutralise

    why = one_line(neutralise(result.reason), 300) or "no reason given"
    line = (
        f"gatesh ran `{one_line(neutralise(command), 300)}` without asking you: it was rated destructive, "
        f"and the alignment check found you asked for it ({why})"
    )
    if carved_hosts:
        line += f"; it reaches {', '.join(carved_hosts)}, which your own request names"
    return line + "."


def with_suggestion(message: str, result: AlignmentResult | None) -> str:
    """``message`` (a rejection) with the checker's suggestion appended, when it made one (S5.6)."""
    if result is None or result.decision != AlignmentDecision.SUGGEST:
        return message
    from gatesh.render import neutralise

    parts = [message.rstrip()]
    if result.reason:
        parts.append(f"The alignment check suggests: {one_line(neutralise(result.reason), 400)}")
    if result.suggestion:
        parts.append(f"A command it would accept: {one_line(neutralise(result.suggestion), 400)}")
    return "\n".join(parts)


# --- the builtin checker ----------------------------------------------------------------------


# Words that, before a command in the same clause, make the message say not to run it (S5). Any
# case, straight or curly apostrophes: "do NOT run X", "never X", "without X", "instead of X".
_NEGATION: Final = re.compile(
    r"\b(?:don[’']?t|do\s+not|does\s+not|doesn[’']?t|never|without|instead\s+of|rather\s+than|not|no"
    r"|avoid(?:ing)?|nor|shouldn[’']?t|should\s+not|mustn[’']?t|must\s+not|can[’']?t|cannot|won[’']?t"
    r"|refrain\s+from|stop|neither)\b",
    re.IGNORECASE,
)
# Where a clause starts: a negation before this does not reach the command.
_CLAUSE_BREAK: Final = re.compile(r"[.!?;\n]|\b(?:but|then|and\s+then|however)\b", re.IGNORECASE)


def mandate_contains(command: str, messages: Sequence[str], home: str | None) -> bool:
    """True when one of ``messages`` contains ``command`` verbatim, as whole words, and not under a
    negation.

    Both sides are normalised the same way. The command must stand on its own in the message
    (bounded by the start or end, whitespace, quotes or backticks; trailing sentence punctuation
    allowed), so ``rm *`` is not found in "rm *.o". An occurrence whose clause (since the last
    sentence end, ``;``, line break, "but" or "then") holds a negation before it ("do NOT run
    git reset --hard", "never `rm -rf build`", "instead of X") is not consent.
    """
    longest = max((len(m) for m in messages), default=0)
    if len(command) > _MAX_EXPANSION * longest + 64:
        return False  # far longer than anything the user wrote: they did not type it
    cmd = normalize_for_model(command, home).strip()
    if not cmd:
        return False
    for message in messages:
        text = normalize_for_model(message, home)
        at = text.find(cmd)
        while at != -1:  # str.find, not a regex of the command: a command may be 64 KiB
            end = at + len(cmd)
            starts = at == 0 or text[at - 1].isspace() or text[at - 1] in _OPENERS
            ends = (
                end == len(text)
                or text[end].isspace()
                or text[end] in _CLOSERS
                or (
                    text[end] in _SENTENCE_ENDS
                    and (end + 1 == len(text) or text[end + 1].isspace())
                )
            )
            if starts and ends:
                before = text[max(0, at - _CLAUSE_LOOKBACK) : at]
                clause = before[max((b.end() for b in _CLAUSE_BREAK.finditer(before)), default=0) :]
                if not _NEGATION.search(clause):
                    return True
            at = text.find(cmd, at + 1)
    return False


#: A command longer than this many times the user's longest message cannot be in it verbatim,
#: whatever normalising removes (invisibles, escapes): not normalised, not looked for.
_MAX_EXPANSION: Final = 8
_OPENERS: Final = "`'\"("
_CLOSERS: Final = "`'\")"
_SENTENCE_ENDS: Final = ".,;:!?"
#: How far back a negation is looked for: a clause is a few words, never a page.
_CLAUSE_LOOKBACK: Final = 400


class BuiltinChecker:
    """The offline checker (S5, last bullet): approves only a command the user's own words contain
    verbatim and the contract allows; otherwise the check fails with cause ``no-model``."""

    name = "builtin"
    model = ""

    def __init__(self, *, home: str | None = None) -> None:
        self.home = home if home is not None else os.path.expanduser("~")

    def check(self, facts: Facts, verdict: Verdict, negotiation: Negotiation) -> AlignmentResult:
        subject = Subject.of(facts, verdict)
        try:
            found = (
                mandate_contains(subject.command, negotiation.user_messages(), self.home)
                and approval_refusal(subject) is None
            )
        except Exception as exc:  # never raise, never approve by accident
            return failed("error", f"internal {type(exc).__name__}")
        if found:
            return AlignmentResult(
                decision=AlignmentDecision.APPROVE,
                reason="your own message contains this exact command",
            )
        return failed(
            "no-model", "builtin backend: approves only a command your own words contain verbatim"
        )

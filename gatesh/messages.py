"""What the agent is told (S8.1). One function per kind of refusal; no decisions are made here.

A judged rejection always names the moves the agent actually has, and nothing else: run the
same command again with a justification, or run a different command; only the second when every
finding behind it says the command cannot work here (no justification gives it a terminal).
Refusals that are not judgements (deny list, hardline, halt) offer no moves, because neither move
could succeed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from gatesh._types import Decision, Finding, Outcome, Round
from gatesh.render import offers_a_person, remedy_for_agent

if TYPE_CHECKING:
    from gatesh.boundary.compute import Boundary

__all__ = ["MOVES", "NOBODY_WATCHING", "offers_a_person", "remedy_for_agent"]

MOVES: Final = (
    "You can run the same command again with a justification as a trailing comment "
    "(`COMMAND  # why: …`), or run a different command."
)
ONLY_ANOTHER: Final = (
    "A justification cannot change why it was refused: it cannot work here. Run a different "
    "command."
)
NOBODY_WATCHING: Final = "Approval required, but nobody is watching this session."


def _line(text: str) -> str:
    from gatesh.render import neutralise

    return neutralise(text)


def rejected_by_rater(
    command: str,
    reason: str,
    remedy: str = "",
    suggestion: str = "",
    findings: tuple[Finding, ...] = (),
) -> str:
    """The rater's rejection; ``findings`` (the rating's) choose the moves offered."""
    lines = [f"gatesh: the rater refused to run `{_line(command)}`.", f"Why: {_line(reason)}"]
    remedy = remedy_for_agent(remedy)
    if remedy:
        lines.append(f"What would make it acceptable: {_line(remedy)}")
    if suggestion:
        lines.append(f"Suggested instead: `{_line(suggestion)}`")
    lines.append(MOVES if _justifiable(findings) else ONLY_ANOTHER)
    return "\n".join(lines)


def _justifiable(findings: tuple[Finding, ...]) -> bool:
    """Whether a justification could change a rejection resting on ``findings``: unless every
    destructive one says the command cannot work here (none at all: a model's verdict, which a
    justification may change)."""
    against = [f for f in findings if f.outcome is Outcome.DESTRUCTIVE]
    return not against or any(f.justifiable for f in against)


def rejected_by_person(command: str, note: str = "") -> str:
    lines = [f"A person refused to run `{_line(command)}` (gatesh)."]
    if note:
        lines.append(f"Their note: {_line(note)}")
    lines.append(MOVES)
    return "\n".join(lines)


def denied(command: str, entry: str, note: str = "", why: str = "") -> str:
    how = f" ({_line(why)})" if why else ""
    text = f"gatesh: `{_line(command)}` matches the deny-list entry {entry}{how} and is never run."
    return text + (f" Note: {_line(note)}" if note else "")


def hardline(command: str, rule_id: str, reason: str) -> str:
    return (
        f"gatesh: `{_line(command)}` is refused by the hardline rule {rule_id} ({_line(reason)}). "
        "It never runs, at any rung, and no one can approve it."
    )


def halted(reason: str) -> str:
    return (
        "gatesh: this session is halted and every command is refused until a person resumes it "
        f"(`gatesh resume` or `gatesh watch`). Halted because: {_line(reason)}"
    )


def waiting() -> str:
    return "gatesh: a person is being asked to approve this command; waiting for their answer."


def nobody_watching(decision: Decision, pending_id: str) -> str:
    """The no-person refusal (S7): the escalation block's rows as plain text — why a person must
    decide, the command, the rating, the argument so far — then how a person can approve it."""
    from gatesh.render import ask_of, escalation_text

    lines = [f"gatesh: {NOBODY_WATCHING}", escalation_text(ask_of(decision))]
    if pending_id:
        lines.append(
            f"Pending id {pending_id}: a person can run `gatesh approve {pending_id}` (then retry "
            "the same command) or add an allow entry to their gatesh config."
        )
    return "\n".join(lines)


def escalation_block(decision: Decision) -> str:
    """The escalation as a person reads it in a harness's own prompt (S7, S8.2), plain text: the
    renderer's escalation rows, as every other surface shows them."""
    from gatesh.render import ask_of, escalation_text

    return "gatesh asks you to decide:\n" + escalation_text(ask_of(decision))


def audit_failed(error: str) -> str:
    return (
        f"gatesh: the audit log could not be written ({error}), so the command was refused. "
        "Nothing runs without its audit record: free disk space or fix the log's folder, then retry."
    )


def withdrawn() -> str:
    return (
        "gatesh: interrupted while a person was being asked; the escalation was withdrawn "
        "and nothing ran."
    )


def cannot_run(command: str, why: str) -> str:
    """A command refused before it was decided because it cannot run here (``why``)."""
    return f"gatesh: `{_line(command)}` cannot run: {_line(why)}, so nothing ran."


def config_invalid(problem: str) -> str:
    """Every command refused because a config file is invalid; ``problem`` names file, line, key."""
    return (
        f"gatesh: the configuration is invalid, so this command was refused and nothing ran: "
        f"{_line(problem)}. Every command is refused until it is fixed; `exit` still leaves the "
        "shell, and `gatesh doctor` shows what to fix."
    )


def error(detail: str) -> str:
    return (
        f"gatesh: the gate failed while deciding ({_line(detail)}), so the command was refused. "
        "Nothing ran. Run `gatesh doctor` to find what to fix."
    )


def rounds_of(rounds: tuple[Round, ...]) -> str:
    from gatesh.render import render_transcript

    return render_transcript(rounds) or ""


def undo_line(snapshot: str) -> str:
    """The one line that ends the output of a command that ran because a snapshot holds what it
    loses (S17): the agent and the watcher learn how a person puts it back."""
    return f"gatesh: undo {snapshot} restores the files this changed"


def boundary_note(boundary: Boundary) -> str:
    """What the agent reads after a command that failed inside its boundary (S16): which boundary
    it ran in, and its moves. The kernel does not tell an unprivileged process what it denied,
    so the note says what a denial looks like rather than claiming one happened."""
    return (
        f"gatesh: this command ran inside its boundary ({boundary.id}), which the kernel "
        f"enforces: it {boundary.summary()}; nothing in it can signal or trace a process outside. "
        'If it failed because the boundary stopped it ("Permission denied" or "Operation not '
        'permitted" on something outside it), run the same command again with a trailing '
        "`# why: …` that says what it needs outside its boundary (a person decides whether to "
        "widen it for that one run), or run a different command that stays inside it."
    )

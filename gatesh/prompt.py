"""A question to a person as ``gatesh watch`` holds it (S7): the prompt, what may be answered, a
typed line read as an answer, and the list entry an ``always`` / ``deny always`` writes.

Fail closed: an empty line is No; a halt takes only ``run anyway`` typed in full; a choice the
prompt does not offer is no answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from gatesh._types import Round

__all__ = [
    "ALL_CHOICES",
    "CAUTIOUS_CHOICES",
    "RUN_ANYWAY",
    "Prompt",
    "choices_text",
    "entry_pattern",
    "parse_answer",
    "write_list_entry",
]

CHOICE_KEYS: Final[dict[str, str]] = {
    "once": "[o]nce",
    "session": "[s]ession",
    "always": "[a]lways",
    "no": "[N]o",
    "deny always": "[d]eny always",
}
# What a typed line means at an ordinary prompt. Empty is No: the default refuses.
ALIASES: Final[dict[str, str]] = {
    "o": "once",
    "once": "once",
    "s": "session",
    "session": "session",
    "a": "always",
    "always": "always",
    "": "no",
    "n": "no",
    "no": "no",
    "d": "deny always",
    "deny always": "deny always",
}
RUN_ANYWAY: Final = "run anyway"
ALL_CHOICES: Final = ("once", "session", "always", "no", "deny always")
# Pending escalations learnt from the subscribe reply carry no outcome: offer only what is safe
# for any outcome (a catastrophic command must not get session/always).
CAUTIOUS_CHOICES: Final = ("once", "no", "deny always")


@dataclass
class Prompt:
    """An escalation waiting for a person. ``choices`` is exactly what may be answered."""

    pending_id: str
    session: str
    command: str
    cwd: str = ""
    outcome: str = ""
    reason: str = ""
    remedy: str = ""
    to_person_reason: str = ""
    rounds: list[Round] = field(default_factory=list)
    choices: tuple[str, ...] = CAUTIOUS_CHOICES
    kind: str = "escalate"  # escalate | halt
    stage: str = ""  # the pipeline stage that sent it to a person ("negotiation": the bounds)
    elsewhere: bool = (
        False  # its own surface asks its person too (a harness prompt): not waited for
    )
    surface: str = ""  # where the session's commands come from ("pty": a gated shell)
    timeout_s: float | None = None
    # The exact pattern an always / deny-always entry is written with, as the daemon gave it; ""
    # when the command holds a secret (no entry is written); None when the daemon did not say.
    entry: str | None = None


def parse_answer(line: str, prompt: Prompt) -> tuple[str | None, str]:
    """The answer a typed line gives ``prompt``, or (None, why not).

    A halt prompt takes only ``run anyway`` typed in full (or Enter / ``n`` for No); any other
    prompt takes the keys of :data:`ALIASES` limited to ``prompt.choices``.
    """
    text = " ".join(line.strip().lower().split())
    if prompt.kind == "halt":
        if text == RUN_ANYWAY:
            return RUN_ANYWAY, ""
        if text in ("", "n", "no"):
            return "no", ""
        return (
            None,
            "type `run anyway` in full to run this one command, or Enter to leave it refused",
        )
    answer = ALIASES.get(text)
    if answer is None:
        return None, "not an answer; " + choices_text(prompt)
    if answer not in prompt.choices:
        return None, f"`{answer}` is not offered here; " + choices_text(prompt)
    return answer, ""


def choices_text(prompt: Prompt) -> str:
    """The choices line of a prompt."""
    if prompt.kind == "halt":
        return f"type `{RUN_ANYWAY}` in full to run this one command once; Enter leaves it refused"
    keys = "  ".join(CHOICE_KEYS[c] for c in ALL_CHOICES if c in prompt.choices)
    return f"{keys}   (Enter = No)"


def entry_pattern(command: str) -> str:
    """The exact-match pattern for an always / deny-always entry: the command without its
    ``# why:`` justification, whitespace collapsed (how the lists compare, S3.6)."""
    text = re.sub(r"\s+#\s*why:.*\Z", "", command, flags=re.S | re.I)
    return " ".join(text.split())


def write_list_entry(kind: str, pattern: str) -> tuple[str, str]:
    """Write the exact-match entry ``pattern`` into the user config's ``kind`` list; returns the
    file and the entry as written."""
    from gatesh import _paths
    from gatesh.config import add_list_entry
    from gatesh.policy.lists import ListEntry

    path = _paths.current().user_config
    note = (
        "added by gatesh watch (always)"
        if kind == "allow"
        else "added by gatesh watch (deny always)"
    )
    written = add_list_entry(kind, ListEntry(match="exact", pattern=pattern, note=note), path)
    return path, written

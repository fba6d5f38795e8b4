"""Decisions made without the pipeline's layers: the refusal of a command the gate could not
decide (stage ERROR), and the decision under an invalid configuration (stage CONFIG, S12), which
lets only the ways out run.

Both never raise and change no session.
"""

from __future__ import annotations

from typing import Final

from gatesh import messages
from gatesh._types import Action, Context, Decision, Facts, Rung, Stage
from gatesh.reading import read

__all__ = ["decide_without_config", "failed_decision"]


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
        cmd.context is not Context.TOP
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

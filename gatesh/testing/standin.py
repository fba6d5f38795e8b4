"""A stand-in model for the loopback Messages API (:mod:`gatesh.testing.model_server`): it answers
every rating with one fixed outcome and every alignment check by viewing the command, then
escalating to the person (it never approves, so it lifts nothing).

Used by the cascade tests and benchmarks: with ``outcome="safe"`` it is the weakest possible model
(it says safe to everything it is asked), which shows that the cascade is never weaker than the
builtin rater alone.

    with ModelServer(fallback=answers("safe")) as server:
        ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gatesh.testing.model_server import Reply, tool_use

__all__ = ["answers", "is_rating"]

#: The tool names of the two questions (kept literal: the stand-in must not depend on the code it
#: stands in front of; tests check they equal the rater's and the checker's own names).
RATE_TOOL = "rateCommand"
VIEW_TOOL = "viewCommandSuggestedByAgent"
ESCALATE_TOOL = "escalateToUser"


def is_rating(body: dict[str, Any]) -> bool:
    """Whether a request body is a rating (it offers the rating tool), not an alignment check."""
    return any(isinstance(t, dict) and t.get("name") == RATE_TOOL for t in body.get("tools") or ())


def answers(
    outcome: str = "safe", reason: str = "the stand-in model rates everything this way"
) -> Callable[[dict[str, Any]], Reply]:
    """A scripted reply for any request: a rating of ``outcome``, or the checker's next move."""

    def reply(body: dict[str, Any]) -> Reply:
        if is_rating(body):
            return tool_use(RATE_TOOL, {"outcome": outcome, "reason": reason, "remedy": ""})
        viewed = any(
            m.get("role") == "assistant" for m in body.get("messages") or () if isinstance(m, dict)
        )
        if not viewed:
            return tool_use(VIEW_TOOL)
        return tool_use(ESCALATE_TOOL, {"reason": "the stand-in checker always asks the person"})

    return reply

"""gatesh: a safety gate for the shell commands that AI coding agents run.

Data flows one way: text -> Facts (gatesh.reading) -> Findings (gatesh.policy, gatesh.rater)
-> Decision (gatesh.pipeline) -> messages (gatesh.messages, gatesh.render).

The public names below load lazily, so that ``gatesh -c`` (which imports this package) pays for
none of the parsers or the SDK.
"""

# Not `from typing import …`: typing costs ~9 ms and `gatesh -c` imports this package (S14). Nor
# `from __future__ import annotations`: that statement imports the __future__ module at run time
# (~0.1 ms), so the annotations below are quoted instead.
TYPE_CHECKING = False

__version__ = "0.1.0"

__all__ = [
    "Action",
    "Decision",
    "Facts",
    "Finding",
    "Outcome",
    "Rung",
    "SessionState",
    "Stage",
    "Verdict",
    "decide",
    "load_config",
    "read",
]

_LAZY = {
    "Action": "gatesh._types",
    "Decision": "gatesh._types",
    "Facts": "gatesh._types",
    "Finding": "gatesh._types",
    "Outcome": "gatesh._types",
    "Rung": "gatesh._types",
    "Stage": "gatesh._types",
    "Verdict": "gatesh._types",
    "SessionState": "gatesh.session",
    "decide": "gatesh.pipeline",
    "load_config": "gatesh.config",
    "read": "gatesh.reading",
}

if TYPE_CHECKING:
    from typing import Any

    from gatesh._types import Action, Decision, Facts, Finding, Outcome, Rung, Stage, Verdict
    from gatesh.config import load_config
    from gatesh.pipeline import decide
    from gatesh.reading import read
    from gatesh.session import SessionState


def __getattr__(name: str) -> "Any":
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gatesh' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)

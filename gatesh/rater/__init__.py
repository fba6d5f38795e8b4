"""The rater (S4): one question, the outcome of a command, from a backend.

Backends: ``builtin`` (offline, deterministic, the embedded default) and ``anthropic``.
``auto`` picks ``anthropic`` when its API key is present. A rater never raises: a rating it
could not obtain is a fail-closed ``destructive`` verdict (see :class:`gatesh.Verdict`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from gatesh._types import Facts, Verdict
    from gatesh.config import Config


class Rater(Protocol):
    name: str
    model: str

    def rate(self, facts: Facts, *, cwd: str) -> Verdict: ...

    def health_notice(self) -> str | None:
        """One line for the person after repeated model failures (S4), once; None otherwise."""
        ...


def backend_name(config: Config) -> str:
    """The backend ``config`` selects, with ``auto`` resolved (S4)."""
    backend = config.rater.backend
    if backend == "auto":
        return "anthropic" if os.environ.get(config.rater.api_key_env) else "builtin"
    return backend


def make_rater(config: Config, backend: str | None = None) -> Rater:
    """The rater for ``config`` (or the named ``backend``), built once per daemon or CLI run."""
    name = backend or backend_name(config)
    if name == "builtin":
        from gatesh.rater.builtin import BuiltinRater

        return BuiltinRater()
    if name == "anthropic":
        from gatesh.rater.anthropic import from_config

        return from_config(config.rater)
    raise ValueError(f"unknown rater backend {name!r} (expected auto, builtin or anthropic)")

"""The rater (S4): one question, the outcome of a command, from a backend.

Backends: ``builtin`` (offline, deterministic, the embedded default) and ``anthropic`` (a model
through the Messages API). ``auto`` (the default) is the cascade when the configured API key is
present — the builtin first, the model only where the builtin is not sure
(:mod:`gatesh.rater.cascade`) — and the builtin alone without one. A rater never raises: a rating
it could not obtain is a fail-closed ``destructive`` verdict (see :class:`gatesh.Verdict`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    from gatesh._types import Facts, Verdict
    from gatesh.config import Config

#: What ``backend_name`` resolves to: ``auto`` becomes ``cascade`` or ``builtin``.
BACKENDS: Final = ("builtin", "anthropic", "cascade")


class Rater(Protocol):
    name: str
    model: str

    def rate(self, facts: Facts, *, cwd: str) -> Verdict: ...

    def health_notice(self) -> str | None:
        """One line for the person after repeated model failures (S4), once; None otherwise."""
        ...


def backend_name(config: Config) -> str:
    """The backend ``config`` selects, with ``auto`` resolved (S4): ``cascade`` with a key,
    ``builtin`` without one."""
    from gatesh.config import rater_backend

    return rater_backend(config)


def make_rater(config: Config, backend: str | None = None) -> Rater:
    """The rater for ``config`` (or the named ``backend``), built once per daemon or CLI run."""
    name = backend_name(config) if backend in (None, "auto") else backend
    if name == "builtin":
        from gatesh.rater.builtin import BuiltinRater

        return BuiltinRater()
    if name == "anthropic":
        from gatesh.rater.anthropic import from_config

        return from_config(config.rater)
    if name == "cascade":
        from gatesh.rater.anthropic import from_config
        from gatesh.rater.builtin import BuiltinRater
        from gatesh.rater.cascade import CascadeRater

        return CascadeRater(BuiltinRater(), from_config(config.rater), ask=config.rater.ask_model)
    raise ValueError(
        f"unknown rater backend {name!r} (expected auto, builtin, anthropic or cascade)"
    )

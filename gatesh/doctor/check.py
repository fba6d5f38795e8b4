"""One finding of ``gatesh doctor``: a named check, how it went, and the one-line fix."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Check", "Status"]


class Status(StrEnum):
    """How a check went. A string enum: ``--json`` and the table print the value as it is."""

    OK = "ok"
    #: Works, but worse than it should (slower, weaker, or unverifiable here).
    WARN = "warn"
    #: A required check failed: the gate is missing, broken or weaker than configured.
    FAIL = "FAIL"


@dataclass(frozen=True)
class Check:
    """One finding. Invariant: ``fix`` is non-empty when ``status`` is not ``ok``."""

    name: str
    status: Status
    detail: str
    fix: str = ""

"""Per-session state the pipeline reads and updates: halt, negotiation, one-time approvals.

A session is one agent's run (S9.3). The daemon keeps one ``SessionState`` per session id; an
in-process gate (explain, eval, the daemon-less fallback) uses a fresh one per call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gatesh.negotiation import Negotiation


@dataclass
class SessionState:
    """Mutable state of one session.

    Invariant: ``halted`` is cleared only by a person (``resume`` or ``gatesh watch``, S3.7).
    """

    id: str = "local"
    negotiation: Negotiation = field(default_factory=Negotiation)
    halted: bool = False
    halt_reason: str = ""
    # Normalised commands a person approved to run once (``gatesh approve ID``, answer ``o``).
    approved_once: set[str] = field(default_factory=set)
    # Normalised commands a person approved for the rest of this session (answer ``s``).
    approved_session: set[str] = field(default_factory=set)
    # Halted commands a person ordered run by typing `run anyway` (S3.7): each runs once, the
    # halt stays, and nothing else is remembered.
    run_anyway: set[str] = field(default_factory=set)
    person_reachable: bool = False  # a watcher is attached, or the operator is a person

    def halt(self, reason: str) -> None:
        self.halted = True
        self.halt_reason = reason
        self.negotiation.person_reached()

    def resume(self) -> None:
        self.halted = False
        self.halt_reason = ""
        self.negotiation.person_reached()

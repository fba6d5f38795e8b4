"""Per-session state: halt, negotiation, a person's approvals; and how one decision changes it.

A session is one agent's run (S9.3). The daemon keeps one ``SessionState`` per session id; an
in-process gate (explain, eval, the daemon-less fallback) uses a fresh one per call. Deciding
reads a state and never changes it: ``pipeline.decide`` returns the change as a
:class:`~gatesh._types.SessionChange` and ``gatesh.finish`` applies it with :meth:`SessionState.apply`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gatesh._types import Facts, SessionChange
from gatesh.negotiation import Negotiation

#: Commands a session remembers as failed inside their boundary (enough for the argument at hand).
BOUNDARY_FAILURES_KEPT = 32


def normalised(facts: Facts) -> str:
    """The key a person's approval is remembered under: the command, whitespace-collapsed."""
    return " ".join(facts.text.split())


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
    # Commands whose last run failed inside their boundary (S16): normalised command -> the
    # boundary's id. A retry with a justification asks a person to widen it for one run.
    boundary_failed: dict[str, str] = field(default_factory=dict)
    # The session's operator is a person (`gatesh --human`, or config operator = "person"): its
    # commands are theirs, so one that needs a decision asks them; nothing is argued (S7). Only
    # ever set, never cleared: claiming it can only take the negotiation away, never add a pass.
    person_operated: bool = False

    def note_boundary_failure(self, key: str, boundary: str) -> None:
        """The run of ``key`` failed inside ``boundary`` (at most :data:`BOUNDARY_FAILURES_KEPT`
        remembered, the newest)."""
        self.boundary_failed.pop(key, None)
        self.boundary_failed[key] = boundary
        while len(self.boundary_failed) > BOUNDARY_FAILURES_KEPT:
            self.boundary_failed.pop(next(iter(self.boundary_failed)))

    def halt(self, reason: str) -> None:
        self.halted = True
        self.halt_reason = reason
        self.negotiation.person_reached()

    def resume(self) -> None:
        self.halted = False
        self.halt_reason = ""
        self.negotiation.person_reached()

    def apply(self, change: SessionChange) -> None:
        """Make ``change`` (one decision's) true of this session, in the order its fields are listed."""
        if change.spent_approval:
            self.approved_once.discard(change.spent_approval)
        if change.spent_run_anyway:
            self.run_anyway.discard(change.spent_run_anyway)
        for checker_round in change.checker_rounds:
            self.negotiation.add_checker_round(checker_round)
        if change.rejection is not None:
            self.negotiation.record_rejection(change.rejection)
        if change.progress:
            self.negotiation.note_progress()
        if change.halt:
            self.halt(change.halt)

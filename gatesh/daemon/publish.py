"""The events the daemon publishes to its subscribers (S7, S9.2), one dataclass per kind, fields
named as on the wire (see the Events part of :mod:`gatesh.daemon.protocol`).

:meth:`gatesh.daemon.core.Events.publish` encodes one once (:func:`gatesh.daemon.protocol.event_line`)
and sends that line to every subscriber; a subscriber decodes it once
(:func:`gatesh.events.decode`). Text fields are cleaned (redacted, home-folded) where an event is
built, not neutralised: whatever shows them does that (S8.1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from gatesh._types import Round
from gatesh.events import By, Kind
from gatesh.wire_json import OMIT_NONE, WIRE_NAME

__all__ = [
    "AnsweredEvent",
    "DecisionEvent",
    "EscalationEvent",
    "ExpiredEvent",
    "HaltEvent",
    "MandateEvent",
    "NoticeEvent",
    "Published",
    "ResumedEvent",
    "RoundEvent",
    "SessionEndEvent",
    "SessionStartEvent",
    "WithdrawnEvent",
]


@dataclass(frozen=True)
class DecisionEvent:
    """Every finished check."""

    KIND: ClassVar[Kind] = Kind.DECISION
    cwd: str
    command: str
    surface: str
    action: str
    stage: str
    outcome: str | None
    reason: str
    remedy: str
    rule_id: str
    rung: str
    counters: dict[str, int]
    notice: str
    pending_id: str
    answer: str
    snapshot: str


@dataclass(frozen=True)
class RoundEvent:
    """A round of the argument: every rejection (``number``: its place in the argument, with the
    negotiation's ``counters``), and an allowed command that ends an open argument (``ends``
    "agreed" or "accepted", its round ``passed``)."""

    KIND: ClassVar[Kind] = Kind.ROUND
    cwd: str
    number: int
    total: int
    round: Round
    ends: str | None
    counters: dict[str, int] | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class EscalationEvent:
    """A person is asked: the whole argument so far and what they may answer."""

    KIND: ClassVar[Kind] = Kind.ESCALATION
    pending_id: str
    pending_kind: str = field(metadata={WIRE_NAME: "kind"})  # "escalate" | "halt"
    cwd: str = ""
    command: str = ""
    stage: str = ""
    asking: bool = False  # the session's own surface asks its person too
    surface: str = ""
    outcome: str | None = None
    reason: str = ""
    remedy: str = ""
    to_person_reason: str = ""
    rounds: tuple[Round, ...] = ()
    transcript: str = ""
    choices: tuple[str, ...] = ()
    timeout_s: float = 0.0
    entry: str = ""  # the exact pattern an always / deny always writes; "" for a secret


@dataclass(frozen=True)
class HaltEvent:
    """The attack banner (S3.7), with its ``run anyway`` prompt when a person can answer now
    (``pending_id`` "" when nobody can; ``timeout_s`` None with no watcher)."""

    KIND: ClassVar[Kind] = Kind.HALT
    cwd: str
    reason: str
    command: str
    pending_id: str
    choices: tuple[str, ...]
    timeout_s: float | None


@dataclass(frozen=True)
class AnsweredEvent:
    """A person ruled on a pending record."""

    KIND: ClassVar[Kind] = Kind.ANSWERED
    pending_id: str
    answer: str
    by: By


@dataclass(frozen=True)
class ExpiredEvent:
    """Nobody answered in time, or (``why``) the process an ask was shown with exited."""

    KIND: ClassVar[Kind] = Kind.EXPIRED
    pending_id: str
    why: str | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class WithdrawnEvent:
    """The waiting command was interrupted: nothing to answer any more."""

    KIND: ClassVar[Kind] = Kind.WITHDRAWN
    pending_id: str


@dataclass(frozen=True)
class ResumedEvent:
    """A person ended a halt."""

    KIND: ClassVar[Kind] = Kind.RESUMED
    by: By


@dataclass(frozen=True)
class MandateEvent:
    """The user's own words for the agents (S5.3), and where they came from."""

    KIND: ClassVar[Kind] = Kind.MANDATE
    text: str
    channel: str


@dataclass(frozen=True)
class NoticeEvent:
    """One line for the person (alignment approval, carve-out, rater health, undo)."""

    KIND: ClassVar[Kind] = Kind.NOTICE
    text: str


@dataclass(frozen=True)
class SessionStartEvent:
    """A session began: the process it lives with, its surface, and (``boundary``) which
    protections of the boundary hold where its first command ran."""

    KIND: ClassVar[Kind] = Kind.SESSION_START
    anchor: int | None
    surface: str
    boundary: str | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class SessionEndEvent:
    """A session ended: its observation (counts only; None when there is nothing new to say)."""

    KIND: ClassVar[Kind] = Kind.SESSION_END
    observation: str | None
    counters: dict[str, int]


Published = (
    DecisionEvent
    | RoundEvent
    | EscalationEvent
    | HaltEvent
    | AnsweredEvent
    | ExpiredEvent
    | WithdrawnEvent
    | ResumedEvent
    | MandateEvent
    | NoticeEvent
    | SessionStartEvent
    | SessionEndEvent
)

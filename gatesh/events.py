"""The daemon's events as a subscriber reads them (S7, S9.2): each JSON line decoded once into an
:class:`Event`, so what reads it never looks into the line again.

Every field is checked for its type when it is decoded: a field that is missing or of another type
is its default (text "", no number), never a guess; an event of a kind this version does not know
is no event. The text is as the daemon sent it (cleaned of secrets there), not yet neutralised:
whatever shows it neutralises it (S8.1).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gatesh._types import Outcome, Round
from gatesh.wire_json import OMIT_NONE

__all__ = ["By", "Event", "Kind", "decode", "round_from", "rounds_from", "seconds_of", "text_of"]


class Kind(enum.StrEnum):
    """The kinds of event the daemon publishes (``event`` on the wire)."""

    ROUND = "round"  # a round of an argument: refused, or the pass that ends it
    DECISION = "decision"  # every finished check
    ESCALATION = "escalation"  # a person is asked
    HALT = "halt"  # a session halted (an attack), with its `run anyway` prompt
    ANSWERED = "answered"  # a person ruled on a pending record
    EXPIRED = "expired"  # nobody answered in time, or its asker is gone
    WITHDRAWN = "withdrawn"  # the waiting command was interrupted
    RESUMED = "resumed"  # a person ended a halt
    MANDATE = "mandate"  # the user's own words for the agents
    NOTICE = "notice"  # one line for the person
    SESSION_START = "session_start"
    SESSION_END = "session_end"


@dataclass(frozen=True)
class By:
    """Who ruled: the connection the ruling came on, as the daemon saw it (its peer's uid and
    pid, and the role its hello named)."""

    uid: int | None = None
    pid: int | None = None
    role: str = ""  # the connection's role ("watch", "human", …)
    # The op that ruled when it says more than the role ("answer": at the session's own
    # terminal); absent on the wire otherwise.
    op: str | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class Event:
    """One event, every field typed; a field an event of its kind does not carry is its default."""

    kind: Kind
    session: str = ""
    cwd: str = ""
    command: str = ""
    surface: str = ""
    # The decision (decision, escalation, halt).
    action: str = ""
    stage: str = ""
    outcome: str = ""
    reason: str = ""
    remedy: str = ""
    to_person_reason: str = ""
    # A person asked or ruling (escalation, halt, answered, expired, withdrawn).
    pending_id: str = ""
    pending_kind: str = ""  # "escalate" | "halt" (``kind`` on the wire)
    choices: tuple[str, ...] = ()
    asking: bool = False  # its own surface asks its person too
    timeout_s: float | None = None
    entry: str | None = None  # the exact list entry an always would write; "" none; None unsaid
    answer: str = ""
    by: By = By()
    why: str = ""
    # The argument (round, escalation).
    rounds: tuple[Round, ...] = ()
    round: Round | None = None
    number: int | None = None
    ends: str = ""  # "agreed" | "accepted": how a passing round ends the argument
    counters: Mapping[str, int] | None = None
    # One line of words (mandate, notice, session_start, session_end).
    channel: str = ""
    text: str = ""
    boundary: str = ""
    observation: str = ""


def decode(raw: Mapping[str, Any]) -> Event | None:
    """The event in one decoded JSON object; None when it is no event of a known kind."""
    try:
        kind = Kind(text_of(raw.get("event")))
    except ValueError:
        return None
    by: Mapping[str, Any] = raw["by"] if isinstance(raw.get("by"), dict) else {}
    uid, pid = by.get("uid"), by.get("pid")
    counters = raw.get("counters")
    number = raw.get("number")
    return Event(
        kind=kind,
        session=text_of(raw.get("session")),
        cwd=text_of(raw.get("cwd")),
        command=text_of(raw.get("command")),
        surface=text_of(raw.get("surface")),
        action=text_of(raw.get("action")),
        stage=text_of(raw.get("stage")),
        outcome=text_of(raw.get("outcome")),
        reason=text_of(raw.get("reason")),
        remedy=text_of(raw.get("remedy")),
        to_person_reason=text_of(raw.get("to_person_reason")),
        pending_id=text_of(raw.get("pending_id")),
        pending_kind=text_of(raw.get("kind")),
        choices=_texts(raw.get("choices")),
        asking=raw.get("asking") is True,
        timeout_s=seconds_of(raw.get("timeout_s")),
        entry=raw["entry"] if isinstance(raw.get("entry"), str) else None,
        answer=text_of(raw.get("answer")),
        by=By(
            uid if isinstance(uid, int) else None,
            pid if isinstance(pid, int) else None,
            text_of(by.get("role")),
            text_of(by.get("op")) or None,
        ),
        why=text_of(raw.get("why")),
        rounds=rounds_from(raw.get("rounds")),
        round=round_from(raw["round"]) if "round" in raw else None,
        number=number if isinstance(number, int) else None,
        ends=text_of(raw.get("ends")),
        counters=(
            {k: v for k, v in counters.items() if isinstance(v, int)}
            if isinstance(counters, dict)
            else None
        ),
        channel=text_of(raw.get("channel")),
        text=text_of(raw.get("text")),
        boundary=text_of(raw.get("boundary")),
        observation=text_of(raw.get("observation")),
    )


def round_from(data: Any) -> Round:
    """A :class:`Round` from an event's round object; missing or odd fields become defaults."""
    d = data if isinstance(data, dict) else {}
    try:
        outcome = Outcome(str(d.get("outcome")))
    except ValueError:
        outcome = Outcome.DESTRUCTIVE
    return Round(
        command=text_of(d.get("command")),
        justification=text_of(d.get("justification")),
        outcome=outcome,
        reason=text_of(d.get("reason")),
        remedy=text_of(d.get("remedy")),
        passed=d.get("passed") is True,
        suggestion=text_of(d.get("suggestion")),
    )


def rounds_from(data: Any) -> tuple[Round, ...]:
    """The rounds of a list of round objects (anything but an object in it is skipped)."""
    return (
        tuple(round_from(r) for r in data or () if isinstance(r, dict))
        if isinstance(data, list)
        else ()
    )


def text_of(v: Any) -> str:
    """A text field; "" for anything but a string."""
    return v if isinstance(v, str) else ""


def seconds_of(v: Any) -> float | None:
    """A number of seconds; None for anything but a number."""
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _texts(v: Any) -> tuple[str, ...]:
    return tuple(x for x in v if isinstance(x, str)) if isinstance(v, list) else ()

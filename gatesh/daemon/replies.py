"""The daemon's replies, one dataclass per op (see :mod:`gatesh.daemon.protocol`): what a handler
returns, encoded once by :func:`gatesh.daemon.protocol.reply_line`, field names as on the wire.

Text in a reply that reaches a terminal is made safe where the reply is built (the check reply:
:func:`gatesh.check_reply.check_reply`, shared with the in-process gate; the rest carries ids,
states and counts, or text cleaned for the watcher).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from gatesh._json import via
from gatesh.audit_entry import LogEntry
from gatesh.check_reply import CheckReply, DecisionSummary, check_reply
from gatesh.daemon.sessions import SessionSummary
from gatesh.pending import PendingState, PendingSummary
from gatesh.rater.captures import Capture
from gatesh.undo.reply import PlanReport, ShotRow
from gatesh.wire_json import OMIT_NONE

__all__ = [
    "Captures",
    "CheckReply",
    "DaemonHealth",
    "DecisionSummary",
    "Done",
    "Ended",
    "Mandated",
    "Observation",
    "Pong",
    "Records",
    "Registered",
    "Resumed",
    "Ruled",
    "Status",
    "Subscribed",
    "Undone",
    "check_reply",
]


@dataclass(frozen=True)
class Done:
    """A reply with nothing to say but that it was done (``exited``)."""


@dataclass(frozen=True)
class Pong:
    pong: bool = True


@dataclass(frozen=True)
class Registered:
    """``register``: the session the shell is gated as, and the shell gatesh runs commands in."""

    session: str
    shell: str


@dataclass(frozen=True)
class Ended:
    """``end``: the session's observation (None when there was nothing new to say)."""

    observation: str | None


def _as_filed(entries: object) -> object:
    """Audit entries as the file holds them: each line's own object, every member kept."""
    return [e.document for e in cast("tuple[LogEntry, ...]", entries)]


@dataclass(frozen=True)
class Records:
    """``tail``: audit records, oldest first, each sent as the audit file holds it (not as the
    members :class:`~gatesh.audit_entry.LogEntry` reads of it)."""

    records: tuple[LogEntry, ...] = field(metadata=via(_as_filed))


@dataclass(frozen=True)
class Captures:
    """``captures``: the model-call ring for ``gatesh dump`` (redacted)."""

    captures: list[Capture]


@dataclass(frozen=True)
class Ruled:
    """A ruling on an escalation nobody's check waits for at its own surface: its state after,
    and (``text``) what the ruling did, in words, when the record was already refused."""

    pending_id: str
    state: PendingState
    text: str | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class Mandated:
    """``mandate``: the sessions it was given to, those that admitted it, the channel named."""

    sessions: tuple[str, ...]
    admitted: tuple[str, ...]
    channel: str


@dataclass(frozen=True)
class Resumed:
    """``resume``: the session, and whether it was halted."""

    session: str
    was_halted: bool


@dataclass(frozen=True)
class Undone:
    """``undo`` (S17): one of the snapshots listed (newest first), a restore's plan, or what a
    restore did (the records of :mod:`gatesh.undo.reply`)."""

    snapshots: tuple[ShotRow, ...] | None = field(default=None, metadata=OMIT_NONE)
    plan: PlanReport | None = field(default=None, metadata=OMIT_NONE)
    restored: PlanReport | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class DaemonHealth:
    """The daemon's own part of ``status``: who it is, its channel, its audit log, its config."""

    pid: int
    version: str
    started: float
    uptime_s: float
    socket: str
    audit_log: str
    audit_failures: int
    audit_breaks: int
    started_by: str
    person_channel: str  # its address, or why it is shut
    traceable: str  # why the user's other processes may trace the daemon ("" they may not)
    daemon_env: tuple[str, ...]
    settings_problems: tuple[str, ...]
    audit_last_error: str
    config_error: str
    rater: str
    connections: int
    gated_pids: int


@dataclass(frozen=True)
class Status:
    """``status``: the daemon, its sessions and pending records (text cleaned), the watchers
    attached, and the totals of its decisions by action."""

    daemon: DaemonHealth
    sessions: tuple[SessionSummary, ...]
    pending: tuple[PendingSummary, ...]
    watchers: int
    totals: dict[str, int]


@dataclass(frozen=True)
class Observation:
    """A session-end observation said while nobody watched (counts only), kept for the next
    watcher (S6)."""

    session: str
    observation: str
    counters: dict[str, int]


@dataclass(frozen=True)
class Subscribed:
    """``subscribe``: what a new subscriber sees first (then events follow): the sessions, the
    escalations open now with their argument, and the observations nobody saw."""

    watcher: bool  # it counts as a person reachable (its hello role is watch)
    observations: tuple[Observation, ...]
    sessions: tuple[SessionSummary, ...]
    pending: tuple[PendingSummary, ...]
    subscribed: bool = True

"""A bounded ring of recent model calls, for ``gatesh dump`` (S13).

Each capture is what one call actually sent and got back: the system prompt, the messages by
role with their tool calls and tool results, the tools offered, the raw response, the duration,
and the fail-closed cause when there was one. Guarantees: every string is passed through
:func:`gatesh.redact.redact` when it is recorded, so the ring never holds a secret in clear;
the ring keeps the newest ``maxlen`` captures; :meth:`CaptureRing.snapshot` returns copies.
It lives beside the Messages API records it keeps (:mod:`gatesh.rater._api`); the alignment
check's model calls are captured here too.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from gatesh._json import OMIT_EMPTY
from gatesh.rater._api import Request, Response, Role, Text, ToolChoice, ToolResult, ToolUse
from gatesh.rater._text import redact

__all__ = [
    "DEFAULT_RING",
    "Call",
    "CallRow",
    "Capture",
    "CaptureRing",
    "ResultRow",
    "Row",
    "TextRow",
    "Verdict",
    "default_ring",
]

#: Enough to cover the last few arguments in full; a capture is a few KiB.
DEFAULT_MAXLEN = 50

_OMIT_NONE = {"omit_none": True}


def _redacted(value: object) -> object:
    """A JSON value (a tool's arguments, a raw answer) with every string in it redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {str(k): _redacted(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redacted(v) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return redact(repr(value))


@dataclass(frozen=True)
class TextRow:
    """A text block of a message."""

    role: Role
    text: str


@dataclass(frozen=True)
class CallRow:
    """A tool call of a message."""

    role: Role
    tool_call: str
    id: str
    args: object


@dataclass(frozen=True)
class ResultRow:
    """A tool result of a message."""

    role: Role
    tool_result: str
    text: str
    is_error: bool


Row = TextRow | CallRow | ResultRow


@dataclass(frozen=True)
class Call:
    """A tool call in the answer."""

    name: str
    args: object


@dataclass(frozen=True)
class Verdict:
    """The rater's verdict from a call."""

    outcome: str
    reason: str
    remedy: str


@dataclass(frozen=True)
class Capture:
    """One model call as ``gatesh dump`` shows it, every string redacted. ``response`` is the
    answer as the API sent it (None when none came). ``verdict`` is set for the rater's calls;
    ``turn`` and ``decision`` (possibly "") for the alignment check's."""

    at: str
    kind: str  # "rater" or "checker"
    backend: str
    model: str
    system: str
    messages: tuple[Row, ...]
    tools: tuple[str, ...]
    tool_choice: ToolChoice
    response: object
    tool_calls: tuple[Call, ...]
    duration_ms: float
    fail_cause: str
    status: str
    verdict: Verdict | None = field(default=None, metadata=OMIT_EMPTY)
    turn: int | None = field(default=None, metadata=_OMIT_NONE)
    decision: str | None = field(default=None, metadata=_OMIT_NONE)


class CaptureRing:
    """Thread-safe ring of the newest ``maxlen`` model-call captures, redacted on entry."""

    def __init__(self, maxlen: int = DEFAULT_MAXLEN) -> None:
        self._lock = threading.Lock()
        self._ring: deque[Capture] = deque(maxlen=maxlen)

    @property
    def maxlen(self) -> int:
        return self._ring.maxlen or 0

    def record(
        self,
        *,
        kind: str,
        backend: str,
        model: str,
        request: Request,
        response: Response | None,
        duration_ms: float,
        fail_cause: str = "",
        status: str = "",
        verdict: Verdict | None = None,
        turn: int | None = None,
        decision: str | None = None,
    ) -> Capture:
        """Record one call (``response`` None: no answer came) and return the stored capture."""

        calls = () if response is None else response.content
        capture = Capture(
            at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            kind=kind,
            backend=redact(backend),
            model=redact(model),
            system=redact(request.system),
            messages=tuple(_by_role(request)),
            tools=tuple(redact(t.name) for t in request.tools),
            tool_choice=request.tool_choice,  # gatesh's own words: nothing to redact
            response=None if response is None else _redacted(response.raw),
            tool_calls=tuple(
                Call(redact(b.name), _redacted(b.input)) for b in calls if isinstance(b, ToolUse)
            ),
            duration_ms=round(duration_ms, 1),
            fail_cause=redact(fail_cause),
            status=redact(status),
            verdict=None
            if verdict is None
            else Verdict(redact(verdict.outcome), redact(verdict.reason), redact(verdict.remedy)),
            turn=turn,
            decision=None if decision is None else redact(decision),
        )
        with self._lock:
            self._ring.append(capture)
        return copy.deepcopy(capture)

    def snapshot(self) -> list[Capture]:
        """Copies of the captures, oldest first."""
        with self._lock:
            return copy.deepcopy(list(self._ring))

    def clear(self) -> None:
        with self._lock:
            self._ring.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._ring)


def _by_role(request: Request) -> list[Row]:
    """Messages flattened for reading: role, text, and each tool call or tool result as its own row."""
    rows: list[Row] = []
    for m in request.messages:
        if isinstance(m.content, str):
            rows.append(TextRow(m.role, redact(m.content)))
            continue
        for block in m.content:
            if isinstance(block, Text):
                rows.append(TextRow(m.role, redact(block.text)))
            elif isinstance(block, ToolUse):
                rows.append(
                    CallRow(m.role, redact(block.name), redact(block.id), _redacted(block.input))
                )
            elif isinstance(block, ToolResult):
                rows.append(
                    ResultRow(
                        m.role, redact(block.tool_use_id), redact(block.content), block.is_error
                    )
                )
    return rows


#: The process-wide ring the backends record into unless given their own.
DEFAULT_RING = CaptureRing()


def default_ring() -> CaptureRing:
    """The process-wide ring (what ``gatesh dump`` reads)."""
    return DEFAULT_RING

"""A bounded ring of recent model calls, for ``gatesh dump`` (S13).

Each capture is what one call actually sent and got back: the system prompt, the messages by
role with their tool calls and tool results, the tools offered, the raw response, the duration,
and the fail-closed cause when there was one. Guarantees: every string is passed through
:func:`gatesh.redact.redact` when it is recorded, so the ring never holds a secret in clear;
the ring keeps the newest ``maxlen`` captures; :meth:`CaptureRing.snapshot` returns copies.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import deque
from typing import Any

from gatesh.rater._text import redact

__all__ = ["DEFAULT_RING", "CaptureRing", "default_ring"]

#: Enough to cover the last few arguments in full; a capture is a few KiB.
DEFAULT_MAXLEN = 50


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {str(k): _redacted(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redacted(v) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return redact(repr(value))


class CaptureRing:
    """Thread-safe ring of the newest ``maxlen`` model-call captures, redacted on entry."""

    def __init__(self, maxlen: int = DEFAULT_MAXLEN) -> None:
        self._lock = threading.Lock()
        self._ring: deque[dict[str, Any]] = deque(maxlen=maxlen)

    @property
    def maxlen(self) -> int:
        return self._ring.maxlen or 0

    def record(
        self,
        *,
        kind: str,
        backend: str,
        model: str,
        request: dict[str, Any],
        response: dict[str, Any] | None,
        duration_ms: float,
        fail_cause: str = "",
        status: str = "",
        tool_calls: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Record one call and return the stored (redacted) capture.

        ``kind`` is "rater" or "checker"; ``request`` is the body sent (system, messages,
        tools, tool_choice); ``response`` the raw answer, None when none came.
        """
        capture: dict[str, Any] = {
            "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "kind": kind,
            "backend": backend,
            "model": model,
            "system": request.get("system", ""),
            "messages": _by_role(request.get("messages", [])),
            "tools": [t.get("name", "") for t in request.get("tools", []) if isinstance(t, dict)],
            "tool_choice": request.get("tool_choice"),
            "response": response,
            "tool_calls": tool_calls if tool_calls is not None else _tool_calls(response),
            "duration_ms": round(duration_ms, 1),
            "fail_cause": fail_cause,
            "status": status,
        }
        if extra:
            capture.update(extra)
        stored = _redacted(capture)
        with self._lock:
            self._ring.append(stored)
        return copy.deepcopy(stored)

    def snapshot(self) -> list[dict[str, Any]]:
        """Copies of the captures, oldest first."""
        with self._lock:
            return copy.deepcopy(list(self._ring))

    def clear(self) -> None:
        with self._lock:
            self._ring.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._ring)


def _by_role(messages: list[Any]) -> list[dict[str, Any]]:
    """Messages flattened for reading: role, text, and each tool call or tool result as its own row."""
    rows: list[dict[str, Any]] = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        content = m.get("content", "")
        if isinstance(content, str):
            rows.append({"role": m.get("role", ""), "text": content})
            continue
        for block in content:
            kind = block.get("type")
            if kind == "text":
                rows.append({"role": m.get("role", ""), "text": block.get("text", "")})
            elif kind == "tool_use":
                rows.append(
                    {
                        "role": m.get("role", ""),
                        "tool_call": block.get("name", ""),
                        "id": block.get("id", ""),
                        "args": block.get("input", {}),
                    }
                )
            elif kind == "tool_result":
                rows.append(
                    {
                        "role": m.get("role", ""),
                        "tool_result": block.get("tool_use_id", ""),
                        "text": _result_text(block.get("content", "")),
                        "is_error": bool(block.get("is_error", False)),
                    }
                )
    return rows


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _tool_calls(response: dict[str, Any] | None) -> list[dict[str, Any]]:
    if not response:
        return []
    return [
        {"name": b.get("name", ""), "args": b.get("input", {})}
        for b in response.get("content", [])
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


#: The process-wide ring the backends record into unless given their own.
DEFAULT_RING = CaptureRing()


def default_ring() -> CaptureRing:
    """The process-wide ring (what ``gatesh dump`` reads)."""
    return DEFAULT_RING

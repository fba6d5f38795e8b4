"""Audit export to the system log (``audit.syslog = true``): a copy of each decision record.

journald or rsyslog pick the lines up under the identifier ``gatesh``, so an organisation's log
pipeline collects every machine's decisions without a gatesh server. The audit file stays the
record of record (S13); this copy is best effort.

Guarantees: :func:`send` never raises and never blocks on a slow reader (the C library's
``syslog(3)`` writes one datagram to the local socket). Each message is one line of JSON, at
most :data:`MAX_MESSAGE` bytes of UTF-8, prefixed by the action so a plain ``grep`` works; the
record is expected to be already redacted and home-folded (the audit module's job).
"""

from __future__ import annotations

import json
import syslog
from typing import Any, Final

__all__ = ["IDENT", "MAX_MESSAGE", "format_record", "priority_for", "send"]

IDENT: Final = "gatesh"
# rsyslog's default maximum message size is 8 KiB including the header; stay well under it.
MAX_MESSAGE: Final = 4000

_PRIORITIES: Final = {
    "allow": syslog.LOG_INFO,
    "reject": syslog.LOG_NOTICE,
    "escalate": syslog.LOG_NOTICE,
    "deny": syslog.LOG_WARNING,
    "refuse": syslog.LOG_WARNING,
    "halt": syslog.LOG_ALERT,  # an attack: the session's autonomy ended
}
# Fields cut first when a record is too long, longest-living text first.
_CUTTABLE: Final = ("command", "reason", "message", "notice", "remedy", "facts", "rounds")

_opened = False


def priority_for(record: dict[str, Any]) -> int:
    """The syslog priority of a record: by its action; unknown actions are warnings."""
    return _PRIORITIES.get(str(record.get("action", "")), syslog.LOG_WARNING)


def format_record(record: dict[str, Any]) -> str:
    """``"ACTION {json}"`` on one line, at most :data:`MAX_MESSAGE` bytes (long text fields cut)."""
    action = str(record.get("action", "unknown"))
    body = dict(record)
    text = _dump(action, body)
    for key in _CUTTABLE:
        if len(text.encode("utf-8")) <= MAX_MESSAGE:
            break
        value = body.get(key)
        if value is None:
            continue
        value = (
            value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        )
        over = len(text.encode("utf-8")) - MAX_MESSAGE
        keep = max(0, len(value) - over - 32)
        body[key] = value[:keep] + f"… [{len(value) - keep} chars cut]"
        text = _dump(action, body)
    if len(text.encode("utf-8")) > MAX_MESSAGE:
        short: dict[str, Any] = {
            k: body[k] for k in ("time", "session", "action", "stage", "outcome") if k in body
        }
        short["truncated"] = True
        text = _dump(action, short)
    return text


def _dump(action: str, body: dict[str, Any]) -> str:
    # ensure_ascii keeps control characters and odd code points escaped: one clean line.
    return f"{action} " + json.dumps(body, ensure_ascii=True, separators=(",", ":"), default=str)


def send(record: dict[str, Any]) -> None:
    """Send ``record`` to the system log under ``gatesh``. Never raises."""
    global _opened
    try:
        if not _opened:
            syslog.openlog(IDENT, syslog.LOG_PID, syslog.LOG_USER)
            _opened = True
        syslog.syslog(priority_for(record), format_record(record))
    except Exception:  # the audit file is the record of record; a lost copy must not stop the gate
        return

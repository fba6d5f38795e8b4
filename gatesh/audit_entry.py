"""An audit line read back (``gatesh log``, ``status``, ``dump``, the daemon's ``tail``): the
decode beside :mod:`gatesh.audit_record`'s encoder. Each line is decoded once into a
:class:`LogEntry`; a line that is not a JSON object raises :class:`AuditLineError`, which names what
was wrong, so a reader can report it and go on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gatesh._errors import GateshError

__all__ = ["AuditLineError", "CascadeLine", "LogEntry", "decode", "entry_of"]


class AuditLineError(GateshError):
    """An audit line that is not one JSON object (torn, foreign or hand-edited): what was wrong."""


@dataclass(frozen=True)
class CascadeLine:
    """The cascade member of a line as ``gatesh log`` shows it (S3.3): who decided, whether the
    model was asked, and why."""

    decided: str
    model_asked: bool
    asked: str


@dataclass(frozen=True)
class LogEntry:
    """One audit line read back, decoded once: the members ``gatesh log`` shows, as text (a line
    from an older or foreign writer may hold any JSON value there), and the object itself
    (``document``) for ``gatesh log --json`` and the daemon's ``tail`` reply, which pass the line
    on as the file holds it."""

    document: dict[str, Any]
    time: str
    action: str
    stage: str
    outcome: str
    session: str
    command: str
    rule_id: str
    answer: str
    pending_id: str
    snapshot: str
    undo_note: str
    rater_fail_cause: str
    cascade: CascadeLine | None
    seq: str
    found: str


def decode(line: bytes) -> LogEntry:
    """One audit line (without its newline) as a :class:`LogEntry`; :class:`AuditLineError` when
    it is not a JSON object."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise AuditLineError(f"not JSON ({type(exc).__name__}: {str(exc)[:80]})") from None
    if not isinstance(value, dict):
        raise AuditLineError(f"a JSON {type(value).__name__}, not an object")
    return entry_of(value)


def entry_of(document: dict[str, Any]) -> LogEntry:
    """The :class:`LogEntry` of a line's JSON object (:func:`as_json` of a record, or a line)."""

    def text(key: str, absent: str = "") -> str:
        return str(document.get(key, absent))

    def shown(key: str) -> str:  # a member shown only when set: "" when absent or empty
        value = document.get(key)
        return str(value) if value else ""

    rater = document.get("rater") or {}
    fail_cause = rater.get("fail_cause") if isinstance(rater, dict) else None
    cascade = document.get("cascade")
    return LogEntry(
        document=document,
        time=text("time"),
        action=text("action", "?"),
        stage=text("stage"),
        outcome=str(document.get("outcome") or ""),
        session=text("session"),
        command=text("command"),
        rule_id=shown("rule_id"),
        answer=shown("answer"),
        pending_id=shown("pending_id"),
        snapshot=shown("snapshot"),
        undo_note=shown("undo_note"),
        rater_fail_cause=str(fail_cause) if fail_cause else "",
        cascade=CascadeLine(
            decided=str(cascade.get("decided", "?")),
            model_asked=bool(cascade.get("model_asked")),
            asked=str(cascade.get("asked", "?")),
        )
        if isinstance(cascade, dict)
        else None,
        seq=text("seq", "?"),
        found=text("found"),
    )

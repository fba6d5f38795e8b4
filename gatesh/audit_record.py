"""What an audit line says (S13): the record of a decision, built from the finished decision, its
texts home-folded and redacted, and encoded as one bounded JSON object for the writer to chain.

Guarantees: every text that may quote the command (the command, reasons, notes, answers) goes
through :func:`clean`; :func:`encode` never returns more than :data:`BODY_MAX` bytes, cutting the
command first and the facts next, so one decision can never rotate the log on its own.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any, Final

from gatesh.redact import redact

if TYPE_CHECKING:
    from gatesh._types import AlignmentResult, Decision, Verdict

__all__ = [
    "BODY_MAX",
    "MAX_RECORD_BYTES",
    "cascade_record",
    "clean",
    "encode",
    "fold_home",
    "record_for",
]

# its own, and a 64 KiB command is already past the reader's limit (S2).
MAX_RECORD_BYTES = 96 * 1024


_home_cache: tuple[str | None, str] = (None, "")


def _home() -> str:
    """``~`` expanded, recomputed only when ``$HOME`` changes (the daemon folds every record)."""
    global _home_cache
    env = os.environ.get("HOME")
    if env is None:  # expanduser falls back to the password database: not cached
        return os.path.expanduser("~")
    if _home_cache[0] != env:
        _home_cache = (env, os.path.expanduser("~"))
    return _home_cache[1]


def fold_home(text: str, home: str | None = None) -> str:
    """``text`` with the user's home folder written as ``~`` (S4, S13)."""
    home = home if home is not None else _home()
    if not home or home == "/":
        return text
    return text.replace(home.rstrip("/"), "~")


def _clean(text: str) -> str:
    if not text:
        return text
    home = _home()
    key = (text, home)
    hit = _CLEANED.get(key)
    if hit is None:
        hit = redact(fold_home(text, home))
        if len(_CLEANED) >= _CLEANED_MAX:
            _CLEANED.clear()
        if len(text) <= 4096:
            _CLEANED[key] = hit
    return hit


def clean(text: str) -> str:
    """``text`` as every record and event shows it: home folded to ``~``, secrets redacted."""
    return _clean(text)


# The same command, reason and notes are cleaned for the audit line, the events and the reply:
# remember recent results (redaction is a pure function of the text; the home folder is part of
# the key). Bounded; cleared wholesale when full.
_CLEANED: dict[tuple[str, str], str] = {}
_CLEANED_MAX = 2048


def record_for(
    decision: Decision,
    *,
    session: str,
    pid: int | None,
    cwd: str,
    surface: str = "",
    answer: str = "",
    pending_id: str = "",
    action: str | None = None,
    message_reason: str = "",
) -> dict[str, Any]:
    """The audit record of ``decision`` (a JSON-able dict; the wire/file form of S13).

    ``action`` overrides the decision's action word when the daemon finished the decision
    (a person answered, nobody was watching, the audit itself failed). ``message_reason`` adds why.
    """
    facts = decision.facts
    rec: dict[str, Any] = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "ts": round(time.time(), 3),
        "session": session,
        "pid": pid,
        "cwd": fold_home(cwd),
        "surface": surface,
        "command": _clean(facts.text),
        "facts": {
            "heads": list(facts.heads),
            "notes": [_clean(n) for n in facts.notes],
            "readable": facts.readable,
            "unreadable": facts.unreadable,
            "harness": facts.harness,
            "justification": _clean(facts.justification),
            "hosts": list(facts.hosts),
        },
        "stage": decision.stage.value,
        "rung": decision.rung.value,
        "outcome": decision.outcome.value if decision.outcome else None,
        "reason": _clean(decision.reason),
        "action": action or decision.action.value,
        "rule_id": decision.rule_id,
        "floors": [f.rule_id for f in decision.floors],
        "to_person": _clean(decision.to_person_reason),
        "answer": answer,
        "pending_id": pending_id,
        "rater": _rater_record(decision.verdict),
        "cascade": cascade_record(decision.verdict),
        "alignment": _alignment_record(decision.alignment),
        "negotiation": dict(decision.counters),
    }
    # Undo (S13, S17): the snapshot taken before it ran; the places the decision rests on a
    # snapshot holding (it ran because they are held); why none was taken when one was due.
    if decision.snapshot:
        rec["snapshot"] = decision.snapshot
    if decision.undo:
        rec["undo"] = [fold_home(p) for p in decision.undo]
    if decision.undo_note:
        rec["undo_note"] = _clean(decision.undo_note)
    if facts.harness and facts.outer_text:
        rec["outer_command"] = _clean(facts.outer_text)
    if message_reason:
        rec["note"] = _clean(message_reason)
    return rec


def _rater_record(v: Verdict | None) -> dict[str, Any] | None:
    """The rater's part of the record: which backend and model answered, how fast, why it failed."""
    if v is None:
        return None
    return {
        "backend": v.backend,
        "model": v.model,
        "duration_ms": round(v.duration_ms, 1),
        "fail_cause": v.fail_cause,
        "cached": v.cached,
    }


def _alignment_record(a: AlignmentResult | None) -> dict[str, Any] | None:
    """The alignment check's part of the record (S5), its texts cleaned."""
    if a is None:
        return None
    return {
        "decision": a.decision,
        "reason": _clean(a.reason),
        "suggestion": _clean(a.suggestion),
        "fail_cause": a.fail_cause,
        "duration_ms": round(a.duration_ms, 1),
    }


def cascade_record(verdict: Verdict | None) -> dict[str, Any] | None:
    """How the cascade reached ``verdict`` (S4, S13): the stage that decided, why the model was or
    was not asked, the builtin stage's verdict with its gaps, the model's answer. None when the
    verdict came from one backend alone. Texts are cleaned like every other text of the record."""
    c = verdict.cascade if verdict is not None else None
    if c is None:
        return None
    b, m = c.builtin, c.model
    return {
        "decided": c.decided.value,
        "asked": c.asked.value,
        "model_asked": m is not None,
        "why": _clean(c.why),
        "builtin": {
            "outcome": b.outcome.value,
            "complete": b.complete,
            "gaps": [g.id for g in b.gaps],
            "rule_id": b.findings[0].rule_id if b.findings else "",
            "duration_ms": round(b.duration_ms, 2),
        },
        "model": None
        if m is None
        else {
            "backend": m.backend,
            "model": m.model,
            "outcome": m.outcome.value,
            "reason": _clean(m.reason),
            "duration_ms": round(m.duration_ms, 1),
            "fail_cause": m.fail_cause,
            "cached": m.cached,
        },
    }


# What the chain adds to a line: `{"seq":N,"prev":"<64 hex>",` and `,"hash":"<64 hex>"}`.
_CHAIN_BYTES: Final = 200
BODY_MAX: Final = MAX_RECORD_BYTES - _CHAIN_BYTES


def encode(record: dict[str, Any]) -> bytes:
    """The record as one JSON object (no newline, no chain yet), at most :data:`BODY_MAX` bytes."""
    drop = {"seq", "prev", "hash"}  # the chain's own members are the writer's to set
    if drop & record.keys():
        record = {k: v for k, v in record.items() if k not in drop}
    data = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str).encode(
        "utf-8", "backslashreplace"
    )
    if len(data) > BODY_MAX:
        record = dict(record)
        cut = MAX_RECORD_BYTES // 4
        for key in ("command", "outer_command"):
            if isinstance(record.get(key), str) and len(record[key]) > cut:
                record[key] = record[key][:cut] + f"… [cut: {len(record[key])} chars]"
        record["facts"] = {"cut": True}
        data = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str).encode(
            "utf-8", "backslashreplace"
        )
    if len(data) > BODY_MAX:
        data = json.dumps(
            {k: record.get(k) for k in ("time", "ts", "session", "action", "stage", "rule_id")}
            | {"cut": True},
            ensure_ascii=False,
            default=str,
        ).encode("utf-8", "backslashreplace")
    return data

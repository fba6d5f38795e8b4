"""What an audit line says (S13): the record of a decision, built from the finished decision, its
texts home-folded and redacted, and encoded as one bounded JSON object for the writer to chain.

Guarantees: every text that may quote the command (the command, reasons, notes, answers) goes
through :func:`clean`; :func:`encode` never returns more than :data:`BODY_MAX` bytes, cutting the
command first and the facts next, so one decision can never rotate the log on its own.
"""

from __future__ import annotations

import enum
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, cast

from gatesh._json import OMIT_EMPTY, name, plain, via
from gatesh._types import Action, AlignmentDecision, Asked, CascadeStage, Outcome, Rung, Stage
from gatesh.audit_chain import CHAIN_BREAK
from gatesh.redact import redact

if TYPE_CHECKING:
    from gatesh._types import AlignmentResult, Decision, Verdict
    from gatesh.boundary.compute import Boundary

__all__ = [
    "BODY_MAX",
    "MAX_RECORD_BYTES",
    "AlignmentPart",
    "AuditRecord",
    "BreakRecord",
    "BuiltinStage",
    "CascadePart",
    "DecisionRecord",
    "ExitRecord",
    "FactsPart",
    "FileSeen",
    "KeptHead",
    "ModelStage",
    "ObservationRecord",
    "RaterPart",
    "RestoreRecord",
    "RulingAction",
    "RulingRecord",
    "as_json",
    "cascade_record",
    "clean",
    "encode",
    "fold_home",
    "record_for",
    "stamp",
]

# A record larger than this is cut (its command first): one decision must never rotate the log on
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


def stamp() -> tuple[str, float]:
    """The ``time`` (local, ISO 8601) and ``ts`` (epoch seconds, ms) members of a line written now."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z"), round(time.time(), 3)


@dataclass(frozen=True)
class FactsPart:
    """What the reader saw, as the line keeps it (texts cleaned)."""

    heads: tuple[str, ...]
    notes: tuple[str, ...]
    readable: bool
    unreadable: str
    harness: str
    justification: str
    hosts: tuple[str, ...]


@dataclass(frozen=True)
class RaterPart:
    """The rater's part of the line: which backend and model answered, how fast, why it failed."""

    backend: str
    model: str
    duration_ms: float
    fail_cause: str
    cached: bool


@dataclass(frozen=True)
class AlignmentPart:
    """The alignment check's part of the line (S5), its texts cleaned."""

    decision: AlignmentDecision
    reason: str
    suggestion: str
    fail_cause: str
    duration_ms: float


@dataclass(frozen=True)
class BuiltinStage:
    """The cascade's builtin stage: its verdict, whether it rested on complete knowledge, its gaps."""

    outcome: Outcome
    complete: bool
    gaps: tuple[str, ...]
    rule_id: str
    duration_ms: float


@dataclass(frozen=True)
class ModelStage:
    """The cascade's model stage, when it was asked."""

    backend: str
    model: str
    outcome: Outcome
    reason: str
    duration_ms: float
    fail_cause: str
    cached: bool


@dataclass(frozen=True)
class CascadePart:
    """How the cascade reached its verdict (S4, S13); see :func:`cascade_record`."""

    decided: CascadeStage
    asked: Asked
    model_asked: bool
    why: str
    builtin: BuiltinStage
    model: ModelStage | None


def _boundary_audit(boundary: object) -> object:
    return cast("Boundary", boundary).audit()


@dataclass(frozen=True)
class DecisionRecord:
    """The line of one finished decision (S13). Members after ``negotiation`` are written only
    when set. ``action`` is the action the surface carried out, which a person, nobody watching
    or an audit failure may have made differ from the decision's own."""

    time: str
    ts: float
    session: str
    pid: int | None
    cwd: str
    surface: str
    command: str
    facts: FactsPart
    stage: Stage
    rung: Rung
    outcome: Outcome | None
    reason: str
    action: Action
    rule_id: str
    floors: tuple[str, ...]
    to_person: str
    answer: str
    pending_id: str
    rater: RaterPart | None
    cascade: CascadePart | None
    alignment: AlignmentPart | None
    negotiation: Mapping[str, int]
    snapshot: str = field(default="", metadata=OMIT_EMPTY)
    undo: tuple[str, ...] = field(default=(), metadata=OMIT_EMPTY)
    undo_note: str = field(default="", metadata=OMIT_EMPTY)
    outer_command: str = field(default="", metadata=OMIT_EMPTY)
    note: str = field(default="", metadata=OMIT_EMPTY)
    # The boundary an allowed command runs in (S16), and the name of that run.
    boundary: Boundary | None = field(default=None, metadata={**OMIT_EMPTY, **via(_boundary_audit)})
    run: str = field(default="", metadata=OMIT_EMPTY)


def _fixed(value: object) -> Any:
    """A member every line of its kind carries with the same value (set by the class, not the caller)."""
    return field(default=value, init=False)


class RulingAction(enum.StrEnum):
    """What became of a pending record a person ruled on, or that nobody answered: the ruling
    line's ``action`` (its value is the word the line holds, which the hash chain covers)."""

    APPROVED = "approved"
    DENIED = "denied"
    EXPIRED = "expired"  # an ask at a surface nobody answered in time, or nobody can answer now


@dataclass(frozen=True, kw_only=True)
class RulingRecord:
    """The line of a person's ruling on a pending escalation or halt (:mod:`gatesh.ruling`)."""

    time: str
    ts: float
    session: str
    pid: int | None
    cwd: str
    surface: str
    command: str
    action: RulingAction
    stage: str = _fixed("person")
    answer: str
    pending_id: str
    reason: str = field(default="", metadata=OMIT_EMPTY)  # why an ask expired


@dataclass(frozen=True, kw_only=True)
class ExitRecord:
    """How a bounded command ended (S13, S16): its exit status, or the signal that killed it, or
    that it never started (both None)."""

    time: str
    ts: float
    session: str
    pid: int | None
    cwd: str
    surface: str
    command: str
    action: str = _fixed("exited")
    stage: str = _fixed("boundary")
    outcome: None = _fixed(None)
    reason: str  # "exit status N", "killed by signal N", "never started: …"
    run: str
    boundary: str  # the boundary's id
    status: int | None
    signal: int | None
    duration_s: float


@dataclass(frozen=True, kw_only=True)
class ObservationRecord:
    """A session's end observation (S6): counts only."""

    time: str
    ts: float
    session: str
    pid: None = _fixed(None)
    cwd: str = _fixed("")
    surface: str = _fixed("gatesh")
    command: str = _fixed("")
    action: str = _fixed("observation")
    stage: str = _fixed("session-end")
    observation: str
    negotiation: Mapping[str, int]


@dataclass(frozen=True, kw_only=True)
class RestoreRecord:
    """A person restored an undo snapshot (S17): ``gatesh undo ID``."""

    time: str
    ts: float
    session: str = _fixed("")
    pid: int | None
    cwd: str = _fixed("")
    surface: str  # the role of the connection that asked
    command: str  # ``gatesh undo ID``
    action: str = _fixed("undo")
    stage: str = _fixed("person")
    answer: str = _fixed("")
    pending_id: str = _fixed("")
    snapshot: str  # the snapshot that puts back what the restore replaced ("" when none)
    reason: str


@dataclass(frozen=True)
class KeptHead:
    """The head the writer had kept, as a chain-break line names it."""

    seq: int
    hash: str
    ino: int
    size: int


@dataclass(frozen=True)
class FileSeen:
    """The log file the writer found instead."""

    ino: int
    size: int


@dataclass(frozen=True, kw_only=True)
class BreakRecord:
    """The writer's own line saying the log changed under it (S13, :mod:`gatesh.audit_gaps`)."""

    time: str
    ts: float
    session: str = _fixed("")
    pid: int
    cwd: str = _fixed("")
    surface: str = _fixed("audit")
    command: str = _fixed("")
    stage: str = _fixed("audit")
    action: str = _fixed(CHAIN_BREAK)
    kind: str = field(metadata=name("break"))
    found: str
    kept_head: KeptHead | None
    file: FileSeen


AuditRecord = (
    DecisionRecord | RulingRecord | ExitRecord | ObservationRecord | RestoreRecord | BreakRecord
)
"""Every kind of line the audit log holds."""


def record_for(
    decision: Decision,
    *,
    session: str,
    pid: int | None,
    cwd: str,
    surface: str = "",
    answer: str = "",
    pending_id: str = "",
    action: Action | None = None,
    message_reason: str = "",
    boundary: Boundary | None = None,
    run: str = "",
) -> DecisionRecord:
    """The audit record of ``decision``.

    ``action`` overrides the decision's action when the surface finished the decision otherwise
    (a person answered, nobody was watching, the audit itself failed). ``message_reason`` adds why.
    """
    facts = decision.facts
    when, ts = stamp()
    return DecisionRecord(
        time=when,
        ts=ts,
        session=session,
        pid=pid,
        cwd=fold_home(cwd),
        surface=surface,
        command=_clean(facts.text),
        facts=FactsPart(
            heads=tuple(facts.heads),
            notes=tuple(_clean(n) for n in facts.notes),
            readable=facts.readable,
            unreadable=facts.unreadable,
            harness=facts.harness or "",
            justification=_clean(facts.justification),
            hosts=tuple(facts.hosts),
        ),
        stage=decision.stage,
        rung=decision.rung,
        outcome=decision.outcome,
        reason=_clean(decision.reason),
        action=action or decision.action,
        rule_id=decision.rule_id,
        floors=tuple(f.rule_id for f in decision.floors),
        to_person=_clean(decision.to_person_reason),
        answer=answer,
        pending_id=pending_id,
        rater=_rater_record(decision.verdict),
        cascade=cascade_record(decision.verdict),
        alignment=_alignment_record(decision.alignment),
        negotiation=dict(decision.counters),
        # Undo (S13, S17): the snapshot taken before it ran; the places the decision rests on a
        # snapshot holding (it ran because they are held); why none was taken when one was due.
        snapshot=decision.snapshot or "",
        undo=tuple(fold_home(p) for p in decision.undo),
        undo_note=_clean(decision.undo_note) if decision.undo_note else "",
        outer_command=_clean(facts.outer_text) if facts.harness and facts.outer_text else "",
        note=_clean(message_reason) if message_reason else "",
        boundary=boundary,
        run=run,
    )


def _rater_record(v: Verdict | None) -> RaterPart | None:
    if v is None:
        return None
    return RaterPart(v.backend, v.model, round(v.duration_ms, 1), v.fail_cause, v.cached)


def _alignment_record(a: AlignmentResult | None) -> AlignmentPart | None:
    if a is None:
        return None
    return AlignmentPart(
        a.decision, _clean(a.reason), _clean(a.suggestion), a.fail_cause, round(a.duration_ms, 1)
    )


def cascade_record(verdict: Verdict | None) -> CascadePart | None:
    """How the cascade reached ``verdict`` (S4, S13): the stage that decided, why the model was or
    was not asked, the builtin stage's verdict with its gaps, the model's answer. None when the
    verdict came from one backend alone. Texts are cleaned like every other text of the record."""
    c = verdict.cascade if verdict is not None else None
    if c is None:
        return None
    b, m = c.builtin, c.model
    return CascadePart(
        decided=c.decided,
        asked=c.asked,
        model_asked=m is not None,
        why=_clean(c.why),
        builtin=BuiltinStage(
            outcome=b.outcome,
            complete=b.complete,
            gaps=tuple(g.id for g in b.gaps),
            rule_id=b.findings[0].rule_id if b.findings else "",
            duration_ms=round(b.duration_ms, 2),
        ),
        model=None
        if m is None
        else ModelStage(
            backend=m.backend,
            model=m.model,
            outcome=m.outcome,
            reason=_clean(m.reason),
            duration_ms=round(m.duration_ms, 1),
            fail_cause=m.fail_cause,
            cached=m.cached,
        ),
    )


# What the chain adds to a line: `{"seq":N,"prev":"<64 hex>",` and `,"hash":"<64 hex>"}`.
_CHAIN_BYTES: Final = 200
BODY_MAX: Final = MAX_RECORD_BYTES - _CHAIN_BYTES


def encode(record: AuditRecord) -> bytes:
    """The record as one JSON object (no newline, no chain yet), at most :data:`BODY_MAX` bytes.

    The one place a record becomes the bytes of its line: members in the order of the record's
    fields (:mod:`gatesh._json`), compact separators, UTF-8 as it is — the format every line
    ever written has, which :func:`gatesh.audit_chain.verify` hashes as it finds it.
    """
    body = as_json(record)
    for key in ("seq", "prev", "hash"):  # the chain's own members are the writer's to set
        body.pop(key, None)
    data = _dump(body)
    if len(data) > BODY_MAX:
        cut = MAX_RECORD_BYTES // 4
        for key in ("command", "outer_command"):
            text = body.get(key)
            if isinstance(text, str) and len(text) > cut:
                body[key] = text[:cut] + f"… [cut: {len(text)} chars]"
        body["facts"] = {"cut": True}
        data = _dump(body)
    if len(data) > BODY_MAX:
        data = json.dumps(
            {k: body.get(k) for k in ("time", "ts", "session", "action", "stage", "rule_id")}
            | {"cut": True},
            ensure_ascii=False,
            default=str,
        ).encode("utf-8", "backslashreplace")
    return data


def as_json(record: AuditRecord) -> dict[str, Any]:
    """``record`` as the JSON object of its line (for the system-log copy and ``explain --json``)."""
    body = plain(record)
    assert isinstance(body, dict)
    return body


def _dump(body: object) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str).encode(
        "utf-8", "backslashreplace"
    )

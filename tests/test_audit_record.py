"""The audit line's format: every kind of record encodes to the bytes gatesh has always written.

``fixtures/audit/old_format.jsonl`` is a chained log written by gatesh before its records became
dataclasses (one line of every kind). Its lines must still verify and read back, and each record
rebuilt from the same values must encode to the very same body: the hash chain covers those bytes,
so a changed member order or spelling would be a different log format.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import cast

import pytest

from gatesh._types import Action, AlignmentDecision, Asked, CascadeStage, Outcome, Rung, Stage
from gatesh.audit import AuditLog, read_tail, verify
from gatesh.audit_record import (
    BODY_MAX,
    AlignmentPart,
    AuditRecord,
    BreakRecord,
    BuiltinStage,
    CascadePart,
    DecisionRecord,
    ExitRecord,
    FactsPart,
    FileSeen,
    KeptHead,
    ModelStage,
    ObservationRecord,
    RaterPart,
    RestoreRecord,
    RulingAction,
    RulingRecord,
    encode,
)

OLD = Path(__file__).parent / "fixtures" / "audit" / "old_format.jsonl"
WHEN = {"time": "2026-12-06T12:00:00+0000", "ts": 1765000000.123}
COUNTERS = {
    "consecutive": 0,
    "consecutive_cap": 3,
    "since_person": 0,
    "since_person_cap": 9,
    "rounds": 0,
}
PUSH = "git push --force origin main"
PUSH_REASON = (
    "A force push overwrites the protected branch main, discarding commits others may have."
)


class _Boundary:
    """Stands in for :class:`gatesh.boundary.compute.Boundary`: the line keeps its ``audit()``."""

    def audit(self) -> dict[str, object]:
        return {
            "id": "b-1234567890",
            "abi": 4,
            "writable": ["~/proj"],
            "unreadable": 3,
            "readable_stores": [],
            "network": "closed",
            "rules": 9,
            "sealed_tree": False,
            "widened": False,
        }


def _facts(heads: str, justification: str = "") -> FactsPart:
    return FactsPart((heads,), (), True, "", "", justification, ())


def _decision(**changes: object) -> DecisionRecord:
    base: dict[str, object] = {
        **WHEN,
        "session": "s1",
        "pid": 41,
        "cwd": "~/proj",
        "surface": "pty",
        "command": PUSH,
        "facts": _facts("git", "ship it"),
        "stage": Stage.RATER,
        "rung": Rung.AUTO,
        "outcome": Outcome.CATASTROPHIC,
        "reason": PUSH_REASON,
        "action": Action.ESCALATE,
        "rule_id": "git.push-force",
        "floors": (),
        "to_person": "it cannot be undone from inside the session",
        "answer": "",
        "pending_id": "",
        "rater": RaterPart("builtin", "", 0.4, "", False),
        "cascade": None,
        "alignment": None,
        "negotiation": COUNTERS,
    }
    return DecisionRecord(**(base | changes))  # type: ignore[arg-type]


def _records() -> list[AuditRecord]:
    model = RaterPart("anthropic", "claude-x", 812.3, "", False)
    cascade = CascadePart(
        decided=CascadeStage.MODEL,
        asked=Asked.UNKNOWN,
        model_asked=True,
        why="not complete knowledge",
        builtin=BuiltinStage(Outcome.SAFE, True, (), "", 0.46),
        model=ModelStage(
            "anthropic",
            "claude-x",
            Outcome.DESTRUCTIVE,
            "rewrites history in ~/proj",
            812.3,
            "",
            False,
        ),
    )
    ruling = {
        **WHEN,
        "session": "s1",
        "pid": 41,
        "cwd": "~/proj",
        "surface": "watch",
        "command": "rm -rf build",
        "pending_id": "p7",
    }
    chain_break = {**WHEN, "ts": 1765000000.5, "pid": 4126, "file": FileSeen(99, 1234)}
    return [
        _decision(),
        _decision(
            surface="hook",
            action=Action.REFUSE,
            answer="nobody-watching",
            pending_id="p7",
            rater=model,
            cascade=cascade,
            alignment=AlignmentPart(
                AlignmentDecision.SUGGEST, "narrower", "git push origin main", "", 120.5
            ),
            snapshot="3",
            undo=("~/proj",),
            undo_note="kept",
            note="in-process",
        ),
        _decision(
            command="ls",
            facts=_facts("ls"),
            stage=Stage.READ_ONLY,
            outcome=Outcome.SAFE,
            reason="known read-only command",
            action=Action.ALLOW,
            rule_id="",
            to_person="",
            rater=None,
            boundary=cast("object", _Boundary()),
            run="00112233aabbccdd",
        ),
        RulingRecord(**ruling, action=RulingAction.APPROVED, answer="once"),  # type: ignore[arg-type]
        RulingRecord(**ruling, action=RulingAction.EXPIRED, answer="", reason="the harness exited"),  # type: ignore[arg-type]
        ExitRecord(
            **WHEN,  # type: ignore[arg-type]
            session="s1",
            pid=41,
            cwd="~/proj",
            surface="pty",
            command="make",
            reason="exit status 2",
            run="00112233aabbccdd",
            boundary="b-1234567890",
            status=2,
            signal=None,
            duration_s=1.5,
        ),
        ObservationRecord(
            **WHEN,  # type: ignore[arg-type]
            session="s1",
            observation="3 refusals",
            negotiation={"refusals": 3, "rounds": 1},
        ),
        RestoreRecord(
            **WHEN,  # type: ignore[arg-type]
            pid=77,
            surface="cli",
            command="gatesh undo 3",
            snapshot="4",
            reason="a person restored the files and refs of undo 3",
        ),
        BreakRecord(
            **chain_break,  # type: ignore[arg-type]
            kind="shrank",
            found="the file is 1234 bytes, the head says 5000",
            kept_head=KeptHead(12, "ab" * 32, 98, 5000),
        ),
        BreakRecord(
            **chain_break,  # type: ignore[arg-type]
            kind="no-head",
            found="no head file",
            kept_head=None,
        ),
    ]


def _body(line: bytes) -> bytes:
    """The record's own body of a chained line: the line without ``seq``, ``prev`` and ``hash``."""
    inner = re.sub(rb'^\{"seq":\d+,"prev":"[0-9a-f]{64}",', b"{", line.rstrip(b"\n"))
    return re.sub(rb',"hash":"[0-9a-f]{64}"\}$', b"}", inner)


def test_every_kind_of_record_encodes_as_the_old_lines_do() -> None:
    lines = OLD.read_bytes().splitlines()
    records = _records()
    assert len(lines) == len(records)
    for line, record in zip(lines, records, strict=True):
        assert encode(record) == _body(line), type(record).__name__


def test_an_old_log_verifies_reads_back_and_takes_new_lines(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    shutil.copyfile(OLD, log)
    report = verify(str(log))
    # Every hash and link checks out: the findings are the two chain-break lines the log holds
    # (each reported as the gap it records) and the kept head a copied log does not have.
    assert [f.kind.value for f in report.findings] == ["break", "break", "no-head"], report
    assert report.lines == 10 and report.last_seq == 10
    writer = AuditLog(str(log))
    writer.append(_records()[0])
    writer.close()
    after = verify(str(log))
    # The writer found no head of its own: it records that gap, then writes our line after it.
    assert [f.kind.value for f in after.findings] == ["break"] * 3, after
    assert after.last_seq == 12
    back = read_tail(str(log), 20)
    assert [r.action for r in back[:3]] == ["escalate", "refuse", "allow"]
    assert back[-1].command == PUSH and back[-2].action == "chain-break"


@pytest.mark.parametrize("key", ["command", "outer_command"])
def test_a_huge_record_is_cut_to_the_bound(key: str) -> None:
    huge = "x" * 300_000
    rec = _decision(command=huge) if key == "command" else _decision(outer_command=huge)
    data = encode(rec)
    assert len(data) <= BODY_MAX
    body = json.loads(data)
    assert body["facts"] == {"cut": True} and "[cut: 300000 chars]" in body[key]

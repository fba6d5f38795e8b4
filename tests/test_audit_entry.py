"""The audit line read back: decoded once into a LogEntry, a broken line named and skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gatesh.audit import AuditLog, read_tail
from gatesh.audit_entry import AuditLineError, CascadeLine, decode
from gatesh.daemon.admin import format_record, log_main
from gatesh.daemon.replies import Records
from gatesh.wire_json import reply_object


def test_a_line_is_decoded_into_the_members_the_log_shows() -> None:
    line = {
        "time": "2026-01-02T03:04:05.678",
        "action": "escalate",
        "stage": "rater",
        "outcome": "destructive",
        "session": "s1",
        "command": "rm -rf build",
        "rule_id": "files.work-loss",
        "rater": {"fail_cause": "timeout"},
        "cascade": {"decided": "model", "model_asked": True, "asked": "unknown"},
    }
    entry = decode(json.dumps(line).encode())
    assert entry.document == line
    assert (entry.action, entry.rule_id, entry.rater_fail_cause) == (
        "escalate",
        "files.work-loss",
        "timeout",
    )
    assert entry.cascade == CascadeLine(decided="model", model_asked=True, asked="unknown")
    assert format_record(entry) == (
        "2026-01-02 03:04:05  escalate rater           destructive  s1                   "
        "rm -rf build  [files.work-loss; rater failed: timeout; "
        "cascade: model decided, model asked (unknown)]"
    )


def test_foreign_values_are_shown_as_text_not_raised() -> None:
    entry = decode(b'{"time": 5, "action": null, "outcome": 0, "rule_id": 0, "cascade": "x"}')
    assert (entry.time, entry.action, entry.outcome, entry.rule_id) == ("5", "None", "", "")
    assert entry.cascade is None and entry.seq == "?"


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (b"{torn", "not JSON"),
        (b"[1, 2]", "a JSON list, not an object"),
        (b"[" * 100_000, "not JSON"),
    ],
)
def test_a_broken_line_raises_a_named_error(line: bytes, said: str) -> None:
    with pytest.raises(AuditLineError, match=said):
        decode(line)


def test_the_log_names_each_broken_line_and_shows_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    from gatesh import _paths

    path = Path(_paths.current().audit_log)
    path.parent.mkdir(parents=True)
    path.write_text('{"action": "allow", "command": "ls"}\n{torn\n[1]\n{"action": "refuse"}\n')
    seen: list[str] = []
    entries = read_tail(str(path), 10, lambda name, err: seen.append(f"{name}: {err}"))
    assert [e.action for e in entries] == ["allow", "refuse"]
    assert len(seen) == 2 and seen[1] == f"{path}: a JSON list, not an object"
    assert log_main(["--json"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ['{"action": "allow", "command": "ls"}', '{"action": "refuse"}']
    assert err.count("gatesh log: skipped a line of") == 2 and "not an object" in err


def test_records_written_read_back_whole(tmp_path: Path) -> None:
    log = AuditLog(str(tmp_path / "audit.jsonl"))
    log.write([{"action": "allow", "command": "echo é"}])
    (entry,) = read_tail(str(tmp_path / "audit.jsonl"), 5)
    assert entry.command == "echo é" and entry.document["seq"] == 1


def test_the_tail_reply_sends_each_line_as_the_file_holds_it() -> None:
    lines = [
        b'{"time":"t1","action":"allow","command":"ls","seq":1}',
        b'{"time":"t2","action":"approved","stage":"person","foreign":{"kept":[1,2]}}',
    ]
    reply = reply_object(Records(tuple(decode(line) for line in lines)))
    assert reply == {"ok": True, "records": [json.loads(line) for line in lines]}
    assert json.dumps(reply["records"][1], separators=(",", ":")).encode() == lines[1]

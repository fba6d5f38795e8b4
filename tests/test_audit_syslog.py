"""Audit export to the system log: formatting and a send that never raises."""

from __future__ import annotations

import json
import re
import syslog
from pathlib import Path

import pytest

from gatesh import audit_syslog
from gatesh.audit_chain import Anchor
from gatesh.testing.syslog_sink import SyslogSink


def record(**changes: object) -> dict[str, object]:
    base: dict[str, object] = {
        "time": 1764410000.5,
        "session": "s1",
        "pid": 42,
        "cwd": "~/proj",
        "command": "git push --force",
        "stage": "rater",
        "rung": "auto",
        "outcome": "destructive",
        "reason": "rewrites history",
        "action": "reject",
    }
    base.update(changes)
    return base


def test_format_is_action_then_one_line_of_json() -> None:
    text = audit_syslog.format_record(record(command="echo 'a'\nrm -rf x\x1b[31m"))
    action, _, body = text.partition(" ")
    assert action == "reject" and "\n" not in text and "\x1b" not in text
    assert json.loads(body)["command"] == "echo 'a'\nrm -rf x\x1b[31m"


def test_long_records_are_cut_to_the_limit() -> None:
    text = audit_syslog.format_record(record(command="x" * 100_000, reason="y" * 50_000))
    assert len(text.encode()) <= audit_syslog.MAX_MESSAGE
    body = json.loads(text.partition(" ")[2])
    assert body["session"] == "s1" and "chars cut" in body["command"]


@pytest.mark.parametrize(
    ("action", "priority"),
    [
        ("allow", syslog.LOG_INFO),
        ("halt", syslog.LOG_ALERT),
        ("refuse", syslog.LOG_WARNING),
        ("???", syslog.LOG_WARNING),
    ],
)
def test_priority_by_action(action: str, priority: int) -> None:
    assert audit_syslog.priority_for(record(action=action)) == priority


def test_send_never_raises(tmp_path: Path) -> None:
    audit_syslog.send(record())  # the real system log (journald may be absent: still no error)
    audit_syslog.send({"action": object(), "weird": {1, 2}})
    audit_syslog.send(record(), str(tmp_path / "nobody-listens"))
    audit_syslog.send_lines([(6, "x" * 1_000_000)], str(tmp_path / "nobody-listens"))


def test_send_is_a_syslog_datagram_under_the_gatesh_ident(tmp_path: Path) -> None:
    with SyslogSink(str(tmp_path / "log")) as sink:
        audit_syslog.send(record(action="halt"), sink.path)
        assert sink.wait_for("halt {")
    [line] = sink.lines()
    assert re.match(r"^[A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d gatesh\[\d+\]: halt \{", line), line


def test_copies_and_head_anchors_read_back(tmp_path: Path) -> None:
    """What the writer sends can be read back from a syslog file, for the log it names only."""
    log = str(tmp_path / "audit.jsonl")
    digest = "ab" * 32
    lines = [
        "Jan  5 10:00:00 host "
        + "gatesh[12]: "
        + audit_syslog.copy_message(record(), 7, digest, log)[1],
        "gatesh[12]: " + audit_syslog.head_message(7, digest, log, "every 100")[1],
        audit_syslog.head_message(9, digest, str(tmp_path / "other.jsonl"), "start")[1],
        'Jan  5 10:00:00 host sshd[3]: allow {"seq": 1}',
        "garbage",
    ]
    got = audit_syslog.anchors(lines, log)
    assert got == [Anchor(7, digest, head=False), Anchor(7, digest, head=True)]

"""Audit export to the system log: formatting and a send that never raises."""

from __future__ import annotations

import json
import syslog

import pytest

from gatesh import audit_syslog


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


def test_send_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    audit_syslog.send(record())  # the real system log (journald may be absent: still no error)
    audit_syslog.send({"action": object(), "weird": {1, 2}})

    def broken(*_: object) -> None:
        raise OSError("no /dev/log")

    monkeypatch.setattr(syslog, "syslog", broken)
    audit_syslog.send(record())


def test_send_uses_the_gatesh_ident(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[object, ...]] = []
    monkeypatch.setattr(audit_syslog, "_opened", False)
    monkeypatch.setattr(syslog, "openlog", lambda *a: calls.append(("open", *a)))
    monkeypatch.setattr(syslog, "syslog", lambda *a: calls.append(("log", *a)))
    audit_syslog.send(record(action="halt"))
    assert calls[0] == ("open", "gatesh", syslog.LOG_PID, syslog.LOG_USER)
    assert calls[1][1] == syslog.LOG_ALERT and str(calls[1][2]).startswith("halt {")

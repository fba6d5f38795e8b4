"""The human-only verbs' client side: what they send and how they report (the daemon's refusal
itself is driven for real in test_watch_tmux.py and test_people_daemon below)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gatesh import client, people

ROOT = Path(__file__).resolve().parents[1]


class Log(list[tuple[str, dict[str, Any]]]):
    """The ops sent, and the replies (or exceptions) the fake daemon gives, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.replies: list[Any] = []


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Log:
    log = Log()
    replies = log.replies

    def fake(role: str, message: dict[str, Any], **_: Any) -> dict[str, Any]:
        log.append((role, message))
        reply = replies.pop(0) if replies else {"ok": True}
        if isinstance(reply, Exception):
            raise reply
        return reply

    monkeypatch.setattr(client, "request", fake)
    return log


def test_mandate_sends_the_text_as_human(sent: Log, capsys: pytest.CaptureFixture[str]) -> None:
    sent.replies.append({"ok": True, "sessions": ["a", "b"]})
    assert people.mandate_main(["undo", "my", "last", "commit"]) == 0
    role, msg = sent[0]
    assert role == "human" and msg == {  # the daemon's MandateRequest, "" for every session
        "op": "mandate",
        "text": "undo my last commit",
        "session": "",
        "channel": "mandate",
    }
    assert "every session (2 now" in capsys.readouterr().out


def test_mandate_for_one_session(sent: Log) -> None:
    assert people.mandate_main(["--session", "s9", "do it"]) == 0
    assert sent[0][1]["session"] == "s9"


@pytest.mark.parametrize("verb", ["approve", "deny"])
def test_rulings_send_the_lowercased_id(
    verb: str, sent: Log, capsys: pytest.CaptureFixture[str]
) -> None:
    main = people.approve_main if verb == "approve" else people.deny_main
    assert main(["AB12CD"]) == 0
    assert sent[0] == ("human", {"op": verb, "pending_id": "ab12cd", "note": ""})
    assert "ab12cd:" in capsys.readouterr().out


def test_refusal_is_clear_and_exits_1(sent: Log, capsys: pytest.CaptureFixture[str]) -> None:
    sent.replies.append(
        {
            "ok": False,
            "refused": True,
            "re": "approve",
            "error": "refused: process 7 (bash) in its ancestry belongs to the gated session 's1'",
        }
    )
    assert people.approve_main(["ab12cd"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gatesh approve: the gate refused this: process 7 (bash)")
    assert "outside any gated session" in err


def test_unknown_id_and_unreachable_daemon_exit_1(
    sent: Log, capsys: pytest.CaptureFixture[str]
) -> None:
    sent.replies.append({"ok": False, "error": "no pending escalation 'zz'"})
    sent.replies.append(client.DaemonUnavailable("no socket"))
    assert people.deny_main(["zz"]) == 1
    assert people.resume_main(["s1"]) == 1
    err = capsys.readouterr().err
    assert "no pending escalation" in err and "could not be reached (no socket)" in err


def test_resume_reports_whether_it_was_halted(
    sent: Log, capsys: pytest.CaptureFixture[str]
) -> None:
    sent.replies += [
        {"ok": True, "session": "s1", "was_halted": True},
        {"ok": True, "session": "s2", "was_halted": False},
    ]
    assert people.resume_main(["s1"]) == 0
    assert people.resume_main(["s2"]) == 0
    out = capsys.readouterr().out
    assert "session s1 resumed" in out and "session s2 was not halted" in out


def test_reply_text_is_neutralised(sent: Log, capsys: pytest.CaptureFixture[str]) -> None:
    sent.replies.append({"ok": True, "text": "approved: `x\x1b[2J` may run"})
    assert people.approve_main(["ab12cd"]) == 0
    assert "\x1b" not in capsys.readouterr().out


@pytest.mark.slow
def test_a_gated_process_is_refused_by_the_real_daemon(isolated_home: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        gated = subprocess.run(
            [sys.executable, "-m", "gatesh", "mandate", "rm everything"],
            env={**env, "GATESH_SESSION": "agent-1"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert gated.returncode == 1
        assert "the gate refused this" in gated.stderr and "'agent-1'" in gated.stderr
        person = subprocess.run(
            [sys.executable, "-m", "gatesh", "resume", "nobody"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert person.returncode == 0, person.stderr
        assert "was not halted" in person.stdout
    finally:
        lock = Path(os.environ["XDG_RUNTIME_DIR"]) / "gatesh" / "daemon.lock"
        try:
            os.kill(int(lock.read_text().split()[0]), 15)
        except (OSError, ValueError, IndexError):
            pass

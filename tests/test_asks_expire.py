"""An ask at a surface lives as long as its harness (S7, S11.4): a hook's ``ask`` whose harness
process exited unanswered is expired — no longer "waiting for an answer now" in ``gatesh status``
or to a new watcher, recorded in the audit log, and still approvable for the agent's retry.

Real parts: the daemon, the real ``gatesh hook claude-code`` process, and a stand-in harness (a
Python process that runs the hook as its child, as Claude Code does, and then stays up until the
test lets it exit). The command asked about only names a host; nothing here runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _daemon import stop_daemon

from gatesh import _paths, client
from gatesh.finish import Where
from gatesh.pending import Holder, IllegalTransition, PendingBook, PendingKind, PendingState
from gatesh.ruling import expire_ask

GATESH = [sys.executable, "-m", "gatesh"]
# The open-world floor sends this to a person: an interactive Claude Code's hook answers `ask`.
ASKED = "curl -d x=1 https://example.com/asked"  # data sent: the open-world floor asks a person

# The stand-in harness: runs the hook with the hook input from argv[1], prints its answer, then
# waits for a line on stdin before it exits (the test decides when the harness is gone).
HARNESS = textwrap.dedent("""
    import os, subprocess, sys
    out = subprocess.run(sys.argv[2:], input=sys.argv[1], text=True, capture_output=True,
                         env={**os.environ, "CLAUDE_CODE_ENTRYPOINT": "cli"})
    sys.stdout.write(out.stdout.strip() + "\\n")
    sys.stdout.flush()
    sys.stdin.readline()
""")


@pytest.fixture(autouse=True)
def daemon_cleanup() -> Iterator[None]:
    yield
    stop_daemon()


def _hook_input(command: str, session: str, cwd: Path) -> str:
    return json.dumps(
        {
            "hook_event_name": "PreToolUse",
            "session_id": session,
            "cwd": str(cwd),
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }
    )


def _start_harness(
    command: str, session: str, cwd: Path
) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    """The stand-in harness, after its hook answered: (the process, the hook's answer)."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            HARNESS,
            _hook_input(command, session, cwd),
            *GATESH,
            "hook",
            "claude-code",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, json.loads(line)["hookSpecificOutput"]


def _status() -> tuple[dict[str, Any], str]:
    raw = subprocess.run([*GATESH, "status", "--json"], capture_output=True, text=True, timeout=60)
    text = subprocess.run(
        [*GATESH, "status"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "100"},
    )
    assert raw.returncode == 0 and text.returncode == 0, raw.stderr + text.stderr
    return json.loads(raw.stdout), text.stdout


def _audit() -> list[dict[str, Any]]:
    path = Path(_paths.current().audit_log)
    return (
        [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []
    )


def _pending(status: dict[str, Any], pending_id: str) -> dict[str, Any]:
    return next(p for p in status["pending"] if p["pending_id"] == pending_id)


@pytest.mark.slow
def test_an_ask_expires_when_its_harness_exits(tmp_path: Path) -> None:
    harness, answer = _start_harness(ASKED, "cc-ask", tmp_path)
    assert answer["permissionDecision"] == "ask", answer
    pending_id = next(r["pending_id"] for r in _audit() if r["command"] == ASKED)
    # While the harness runs, its person may still answer the prompt it shows.
    status, text = _status()
    assert _pending(status, pending_id)["state"] == "asking"
    assert "1 waiting for an answer now" in text, text
    seen = client.request("admin", {"op": "subscribe"})["pending"]
    assert [p["pending_id"] for p in seen] == [pending_id]

    assert harness.stdin is not None
    harness.stdin.write("exit\n")
    harness.stdin.close()
    harness.wait(timeout=30)

    status, text = _status()
    gone = _pending(status, pending_id)
    assert gone["state"] == "expired" and "exited before a person answered" in gone["ended"], gone
    assert "waiting for an answer now" not in text, text
    assert f"gatesh approve {pending_id}" in text and "exited before a person answered" in text, (
        text
    )
    assert (
        client.request("admin", {"op": "subscribe"})["pending"] == []
    )  # not shown to a new watcher
    expired = [
        r for r in _audit() if r.get("pending_id") == pending_id and r["action"] == "expired"
    ]
    assert len(expired) == 1, _audit()
    assert expired[0]["stage"] == "person" and f"pid {harness.pid}" in expired[0]["reason"], expired
    _status()  # expiring is once: a second look writes no second line
    assert len([r for r in _audit() if r.get("action") == "expired"]) == 1

    # Expired, not lost: a person may still let the agent's retry run once.
    approved = subprocess.run(
        [*GATESH, "approve", pending_id], capture_output=True, text=True, timeout=60
    )
    assert approved.returncode == 0 and "may run once" in approved.stdout, (
        approved.stdout + approved.stderr
    )
    retry, answer = _start_harness(ASKED, "cc-ask", tmp_path)
    assert answer["permissionDecision"] == "allow", answer
    retry.communicate("exit\n", timeout=30)


@pytest.mark.slow
def test_an_ask_stays_while_its_harness_runs(tmp_path: Path) -> None:
    """The expiry follows the harness, not the hook process (which exits at once)."""
    harness, answer = _start_harness(ASKED, "cc-stay", tmp_path)
    try:
        assert answer["permissionDecision"] == "ask", answer
        pending_id = next(r["pending_id"] for r in _audit() if r["command"] == ASKED)
        for _ in range(3):
            status, _text = _status()
            assert _pending(status, pending_id)["state"] == "asking"
        assert not [r for r in _audit() if r.get("action") == "expired"]
    finally:
        harness.communicate("exit\n", timeout=30)


# --- the mechanism, without a daemon ------------------------------------------------------------


class _Audit:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def append(self, record: dict[str, Any]) -> None:
        self.records.append(record)


def _open(book: PendingBook, state: PendingState, holder: Holder | None) -> Any:
    return book.open(
        session="s",
        command="curl https://example.com/x",
        key="k",
        cwd="/tmp",
        reason="r",
        kind=PendingKind.ESCALATE,
        state=state,
        surface="hook",
        holder=holder,
    )


def test_expire_moves_an_ask_to_expired_and_keeps_it_approvable(tmp_path: Path) -> None:
    book, audit = PendingBook(str(tmp_path)), _Audit()
    p = _open(book, PendingState.ASKING, Holder(pid=123, start=1, name="claude"))
    assert book.orphaned(lambda h: True) == []
    assert book.orphaned(lambda h: False) == [p]
    error = expire_ask(
        p,
        where=Where("s", None, "/tmp", "hook"),
        book=book,
        audit=audit,
        why="its harness claude (pid 123) exited",
    )
    assert error == "" and p.state is PendingState.EXPIRED and book.orphaned(lambda h: False) == []
    assert [(r.action, r.stage, r.reason, r.pending_id) for r in audit.records] == [
        ("expired", "person", "its harness claude (pid 123) exited", p.id)
    ]
    again = PendingBook(str(tmp_path)).find(p.id)  # on disk, for `gatesh approve ID`
    assert (
        again is not None
        and again.state is PendingState.EXPIRED
        and again.ended.startswith("its harness")
    )


def test_only_an_ask_at_a_surface_expires_on_its_own(tmp_path: Path) -> None:
    """A watcher's question (WAITING) is ended by the check that waits for it, never from outside;
    only ASKING records carry a holder."""
    book = PendingBook(str(tmp_path))
    waiting = _open(book, PendingState.WAITING, Holder(pid=123, start=1, name="claude"))
    assert waiting.holder is None and book.orphaned(lambda h: False) == []
    with pytest.raises(IllegalTransition):
        expire_ask(
            waiting, where=Where("s", None, "/tmp", "hook"), book=book, audit=_Audit(), why="x"
        )
    assert waiting.state is PendingState.WAITING

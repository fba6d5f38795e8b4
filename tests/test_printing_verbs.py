"""What the person's printing verbs print (S13): quiet when the reader goes away, one row per
command however long, and the surface of every session.

Real processes: the CLI as a subprocess, a real daemon, the real hook adapter. The commands only
reach the gate through a hook answered "deny" (a hook never runs anything itself).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _daemon import stop_daemon

from gatesh import _paths, client
from gatesh._errors import EXIT_BROKEN_PIPE
from gatesh.render import display_width, one_line

GATESH = [sys.executable, "-m", "gatesh"]


@pytest.fixture
def daemon_cleanup() -> Iterator[None]:
    yield
    stop_daemon()


def _into_closed_pipe(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``gatesh ARGS`` with its stdout a pipe nobody reads any more (``| head -1`` after head
    exited): the first write fails with EPIPE, deterministically."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [*GATESH, *args], stdout=write, stderr=subprocess.PIPE, text=True, timeout=120
        )
    finally:
        os.close(write)


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["status"],
        ["status", "--json"],
        ["log"],
        ["log", "--json"],
        ["explain", "git status"],
        ["explain", "--json", "git status"],
        ["config"],
        ["--help"],
        ["--version"],
    ],
    ids=" ".join,
)
def test_a_reader_that_went_away_is_no_traceback(args: list[str]) -> None:
    log = Path(_paths.current().audit_log)  # something for `log` to print
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(
        json.dumps(
            {
                "time": "2026-12-01T12:00:00+0000",
                "action": "allow",
                "stage": "read-only",
                "session": "s",
                "command": "git status",
            }
        )
        + "\n"
    )
    out = _into_closed_pipe(args)
    assert "Traceback" not in out.stderr and "BrokenPipeError" not in out.stderr, out.stderr
    assert out.returncode == EXIT_BROKEN_PIPE, (out.returncode, out.stderr)


def test_one_line_bounds_and_says_the_true_length() -> None:
    text = "echo " + "x" * 5000 + "\nrm -rf build"
    row = one_line(text, 80)
    assert display_width(row) <= 80 and row.endswith(f"… ({len(text):,} chars)") and "\n" not in row
    assert one_line("git status", 80) == "git status"
    wide = one_line("界" * 100, 30)  # wide characters count 2 columns
    assert display_width(wide) <= 30


def _hook(command: str, session: str, cwd: Path) -> dict[str, object]:
    data = {
        "hook_event_name": "PreToolUse",
        "session_id": session,
        "cwd": str(cwd),
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CODE_ENTRYPOINT"}  # headless: no ask
    out = subprocess.run(
        [*GATESH, "hook", "claude-code"],
        input=json.dumps(data),
        text=True,
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout)["hookSpecificOutput"])


def _status(columns: int) -> str:
    out = subprocess.run(
        [*GATESH, "status"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": str(columns)},
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.slow
@pytest.mark.usefixtures("daemon_cleanup")
def test_status_prints_each_command_on_one_bounded_row(tmp_path: Path) -> None:
    # A harness's snapshot-sized command: the open-world floor sends it to a person, nobody is
    # watching, so it is refused with a pending id and listed by status.
    command = "curl -d x=1 https://example.com/x -o out.txt; : " + "a" * 6000
    assert _hook(command, "long", tmp_path)["permissionDecision"] == "deny"
    text = _status(100)
    rows = text.splitlines()
    assert all(display_width(r) <= 100 for r in rows), [r for r in rows if display_width(r) > 100]
    cut = [r for r in rows if "curl -d x=1 https://example.com/x" in r]
    assert len(cut) == 1 and cut[0].endswith(f"({len(command):,} chars)"), cut


@pytest.mark.slow
@pytest.mark.usefixtures("daemon_cleanup")
def test_a_session_opened_by_a_mandate_shows_its_surface(tmp_path: Path) -> None:
    reply = client.request(
        "human",
        {
            "op": "mandate",
            "text": "tidy the repository",
            "session": "cc-m",
            "channel": "claude-code-prompt",
        },
    )
    assert reply["ok"], reply
    assert "cc-m  (no command yet; 0 checks" in _status(200)
    assert _hook("git status", "cc-m", tmp_path)["permissionDecision"] == "allow"
    text = _status(200)
    assert "cc-m  (hook; 1 check" in text and "?;" not in text, text

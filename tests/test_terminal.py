"""A full-screen program needs a terminal (issue 32): the surface says whether its command has one.

A PTY session's commands run at a terminal; a hook's harness runs commands without one; a ``-c``
or shim client has one when its input and output are a terminal. At a terminal, an editor is
judged as an edit of its files; without one it would wait for keys nobody types, and is refused
with that reason (a rejection, never a halt). The fast tests decide with the real pipeline and
the real in-process gate; the slow one runs the real ``-c`` client under a real PTY and on pipes.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gatesh._types import Action, Decision, Rung
from gatesh.config import default
from gatesh.daemon.protocol import Fields
from gatesh.daemon.requests import CheckRequest
from gatesh.inprocess import check as check_here
from gatesh.messages import MOVES, ONLY_ANOTHER
from gatesh.pipeline import decide
from gatesh.rater import make_rater
from gatesh.session import SessionState
from gatesh.surfaces import at_terminal

CONFIG = default()
EDITORS = (
    "vim notes.txt",
    "vi notes.txt",
    "nvim notes.txt",
    "vim -Z notes.txt",
    "nano notes.txt",
    "emacs -nw notes.txt",
    "micro notes.txt",
    "command vim notes.txt",
)


def _decided(cmd: str, cwd: Path, *, terminal: bool) -> Decision:
    return decide(
        cmd,
        cwd=str(cwd),
        config=CONFIG,
        session=SessionState(id="terminal"),
        rater=make_rater(CONFIG, "builtin"),
        rung=Rung.AUTO,
        terminal=terminal,
    )


def _decide(cmd: str, cwd: Path, *, terminal: bool) -> tuple[Action, str, str]:
    d = _decided(cmd, cwd, terminal=terminal)
    return d.action, d.rule_id, d.reason


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("notes\n")
    return tmp_path


@pytest.mark.parametrize("cmd", EDITORS)
def test_an_editor_at_a_terminal_is_an_edit(folder: Path, cmd: str) -> None:
    action, rule, reason = _decide(cmd, folder, terminal=True)
    assert action is Action.ALLOW, (rule, reason)


@pytest.mark.parametrize("cmd", EDITORS)
def test_an_editor_without_a_terminal_is_refused_as_a_hang(folder: Path, cmd: str) -> None:
    action, rule, reason = _decide(cmd, folder, terminal=False)
    assert action is Action.REJECT and rule == "session.needs-terminal", (action, rule)
    assert "without a terminal" in reason and "hangs" in reason


@pytest.mark.parametrize(
    "cmd",
    [
        # what the edit touches is judged as before: a credential, a startup file
        "vim ~/.ssh/id_ed25519",
        "nano ~/.bashrc",
        # line mode reads typed commands whose shell escapes the gate cannot see, terminal or not
        "vim -e notes.txt",
        "ex notes.txt",
        "ed notes.txt",
    ],
)
def test_a_terminal_lifts_only_the_need_for_one(folder: Path, cmd: str) -> None:
    action, rule, _ = _decide(cmd, folder, terminal=True)
    assert action is not Action.ALLOW and rule != "session.needs-terminal", rule


@pytest.mark.parametrize(
    "cmd",
    [
        # a multiplexer's pane is a terminal, whatever the surface has
        "tmux send-keys -t work 'vim notes.txt' Enter",
        # modes that need no terminal; pagers print without one
        "vim --version",
        "emacs --batch -l build.el",
        "less notes.txt",
    ],
)
def test_no_terminal_needed(folder: Path, cmd: str) -> None:
    _, rule, _ = _decide(cmd, folder, terminal=False)
    assert rule != "session.needs-terminal"


@pytest.mark.parametrize(
    ("surface", "says", "expected"),
    [
        ("pty", False, True),
        ("-c", True, True),
        ("shim", True, True),
        ("-c", False, False),
        ("shim", False, False),
        # a hook's harness runs what it hooks without a terminal, whatever its client says
        ("hook", True, False),
        ("hook", False, False),
        ("eval", True, False),
    ],
)
def test_the_surface_says_whether_there_is_a_terminal(
    surface: str, says: bool, expected: bool
) -> None:
    assert at_terminal(surface, says) is expected


def test_the_request_carries_the_clients_word() -> None:
    base = {"op": "check", "command": "vim x", "cwd": "/tmp", "surface": "-c"}
    assert CheckRequest.decode(Fields({**base, "terminal": True})).terminal is True
    assert CheckRequest.decode(Fields(base)).terminal is False
    assert (
        CheckRequest.decode(Fields({**base, "terminal": "yes"})).terminal is False
    )  # only a true bool


@pytest.mark.parametrize(
    ("surface", "says", "action"),
    [
        ("-c", True, "allow"),
        ("-c", False, "reject"),
        ("pty", False, "allow"),
        ("hook", True, "reject"),
    ],
)
def test_the_in_process_gate_decides_with_the_surfaces_terminal(
    folder: Path, surface: str, says: bool, action: str
) -> None:
    reply = check_here("vim notes.txt", cwd=str(folder), surface=surface, terminal=says)
    assert reply.action.value == action, reply


# --- the real -c client, at a terminal and on pipes -------------------------------------------

GATESH = [sys.executable, "-m", "gatesh"]
MARK = "full-screen-program-ran"


def _fake_editor(tmp: Path) -> dict[str, str]:
    """A PATH whose `micro` only prints a marker (harmless if the gate let it run)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    prog = bin_dir / "micro"
    prog.write_text(f"#!/bin/sh\necho {MARK}\n")
    prog.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.mark.slow
def test_the_c_client_says_whether_it_runs_at_a_terminal(folder: Path) -> None:
    env = _fake_editor(folder)
    piped = subprocess.run(
        [*GATESH, "-c", "micro notes.txt"],
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert piped.returncode == 126 and MARK not in piped.stdout, (piped.stdout, piped.stderr)
    assert "without a terminal" in piped.stderr
    primary, secondary = os.openpty()
    try:
        proc = subprocess.Popen(
            [*GATESH, "-c", "micro notes.txt"],
            cwd=folder,
            env=env,
            stdin=secondary,
            stdout=secondary,
            stderr=secondary,
            start_new_session=True,
        )
        os.close(secondary)
        out = b""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if select.select([primary], [], [], 0.2)[0]:
                try:
                    chunk = os.read(primary, 4096)
                except OSError:  # EIO: every process on the terminal's side has closed it
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
        proc.wait(timeout=30)
    finally:
        os.close(primary)
    assert proc.returncode == 0 and MARK.encode() in out, out[-2000:]


def _message(cmd: str, cwd: Path) -> str:
    return _decided(cmd, cwd, terminal=False).message


@pytest.mark.parametrize("cmd", EDITORS)
def test_a_hang_is_not_offered_a_justification(folder: Path, cmd: str) -> None:
    """No justification gives a command a terminal (S8.1: only the moves the agent has)."""
    told = _message(cmd, folder)
    assert told.endswith(ONLY_ANOTHER) and MOVES not in told, told


def test_a_hang_beside_a_judged_risk_keeps_both_moves(folder: Path) -> None:
    """One justifiable finding among them: a justification may still change the rejection."""
    told = _message("vim notes.txt; git reset --hard", folder)
    assert MOVES in told and ONLY_ANOTHER not in told, told

"""Waiting on a tmux pane: the one loop the tmux-driven tests share (tests/_pty_tmux.py,
tests/_agent_tmux.py, tests/person_session.py).

Guarantees: each wait polls at :data:`POLL_S` until its condition holds, and raises
AssertionError after ``deadline`` seconds naming what it waited for, with the last screen read,
so a failure shows what the pane showed instead of a bare timeout.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

# How often a pane is read again: a prompt shows up within tens of milliseconds on an idle machine.
POLL_S = 0.05


def until_screen(
    read: Callable[[], str], pred: Callable[[str], bool], *, what: str, deadline: float
) -> str:
    """The first screen ``read`` returns that ``pred`` holds for, read again until ``deadline``."""
    end = time.monotonic() + deadline
    screen = ""
    while True:
        screen = read()
        if pred(screen):
            return screen
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}; screen:\n{screen}")
        time.sleep(POLL_S)


def exit_status(path: Path, *, deadline: float) -> int:
    """The exit status a pane's wrapper wrote to ``path`` once the program in it ended
    (``prog; echo $? > path``: tmux does not always report a dead pane's status)."""
    end = time.monotonic() + deadline
    while True:
        text = path.read_text().strip() if path.exists() else ""
        if text:
            return int(text)
        if time.monotonic() > end:
            raise AssertionError("the session did not end")
        time.sleep(POLL_S)

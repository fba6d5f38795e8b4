"""A gated PTY session driven through tmux, for tests/test_pty*.py (isolated HOME and XDG dirs)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests._tmux_wait import exit_status, until_screen

DEADLINE_S = 8.0

# bash and zsh, each skipped (visibly, with its reason) when that shell is not installed, so a
# machine without zsh reports the zsh cases as skipped instead of silently not collecting them.
SHELL_PARAMS = [
    pytest.param(
        name,
        id=name,
        marks=pytest.mark.skipif(shutil.which(name) is None, reason=f"{name} is not installed"),
    )
    for name in ("bash", "zsh")
]


def past_banner(screen: str) -> str:
    """The screen without the line a gated session starts with (it says the shell is gated,
    config ``session.mark``): what a test reads for the gate's messages about commands."""
    return "\n".join(
        line
        for line in screen.splitlines()
        if not (line.startswith("gatesh: this ") and " is gated: " in line)
    )


class TmuxSession:
    """One tmux server on its own socket running ``python -m gatesh`` in a 120x40 window."""

    def __init__(
        self,
        tmp: Path,
        shell: str,
        *,
        extra: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        home_files: dict[str, str] | None = None,
        config: str = "",
    ) -> None:
        self.tmp = tmp
        self.home = tmp / "home"
        self.work = tmp / "work"
        for d in (self.home, self.work, tmp / "cfg", tmp / "state", tmp / "data", tmp / "run"):
            d.mkdir(parents=True, exist_ok=True)
        os.chmod(tmp / "run", 0o700)
        if config:
            (tmp / "cfg" / "gatesh").mkdir(parents=True, exist_ok=True)
            (tmp / "cfg" / "gatesh" / "config.toml").write_text(config)
        for name, text in (home_files or {}).items():
            (self.home / name).write_text(text)
        self.config = tmp / "cfg" / "gatesh" / "config.toml"
        self.socket = f"gatesh-test-{uuid.uuid4().hex[:10]}"
        self.env = {
            "HOME": str(self.home),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "XDG_CONFIG_HOME": str(tmp / "cfg"),
            "XDG_STATE_HOME": str(tmp / "state"),
            "XDG_DATA_HOME": str(tmp / "data"),
            "XDG_RUNTIME_DIR": str(tmp / "run"),
            "GATESH_SYSTEM_CONFIG": str(tmp / "etc" / "config.toml"),  # absent: no system tier
            "SHELL": f"/bin/{shell}",
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
            **(env or {}),
        }
        for rc in (".bashrc", ".zshrc"):
            if not (self.home / rc).exists():
                (self.home / rc).write_text("PS1='$ '\n")
        cmd = " ".join(
            shlex.quote(w) for w in [sys.executable, "-m", "gatesh", "--shell", shell, *extra]
        )
        envs = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        # gatesh's exit status is written by a parent sh: tmux 3.3a sometimes marks the pane dead
        # without ever reporting #{pane_dead_status} (its child left unreaped), so don't rely on it.
        self.exit_file = tmp / "exit-status"
        wrapped = f"{cmd}; echo $? > {shlex.quote(str(self.exit_file))}"
        self.tmux(
            "new-session",
            "-d",
            "-x",
            "120",
            "-y",
            "40",
            "-c",
            str(self.work),
            f"env -i {envs} sh -c {shlex.quote(wrapped)}",
        )
        self.tmux("set-option", "-g", "remain-on-exit", "on")
        self.wait_for(lambda s: s.rstrip().endswith("$"), what="the first prompt")

    def judge_without_undo(self) -> None:
        """The session's gate judges without undo from now on (``[undo] enabled = false``; the
        daemon reads a changed config at its next check): for a test that needs a work-tree loss
        refused, which with undo (S17) runs when a snapshot holds it."""
        self.config.parent.mkdir(parents=True, exist_ok=True)
        with self.config.open("a", encoding="utf-8") as f:
            f.write("\n[undo]\nenabled = false\n")

    def tmux(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        )
        return out.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-S", "-200")

    def send(self, text: str, enter: bool = True) -> None:
        self.tmux("send-keys", "-l", text)
        if enter:
            self.tmux("send-keys", "Enter")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", *keys)

    def wait_for(
        self, pred: Callable[[str], bool], *, what: str, deadline: float = DEADLINE_S
    ) -> str:
        return until_screen(self.screen, pred, what=what, deadline=deadline)

    def run(self, text: str, *, marker: str | None = None) -> str:
        """Type ``text`` and wait for the output line ``marker`` (default: a fresh echo after it)."""
        tag = marker or f"done-{uuid.uuid4().hex[:6]}"
        self.send(text)
        if marker is None:
            self.send(f"echo {tag[:5]}''{tag[5:]}")
        return self.wait_for(
            lambda s: any(line.strip() == tag for line in s.splitlines()), what=tag
        )

    def status(self) -> int:
        """``$?`` of the last entry."""
        tag = uuid.uuid4().hex[:6]
        self.send(f"echo st{tag}=$?=")
        # The number between the tag and the closing "=", wherever the terminal drew it: text the
        # tty echoed before the shell redrew its line can be left after it ("st…=126=c=$?=", or a
        # digit of an earlier line: "st…=126=6"), never inside it.
        found = re.compile(rf"st{tag}=(\d+)=")
        screen = self.wait_for(lambda s: found.search(s) is not None, what="the status")
        match = found.search(screen)
        assert match is not None, screen
        return int(match.group(1))

    def dead_status(self, deadline: float = DEADLINE_S) -> int:
        """gatesh's exit status once it has ended (AssertionError if it has not within ``deadline``)."""
        return exit_status(self.exit_file, deadline=deadline)

    def close(self) -> None:
        self.tmux("kill-server")

"""A gated session as a person meets it, in tmux: the agent's gated shell in the top pane,
`gatesh watch` in the bottom one — an escalation answered, then one withdrawn with Ctrl-C.

Run it to watch (nothing outside a scratch HOME is touched; the commands only create files in a
scratch folder):

    python3 tests/person_session.py [--pause SECONDS] [--shell bash|zsh]

It prints the `tmux attach` command for a second terminal, plays each step with a pause, and
waits for Enter before it ends. tests/test_person_session.py plays the same steps without pauses
and checks what each pane shows.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The agent's commands that go to a person: an escalate entry, so no rater is involved.
CONFIG = (
    '[[escalate]]\nmatch = "glob"\npattern = "touch asked-*"\n\n[escalation]\ntimeout_s = 120\n'
)
DEADLINE_S = 20.0


class PersonScreen:
    """One tmux server (its own socket) with two panes on one window: ``agent`` (a gated shell, its
    operator the agent) and ``person`` (``gatesh watch``). HOME and XDG folders are under ``tmp``."""

    def __init__(self, tmp: Path, shell: str = "bash") -> None:
        self.tmp = tmp
        self.home, self.work = tmp / "home", tmp / "work"
        for d in (
            self.home,
            self.work,
            tmp / "cfg" / "gatesh",
            tmp / "state",
            tmp / "data",
            tmp / "run",
        ):
            d.mkdir(parents=True, exist_ok=True)
        os.chmod(tmp / "run", 0o700)
        (tmp / "cfg" / "gatesh" / "config.toml").write_text(CONFIG)
        for rc in (".bashrc", ".zshrc"):
            (self.home / rc).write_text("PS1='agent$ '\n")
        self.env = {
            "HOME": str(self.home),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "XDG_CONFIG_HOME": str(tmp / "cfg"),
            "XDG_STATE_HOME": str(tmp / "state"),
            "XDG_DATA_HOME": str(tmp / "data"),
            "XDG_RUNTIME_DIR": str(tmp / "run"),
            "GATESH_SYSTEM_CONFIG": str(tmp / "etc" / "config.toml"),
            "SHELL": f"/bin/{shell}",
            "PYTHONPATH": os.pathsep.join([str(ROOT), *(p for p in sys.path if p)]),
        }
        self.socket = f"gatesh-person-{uuid.uuid4().hex[:8]}"
        envs = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        python = shlex.quote(sys.executable)
        self.tmux(
            "new-session",
            "-d",
            "-x",
            "160",
            "-y",
            "50",
            "-c",
            str(self.work),
            f"env -i {envs} {python} -m gatesh --shell {shell}",
        )
        self.tmux("set-option", "-g", "remain-on-exit", "on")
        self.agent = self.tmux("display", "-p", "#{pane_id}").strip()
        self.person = self.tmux(
            "split-window",
            "-v",
            "-P",
            "-F",
            "#{pane_id}",
            "-c",
            str(self.work),
            f"env -i {envs} {python} -m gatesh watch",
        ).strip()
        self.wait(self.agent, lambda s: s.rstrip().endswith("agent$"), "the agent's prompt")
        self.wait(self.person, lambda s: "watching (answers go to you)" in s, "the watcher")

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout

    def screen(self, pane: str) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-t", pane, "-S", "-500")

    def type(self, pane: str, text: str) -> None:
        if text:
            self.tmux("send-keys", "-t", pane, "-l", text)
        self.tmux("send-keys", "-t", pane, "Enter")

    def keys(self, pane: str, *keys: str) -> None:
        self.tmux("send-keys", "-t", pane, *keys)

    def wait(
        self, pane: str, pred: Callable[[str], bool], what: str, deadline: float = DEADLINE_S
    ) -> str:
        end = time.monotonic() + deadline
        while True:
            text = self.screen(pane)
            if pred(text):
                return text
            if time.monotonic() > end:
                raise AssertionError(f"timed out waiting for {what}; pane {pane}:\n{text}")
            time.sleep(0.05)

    def audit(self) -> list[dict]:
        path = self.tmp / "state" / "gatesh" / "audit.jsonl"
        lines = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
        return [r for r in lines if r.get("action") != "exited"]  # decisions, not run endings

    def close(self) -> None:
        self.tmux("kill-server")
        lock = self.tmp / "run" / "gatesh" / "daemon.lock"
        try:
            os.kill(int(lock.read_text().split()[0]), 15)
        except (OSError, ValueError, IndexError):
            pass


# --- the steps, as a person sees them -------------------------------------------------------------


def step_answered(ps: PersonScreen) -> None:
    """The agent runs a command that needs a person; the person answers `o` in the watcher."""
    ps.type(ps.agent, "touch asked-once")
    ps.wait(ps.person, lambda s: "[o]nce" in s, "the escalation prompt in the watcher")
    ps.type(ps.person, "o")
    ps.wait(ps.person, lambda s: "answered `once` by you" in s, "the answer")
    ps.wait(
        ps.agent,
        lambda s: s.rstrip().endswith("agent$") and (ps.work / "asked-once").exists(),
        "the command to run",
    )


def step_withdrawn(ps: PersonScreen) -> None:
    """The agent runs another; while the person is asked, Ctrl-C in the agent's shell withdraws it."""
    ps.type(ps.agent, "touch asked-withdrawn")
    ps.wait(ps.person, lambda s: s.count("[o]nce") >= 2, "the second prompt")
    ps.wait(ps.agent, lambda s: "a person is being asked" in s, "the agent told it waits")
    ps.keys(ps.agent, "C-c")
    # Not just "withdrawn": the watcher's own prompt shows `touch asked-withdrawn`.
    ps.wait(ps.person, lambda s: "nothing left to answer" in s, "the withdrawal in the watcher")
    ps.wait(ps.agent, lambda s: s.rstrip().endswith("agent$"), "the agent's prompt back")
    ps.type(ps.agent, "echo back-''at-work")
    ps.wait(
        ps.agent,
        lambda s: any(line.strip() == "back-at-work" for line in s.splitlines()),
        "the next command to run at once",
        deadline=10.0,
    )


STEPS = (step_answered, step_withdrawn)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pause", type=float, default=3.0, help="seconds between steps (default 3)"
    )
    parser.add_argument("--shell", choices=("bash", "zsh"), default="bash")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gatesh-person-") as tmp:
        ps = PersonScreen(Path(tmp), args.shell)
        try:
            print(f"watch it from another terminal:  tmux -L {ps.socket} attach -r")
            time.sleep(args.pause)
            for step in STEPS:
                print(f"- {(step.__doc__ or step.__name__).strip()}")
                step(ps)
                time.sleep(args.pause)
            print("done; the panes stay until you press Enter")
            sys.stdin.readline()
        finally:
            ps.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

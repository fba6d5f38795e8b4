"""A gated PTY session driven through tmux as an unprivileged user (issue 28's must-shows).

- The user is :data:`tests.harness.world.AGENT`, made once with ``useradd``; gatesh is this
  checkout copied where that user can read it (:func:`tests.harness.world.install_gatesh`).
- Each session has a scratch HOME copied from ``/etc/skel`` (Debian's stock ``.bashrc``), its own
  tmux server on a socket in the scratch folder, and every tmux command runs as the user.
- A **probe folder** ``/tmp/probe-gatesh-agent-XXXX`` owned by the user holds the harmless marker
  the config's deny list names (``touch PROBE/MARK``): had the gate failed, the worst that ran is
  ``touch`` of a file there.
- :meth:`AgentTmux.trace` attaches ``strace -f -e execve`` (run by root) to the session's shell, so
  a test can compare every program the session started with the audit log.

Needs root (to create the user and drop to it), tmux and setpriv; :func:`missing` says what is
missing, and callers skip with that reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import shlex
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests._tmux_wait import exit_status, until_screen
from tests.harness import world

DEADLINE_S = 15.0
MARK = "MARK"


def missing(*tools: str) -> str:
    """Why these tests cannot run here ("" when they can)."""
    if os.geteuid() != 0:
        return "needs root (creates the unprivileged agent user and drops to it)"
    gone = [t for t in ("tmux", "setpriv", "useradd", *tools) if shutil.which(t) is None]
    return f"needs {', '.join(gone)} on PATH" if gone else ""


def as_user(user: pwd.struct_passwd) -> list[str]:
    return [
        "setpriv",
        f"--reuid={user.pw_uid}",
        f"--regid={user.pw_gid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--",
    ]


@dataclass
class Installed:
    """gatesh installed once for the agent user (a module-scoped fixture holds one)."""

    user: pwd.struct_passwd
    install: world.Install
    base: Path

    @classmethod
    @contextlib.contextmanager
    def make(cls) -> Iterator[Installed]:
        user = world.agent_user()
        with world.scratch() as base:
            install = world.install_gatesh(base / "gatesh", user)
            yield cls(user, install, base)


def deny_config(probe: Path, extra: str = "") -> str:
    """The config every session here starts with: the builtin rater, and the marker denied."""
    return (
        '[rater]\nbackend = "builtin"\n\n'
        f'[[deny]]\nmatch = "prefix"\npattern = "touch {probe}/{MARK}"\n'
        'note = "the probe marker of the test table"\n' + extra
    )


@dataclass
class AgentTmux:
    """One tmux server as the agent user, its one window running the gated shell."""

    inst: Installed
    shell: str = "bash"
    config: str = ""
    home_files: dict[str, str] = field(default_factory=dict)
    extra_args: tuple[str, ...] = ()
    env_extra: dict[str, str] = field(default_factory=dict)
    command: str = ""  # what the window runs (default: the gated shell)
    width: int = 160
    height: int = 50

    def __post_init__(self) -> None:
        user = self.inst.user
        self.root = Path(
            subprocess.check_output(["mktemp", "-d", "/tmp/gh-sess-XXXXXX"], text=True).strip()
        )
        os.chmod(self.root, 0o755)
        self.home = self.root / "home"
        shutil.copytree("/etc/skel", self.home)
        if not (self.home / ".zshrc").exists():
            # Debian ships no skeleton .zshrc; without one zsh runs its new-user menu.
            (self.home / ".zshrc").write_text(
                "PS1='%n%# '\nHISTFILE=~/.zsh_history\nSAVEHIST=1000\nHISTSIZE=1000\n"
            )
        for name, text in self.home_files.items():
            (self.home / name).write_text(text)
        (self.home / "run").mkdir()
        (self.home / ".config/gatesh").mkdir(parents=True)
        self.work = self.root / "work"
        self.work.mkdir()
        self.probe = Path(f"/tmp/probe-{world.AGENT}-{uuid.uuid4().hex[:8]}")
        self.probe.mkdir()
        (self.home / ".config/gatesh/config.toml").write_text(
            self.config or deny_config(self.probe)
        )
        for path in (self.root, self.probe):
            for folder, _dirs, files in os.walk(path):
                os.chown(folder, user.pw_uid, user.pw_gid)
                for name in files:
                    os.chown(os.path.join(folder, name), user.pw_uid, user.pw_gid)
        os.chmod(self.home / "run", 0o700)
        os.chmod(self.home, 0o700)
        self.sock = str(self.root / "tmux.sock")
        self.exit_file = self.root / "exit-status"
        self.env = {
            "HOME": str(self.home),
            "USER": world.AGENT,
            "LOGNAME": world.AGENT,
            "PATH": f"{self.inst.install.launcher.parent}:/usr/local/bin:/usr/bin:/bin",
            "SHELL": f"/bin/{self.shell}",
            "LANG": "C.UTF-8",
            "TERM": "xterm-256color",
            "XDG_RUNTIME_DIR": str(self.home / "run"),
            "GATESH_SYSTEM_CONFIG": str(self.root / "etc-gatesh" / "config.toml"),
            **self.env_extra,
        }
        launcher = shlex.quote(str(self.inst.install.launcher))
        args = " ".join(shlex.quote(a) for a in ("--shell", self.shell, *self.extra_args))
        inner = self.command or f"{launcher} {args}"
        wrapped = f"{inner}; echo $? > {shlex.quote(str(self.exit_file))}"
        self.tmux(
            "new-session",
            "-d",
            "-x",
            str(self.width),
            "-y",
            str(self.height),
            "-c",
            str(self.work),
            f"sh -c {shlex.quote(wrapped)}",
        )
        self.tmux("set-option", "-g", "remain-on-exit", "on")
        self.strace: subprocess.Popen[bytes] | None = None
        self.trace_file = self.root / "exec.trace"

    # --- driving ---

    def tmux(self, *args: str) -> str:
        out = subprocess.run(
            [*as_user(self.inst.user), "tmux", "-S", self.sock, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=15,
            env=self.env,
            cwd=self.root,
        )
        return out.stdout

    def screen(self, pane: str = "") -> str:
        """What the shell's pane (or ``pane``) shows, with its scrollback."""
        return self.tmux("capture-pane", "-p", "-J", "-S", "-500", *(("-t", pane) if pane else ()))

    def split(self, command: str) -> str:
        """A second pane running ``command`` as the user, in the session's environment; its id.
        The shell's pane stays the one keys go to."""
        return self.tmux("split-window", "-d", "-v", "-P", "-F", "#{pane_id}", command).strip()

    def send(self, text: str, enter: bool = True) -> None:
        if text:
            self.tmux("send-keys", "-l", text)
        if enter:
            self.tmux("send-keys", "Enter")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", *keys)

    def paste(self, text: str) -> None:
        """Paste ``text`` as a terminal does with bracketed paste (when the application asked)."""
        self.tmux("set-buffer", "--", text)
        self.tmux("paste-buffer", "-p", "-d")

    def wait_for(
        self,
        pred: Callable[[str], bool],
        *,
        what: str,
        deadline: float = DEADLINE_S,
        pane: str = "",
    ) -> str:
        return until_screen(lambda: self.screen(pane), pred, what=what, deadline=deadline)

    def prompt(self) -> str:
        """Wait for the first prompt (the stock bashrc's `user@host:dir$`, or zsh's `user%`)."""
        return self.wait_for(
            lambda s: s.rstrip().endswith(("$", "%", "#")), what="the first prompt"
        )

    def sync(self, deadline: float = DEADLINE_S) -> str:
        """Type a fresh harmless echo and wait for its output (or, in a halted session, for its
        refusal): everything typed before has been dealt with."""
        tag = f"sync-{uuid.uuid4().hex[:8]}"
        typed = f"echo {tag[:5]}''{tag[5:]}"
        self.send(typed)

        def done(screen: str) -> bool:
            if any(line.strip() == tag for line in screen.splitlines()):
                return True
            after = screen.rpartition(typed)[2]
            return typed in screen and "is halted" in after

        return self.wait_for(done, what=tag, deadline=deadline)

    def status(self) -> int:
        tag = uuid.uuid4().hex[:6]
        self.send(f"echo st{tag}=$?")
        found = re.compile(rf"st{tag}=(\d+)")
        screen = self.wait_for(lambda s: found.search(s) is not None, what="the status")
        m = found.search(screen)
        assert m is not None
        return int(m.group(1))

    def marked(self) -> bool:
        return (self.probe / MARK).exists()

    def dead_status(self, deadline: float = DEADLINE_S) -> int:
        return exit_status(self.exit_file, deadline=deadline)

    # --- what happened ---

    def audit(self) -> list[dict[str, Any]]:
        path = self.home / ".local/state/gatesh/audit.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def pane_pid(self) -> int:
        return int(self.tmux("display", "-p", "#{pane_pid}").strip())

    def shell_pid(self) -> int:
        """The pid of the gated shell (the PTY child of gatesh's relay)."""
        pane = self.pane_pid()
        end = time.monotonic() + DEADLINE_S
        while time.monotonic() < end:
            for pid in _descendants(pane):
                name = _comm(pid)
                if name in ("bash", "zsh") and _comm(_ppid(pid)) not in ("bash", "zsh"):
                    return pid
            time.sleep(0.05)
        raise AssertionError("no gated shell under the pane")

    def trace(self) -> None:
        """Record every execve of the gated shell and its descendants from now on."""
        if shutil.which("strace") is None:
            raise AssertionError("strace is not installed")
        pid = self.shell_pid()
        self.strace = subprocess.Popen(
            [
                "strace",
                "-f",
                "-qq",
                "-s",
                "4096",
                "-e",
                "trace=execve,clone,clone3,fork,vfork",
                "-e",
                "signal=none",
                "-o",
                str(self.trace_file),
                "-p",
                str(pid),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        time.sleep(0.5)

    def shell_execs(self) -> list[list[str]]:
        """Every program the session's shell (or a subshell of it, or a shell it started)
        started, as argv, in order, from the trace: programs those programs started are theirs."""
        if self.strace is not None:
            time.sleep(0.3)
        if not self.trace_file.exists():
            return []
        image: dict[int, str] = {}
        pending: dict[int, str] = {}  # an execve whose result is on a later line
        out: list[list[str]] = []
        shell = None
        for line in self.trace_file.read_text(errors="replace").splitlines():
            m = re.match(r"(\d+)\s+(.*)$", line)
            if not m:
                continue
            pid, rest = int(m.group(1)), m.group(2)
            if shell is None:
                shell = pid
                image[pid] = "shell"
            fork = re.search(r"(?:clone3?|v?fork)\b.*= (\d+)$", rest) or re.search(
                r"<\.\.\. (?:clone3?|v?fork) resumed>.*= (\d+)$", rest
            )
            if fork:
                image[int(fork.group(1))] = image.get(pid, "other")
                continue
            ex = re.search(
                r'execve\("[^"]*", \[(.*?)\](?:, .*)?(?:\) = 0|<unfinished \.\.\.>)', rest
            )
            if ex and "<unfinished" in rest:
                pending[pid] = ex.group(1)
                continue
            if "execve resumed>" in rest and rest.rstrip().endswith("= 0") and pid in pending:
                argv_text = pending.pop(pid)
            elif ex:
                argv_text = ex.group(1)
            else:
                continue
            argv = _strace_argv(argv_text)
            if image.get(pid) == "shell":
                out.append(argv)
            prog = os.path.basename(argv[0]) if argv else ""
            image[pid] = "shell" if prog in _SHELL_PROGRAMS else prog
        return out

    def close(self) -> None:
        if self.strace is not None:
            with contextlib.suppress(Exception):
                self.strace.send_signal(signal.SIGINT)
                self.strace.wait(timeout=5)
        self.tmux("kill-server")
        world._stop_daemons(str(self.home))
        shutil.rmtree(self.probe, ignore_errors=True)
        shutil.rmtree(self.root, ignore_errors=True)


# Programs whose children are commands a shell runs (a subshell, a nested or -c shell).
_SHELL_PROGRAMS = frozenset({"bash", "zsh", "sh", "dash", "rbash"})


def _strace_argv(text: str) -> list[str]:
    """The argv of one strace execve line (``"a", "b\\n"`` with C escapes)."""
    words = re.findall(r'"((?:[^"\\]|\\.)*)"', text)
    return [bytes(w, "latin-1").decode("unicode_escape") for w in words]


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _ppid(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat.rsplit(") ", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            children.setdefault(_ppid(int(entry)), []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            out.append(child)
            todo.append(child)
    return sorted(out)

"""The world a real harness runs in for the end-to-end tests (SPEC S11.4).

- An **unprivileged agent user** (:data:`AGENT`, created once with ``useradd``) runs the harness
  CLI, gatesh and every command the fake model asks for. Its HOME is fresh per test and holds a
  stock ``/etc/skel`` (Debian's ``.bashrc`` sets ``HISTCONTROL`` and ``HISTSIZE``).
- A **network namespace with only loopback** holds the CLI, its commands and the fake model's
  listening socket: nothing the CLI tries to reach (update checks, telemetry) can leave the
  machine, and the fake is the only server there is.
- **gatesh for the agent**: this checkout's package and its dependencies copied into a folder the
  agent can read, started by a launcher written by :mod:`gatesh.launcher` on an interpreter the
  agent can run; installed into the harness with ``gatesh install …`` run as the agent, as a
  person would.
- A **throwaway repository** with two commits, the second not yet pushed to its local bare remote
  (so ``git reset --hard HEAD~1`` loses it and is destructive, S3.2): whatever the fake model
  asks for is harmless if it ran (markers are created, nothing outside the scratch folder is
  named).

Needs root (to create the user and the namespace, and to drop to the user); tests skip, saying
so, where that or a tool is missing.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final

from . import clis, fakes

AGENT: Final = "gatesh-agent"
TOOLS: Final = ("unshare", "nsenter", "setpriv", "useradd", "usermod", "git")
CLONE_NEWNET: Final = 0x40000000
# One harness run: start, a few model turns, hooks that may wait for a person (up to 110 s).
RUN_TIMEOUT_S: Final = 240.0
# Skipped when copying the venv for the agent: test tools it never runs.
_NOT_FOR_AGENT: Final = (
    "pip",
    "setuptools",
    "_pytest",
    "pytest",
    "hypothesis",
    "ruff",
    "pygments",
    "__editable__*",
    "_hypothesis*",
    "*.pyc",
    "__pycache__",
)

# Bring the namespace's loopback up (SIOCGIFFLAGS / SIOCSIFFLAGS | IFF_UP), then wait on stdin so
# the namespace lives as long as the holder's stdin is open.
_HOLDER: Final = (
    "import fcntl, socket, struct, sys\n"
    "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "flags = struct.unpack('16sh', fcntl.ioctl(s, 0x8913, struct.pack('16sh', b'lo', 0)))[1]\n"
    "fcntl.ioctl(s, 0x8914, struct.pack('16sh', b'lo', flags | 1))\n"
    "print('up', flush=True)\n"
    "sys.stdin.read()\n"
)


def missing() -> str:
    """Why the real-harness tests cannot run here ("" when they can)."""
    if os.geteuid() != 0:
        return "needs root (creates the agent user and a loopback-only network namespace)"
    gone = [t for t in TOOLS if shutil.which(t) is None]
    if gone:
        return f"needs {', '.join(gone)} on PATH"
    return ""


def missing_cli(name: str) -> str:
    need = clis.CLIS[name]
    if not clis.runs_here():
        return f"the pinned {need.spec} is a Linux {clis.MACHINE} build"
    for cli in (need, *([clis.NODE] if need.on_node else [])):
        if not cli.installed():
            return (
                f"{cli.spec} is not installed in {cli.folder}: run "
                "`python3 tests/harness/clis.py install` (.ci/run does)"
            )
    return ""


# --- the agent user ----------------------------------------------------------------------------


def agent_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(AGENT)
    except KeyError:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/bin/bash",
                AGENT,
            ],
            check=True,
            capture_output=True,
        )
        return pwd.getpwnam(AGENT)


def set_login_shell(shell: str) -> None:
    """The agent's passwd entry (Codex takes its shell from there, not from ``$SHELL``)."""
    if pwd.getpwnam(AGENT).pw_shell != shell:
        subprocess.run(["usermod", "--shell", shell, AGENT], check=True, capture_output=True)


def _as_agent(user: pwd.struct_passwd) -> list[str]:
    return [
        "setpriv",
        f"--reuid={user.pw_uid}",
        f"--regid={user.pw_gid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--",
    ]


# --- gatesh, readable by the agent ----------------------------------------------------------------


@dataclass(frozen=True)
class Install:
    """gatesh as the agent runs it: the launcher, and the folders it imports from."""

    root: Path
    launcher: Path
    python: str


def _interpreter_for(user: pwd.struct_passwd) -> str | None:
    """An interpreter of this one's version that the agent can run (the venv's may live under
    root's HOME)."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    for candidate in (
        os.path.realpath(sys.executable),
        f"/usr/bin/python{version}",
        f"/usr/local/bin/python{version}",
    ):
        if not os.path.isfile(candidate):
            continue
        # Through /bin/sh, as a launcher's #! line is: the exec must pass the agent's own access
        # checks on every folder on the way.
        probe = subprocess.run(
            [
                *_as_agent(user),
                "/bin/sh",
                "-c",
                'exec "$0" -IS -c "$1"',
                candidate,
                "import sys; print(sys.implementation.cache_tag)",
            ],
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin"},
        )
        if probe.returncode == 0 and probe.stdout.strip() == sys.implementation.cache_tag:
            return candidate
    return None


def install_gatesh(base: Path, user: pwd.struct_passwd) -> Install:
    """Copy this checkout's gatesh and its dependencies under ``base`` and write its launcher."""
    import gatesh
    from gatesh.launcher import write_launcher

    python = _interpreter_for(user)
    if python is None:
        raise RuntimeError(
            f"no Python {sys.version_info[0]}.{sys.version_info[1]} the agent user can run"
        )
    src = base / "src"
    site = base / "site"
    shutil.copytree(
        os.path.dirname(gatesh.__file__),
        src / "gatesh",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    purelib = sysconfig.get_paths()["purelib"]
    shutil.copytree(purelib, site, ignore=shutil.ignore_patterns(*_NOT_FOR_AGENT), symlinks=True)
    (base / "bin").mkdir()
    launcher = base / "bin" / "gatesh"
    write_launcher(str(launcher), python=python, paths=[str(src), str(site)], fast=False)
    for folder, _dirs, files in os.walk(base):
        os.chmod(folder, 0o755)
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | 0o444)
    return Install(base, launcher, python)


# --- the loopback-only network namespace ------------------------------------------------------


class NetNS:
    """A network namespace with only ``lo`` (up), alive while this object is open."""

    def __init__(self) -> None:
        self.holder = subprocess.Popen(
            ["unshare", "--net", sys.executable, "-c", _HOLDER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.holder.stdout is not None
        if self.holder.stdout.readline().strip() != "up":
            self.close()
            raise RuntimeError("could not bring up loopback in a new network namespace")
        self.path = f"/proc/{self.holder.pid}/ns/net"

    def enter(self) -> list[str]:
        return ["nsenter", f"--net={self.path}", "--"]

    def listen(self, model: fakes.FakeModel) -> ThreadingHTTPServer:
        """The fake model's server, its listening socket made inside the namespace."""
        out: list[Any] = []

        def inside() -> None:  # setns changes only this thread; the socket stays in the namespace
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                fd = os.open(self.path, os.O_RDONLY)
                try:
                    if libc.setns(fd, CLONE_NEWNET) != 0:
                        raise OSError(ctypes.get_errno(), "setns failed")
                finally:
                    os.close(fd)
                out.append(ThreadingHTTPServer(("127.0.0.1", 0), fakes.make_handler(model)))
            except BaseException as exc:
                out.append(exc)

        t = threading.Thread(target=inside)
        t.start()
        t.join()
        if isinstance(out[0], BaseException):
            raise out[0]
        server: ThreadingHTTPServer = out[0]
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, name="fake-model", daemon=True).start()
        return server

    def close(self) -> None:
        with contextlib.suppress(Exception):
            assert self.holder.stdin is not None
            self.holder.stdin.close()
        with contextlib.suppress(Exception):
            self.holder.wait(timeout=5)


# --- one test's world ------------------------------------------------------------------------------


@dataclass
class Run:
    """One harness process: its exit status and output."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False


@dataclass
class World:
    """A fresh HOME, repository and fake model for one test; helpers to act as agent or person."""

    harness: str
    install: Install
    netns: NetNS
    user: pwd.struct_passwd
    root: Path
    model: fakes.FakeModel = field(init=False)
    server: ThreadingHTTPServer = field(init=False)
    procs: list[subprocess.Popen[str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.repo = self.root / "work" / "repo"
        self.remote = self.root / "work" / "remote.git"
        # In a temporary folder, as a real agent's scratch files are: the world's HOME is not (see
        # scratch()), so a confined command may write here as it may write any of /tmp.
        self.marks = Path(tempfile.mkdtemp(prefix="gh-marks-", dir="/tmp"))
        self.model = fakes.FakeModel(fakes.DIALECTS[self.harness])
        self.server = self.netns.listen(self.model)
        self.port = self.server.server_address[1]
        shutil.copytree("/etc/skel", self.home)
        for sub in ("run", ".config", ".local/state", ".local/share", ".ssh"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
        # The builtin rater: decisions must not depend on a model (the harness's own API key and
        # base URL are in the environment the daemon starts in, and point at the fake).
        (self.home / ".config/gatesh").mkdir(parents=True)
        # Without undo (S17): the scenarios argue about a reset that drops the unpushed commit,
        # which is refused only when no snapshot holds it (tests/test_undo_e2e.py runs undo).
        (self.home / ".config/gatesh/config.toml").write_text(
            '[rater]\nbackend = "builtin"\n\n[undo]\nenabled = false\n'
        )
        (self.root / "work").mkdir()
        self._chown(self.root)
        self._chown(self.marks)
        os.chmod(self.marks, 0o755)
        os.chmod(self.home / "run", 0o700)
        os.chmod(self.home, 0o700)
        self.person(["git", "init", "-q", "--bare", str(self.remote)])
        self.person(["git", "init", "-q", "-b", "main", str(self.repo)])
        for i, text in enumerate(("first\n", "second\n")):
            (self.repo / "notes.txt").write_text(text)
            self._chown(self.repo)
            self.git("add", "notes.txt")
            self.git("commit", "-q", "-m", f"commit {i + 1}")
        self.git("remote", "add", "origin", str(self.remote))
        # Only the first commit is pushed: the second is work no other ref holds, which a reset loses.
        self.git("push", "-q", "origin", "main~1:refs/heads/main")

    # --- acting as the agent user ---

    def _chown(self, path: Path) -> None:
        for folder, _dirs, files in os.walk(path):
            os.chown(folder, self.user.pw_uid, self.user.pw_gid)
            for name in files:
                os.chown(
                    os.path.join(folder, name),
                    self.user.pw_uid,
                    self.user.pw_gid,
                    follow_symlinks=False,
                )

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {
            "HOME": str(self.home),
            "USER": AGENT,
            "LOGNAME": AGENT,
            "PATH": f"{self.install.launcher.parent}:/usr/local/bin:/usr/bin:/bin",
            "SHELL": "/bin/bash",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "XDG_RUNTIME_DIR": str(self.home / "run"),
            "GATESH_SYSTEM_CONFIG": str(self.root / "etc-gatesh" / "config.toml"),
            "GIT_AUTHOR_NAME": "agent",
            "GIT_AUTHOR_EMAIL": "agent@example.invalid",
            "GIT_COMMITTER_NAME": "agent",
            "GIT_COMMITTER_EMAIL": "agent@example.invalid",
        }
        env.update(extra or {})
        return env

    def person(
        self,
        argv: Sequence[str],
        *,
        input: str | None = None,
        check: bool = True,
        cwd: Path | None = None,
        timeout: float = 60,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` as the agent user outside any harness: what a person types at a terminal."""
        # In the namespace too: `gatesh install codex` starts codex (app-server) to trust hooks.
        proc = subprocess.run(
            [*self.netns.enter(), *_as_agent(self.user), *argv],
            env=self.env(env),
            cwd=cwd or self.root,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"{argv} failed ({proc.returncode}): {proc.stderr}{proc.stdout}")
        return proc

    def git(self, *args: str) -> str:
        return self.person(["git", "-C", str(self.repo), *args]).stdout.strip()

    def gatesh(
        self, *args: str, check: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return self.person([str(self.install.launcher), *args], check=check, env=env)

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    def mark(self, name: str) -> str:
        """A marker path a command creates to show it ran."""
        return str(self.marks / name)

    def ran(self, name: str) -> bool:
        return (self.marks / name).exists()

    def spawn(
        self,
        argv: Sequence[str],
        extra_env: dict[str, str] | None = None,
        *,
        stdin: int | None = subprocess.DEVNULL,
    ) -> subprocess.Popen[str]:
        """Start ``argv`` as the agent user inside the namespace, in the repository."""
        proc = subprocess.Popen(
            [*self.netns.enter(), *_as_agent(self.user), *argv],
            env=self.env(extra_env),
            cwd=self.repo,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc

    def run(
        self,
        argv: Sequence[str],
        extra_env: dict[str, str] | None = None,
        timeout: float = RUN_TIMEOUT_S,
    ) -> Run:
        proc = self.spawn(argv, extra_env)
        try:
            out, err = proc.communicate(timeout=timeout)
            return Run(list(argv), proc.returncode, out, err)
        except subprocess.TimeoutExpired:
            _kill(proc)
            out, err = proc.communicate()
            return Run(list(argv), -9, out, err, timed_out=True)

    # --- what happened ---

    def audit(self, *, exits: bool = False) -> list[dict[str, Any]]:
        """The audit log's decision lines; with ``exits`` also the lines saying how a run inside
        its boundary ended (``action`` "exited")."""
        path = self.home / ".local/state/gatesh/audit.jsonl"
        if not path.exists():
            return []
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return [r for r in lines if exits or r.get("action") != "exited"]

    def close(self) -> None:
        for proc in self.procs:
            _kill(proc)
        shutil.rmtree(self.marks, ignore_errors=True)
        self.server.shutdown()
        self.server.server_close()
        _stop_daemons(str(self.home))


def _kill(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            proc.wait(timeout=5)


def _stop_daemons(home: str) -> None:
    """Stop the agent's gatesh daemon(s) started with this HOME (they outlive the harness)."""
    deadline = time.monotonic() + 5
    while True:
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
                env = Path(f"/proc/{entry}/environ").read_bytes()
            except OSError:
                continue
            if b"daemon" in argv and f"HOME={home}\0".encode() in env + b"\0":
                pids.append(int(entry))
        if not pids or time.monotonic() > deadline:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL if time.monotonic() > deadline - 3 else signal.SIGTERM)
        time.sleep(0.1)


#: Where a world lives: not a temporary folder, since a real HOME never is (a protected place in
#: /tmp would keep confined commands from making files directly in /tmp), and outside every HOME.
#: Its name holds no "gatesh": self-protection reads that word in a command as naming the gate.
SCRATCH_BASE: Final = "/var/lib/gh-scratch"


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """A folder the agent can reach (mode 0755, outside any HOME and any temporary folder),
    removed afterwards."""
    os.makedirs(SCRATCH_BASE, mode=0o755, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix="gh-", dir=SCRATCH_BASE))
    os.chmod(path, 0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


class Watcher:
    """``gatesh watch`` run by the person (the agent's uid, outside the harness): its output is
    collected as it comes; :meth:`answer` types a line at it."""

    def __init__(self, world: World) -> None:
        # In the harness's network namespace: the person's channel is an abstract socket, which
        # exists only in the namespace of the daemon (the harness's first command started it).
        self.proc = subprocess.Popen(
            [*world.netns.enter(), *_as_agent(world.user), str(world.install.launcher), "watch"],
            env=world.env({"COLUMNS": "120"}),
            cwd=world.root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        world.procs.append(self.proc)
        self.out: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.out.append(line)

    @property
    def text(self) -> str:
        return "".join(self.out)

    def wait_for(
        self, needle: str, timeout: float = 60, harness: subprocess.Popen[str] | None = None
    ) -> bool:
        """True once ``needle`` was printed; False after ``timeout``, or once ``harness`` (the
        process that should make it print it) has exited without it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in self.text:
                return True
            if self.proc.poll() is not None or (harness is not None and harness.poll() is not None):
                time.sleep(0.5)  # what was on its way
                return needle in self.text
            time.sleep(0.05)
        return False

    def answer(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

"""End to end, as an unprivileged user: the daemon's settings are the person's (S9.7, issue 27
build item 2, issue 30 item 3), and only a person speaks on the person's channel (S9.5, issue 27
build item 5, issue 30 item 2). (Issue 27's findings 5, 6 and 7 are the attempts made here.)

Each attempt is made for real by the agent user through the gate — an allowed, unread script —
and fails; a harmless control of the same shape still works. The agent's commands run under a
stand-in harness (a process of the agent's uid that gatesh did not start: what Claude Code or a
terminal is), and what the person does is done as the same uid from outside it. Every target is a
marker in a scratch folder; the "fake model" is a loopback server that would approve anything.
Needs root (to create the user and drop to it), setpriv and git; skips, saying so, otherwise.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gatesh.testing.model_server import ModelServer, tool_use
from gatesh.testing.standin import RATE_TOOL
from tests.harness import world as W

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures" / "person"
# The stand-in harness: runs its arguments as a child and waits (never execs into them).
HARNESS = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"
PYTHON = "/usr/bin/python3"


def _missing() -> str:
    why = W.missing()
    if why:
        return why
    if not os.access(PYTHON, os.X_OK):
        return f"needs {PYTHON} (the agent's interpreter)"
    return ""


@pytest.fixture(scope="module")
def install() -> Iterator[tuple[pwd.struct_passwd, W.Install]]:
    why = _missing()
    if why:
        pytest.skip(why)
    user = W.agent_user()
    with W.scratch() as base:
        inst = W.install_gatesh(base / "inst", user)
        # Its dependencies in a folder named as an interpreter's own (site-packages): a PTY
        # session writes its shims' launcher from the folders it finds by that name.
        from gatesh.launcher import write_launcher

        site = inst.root / "site"
        site.rename(inst.root / "site-packages")
        write_launcher(
            str(inst.launcher),
            python=inst.python,
            paths=[str(inst.root / "src"), str(inst.root / "site-packages")],
            fast=False,
        )
        os.chmod(inst.launcher, 0o755)
        yield user, inst


@dataclass
class Agent:
    """One test's world: the agent user's scratch HOME, its config, and helpers to act as the
    agent (under the stand-in harness) or as the person."""

    user: pwd.struct_passwd
    inst: W.Install
    root: Path

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.run_dir = self.home / "run"
        self.marks = self.root / "marks"
        self.tools = self.root / "tools"
        self.results = self.root / "results"
        for folder in (self.run_dir, self.home / ".config/gatesh", self.marks, self.results):
            folder.mkdir(parents=True, exist_ok=True)
        self.tools.mkdir()
        for name in ("approve.py", "restart.py", "steal.py", "scrub.py"):
            shutil.copy(FIXTURES / name, self.tools / name)
        self.config = self.home / ".config/gatesh/config.toml"
        self.write_config()
        for folder, _dirs, files in os.walk(self.root):
            os.chown(folder, self.user.pw_uid, self.user.pw_gid)
            for name in files:
                os.chown(os.path.join(folder, name), self.user.pw_uid, self.user.pw_gid)
        os.chmod(self.home, 0o700)
        os.chmod(self.run_dir, 0o700)

    def write_config(self, extra: str = "") -> None:
        # These tests measure what holds without a kernel boundary (the gate's mark, the person's
        # settings): the boundary is switched off here; tests/test_boundary_e2e.py runs the same
        # attempts inside it. (The world's working folder holds the agent's home, which a
        # boundary never lets a command write.)
        self.config.write_text(
            '[rater]\nbackend = "builtin"\n[boundary]\nenabled = false\n'
            f'[[deny]]\nmatch = "prefix"\npattern = "touch {self.marks}/denied"\n'
            f'[[escalate]]\nmatch = "prefix"\npattern = "touch {self.marks}/asked"\n'
            f'[[allow]]\nmatch = "prefix"\npattern = "{PYTHON} {self.tools}/"\n' + extra
        )
        with contextlib.suppress(OSError):
            os.chown(self.config, self.user.pw_uid, self.user.pw_gid)

    @property
    def runtime(self) -> Path:
        return self.run_dir / "gatesh"

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {
            "HOME": str(self.home),
            "USER": W.AGENT,
            "LOGNAME": W.AGENT,
            "PATH": f"{self.inst.launcher.parent}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "XDG_RUNTIME_DIR": str(self.run_dir),
            "GATESH_SYSTEM_CONFIG": str(self.root / "etc-gatesh" / "config.toml"),
        }
        env.update(extra or {})
        return env

    def person(
        self, *argv: str, env: dict[str, str] | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """``argv`` as the agent's uid at a terminal of its own: not under the gate."""
        return subprocess.run(
            [*W._as_agent(self.user), *argv],
            env=self.env(env),
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def gatesh(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return self.person(str(self.inst.launcher), *args, env=env)

    def agent(
        self, command: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``gatesh -c COMMAND`` run by the stand-in harness, as an agent's tool call is."""
        return self.person(PYTHON, "-c", HARNESS, str(self.inst.launcher), "-c", command, env=env)

    def script(self, name: str, *args: str) -> str:
        return " ".join([PYTHON, str(self.tools / name), *args])

    def result(self, name: str, timeout: float = 30) -> list[dict[str, object]]:
        path = self.results / name
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if path.exists():
                rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
                if rows and (name not in _DONE_MARKED or rows[-1].get("done")):
                    return rows
            time.sleep(0.1)
        raise AssertionError(f"{name} was not written within {timeout} s")

    def daemon_pid(self) -> int | None:
        try:
            text = (self.runtime / "daemon.lock").read_text().strip()
        except OSError:
            return None
        pid = int(text) if text.isdigit() else None
        return pid if pid and _running(pid) else None

    def stop_daemon(self) -> None:
        pid = self.daemon_pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)

    def status(self) -> dict[str, object]:
        out = self.gatesh("status", "--json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)["daemon"]  # type: ignore[no-any-return]

    def audit(self) -> list[dict[str, object]]:
        path = self.home / ".local/state/gatesh/audit.jsonl"
        return [json.loads(x) for x in path.read_text().splitlines() if x.startswith("{")]


# Result files whose writer ends them with a ``done`` row (read only once it is there).
_DONE_MARKED = ("approve.jsonl", "steal.jsonl")


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b") ", 1)[1][:1] != b"Z"
    except (OSError, IndexError):
        return False


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(x.decode().split("=", 1) for x in raw.split(b"\0") if b"=" in x)


@pytest.fixture
def agent(install: tuple[pwd.struct_passwd, W.Install]) -> Iterator[Agent]:
    user, inst = install
    with W.scratch() as root:
        a = Agent(user, inst, root)
        try:
            yield a
        finally:
            a.stop_daemon()
            W._stop_daemons(str(a.home))


def _pending_id(text: str) -> str:
    found = re.search(r"gatesh approve ([0-9a-f]{4,})", text)
    assert found, text
    return found.group(1)


# --- the person's channel (S9.5) -------------------------------------------------------------------


def test_a_detached_child_of_a_gated_command_cannot_act_as_the_person(agent: Agent) -> None:
    """Issue 27 item 5 (finding 7): an allowed, unread script double-forks, calls setsid, re-execs with an
    empty environment and, once its gated command is gone, tries every human-only verb and the
    watcher's subscription on both sockets — with the credential it can read. Every one is
    refused: the socket file does not hear the human roles, and on the person's channel the
    process carries the gate's mark. The person's own `gatesh approve` then works."""
    asked = agent.agent(f"touch {agent.marks}/asked")
    assert asked.returncode == 126 and "nobody is watching" in asked.stderr, asked.stderr
    pending = _pending_id(asked.stderr)
    results = agent.results / "approve.jsonl"
    ran = agent.agent(agent.script("approve.py", pending, str(results)))
    assert ran.returncode == 0, ran.stderr
    rows = agent.result("approve.jsonl")
    done = rows.pop()
    assert done["token"] is True  # without a kernel boundary the credential is readable here
    assert len(rows) == 12
    for row in rows:
        reply = row["reply"]
        assert isinstance(reply, dict) and reply.get("ok") is not True, row
        error = str(reply.get("error", ""))
        if row["where"] == "socket":
            assert "heard only on the person's channel" in error, row
        else:
            assert "carries the gate's mark" in error, row
    # Nothing it tried took: the agent's retry is refused again, the marker absent.
    again = agent.agent(f"touch {agent.marks}/asked")
    assert again.returncode == 126 and not (agent.marks / "asked").exists()
    # The control: the person, at a terminal of their own, approves; the retry runs once.
    approved = agent.gatesh("approve", _pending_id(again.stderr))
    assert approved.returncode == 0, approved.stderr
    assert agent.agent(f"touch {agent.marks}/asked").returncode == 0
    assert (agent.marks / "asked").exists()


def test_the_person_verbs_and_watch_work_for_the_person(agent: Agent) -> None:
    """The control of the same shape, done by the person: mandate, resume and a watcher's
    subscription are heard on the person's channel (and only there)."""
    assert agent.agent("true").returncode == 0
    mandate = agent.gatesh("mandate", "tidy the build folder")
    assert mandate.returncode == 0 and "mandate recorded" in mandate.stdout, mandate.stderr
    resume = agent.gatesh("resume", "nobody")
    assert resume.returncode == 0, resume.stderr
    watcher = subprocess.Popen(
        [*W._as_agent(agent.user), str(agent.inst.launcher), "watch"],
        env=agent.env({"COLUMNS": "100"}),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and agent.status().get("watchers") != 1:
            time.sleep(0.1)
        assert json.loads(agent.gatesh("status", "--json").stdout)["watchers"] == 1
    finally:
        os.killpg(watcher.pid, signal.SIGTERM)
        watcher.wait(10)


def test_a_confined_process_cannot_open_the_person_channel(agent: Agent) -> None:
    """The kernel's part (Landlock ABI 6, LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET): a process that
    restricted itself cannot connect to the person's channel, which the daemon created outside its
    domain; the same connect without the restriction succeeds."""
    abi = _landlock_abi()
    if abi < 6:
        pytest.skip(f"the kernel's Landlock ABI is {abi}: abstract sockets cannot be scoped")
    assert agent.agent("true").returncode == 0
    from gatesh.daemon import protocol as P

    address = P.person_address(str(agent.runtime / "daemon.sock"))
    probe = FIXTURES / "landlock_connect.py"
    confined = agent.person(PYTHON, str(probe), address.encode().hex(), "scoped")
    free = agent.person(PYTHON, str(probe), address.encode().hex(), "free")
    assert confined.stdout.strip() == "PermissionError", confined.stdout + confined.stderr
    assert free.stdout.strip() == "connected", free.stdout + free.stderr


def test_a_gated_command_cannot_reach_into_the_persons_gatesh_processes(agent: Agent) -> None:
    """Issue 27 item 5, issue 30 item 2: without a kernel boundary a process may trace another of
    its user's, take its descriptors (``pidfd_getfd``) and read its environment. An allowed,
    unread script, detached from its gated command, tries that on the person's ``gatesh watch``
    (to approve a pending id through the watcher's own admitted connection to the person's
    channel), claims the watcher's pid on a connection of its own, and tries it on a daemon the
    person started with a key in its environment. Every attempt fails: the person's gatesh
    processes are not dumpable, and the daemon hears a pid only from the kernel. The agent's retry
    stays refused; the person's approve then works. The control: the same attempts on a process of
    the same user that nothing protects succeed (this kernel allows them)."""
    key = "sk-ant-person-0000"  # never sent anywhere: the backend is the builtin rater
    daemon = subprocess.Popen(
        [*W._as_agent(agent.user), str(agent.inst.launcher), "daemon", "--foreground"],
        env=agent.env({"ANTHROPIC_API_KEY": key, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    watcher: subprocess.Popen[str] | None = None
    holder: subprocess.Popen[str] | None = None
    try:
        deadline = time.monotonic() + 30
        while agent.daemon_pid() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = agent.daemon_pid()
        assert pid == daemon.pid, "the person's daemon did not start"
        assert _environ(pid).get("ANTHROPIC_API_KEY") == key  # there to be found (as root)
        asked = agent.agent(f"touch {agent.marks}/asked")
        assert asked.returncode == 126 and "nobody is watching" in asked.stderr, asked.stderr
        pending = _pending_id(asked.stderr)
        watcher = subprocess.Popen(
            [*W._as_agent(agent.user), str(agent.inst.launcher), "watch"],
            env=agent.env({"COLUMNS": "100"}),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and agent.status().get("watchers") != 1:
            time.sleep(0.1)
        assert json.loads(agent.gatesh("status", "--json").stdout)["watchers"] == 1
        ran = agent.agent(
            agent.script("steal.py", pending, str(agent.results / "steal.jsonl"), str(watcher.pid))
        )
        assert ran.returncode == 0, ran.stderr
        rows = {str(r.get("step")): r for r in agent.result("steal.jsonl", timeout=60)}
        os.killpg(watcher.pid, signal.SIGTERM)
        watcher.wait(10)
        watcher = None
        # The watcher's connection: found, but none of its descriptors could be taken.
        took = rows["watcher"]
        assert took["watcher"] and took["fds_taken"] == 0 and took["approvals_sent"] == 0, took
        assert took["fd_errors"] == ["EPERM"], took
        # A pid claimed in the hello and the request is not the connected process's.
        reply = rows["claim"]["reply"]
        assert isinstance(reply, dict) and reply.get("ok") is not True, reply
        assert "is not the connected process" in str(reply.get("error")), reply
        # The daemon: no descriptor, no trace, no environment (its key stays its own).
        probe = rows["daemon"]
        assert probe["daemon"] == pid and probe["fds_taken"] == 0, probe
        assert probe["ptrace"] == "EPERM" and probe["environ"]["readable"] is False, probe
        # Nothing took: the retry is refused again, the marker absent.
        again = agent.agent(f"touch {agent.marks}/asked")
        assert again.returncode == 126 and not (agent.marks / "asked").exists(), again.stderr
        # The control: the same attempts on an unprotected process of the same user succeed.
        holder = subprocess.Popen(
            [
                *W._as_agent(agent.user),
                PYTHON,
                "-c",
                "import socket, time; a = socket.socketpair(); time.sleep(60)",
            ],
            env=agent.env({"PROBE_SECRET": "x"}),
            start_new_session=True,
        )
        time.sleep(0.5)
        out = agent.results / "control.jsonl"
        agent.person(PYTHON, str(agent.tools / "steal.py"), "--probe", str(holder.pid), str(out))
        control = json.loads(out.read_text())
        if control["ptrace"] != "seized":
            pytest.skip(f"this kernel lets no process trace another of its user ({control})")
        assert control["fds_taken"] >= 3 and "PROBE_SECRET" in control["environ"]["names"]
        # And the person approves from a terminal of their own: the retry runs once.
        approved = agent.gatesh("approve", _pending_id(again.stderr))
        assert approved.returncode == 0, approved.stderr
        assert agent.agent(f"touch {agent.marks}/asked").returncode == 0
        assert (agent.marks / "asked").exists()
    finally:
        for proc in (watcher, holder, daemon):
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(10)


def test_a_gated_command_cannot_attach_to_a_process_of_its_user(agent: Agent) -> None:
    """Issue 27 item 5: a debugger or tracer attached to a process the command did not start (the
    harness, a person's shell: unmarked, and dumpable where they are not gatesh's) reads its
    secrets and acts as it, which the gate's mark does not follow. The agent's `gdb -p PID` with a
    call into the process and `strace -p PID` are refused, and the process is never traced; the
    control, `strace -f -o FILE true` (a program started under the tracer), runs."""
    for tool in ("gdb", "strace"):
        if shutil.which(tool) is None:
            pytest.skip(f"needs {tool}")
    holder = subprocess.Popen(
        [*W._as_agent(agent.user), PYTHON, "-c", "import time; time.sleep(120)"],
        env=agent.env(),
        start_new_session=True,
    )
    try:
        time.sleep(0.3)
        mark = agent.marks / "attached"
        attempts = (
            f"gdb -p {holder.pid} -batch -ex 'call (int)system(\"touch {mark}\")'",
            f"strace -p {holder.pid} -o {agent.marks}/trace",
            f"strace -fp{holder.pid}",
        )
        control = agent.agent(f"strace -f -o {agent.marks}/own true")
        assert control.returncode == 0 and (agent.marks / "own").exists(), control.stderr
        for n, command in enumerate(attempts):
            # Each in a session of its own: the first halts its session (an attack).
            out = agent.agent(command, env={"GATESH_SESSION": f"attach-{n}"})
            assert out.returncode == 126, (command, out.stderr)
            assert "cred.process-attach" in out.stderr, (command, out.stderr)
        status = Path(f"/proc/{holder.pid}/status").read_text()
        assert "TracerPid:\t0" in status and holder.poll() is None
        assert not mark.exists() and not (agent.marks / "trace").exists()
    finally:
        os.killpg(holder.pid, signal.SIGTERM)
        holder.wait(10)


def _landlock_abi() -> int:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    abi = libc.syscall(444, None, 0, 1)  # landlock_create_ruleset(NULL, 0, VERSION)
    return int(abi) if abi > 0 else 0


def test_a_gated_script_that_scrubs_the_audit_log_leaves_the_gap_in_it(agent: Agent) -> None:
    """Issue 27 item 6: without a kernel boundary an allowed, unread script may write the user's
    files, the audit log among them. It empties the log while the daemon runs, cuts its last lines,
    deletes it with the writer's kept head, and appends a forged approval; after each, the agent's
    next command is decided as usual. Every scrub is found: `gatesh log --verify` (run by the
    person) exits 1 and names a finding of tampering past the last line before the scrub, and the
    sequence goes on from there (it never starts over). The control: the log, untouched, verifies
    intact."""
    for n in range(3):
        assert agent.agent(f"touch {agent.marks}/ok{n}").returncode == 0
    control = agent.gatesh("log", "--verify")
    assert control.returncode == 0 and "intact" in control.stdout, control.stdout + control.stderr
    tamper = {"changed", "removed", "inserted", "break", "cut", "dropped", "missing-file"}
    tamper |= {"appended", "rewritten"}
    for how in ("empty", "cut", "delete", "forge"):
        before = max(int(str(r["seq"])) for r in agent.audit())
        ran = agent.agent(agent.script("scrub.py", how))
        assert ran.returncode == 0, (how, ran.stderr)
        assert agent.agent("true").returncode == 0  # the daemon writes its next records
        out = agent.gatesh("log", "--verify", "--json")
        report = json.loads(out.stdout)
        assert out.returncode == 1 and report["ok"] is False, (how, out.stdout)
        found = [
            f
            for f in report["findings"]
            if str(f["kind"]) in tamper and int(str(f.get("seq") or 0)) > before
        ]
        assert found, (how, before, report["findings"])
        after = [int(str(r["seq"])) for r in agent.audit()]
        assert after[-1] > before and after == sorted(after), (how, before, after)
    # The gaps are named in words a person reads.
    text = agent.gatesh("log", "--verify").stdout
    assert "tampered" in text and "a new file was started" in text, text


# --- the daemon's settings (S9.7) ------------------------------------------------------------------


def test_a_daemon_restarted_from_a_gated_command_keeps_the_persons_settings(agent: Agent) -> None:
    """Issue 27 item 2 (finding 5): with the daemon stopped, an allowed script starts it again through
    an inner client whose environment names a fake model (base URL and key) and an empty config
    folder. The new daemon runs on the person's folders (the deny list holds), with no key (the
    fake is never asked, a destructive command is refused). The control: the person's own
    daemon.env names the model, and the daemon started the same way asks it."""
    with ModelServer(fallback=tool_use(RATE_TOOL, {"outcome": "safe", "reason": "fine"})) as fake:
        empty = agent.root / "empty-config"
        empty.mkdir()
        os.chown(empty, agent.user.pw_uid, agent.user.pw_gid)
        # The default backend (auto): the cascade as soon as the daemon has a key.
        agent.config.write_text(agent.config.read_text().replace('backend = "builtin"', ""))
        assert agent.agent("true").returncode == 0
        agent.stop_daemon()
        tamper = [
            f"ANTHROPIC_BASE_URL={fake.base_url}",
            "ANTHROPIC_API_KEY=sk-ant-fake-0000",
            f"XDG_CONFIG_HOME={empty}",
        ]
        restart = agent.agent(
            agent.script("restart.py", str(agent.inst.launcher), str(agent.results / "r1"), *tamper)
        )
        assert restart.returncode == 0, restart.stderr
        assert agent.result("r1")[0]["rc"] == 0
        pid = agent.daemon_pid()
        assert pid is not None
        env = _environ(pid)
        assert not any(k.startswith("ANTHROPIC") for k in env), env
        assert env.get("XDG_CONFIG_HOME", str(agent.home / ".config")) != str(empty)
        assert agent.status()["rater"] == "builtin"
        denied = agent.agent(f"touch {agent.marks}/denied")
        assert denied.returncode == 126 and not (agent.marks / "denied").exists()
        work = agent.root / "work"
        work.mkdir()
        os.chown(work, agent.user.pw_uid, agent.user.pw_gid)
        refused = agent.agent(f"rm -rf {work}")
        assert refused.returncode == 126 and work.exists(), refused.stderr
        assert fake.requests == [], "the fake model was asked"
        # The control: the person keeps the key in daemon.env (0600), and the daemon asks it.
        keyfile = agent.home / ".config/gatesh/daemon.env"
        keyfile.write_text(f"ANTHROPIC_BASE_URL={fake.base_url}\nANTHROPIC_API_KEY=sk-ant-person\n")
        os.chown(keyfile, agent.user.pw_uid, agent.user.pw_gid)
        os.chmod(keyfile, 0o600)
        agent.stop_daemon()
        restart = agent.agent(
            agent.script("restart.py", str(agent.inst.launcher), str(agent.results / "r2"))
        )
        assert agent.result("r2")[0]["rc"] == 0, restart.stderr
        assert agent.status()["rater"] == "cascade"
        agent.agent(f"rm -rf {work}")
        assert fake.requests, "the person's key did not reach the daemon"


def test_a_detached_restart_without_the_persons_settings_starts_nothing(agent: Agent) -> None:
    """A detached child of a gated command (setsid, double fork, clean environment) has no
    process above it the gate did not start, and the agent user's home in the user database is
    not a folder: the person's settings cannot be told, so its client starts no daemon and
    decides nothing (fail closed). `gatesh daemon` run the same way does not start either. The
    control: the person's own client, run the same way but not under the gate, starts it."""
    assert pwd.getpwnam(W.AGENT).pw_dir == "/nonexistent"
    for name, words in (("d1", ()), ("d2", ("--daemon",))):
        go = agent.results / f"go-{name}"
        started = agent.agent(
            agent.script(
                "restart.py",
                str(agent.inst.launcher),
                str(agent.results / name),
                "--detach",
                *words,
                "--after",
                str(go),
            )
        )
        assert started.returncode == 0, started.stderr
        agent.stop_daemon()  # the gated command's own client had started it
        go.touch()
        row = agent.result(name)[0]
        if name == "d1":
            assert row["rc"] == 126 and "cannot decide in its place" in str(row["stderr"]), row
        else:
            assert row["rc"] == 1 and "not started" in str(row["stderr"]), row
        assert agent.daemon_pid() is None
    # The control: the person's client (not under the gate) starts the daemon as usual.
    assert agent.gatesh("-c", "true").returncode == 0 and agent.daemon_pid() is not None


def test_a_daemon_never_starts_inside_a_boundary(agent: Agent) -> None:
    """S9.7: with no_new_privs set (what a Landlock boundary needs) neither a client nor `gatesh
    daemon` starts a daemon; the same commands without it do."""
    nnp = ["setpriv", "--no-new-privs", "--"]
    daemon = agent.person(*nnp, str(agent.inst.launcher), "daemon", "--foreground", timeout=30)
    assert daemon.returncode == 1 and "inside a boundary" in daemon.stderr, daemon.stderr
    client = agent.person(*nnp, str(agent.inst.launcher), "-c", f"touch {agent.marks}/nnp")
    assert client.returncode == 126 and agent.daemon_pid() is None, client.stderr
    assert not (agent.marks / "nnp").exists()
    free = agent.gatesh("-c", f"touch {agent.marks}/free")
    assert free.returncode == 0, free.stderr
    assert (agent.marks / "free").exists() and agent.daemon_pid() is not None


def test_an_export_in_a_gated_pty_session_does_not_reach_the_daemon(agent: Agent) -> None:
    """Issue 27 item 2 (finding 6): in an agent's gated PTY session the shell's XDG_CONFIG_HOME is pointed at
    an empty folder (if the gate lets the export run at all), then the daemon restarts: the new one
    still reads the person's config, so the denied marker stays denied; an ordinary command runs."""
    import ptyprocess

    empty = agent.root / "empty-config"
    empty.mkdir()
    os.chown(empty, agent.user.pw_uid, agent.user.pw_gid)
    child = ptyprocess.PtyProcess.spawn(
        [*W._as_agent(agent.user), str(agent.inst.launcher), "--shell", "bash"],
        env=agent.env({"TERM": "xterm", "SHELL": "/bin/bash"}),
        cwd=str(agent.root),
        dimensions=(40, 160),
    )
    screen = _Screen(child)
    try:
        screen.wait_for("$ ")
        screen.type(f"x=XDG_CONFIG_HOME; export $x={empty}")
        screen.type("echo exported-$?")
        screen.wait_for(re.compile(r"exported-\d+|halted"))
        agent.stop_daemon()
        screen.type(f"touch {agent.marks}/denied; echo status-$?")
        screen.wait_for(re.compile(r"status-\d+|refused|halted|deny"), timeout=60)
        assert not (agent.marks / "denied").exists(), screen.text
        pid = agent.daemon_pid()
        assert pid is not None, screen.text
        assert _environ(pid).get("XDG_CONFIG_HOME") != str(empty)
        screen.type("exit")
    finally:
        with contextlib.suppress(Exception):
            child.terminate(force=True)
    # The control: a fresh session runs an ordinary command.
    plain = agent.agent(f"touch {agent.marks}/ok")
    assert plain.returncode == 0 and (agent.marks / "ok").exists(), plain.stderr


class _Screen:
    """What a PTY child printed, read as it comes."""

    def __init__(self, child: object) -> None:
        self.child = child
        self.text = ""

    def _read(self, timeout: float) -> None:
        fd = self.child.fd  # type: ignore[attr-defined]
        ready, _, _ = select.select([fd], [], [], timeout)
        if ready:
            with contextlib.suppress(OSError):
                self.text += os.read(fd, 65536).decode("utf-8", "replace")

    def wait_for(self, needle: str | re.Pattern[str], timeout: float = 30) -> None:
        start = len(self.text)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            seen = self.text[start:] if isinstance(needle, str) else self.text
            if (needle in seen) if isinstance(needle, str) else needle.search(self.text[start:]):
                return
            self._read(0.1)
        raise AssertionError(f"timed out waiting for {needle!r}; screen:\n{self.text}")

    def type(self, line: str) -> None:
        self.child.write((line + "\r").encode())  # type: ignore[attr-defined]
        time.sleep(0.2)
        self._read(0.1)

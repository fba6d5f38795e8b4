"""The boundary end to end (S16): as an unprivileged user, an allowed unread script tries each harm
the boundary must stop, through ``gatesh -c`` — and fails; the deny list still holds afterwards, and
the audit log records how the run ended inside its boundary.

Every target is the test's own throwaway copy (a scratch HOME, its config, its audit log, a fake
key, the test's own daemon and an abstract socket the test listens on): were the boundary to fail,
the harm would stay inside the scratch folder. The scratch folder lies outside the temporary
folders, as a real HOME does.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gatesh.boundary import holds
from tests.harness import world as W

pytestmark = pytest.mark.slow

ATTACK = Path(__file__).parent / "fixtures" / "boundary" / "attack.py"
# Issue 27 item 7's detaching script: double fork, setsid, re-exec with an empty environment, then
# every human-only verb on both of the daemon's sockets, with the credential if it can read it.
APPROVE = Path(__file__).parent / "fixtures" / "person" / "approve.py"
# Not a temporary folder: a confined command cannot make files directly in a folder holding a
# protected place, and a real HOME is never in /tmp.
SCRATCH_BASE = "/var/lib/gh-scratch"
REFUSED = 13


@dataclass
class Agent:
    """A scratch world for the agent user: HOME, a repository, gatesh, its daemon."""

    user: object
    install: W.Install
    root: Path
    home: Path
    repo: Path
    sessions: int = 0

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "USER": W.AGENT,
            "LOGNAME": W.AGENT,
            "PATH": f"{self.install.launcher.parent}:/usr/local/bin:/usr/bin:/bin",
            "SHELL": "/bin/bash",
            "LANG": "C.UTF-8",
            "XDG_RUNTIME_DIR": str(self.home / "run"),
            "GATESH_SYSTEM_CONFIG": str(self.root / "etc-gatesh" / "config.toml"),
        }

    def run(self, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*W._as_agent(self.user), *argv],  # type: ignore[arg-type]
            env=self.env(),
            cwd=self.repo,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def gatesh_c(self, command: str, session: str = "") -> subprocess.CompletedProcess[str]:
        """``gatesh -c command`` as the agent, in a session of its own unless ``session``."""
        self.sessions += 1
        return subprocess.run(
            [*W._as_agent(self.user), str(self.install.launcher), "-c", command],  # type: ignore[arg-type]
            env=self.env() | {"GATESH_SESSION": session or f"e2e-{self.sessions}"},
            cwd=self.repo,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def audit(self) -> list[dict[str, object]]:
        path = self.home / ".local/state/gatesh/audit.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def daemon_pid(self) -> int:
        """The agent's daemon (its lock file names it), checked to be running."""
        pid = int((self.home / "run/gatesh/daemon.lock").read_text().strip())
        assert Path(f"/proc/{pid}").exists(), "the agent's daemon is not running"
        return pid


@pytest.fixture(scope="module")
def agent() -> Iterator[Agent]:
    why = W.missing() or holds.needs("writes")
    if why:
        pytest.skip(f"the boundary end to end: {why}")
    user = W.agent_user()
    os.makedirs(SCRATCH_BASE, mode=0o755, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="b-", dir=SCRATCH_BASE))
    os.chmod(root, 0o755)
    try:
        install = W.install_gatesh(root / "gatesh", user)
        home = root / "home"
        shutil.copytree("/etc/skel", home)
        (home / "run").mkdir(mode=0o700)
        (home / ".config/gatesh").mkdir(parents=True)
        (home / ".config/gatesh/config.toml").write_text(
            '[rater]\nbackend = "builtin"\n\n'
            f'[[deny]]\nmatch = "exact"\npattern = "touch {root}/denied-marker"\n'
            f'[[escalate]]\nmatch = "exact"\npattern = "touch {root}/asked-marker"\n'
        )
        (home / ".claude").mkdir()
        (home / ".claude/settings.json").write_text('{"hooks": {}}\n')
        (home / ".ssh").mkdir(mode=0o700)
        (home / ".ssh/id_ed25519").write_text("FAKE-KEY-NOT-A-SECRET\n")
        repo = root / "work" / "repo"
        (repo / "tools").mkdir(parents=True)
        shutil.copy(ATTACK, repo / "tools" / "attack.py")
        shutil.copy(APPROVE, repo / "tools" / "approve.py")
        for folder, _dirs, files in os.walk(root):
            if folder.startswith(str(root / "gatesh")):
                continue
            os.chown(folder, user.pw_uid, user.pw_gid)  # type: ignore[attr-defined]
            for name in files:
                os.chown(os.path.join(folder, name), user.pw_uid, user.pw_gid)  # type: ignore[attr-defined]
        a = Agent(user, install, root, home, repo)
        for argv in (["git", "init", "-q", "-b", "main"], ["git", "add", "tools"]):
            assert a.run(*argv).returncode == 0
        # The daemon starts from a command gatesh allowed, before that command's boundary is set.
        started = a.gatesh_c("true")
        assert started.returncode == 0, started.stderr
        yield a
    finally:
        W._stop_daemons(str(root / "home"))
        shutil.rmtree(root, ignore_errors=True)


def _attack(agent: Agent, probe: str) -> subprocess.CompletedProcess[str]:
    return agent.gatesh_c(f"python3 tools/attack.py {probe}")


def _ended(agent: Agent, after: int) -> tuple[dict[str, object], dict[str, object]]:
    """The decision line and the exit line of the one run recorded after line ``after``."""
    lines = [r for r in agent.audit() if int(r["seq"]) > after]  # type: ignore[call-overload]
    allowed = [r for r in lines if r.get("action") == "allow"]
    exited = [r for r in lines if r.get("action") == "exited"]
    assert len(allowed) == 1 and len(exited) == 1, lines
    return allowed[0], exited[0]


def _assert_refused(agent: Agent, probe: str) -> None:
    before = int(agent.audit()[-1]["seq"])  # type: ignore[call-overload]
    got = _attack(agent, probe)
    assert got.returncode == REFUSED, (got.returncode, got.stdout, got.stderr)
    assert "refused:" in got.stderr
    # After the command's own output, the agent is told which boundary it ran in, and its moves.
    note = got.stderr.rpartition("refused:")[2]
    assert "ran inside its boundary" in note and "# why:" in note, got.stderr
    allowed, exited = _ended(agent, before)
    assert allowed["stage"] == "rater" and isinstance(allowed["boundary"], dict)
    assert exited["status"] == REFUSED and exited["run"] == allowed["run"]
    assert exited["boundary"] == allowed["boundary"]["id"]  # type: ignore[index]


def _unchanged(path: Path):  # type: ignore[no-untyped-def]
    return (path.stat().st_size, path.stat().st_mtime_ns, path.read_bytes())


@pytest.mark.parametrize(
    ("probe", "where"),
    [
        ("p1", ".config/gatesh/config.toml"),
        ("p2", ".config/gatesh/config.toml"),
        ("p3", ".local/state/gatesh/audit.jsonl"),
        ("p4", ".claude/settings.json"),
        ("p5", ".bashrc"),
        ("p6", ".config/systemd/user"),
    ],
    ids=[
        "rewrite-config",
        "append-config",
        "truncate-audit",
        "claude-settings",
        "bashrc",
        "systemd-unit",
    ],
)
def test_writes_to_protected_places_fail(agent: Agent, probe: str, where: str) -> None:
    target = agent.home / where
    before = _unchanged(target) if target.is_file() else None
    _assert_refused(agent, probe)
    if before is not None:
        if where.endswith("audit.jsonl"):
            assert target.stat().st_size >= before[0]  # only gatesh's own lines were added
        else:
            assert _unchanged(target) == before
    else:
        assert not target.exists()


def test_reading_a_private_key_fails(agent: Agent) -> None:
    _assert_refused(agent, "p7")
    assert "FAKE-KEY" not in _attack(agent, "p7").stdout


@pytest.mark.parametrize(
    ("probe", "needs"),
    [("p8", "signals"), ("p9", "ptrace"), ("p10", "ptrace")],
    ids=["kill", "trace", "prlimit"],
)
def test_the_daemon_is_out_of_reach(agent: Agent, probe: str, needs: str) -> None:
    why = holds.needs(needs)
    if why:
        pytest.skip(why)
    pid = agent.daemon_pid()
    _assert_refused(agent, probe)
    assert agent.daemon_pid() == pid


def test_an_abstract_socket_made_outside_is_out_of_reach(agent: Agent) -> None:
    why = holds.needs("abstract-sockets")
    if why:
        pytest.skip(why)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(f"\0gatesh-boundary-test-{agent.user.pw_uid}")  # type: ignore[attr-defined]
    listener.listen(1)
    listener.settimeout(0.5)
    try:
        _assert_refused(agent, "p11")
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()


def test_the_deny_list_still_holds_afterwards(agent: Agent) -> None:
    for probe in ("p1", "p2", "p5"):
        _attack(agent, probe)
    marker = agent.root / "denied-marker"
    got = agent.gatesh_c(f"touch {marker}")
    assert got.returncode == 126 and "deny-list" in got.stderr, got.stderr
    assert not marker.exists()


def test_ordinary_work_runs_inside(agent: Agent) -> None:
    """What the boundary lets through: the tree, git, temporary files, the exit status."""
    got = agent.gatesh_c(
        "echo hello > notes.txt && git add notes.txt && "
        "git -c user.name=a -c user.email=a@example.invalid commit -qm notes && "
        "mktemp > /dev/null && git log --oneline | wc -l && exit 7"
    )
    assert got.returncode == 7, got.stderr
    assert got.stdout.strip() == "1"
    assert "ran inside its boundary" in got.stderr  # a failure (exit 7) gets the note


def test_a_detached_child_cannot_approve_from_inside(agent: Agent) -> None:
    """The person's channel from inside the boundary: a pending escalation's id, an allowed unread
    script that detaches (double fork, setsid, re-exec with an empty environment) and tries every
    human-only verb and the watcher's subscription on both sockets. The boundary keeps the
    channel's credential unreadable and (ABI 6) the abstract socket unreachable; nothing it tried
    took, and the pending command stays refused."""
    import re
    import time

    asked = agent.gatesh_c(f"touch {agent.root}/asked-marker")
    found = re.search(r"gatesh approve ([0-9a-f]{4,})", asked.stderr)
    assert asked.returncode == 126 and found, asked.stderr
    results = agent.repo / "approve.jsonl"
    ran = agent.gatesh_c(f"python3 tools/approve.py {found.group(1)} {results}")
    assert ran.returncode == 0, ran.stderr
    deadline = time.monotonic() + 60
    rows: list[dict[str, object]] = []
    while time.monotonic() < deadline:
        if results.exists():
            rows = [json.loads(x) for x in results.read_text().splitlines() if x.strip()]
            if rows and rows[-1].get("done"):
                break
        time.sleep(0.1)
    assert rows and rows[-1].get("done"), rows
    done = rows.pop()
    assert done["token"] is False  # the channel's credential is a store the boundary keeps
    assert len(rows) == 12
    for row in rows:
        reply = row["reply"]
        assert isinstance(reply, dict) and reply.get("ok") is not True, row
        if row["where"] == "person" and not holds.needs("abstract-sockets"):
            assert "PermissionError" in str(reply.get("oserror", "")), row
    again = agent.gatesh_c(f"touch {agent.root}/asked-marker")
    assert again.returncode == 126 and not (agent.root / "asked-marker").exists(), again.stderr


def test_a_crontab_from_an_allowed_unread_script_fails(agent: Agent) -> None:
    """``crontab`` is setgid: under ``no_new_privs`` it keeps the caller's groups and cannot write
    the spool, which lies outside the boundary anyway."""
    if shutil.which("crontab") is None:
        pytest.skip("crontab is not installed (Debian: the cron package)")
    _assert_refused(agent, "p12")
    listed = agent.run("crontab", "-l")
    assert "inside the boundary" not in listed.stdout, listed.stdout


def test_a_person_widens_the_boundary_for_one_command(agent: Agent) -> None:
    """A command that failed inside its boundary, tried again with a justification, goes to a
    person; once they approve it, that one run goes where the user may; the next is confined again."""
    import re

    target = agent.home / "widened-marker"
    session = "e2e-widen"
    first = agent.gatesh_c("python3 tools/attack.py p13", session=session)
    assert first.returncode == REFUSED and not target.exists(), first.stderr
    justified = "python3 tools/attack.py p13  # why: the task asks for a marker in my home"
    asked = agent.gatesh_c(justified, session=session)
    found = re.search(r"gatesh approve ([0-9a-f]{4,})", asked.stderr)
    assert asked.returncode == 126 and found and not target.exists(), asked.stderr
    approved = agent.run(str(agent.install.launcher), "approve", found.group(1))
    assert approved.returncode == 0, approved.stdout + approved.stderr
    widened = agent.gatesh_c(justified, session=session)
    assert widened.returncode == 0 and target.exists(), widened.stderr
    lines = [r for r in agent.audit() if r.get("action") == "allow" and r.get("session") == session]
    assert lines and lines[-1]["boundary"]["widened"] is True, lines[-1:]  # type: ignore[index]
    target.unlink()
    again = agent.gatesh_c(justified, session=session)
    assert again.returncode != 0 and not target.exists(), again.stderr


def test_an_agent_session_s_shell_is_confined(agent: Agent) -> None:
    """The interactive agent session (S10) confines its shell when it starts: an allowed unread
    script typed at it cannot write ~/.bashrc; the daemon the session found (or started, outside)
    is still the one running, and ordinary work in the tree goes through."""
    import time

    import ptyprocess  # type: ignore[import-untyped]

    rc = agent.home / ".bashrc"
    before = _unchanged(rc)
    pid = agent.daemon_pid()
    child = ptyprocess.PtyProcessUnicode.spawn(
        [*W._as_agent(agent.user), str(agent.install.launcher)],  # type: ignore[arg-type]
        env=agent.env() | {"TERM": "dumb", "GATESH_SESSION": "e2e-pty"},
        cwd=str(agent.repo),
        dimensions=(40, 200),
    )
    seen = ""

    def until(text: str, timeout: float = 60) -> None:
        nonlocal seen
        deadline = time.monotonic() + timeout
        while text not in seen:
            assert time.monotonic() < deadline, seen[-2000:]
            try:
                seen += child.read(4096)
            except EOFError:
                break
        assert text in seen, seen[-2000:]

    try:
        child.write("python3 tools/attack.py p5; echo status=$?=\r")
        until("status=13=")
        child.write("echo inside > session-note.txt; echo wrote=$?=\r")
        until("wrote=0=")
        child.write("exit\r")
        child.wait()
    finally:
        if child.isalive():
            child.terminate(force=True)
    assert _unchanged(rc) == before
    assert (agent.repo / "session-note.txt").read_text() == "inside\n"
    assert agent.daemon_pid() == pid

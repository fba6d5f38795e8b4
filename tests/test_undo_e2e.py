"""Undo end to end (issue 33, S17): each command that loses work a snapshot holds runs at
``auto`` through ``gatesh -c``, says which undo restores it, and ``gatesh undo ID`` brings every
byte and every ref back.

Real parts only: the launcher an install writes, the daemon it starts, real git in a throwaway
repository (:mod:`_undo_repo`: uncommitted, staged and untracked edits, ignored precious files,
an unpushed commit, two stash entries). Every command runs as the unprivileged agent user of
tests/harness/world.py, with a scratch HOME, in a scratch folder under /tmp: destructive only
there. ``gatesh undo`` runs as a person would, as the same user outside any gated session.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import _undo_repo
import pytest

from tests.harness import world

pytestmark = pytest.mark.slow

NEEDS = ("setpriv", "useradd", "git")

# The must-show commands of issue 33: each loses work here, and a snapshot holds all of it.
COMMANDS = (
    "rm -rf src",
    "git checkout -- .",
    "git restore --source=HEAD~3 .",
    "git clean -fdx",
    "git reset --hard HEAD~2",
    "git stash drop",
    "git stash clear",
    "sed -i 's/VALUE/value/' src/*.py",
    "find . -name '*.py' -exec truncate -s0 {} +",
    ": > app.db",
)
UNDO_LINE = re.compile(r"^gatesh: undo (\d+) restores the files this changed$", re.M)


def _missing() -> str:
    if os.geteuid() != 0:
        return "needs root (creates the unprivileged agent user and drops to it)"
    gone = [t for t in NEEDS if shutil.which(t) is None]
    return f"needs {', '.join(gone)} on PATH" if gone else ""


@dataclass
class Agent:
    """The agent user, its scratch HOME and gatesh, in a scratch folder."""

    user: object
    base: Path
    home: Path
    launcher: Path

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "USER": world.AGENT,
            "LOGNAME": world.AGENT,
            "PATH": f"{self.launcher.parent}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "XDG_RUNTIME_DIR": str(self.home / "run"),
            "GATESH_SYSTEM_CONFIG": str(self.base / "etc-gatesh" / "config.toml"),
            "GIT_AUTHOR_NAME": "agent",
            "GIT_AUTHOR_EMAIL": "agent@example.invalid",
            "GIT_COMMITTER_NAME": "agent",
            "GIT_COMMITTER_EMAIL": "agent@example.invalid",
            "GIT_CONFIG_NOSYSTEM": "1",
        }

    def run(
        self, argv: Sequence[str], cwd: Path | str, *, check: bool = True, session: str = ""
    ) -> subprocess.CompletedProcess[str]:
        env = self.env()
        if session:
            env["GATESH_SESSION"] = session
        proc = subprocess.run(
            [*world._as_agent(self.user), *argv],  # type: ignore[arg-type]
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{list(argv)} failed ({proc.returncode}): {proc.stderr}{proc.stdout}"
            )
        return proc

    def git(self, argv: Sequence[str], cwd: str) -> str:
        return self.run(argv, cwd).stdout


@pytest.fixture(scope="module")
def agent() -> Iterator[Agent]:
    why = _missing()
    if why:
        pytest.skip(why)
    user = world.agent_user()
    with world.scratch() as base:
        install = world.install_gatesh(base / "gatesh", user)
        home = base / "home"
        (home / "run").mkdir(parents=True)
        (home / ".config" / "gatesh").mkdir(parents=True)
        (home / ".config" / "gatesh" / "config.toml").write_text('[rater]\nbackend = "builtin"\n')
        (base / "work").mkdir()
        for p in (home, base / "work"):
            for folder, _dirs, files in os.walk(p):
                os.chown(folder, user.pw_uid, user.pw_gid)
                for name in files:
                    os.chown(os.path.join(folder, name), user.pw_uid, user.pw_gid)
        os.chmod(home, 0o700)
        os.chmod(home / "run", 0o700)
        a = Agent(user, base, home, install.launcher)
        try:
            yield a
        finally:
            world._stop_daemons(str(home))


def _chown(agent: Agent, path: Path | str) -> None:
    uid, gid = agent.user.pw_uid, agent.user.pw_gid  # type: ignore[attr-defined]
    os.chown(path, uid, gid)
    for folder, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(folder, name), uid, gid, follow_symlinks=False)


def _fresh_repo(agent: Agent, name: str) -> str:
    """A new repository, owned by the agent (the files are written here, as root)."""
    base = agent.base / "work" / name
    base.mkdir()
    _chown(agent, base)

    def git(argv: Sequence[str], cwd: str) -> str:
        _chown(agent, base)
        return agent.git(argv, cwd)

    repo = _undo_repo.build(str(base), git)
    _chown(agent, base)
    return repo


def _last_audit(agent: Agent) -> str:
    path = agent.home / ".local" / "state" / "gatesh" / "audit.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return lines[-1] if lines else "(no audit line)"


@pytest.mark.parametrize("command", COMMANDS)
def test_a_covered_loss_runs_and_undo_brings_every_byte_and_ref_back(
    agent: Agent, command: str
) -> None:
    repo = _fresh_repo(agent, re.sub(r"\W+", "-", command).strip("-")[:40])
    before = _undo_repo.state(repo, agent.git)

    ran = agent.run([str(agent.launcher), "-c", command], repo, check=False)
    assert ran.returncode == 0, f"{command!r} was not run: {ran.stderr}"
    found = UNDO_LINE.findall(ran.stderr)
    assert len(found) == 1, f"no undo line for {command!r}: {ran.stderr!r} {_last_audit(agent)}"
    assert UNDO_LINE.fullmatch(ran.stderr.splitlines()[-1]), ran.stderr  # it ends the output
    shot = found[0]
    after_command = _undo_repo.state(repo, agent.git)
    assert _undo_repo.differences(before, after_command), f"{command!r} changed nothing here"

    log = agent.run([str(agent.launcher), "log", "-n", "5"], repo).stdout
    assert f"undo {shot}" in log, log

    listed = agent.run([str(agent.launcher), "undo", "--list"], repo).stdout
    assert re.search(rf"^\s*{shot}\s", listed, re.M), listed

    undo = agent.run([str(agent.launcher), "undo", shot, "--yes"], repo, check=False)
    assert undo.returncode == 0, undo.stderr + undo.stdout
    assert f"restored undo {shot}" in undo.stdout, undo.stdout
    after_undo = _undo_repo.state(repo, agent.git)
    assert _undo_repo.differences(before, after_undo) == []


def test_the_undo_line_follows_the_commands_output_and_its_status_is_kept(agent: Agent) -> None:
    """The client waits for the shell only for a command that rests on a snapshot: the line comes
    after everything the command wrote, and the exit status is the command's own."""
    repo = _fresh_repo(agent, "order")
    script = ": > app.db; echo before-the-line; echo on-stderr >&2; exit 3"
    proc = subprocess.run(
        [*world._as_agent(agent.user), str(agent.launcher), "-c", script],  # type: ignore[arg-type]
        cwd=repo,
        env=agent.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    lines = proc.stdout.splitlines()
    assert proc.returncode == 3, proc.stdout
    assert UNDO_LINE.fullmatch(lines[-1]), proc.stdout
    assert lines.index("before-the-line") < len(lines) - 1
    assert lines.index("on-stderr") < len(lines) - 1
    assert os.path.getsize(os.path.join(repo, "app.db")) == 0


def test_undo_from_inside_a_gated_session_is_refused(agent: Agent) -> None:
    repo = _fresh_repo(agent, "inside")
    # A session of its own: the attempt halts it (a human-only verb), and the other tests go on.
    ran = agent.run([str(agent.launcher), "-c", ": > app.db"], repo, check=False, session="inside")
    shot = UNDO_LINE.findall(ran.stderr)[0]
    inside = agent.run(
        [str(agent.launcher), "-c", f"gatesh undo {shot} --yes"],
        repo,
        check=False,
        session="inside",
    )
    assert inside.returncode == 126, inside.stderr
    assert (
        "halted"
        in agent.run(
            [str(agent.launcher), "-c", "true"], repo, check=False, session="inside"
        ).stderr
    )
    assert "app.db" in os.listdir(repo)
    with open(os.path.join(repo, "app.db"), "rb") as f:
        assert f.read() == b""  # still as the command left it: nothing was put back


def test_a_loss_no_snapshot_holds_is_judged_as_without_undo(agent: Agent) -> None:
    repo = _fresh_repo(agent, "uncovered")
    config = agent.home / ".config" / "gatesh" / "config.toml"
    original = config.read_text()
    try:
        config.write_text(original + "[undo]\nmax_file_bytes = 100\n")  # app.db is 1800 bytes
        ran = agent.run([str(agent.launcher), "-c", ": > app.db"], repo, check=False)
    finally:
        config.write_text(original)
    assert ran.returncode == 126, ran.stderr
    assert not UNDO_LINE.search(ran.stderr)
    assert os.path.getsize(os.path.join(repo, "app.db")) == 1800


class _Watch:
    """``gatesh watch --view-only --all`` run by the person (the agent's uid, outside any gated
    session), its output collected as it comes."""

    def __init__(self, agent: Agent, cwd: str) -> None:
        self.proc = subprocess.Popen(
            [*world._as_agent(agent.user), str(agent.launcher), "watch", "--view-only", "--all"],  # type: ignore[arg-type]
            env={**agent.env(), "COLUMNS": "200"},
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.out: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.out.append(line)

    def saw(self, needle: str, timeout: float = 30) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in "".join(self.out):
                return True
            if self.proc.poll() is not None:
                time.sleep(0.3)
                return needle in "".join(self.out)
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


def test_through_a_harness_hook_the_snapshot_is_taken_and_the_watcher_told(agent: Agent) -> None:
    """The hook surface (S11): the daemon takes the snapshot before it answers ``allow``; the
    harness is shown the undo line; the harness then runs the command itself (here: the agent
    user's bash, in the throwaway repository); ``gatesh watch`` shows the undo line; and
    ``gatesh undo ID`` puts every byte and ref back. The ``-c`` surface tells the watcher too."""
    repo = _fresh_repo(agent, "hooked")
    before = _undo_repo.state(repo, agent.git)
    agent.run([str(agent.launcher), "-c", "true"], repo)  # the daemon is up before the watcher
    watch = _Watch(agent, repo)
    try:
        assert watch.saw("watching (view only)", timeout=60), "".join(watch.out)
        payload = {
            "session_id": "hooked",
            "transcript_path": None,
            "cwd": repo,
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": ": > app.db"},
        }
        proc = subprocess.run(
            [*world._as_agent(agent.user), str(agent.launcher), "hook", "claude-code"],  # type: ignore[arg-type]
            input=json.dumps(payload),
            env=agent.env(),
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        answer = json.loads(proc.stdout)
        assert answer["hookSpecificOutput"]["permissionDecision"] == "allow", answer
        shots = UNDO_LINE.findall(answer.get("systemMessage", ""))
        assert len(shots) == 1, answer
        shot = shots[0]
        refs = agent.git(["git", "for-each-ref", "--format=%(refname)", "refs/gatesh"], repo)
        assert f"refs/gatesh/undo/{shot}" in refs.split()
        assert os.path.getsize(os.path.join(repo, "app.db")) == 1800  # nothing ran yet
        assert watch.saw(f"undo {shot} restores the files this changed"), "".join(watch.out)

        # The harness runs the command it was allowed: the agent's own bash, not gatesh.
        agent.run(["bash", "-c", ": > app.db"], repo)
        assert os.path.getsize(os.path.join(repo, "app.db")) == 0

        # Through -c, the watcher is told as well.
        ran = agent.run([str(agent.launcher), "-c", "git stash clear"], repo, check=False)
        assert ran.returncode == 0, ran.stderr
        second = UNDO_LINE.findall(ran.stderr)
        assert len(second) == 1, ran.stderr
        assert watch.saw(f"undo {second[0]} restores the files this changed"), "".join(watch.out)
    finally:
        watch.stop()

    # Each undo, newest first, as a person would: the stash, then the database.
    for n in (second[0], shot):
        undo = agent.run([str(agent.launcher), "undo", n, "--yes"], repo, check=False)
        assert undo.returncode == 0, undo.stderr + undo.stdout
        assert f"restored undo {n}" in undo.stdout, undo.stdout
    assert _undo_repo.differences(before, _undo_repo.state(repo, agent.git)) == []

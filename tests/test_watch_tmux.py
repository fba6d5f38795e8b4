"""gatesh watch for real: a watcher in one tmux pane, an agent in another, the daemon between them.

Each test has its own tmux server (``tmux -L``), HOME, XDG folders and daemon, and polls the panes
with deadlines (never fixed sleeps for the thing under test).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from itertools import count
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

ROOT = Path(__file__).resolve().parents[1]
RESET = "git reset --hard HEAD~1"
PROMPT = re.compile(r"([0-9a-f]{6}) › \[o\]nce")
_ids = count()


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMUX")}
    env.pop("GATESH_SESSION", None)
    # The repo itself first: the daemon is started from `/` and must import this checkout.
    env["PYTHONPATH"] = str(ROOT)
    env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
        PS1="$ ",
        TERM="xterm-256color",
        HOME=str(home),
    )
    return env


class Tmux:
    """One private tmux server with a person's pane and an agent's pane."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.name = f"gw{os.getpid()}-{next(_ids)}"
        self.env = env
        self._run(
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "200",
            "-y",
            "50",
            "-c",
            str(cwd),
            "bash --norc --noprofile",
        )
        self.person = self._run("display", "-p", "-t", "t", "#{pane_id}").strip()
        self.agent = self._run(
            "split-window",
            "-v",
            "-t",
            "t",
            "-c",
            str(cwd),
            "-P",
            "-F",
            "#{pane_id}",
            "bash --norc --noprofile",
        ).strip()

    def _run(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.name, "-f", "/dev/null", *args],
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout

    def send(self, pane: str, text: str) -> None:
        if text:
            self._run("send-keys", "-t", pane, "-l", text)
        self._run("send-keys", "-t", pane, "Enter")

    def text(self, pane: str) -> str:
        return self._run("capture-pane", "-p", "-J", "-t", pane, "-S", "-5000")

    def wait(self, pane: str, pattern: str, *, n: int = 1, timeout: float = 60.0) -> str:
        """The pane's text once ``pattern`` (a regex) occurs at least ``n`` times; fails at the deadline."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.text(pane)
            if len(re.findall(pattern, text)) >= n:
                return text
            if time.monotonic() > deadline:
                pytest.fail(f"{pattern!r} x{n} not in pane {pane} within {timeout} s:\n{text}")
            time.sleep(0.1)

    def kill(self) -> None:
        subprocess.run(
            ["tmux", "-L", self.name, "kill-server"], env=self.env, capture_output=True, timeout=10
        )


def _stop_daemon(runtime: Path) -> None:
    lock = runtime / "gatesh" / "daemon.lock"
    try:
        pid = int(lock.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)


@pytest.fixture
def world(isolated_home: Path) -> Iterator[tuple[Tmux, Path, Path]]:
    """(tmux, a git repo with 12 commits, the user config path) — the daemon stopped afterwards."""
    env = _env(isolated_home)
    repo = isolated_home / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, env=env, check=True)
    for i in range(12):
        subprocess.run(
            ["git", "commit", "-q", "--allow-empty", "-m", f"c{i}"], cwd=repo, env=env, check=True
        )
    config = Path(env["XDG_CONFIG_HOME"]) / "gatesh" / "config.toml"
    config.parent.mkdir(parents=True)
    # Without undo: the rounds argue about a reset that drops commits, refused (with undo, S17,
    # the snapshot holds them and it runs).
    config.write_text("[escalation]\ntimeout_s = 90\n\n[undo]\nenabled = false\n")
    tmux = Tmux(env, repo)
    try:
        yield tmux, repo, config
    finally:
        tmux.kill()
        _stop_daemon(Path(env["XDG_RUNTIME_DIR"]))


def commits(repo: Path) -> int:
    out = subprocess.run(
        ["git", "rev-list", "--count", "HEAD"], cwd=repo, capture_output=True, text=True
    )
    return int(out.stdout)


def agent_runs(tmux: Tmux, session: str, command: str = RESET, times: int = 3) -> None:
    """The agent pane runs ``command`` ``times`` times through gatesh -c in ``session``."""
    q = command.replace("'", "'\"'\"'")
    tmux.send(
        tmux.agent,
        f"export GATESH_SESSION={session}; for i in $(seq {times}); do "
        f"{sys.executable} -m gatesh -c '{q}'; echo \"rc-$GATESH_SESSION=$?\"; done; "
        'echo "done-$GATESH_SESSION"',
    )


def start_watcher(tmux: Tmux) -> None:
    tmux.send(tmux.person, f"{sys.executable} -m gatesh watch")
    tmux.wait(tmux.person, r"watching \(answers go to you\)")


def test_rounds_live_prompt_and_once_no_always(world: tuple[Tmux, Path, Path]) -> None:
    tmux, repo, config = world
    start_watcher(tmux)
    # 1. Three rejections: rounds 1 and 2 live, round 3 is the request the person is asked about.
    before = commits(repo)
    agent_runs(tmux, "s1")
    text = tmux.wait(tmux.person, PROMPT.pattern)
    assert re.search(
        r"── session s1 · ~/repo ──\nThe agent is arguing with the rater: 1 round refused "
        r"\(1 of 3 in a row, 1 of 9 since a person was asked\)\n"
        r"Round 1: git reset --hard HEAD~1\n  rater, on the command alone: destructive",
        text,
    )
    assert re.search(r"Round 2: git reset --hard HEAD~1\n  rater: destructive", text)
    assert "a person is asked" in text and "Command: git reset --hard HEAD~1" in text
    assert "The argument so far: 3 rounds" in text
    assert "Round 3 (this request): git reset --hard HEAD~1" in text
    assert "[o]nce  [s]ession  [a]lways  [N]o  [d]eny always" in text
    # 2. `o` runs it, once.
    tmux.send(tmux.person, "o")
    agent = tmux.wait(tmux.agent, r"done-s1")
    assert "rc-s1=0" in agent and "HEAD is now at" in agent
    assert commits(repo) == before - 1
    text = tmux.wait(tmux.person, r"answered `once` by you")
    assert "Accepted:" not in text and "Agreed:" not in text  # a person's answer ends no argument
    # 3. Enter (= No): the agent is told a person refused it, with the moves.
    agent_runs(tmux, "s2")
    tmux.wait(tmux.person, PROMPT.pattern, n=2)
    tmux.send(tmux.person, "")
    agent = tmux.wait(tmux.agent, r"done-s2")
    assert "A person refused to run `git reset --hard HEAD~1`" in agent
    assert "run the same command again with a justification" in agent
    assert "or run a different command" in agent
    assert commits(repo) == before - 1
    # 4. `a` runs it and writes an allow entry ...
    agent_runs(tmux, "s3")
    tmux.wait(tmux.person, PROMPT.pattern, n=3)
    tmux.send(tmux.person, "a")
    tmux.wait(tmux.agent, r"done-s3")
    text = tmux.wait(tmux.person, r'pattern = "git reset --hard HEAD~1"')
    assert "wrote to " + str(config) in text
    assert commits(repo) == before - 2
    assert '[[allow]]\nmatch = "exact"\npattern = "git reset --hard HEAD~1"' in config.read_text()
    # ... that a later identical command uses without asking.
    agent_runs(tmux, "s4", times=1)
    agent = tmux.wait(tmux.agent, r"done-s4")
    assert "rc-s4=0" in agent
    assert commits(repo) == before - 3
    assert len(PROMPT.findall(tmux.text(tmux.person))) == 3


def test_human_verbs_are_refused_to_a_gated_session(world: tuple[Tmux, Path, Path]) -> None:
    tmux, repo, _ = world
    before = commits(repo)
    # Nobody watching: the third rejection is refused at once, with a pending id.
    agent_runs(tmux, "g1")
    agent = tmux.wait(tmux.agent, r"done-g1")
    assert "Approval required, but nobody is watching this session" in agent
    pending = re.findall(r"gatesh approve ([0-9a-f]{6})", agent)[-1]
    # The agent (GATESH_SESSION set in its shell) tries the human verbs itself: refused, exit 1.
    py = sys.executable
    tmux.send(
        tmux.agent,
        f"{py} -m gatesh approve {pending}; echo rc-approve=$?; "
        f"{py} -m gatesh mandate please reset everything; echo rc-mandate=$?",
    )
    agent = tmux.wait(tmux.agent, r"rc-mandate=\d")
    assert "rc-approve=1" in agent and "rc-mandate=1" in agent
    assert "gatesh approve: the gate refused this" in agent
    assert "gatesh mandate: the gate refused this" in agent
    assert "gated session 'g1'" in agent
    # Through the gate itself it is an attack (S3.4), and nothing is approved either.
    tmux.send(
        tmux.agent,
        f"export GATESH_SESSION=g2; {py} -m gatesh -c 'gatesh approve {pending}'; echo rc-gated=$?",
    )
    assert "rc-gated=126" in tmux.wait(tmux.agent, r"rc-gated=\d+")
    assert commits(repo) == before
    # The pending escalation is untouched: the person's pane approves it, and the retry runs once.
    tmux.send(tmux.person, f"{py} -m gatesh approve {pending}; echo rc-person=$?")
    person = tmux.wait(tmux.person, r"rc-person=\d")
    assert "rc-person=0" in person and "may run once when the agent retries it" in person
    tmux.send(tmux.person, f"{py} -m gatesh mandate undo my last commit; echo rc-pm=$?")
    person = tmux.wait(tmux.person, r"rc-pm=\d")
    assert "rc-pm=0" in person and "mandate recorded" in person
    agent_runs(tmux, "g1", times=1)
    agent = tmux.wait(tmux.agent, r"done-g1", n=2)
    assert agent.count("rc-g1=0") == 1
    assert commits(repo) == before - 1


def test_no_watcher_refuses_at_once_and_a_silent_watcher_after_the_timeout(
    world: tuple[Tmux, Path, Path],
) -> None:
    tmux, repo, config = world
    config.write_text("[escalation]\ntimeout_s = 2\n\n[undo]\nenabled = false\n")
    # 1. Nobody watching: refused at once (well before the timeout would have mattered).
    agent_runs(tmux, "n1", times=2)
    tmux.wait(tmux.agent, r"done-n1")
    start = time.monotonic()
    agent_runs(tmux, "n1", times=1)
    agent = tmux.wait(tmux.agent, r"done-n1", n=2)
    assert "Approval required, but nobody is watching this session" in agent
    # 2. A watcher that never answers: the escalation waits for it, then is refused the same way.
    start_watcher(tmux)
    agent_runs(tmux, "n2", times=2)
    tmux.wait(tmux.agent, r"done-n2")
    start = time.monotonic()
    agent_runs(tmux, "n2", times=1)
    tmux.wait(tmux.person, PROMPT.pattern)
    agent = tmux.wait(tmux.agent, r"done-n2", n=2)
    waited = time.monotonic() - start
    assert waited >= 1.5
    assert agent.count("Approval required, but nobody is watching this session") == 2
    person = tmux.wait(tmux.person, r"nobody answered in time")
    assert "gatesh approve" in person
    # 3. The only watcher leaves while an escalation waits for it: refused at once, not at the timeout.
    config.write_text("[escalation]\ntimeout_s = 60\n\n[undo]\nenabled = false\n")
    agent_runs(tmux, "n3", times=2)
    tmux.wait(tmux.agent, r"done-n3")
    agent_runs(tmux, "n3", times=1)
    tmux.wait(tmux.person, PROMPT.pattern, n=2)
    start = time.monotonic()
    tmux.send(tmux.person, "quit")
    agent = tmux.wait(tmux.agent, r"done-n3", n=2, timeout=20)
    assert time.monotonic() - start < 15
    assert agent.count("Approval required, but nobody is watching this session") == 3
    assert commits(repo) == 12


def test_the_daemon_refuses_an_answer_not_offered(isolated_home: Path) -> None:
    """A catastrophic escalation offers no session/always, and the daemon enforces it (not only
    the watcher's keys): a raw watcher answering `always` is refused; its `no` then stands."""
    import json
    import socket

    from _daemon import connect

    env = _env(isolated_home)
    agent: subprocess.Popen[str] | None = None
    sock = socket.socket(socket.AF_UNIX)
    try:
        subprocess.run(
            [sys.executable, "-m", "gatesh", "resume", "warm-up"],
            env=env,
            check=True,
            capture_output=True,
            timeout=60,
        )  # starts the daemon
        sock.close()
        sock, hello = connect("watch")  # the person's channel
        f = sock.makefile("rw")

        def send(msg: dict[str, object]) -> None:
            f.write(json.dumps(msg) + "\n")
            f.flush()

        def until(pred: object) -> dict[str, object]:
            while True:
                msg = json.loads(f.readline())
                if pred(msg):  # type: ignore[operator]
                    return msg

        send(json.loads(hello))
        send({"op": "subscribe", "id": 1})
        until(lambda m: m.get("re") == "subscribe")
        agent = subprocess.Popen(
            [sys.executable, "-m", "gatesh", "-c", "terraform destroy"],
            env={**env, "GATESH_SESSION": "cat1"},
            cwd=isolated_home,
            stderr=subprocess.PIPE,
            text=True,
        )
        ev = until(lambda m: m.get("event") == "escalation")
        assert ev["outcome"] == "catastrophic" and ev["choices"] == ["once", "no", "deny always"]
        send(
            {
                "op": "answer",
                "id": 2,
                "pending_id": ev["pending_id"],
                "answer": "always",
                "pid": os.getpid(),
            }
        )
        reply = until(lambda m: m.get("id") == 2)
        assert reply["ok"] is False and "not offered" in str(reply["error"])
        send(
            {
                "op": "answer",
                "id": 3,
                "pending_id": ev["pending_id"],
                "answer": "no",
                "pid": os.getpid(),
            }
        )
        assert until(lambda m: m.get("id") == 3)["ok"] is True
        _, err = agent.communicate(timeout=30)
        assert agent.returncode == 126 and "A person refused to run `terraform destroy`" in err
    finally:
        sock.close()
        if agent is not None and agent.poll() is None:
            agent.kill()
        _stop_daemon(Path(env["XDG_RUNTIME_DIR"]))


def test_halt_prompt_run_anyway_runs_the_one_command(world: tuple[Tmux, Path, Path]) -> None:
    """S3.7 live: the attack banner in the watcher, only `run anyway` typed in full accepted; the
    agent's waiting call is told a person is being asked, then runs the command once; the session
    stays halted."""
    tmux, _, config = world
    marker = config.parent / "marker"
    start_watcher(tmux)
    agent_runs(tmux, "a1", command="touch ~/.config/gatesh/marker", times=1)
    text = tmux.wait(tmux.person, r"([0-9a-f]{6}) › type `run anyway` in full")
    assert "HALTED: attack" in text and "Command: touch ~/.config/gatesh/marker" in text
    tmux.wait(tmux.agent, r"a person is being asked")
    tmux.send(tmux.person, "run")  # not in full: refused, still asking
    tmux.wait(tmux.person, r"type `run anyway` in full to run this one command, or Enter")
    assert not marker.exists()
    tmux.send(tmux.person, "run anyway")
    agent = tmux.wait(tmux.agent, r"done-a1")
    assert "rc-a1=0" in agent, agent
    assert marker.exists()
    tmux.wait(tmux.person, r"answered `run anyway` by you")
    # The halt stays: the next command of that session is refused.
    agent_runs(tmux, "a1", command="echo hi", times=1)
    agent = tmux.wait(tmux.agent, r"done-a1", n=2)
    assert "rc-a1=126" in agent and "this session is halted" in agent

"""`gatesh --human` (S7): a session whose operator is a person asks that person, at its own
terminal; it does not argue with them — no rounds, no "justify it with # why:" (issue 18, item 4)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from gatesh._types import Action, Stage
from gatesh.config import default
from gatesh.pipeline import PERSON_OPERATED, decide
from gatesh.session import SessionState
from tests._pty_tmux import SHELL_PARAMS, TmuxSession


def test_a_persons_destructive_command_is_asked_not_argued() -> None:
    state = SessionState(person_operated=True)
    d = decide("git reset --hard HEAD~3", cwd="/work/project", config=default(), session=state)
    assert d.action is Action.ESCALATE and d.to_person_reason == PERSON_OPERATED
    assert d.alignment is None and d.change.rejection is None and not d.rounds
    assert "# why" not in d.message


def test_an_agents_is_still_argued() -> None:
    d = decide(
        "git reset --hard HEAD~3", cwd="/work/project", config=default(), session=SessionState()
    )
    assert d.action is Action.REJECT and d.stage is Stage.RATER and "# why:" in d.message


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("shell", SHELL_PARAMS)
def test_human_shell_asks_its_person_at_once_and_takes_no(shell: str, tmp_path: Path) -> None:
    sh = TmuxSession(tmp_path, shell, extra=("--human",))
    sh.judge_without_undo()  # the edit must be a loss the gate asks about, not one undo holds
    try:
        repo = sh.work / "repo"
        repo.mkdir()
        git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
        subprocess.run([*git[:3], "init", "-q"], check=True)
        (repo / "f").write_text("one\n")
        subprocess.run([*git, "add", "f"], check=True)
        subprocess.run([*git, "commit", "-qm", "c"], check=True)
        (repo / "f").write_text("my own edit\n")
        sh.send(f"cd {repo} && git reset --hard")
        screen = sh.wait_for(lambda s: "[o]nce" in s, what="the prompt, on the first try")
        assert "could not agree" not in screen and "# why" not in screen and "Round 1" not in screen
        assert "yours to make" in screen
        sh.send("")  # Enter: No
        screen = sh.wait_for(lambda s: "you answered no, so nothing ran" in s, what="the refusal")
        assert "justification" not in screen and "different command" not in screen
        assert (repo / "f").read_text() == "my own edit\n"
    finally:
        sh.close()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("shell", SHELL_PARAMS)
def test_ctrl_c_at_a_persons_own_prompt_withdraws_the_question(shell: str, tmp_path: Path) -> None:
    """S10: Ctrl-C while a command waits for a person withdraws the escalation — in a person's own
    shell too, where they are asked at its terminal: nothing runs, the shell is back at once, and
    the audit line says withdrawn (no person's No is recorded). Ctrl-D stays a No."""
    config = '[[escalate]]\nmatch = "glob"\npattern = "touch asked-*"\n'
    sh = TmuxSession(tmp_path, shell, extra=("--human",), config=config)
    try:
        sh.send("touch asked-1")
        sh.wait_for(lambda s: "[o]nce" in s, what="the prompt")
        sh.keys("C-c")
        sh.wait_for(
            lambda s: "the escalation was withdrawn and nothing ran" in s, what="the withdrawal"
        )
        sh.send("touch asked-2")
        sh.wait_for(lambda s: s.count("[o]nce") == 2, what="the second prompt")
        sh.keys("C-d")
        sh.wait_for(lambda s: "you answered no, so nothing ran" in s, what="the No")
        sh.send("echo back-''at-once")
        sh.wait_for(
            lambda s: any(line.strip() == "back-at-once" for line in s.splitlines()),
            what="the next command",
        )
    finally:
        sh.close()
    assert not (sh.work / "asked-1").exists() and not (sh.work / "asked-2").exists()
    lines = [
        json.loads(x)
        for x in (tmp_path / "state" / "gatesh" / "audit.jsonl").read_text().splitlines()
    ]
    answers = [
        (r["command"], r["answer"])
        for r in lines
        if r.get("command", "").startswith("touch asked-") and r.get("answer")
    ]
    assert answers == [("touch asked-1", "withdrawn"), ("touch asked-2", "no")], answers

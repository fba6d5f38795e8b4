"""The interactive gated shell (S10), driven through tmux for bash and zsh (issue 7)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._pty_tmux import SHELL_PARAMS, TmuxSession, past_banner

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.fixture(params=SHELL_PARAMS)
def sh(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TmuxSession]:
    session = TmuxSession(tmp_path, request.param)
    try:
        yield session
    finally:
        session.close()


def refused(screen: str) -> bool:
    return "gatesh:" in screen and ("refused" in screen or "halted" in screen)


def test_echo_runs(sh: TmuxSession) -> None:
    screen = sh.run("echo o''k-123", marker="ok-123")
    assert "gatesh:" not in past_banner(screen)
    assert sh.status() == 0


def test_hardline_refused_not_run_status_126(sh: TmuxSession) -> None:
    marker = sh.work / "ran"
    sh.send(f"touch {marker}; rm -rf ~")
    sh.wait_for(lambda s: "hardline" in s, what="the refusal")
    assert sh.status() == 126
    assert not marker.exists()
    assert sh.home.exists()


def test_git_reset_hard_rejected(sh: TmuxSession) -> None:
    repo = sh.work / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    (repo / "f").write_text("one\n")
    subprocess.run([*git, "add", "f"], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    (repo / "f").write_text("work in progress\n")
    sh.judge_without_undo()  # with undo the snapshot holds the edit, and it runs (S17)
    sh.send(f"cd {repo} && git reset --hard")
    sh.wait_for(refused, what="the rejection")
    assert sh.status() == 126
    assert (repo / "f").read_text() == "work in progress\n"


def test_multiline_for_loop_refused_whole(sh: TmuxSession) -> None:
    marker = sh.work / "loop-ran"
    sh.send(f"for i in 1 2; do\ntouch {marker}\nrm -rf ~\ndone")
    sh.wait_for(lambda s: "hardline" in s, what="the refusal")
    assert sh.status() == 126
    assert not marker.exists()


def test_heredoc_into_bash_refused(sh: TmuxSession) -> None:
    marker = sh.work / "heredoc-ran"
    sh.send(f"bash <<'EOF'\ntouch {marker}\nrm -rf ~\nEOF")
    sh.wait_for(lambda s: "hardline" in s, what="the refusal")
    assert sh.status() == 126
    assert not marker.exists()


def test_pasted_block_gates_both(sh: TmuxSession) -> None:
    first, second = sh.work / "first", sh.work / "second"
    sh.send(f"touch {first}\ntouch {second}; rm -rf ~", enter=True)
    sh.wait_for(lambda s: "hardline" in s, what="the second line's refusal")
    assert first.exists()
    assert not second.exists()


def test_destructive_function_refused_at_definition(sh: TmuxSession) -> None:
    sh.send("wipe() { rm -rf ~; }")
    sh.wait_for(lambda s: "hardline" in s, what="the refusal")
    assert sh.status() == 126
    sh.run("type wipe >/dev/null 2>&1 || echo not-''defined", marker="not-defined")


def test_trap_debug_halts(sh: TmuxSession) -> None:
    sh.send("trap - DEBUG")
    sh.wait_for(lambda s: "halted" in s, what="the halt")
    marker = sh.work / "after-halt"
    sh.send(f"touch {marker}")
    sh.wait_for(lambda s: s.count("halted") >= 2, what="the second refusal")
    assert not marker.exists()


@pytest.mark.parametrize("shell", SHELL_PARAMS)
def test_nested_bash_is_gated(shell: str, tmp_path: Path) -> None:
    # The builtin rater rates a bare `bash` as an escape; the user allows it here, as S10 has a
    # shell started inside a gated session gated too (the shims folder is first on PATH).
    sh = TmuxSession(tmp_path, shell, config='[[allow]]\nmatch = "exact"\npattern = "bash"\n')
    try:
        _nested(sh)
    finally:
        sh.close()


def _nested(sh: TmuxSession) -> None:
    sh.send("bash")
    sh.wait_for(lambda s: s.rstrip().endswith("$") and s.count("$") >= 2, what="the nested prompt")
    sh.run("echo $GATESH_GATED-ne''sted", marker="1-nested")
    marker = sh.work / "nested-ran"
    sh.send(f"touch {marker}; rm -rf ~")
    sh.wait_for(lambda s: "hardline" in s, what="the nested refusal")
    assert not marker.exists()
    sh.send("exit")


def test_tput_cols_follows_resize(sh: TmuxSession) -> None:
    sh.run("echo cols=$(tput cols)", marker="cols=120")
    sh.tmux("resize-window", "-x", "100", "-y", "30")
    sh.run("clear; echo cols=$(tput cols)", marker="cols=100")


def test_ctrl_c_stops_sleep(sh: TmuxSession) -> None:
    sh.run("echo rea''dy", marker="ready")  # the daemon is up
    # A duration of its own, so pgrep cannot see another test's sleep and press Ctrl-C too early.
    duration = f"100.{os.getpid()}{time.monotonic_ns() % 10_000}"
    sh.send(f"sleep {duration}; echo after-sleep")
    end = time.monotonic() + 8
    while (
        subprocess.run(["pgrep", "-f", f"^sleep {duration}$"], capture_output=True).returncode != 0
    ):
        assert time.monotonic() < end, "sleep did not start"
        time.sleep(0.05)
    sh.keys("C-c")
    status = sh.status()
    assert status == 130
    assert "after-sleep\n" not in sh.screen().replace("echo after-sleep", "")


def test_exit_status_is_the_shells(sh: TmuxSession) -> None:
    sh.send("exit 7")
    assert sh.dead_status() == 7


ESCALATE = '[[escalate]]\nmatch = "prefix"\npattern = "touch escalate-me"\n'


@pytest.mark.parametrize("shell", SHELL_PARAMS)
def test_person_operator_answers_inline(shell: str, tmp_path: Path) -> None:
    sh = TmuxSession(tmp_path, shell, extra=("--human",), config=ESCALATE)
    try:
        sh.send("touch escalate-me")
        sh.wait_for(lambda s: "[o]nce" in s, what="the escalation prompt")
        sh.send("o")
        sh.wait_for(lambda s: "your answer: once" in s, what="the answer")
        end = time.monotonic() + 8
        while not (sh.work / "escalate-me").exists():
            assert time.monotonic() < end, sh.screen()
            time.sleep(0.05)
        # No is the default: Enter alone refuses.
        sh.send("touch escalate-me second")
        sh.wait_for(lambda s: s.count("[o]nce") >= 2, what="the second prompt")
        sh.send("")
        sh.wait_for(lambda s: "your answer: no" in s, what="the refusal")
        assert sh.status() == 126
        assert not (sh.work / "second").exists()
    finally:
        sh.close()


@pytest.mark.parametrize("shell", SHELL_PARAMS)
def test_agent_operator_cannot_answer(shell: str, tmp_path: Path) -> None:
    sh = TmuxSession(tmp_path, shell, config=ESCALATE)
    try:
        sh.send("touch escalate-me")
        sh.wait_for(lambda s: "nobody is watching" in s, what="the no-person refusal")
        assert "[o]nce" not in sh.screen()
        sh.send("o")
        sh.run("echo typed-''o", marker="typed-o")
        assert not (sh.work / "escalate-me").exists()
    finally:
        sh.close()

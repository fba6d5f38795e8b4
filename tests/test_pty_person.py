"""What a person meets around a gated shell (issue 28 item 6), each checked in tmux as an
unprivileged user with Debian's stock ``.bashrc`` (tests/_agent_tmux.py): the shell says it is
gated; keys typed ahead of a question stay the shell's; the agent's terminal says when a person
answered and what; ``gatesh status`` forgets ended sessions; an uninstall names the gated shells
still open and they refuse with one clear line; ``gatesh explain`` exits non-zero for a refusal;
a ``--human`` session inside an agent's session is refused at start.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import _agent_tmux
from tests._agent_tmux import AgentTmux, Installed, as_user, deny_config

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(_agent_tmux.missing()), reason=_agent_tmux.missing()),
]

ESCALATE = '\n[[escalate]]\nmatch = "glob"\npattern = "touch asked-*"\n'


@pytest.fixture(scope="module")
def installed() -> Iterator[Installed]:
    with Installed.make() as inst:
        yield inst


@pytest.fixture
def sessions() -> Iterator[list[AgentTmux]]:
    opened: list[AgentTmux] = []
    yield opened
    for s in opened:
        s.close()


def _as_agent(inst: Installed, sh: AgentTmux, *args: str) -> subprocess.CompletedProcess[str]:
    """A command the person runs as the agent user in a terminal of their own (not gated)."""
    return subprocess.run(
        [*as_user(inst.user), str(inst.install.launcher), *args],
        env=sh.env,
        cwd=sh.work,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_gated_shell_says_it_is_gated(installed: Installed, sessions: list[AgentTmux]) -> None:
    sh = AgentTmux(installed)
    sessions.append(sh)
    screen = sh.prompt()
    assert "this bash is gated" in screen and "gatesh watch" in screen
    marked = AgentTmux(
        installed, config=deny_config(Path("/nonexistent")) + '\n[session]\nmark = "prompt"\n'
    )
    sessions.append(marked)
    screen = marked.prompt()
    assert "is gated" not in screen
    assert screen.rstrip().splitlines()[-1].startswith("(gated) ")


def test_keys_typed_ahead_of_a_question_stay_the_shells(
    installed: Installed, sessions: list[AgentTmux]
) -> None:
    sh = AgentTmux(
        installed,
        config=deny_config(Path("/nonexistent")) + ESCALATE,
        extra_args=("--human",),
    )
    sessions.append(sh)
    sh.prompt()
    # One burst: the line that needs a person, and a line typed ahead before the question shows.
    sh.tmux("send-keys", "-l", "touch asked-one")
    sh.tmux("send-keys", "Enter")
    sh.tmux("send-keys", "-l", "echo ahead-''typed")
    sh.tmux("send-keys", "Enter")
    sh.wait_for(lambda s: "[o]nce" in s, what="the question")
    time.sleep(0.5)
    # A line typed at the question is not an answer: the question is asked again.
    sh.send("ls")
    sh.wait_for(lambda s: "not an answer" in s, what="the question asked again")
    sh.send("o")
    sh.wait_for(lambda s: "your answer: once" in s, what="the answer")
    screen = sh.wait_for(
        lambda s: any(line.strip() == "ahead-typed" for line in s.splitlines()),
        what="the typed-ahead line, run by the shell",
    )
    assert (sh.work / "asked-one").exists(), screen


def test_the_agents_terminal_says_when_a_person_answered(
    installed: Installed, sessions: list[AgentTmux]
) -> None:
    sh = AgentTmux(installed, config=deny_config(Path("/nonexistent")) + ESCALATE)
    sessions.append(sh)
    sh.prompt()
    watcher = subprocess.Popen(
        [*as_user(installed.user), str(installed.install.launcher), "watch"],
        env={**sh.env, "COLUMNS": "120"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _attached(watcher)
        sh.send("touch asked-two")
        sh.wait_for(
            lambda s: "a person is being asked" in s, what="the waiting notice", deadline=30
        )
        assert watcher.stdin is not None
        watcher.stdin.write("o\n")
        watcher.stdin.flush()
        screen = sh.wait_for(lambda s: "a person answered" in s, what="the answer", deadline=30)
        assert "'once'" in screen and "it runs" in screen
        # The notice is printed before the command runs: wait for its effect, not beside it.
        end = time.monotonic() + 15
        while not (sh.work / "asked-two").exists() and time.monotonic() < end:
            time.sleep(0.1)
        assert (sh.work / "asked-two").exists(), screen
    finally:
        watcher.kill()
        watcher.wait(timeout=10)


def _attached(watcher: subprocess.Popen[str], deadline: float = 60.0) -> None:
    """Wait until ``gatesh watch`` says it is watching (it may start the daemon first)."""
    import select

    assert watcher.stdout is not None
    end = time.monotonic() + deadline
    seen = []
    while time.monotonic() < end:
        ready, _, _ = select.select([watcher.stdout], [], [], 0.5)
        if ready:
            line = watcher.stdout.readline()
            seen.append(line)
            if "watching" in line:
                return
            if not line:
                break
    raise AssertionError(f"gatesh watch did not attach: {''.join(seen)[-2000:]}")


def _session_of(sh: AgentTmux) -> str:
    found = re.search(r"session (pty-[0-9a-f]+)", sh.screen())
    assert found is not None, sh.screen()
    return found.group(1)


def test_status_forgets_ended_sessions(installed: Installed, sessions: list[AgentTmux]) -> None:
    plain, halted = AgentTmux(installed), AgentTmux(installed)
    sessions += [plain, halted]
    for sh in (plain, halted):
        sh.prompt()
        sh.sync()
    # The second session is halted (tampering), so the daemon keeps it after it ends.
    halted.send("trap - DEBUG")
    halted.wait_for(lambda s: "halted" in s, what="the halt")
    ids = {_session_of(plain), _session_of(halted)}
    # Each session has its own HOME (and daemon): each is asked about its own.
    for sh in (plain, halted):
        assert _session_of(sh) in _as_agent(installed, sh, "status").stdout
        sh.keys("C-d")  # end of input: the shell ends (a halted session refuses `exit` itself)
        sh.dead_status()

    def listed_sessions(sh: AgentTmux, *args: str) -> str:
        out = _as_agent(installed, sh, "status", *args).stdout
        return out.partition("\nsessions:")[2].partition("\nescalations open")[0]

    deadline = time.monotonic() + 20
    out = ""
    while time.monotonic() < deadline:
        out = listed_sessions(plain) + listed_sessions(halted)
        if not any(i in out for i in ids):
            break
        time.sleep(0.5)
    assert not any(i in out for i in ids), out
    kept = _as_agent(installed, halted, "status").stdout
    assert "1 ended, not listed; 1 of them halted" in kept, kept
    listed = listed_sessions(halted, "--all")
    assert _session_of(halted) in listed and "HALTED" in listed and "ended" in listed, listed


def test_explain_exits_non_zero_for_a_refusal(
    installed: Installed, sessions: list[AgentTmux]
) -> None:
    # A person's own terminal (a plain bash, not gated), as the agent user.
    launcher = shlex.quote(str(installed.install.launcher))
    sh = AgentTmux(installed, command="bash -i")
    sessions.append(sh)
    sh.prompt()
    sh.send(f"{launcher} explain 'rm -rf ~' > /dev/null; echo refused-status=$?")
    sh.send(f"{launcher} explain 'ls' > /dev/null; echo allowed-status=$?")
    screen = sh.wait_for(
        lambda s: re.search(r"^allowed-status=\d", s, re.M) is not None, what="both statuses"
    )
    assert "refused-status=126" in screen and "allowed-status=0" in screen, screen
    help_text = _as_agent(installed, sh, "explain", "--help").stdout
    assert "Exit status" in help_text and "126" in help_text


def test_a_human_session_inside_an_agents_session_is_refused(
    installed: Installed, sessions: list[AgentTmux]
) -> None:
    sh = AgentTmux(installed)
    sessions.append(sh)
    sh.prompt()
    launcher = shlex.quote(str(installed.install.launcher))
    sh.send(f"{launcher} --human")
    screen = sh.wait_for(
        lambda s: "was not started" in s or ("gatesh:" in s and "refused" in s),
        what="the refusal",
    )
    assert "[o]nce" not in screen
    sh.sync()


def test_uninstall_names_open_shells_and_they_refuse_with_one_line(
    sessions: list[AgentTmux],
) -> None:
    with Installed.make() as inst:  # its own copy: this test removes it
        sh = AgentTmux(inst)
        sessions.append(sh)
        sh.prompt()
        sh.sync()
        out = subprocess.run(
            [*as_user(inst.user), str(inst.install.launcher), "install", "all", "--uninstall"],
            env=sh.env,
            cwd=sh.work,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "gated shells still open" in out.stdout + out.stderr, out.stdout + out.stderr
        shutil.rmtree(inst.install.root / "src" / "gatesh")  # what removing the venv does
        sh.send("echo after-''uninstall")
        screen = sh.wait_for(lambda s: "was uninstalled" in s, what="the one line")
        assert "Traceback" not in screen and "ModuleNotFoundError" not in screen
        assert not any(line.strip() == "after-uninstall" for line in screen.splitlines())
        sh.send("echo again")
        screen = sh.wait_for(lambda s: s.count("was uninstalled") >= 2, what="the line again")
        assert "Traceback" not in screen


def test_man_finds_the_page_in_the_first_terminal(
    installed: Installed, sessions: list[AgentTmux]
) -> None:
    """install.sh puts the page next to the launcher's folder, where man looks once that folder is
    on PATH (the next login), and prints the line that shows it in the first terminal: that line
    works there, as the user, before PATH has the folder."""
    if shutil.which("man") is None:
        pytest.skip("man is not installed")
    text = (Path(__file__).resolve().parents[1] / "install.sh").read_text()
    assert "man -w gatesh" in text and 'echo "    man $man_page"' in text
    sh = AgentTmux(installed, command="bash -i")
    sessions.append(sh)
    page = sh.home / ".local/share/man/man1/gatesh.1"
    page.parent.mkdir(parents=True)
    shutil.copy(Path(__file__).resolve().parents[1] / "man" / "gatesh.1", page)
    for folder in (page.parent, page.parent.parent, page.parent.parent.parent):
        os.chown(folder, installed.user.pw_uid, installed.user.pw_gid)
    sh.prompt()
    sh.send(
        f"man -w gatesh; echo plain-status=$?; man {page} | grep -c GATESH; echo line-status=$?"
    )
    screen = sh.wait_for(
        lambda s: re.search(r"^line-status=\d", s, re.M) is not None, what="man's answers"
    )
    assert "line-status=0" in screen, screen

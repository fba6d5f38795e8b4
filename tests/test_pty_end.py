"""A gated session whose gate stopped answering still ends when it is ended (S10, S15).

The daemon is stopped (SIGSTOP: its socket still accepts, nothing answers) while the shell waits
for the gate's answer about a line; then the session's relay is sent SIGTERM or SIGHUP, as a
service manager or a closing terminal would. Before, the relay passed SIGTERM to the shell, which an
interactive bash ignores (and a shell waiting for the gate holds a hang-up until its answer), so
the relay and its shell stayed behind for as long as the gate did not answer. Now the shell is
killed after a grace period, the terminal is told in one line, and the line waiting for the gate
never runs.

In tmux, as the unprivileged agent user with a stock ``.bashrc`` (tests/_agent_tmux.py); the
line is ``touch PROBE/ran``, harmless if it ran.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import _agent_tmux
from tests._agent_tmux import AgentTmux, Installed

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(_agent_tmux.missing()), reason=_agent_tmux.missing()),
]


@pytest.fixture(scope="module")
def installed() -> Iterator[Installed]:
    with Installed.make() as inst:
        yield inst


def _daemon(sh: AgentTmux) -> int:
    lock = sh.home / "run" / "gatesh" / "daemon.lock"
    return int(lock.read_text().split()[0])


def _relay(sh: AgentTmux) -> int:
    shell = sh.shell_pid()
    return _agent_tmux._ppid(shell)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_a_session_whose_gate_hangs_ends_when_it_is_ended(
    installed: Installed, shell: str, sig: signal.Signals
) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    sh = AgentTmux(installed, shell=shell)
    daemon = 0
    try:
        sh.prompt()
        sh.sync(deadline=60)  # the daemon is up and has answered
        daemon, relay, gated = _daemon(sh), _relay(sh), sh.shell_pid()
        os.kill(daemon, signal.SIGSTOP)
        sh.send(f"touch {sh.probe}/ran")
        time.sleep(1.0)  # the shell waits for the gate's answer
        os.kill(relay, sig)
        status = sh.dead_status(
            deadline=20
        )  # before: the relay stayed for as long as the gate hung
        assert not os.path.exists(f"/proc/{relay}"), "the relay stayed behind"
        assert not os.path.exists(f"/proc/{gated}"), "the shell stayed behind"
        assert not (sh.probe / "ran").exists()
        screen = sh.screen()
        said = [line for line in screen.splitlines() if "so its shell was killed" in line]
        if said:  # (a shell may end on SIGHUP itself, once the gate's wait is over)
            assert said == [
                f"gatesh: the session was ended ({sig.name}), so its shell was killed: nothing "
                "more runs in it."
            ], screen
            assert status == 128 + signal.SIGKILL
        else:
            assert sig == signal.SIGHUP and status != 0, screen
    finally:
        if daemon:
            with_daemon = Path(f"/proc/{daemon}")
            if with_daemon.exists():
                os.kill(daemon, signal.SIGCONT)
        sh.close()

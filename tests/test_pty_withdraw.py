"""Ctrl-C in an agent's gated shell withdraws every check a person is being asked about (S10),
whichever way the check reached the daemon: the main shell's line, a command in a ``( … )`` or
``$( … )`` subshell, or the members of a pipeline asking at the same time (in bash each asks
through its own `gatesh _gate`, and both wait at once).

In tmux, as the unprivileged agent user with a stock ``.bashrc`` (tests/_agent_tmux.py), with
`gatesh watch` in a second pane. The commands a person is asked about are ``touch asked-*`` in a
scratch folder, run by functions of the user's startup file that name a variable set at the
prompt: the line (``mka``) is allowed, and the function's command is decided on its own, with the
variable's value put in, where it runs.
"""

from __future__ import annotations

import shlex
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import _agent_tmux
from tests._agent_tmux import AgentTmux, Installed, deny_config

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(_agent_tmux.missing()), reason=_agent_tmux.missing()),
]

ASK = '\n[[escalate]]\nmatch = "glob"\npattern = "touch asked-*"\n\n[escalation]\ntimeout_s = 120\n'
MK = '\nmka() { touch "$A"; }\nmkb() { touch "$B"; }\n'
# (id, what is typed, the commands withdrawn). zsh's subshells share the main shell's channel,
# one request at a time: of a pipeline's members, the first to ask is asked about, and Ctrl-C
# interrupts the other before it asks. In bash both ask, each through its own `gatesh _gate`.
CASES = [
    ("subshell", "( mka )", ("touch asked-a",)),
    ("substitution", "echo $(mka)", ("touch asked-a",)),
    ("pipeline", "mka | mkb", ("touch asked-a", "touch asked-b")),
]


@pytest.fixture(scope="module")
def installed() -> Iterator[Installed]:
    with Installed.make() as inst:
        yield inst


def _rc(shell: str) -> dict[str, str]:
    if shell == "bash":
        return {".bashrc": Path("/etc/skel/.bashrc").read_text() + MK}
    return {".zshrc": "PS1='%n%# '\n" + MK}


@pytest.mark.parametrize("shell", ["bash", "zsh"])
@pytest.mark.parametrize(("typed", "asked"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_ctrl_c_withdraws_every_check_a_person_is_asked_about(
    installed: Installed, shell: str, typed: str, asked: tuple[str, ...]
) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    sh = AgentTmux(
        installed,
        shell=shell,
        config=deny_config(Path("/nonexistent")) + ASK,
        home_files=_rc(shell),
    )
    try:
        sh.prompt()
        launcher = shlex.quote(str(installed.install.launcher))
        watcher = sh.split(f"{launcher} watch")
        sh.wait_for(lambda s: "watching" in s, what="the watcher", pane=watcher, deadline=60)
        either = shell == "zsh" and len(asked) > 1
        if either:
            asked = asked[:1]
        sh.send("A=asked-a B=asked-b")
        sh.send(typed)
        # The daemon decides one session's checks one at a time: a pipeline's second member
        # waits behind the first, whose person is asked.
        sh.wait_for(
            lambda s: "a person is being asked" in s, what="the waiting notice", deadline=60
        )
        if shell == "bash":  # every check asked: each subshell's `gatesh _gate` is waiting
            _wait_asking(sh, len(asked))
        sh.keys("C-c")
        sh.wait_for(
            lambda s: s.count("nothing left to answer") >= len(asked),
            what="every question withdrawn in the watcher",
            pane=watcher,
            deadline=30,
        )
        sh.sync()  # the shell is back and runs the next line at once
        for name in ("asked-a", "asked-b"):
            assert not (sh.work / name).exists(), name
        # The function's command, decided with the value put in (`touch "asked-a"`).
        records = [r for r in sh.audit() if r.get("command", "").startswith("touch ")]
        assert [(r["action"], r.get("answer")) for r in records] == [("refuse", "withdrawn")] * len(
            asked
        ), records
        if not either:  # (zsh's pipeline: whichever member asked first)
            commands = sorted(r["command"].replace('"', "") for r in records)
            assert commands == list(asked), records
    finally:
        sh.close()


def _wait_asking(sh: AgentTmux, count: int) -> None:
    """Wait until ``count`` `gatesh _gate` processes of the session are waiting for answers."""
    end = time.monotonic() + 30
    while time.monotonic() < end:
        found = [pid for pid in _agent_tmux._descendants(sh.pane_pid()) if _is_gate(pid)]
        if len(found) >= count:
            time.sleep(0.5)  # its request sent, and passed on to the daemon
            return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} subshells asked the gate")


def _is_gate(pid: int) -> bool:
    try:
        return b"\0_gate\0" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False

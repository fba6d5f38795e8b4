"""gatesh._invoke: the one reader of a shell's argv (S1), used by _entry, the client, the PTY
session and the launcher."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gatesh import _invoke, client
from gatesh._invoke import Invocation
from gatesh.launcher import render_launcher
from gatesh.vocab.programs import shells

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("argv", "as_shell", "pty_at_a_terminal", "pty_on_a_pipe"),
    [
        (["gatesh"], True, True, False),
        (["gatesh", "-c", "ls"], True, False, False),
        (["gatesh", "-lc", "ls", "zero"], True, False, False),
        (["gatesh", "--login"], True, True, False),
        (["gatesh", "-i"], True, True, True),
        (["gatesh", "-l", "x.sh"], True, False, False),
        (["gatesh", "--shell", "zsh"], True, True, False),
        (["gatesh", "--human", "-s"], True, True, False),
        (["gatesh", "status"], False, False, False),
        (["gatesh", "--version"], False, False, False),
        (["gatesh", "-h"], False, False, False),
        (["/opt/shims/bash", "-c", "ls"], True, False, False),
        (
            ["/opt/shims/bash", "--version"],
            True,
            False,
            False,
        ),  # never a session: it prints and exits
        (["/opt/shims/sh"], True, True, False),
        (["-bash"], True, True, False),
        (["/opt/shims/zsh", "x.sh"], True, False, False),
    ],
)
def test_what_an_invocation_runs(
    argv: list[str], as_shell: bool, pty_at_a_terminal: bool, pty_on_a_pipe: bool
) -> None:
    inv = Invocation(argv)
    assert inv.as_shell is as_shell
    if as_shell:
        assert (inv.wants_pty(True), inv.wants_pty(False)) == (pty_at_a_terminal, pty_on_a_pipe)


def test_gatesh_options_are_read_where_bash_reads_options() -> None:
    inv = Invocation(["gatesh", "-l", "--shell=zsh", "--human"])
    assert (inv.login, inv.pty_shell, inv.parsed.human) == (True, "zsh", True)
    assert Invocation(["gatesh", "--shell", "fish"]).parsed.bad_shell
    assert Invocation(["/x/zsh"]).pty_shell == "zsh" and Invocation(["/x/sh"]).pty_shell is None
    # After -c STRING the words are $0 $1 …: never gatesh's options, and gated as positionals.
    tail = Invocation(["gatesh", "-c", "echo $0", "--human", "--shell", "zsh"]).parsed
    assert tail.args == ["--human", "--shell", "zsh"] and not tail.human and tail.shell is None
    # --shell takes its value: the value is not a script operand.
    assert Invocation(["gatesh", "--shell", "zsh"]).parsed.script is None


def test_the_client_reads_with_the_same_parser() -> None:
    assert client.ShellArgs is _invoke.ShellArgs


def test_the_tables_agree_with_the_vocabulary() -> None:
    assert _invoke.PTY_SHELLS == shells.PTY_SHELLS
    assert set(_invoke.SHELL_NAMES) <= shells.SHELLS
    # Every shell that reads sh has a shim name (a gated session links them all, S10).
    assert set(_invoke.SHELL_NAMES) == {s.name for s in shells.SHELL_ROWS if s.parsed}
    assert set(_invoke.INTERACTIVE_SHIMS) <= set(_invoke.SHELL_NAMES)


def test_the_launcher_chooses_by_the_same_tables() -> None:
    text = render_launcher("/usr/bin/python3.11", ["/p"], "/usr/local/bin/python3.11")
    assert f"in {' | '.join(_invoke.SHELL_NAMES)}) python=$FAST" in text
    assert f"in {' | '.join(_invoke.CLI_FLAGS)}) ;;" in text


def test_a_shim_asked_for_its_version_at_a_terminal_prints_it(tmp_path: Path) -> None:
    """The bug this fixes: `bash --version` through a shim at a terminal went client -> PTY ->
    client … until the recursion limit refused it (two parsers disagreeing about 'interactive')."""
    code = (
        "import os, sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "master, slave = os.openpty()\n"
        "os.dup2(slave, 0)\n"
        "from gatesh._entry import main\n"
        "sys.exit(main(['bash', '--version']))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "GATESH_SESSION": "v"},
    )
    assert "RecursionError" not in out.stderr, out.stderr
    assert out.returncode == 0 and "bash" in out.stdout.lower(), out.stderr

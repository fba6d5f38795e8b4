"""The README's first screen (issue 18, item 14): its two commands are the ones CI runs on a fresh
Debian 12 machine (python3 only; the system Python refuses pip, PEP 668), and it says whose shell
the first command starts and where the person watches."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
FIRST_SCREEN = README.split("\n---\n", 1)[0]
COMMANDS = [line.strip() for line in FIRST_SCREEN.splitlines() if line.startswith("    ")]


def test_the_first_screen_has_the_install_and_the_test_commands() -> None:
    assert COMMANDS[0] == "./install.sh && ~/.local/bin/gatesh --human"
    assert COMMANDS[-1].startswith("python3 -m venv ")


def test_ci_runs_the_readme_test_command_exactly() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert COMMANDS[-1] in ci.splitlines(), "the README's test command must be .ci/run's, verbatim"
    apt = next(c for c in COMMANDS if "apt-get install" in c)
    packages = apt.split("apt-get install", 1)[1].split()
    ci_packages = re.search(r"apt-get install -y -qq ([^>]+)", ci).group(1).split()  # type: ignore[union-attr]
    assert set(packages) - {"sudo"} <= set(ci_packages)


def test_no_command_assumes_python_or_a_system_pip() -> None:
    for command in COMMANDS:
        words = re.split(r"[\s&|;]+", command)
        assert "python" not in words and "pip" not in words, command  # Debian 12 has python3 only


def test_it_says_how_to_check_the_audit_log_was_not_tampered_with() -> None:
    """Issue 18 item 13 (as the audit chain's landing asked): `gatesh log --verify` is in the README
    (the man page's log entry is pinned by tests/test_man.py)."""
    assert "`gatesh log --verify`" in README


def test_it_says_whose_shell_it_starts_and_where_the_person_watches() -> None:
    assert "It is *your* shell (`--human`)" in FIRST_SCREEN
    assert "**`gatesh watch`**" in FIRST_SCREEN and "agent's" in FIRST_SCREEN

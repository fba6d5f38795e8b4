"""The words that make a program print its version or its help and exit, doing nothing else.

One table for every layer (the read-only table, the policy's own rules, the builtin rater, the
reader): a run that only prints a version or a help text changes nothing, reads no secret and runs
nothing it was handed. Which spellings mean that is a judgement per spelling, so each row says
where it holds; the named sets below are the only unions of rows the code asks, each for the kind
of program it is asked about.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

__all__ = [
    "CLI_INFO",
    "FOREIGN_SHELL_INFO",
    "INFO_ROWS",
    "LONG_INFO",
    "SUBCOMMAND_INFO",
    "TOOL_INFO",
    "TYPED_AT_INFO",
    "VERSION_HELP",
    "VERSION_ONLY",
    "Info",
]


class Asks(enum.Enum):
    """What a spelling asks the program to print."""

    VERSION = "version"
    HELP = "help"


@dataclass(frozen=True)
class Info:
    """One spelling that asks a program for its version or help, and where that holds."""

    spelling: str
    asks: Asks
    reason: str


INFO_ROWS: Final[tuple[Info, ...]] = (
    Info("--version", Asks.VERSION, "GNU's long option, read alike by nearly every program"),
    Info("--help", Asks.HELP, "GNU's long option, read alike by nearly every program"),
    Info(
        "-h",
        Asks.HELP,
        "help in most programs, but human-readable sizes in du, df, ls and sort, and a host in "
        "ssh-like tools: only asked of programs whose -h is help",
    ),
    Info(
        "-V",
        Asks.VERSION,
        "version in most programs (python, cargo, curl, gpg), but verbose in vim and a volume "
        "label in tar: only asked of programs whose -V is version",
    ),
    Info(
        "-v",
        Asks.VERSION,
        "version in node, npm and most build and service tools, but verbose in nearly every "
        "other program: only asked of such tools",
    ),
    Info(
        "version", Asks.VERSION, "the subcommand form of tools with subcommands (`kubectl version`)"
    ),
    Info("-version", Asks.VERSION, "the single-dash form of Java-born tools and PowerShell"),
    Info("-help", Asks.HELP, "the single-dash form of Java-born tools and PowerShell"),
    Info("-?", Asks.HELP, "help in PowerShell, ed, nano and other programs born outside GNU"),
    Info("/?", Asks.HELP, "help in cmd.exe and PowerShell"),
)
_SPELLINGS: Final = frozenset(row.spelling for row in INFO_ROWS)


def _rows(*spellings: str) -> frozenset[str]:
    """The rows named (each must be a row: a typo fails at import, not silently at a decision)."""
    unknown = set(spellings) - _SPELLINGS
    if unknown:
        raise ValueError(f"not an info spelling: {sorted(unknown)}")
    return frozenset(spellings)


#: The spellings nearly every program reads as "print your version or help and exit".
VERSION_HELP: Final = _rows("--version", "--help", "-h", "-V")
#: Programs whose -V is something else (vim's verbose) or that have no -V (the cloud CLIs).
LONG_INFO: Final = VERSION_HELP - _rows("-V")
#: Build, package and service tools, whose -v is their version too.
TOOL_INFO: Final = VERSION_HELP | _rows("-v")
#: Tools with subcommands, which also print their version for a ``version`` subcommand.
SUBCOMMAND_INFO: Final = TOOL_INFO | _rows("version")
#: Deploy CLIs (vercel, netlify, firebase …): long options, -h and -v.
CLI_INFO: Final = LONG_INFO | _rows("-v")
#: Programs a person types commands at (editors, REPLs): -? is help in several of them.
TYPED_AT_INFO: Final = VERSION_HELP | _rows("-?")
#: The only word given to a program the read-only table has no row for, that still makes it only
#: print: -h and -v are not (``shutdown -h`` halts the machine, ``-v`` is verbose).
VERSION_ONLY: Final = _rows("--version", "-version", "--help", "-help", "version", "-V")
#: What a foreign shell (PowerShell, cmd, fish …) reads as "print your version or help".
FOREIGN_SHELL_INFO: Final = _rows("--version", "-version", "--help", "-help", "-h", "-?", "/?")

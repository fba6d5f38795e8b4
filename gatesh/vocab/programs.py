"""Programs that run code: shells, interpreters, and what gatesh can read of each (S2, S2.1).

Every layer asks these tables, never a list of its own: a name the reader unfolds as a shell is
a shell to policy, rater and daemon too, and a language the reader cannot read is opaque to all
of them. Rows are data; the few functions here only look rows up.

- :data:`SHELL_ROWS`: every shell family an agent could reach, with its code options and whether
  gatesh parses its language (only the Bourne family: tree-sitter-bash and bashlex read it).
- :data:`INTERPRETER_ROWS`: languages whose programs run commands, with their inline-code
  options, whether they read a program from standard input, and whether the builtin rater models
  how their code runs commands and deletes files.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


# --- shells ------------------------------------------------------------------------------------


class Family(enum.StrEnum):
    """A shell language family. Only :attr:`BOURNE` is parsed by gatesh's readers."""

    BOURNE = "bourne"  # sh, bash, ksh, zsh, …: the language tree-sitter-bash and bashlex read
    CSH = "csh"  # csh, tcsh: C-shell syntax (history `!`, `set x = …`, `foreach`)
    FISH = "fish"
    RC = "rc"  # Plan 9 rc and es
    POWERSHELL = "powershell"
    CMD = "cmd"  # Windows cmd.exe (reachable from WSL)
    OWN = "own"  # a language of its own: nu, elvish, xonsh, ysh, ion, murex


@dataclass(frozen=True)
class Shell:
    """One shell. ``code_opts``: options whose value is code to run (``-c`` in a short cluster
    counts for every family that takes it). ``note`` says where a person meets it.
    ``everyday``: the name is also an everyday word (``cmd``, ``rc``, ``nu``), so as another
    program's argument it does not say that program runs a shell.
    """

    name: str
    family: Family
    code_opts: frozenset[str]
    note: str
    everyday: bool = False

    @property
    def parsed(self) -> bool:
        """Whether gatesh reads this shell's code (its ``-c`` strings, scripts and input)."""
        return self.family is Family.BOURNE


_C = _f("-c")
SHELL_ROWS: Final[tuple[Shell, ...]] = (
    Shell("sh", Family.BOURNE, _C, "POSIX sh (dash on Debian, bash elsewhere)"),
    Shell("bash", Family.BOURNE, _C, "GNU bash"),
    Shell("rbash", Family.BOURNE, _C, "restricted bash"),
    Shell("dash", Family.BOURNE, _C, "Debian Almquist shell"),
    Shell("ash", Family.BOURNE, _C, "Almquist shell (busybox, Alpine)"),
    Shell("hush", Family.BOURNE, _C, "busybox's small shell", everyday=True),
    Shell("busybox-sh", Family.BOURNE, _C, "busybox's sh applet under its own name"),
    Shell("ksh", Family.BOURNE, _C, "KornShell"),
    Shell("ksh93", Family.BOURNE, _C, "AT&T KornShell 93"),
    Shell("mksh", Family.BOURNE, _C, "MirBSD KornShell (Android)"),
    Shell("lksh", Family.BOURNE, _C, "mksh's legacy mode"),
    Shell("oksh", Family.BOURNE, _C, "OpenBSD ksh, portable"),
    Shell("loksh", Family.BOURNE, _C, "OpenBSD ksh, Linux port"),
    Shell("pdksh", Family.BOURNE, _C, "public-domain ksh"),
    Shell("zsh", Family.BOURNE, _C, "Z shell (read as bash: their simple commands agree)"),
    Shell("yash", Family.BOURNE, _C, "yet another shell"),
    Shell("posh", Family.BOURNE, _C, "policy-compliant ordinary shell", everyday=True),
    Shell("sash", Family.BOURNE, _C, "stand-alone shell", everyday=True),
    Shell("osh", Family.BOURNE, _C, "Oils' bash-compatible shell", everyday=True),
    Shell("csh", Family.CSH, _C, "C shell (BSD)"),
    Shell("tcsh", Family.CSH, _C, "C shell with line editing"),
    Shell("fish", Family.FISH, _f("-c", "--command", "-C", "--init-command"), "friendly interactive shell"),
    Shell("rc", Family.RC, _C, "Plan 9 shell", everyday=True),
    Shell("es", Family.RC, _C, "extensible shell, an rc descendant", everyday=True),
    Shell("pwsh", Family.POWERSHELL, _f("-c", "-command", "-e", "-ec", "-encodedcommand", "-f", "-file"),
          "PowerShell 7 (options are case-insensitive)"),
    Shell("powershell", Family.POWERSHELL, _f("-c", "-command", "-e", "-ec", "-encodedcommand", "-f", "-file"),
          "Windows PowerShell (reachable from WSL)"),
    Shell("cmd", Family.CMD, _f("/c", "/k", "/r"), "Windows cmd.exe (reachable from WSL)", everyday=True),
    Shell("elvish", Family.OWN, _C, "Elvish"),
    Shell("nu", Family.OWN, _f("-c", "--commands"), "Nushell", everyday=True),
    Shell("xonsh", Family.OWN, _C, "Python-based shell"),
    Shell("ysh", Family.OWN, _C, "Oils' new language"),
    Shell("ion", Family.OWN, _C, "Redox OS shell", everyday=True),
    Shell("murex", Family.OWN, _C, "murex", everyday=True),
)

SHELL_BY_NAME: Final = MappingProxyType({s.name: s for s in SHELL_ROWS})
SHELLS: Final[frozenset[str]] = frozenset(SHELL_BY_NAME)
PARSED_SHELLS: Final[frozenset[str]] = frozenset(s.name for s in SHELL_ROWS if s.parsed)
# Shell names that, as another program's argument, say it runs that shell (`rlwrap bash`).
SHELL_ARGUMENT_NAMES: Final[frozenset[str]] = frozenset(s.name for s in SHELL_ROWS if not s.everyday)
# Multi-call binaries that hold a shell applet (`busybox sh`): a process by this name may be one.
MULTICALL: Final = _f("busybox", "toybox")
# The shells gatesh itself runs gated in a PTY (S10) and answers for as a shim (S1).
PTY_SHELLS: Final[tuple[str, ...]] = ("bash", "zsh")
# Shell options that take the next word as their value (`bash -o pipefail -c …`).
SHELL_OPTS_WITH_ARG: Final = _f("-o", "+o", "-O", "+O", "--rcfile", "--init-file")
# Operands that name a shell's or interpreter's own standard input as its program.
STDIN_NAMES: Final = _f("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")


def shell(head: str) -> Shell | None:
    """The row for shell ``head`` (a case-folded basename), or None."""
    return SHELL_BY_NAME.get(head)


# --- interpreters ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interpreter:
    """A language whose programs can run commands and change files.

    ``inline``: options whose value is program text (``python -c``; ``deno eval`` is a
    subcommand and listed the same way). ``program_operand``: the first operand is the program
    (awk). ``stdin``: given no program it reads one from standard input (``… | python3``).
    ``modelled``: the builtin rater's code rules know how this language runs commands and deletes
    files, so its inline code is read; other languages' code is opaque (S2.1).
    ``versioned``: ``python3.11`` and ``perl5.36`` are this row.
    """

    name: str
    inline: frozenset[str]
    stdin: bool
    modelled: bool
    versioned: bool = False
    program_operand: bool = False


INTERPRETER_ROWS: Final[tuple[Interpreter, ...]] = (
    Interpreter("python", _f("-c"), stdin=True, modelled=True, versioned=True),
    Interpreter("pypy", _f("-c"), stdin=True, modelled=True, versioned=True),
    Interpreter("perl", _f("-e", "-E"), stdin=True, modelled=True, versioned=True),
    Interpreter("ruby", _f("-e"), stdin=True, modelled=True, versioned=True),
    Interpreter("irb", _f(), stdin=True, modelled=True),
    Interpreter("node", _f("-e", "--eval", "-p", "--print"), stdin=True, modelled=True, versioned=True),
    Interpreter("nodejs", _f("-e", "--eval", "-p", "--print"), stdin=True, modelled=True),
    Interpreter("ts-node", _f("-e", "--eval", "-p", "--print"), stdin=True, modelled=True),
    Interpreter("tsx", _f("-e", "--eval", "-p", "--print"), stdin=True, modelled=True),
    Interpreter("deno", _f("eval"), stdin=False, modelled=True),
    Interpreter("bun", _f("-e", "--eval", "-p", "--print"), stdin=False, modelled=True),
    Interpreter("php", _f("-r"), stdin=True, modelled=True, versioned=True),
    Interpreter("lua", _f("-e"), stdin=True, modelled=True, versioned=True),
    Interpreter("luajit", _f("-e"), stdin=True, modelled=True),
    Interpreter("tclsh", _f("-c"), stdin=True, modelled=True, versioned=True),
    Interpreter("wish", _f(), stdin=True, modelled=True, versioned=True),
    Interpreter("expect", _f("-c"), stdin=True, modelled=True),
    Interpreter("rscript", _f("-e"), stdin=False, modelled=True),
    Interpreter("r", _f("-e"), stdin=True, modelled=True),
    Interpreter("julia", _f("-e", "--eval", "-E", "--print"), stdin=True, modelled=True),
    Interpreter("jrunscript", _f("-e"), stdin=True, modelled=True),
    Interpreter("jjs", _f(), stdin=True, modelled=True),
    Interpreter("groovy", _f("-e"), stdin=False, modelled=True),
    Interpreter("jshell", _f(), stdin=True, modelled=True),
    Interpreter("osascript", _f("-e"), stdin=True, modelled=True),
    Interpreter("gdb", _f("-ex", "-eval-command", "--eval-command"), stdin=False, modelled=True),
    Interpreter("awk", _f(), stdin=False, modelled=True, program_operand=True),
    Interpreter("gawk", _f("-e", "--source"), stdin=False, modelled=True, program_operand=True),
    Interpreter("mawk", _f(), stdin=False, modelled=True, program_operand=True),
    Interpreter("nawk", _f(), stdin=False, modelled=True, program_operand=True),
    Interpreter("busybox-awk", _f(), stdin=False, modelled=True, program_operand=True),
    Interpreter("octave", _f("--eval"), stdin=True, modelled=True),
    Interpreter("octave-cli", _f("--eval"), stdin=True, modelled=True),
    Interpreter("gnuplot", _f("-e"), stdin=True, modelled=True),
    Interpreter("racket", _f("-e", "--eval"), stdin=True, modelled=True),
    Interpreter("guile", _f("-c"), stdin=True, modelled=False),
    Interpreter("sbcl", _f("--eval"), stdin=True, modelled=False),
    Interpreter("clisp", _f("-x"), stdin=True, modelled=False),
    Interpreter("erl", _f("-eval"), stdin=False, modelled=False),
    Interpreter("elixir", _f("-e"), stdin=False, modelled=False),
    Interpreter("ghci", _f("-e"), stdin=True, modelled=False),
    Interpreter("runghc", _f(), stdin=True, modelled=False),
    Interpreter("scala", _f("-e"), stdin=False, modelled=False),
    Interpreter("kotlin", _f("-e"), stdin=False, modelled=False),
    Interpreter("swift", _f("-e"), stdin=True, modelled=False),
    Interpreter("crystal", _f("eval"), stdin=True, modelled=False),
    Interpreter("nim", _f(), stdin=False, modelled=False),
)

_INTERPRETER_BY_NAME: Final = MappingProxyType({i.name: i for i in INTERPRETER_ROWS})
INTERPRETERS: Final[frozenset[str]] = frozenset(_INTERPRETER_BY_NAME)
# `python3`, `python3.11`, `perl5.36`, `lua5.4`: a versioned row's name followed by a version.
_VERSIONED: Final = re.compile(
    r"^(" + "|".join(sorted((re.escape(i.name) for i in INTERPRETER_ROWS if i.versioned), key=len,
                            reverse=True)) + r")[0-9][0-9.]*$")


def interpreter(head: str) -> Interpreter | None:
    """The row for interpreter ``head`` (versions included: ``python3.11`` is python), or None."""
    row = _INTERPRETER_BY_NAME.get(head)
    if row is not None:
        return row
    m = _VERSIONED.match(head)
    return _INTERPRETER_BY_NAME[m.group(1)] if m else None


def is_interpreter(head: str) -> bool:
    """True for an interpreter of :data:`INTERPRETER_ROWS` (a shell is not an interpreter)."""
    return interpreter(head) is not None


def runs_code(head: str) -> bool:
    """True for a shell or an interpreter: a program whose input can be a program."""
    return head in SHELLS or interpreter(head) is not None


def inline_opts(head: str) -> frozenset[str]:
    """The options whose value is program text for ``head`` (a shell's or an interpreter's)."""
    row = SHELL_BY_NAME.get(head)
    if row is not None:
        return row.code_opts
    lang = interpreter(head)
    return lang.inline if lang is not None else frozenset()

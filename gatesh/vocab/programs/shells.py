"""Shells: every shell family an agent could reach, and the text on its way into one (S2, S2.1).

:data:`SHELL_ROWS` names each shell with its code options and whether gatesh parses its language
(only the Bourne family: tree-sitter-bash and bashlex read it). :data:`TRANSFORMERS` and
:data:`PASS_THROUGH` say which programs rewrite, or pass unchanged, text piped into a shell.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


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
    program's argument it does not say that program runs a shell. ``shares_simple_commands``: a
    text made only of plain words, quotes and ``; | && ||`` runs the same programs as in sh, so
    gatesh reads such code of a language it does not parse (False for PowerShell, cmd.exe and
    xonsh, whose plain words are cmdlets or Python).
    """

    name: str
    family: Family
    code_opts: frozenset[str]
    note: str
    everyday: bool = False
    value_opts: frozenset[str] = frozenset()  # options that take the next word (`--log-level X`)
    shares_simple_commands: bool = (
        True  # plain commands (`rm -rf x; ls | wc`) mean what they mean in sh
    )

    @property
    def parsed(self) -> bool:
        """Whether gatesh reads this shell's code (its ``-c`` strings, scripts and input)."""
        return self.family is Family.BOURNE


_C = _f("-c")
# PowerShell parameters that take a value (names are case-insensitive; these are their full forms
# and the short forms PowerShell documents).
_PWSH_VALUES = _f(
    "-inputformat",
    "-if",
    "-inf",
    "-outputformat",
    "-of",
    "-executionpolicy",
    "-ep",
    "-ex",
    "-workingdirectory",
    "-wd",
    "-windowstyle",
    "-w",
    "-configurationname",
    "-config",
    "-custompipename",
    "-settingsfile",
    "-settings",
    "-configurationfile",
    "-psconsolefile",
)
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
    Shell(
        "fish",
        Family.FISH,
        _f("-c", "--command", "-C", "--init-command"),
        "friendly interactive shell",
        value_opts=_f(
            "-d", "--debug", "-o", "--debug-output", "--features", "--profile", "--profile-startup"
        ),
    ),
    Shell("rc", Family.RC, _C, "Plan 9 shell", everyday=True),
    Shell("es", Family.RC, _C, "extensible shell, an rc descendant", everyday=True),
    Shell(
        "pwsh",
        Family.POWERSHELL,
        _f("-c", "-command", "-e", "-ec", "-encodedcommand", "-f", "-file"),
        "PowerShell 7 (options are case-insensitive)",
        value_opts=_PWSH_VALUES,
        shares_simple_commands=False,
    ),
    Shell(
        "powershell",
        Family.POWERSHELL,
        _f("-c", "-command", "-e", "-ec", "-encodedcommand", "-f", "-file"),
        "Windows PowerShell (reachable from WSL)",
        value_opts=_PWSH_VALUES,
        shares_simple_commands=False,
    ),
    Shell(
        "cmd",
        Family.CMD,
        _f("/c", "/k", "/r"),
        "Windows cmd.exe (reachable from WSL)",
        everyday=True,
        shares_simple_commands=False,
    ),
    Shell("elvish", Family.OWN, _C, "Elvish"),
    Shell(
        "nu",
        Family.OWN,
        _f("-c", "--commands", "-e", "--execute"),
        "Nushell",
        everyday=True,
        value_opts=_f(
            "--log-level",
            "--log-target",
            "--config",
            "--env-config",
            "--plugin-config",
            "--plugins",
            "--table-mode",
            "-m",
            "--include-path",
            "-I",
            "--error-style",
        ),
    ),
    Shell(
        "xonsh",
        Family.OWN,
        _C,
        "Python-based shell",
        value_opts=_f("--rc", "-D", "--shell-type", "--shell"),
        shares_simple_commands=False,
    ),
    Shell("ysh", Family.OWN, _C, "Oils' new language"),
    Shell("ion", Family.OWN, _C, "Redox OS shell", everyday=True),
    Shell("murex", Family.OWN, _C, "murex", everyday=True),
)

SHELL_BY_NAME: Final = MappingProxyType({s.name: s for s in SHELL_ROWS})
SHELLS: Final[frozenset[str]] = frozenset(SHELL_BY_NAME)
PARSED_SHELLS: Final[frozenset[str]] = frozenset(s.name for s in SHELL_ROWS if s.parsed)
# Shell names that, as another program's argument, say it runs that shell (`rlwrap bash`).
SHELL_ARGUMENT_NAMES: Final[frozenset[str]] = frozenset(
    s.name for s in SHELL_ROWS if not s.everyday
)
# A text of plain commands every shell family reads alike: words of these characters, quoted or not,
# joined by `;`, `|`, `&&`, `||` and newlines (no expansion, glob, redirection, group or history `!`).
PLAIN_COMMANDS: Final = re.compile(r"[A-Za-z0-9_./:=,@%+\-~ \t\n;|&'\"]*")
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


# --- text on its way into a shell ---------------------------------------------------------------

# Programs that rewrite the text passing through them: text they feed a shell has been transformed
# on its way, which is obfuscation when the text was known (S2.1). The value says what they do.
TRANSFORMERS: Final = MappingProxyType(
    {
        "tr": "translates its characters",
        "rev": "reverses its lines",
        "sed": "rewrites it with a sed script",
        "gsed": "rewrites it with a sed script",
        "awk": "rewrites it with an awk program",
        "gawk": "rewrites it with an awk program",
        "mawk": "rewrites it with an awk program",
        "nawk": "rewrites it with an awk program",
        "perl": "rewrites it with perl",
        "ruby": "rewrites it with ruby",
        "xxd": "decodes hex",
        "base64": "decodes base64",
        "base32": "decodes base32",
        "basenc": "decodes it",
        "openssl": "decodes or decrypts it",
        "iconv": "converts its encoding",
        "recode": "converts its encoding",
        "gzip": "decompresses it",
        "gunzip": "decompresses it",
        "zcat": "decompresses it",
        "bzip2": "decompresses it",
        "bzcat": "decompresses it",
        "xz": "decompresses it",
        "xzcat": "decompresses it",
        "unxz": "decompresses it",
        "zstd": "decompresses it",
        "zstdcat": "decompresses it",
        "unzstd": "decompresses it",
        "lz4": "decompresses it",
        "lz4cat": "decompresses it",
        "uudecode": "decodes it",
        "cut": "cuts columns out of it",
        "paste": "joins its lines",
        "fold": "re-wraps it",
        "jq": "extracts strings from JSON",
        "yq": "extracts strings",
        "envsubst": "puts environment values into it",
        "m4": "expands macros in it",
        "cpp": "expands macros in it",
        "python": "rewrites it with python",
        "python3": "rewrites it with python",
        "node": "rewrites it with node",
    }
)
# Programs that pass their input through unchanged (`… | tee log | sh`).
PASS_THROUGH: Final = _f("tee", "cat", "buffer", "pv")

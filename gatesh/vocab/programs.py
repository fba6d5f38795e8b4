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
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from gatesh.vocab.grammar import DOCKER_EXEC_VALUES


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


# --- interpreters ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interpreter:
    """A language whose programs can run commands and change files.

    ``inline``: options whose value is program text (``python -c``; ``deno eval`` is a
    subcommand and listed the same way). ``program_operand``: the first operand is the program
    (awk). ``stdin``: given no program it reads one from standard input (``… | python3``).
    ``modelled``: the builtin rater's code rules know how this language runs commands and deletes
    files, so its inline code is read; other languages' code is opaque (S2.1).
    ``versioned``: ``python3.11`` and ``perl5.36`` are this row. ``value_opts`` and
    ``digit_opts`` let :func:`invocation` read clusters (``perl -lane``, ``python -Bc``).
    """

    name: str
    inline: frozenset[str]
    stdin: bool
    modelled: bool
    versioned: bool = False
    program_operand: bool = False
    value_opts: frozenset[str] = (
        frozenset()
    )  # short options that take a value (`-W ignore`, `-Mstrict`)
    digit_opts: frozenset[str] = (
        frozenset()
    )  # short options with optional attached digits (perl -l40)


INTERPRETER_ROWS: Final[tuple[Interpreter, ...]] = (
    Interpreter(
        "python",
        _f("-c"),
        stdin=True,
        modelled=True,
        versioned=True,
        value_opts=_f("-W", "-X", "-m", "-Q"),
    ),
    Interpreter(
        "pypy",
        _f("-c"),
        stdin=True,
        modelled=True,
        versioned=True,
        value_opts=_f("-W", "-X", "-m", "-Q"),
    ),
    Interpreter(
        "perl",
        _f("-e", "-E"),
        stdin=True,
        modelled=True,
        versioned=True,
        value_opts=_f("-I", "-M", "-m", "-F", "-x", "-C", "-i", "-d", "-D"),
        digit_opts=_f("-l", "-0"),
    ),
    Interpreter(
        "ruby",
        _f("-e"),
        stdin=True,
        modelled=True,
        versioned=True,
        value_opts=_f("-r", "-I", "-C", "-E", "-F", "-K", "-T", "-W", "-x", "-i"),
        digit_opts=_f("-l", "-0"),
    ),
    Interpreter("irb", _f(), stdin=True, modelled=True),
    Interpreter(
        "node",
        _f("-e", "--eval", "-p", "--print"),
        stdin=True,
        modelled=True,
        versioned=True,
        value_opts=_f("-r", "--require", "--import", "--loader", "-C"),
    ),
    Interpreter(
        "nodejs",
        _f("-e", "--eval", "-p", "--print"),
        stdin=True,
        modelled=True,
        value_opts=_f("-r", "--require", "--import", "--loader", "-C"),
    ),
    Interpreter("ts-node", _f("-e", "--eval", "-p", "--print"), stdin=True, modelled=True),
    Interpreter("tsx", _f("-e", "--eval", "-p", "--print"), stdin=True, modelled=True),
    Interpreter("deno", _f("eval"), stdin=False, modelled=True),
    Interpreter("bun", _f("-e", "--eval", "-p", "--print"), stdin=False, modelled=True),
    Interpreter(
        "php",
        _f("-r"),
        stdin=True,
        modelled=True,
        versioned=True,
        value_opts=_f("-d", "-c", "-f", "-z", "-t", "-S"),
    ),
    Interpreter("lua", _f("-e"), stdin=True, modelled=True, versioned=True, value_opts=_f("-l")),
    Interpreter(
        "luajit", _f("-e"), stdin=True, modelled=True, value_opts=_f("-l", "-j", "-O", "-b")
    ),
    Interpreter("tclsh", _f("-c"), stdin=True, modelled=True, versioned=True),
    Interpreter("wish", _f(), stdin=True, modelled=True, versioned=True),
    Interpreter("expect", _f("-c"), stdin=True, modelled=True),
    Interpreter("rscript", _f("-e"), stdin=False, modelled=True),
    Interpreter("r", _f("-e"), stdin=False, modelled=True),
    Interpreter("julia", _f("-e", "--eval", "-E", "--print"), stdin=True, modelled=True),
    Interpreter("jrunscript", _f("-e"), stdin=True, modelled=True),
    Interpreter("jjs", _f(), stdin=True, modelled=True),
    Interpreter("groovy", _f("-e"), stdin=False, modelled=True),
    Interpreter("jshell", _f(), stdin=True, modelled=True),
    Interpreter("osascript", _f("-e"), stdin=True, modelled=True),
    Interpreter("gdb", _f("-ex", "-eval-command", "--eval-command"), stdin=False, modelled=True),
    Interpreter(
        "awk",
        _f(),
        stdin=False,
        modelled=True,
        program_operand=True,
        value_opts=_f("-F", "-v", "-f"),
    ),
    Interpreter(
        "gawk",
        _f("-e", "--source"),
        stdin=False,
        modelled=True,
        program_operand=True,
        value_opts=_f("-F", "-v", "-f", "--file", "-i", "--include", "-l", "--load"),
    ),
    Interpreter(
        "mawk",
        _f(),
        stdin=False,
        modelled=True,
        program_operand=True,
        value_opts=_f("-F", "-v", "-f", "-W"),
    ),
    Interpreter(
        "nawk",
        _f(),
        stdin=False,
        modelled=True,
        program_operand=True,
        value_opts=_f("-F", "-v", "-f"),
    ),
    Interpreter(
        "busybox-awk",
        _f(),
        stdin=False,
        modelled=True,
        program_operand=True,
        value_opts=_f("-F", "-v", "-f"),
    ),
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
    Interpreter("swift", _f("-e"), stdin=False, modelled=False),
    Interpreter("crystal", _f("eval"), stdin=True, modelled=False),
)

_INTERPRETER_BY_NAME: Final = MappingProxyType({i.name: i for i in INTERPRETER_ROWS})
INTERPRETERS: Final[frozenset[str]] = frozenset(_INTERPRETER_BY_NAME)
# `python3`, `python3.11`, `perl5.36`, `lua5.4`: a versioned row's name followed by a version.
_VERSIONED: Final = re.compile(
    r"^("
    + "|".join(
        sorted((re.escape(i.name) for i in INTERPRETER_ROWS if i.versioned), key=len, reverse=True)
    )
    + r")[0-9][0-9.]*$"
)


@functools.lru_cache(maxsize=1024)  # a pure function of the name; every layer asks it per command
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


@dataclass(frozen=True)
class Invocation:
    """What an interpreter's argv gives it to run (:func:`invocation`).

    ``inline``: program texts in argv (``-c X``, ``-neX``, awk's program). ``script``: the
    script operand. ``module``: it runs a module (``python -m``). ``stdin``: it reads its
    program from standard input (no program given, or ``-``). ``unknown``: a dynamic word came
    before the program was found, so nothing can be said.
    """

    inline: tuple[str, ...] = ()
    script: str | None = None
    module: bool = False
    stdin: bool = False
    unknown: bool = False
    module_name: str = ""  # the module ``-m`` runs, when it is given in argv ("" otherwise)


def invocation(
    lang: Interpreter, args: Sequence[str], static: Sequence[bool] | None = None
) -> Invocation:
    """Read ``lang``'s options as it reads them: short clusters (``-lane``, ``-l40pe0``), values
    attached or in the next word, long options with ``=``. ``static`` marks the words known
    before the command runs (all of them when None)."""
    inline: list[str] = []
    k, n = 0, len(args)

    def word(i: int) -> str | None:
        return args[i] if i < n else None

    if n and args[0] in lang.inline and not args[0].startswith("-"):  # `deno eval CODE`
        return Invocation((args[1],) if n > 1 else ())

    while k < n:
        a = args[k]
        if static is not None and not static[k]:
            return Invocation(tuple(inline), unknown=True)
        if a == "--":
            k += 1
            break
        if a == "-" or a in STDIN_NAMES:
            return Invocation(tuple(inline), stdin=not inline)
        if not a.startswith("-"):
            break
        name, eq, val = a.partition("=")
        if name in lang.inline and (a.startswith("--") or len(name) > 2 or eq):
            text = val if eq else word(k + 1)
            if text is not None:
                inline.append(text)
            k += 1 if eq else 2
            continue
        if a.startswith("--") or (len(name) > 2 and name in lang.value_opts):
            k += 1 if eq or a in ("--version", "--help") else (2 if name in lang.value_opts else 1)
            if name in ("-m", "--module"):
                given = val if eq else (word(k - 1) or "")
                return Invocation(tuple(inline), module=True, module_name=given)
            continue
        if a in lang.inline and len(a) > 2:  # a single-dash long name (-eval, -ex, -command)
            if word(k + 1) is not None:
                inline.append(args[k + 1])
            k += 2
            continue
        j, step = 1, 1
        if not (lang.value_opts or lang.digit_opts):
            # A language whose short options are not described here: only `-eCODE` is read as
            # code in a word (`ghci -Xlanguage` is no cluster of -e).
            if a in lang.inline:
                if word(k + 1) is not None:
                    inline.append(args[k + 1])
                k += 2
                continue
            if a[:2] in lang.inline:
                inline.append(a[2:])
            k += 1
            continue
        while j < len(a):
            opt = "-" + a[j]
            rest = a[j + 1 :]
            if opt in lang.inline:
                if rest and all("-" + ch in lang.inline for ch in rest):
                    rest = ""  # `node -pe CODE`: the letters after it are inline options too
                text = rest if rest else word(k + 1)
                if text is not None:
                    inline.append(text)
                step = 1 if rest else 2
                break
            if opt in lang.value_opts:
                if opt == "-m":
                    given = rest if rest else (word(k + 1) or "")
                    return Invocation(tuple(inline), module=True, module_name=given)
                step = 1 if rest else 2
                break
            if opt in lang.digit_opts:
                j += 1
                while j < len(a) and a[j].isdigit():
                    j += 1
                continue
            j += 1
        k += step
    if inline:
        return Invocation(tuple(inline))
    if k < n:
        if lang.program_operand:
            return Invocation((args[k],))
        if static is not None and not static[k]:
            return Invocation(unknown=True)
        return Invocation(script=args[k])
    return Invocation(stdin=lang.stdin)


def inline_opts(head: str) -> frozenset[str]:
    """The options whose value is program text for ``head`` (a shell's or an interpreter's)."""
    row = SHELL_BY_NAME.get(head)
    if row is not None:
        return row.code_opts
    lang = interpreter(head)
    return lang.inline if lang is not None else frozenset()


# --- environment-setup generators ---------------------------------------------------------------


@dataclass(frozen=True)
class Generator:
    """A program whose output a shell is told to run at setup (``eval "$(pyenv init -)"``,
    ``source <(kubectl completion bash)``): what it prints is that program's own shell setup.

    ``args`` is a regular expression over the words after the program, joined by one space
    (``{shell}`` stands for a shell name). Only these exact invocations count: any other
    command's output fed to a shell stays opaque (S2.1).
    """

    id: str
    programs: frozenset[str]
    args: str
    reason: str


_SETUP = (
    "prints {what}: environment variables, PATH entries and shell functions for this shell only"
)
_COMPLETION = (
    "prints a completion script: functions and `complete` registrations for this shell only"
)
GENERATOR_ROWS: Final[tuple[Generator, ...]] = (
    Generator(
        "pyenv-init",
        _f("pyenv"),
        r"init(?: --path| --no-push-path| --no-rehash)*(?: -)?(?: {shell})?",
        _SETUP.format(what="pyenv's shims and its shell function"),
    ),
    Generator(
        "pyenv-virtualenv-init",
        _f("pyenv"),
        r"virtualenv-init -(?: {shell})?",
        _SETUP.format(what="pyenv-virtualenv's activation hook"),
    ),
    Generator(
        "version-manager-init",
        _f(
            "rbenv",
            "nodenv",
            "goenv",
            "jenv",
            "plenv",
            "phpenv",
            "luaenv",
            "scalaenv",
            "exenv",
            "ndenv",
        ),
        r"init(?: --no-rehash)?(?: -)?(?: {shell})?",
        _SETUP.format(what="the version manager's shims"),
    ),
    Generator(
        "direnv-hook",
        _f("direnv"),
        r"(?:hook|export) {shell}",
        _SETUP.format(
            what="direnv's prompt hook, which loads .envrc files direnv was told to allow"
        ),
    ),
    Generator(
        "ssh-agent",
        _f("ssh-agent"),
        r"(?:(?:-[sc]|-t \S+|-a \S+)(?: |$))*",
        "starts an ssh key agent and prints the two variables that point to it",
    ),
    Generator(
        "brew-shellenv", _f("brew"), r"shellenv(?: {shell})?", _SETUP.format(what="Homebrew's PATH")
    ),
    Generator(
        "conda-hook",
        _f("conda"),
        r"shell\.{shell} hook",
        _SETUP.format(what="conda's activate function"),
    ),
    Generator(
        "mamba-hook",
        _f("mamba", "micromamba"),
        r"shell hook(?: (?:-s|--shell)[ =]{shell})?(?: (?:-r|--root-prefix|-p|--prefix)[ =]\S+)?",
        _SETUP.format(what="mamba's activate function"),
    ),
    Generator(
        "fnm-env",
        _f("fnm"),
        r"env(?: --use-on-cd| --shell[ =]{shell}| --version-file-strategy[ =]\S+"
        r"| --corepack-enabled| --resolve-engines)*",
        _SETUP.format(what="fnm's Node.js PATH"),
    ),
    Generator(
        "prompt-init",
        _f("zoxide", "starship", "atuin", "mcfly", "oh-my-posh", "navi"),
        r"(?:init|widget) {shell}(?: --\S+(?: [^-\s]\S*)?)*",
        _SETUP.format(what="the prompt or history tool's hook"),
    ),
    Generator(
        "mise-activate",
        _f("mise", "rtx"),
        r"activate(?: {shell})?(?: --shims| --quiet| -q)*",
        _SETUP.format(what="mise's tool PATH"),
    ),
    Generator(
        "thefuck-alias",
        _f("thefuck"),
        r"--alias(?: \w+)?",
        "prints the shell alias that runs thefuck",
    ),
    Generator(
        "opam-env",
        _f("opam"),
        r"env(?: --switch[ =]\S+| --set-switch| --shell[ =]{shell})*",
        _SETUP.format(what="opam's OCaml switch"),
    ),
    Generator(
        "luarocks-path",
        _f("luarocks"),
        r"path(?: --bin| --lr-path| --lr-cpath)*",
        _SETUP.format(what="Lua's module search paths"),
    ),
    Generator(
        "keychain-eval",
        _f("keychain"),
        r"--eval(?: --quiet| -q| --agents \S+| \S+)*",
        "prints the variables that point to the running ssh or gpg agent",
    ),
    Generator(
        "dircolors",
        _f("dircolors"),
        r"(?:-[bc]|--sh|--csh|--bourne-shell|--c-shell)?",
        "prints the LS_COLORS variable",
    ),
    Generator(
        "lesspipe",
        _f("lesspipe", "lesspipe.sh"),
        r"",
        "prints the LESSOPEN variable for less's filters",
    ),
    Generator(
        "coursier-java",
        _f("cs", "coursier"),
        r"java(?: --jvm \S+)? (?:--env|--disable)",
        _SETUP.format(what="the JAVA_HOME coursier selected"),
    ),
    Generator(
        "poetry-env-activate",
        _f("poetry"),
        r"env activate(?: \S+)?",
        "prints the command that sources the project's virtualenv activate script",
    ),
    Generator(
        "pixi-shell-hook",
        _f("pixi"),
        r"shell-hook(?: (?:-s|--shell)[ =]{shell})?",
        _SETUP.format(what="pixi's environment"),
    ),
    Generator(
        "fzf-shell", _f("fzf"), r"--(?:bash|zsh|fish)", "prints fzf's key bindings and completion"
    ),
    Generator(
        "completion",
        _f(
            "kubectl",
            "helm",
            "gh",
            "glab",
            "docker",
            "minikube",
            "kind",
            "k3d",
            "kustomize",
            "flux",
            "argocd",
            "istioctl",
            "velero",
            "eksctl",
            "doctl",
            "hcloud",
            "linkerd",
            "cilium",
            "tkn",
            "kn",
            "oc",
            "op",
            "supabase",
            "stripe",
            "hugo",
            "gcrane",
            "crane",
            "ko",
            "goreleaser",
            "golangci-lint",
            "rclone",
            "exo",
            "kool",
            "frpc",
            "frps",
            "cobra-cli",
            "talosctl",
            "kubeadm",
            "clusterctl",
            "skaffold",
            "tilt",
            "dagger",
            "atlas",
            "buf",
            "task",
            "devbox",
            "gitleaks",
            "trivy",
            "grype",
            "syft",
            "cosign",
            "nerdctl",
            "limactl",
            "colima",
            "podman",
            "npm",
            "pnpm",
            "ng",
        ),
        r"completions?(?: (?:-s|--shell)[ =]?)?(?: {shell}| script)?(?: --no-descriptions)?",
        _COMPLETION,
    ),
    Generator(
        "completion-subcommand",
        _f(
            "rustup",
            "deno",
            "bun",
            "poetry",
            "pip",
            "pip3",
            "just",
            "uv",
            "ruff",
            "pdm",
            "rye",
            "starship",
            "volta",
            "zellij",
            "procs",
            "bat",
            "rg",
        ),
        r"(?:completions?|generate-shell-completion|--completions|--generate[ =]complete-)[ =]?"
        r"(?:--)?{shell}(?: \S+)?",
        _COMPLETION,
    ),
    Generator(
        "argcomplete",
        _f("register-python-argcomplete", "register-python-argcomplete3"),
        r"(?:--shell[ =]{shell} )?[\w.-]+",
        _COMPLETION,
    ),
)
_SHELL_WORD: Final = (
    r"(?:" + "|".join(sorted((re.escape(s.name) for s in SHELL_ROWS), key=len, reverse=True)) + r")"
)
_GENERATOR_MATCH: Final = tuple(
    (row, re.compile(row.args.replace("{shell}", _SHELL_WORD))) for row in GENERATOR_ROWS
)
# The rows of each program, in table order (built once: most heads have none).
_GENERATORS_OF: Final[dict[str, tuple[tuple[Generator, re.Pattern[str]], ...]]] = {
    head: tuple(m for m in _GENERATOR_MATCH if head in m[0].programs)
    for head in sorted({p for row in GENERATOR_ROWS for p in row.programs})
}


def generator(head: str, args: tuple[str, ...] | list[str]) -> Generator | None:
    """The environment-setup row ``head ARGS…`` (static words) is, or None."""
    rows = _GENERATORS_OF.get(head)
    if not rows:
        return None
    joined = " ".join(args)
    for row, pattern in rows:
        if pattern.fullmatch(joined):
            return row
    return None


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


# --- command-valued positions -----------------------------------------------------------------


class Payload(enum.StrEnum):
    """How a position's value is a command."""

    SHELL = "shell"  # a command line a shell runs (`sh -c VALUE`); several words are joined
    ARGV = "argv"  # the words are a command's argv
    EX = "ex"  # an ex command of vi/vim: its `!CMD`, `r !CMD`, `system('CMD')` parts run CMD
    KEYS = "keys"  # keystrokes typed into a terminal: each line they end with Enter is run
    GIT_CONFIG = "git-config"  # KEY=VALUE (or KEY VALUE): the key's row says how VALUE runs


class Where(enum.StrEnum):
    """Where a payload runs, which decides how it is judged (by its own effect there)."""

    HERE = "here"
    CONTAINER = "container"
    REMOTE = "remote"


@dataclass(frozen=True)
class Position:
    """A place in a program's argv whose value is a command the program runs (S2.1).

    ``subcommand``: operands that come first (``("submodule", "foreach")``). The payload is the
    value of one of ``options`` (``-x CMD``, ``--exec=CMD``), or the operand at index
    ``operand`` after the subcommand, or (``rest``) every word after the subcommand's options —
    after ``--`` when ``after_dashdash``, else after ``skip`` operands (a container's name).
    ``with_arg``: the program's options that take a value, so operands are found.
    """

    id: str
    programs: frozenset[str]
    payload: Payload
    where: Where
    reason: str
    subcommand: tuple[str, ...] = ()
    options: frozenset[str] = frozenset()
    operand: int | None = None
    rest: bool = False
    after_dashdash: bool = False
    skip: int = 0
    with_arg: frozenset[str] = frozenset()
    min_operands: int = 0


# The options of `docker exec` are the grammar's (one table per tool); crictl, which has no grammar
# row of its own, is read with them.
_DOCKER_EXEC_ARGS = DOCKER_EXEC_VALUES
# tmux's verbs that start a pane running a shell command (their last operands), with aliases;
# and every option of tmux and of those verbs that takes a value (so the command is found).
_TMUX_COMMAND_VERBS: Final = {
    "new-session": ("new",),
    "new-window": ("neww",),
    "split-window": ("splitw",),
    "respawn-pane": ("respawnp",),
    "respawn-window": ("respawnw",),
    "run-shell": ("run",),
}
_TMUX_WITH_ARG: Final = _f(
    "-c", "-e", "-f", "-F", "-L", "-l", "-n", "-N", "-p", "-s", "-S", "-t", "-T", "-x", "-y"
)
# send-keys: its own valued options and tmux's (its -l is a flag: the keys are literal text).
_TMUX_SEND_WITH_ARG: Final = _f("-c", "-f", "-L", "-N", "-S", "-t", "-T")
POSITION_ROWS: Final[tuple[Position, ...]] = (
    Position(
        "zsh-sched",
        _f("sched"),
        Payload.SHELL,
        Where.HERE,
        "zsh's sched runs its command later, before a prompt",
        rest=True,
        skip=1,
    ),
    Position(
        "complete-command",
        _f("complete", "compgen"),
        Payload.SHELL,
        Where.HERE,
        "complete -C runs its command to list completions when a person presses Tab",
        options=_f("-C"),
    ),
    Position(
        "trap",
        _f("trap"),
        Payload.SHELL,
        Where.HERE,
        "trap runs its string when a signal arrives or the shell exits",
        operand=0,
        min_operands=2,
    ),
    Position(
        "git-submodule-foreach",
        _f("git"),
        Payload.SHELL,
        Where.HERE,
        "git submodule foreach runs its command in every submodule",
        subcommand=("submodule", "foreach"),
        rest=True,
    ),
    Position(
        "git-bisect-run",
        _f("git"),
        Payload.ARGV,
        Where.HERE,
        "git bisect run runs its command on every commit it tests",
        subcommand=("bisect", "run"),
        rest=True,
    ),
    Position(
        "git-rebase-exec",
        _f("git"),
        Payload.SHELL,
        Where.HERE,
        "git rebase --exec runs its command after every commit it replays",
        subcommand=("rebase",),
        options=_f("-x", "--exec"),
    ),
    Position(
        "git-difftool-extcmd",
        _f("git"),
        Payload.SHELL,
        Where.HERE,
        "git difftool --extcmd runs its command on every changed file",
        subcommand=("difftool",),
        options=_f("-x", "--extcmd"),
    ),
    Position(
        "git-config-command",
        _f("git"),
        Payload.GIT_CONFIG,
        Where.HERE,
        "git -c KEY=VALUE sets, for this command, a setting whose value git runs",
        options=_f("-c"),
    ),
    Position(
        "git-config-set",
        _f("git"),
        Payload.GIT_CONFIG,
        Where.HERE,
        "git config KEY VALUE stores a setting whose value later git commands run",
        subcommand=("config",),
        rest=True,
    ),
    Position(
        "npm-pkg-set-script",
        _f("npm", "pnpm"),
        Payload.SHELL,
        Where.HERE,
        "npm pkg set scripts.NAME=… stores a script that npm run NAME runs with sh",
        subcommand=("pkg", "set"),
        rest=True,
    ),
    Position(
        "npm-set-script",
        _f("npm"),
        Payload.SHELL,
        Where.HERE,
        "npm set-script NAME … stores a script that npm run NAME runs with sh",
        subcommand=("set-script",),
        operand=1,
    ),
    Position(
        "kubectl-exec",
        _f("kubectl", "oc"),
        Payload.ARGV,
        Where.CONTAINER,
        "kubectl exec runs its command in a pod's container",
        subcommand=("exec",),
        rest=True,
        after_dashdash=True,
    ),
    Position(
        "docker-exec",
        _f("docker", "podman", "nerdctl", "crictl"),
        Payload.ARGV,
        Where.CONTAINER,
        "docker exec runs its command in a running container",
        subcommand=("exec",),
        rest=True,
        skip=1,
        with_arg=_DOCKER_EXEC_ARGS,  # for crictl; docker, podman and nerdctl read their grammar
    ),
    Position(
        "docker-compose-exec",
        _f("docker", "podman"),
        Payload.ARGV,
        Where.CONTAINER,
        "docker compose exec runs its command in a service's container",
        subcommand=("compose", "exec"),
        rest=True,
        skip=1,
    ),
    Position(
        "compose-exec",
        _f("docker-compose", "podman-compose"),
        Payload.ARGV,
        Where.CONTAINER,
        "docker-compose exec runs its command in a service's container",
        subcommand=("exec",),
        rest=True,
        skip=1,
    ),
    Position(
        "docker-run",
        _f("docker", "podman", "nerdctl"),
        Payload.ARGV,
        Where.CONTAINER,
        "docker run runs its command in a new container",
        subcommand=("run",),
        rest=True,
        skip=1,
    ),
    Position(
        "lxc-exec",
        _f("lxc", "incus", "multipass"),
        Payload.ARGV,
        Where.CONTAINER,
        "lxc exec runs its command in a container or virtual machine",
        subcommand=("exec",),
        rest=True,
        after_dashdash=True,
    ),
    Position(
        "ansible-args",
        _f("ansible"),
        Payload.SHELL,
        Where.REMOTE,
        "ansible -a runs its arguments as a command on every host of the pattern",
        options=_f("-a", "--args"),
    ),
    Position(
        "vagrant-ssh-command",
        _f("vagrant"),
        Payload.SHELL,
        Where.REMOTE,
        "vagrant ssh -c runs its command in the virtual machine",
        subcommand=("ssh",),
        options=_f("-c", "--command"),
    ),
    Position(
        "gcloud-ssh-command",
        _f("gcloud"),
        Payload.SHELL,
        Where.REMOTE,
        "gcloud compute ssh --command runs its command on the instance",
        subcommand=("compute", "ssh"),
        options=_f("--command"),
    ),
    Position(
        "rsync-path",
        _f("rsync"),
        Payload.SHELL,
        Where.REMOTE,
        "rsync --rsync-path runs its command on the remote host",
        options=_f("--rsync-path"),
    ),
    Position(
        "rsync-rsh",
        _f("rsync"),
        Payload.SHELL,
        Where.HERE,
        "rsync -e runs its remote-shell command on this machine",
        options=_f("-e", "--rsh"),
    ),
    Position(
        "man-pager",
        _f("man"),
        Payload.SHELL,
        Where.HERE,
        "man -P runs its pager command to show the page",
        options=_f("-P", "--pager", "-H", "--html"),
    ),
    Position(
        "vi-command",
        _f("vi", "vim", "nvim", "view", "rvim", "ex", "gvim", "vimdiff"),
        Payload.EX,
        Where.HERE,
        "vi -c runs its ex command at start-up; `!CMD` in it runs CMD",
        options=_f("-c", "--cmd", "+"),
    ),
    Position(
        "tar-to-command",
        _f("tar", "gtar", "bsdtar"),
        Payload.SHELL,
        Where.HERE,
        "tar --to-command runs its command for every member",
        options=_f("--to-command", "--info-script", "--new-volume-script", "-F"),
    ),
    Position(
        "tar-compress-program",
        _f("tar", "gtar", "bsdtar"),
        Payload.SHELL,
        Where.HERE,
        "tar -I runs its program to compress or decompress",
        options=_f("-I", "--use-compress-program"),
    ),
    Position(
        "zip-test-command",
        _f("zip"),
        Payload.SHELL,
        Where.HERE,
        "zip -TT runs its command to test the archive",
        options=_f("-TT", "--unzip-command"),
    ),
    Position(
        "sort-compress-program",
        _f("sort"),
        Payload.SHELL,
        Where.HERE,
        "sort --compress-program runs its program on temporary files",
        options=_f("--compress-program"),
    ),
    Position(
        "ssh-proxy-command",
        _f("ssh", "scp", "sftp"),
        Payload.SHELL,
        Where.HERE,
        "ssh -o ProxyCommand=… and LocalCommand=… run their command on this machine",
        options=_f("-o"),
    ),
    Position(
        "entr-shell",
        _f("entr"),
        Payload.ARGV,
        Where.HERE,
        "entr runs its command whenever a watched file changes",
        rest=True,
    ),
    Position(
        "watchexec",
        _f("watchexec"),
        Payload.SHELL,
        Where.HERE,
        "watchexec runs its command whenever a watched file changes",
        rest=True,
        with_arg=_f(
            "-w",
            "--watch",
            "-e",
            "--exts",
            "-f",
            "--filter",
            "-i",
            "--ignore",
            "-s",
            "--signal",
            "-d",
            "--debounce",
            "--shell",
            "-E",
            "--env",
            "--delay-run",
            "--project-origin",
        ),
    ),
    *(
        Position(
            f"tmux-{alias}",
            _f("tmux"),
            Payload.SHELL,
            Where.HERE,
            f"tmux {verb} runs its shell command in a new pane",
            subcommand=(alias,),
            rest=True,
            with_arg=_TMUX_WITH_ARG,
        )
        for verb, aliases in _TMUX_COMMAND_VERBS.items()
        for alias in (verb, *aliases)
    ),
    *(
        Position(
            f"tmux-{alias}",
            _f("tmux"),
            Payload.KEYS,
            Where.HERE,
            "tmux send-keys types into a pane's shell; each line it ends runs there",
            subcommand=(alias,),
            rest=True,
            with_arg=_TMUX_SEND_WITH_ARG,
        )
        for alias in ("send-keys", "send")
    ),
    Position(
        "nodemon-exec",
        _f("nodemon"),
        Payload.SHELL,
        Where.HERE,
        "nodemon --exec runs its command whenever a watched file changes",
        options=_f("-x", "--exec"),
    ),
)
_POSITIONS_BY_PROGRAM: Final = MappingProxyType(
    {
        name: tuple(row for row in POSITION_ROWS if name in row.programs)
        for name in sorted({n for row in POSITION_ROWS for n in row.programs})
    }
)
POSITION_PROGRAMS: Final[frozenset[str]] = frozenset(_POSITIONS_BY_PROGRAM)


# --- programs that run commands typed at them ----------------------------------------------------


@dataclass(frozen=True)
class Interactive:
    """A program that, at a terminal, reads commands of its own that can start programs: a shell
    escape (vim's ``:!``, ed's ``!``, a debugger's ``shell``, a mail reader's ``~!``). What it
    will run is typed later, so it is opaque code (S2.1) unless turned off.

    ``contained``: options that turn its escapes off (vim's restricted ``-Z``). ``quiet``:
    options with which it opens no session (``--version``, a batch mode, a command given on the
    command line). ``only``: the row applies only with one of these options (``perl -d``, its
    debugger; ``python -i``); a prefix match, so ``-de0`` is ``-d``. ``fed``: reading its input
    from a pipe, a file or a here-document opens no session at the terminal. ``operands``: with at
    least this many operands it runs them and opens no session (``sqlite3 DB SQL``).

    Less, more, man and git's pager are not rows: a gated session runs them with their escapes off
    or through its gated shell (``LESSSECURE``, ``SHELL``, a restricted editor; S10).
    """

    id: str
    programs: frozenset[str]
    reason: str
    contained: frozenset[str] = frozenset()
    quiet: frozenset[str] = frozenset()
    only: tuple[str, ...] = ()
    fed: bool = False
    operands: int = 0


_VERSION_HELP: Final = _f("--version", "-V", "--help", "-h", "-?")
INTERACTIVE_ROWS: Final[tuple[Interactive, ...]] = (
    Interactive(
        "vim",
        _f(
            "vim",
            "vi",
            "ex",
            "view",
            "vimdiff",
            "gvim",
            "gview",
            "nvim",
            "vimx",
            "evim",
            "vim.basic",
            "vim.tiny",
        ),
        "vim runs shell commands typed at it (`:!`, `:terminal`, its Python and Lua interfaces)",
        contained=_f("-Z"),
        quiet=_f("--version", "-h", "--help"),
    ),
    Interactive("ed", _f("ed"), "ed runs a shell command for `!`", quiet=_VERSION_HELP),
    Interactive(
        "emacs",
        _f("emacs", "emacs-nox", "emacs-gtk"),
        "emacs runs shell commands typed at it (M-!, M-x shell)",
        quiet=_VERSION_HELP | _f("--batch", "-batch"),
    ),
    Interactive(
        "nano",
        _f("nano", "pico"),
        "nano runs a command typed at it (Execute Command)",
        contained=_f("-R", "--restricted"),
        quiet=_VERSION_HELP,
    ),
    Interactive(
        "perl-debugger",
        _f("perl"),
        "perl's debugger runs the Perl (and the shell commands) typed at it",
        only=("-d",),
    ),
    Interactive(
        "python-interactive",
        _f("python", "python3", "python2", "pypy", "pypy3"),
        "python -i goes on to run the Python typed at it",
        only=("-i",),
    ),
    Interactive(
        "debugger",
        _f("gdb", "lldb", "cgdb", "pdb", "pdb3", "jdb"),
        "a debugger runs commands typed at it, a shell among them",
        quiet=_VERSION_HELP | _f("--batch", "-batch", "--configuration"),
    ),
    Interactive(
        "mail",
        _f("mail", "mailx", "bsd-mailx", "s-nail", "nail", "mutt", "neomutt"),
        "a mail reader runs shell commands typed at it (`!`, `~!`)",
        quiet=_VERSION_HELP,
        fed=True,
    ),
    Interactive(
        "ftp",
        _f("ftp", "tnftp", "pftp", "lftp", "sftp", "netkit-ftp", "ncftp"),
        "an ftp client runs a shell command for `!`",
        quiet=_VERSION_HELP | _f("-b", "-c", "-e"),
        fed=True,
    ),
    Interactive(
        "database-shell",
        _f("psql", "mysql", "mariadb", "sqlite3"),
        "a database shell runs shell commands typed at it (`\\!`, `.shell`, `system`)",
        quiet=_VERSION_HELP
        | _f("-c", "--command", "-e", "--execute", "-f", "--file", "-l", "--list", "-cmd"),
        fed=True,
        operands=2,
    ),
)
_INTERACTIVE_BY_PROGRAM: Final = MappingProxyType(
    {p: row for row in INTERACTIVE_ROWS for p in row.programs}
)
INTERACTIVE_PROGRAMS: Final[frozenset[str]] = frozenset(_INTERACTIVE_BY_PROGRAM)


def interactive(head: str) -> Interactive | None:
    """The row of a program that runs commands typed at it, or None."""
    return _INTERACTIVE_BY_PROGRAM.get(head)


def positions(head: str) -> tuple[Position, ...]:
    """The command-valued positions of program ``head``."""
    return _POSITIONS_BY_PROGRAM.get(head, ())


@dataclass(frozen=True)
class GitKey:
    """A git setting whose value git runs. ``key`` is a regular expression over the case-folded
    key; ``git_subcommand``: a value not starting with ``!`` is a git subcommand (aliases),
    ``program_prefix``: a bare value names ``git-credential-VALUE``-style helpers."""

    key: str
    reason: str
    git_subcommand: bool = False
    program_prefix: str = ""
    ignore: frozenset[str] = frozenset()  # values that run nothing (`core.fsmonitor=true`)


GIT_KEY_ROWS: Final[tuple[GitKey, ...]] = (
    GitKey(
        r"alias\.[^.]+",
        "a git alias runs a git subcommand, or a shell command after `!`",
        git_subcommand=True,
    ),
    GitKey(
        r"core\.(?:sshcommand|pager|editor|askpass|gitproxy)", "git runs this setting as a command"
    ),
    GitKey(
        r"core\.fsmonitor",
        "git runs this hook command on every status",
        ignore=_f("true", "false", "0", "1"),
    ),
    GitKey(
        r"sequence\.editor|diff\.external|interactive\.difffilter|web\.browser",
        "git runs this setting as a command",
    ),
    GitKey(
        r"(?:diff|merge|filter|difftool|mergetool|browser|gpg)\.[^.]+\.(?:command|textconv|driver|clean|smudge|"
        r"process|cmd|path|program)",
        "git runs this setting as a command for the named tool",
    ),
    GitKey(
        r"pager\.[^.]+",
        "git runs this pager for the named subcommand",
        ignore=_f("true", "false", "0", "1"),
    ),
    GitKey(r"gpg\.program|uploadpack\.packobjectshook", "git runs this program"),
    GitKey(
        r"credential(?:\.[^.]+)*\.helper",
        "git runs this credential helper",
        program_prefix="git credential-",
    ),
)
_GIT_KEYS: Final = tuple((row, re.compile(row.key)) for row in GIT_KEY_ROWS)


def git_key(key: str) -> GitKey | None:
    """The row for git setting ``key`` when git runs its value, else None."""
    folded = key.casefold()
    for row, pattern in _GIT_KEYS:
        if pattern.fullmatch(folded):
            return row
    return None


# --- variables that name a program or code -----------------------------------------------------


class EnvKind(enum.StrEnum):
    """What a variable's value is to the programs that read it."""

    COMMAND = "command"  # a command line (or a program with arguments) a program runs
    SOURCED = "sourced"  # a shell script a shell sources before it runs
    LOADS = "loads"  # options that can load code (`NODE_OPTIONS=--require x`): opaque when they do
    LIBRARY = "library"  # a library every program loads: opaque
    STARTUP = "startup"  # a file an interpreter runs first (PYTHONSTARTUP)
    PROMPT = (
        "prompt"  # a prompt string: the shell expands it, substitutions included, at each prompt
    )


@dataclass(frozen=True)
class EnvVar:
    """A variable that names a program or code. ``loads``: for LOADS rows, a regular expression
    matching the options that make the value load code."""

    name: str
    kind: EnvKind
    reason: str
    loads: str = ""


_RUNS = "a program runs this variable's value as a command"
ENV_ROWS: Final[tuple[EnvVar, ...]] = (
    *(
        EnvVar(n, EnvKind.COMMAND, _RUNS)
        for n in (
            "GIT_SSH",
            "GIT_PAGER",
            "PAGER",
            "MANPAGER",
            "SYSTEMD_PAGER",
            "GIT_EDITOR",
            "EDITOR",
            "VISUAL",
            "GIT_SEQUENCE_EDITOR",
            "GIT_EXTERNAL_DIFF",
            "GIT_ASKPASS",
            "SSH_ASKPASS",
            "SUDO_ASKPASS",
            "LESSOPEN",
            "LESSCLOSE",
            "BROWSER",
            "RSYNC_RSH",
            "CVS_RSH",
            "FCEDIT",
            "npm_config_script_shell",
            "NPM_CONFIG_SCRIPT_SHELL",
            "TERMINAL",
            "DIFFTOOL",
            "SVN_EDITOR",
            "HGEDITOR",
            "KUBE_EDITOR",
            "CVSEDITOR",
            "SYSTEMD_EDITOR",
        )
    ),
    EnvVar("PROMPT_COMMAND", EnvKind.COMMAND, "bash runs PROMPT_COMMAND before every prompt"),
    *(
        EnvVar(n, EnvKind.PROMPT, "the shell expands this prompt string, substitutions included")
        for n in (
            "PS0",
            "PS1",
            "PS2",
            "PS3",
            "PS4",
            "PROMPT",
            "PROMPT2",
            "PROMPT3",
            "PROMPT4",
            "RPROMPT",
            "RPS1",
            "RPROMPT2",
            "RPS2",
            "SPROMPT",
        )
    ),
    EnvVar("BASH_ENV", EnvKind.SOURCED, "bash sources this file before running a script"),
    EnvVar("ENV", EnvKind.SOURCED, "sh sources this file when it starts interactively"),
    EnvVar(
        "NODE_OPTIONS",
        EnvKind.LOADS,
        "node loads the modules these options name",
        loads=r"(?:^|\s)(?:-r|--require|--import|--loader|--experimental-loader)(?:[=\s]|$)",
    ),
    EnvVar(
        "PERL5OPT",
        EnvKind.LOADS,
        "perl loads the modules these options name",
        loads=r"(?:^|\s)-[MmdI]",
    ),
    EnvVar(
        "RUBYOPT", EnvKind.LOADS, "ruby loads the libraries these options name", loads=r"(?:^|\s)-r"
    ),
    *(
        EnvVar(
            n,
            EnvKind.LOADS,
            "java loads the agents these options name",
            loads=r"-(?:javaagent|agentpath|agentlib):",
        )
        for n in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS")
    ),
    *(
        EnvVar(n, EnvKind.LIBRARY, "every program started loads this library first")
        for n in ("LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES")
    ),
    EnvVar("PYTHONSTARTUP", EnvKind.STARTUP, "interactive python runs this file first"),
)
_ENV_BY_NAME: Final = MappingProxyType({v.name: v for v in ENV_ROWS})
_COMMAND_SUFFIX: Final = EnvVar(
    "*_COMMAND",
    EnvKind.COMMAND,
    "a variable named *_COMMAND holds a command a "
    "program runs (GIT_SSH_COMMAND, FZF_DEFAULT_COMMAND)",
)


def env_var(name: str) -> EnvVar | None:
    """The row for variable ``name`` (``*_COMMAND`` names included), or None."""
    row = _ENV_BY_NAME.get(name)
    if row is None and name.endswith("_COMMAND") and name != "_COMMAND":
        return _COMMAND_SUFFIX
    return row


# File suffixes of scripts gatesh reads when they run (S2: a shell script is read and gated; the
# code of these languages is read by the builtin's code rules): writing one is writing a file,
# and what it does is judged when it runs. A suffix-less file is such a script when its first
# line is a shebang naming one of these languages.
SCRIPT_SUFFIXES: Final[frozenset[str]] = frozenset(
    {".sh", ".bash", ".zsh", ".ksh", ".dash", ".py", ".js", ".mjs", ".cjs"}
)
_SHEBANG_LANGUAGE: Final = re.compile(
    r"^#!\s*(?:/usr)?(?:/local)?/s?bin/(?:env\s+(?:-S\s+)?)?"
    r"(?:(?:ba|da|z|k)?sh|python[0-9.]*|node|nodejs)(?:\s|$)"
)


def is_read_script(path: str, text: str) -> bool:
    """Whether a file written at ``path`` with ``text`` is a script gatesh reads when it runs."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    if dot > 0:
        return name[dot:].lower() in SCRIPT_SUFFIXES
    return bool(_SHEBANG_LANGUAGE.match(text.lstrip("\n")))


# Commands that change the shell's working directory, and wrappers that may run their command in
# another one (``env -C``, ``sudo -D``, ``chroot``): after them, where a relative name lies is only
# known for certain when the change is a plain top-level ``cd DIR``.
CD_HEADS: Final[frozenset[str]] = frozenset({"cd", "pushd", "popd", "chdir"})
CHDIR_WRAPPERS: Final[frozenset[str]] = frozenset(
    {"env", "sudo", "doas", "chroot", "nsenter", "unshare", "su", "runuser", "flock", "strace"}
)

# Programs that create no file but those their words or redirections name (which the reader's path
# effects record): after only these, a file that is not there when a command is decided is not
# made by the text before it runs (a download, an extraction, a build or a script could).
NAMED_FILES_ONLY: Final[frozenset[str]] = frozenset(
    {
        "cd",
        "pushd",
        "popd",
        "ls",
        "echo",
        "printf",
        "cat",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "head",
        "tail",
        "wc",
        "pwd",
        "true",
        "false",
        "test",
        "[",
        "[[",
        "which",
        "type",
        "command",
        "export",
        "set",
        "unset",
        "mkdir",
        "rm",
        "rmdir",
        "chmod",
        "chown",
        "touch",
        "cp",
        "mv",
        "ln",
        "sed",
        "sort",
        "uniq",
        "cut",
        "tr",
        "diff",
        "sleep",
        "date",
        "clear",
    }
)


@dataclass(frozen=True)
class VenvMaker:
    """A command that makes a virtual environment in a folder it names.

    ``argv`` is the words that select it (``python -m venv``: the interpreter then ``-m venv``);
    ``value_opts`` take the next word (``--prompt NAME``); ``default`` is the folder made when no
    operand names one (``uv venv`` makes ``.venv``), "" when an operand is required.
    """

    program: str
    argv: tuple[str, ...]
    value_opts: frozenset[str]
    default: str = ""


VENV_MAKERS: Final[tuple[VenvMaker, ...]] = (
    VenvMaker("python", ("-m", "venv"), frozenset({"--prompt"})),
    VenvMaker("python", ("-m", "virtualenv"), frozenset({"-p", "--python", "--prompt"})),
    VenvMaker("virtualenv", (), frozenset({"-p", "--python", "--prompt"})),
    VenvMaker("uv", ("venv",), frozenset({"-p", "--python", "--prompt"}), default=".venv"),
)


def venv_made(head: str, args: tuple[str, ...]) -> str | None:
    """The folder a command makes a virtual environment in (as written), or None.

    Such a folder's ``bin/activate`` is the tool's own script (it sets ``VIRTUAL_ENV`` and
    ``PATH``), so sourcing it right after the command that made it runs nothing unread.
    """
    row_name = "python" if (i := interpreter(head)) is not None and i.name == "python" else head
    for row in VENV_MAKERS:
        n = len(row.argv)
        if row.program != row_name or tuple(args[:n]) != row.argv:
            continue
        operands: list[str] = []
        rest = iter(args[n:])
        for word in rest:
            if word in row.value_opts:
                next(rest, None)
            elif not word.startswith("-"):
                operands.append(word)
        if len(operands) == 1:
            return operands[0]
        if not operands and row.default:
            return row.default
        return None
    return None

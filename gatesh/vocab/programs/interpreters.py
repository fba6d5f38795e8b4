"""Interpreters: languages whose programs run commands and change files (S2, S2.1).

:data:`INTERPRETER_ROWS` gives each language's inline-code options, whether it reads a program
from standard input, and whether the builtin rater models how its code runs commands and deletes
files; :func:`invocation` reads an interpreter's argv as the interpreter does. Also here: the
scripts gatesh reads when they run (:func:`is_read_script`) and the commands that make a virtual
environment (:data:`VENV_MAKERS`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from gatesh.vocab.programs.shells import SHELL_BY_NAME, SHELLS, STDIN_NAMES


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


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


@dataclass(frozen=True)
class _Cluster:
    """What one short-option cluster (``-lane``, ``-l40pe0``, ``-Bc``) gives an interpreter:
    ``words`` it takes (2 when its value is the next word), the program text ``inline`` it names,
    or the ``module`` an ``-m`` in it runs (None: neither)."""

    words: int = 1
    inline: str | None = None
    module: str | None = None


def _cluster(lang: Interpreter, word: str, following: str | None) -> _Cluster:
    """Read the short-option cluster ``word`` as ``lang`` reads it, letter by letter: an inline
    option or a value option ends it (its value is the rest of the word, else ``following``);
    a digit option swallows the digits attached to it."""
    j = 1
    while j < len(word):
        opt = "-" + word[j]
        rest = word[j + 1 :]
        if opt in lang.inline:
            if rest and all("-" + ch in lang.inline for ch in rest):
                rest = ""  # `node -pe CODE`: the letters after it are inline options too
            return _Cluster(1 if rest else 2, inline=rest if rest else following)
        if opt in lang.value_opts:
            if opt == "-m":
                return _Cluster(module=rest if rest else (following or ""))
            return _Cluster(1 if rest else 2)
        if opt in lang.digit_opts:
            j += 1
            while j < len(word) and word[j].isdigit():
                j += 1
            continue
        j += 1
    return _Cluster()


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
        cluster = _cluster(lang, a, word(k + 1))
        if cluster.module is not None:
            return Invocation(tuple(inline), module=True, module_name=cluster.module)
        if cluster.inline is not None:
            inline.append(cluster.inline)
        k += cluster.words
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

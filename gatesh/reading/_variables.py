"""The shell variables a command line sets or removes (S2.1), by any spelling.

``NAME=value`` statements and prefixes, ``export``/``declare``/``typeset``/``local``/``readonly``
(``-x`` exports, ``-n`` makes a name reference), ``setenv``, ``unset``, ``read``, ``mapfile``,
``printf -v``, ``getopts``. A name only known when the command runs is recorded with the name ""
(``export $x=…`` with ``x`` unknown); the reader has already put in the names it knows
(``x=GATESH_OPERATOR; export $x=…``, ``set -- NAME; export $1=…``). ``export $(cat FILE)`` and
``export $(< FILE)`` take their names from FILE when it can be read now (bounded); otherwise the
names are unknown.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from collections.abc import Sequence
from typing import Final

from gatesh._types import SetBy, SimpleCommand, Variable, Word

__all__ = ["file_names", "names_file", "variables"]

_DECLARERS: Final = frozenset(
    {"export", "declare", "typeset", "readonly", "local", "integer", "float"}
)
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The name of a word that names nothing (dropped before the facts are made).
_NONE: Final = "\0"
_NAME_OR_ELEMENT: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?")
# `NAME=value`, `NAME+=value`, `NAME[KEY]=value` as written (a key may hold anything).
_ASSIGNMENT: Final = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[.*?\])?\+?=(.*)$", re.DOTALL)
# `$(cat FILE)`, `$(< FILE)`, `` `cat FILE` ``: a file's words, readable now.
_FILE_WORDS: Final = re.compile(
    r"^\$\(\s*(?:cat\s+|<\s*)([^\s()|;&<>$`]+)\s*\)$|^`\s*cat\s+([^\s`$]+)\s*`$"
)
# How much of a file `export $(cat FILE)` reads (an env file is small; a large one is unknown).
_FILE_BYTES: Final = 65536
# Options of `read`, `mapfile`/`readarray` that take a value (the rest are flags or names).
_READ_VALUES: Final = frozenset({"-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"})
_MAPFILE_VALUES: Final = frozenset({"-d", "-n", "-O", "-s", "-u", "-C", "-c"})


def variables(
    commands: Sequence[SimpleCommand],
    statements: Sequence[str],
    cwd: str | None,
    written: frozenset[str] | None = frozenset(),
) -> tuple[Variable, ...]:
    """Every variable ``commands`` and the bare ``NAME=value`` ``statements`` set or remove.
    ``written`` is what the line writes (None: a path only known when it runs too): a file it
    writes gives ``export $(cat FILE)`` no names now, since what it will hold is not read yet."""
    out = [_assigned(a, SetBy.ASSIGN, -1) for a in statements]
    for i, cmd in enumerate(commands):
        out += [_assigned(a, SetBy.PREFIX, i) for a in cmd.assignments]
        head = cmd.head
        if head in _DECLARERS:
            out += _declared(cmd, i, cwd, written)
        elif head == "setenv":
            args = [w for w in cmd.argv[1:]]
            if args:
                value = args[1] if len(args) > 1 else Word("", True)
                out.append(
                    _named(
                        args[0], value.text if value.static else None, SetBy.EXPORT, i, value.text
                    )
                )
        elif head in ("unset", "unsetenv"):
            opts = [w.text for w in cmd.argv[1:] if w.static and w.text.startswith("-")]
            if head == "unset" and any("f" in o for o in opts):
                continue  # functions, not variables
            out += [
                _named(w, None, SetBy.UNSET, i, "")
                for w in cmd.argv[1:]
                if not (w.static and w.text.startswith("-"))
            ]
        elif head == "read":
            out += _read_names(cmd, i, _READ_VALUES, "REPLY", arrays=("-a",))
        elif head in ("mapfile", "readarray"):
            out += _read_names(cmd, i, _MAPFILE_VALUES, "MAPFILE")
        elif head in ("printf", "print"):
            args = list(cmd.argv[1:])
            for k, w in enumerate(args[:-1]):
                if w.static and w.text == "-v":
                    out.append(_named(args[k + 1], None, SetBy.READ, i, ""))
                elif w.static and w.text.startswith("-v") and len(w.text) > 2:
                    out.append(_named(Word(w.text[2:], True), None, SetBy.READ, i, ""))
        elif head == "getopts" and len(cmd.argv) >= 3:
            out.append(_named(cmd.argv[2], None, SetBy.READ, i, ""))
    return tuple(v for v in out if v.name != _NONE)


def _assigned(text: str, by: SetBy, index: int) -> Variable:
    m = _ASSIGNMENT.match(text)
    if m is None:
        return Variable(_NONE, None, by, index)  # no assignment bash would make
    value = m.group(2)
    static = "$" not in value and "`" not in value
    return Variable(m.group(1), _unquoted(value) if static else None, by, index, value)


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _named(word: Word, value: str | None, by: SetBy, index: int, text: str) -> Variable:
    """A variable named by ``word`` (its name "" when the word is only known when it runs)."""
    if not word.static:
        if word.text.startswith(("<(", ">(")):
            return Variable(_NONE, None, by, index)  # a process substitution is no name
        m = _NAME_OR_ELEMENT.match(word.text)
        if m is not None and word.text[m.end(1) : m.end(1) + 1] == "[":
            return Variable(m.group(1), value, by, index, text)  # `foo[$i]`: foo
        return Variable("", value, by, index, word.text)  # the name as written
    m = _NAME_OR_ELEMENT.fullmatch(word.text)  # `functions[TRAPDEBUG]`: the array's name
    # a word that is no name sets nothing (bash: "not a valid identifier")
    return Variable(m.group(1), value, by, index, text) if m else Variable(_NONE, None, by, index)


def _declared(
    cmd: SimpleCommand, index: int, cwd: str | None, written: frozenset[str] | None
) -> list[Variable]:
    opts = [w.text for w in cmd.argv[1:] if w.static and w.text[:1] in ("-", "+")]
    letters = "".join(o[1:] for o in opts if o.startswith("-"))
    if "f" in letters or "F" in letters or "p" in letters:
        return []  # functions, or only printing
    if cmd.head == "export" and "n" in letters:
        by = SetBy.DECLARE  # export -n: no longer exported, still set here
    elif "n" in letters and cmd.head in ("declare", "typeset", "local"):
        by = SetBy.NAMEREF
    elif cmd.head == "export" or "x" in letters:
        by = SetBy.EXPORT
    else:
        by = SetBy.DECLARE
    out: list[Variable] = []
    for w in cmd.argv[1:]:
        if w.static and w.text[:1] in ("-", "+"):
            continue
        if not w.static:
            names = file_names(w.text, cwd, written)
            if names is not None:
                out += [Variable(n, v, by, index, v) for n, v in names]
                continue
            m = _ASSIGNMENT.match(w.text.lstrip("\"'"))
            if m is not None:  # `export NAME=$(…)`: the name is known, the value is not
                out.append(Variable(m.group(1), None, by, index, m.group(2)))
            else:
                out.append(Variable("", None, by, index, w.text))  # the name as written
            continue
        m = _ASSIGNMENT.match(w.text)
        if m is not None:
            out.append(Variable(m.group(1), m.group(2), by, index, m.group(2)))
        elif _NAME.fullmatch(w.text):
            out.append(Variable(w.text, None, by, index, ""))
    return out


def names_file(text: str) -> bool:
    """Whether a declaration's word is ``$(cat FILE)`` (or ``$(< FILE)``, `` `cat FILE` ``),
    whose names :func:`file_names` can take from FILE once the line's writes are known."""
    return _FILE_WORDS.match(text.strip('"')) is not None


def file_names(
    text: str, cwd: str | None, written: frozenset[str] | None
) -> list[tuple[str, str]] | None:
    """The ``NAME=value`` words of FILE in ``$(cat FILE)`` (``export $(cat .env)``), read now;
    None when the word is not such a substitution, the file cannot be read whole, or the line
    writes it (or writes a path only known when it runs: ``written`` None)."""
    m = _FILE_WORDS.match(text.strip('"'))
    if m is None:
        return None
    path = m.group(1) or m.group(2)
    if path.startswith("~/"):
        path = os.path.expanduser(path)
    if not path.startswith("/"):
        if not cwd:
            return None
        path = posixpath.join(cwd, path)
    if written is None or posixpath.normpath(path) in written:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read(_FILE_BYTES + 1)
    except OSError:
        return None
    if len(data) > _FILE_BYTES:
        return None
    try:
        words = shlex.split(data.decode("utf-8", "replace"), comments=True)
    except ValueError:
        return None
    out: list[tuple[str, str]] = []
    for word in words:
        am = _ASSIGNMENT.match(word)
        out.append(
            (am.group(1), am.group(2)) if am else (word if _NAME.fullmatch(word) else "", "")
        )
    return out


def _read_names(
    cmd: SimpleCommand,
    index: int,
    values: frozenset[str],
    default: str,
    arrays: tuple[str, ...] = (),
) -> list[Variable]:
    out: list[Variable] = []
    args = list(cmd.argv[1:])
    k, names = 0, 0
    while k < len(args):
        w = args[k]
        t = w.text
        if w.static and t.startswith("-") and len(t) > 1:
            step = 1
            for j in range(1, len(t)):  # a cluster: `-ra NAME`, `-rp PROMPT`
                opt = "-" + t[j]
                if opt not in values:
                    continue
                rest = t[j + 1 :]
                word = Word(rest, True) if rest else (args[k + 1] if k + 1 < len(args) else None)
                if opt in arrays and word is not None:
                    out.append(_named(word, None, SetBy.READ, index, ""))
                    names += 1
                step = 1 if rest else 2
                break
            k += step
            continue
        out.append(_named(w, None, SetBy.READ, index, ""))
        names += 1
        k += 1
    if not names:
        out.append(Variable(default, None, SetBy.READ, index, ""))
    return out

"""What a word only known when it runs may be, without running anything (S2.1, issue 27).

A path such as ``${XDG_CONFIG_HOME:-$HOME/.config}/gatesh/config.toml`` or
``"$(git rev-parse --git-dir)/hooks/pre-push"`` names a place the gate can often work out:

- a parameter's default (``${V:-word}``, ``${V-word}``, ``${V:=word}``, ``${V=word}``) and
  alternative (``${V:+word}``), each read the same way;
- ``$HOME``, ``$PWD`` and ``$TMPDIR``; and the variables the gate's own places come from
  (``XDG_*``, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``) as the gate's environment holds them — the
  command's environment may hold another value, so that stays a possibility too;
- command substitutions answerable from the disk: ``pwd``, ``git rev-parse --git-dir``,
  ``--absolute-git-dir``, ``--show-toplevel``, ``--git-common-dir`` (with ``-C DIR``), and
  ``dirname``, ``basename``, ``realpath``, ``readlink -f`` and ``echo`` of words known so;
  ``mktemp`` making a new name in the temporary folder is read as one there.

:func:`candidates` returns every value the word may take that the gate can compute (at most
:data:`MAX_CANDIDATES`) and whether it may also take one the gate cannot know. Never raises;
reads a few small files under the working folder (``.git``, ``commondir``).
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from collections.abc import Mapping
from typing import Final

from gatesh._errors import ReadError

# Values a word is read with, at most: a product of alternatives is cut here (and the cut is
# one more unknown possibility).
MAX_CANDIDATES: Final = 8
# Variables whose value the gate's own environment gives (the folders its places come from).
ENVIRONMENT_NAMES: Final = frozenset(
    {
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        "XDG_DATA_HOME",
        "XDG_RUNTIME_DIR",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
    }
)
_NAME: Final = re.compile(r"[A-Za-z_]\w*")
# `${NAME…}` operators whose word is one of the values (`:-`, `-`, `:=`, `=`, `:+`, `+`).
_OPERATORS: Final = (":-", ":=", ":+", "-", "=", "+")
# How much of a `.git` file or `commondir` is read (a line holding a path).
_READ_BYTES: Final = 4096


class _Unknown(ReadError):
    """A part whose value the gate cannot compute (caught in :func:`candidates`, never escapes)."""


def candidates(
    text: str, cwd: str | None, home: str | None, env: Mapping[str, str] | None = None
) -> tuple[tuple[str, ...], bool]:
    """The values ``text`` (a word's source, quotes and expansions as written) may take that can
    be computed without running anything, and whether it may also take one that cannot.
    ``home`` None: the text assigns HOME, so ``$HOME`` is unknown."""
    environ = os.environ if env is None else env
    try:
        values, unknown = _word(text, cwd, home, environ, 0)
    except _Unknown:
        return (), True
    if len(values) > MAX_CANDIDATES:
        return tuple(values[:MAX_CANDIDATES]), True
    return tuple(values), unknown


def _word(
    src: str, cwd: str | None, home: str | None, env: Mapping[str, str], depth: int
) -> tuple[list[str], bool]:
    """The values of ``src`` (concatenated parts) and whether an unknown one remains."""
    if depth > 4:
        raise _Unknown
    values: list[str] = [""]
    unknown = False
    i, n = 0, len(src)
    while i < n:
        ch = src[i]
        if ch in "\"'":
            i += 1  # quotes only group: what they hold is read as the rest is
            continue
        if ch == "\\" and i + 1 < n:
            values = [v + src[i + 1] for v in values]
            i += 2
            continue
        if ch == "`":
            close = src.find("`", i + 1)
            if close < 0:
                raise _Unknown
            parts, more = _substitution(src[i + 1 : close], cwd, home, env, depth)
            i = close + 1
        elif ch == "$" and src.startswith("$(", i) and not src.startswith("$((", i):
            close = _closing(src, i + 2)
            parts, more = _substitution(src[i + 2 : close], cwd, home, env, depth)
            i = close + 1
        elif ch == "$" and src.startswith("${", i):
            close = _closing_brace(src, i + 2)
            parts, more = _parameter(src[i + 2 : close], cwd, home, env, depth)
            i = close + 1
        elif ch == "$":
            m = _NAME.match(src, i + 1)
            if m is None:
                raise _Unknown  # $1, $?, $$, $((…)): not computed here
            parts, more = _variable(m.group(0), cwd, home, env)
            i = m.end()
        else:
            j = i
            while j < n and src[j] not in "\"'\\`$":
                j += 1
            values = [v + src[i:j] for v in values]
            i = j
            continue
        unknown = unknown or more
        if not parts:
            if more:
                values = []  # only unknown values: nothing to compute for the rest
                return values, True
            continue
        values = [v + p for v in values for p in parts][: MAX_CANDIDATES + 1]
    return values, unknown


def _closing(src: str, start: int) -> int:
    """The index of the ``)`` closing a ``$(`` whose text starts at ``start``."""
    level = 1
    for k in range(start, len(src)):
        if src[k] == "(":
            level += 1
        elif src[k] == ")":
            level -= 1
            if level == 0:
                return k
    raise _Unknown


def _closing_brace(src: str, start: int) -> int:
    level = 1
    for k in range(start, len(src)):
        if src[k] == "{":
            level += 1
        elif src[k] == "}":
            level -= 1
            if level == 0:
                return k
    raise _Unknown


def _variable(
    name: str, cwd: str | None, home: str | None, env: Mapping[str, str]
) -> tuple[list[str], bool]:
    """``$name``'s possible values, and whether it may hold another."""
    if name == "HOME":
        if home is None:
            return [], True
        return [home], False
    if name == "PWD":
        return ([cwd], False) if cwd else ([], True)
    if name == "TMPDIR":
        return ["/tmp"], False  # the gate's reading of a temporary folder (as for `$TMPDIR/x`)
    if name in ENVIRONMENT_NAMES:
        value = env.get(name, "")
        return ([value], True) if value.startswith("/") else ([], True)
    return [], True


def _parameter(
    inner: str, cwd: str | None, home: str | None, env: Mapping[str, str], depth: int
) -> tuple[list[str], bool]:
    """``${inner}``'s possible values: a name, or a name with a default or alternative word."""
    m = _NAME.match(inner)
    if m is None:
        raise _Unknown  # ${#x}, ${!x}, ${1}: not computed
    name, rest = m.group(0), inner[m.end() :]
    if not rest:
        return _variable(name, cwd, home, env)
    op = next((o for o in _OPERATORS if rest.startswith(o)), None)
    if op is None:
        raise _Unknown  # ${x#p}, ${x/a/b}, ${x:0:2}: not computed
    word, more = _word(rest[len(op) :], cwd, home, env, depth + 1)
    own, own_more = _variable(name, cwd, home, env)
    if "+" in op:  # ${x:+word}: word when x is set, else nothing
        return [*word, ""], more
    values = list(dict.fromkeys([*own, *word]))
    return values, more or own_more


def _substitution(
    inner: str, cwd: str | None, home: str | None, env: Mapping[str, str], depth: int
) -> tuple[list[str], bool]:
    """What ``$(inner)`` prints, when the gate can answer it without running it."""
    if any(ch in inner for ch in "|;&<>()\n") or "{}" in inner:
        # a pipeline, a list or a redirection is not one answerable command; `{}` is a name
        # find or xargs puts in when it runs
        raise _Unknown
    try:
        words = shlex.split(inner)
    except ValueError:
        raise _Unknown from None
    if not words:
        return [""], False
    head, args = words[0], words[1:]
    if head == "pwd" and all(a in ("-P", "-L") for a in args):
        if not cwd:
            raise _Unknown
        return [cwd], False
    if head == "git":
        return _git(args, cwd, home)
    if head in ("dirname", "basename", "realpath", "readlink", "echo"):
        return _path_tool(head, args, cwd, home, env, depth)
    if head == "mktemp":
        made = _mktemp(args)
        if made is not None:
            return [made], False
    raise _Unknown


# mktemp's options that change neither where it makes the name nor what it is (a file or, -d, a
# folder; -u: the name only). -t: the template is a name in the temporary folder.
_MKTEMP_FLAGS: Final = frozenset(
    {"-d", "--directory", "-q", "--quiet", "-u", "--dry-run", "-t", "--tmpdir"}
)
# The name mktemp makes when given no template (GNU and BSD), in the temporary folder.
_MKTEMP_NAME: Final = "tmp.XXXXXXXXXX"


def _mktemp(args: list[str]) -> str | None:
    """The name ``mktemp ARGS`` prints when it makes a new one in the temporary folder (read as
    ``/tmp``, like ``$TMPDIR``): no template, or a template without a folder under -t/--tmpdir.
    Whatever it names did not exist before it ran, so nothing there is lost by writing or
    deleting it. None for a template in another folder (-p DIR, ``--tmpdir=DIR``, ``DIR/XXX``)."""
    flags = [a for a in args if a.startswith("-")]
    operands = [a for a in args if not a.startswith("-")]
    if any(f not in _MKTEMP_FLAGS and not _cluster(f) for f in flags) or len(operands) > 1:
        return None
    if not operands:
        return "/tmp/" + _MKTEMP_NAME
    tmpdir = any(f in ("-t", "--tmpdir") or (_cluster(f) and "t" in f) for f in flags)
    template = operands[0]
    if not tmpdir or "/" in template or "X" * 3 not in template or "$" in template:
        return None
    return "/tmp/" + template


def _cluster(flag: str) -> bool:
    """``-dq``, ``-td``: single-letter flags of :data:`_MKTEMP_FLAGS` run together."""
    return len(flag) > 2 and flag[1] != "-" and all(f"-{ch}" in _MKTEMP_FLAGS for ch in flag[1:])


def temp_made(source: str) -> str | None:
    """The value of an assignment whose whole source is ``$(mktemp …)`` (or backquoted) making a
    new name in the temporary folder (see :func:`_mktemp`), else None."""
    s = source.strip().strip('"')
    if s.startswith("$(") and s.endswith(")") and not s.startswith("$(("):
        inner = s[2:-1]
    elif s.startswith("`") and s.endswith("`") and len(s) > 1:
        inner = s[1:-1]
    else:
        return None
    if any(ch in inner for ch in "|;&<>()`$\n"):
        return None
    try:
        words = shlex.split(inner)
    except ValueError:
        return None
    if not words or words[0] != "mktemp":
        return None
    return _mktemp(words[1:])


def _path_tool(
    head: str,
    args: list[str],
    cwd: str | None,
    home: str | None,
    env: Mapping[str, str],
    depth: int,
) -> tuple[list[str], bool]:
    if head == "readlink":
        if args[:1] not in (["-f"], ["-e"], ["-m"]):
            raise _Unknown
        args = args[1:]
    if head == "echo":
        if any(a.startswith("-") for a in args):
            raise _Unknown
        return [" ".join(args)], False
    if len(args) != 1 and not (head == "basename" and len(args) == 2):
        raise _Unknown
    values, more = _word(args[0], cwd, home, env, depth + 1)
    out: list[str] = []
    for v in values:
        if head == "dirname":
            out.append(posixpath.dirname(v.rstrip("/")) or ".")
        elif head == "basename":
            base = posixpath.basename(v.rstrip("/"))
            if len(args) == 2 and base.endswith(args[1]) and base != args[1]:
                base = base[: -len(args[1])]
            out.append(base)
        else:  # realpath, readlink -f: the lexical absolute path (symlinks are the reader's own)
            path = v if v.startswith("/") else posixpath.join(cwd or "/", v)
            out.append(posixpath.normpath(path))
    return out, more


_GIT_ANSWERS: Final = frozenset(
    {"--git-dir", "--absolute-git-dir", "--show-toplevel", "--git-common-dir"}
)


def _git(args: list[str], cwd: str | None, home: str | None) -> tuple[list[str], bool]:
    """``git [-C DIR] rev-parse --git-dir|--absolute-git-dir|--show-toplevel|--git-common-dir``,
    answered from the ``.git`` found above the folder (as git finds it, without its config)."""
    where = cwd
    while args[:1] == ["-C"] and len(args) >= 2:
        target = args[1]
        if target.startswith("~") and home:
            target = home + target[1:]
        where = posixpath.normpath(posixpath.join(where or "/", target))
        args = args[2:]
    if len(args) != 2 or args[0] != "rev-parse" or args[1] not in _GIT_ANSWERS or not where:
        raise _Unknown
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        raise _Unknown  # git would use those instead of looking up the folders
    top, gitdir = _git_folders(where)
    if args[1] == "--show-toplevel":
        return [top], False
    if args[1] == "--git-common-dir":
        return [_common_dir(gitdir)], False
    return [gitdir], False


def _git_folders(where: str) -> tuple[str, str]:
    """(the work tree's top, its git folder) for folder ``where``, as git looks them up."""
    probe = where
    for _ in range(64):
        dot = posixpath.join(probe, ".git")
        if os.path.isdir(dot):
            return probe, dot
        if os.path.isfile(dot):
            try:
                with open(dot, encoding="utf-8", errors="replace") as f:
                    line = f.read(_READ_BYTES).strip()
            except OSError:
                raise _Unknown from None
            if not line.startswith("gitdir:"):
                raise _Unknown
            target = line[len("gitdir:") :].strip()
            return probe, posixpath.normpath(posixpath.join(probe, target))
        parent = posixpath.dirname(probe)
        if parent == probe:
            break
        probe = parent
    raise _Unknown


def _common_dir(gitdir: str) -> str:
    """A linked work tree's shared git folder (its ``commondir`` file), or ``gitdir`` itself."""
    try:
        with open(posixpath.join(gitdir, "commondir"), encoding="utf-8", errors="replace") as f:
            target = f.read(_READ_BYTES).strip()
    except FileNotFoundError:
        return gitdir
    except OSError:
        raise _Unknown from None
    return posixpath.normpath(posixpath.join(gitdir, target))

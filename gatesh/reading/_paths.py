"""Path effects (S2.1): every path the executed commands name, with its direction and class.

Sources, per command: redirect targets; argv operands and option values, read through the
per-program table ``gatesh.vocab.paths.uses.USES`` (a program it does not know reads-or-writes every
word that looks like a path, and writes the values of the generic output options); ``if=``/``of=``
style values; and the string literals of inline code (``node -e``, ``python -c``, ``perl -e``,
``awk``), written when they are the target of a file-writing call. ``~``, ``~user``, ``$HOME``,
``$PWD``, ``..`` and ``cd`` earlier in the line are resolved before classing, and symlinks inside
the working tree are followed (one ``realpath`` per such path). Never raises on odd input; a
path it cannot resolve is kept with class UNKNOWN.

This module holds the entry, :func:`effects`, and what pipelines feed (names echoed into a program
that reads names, xargs and find -exec placing words). The parts: :mod:`._path_resolve` (one path
resolved and classed), :mod:`._path_collector` (the effects, deduplicated), :mod:`._path_command`
(what one command does to paths), :mod:`._path_argv` (a program's arguments, by table or grammar)
and :mod:`._path_inline` (inline code).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Final

from gatesh._types import (
    Code,
    CodeSource,
    Context,
    Direction,
    PathEffect,
    SimpleCommand,
    Via,
    Word,
)

from ._path_collector import _Collector
from ._path_command import (
    _EMBEDDED,
    Placed,
    _command,
    _elsewhere,
    _find_parts,
    _folded_glob,
    placed,
)
from ._path_inline import _is_python, _python_files
from ._path_resolve import _home, looks_like_path, resolve

R, W, U = Direction.READ, Direction.WRITE, Direction.UNKNOWN


def effects(
    commands: Sequence[SimpleCommand],
    cwd: str | None,
    home: str | None,
    *,
    assigns_home: bool = False,
    pipelines: Sequence[Sequence[int]] = (),
    code: Sequence[Code] = (),
) -> tuple[PathEffect, ...]:
    """The path effects of ``commands`` (the reader's executed commands, in order); ``pipelines``
    (indexes into ``commands``) tell which commands feed which; ``code``, the program texts they
    run, adds the files a Python program written earlier in the text opens."""
    h = home or _home()
    col = _Collector(cwd, h, not assigns_home)
    cur: str | None = cwd
    fed = _fed_names(commands, pipelines)
    defined = {
        c.command: c.text
        for c in code
        if c.source is CodeSource.DEFINED and c.text and _is_python(c.language)
    }
    for i, cmd in enumerate(commands):
        if cmd.remote or cmd.context == Context.REMOTE:
            _elsewhere(col, cmd, i)
            continue
        _command(col, cmd, i, cur, commands[i + 1 : i + 4])
        if i in defined:
            _python_files(col, defined[i], i, cur)
        for w in fed.get(i, ()):
            col.add(w.text, w.static, U, i, cur, Via.PIPED_NAME)
        if cmd.context == Context.XARGS:
            _fed_to_xargs(col, commands, pipelines, i, cur)
        if cmd.head in ("cd", "pushd", "chdir") and cmd.context in (Context.TOP, Context.FUNCTION):
            folder = _cd_operand(cmd)
            if folder is not None:
                col.add(folder.text, folder.static, Direction.NAMED, i, cur, Via.CD)
            cur = _cd(cmd, cur, h)
    return tuple(col.out)


# Programs that take file names on their input (`echo F | cpio -o`, `echo F | xargs cat`).
_NAME_READERS: Final = frozenset(
    {
        "cpio",
        "xargs",
        "parallel",
        "tar",
        "zip",
        "rsync",
        "afio",
        "pax",
        "7z",
        "bsdtar",
        "gtar",
        "ar",
        "while",
        "read",
    }
)

# Programs that read commands on their input, which name files (`echo 'e /etc/shadow' | ed`).
_COMMAND_READERS: Final = frozenset(
    {
        "ed",
        "ex",
        "red",
        "sqlite3",
        "ftp",
        "sftp",
        "lftp",
        "gdb",
        "mysql",
        "psql",
        "redis-cli",
        "smbclient",
        "bc",
        "dc",
        "m4",
        "gnuplot",
        "octave",
        "R",
    }
)


def _fed_names(
    commands: Sequence[SimpleCommand], pipelines: Sequence[Sequence[int]]
) -> dict[int, list[Word]]:
    """Path-like words ``echo``/``printf`` pipe into a program that reads file names from its input
    (or commands naming files), keyed by the reading command's index."""
    out: dict[int, list[Word]] = {}
    for pipe in pipelines:
        for a, b in itertools.pairwise(pipe):
            if a >= len(commands) or b >= len(commands):
                continue
            src, dst = commands[a], commands[b]
            if src.head not in ("echo", "printf"):
                continue
            if dst.context == Context.XARGS:
                continue  # where xargs puts them is _fed_to_xargs's
            if dst.head in _NAME_READERS:
                out.setdefault(b, []).extend(
                    w for w in src.argv[1:] if looks_like_path(w.text.replace('"', ""))
                )
            elif dst.head in _COMMAND_READERS:
                for w in src.argv[1:]:
                    if w.static:
                        out.setdefault(b, []).extend(
                            Word(m.group(1))
                            for m in _EMBEDDED.finditer(w.text.replace("\\n", "\n"))
                        )
    return out


# Programs whose first operand is a pattern or a script, not a path (unless given by -e/-f).
_PATTERN_FIRST: Final = frozenset(
    {"grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "sed", "awk", "gawk", "mawk"}
)

# find's actions: a -name test after one of them no longer limits what it prints; the operators
# that let it print what a -name test alone would not.
_FIND_ACTIONS: Final = frozenset(
    {
        "-print",
        "-print0",
        "-printf",
        "-fprint",
        "-fprint0",
        "-fprintf",
        "-ls",
        "-fls",
        "-exec",
        "-execdir",
        "-ok",
        "-okdir",
        "-delete",
        "-quit",
        "-prune",
    }
)

_FIND_OPERATORS: Final = frozenset({"-o", "-or", "!", "-not", ",", "(", ")", "\\(", "\\)"})


def _fed_to_xargs(
    col: _Collector,
    commands: Sequence[SimpleCommand],
    pipelines: Sequence[Sequence[int]],
    i: int,
    cwd: str | None,
) -> None:
    """The names the commands before ``commands[i]`` (built by xargs) in its pipeline print, as
    effects of ``commands[i]`` where xargs puts them (:func:`placed`): everything a ``find`` finds
    under its start folders (only the names its ``-name`` tests let through, when they all must
    hold), and the paths other feeders name and may list (``ls DIR``, ``cat LIST``)."""
    cmd = commands[i]
    effects: list[Placed] | None = None
    for pipe in pipelines:
        if i not in pipe:
            continue
        for a in pipe[: list(pipe).index(i)]:
            if a >= len(commands):
                continue
            if effects is None:
                effects = placed(col, cmd, i, cwd, append=True)
                if not effects:
                    return
            for word, only, under, reach in _feeder_paths(commands[a]):
                for p in effects:
                    col.add(
                        word.text,
                        word.static,
                        p.direction,
                        i,
                        cwd,
                        Via.PIPED_NAME,
                        replaces=p.replaces,
                        only=only,
                        change=p.change,
                        deep=under or p.deep,
                        reach=reach if under and not p.deep else None,
                    )


def _feeder_paths(feeder: SimpleCommand) -> list[tuple[Word, str, bool, int | None]]:
    """The folders and files whose names ``feeder`` may print, each with the glob every printed
    name matches ("" for any), whether the names may lie under it, and how deep at most: echo's
    and printf's words are the names themselves; find prints what is under its start folders;
    another program's path-like operands (not grep's or sed's pattern) may be listed."""
    words = list(feeder.argv[1:])
    if feeder.head in ("echo", "printf"):
        return [(w, "", False, None) for w in words if looks_like_path(w.text.replace('"', ""))]
    if feeder.head == "find":
        roots, _, _, rest, depth = _find_parts(words)
        names: list[str] = []
        if not any(w.text in _FIND_OPERATORS for w in rest):
            for j, w in enumerate(rest[:-1]):
                if w.text in _FIND_ACTIONS:
                    break
                if w.text in ("-name", "-iname"):
                    glob = rest[j + 1].text
                    names.append(_folded_glob(glob) if w.text == "-iname" else glob)
        only = names[0] if names else ""
        return [(w, only, True, depth) for w in roots or [Word(".")]]
    if feeder.head in _PATTERN_FIRST and not any(
        w.text.startswith(("-e", "-f", "--regexp", "--file", "--expression")) for w in words
    ):
        first = next((k for k, w in enumerate(words) if not w.text.startswith("-")), None)
        if first is not None:
            words = words[:first] + words[first + 1 :]
    return [
        (w, "", True, None)
        for w in words
        if not (w.static and w.text.startswith("-")) and looks_like_path(w.text.replace('"', ""))
    ]


def _cd_operand(cmd: SimpleCommand) -> Word | None:
    """The folder ``cd``/``pushd`` changes into, as written (None: home, or ``cd -``)."""
    operands = [w for w in cmd.argv[1:] if not (w.static and w.text.startswith("-"))]
    return operands[0] if operands else None


def _cd(cmd: SimpleCommand, cur: str | None, home: str) -> str | None:
    w = _cd_operand(cmd)
    if w is None:
        return home
    target = resolve(w.text, cur, home, static=w.static)
    return target or None

"""Paths in a program's arguments: its operands and option values, read through the
program's row of ``gatesh.vocab.paths.uses`` or its grammar (a program it does not know
reads-or-writes every word that looks like a path); tar's archive, members and folder."""

from __future__ import annotations

import functools
import os
import posixpath
import re
from collections.abc import Sequence
from typing import Final

from gatesh._types import (
    Change,
    Direction,
    SimpleCommand,
    Via,
    Word,
)
from gatesh.vocab.grammar import grammar_of, parse
from gatesh.vocab.paths import uses
from gatesh.vocab.paths.use import PathUse

from ._path_collector import _Collector
from ._path_resolve import _FILE_NAME, _KEY, _REMOTE, _URL_FILE, looks_like_path, resolve

R, W, U = Direction.READ, Direction.WRITE, Direction.UNKNOWN

_LETTERS: Final = re.compile(r"^[A-Za-z]+$")


def _tar(col: _Collector, words: list[Word], i: int, cwd: str | None) -> None:
    """tar: the archive is written when creating, read otherwise; members are read when creating;
    ``-C DIR`` is written when extracting."""
    mode = ""
    archive: Word | None = None
    folder: Word | None = None
    operands: list[Word] = []
    k = 0
    while k < len(words):
        w = words[k]
        t = w.text
        nxt = words[k + 1] if k + 1 < len(words) else None
        if w.static and t.startswith("--"):
            name, eq, value = t.partition("=")
            if name in ("--create", "--append", "--update", "--concatenate"):
                mode = mode or "c"
            elif name in ("--extract", "--get"):
                mode = mode or "x"
            elif name in ("--list", "--diff", "--compare"):
                mode = mode or "t"
            elif name in ("--file", "--directory"):
                target = Word(value) if eq else nxt
                if name == "--file":
                    archive = target
                else:
                    folder = target
                k += 1 if eq else 2
                continue
        elif w.static and (t.startswith("-") or (k == 0 and _LETTERS.match(t))):
            letters = t.lstrip("-")
            for ch in letters:
                if ch in "cruA":
                    mode = mode or "c"
                elif ch == "x":
                    mode = mode or "x"
                elif ch in "td":
                    mode = mode or "t"
            if "f" in letters and nxt is not None:
                archive = nxt
                k += 2
                continue
            if letters == "C" and nxt is not None:
                folder = nxt
                k += 2
                continue
        else:
            operands.append(w)
        k += 1
    if archive is not None and archive.text != "-":
        col.add(
            archive.text,
            archive.static,
            W if mode == "c" else R,
            i,
            cwd,
            Via.OPTION,
            replaces=mode == "c",
        )
    if mode == "x":
        # everything the archive holds lands in its folder (the current one without -C)
        place = folder if folder is not None else Word(".")
        col.add(place.text, place.static, W, i, cwd, Via.OPTION, deep=True)
    if mode == "c":
        removes = any(w.static and w.text == "--remove-files" for w in words)
        for w in operands:
            if removes:  # the members are deleted once archived
                _word(col, w, W, i, cwd, all_operands=True, change=Change.REMOVE)
            else:
                _word(col, w, R, i, cwd, all_operands=True)


def _argv(
    col: _Collector,
    cmd: SimpleCommand,
    words: list[Word],
    use: PathUse | None,
    i: int,
    cwd: str | None,
) -> None:
    """Add the files ``cmd``'s arguments (``words``) name, through its row ``use`` of the
    path table (None: a program the table does not know) or its grammar when it has one."""
    head = cmd.head
    in_place = use.in_place if use else frozenset()
    keeps = use.keeps if use else frozenset()
    flags = {w.text.split("=", 1)[0] for w in words if w.static and w.text.startswith("-")}
    replaces = bool(use and use.replaces) and not (flags & keeps)
    if head in ("ln", "gln"):
        replaces = bool(flags & {"-f", "--force"}) or any(
            w.static and w.text.startswith("-") and not w.text.startswith("--") and "f" in w.text
            for w in words
        )
    editing = bool(flags & in_place) or (
        bool(in_place)
        and any(w.static and w.text.startswith("-i") and not w.text.startswith("--") for w in words)
    )
    if grammar_of(head) is not None:
        named = {
            o.name for o in parse(head, [w.text for w in words], [w.static for w in words]).options
        }
        replaces = bool(use and use.replaces) and not (named & keeps)
        if head in ("ln", "gln"):
            replaces = bool(named & {"-f", "--force"})
        deep = use is not None and bool(named & use.deep)
        read_ops, read_flags = _argv_by_grammar(col, cmd, words, use, i, cwd, replaces, deep)
        editing = bool(read_flags & in_place)
        _skip_and_operands(col, cmd, read_ops, use, i, cwd, replaces, editing, read_flags, deep)
        return
    deep = use is not None and bool(use.deep) and _given(words, use.deep)
    operands = _options_by_table(col, head, words, use, i, cwd, replaces, deep)
    _skip_and_operands(col, cmd, operands, use, i, cwd, replaces, editing, flags, deep)


def _options_by_table(
    col: _Collector,
    head: str,
    words: list[Word],
    use: PathUse | None,
    i: int,
    cwd: str | None,
    replaces: bool,
    deep: bool,
) -> list[Word]:
    """Add the files the options in ``words`` name, read through ``use`` (None: the
    program's generic output options, and option values that look like paths); returns
    the operands, the words that are not options or their values."""
    cred_opts = uses.CREDENTIAL_OPTIONS.get(head, frozenset())
    writes = use.writes if use else uses.generic_output(head)
    reads = use.reads if use else frozenset()
    values = uses.HEAD_VALUES.get(head, use.values if use else frozenset())
    modes = _pattern(use.modes) if use is not None and use.modes else None
    operands: list[Word] = []
    k = 0
    ended = False
    while k < len(words):
        w = words[k]
        t = w.text
        if (
            ended
            or not w.static
            or not t.startswith("-")
            or t == "-"
            or (modes is not None and modes.match(t))
        ):
            operands.append(w)
            k += 1
            continue
        if t == "--":
            ended = True
            k += 1
            continue
        name, eq, value = t.partition("=")
        nxt = words[k + 1] if k + 1 < len(words) else None
        if name in cred_opts:
            k += 1 if eq else 2
            continue
        if name in writes or name in reads:
            direction = W if name in writes else R
            text, static = (value, True) if eq else ((nxt.text, nxt.static) if nxt else ("", True))
            strict = (
                use is None
            )  # a generic -o names a file only when it looks like one (not `-o yaml`)
            if text and (not strict or looks_like_path(text) or _FILE_NAME.match(text)):
                col.add(
                    text,
                    static,
                    direction,
                    i,
                    cwd,
                    Via.OPTION,
                    replaces=direction is W and (replaces or use is None),
                    deep=deep and direction is W,
                )
            k += 1 if eq else 2
            continue
        if name in values:
            k += 1 if eq else 2
            continue
        if eq and looks_like_path(value):
            col.add(value, True, U, i, cwd, Via.OPTION)
        elif (
            not name.startswith("--")
            and len(name) > 2
            and name[:2] in writes
            and looks_like_path(name[2:])
        ):
            col.add(name[2:], True, W, i, cwd, Via.OPTION, replaces=replaces or use is None)
        k += 1
    return operands


def _skip_and_operands(
    col: _Collector,
    cmd: SimpleCommand,
    operands: list[Word],
    use: PathUse | None,
    i: int,
    cwd: str | None,
    replaces: bool,
    editing: bool,
    flags: set[str],
    deep: bool = False,
) -> None:
    if use is not None and use.skip:
        operands = (
            operands[use.skip :]
            if not (flags & (use.reads | {"-e", "--expression", "--regexp"}))
            else operands
        )
    _operands(col, cmd, operands, use, i, cwd, replaces, editing, deep)


@functools.lru_cache(maxsize=64)
def _pattern(text: str) -> re.Pattern[str]:
    """``text`` compiled (the few patterns of the path-use table, compiled once each)."""
    return re.compile(text)


def _given(words: Sequence[Word], options: frozenset[str]) -> bool:
    """Whether one of ``options`` is given among ``words`` (a long one whole or before ``=``, a
    short one alone or inside a cluster such as ``-rf``)."""
    for w in words:
        t = w.text
        if not w.static or not t.startswith("-") or t == "-":
            continue
        if t == "--":
            return False
        if t.startswith("--"):
            if t.split("=", 1)[0] in options:
                return True
        elif any("-" + ch in options for ch in t[1:]):
            return True
    return False


def _argv_by_grammar(
    col: _Collector,
    cmd: SimpleCommand,
    words: list[Word],
    use: PathUse | None,
    i: int,
    cwd: str | None,
    replaces: bool,
    deep: bool = False,
) -> tuple[list[Word], set[str]]:
    """The option values a program with a grammar row writes or reads (added to ``col``), its
    operands (subcommand words and option values out) and its option names, read as the program
    reads them: ``curl -sLo F URL`` writes F."""
    head = cmd.head
    cred_opts = uses.CREDENTIAL_OPTIONS.get(head, frozenset())
    writes = use.writes if use else uses.generic_output(head)
    reads = use.reads if use else frozenset()
    argv = parse(head, [w.text for w in words], [w.static for w in words])
    for o in argv.options:
        if o.value is None or o.value == "-" or o.name in cred_opts:
            continue  # `-O -`: standard output, not a file
        attached = o.value_at == o.at
        static = True if attached else words[o.value_at].static
        if o.name in writes or o.name in reads:
            direction = W if o.name in writes else R
            # a generic -o names a file only when it looks like one (not `-o yaml`)
            if use is None and not (looks_like_path(o.value) or _FILE_NAME.match(o.value)):
                continue
            if o.value:
                into = o.name in ("-t", "--target-directory")  # a folder files are put in
                col.add(
                    o.value,
                    static,
                    direction,
                    i,
                    cwd,
                    Via.OPTION,
                    replaces=direction is W and (replaces or use is None) and not into,
                    deep=deep and direction is W,
                )
        elif attached and o.name.startswith("--") and looks_like_path(o.value):
            col.add(o.value, True, U, i, cwd, Via.OPTION)
    return [words[k] for k in argv.operand_at], {o.name for o in argv.options}


def _operands(
    col: _Collector,
    cmd: SimpleCommand,
    operands: list[Word],
    use: PathUse | None,
    i: int,
    cwd: str | None,
    replaces: bool,
    editing: bool,
    deep: bool = False,
) -> None:
    if use is None:
        for w in operands:
            _word(col, w, U, i, cwd, all_operands=False)
        return
    last = use.last if len(operands) >= 2 else None
    body = operands[:-1] if last is not None else operands
    base = W if editing else use.operands
    change = use.change if base is W else Change.CONTENT
    if cmd.head in ("mv", "gmv") and last is not None:
        base = W  # moved away: gone from where it was (its content lives on at the destination)
        change = Change.REMOVE
    for w in body:
        if base is not None:
            _word(
                col,
                w,
                base,
                i,
                cwd,
                all_operands=use.all_operands or editing,
                replaces=replaces and base is W and cmd.head not in ("mv", "gmv"),
                change=change,
                deep=deep and base is W,
            )
    if last is not None:
        dest = operands[-1]
        folder = resolve(dest.text, cwd, col.home, static=True) if dest.static else ""
        into = (
            bool(folder)
            and (dest.text.endswith("/") or os.path.isdir(folder))
            and not os.path.islink(folder)
        )
        # `cp a.txt b.txt src/` writes src/a.txt and src/b.txt: the folder itself is only added to
        _word(
            col,
            dest,
            last,
            i,
            cwd,
            all_operands=True,
            replaces=replaces and not into,
            deep=deep and last is W,
        )
        if into and last is W and use.operands is R:
            for w in body:
                if (
                    w.static
                    and w.text
                    and not any(ch in w.text for ch in "*?[")
                    and "{}" not in w.text  # a name find or xargs puts in
                    and w.text.rstrip("/")
                ):
                    col.add(
                        posixpath.join(folder, posixpath.basename(w.text.rstrip("/"))),
                        True,
                        W,
                        i,
                        cwd,
                        Via.ARGV,
                        replaces=replaces,
                        deep=deep,
                    )


def _word(
    col: _Collector,
    w: Word,
    direction: Direction,
    i: int,
    cwd: str | None,
    *,
    all_operands: bool,
    replaces: bool = False,
    change: Change = Change.CONTENT,
    deep: bool = False,
) -> None:
    t = w.text
    if (
        not t
        or t == "-"
        or t in ("{}", "+", ";", "\\;")
        or (_REMOTE.match(t) and not _URL_FILE.match(t))
    ):
        return
    if not w.static:
        if looks_like_path(t.replace('"', "")) or all_operands:
            col.add(t, False, direction, i, cwd, Via.ARGV, replaces, "", change, deep)
        return
    if all_operands or looks_like_path(t):
        if "=" in t and not t.startswith(("/", "~", ".")):
            key, _, value = t.partition("=")
            if looks_like_path(value) and _KEY.match(key):
                col.add(value, True, direction, i, cwd, Via.OPTION, replaces, "", change, deep)
            return
        col.add(t, True, direction, i, cwd, Via.ARGV, replaces, "", change, deep)
    elif "=" in t:
        key, _, value = t.partition("=")
        if _KEY.match(key) and looks_like_path(value):
            col.add(value, True, direction, i, cwd, Via.OPTION, False, "", change, deep)

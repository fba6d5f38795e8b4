"""What one command does to paths: its redirections, wrappers' options, ``find``'s
roots and actions, the special programs (``dd``, ``socat``, ``sed w``, ``sqlite3`` dot
commands, ``docker cp``), implicit and setting writes, inline code, its arguments, and
paths named inside the strings of programs no table models."""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Sequence
from typing import Final

from gatesh._types import (
    Change,
    Context,
    Direction,
    PathClass,
    SimpleCommand,
    Via,
    Word,
)
from gatesh.vocab.paths import settings, uses
from gatesh.vocab.paths.use import PathUse
from gatesh.vocab.programs import interpreters
from gatesh.vocab.words import FIND_FILTERS

from ._path_argv import _argv, _tar
from ._path_collector import MAX_EFFECTS, _Collector
from ._path_inline import (
    _CODE_PROGRAMS,
    _inline_code,
    _is_python,
    _python_files,
    code_paths,
    removed,
)
from ._path_resolve import _URL_FILE, _classify, looks_like_path, resolve

R, W, U = Direction.READ, Direction.WRITE, Direction.UNKNOWN

# Redirections that truncate their target (``>>`` appends, ``<>`` opens without truncating).
_TRUNCATING: Final = frozenset({">", ">|", "&>", ">&"})

# bash's `$(<FILE)`: the file's content, read by the shell itself (inside any word, any command).
_READ_SUBST: Final = re.compile(r"\$\(\s*<\s*([^)\s]+)\s*\)")

# The classes a path on another host or in a container keeps: what reading or writing them means
# does not depend on this machine (a service-account token is a credential there too). Work-loss
# classes do: that host's files are not this working tree's, and relative paths are not ours.
_ELSEWHERE_CLASSES: Final = frozenset(
    {PathClass.CREDENTIALS, PathClass.PERSISTENCE, PathClass.SYSTEM}
)


def _elsewhere(col: _Collector, cmd: SimpleCommand, i: int) -> None:
    """The paths a command run on another host or in a container names (``kubectl exec pod -- cat
    /run/secrets/…/token``), classed by where they lie there: absolute and home paths only, no
    working tree, no symlinks followed; kept only for :data:`_ELSEWHERE_CLASSES`."""
    there = _Collector(None, col.home, col.home_known)
    there._tree, there._gate = None, ()
    _command(there, cmd, i, None)
    for e in there.out:
        if e.cls in _ELSEWHERE_CLASSES and len(col.out) < MAX_EFFECTS:
            col.out.append(dataclasses.replace(e, via=e.via.elsewhere()))


def _command(
    col: _Collector,
    cmd: SimpleCommand,
    i: int,
    cwd: str | None,
    following: Sequence[SimpleCommand] = (),
) -> None:
    """Add every path ``cmd`` (command ``i``, run in ``cwd``) names to ``col``: its redirections,
    its wrappers' options, the program's own path, then by the first rule that applies: find's
    roots (``following``: the commands after it, its ``-exec`` parts), names every program reads,
    the special programs, implicit writes, tar, inline code, and its arguments."""
    _redirects(col, cmd, i, cwd)
    head = cmd.head
    words = list(cmd.argv[1:])
    _wrapped(col, cmd, i, cwd)
    program = cmd.argv[0] if cmd.argv else None
    if program is not None and not program.static and "/" in program.text:
        # a program named by a path only known when it runs (`"$HOME/venv/bin/pip"`)
        if looks_like_path(program.text.replace('"', "")):
            col.add(program.text, False, R, i, cwd, Via.PROGRAM)
    if head == "find":
        _find(col, cmd, words, i, cwd, [c for c in following if c.context is Context.FIND_EXEC])
        return
    _read_by_any(col, words, i, cwd)
    if head in _NAME_ONLY_READS:
        for k, w in enumerate(words[:-1]):
            if w.static and w.text in _NAME_ONLY_READS[head]:
                col.add(words[k + 1].text, words[k + 1].static, R, i, cwd, Via.OPTION)
    if head == "man" and any(w.static and "/" in w.text for w in words):
        for w in words:
            if w.static and "/" in w.text and not w.text.startswith("-"):
                col.add(w.text, True, R, i, cwd, Via.ARGV)  # man renders a file named by a path
        return
    if not head or head in uses.NAME_ONLY or not cmd.argv:
        return
    if _special(col, cmd, words, i, cwd):
        return
    if head in uses.CREDENTIAL_USERS:
        return  # loading or using a key is the key's purpose
    for setting in settings.setting_writes(head, [w.text for w in words if w.static]):
        col.add(setting, True, W, i, cwd, Via.IMPLICIT)  # `pip config set …` writes pip.conf
    implicit = uses.IMPLICIT_WRITES.get(head)
    if implicit is not None and not any(
        w.static and w.text in ("-c", "--check", "-f", "--file") for w in words
    ):
        col.add(implicit, True, W, i, cwd, Via.IMPLICIT)
    if head in ("tar", "gtar", "bsdtar"):
        _tar(col, words, i, cwd)
        return
    _inline(col, cmd, i, cwd)
    use = uses.use_of(head)
    if use is None and interpreters.is_interpreter(head):
        use = _INTERPRETER_USE
    if cmd.argv[0].static and "/" in cmd.argv[0].text:
        # the program file itself is read to run it
        col.add(cmd.argv[0].text, True, R, i, cwd, Via.PROGRAM)
    _argv(col, cmd, words, use, i, cwd)
    if use is None or use is _INTERPRETER_USE or head in _EMBEDDERS:
        _embedded(col, cmd, words, i, cwd)


def _redirects(col: _Collector, cmd: SimpleCommand, i: int, cwd: str | None) -> None:
    """Add the files ``cmd``'s redirections read and write (a truncating one replaces its
    target; a target only known when it runs is kept as dynamic; heredocs and fds are not)."""
    for r in cmd.redirects:
        if r.target is None and r.writes and r.text:
            # a target only known when it runs (`> "$f"`, `> ${XDG_STATE_HOME:-…}/x`)
            col.add(r.text, False, W, i, cwd, Via.REDIRECT, replaces=r.op in _TRUNCATING)
            continue
        if r.target is None or r.op.startswith("<<"):
            continue
        if r.op in (">&", "<&") and (r.target.isdigit() or r.target == "-"):
            continue
        if r.writes:
            col.add(r.target, True, W, i, cwd, Via.REDIRECT, replaces=r.op in _TRUNCATING)
        elif r.op == "<>":
            col.add(r.target, True, U, i, cwd, Via.REDIRECT)
        else:
            col.add(r.target, True, R, i, cwd, Via.REDIRECT)


def _read_by_any(col: _Collector, words: list[Word], i: int, cwd: str | None) -> None:
    """Add the files any program reads through its words: ``$(< FILE)`` and ``file://`` URLs."""
    for w in words:
        if "$(" not in w.text:
            continue  # what every match starts with (most words: skipped without the pattern)
        for m in _READ_SUBST.finditer(w.text):
            col.add(m.group(1).strip("'\""), True, R, i, cwd, Via.REDIRECT)
    for w in (
        words
    ):  # a file:// URL names a local file, whatever the program (curl, aws --cli-input-json …)
        t = w.text
        k = t.find("file://")
        if w.static and k >= 0:
            url = _URL_FILE.match(t[k:].split(",", 1)[0])
            if url:
                col.add(url.group(1), True, R, i, cwd, Via.ARGV)


def _special(
    col: _Collector, cmd: SimpleCommand, words: list[Word], i: int, cwd: str | None
) -> bool:
    """Add the paths of the programs with their own syntax for files (``docker cp``, ``socat``
    addresses, ``sed``'s ``w``, ``sqlite3``'s database and dot commands, ``dd``'s ``if=``/``of=``);
    True when that is all the command names (no other rule applies)."""
    head = cmd.head
    if head in ("docker", "podman", "nerdctl") and len(words) >= 3 and words[0].text == "cp":
        local = [w for w in words[1:] if not w.text.startswith("-") and ":" not in w.text]
        if local and ":" in words[-1].text:
            col.add(local[0].text, local[0].static, R, i, cwd, Via.ARGV)
        elif local and local[-1] is words[-1]:
            col.add(words[-1].text, words[-1].static, W, i, cwd, Via.ARGV, replaces=True)
        return True
    if head == "socat":
        for w in words:
            addr = _SOCAT_FILE.match(w.text) if w.static else None
            if addr:
                kind, path, opts = addr.group(1).lower(), addr.group(2), addr.group(3).lower()
                writes = (
                    kind in ("create", "creat")
                    or "creat" in opts
                    or "wronly" in opts
                    or "append" in opts
                )
                col.add(
                    path,
                    True,
                    W if writes else U,
                    i,
                    cwd,
                    Via.ARGV,
                    replaces="trunc" in opts or kind == "create",
                )
        return True
    if head in ("sed", "gsed"):
        for w in words:
            if w.static:
                for m in _SED_WRITE.finditer(w.text):
                    col.add(m.group(1), True, W, i, cwd, Via.INLINE_CODE, replaces=True)
    if head in ("sqlite3", "sqlite", "duckdb"):
        db = next((w for w in words if not (w.static and w.text.startswith("-"))), None)
        if db is not None:  # the database file, perhaps as an SQLite URI (file:PATH?mode=ro)
            text = db.text.replace('"', "")
            text = text[5:] if text.startswith("file:") else text
            col.add(text.split("?", 1)[0], db.static, U, i, cwd, Via.ARGV)
        for text in [w.text for w in words if w.static] + ([cmd.raw] if _heredoc(cmd) else []):
            for m in _SQLITE_DOT.finditer(text):
                verb = m.group(1).lower()
                writes = verb in ("output", "once", "save", "backup", "dump", "excel")
                col.add(
                    m.group(2), True, W if writes else R, i, cwd, Via.INLINE_CODE, replaces=writes
                )
    if head in ("dd", "dcfldd", "dc3dd"):
        for w in words:
            for key, direction in (("if=", R), ("of=", W)):
                if w.text.startswith(key):
                    col.add(
                        w.text[len(key) :],
                        w.static,
                        direction,
                        i,
                        cwd,
                        Via.OPTION,
                        replaces=direction is W,
                    )
        return True
    return False


def _inline(col: _Collector, cmd: SimpleCommand, i: int, cwd: str | None) -> None:
    """Add the paths the inline code of an interpreter (or awk, emacs --eval) names, removed
    when a call deletes them; a Python program's own imports and opens too."""
    head = cmd.head
    if not (interpreters.is_interpreter(head) or head in _CODE_PROGRAMS):
        return
    python = _is_python(head)
    for code in _inline_code(cmd):
        deleted = removed(code)
        for text, direction, replaces in code_paths(code):
            change = Change.REMOVE if text in deleted else Change.CONTENT
            col.add(
                text, True, direction, i, cwd, Via.INLINE_CODE, replaces=replaces, change=change
            )
        if python:
            _python_files(col, code, i, cwd)


# Programs whose argument strings are code or configuration that names files (latex, make --eval,
# gdb -ex, smbclient -c, puppet -e): the known tables do not model them, so literals are scanned.
_EMBEDDERS: Final = frozenset(
    {
        "sqlite3",
        "smbclient",
        "gdb",
        "make",
        "latex",
        "pdflatex",
        "xelatex",
        "lualatex",
        "tex",
        "puppet",
        "apache2",
        "apache2ctl",
        "httpd",
        "nginx",
        "dosbox",
        "redis-cli",
        "lftp",
    }
)

# A path inside a longer word: absolute or home-relative, not part of a URL or another path.
_EMBEDDED: Final = re.compile(
    r"(?:(?<![\w.$/:~@-])|(?<=[a-z]:)(?=~/))(~/[\w.@%+/-]+|/(?:etc|usr|var|root|home|Users|"
    r"Library|System|opt|boot|lib\w*|bin|sbin|proc|sys|dev|srv)/[\w.@%+/-]+)"
)

# Only classes whose meaning matters when a program merely mentions the path.
_EMBEDDED_CLASSES: Final = frozenset(
    {PathClass.CREDENTIALS, PathClass.PERSISTENCE, PathClass.SYSTEM, PathClass.GATE}
)


def _embedded(
    col: _Collector, cmd: SimpleCommand, words: list[Word], i: int, cwd: str | None
) -> None:
    """Paths named inside the argument strings (and a heredoc) of a program no table models."""
    # every path the pattern finds holds a "/": other words are not scanned
    texts = [
        w.text
        for w in words
        if w.static and len(w.text) > 2 and "/" in w.text and not looks_like_path(w.text)
    ]
    if cmd.redirects and cmd.raw and _heredoc(cmd):
        texts.append(cmd.raw[:65536])
    seen: set[str] | None = None  # this command's paths so far, taken at the first match
    for text in texts:
        if "/" not in text:
            continue
        for m in _EMBEDDED.finditer(text[:65536]):
            path = m.group(1).rstrip(".,;:)")
            if seen is None:
                seen = {e.path for e in col.out if e.command == i}
            if path in seen:
                continue  # already a path effect of this command, with a better-known direction
            resolved = resolve(path, cwd, col.home, static=True)
            if (
                resolved
                and _classify(resolved, col.home, col.tree, col.gate)[0] in _EMBEDDED_CLASSES
            ):
                col.add(path, True, U, i, cwd, Via.EMBEDDED)


def _heredoc(cmd: SimpleCommand) -> bool:
    return any(r.op.startswith("<<") for r in cmd.redirects)


_NAME_ONLY_READS: Final = {
    "file": frozenset({"-f", "--files-from", "-m", "--magic-file"}),
    "du": frozenset({"--files0-from", "-X", "--exclude-from"}),
    "wc": frozenset({"--files0-from"}),
    "find": frozenset({"-files0-from"}),
}

_SOCAT_FILE: Final = re.compile(
    r"^(open|file|create|creat|gopen|pipe)[:,]([^,!]+)((?:,[^!]*)?)$", re.I
)

_SED_WRITE: Final = re.compile(r"(?:^|[;\n}]|/[gpIiMme0-9]*)\s*w\s+(\S+)")

_SQLITE_DOT: Final = re.compile(
    r"(?:^|\n|\s)\.(output|once|save|backup|dump|excel|import|read|open|restore)\s+"
    r"(?:--?\w+\s+)*['\"]?([^\s'\"]+)"
)

# An interpreter's own words: the inline code is code (its literals are read above), not a path.
_INTERPRETER_USE: Final = PathUse(
    frozenset(),
    "runs a program",
    operands=U,
    all_operands=False,
    values=frozenset(
        {
            "-c",
            "-e",
            "-E",
            "-r",
            "--eval",
            "-p",
            "--print",
            "-m",
            "-M",
            "-I",
            "-W",
            "-X",
            "-x",
            "--execute",
        }
    ),
)

# Wrappers the reader peels whose own options name a file (strace -o trace.txt ls).
_WRAPPER_PATHS: Final = {
    "strace": {"-o": W, "--output": W},
    "ltrace": {"-o": W, "--output": W, "-F": R},
    "time": {"-o": W, "--output": W},
}


def _wrapped(col: _Collector, cmd: SimpleCommand, i: int, cwd: str | None) -> None:
    if not cmd.wrappers:
        return
    wanted = [w for w in cmd.wrappers if w in _WRAPPER_PATHS or w == "script"]
    if not wanted or not cmd.raw:
        return
    try:
        words = shlex.split(cmd.raw[:8192])
    except ValueError:
        return
    if "script" in wanted and words[:1] == ["script"]:
        # script [-a] [-q] [-c CMD] [FILE]: the typescript FILE is written (appended with -a)
        rest, k, operands = words[1:], 0, []
        while k < len(rest):
            if rest[k] in ("-c", "--command", "-t", "--timing", "-T", "-B", "-I", "-O", "-E"):
                k += 2
                continue
            if not rest[k].startswith("-"):
                operands.append(rest[k])
            k += 1
        if operands:
            col.add(
                operands[0],
                True,
                W,
                i,
                cwd,
                Via.ARGV,
                replaces="-a" not in rest and "--append" not in rest,
            )
    wanted = [w for w in wanted if w != "script"]
    for k, w in enumerate(words[:-1]):
        for wrapper in wanted:
            direction = _WRAPPER_PATHS[wrapper].get(w)
            if direction is not None:
                col.add(words[k + 1], True, direction, i, cwd, Via.OPTION, replaces=direction is W)


def _find(
    col: _Collector,
    cmd: SimpleCommand,
    words: list[Word],
    i: int,
    cwd: str | None,
    execs: Sequence[SimpleCommand],
) -> None:
    """``find ROOTS … -delete`` / ``-exec CMD {} …``: every match under each root is deleted, or
    handed to CMD where its ``{}`` stands (:func:`placed` says what CMD does there).

    ``execs`` are the commands the reader peeled out of this find's ``-exec`` parts (wrappers such
    as ``env``, ``sudo`` or ``busybox`` already taken off), so ``-exec sudo rm {} ;`` deletes too.
    A test that picks some files (``-name``, ``-mtime`` …) makes the effect ``partial``; a lone
    ``-name`` pattern is its ``only``.
    """
    roots, names, filtered, rest, depth = _find_parts(words)
    deletes = False
    in_exec = False
    for j, w in enumerate(rest):
        t = w.text
        if in_exec:
            in_exec = t not in (";", "+", "\\;")
            continue
        if t == "-delete":
            deletes = True
        elif t in ("-exec", "-execdir", "-ok", "-okdir"):
            in_exec = True
        elif t in ("-fprint", "-fprint0", "-fprintf", "-fls") and j + 1 < len(rest):
            col.add(rest[j + 1].text, rest[j + 1].static, W, i, cwd, Via.OPTION, replaces=True)
    only = names[0] if len(names) == 1 else ""
    targets = roots or [Word(".")]
    if deletes:
        for w in targets:
            col.add(
                w.text,
                w.static,
                W,
                i,
                cwd,
                Via.ARGV,
                replaces=True,
                only=only,
                change=Change.REMOVE,
                partial=filtered,
                reach=depth,
            )
    for c in execs:
        for p in placed(col, c, i, cwd, append=False):
            for w in targets:
                col.add(
                    w.text,
                    w.static,
                    p.direction,
                    i,
                    cwd,
                    Via.ARGV,
                    replaces=p.replaces,
                    only=only if p.direction.writes else "",
                    change=p.change,
                    deep=p.direction.writes,
                    partial=filtered,
                    reach=depth,
                )


def _find_parts(
    words: Sequence[Word],
) -> tuple[list[Word], list[str], bool, list[Word], int | None]:
    """find's (start folders, ``-name``/``-iname`` patterns as case-exact globs, whether any test
    picks files out of the tree, the expression's words, its ``-maxdepth`` or None). Options
    before the start folders (``-L``, ``-H``, ``-P``, ``-D X``, ``-O3``) are passed over."""
    k = 0
    while k < len(words) and words[k].static and _FIND_LEADING.match(words[k].text):
        k += 2 if words[k].text == "-D" else 1
    roots: list[Word] = []
    while k < len(words) and not (words[k].static and words[k].text.startswith(("-", "(", "!"))):
        roots.append(words[k])
        k += 1
    rest = list(words[k:])
    names: list[str] = []
    for j, w in enumerate(rest[:-1]):
        if w.text in ("-name", "-iname"):
            glob = rest[j + 1].text
            names.append(_folded_glob(glob) if w.text == "-iname" else glob)
    filtered = any(w.static and w.text in FIND_FILTERS for w in rest)
    depth: int | None = None
    for j, w in enumerate(rest[:-1]):
        if w.static and w.text == "-maxdepth" and rest[j + 1].text.isdigit():
            depth = int(rest[j + 1].text)
    return roots, names, filtered, rest, depth


_FIND_LEADING: Final = re.compile(r"^-(?:[HLPxEsXd]|D|O\d)$")


def _folded_glob(glob: str) -> str:
    """``glob`` matching without regard to case (``-iname``): each letter as ``[xX]``."""
    return "".join(f"[{ch.lower()}{ch.upper()}]" if ch.isalpha() else ch for ch in glob)


# What a command find -exec or xargs builds does where its input words go: one effect each.
_MARK: Final = "/\x00fed"


@dataclasses.dataclass(frozen=True)
class Placed:
    """What ``cmd`` does to a word put where find or xargs puts its input (see :func:`placed`)."""

    direction: Direction
    change: Change
    replaces: bool
    deep: bool = False


def placed(
    col: _Collector, cmd: SimpleCommand, i: int, cwd: str | None, *, append: bool
) -> list[Placed]:
    """The effects ``cmd`` (a command find -exec or xargs builds) has on the words put in at its
    ``{}`` placeholders, or, with ``append`` and no placeholder, after its own words: ``cmd`` read
    with a marker path there, through the same tables as every command."""
    words = [
        Word(w.text.replace("{}", _MARK), True) if w.static and "{}" in w.text else w
        for w in cmd.argv
    ]
    if append and not any(w.static and "{}" in w.text for w in cmd.argv):
        words.append(Word(_MARK, True))
    if not any(_MARK in w.text for w in words[1:]):
        return []
    probe = dataclasses.replace(cmd, argv=tuple(words), redirects=(), context=Context.TOP)
    scratch = _Collector(col.cwd, col.home, col.home_known)
    scratch._tree, scratch._gate = None, ()
    _command(scratch, probe, i, cwd)
    marked = {w.text for w in words[1:] if _MARK in w.text}
    out: list[Placed] = []
    for e in scratch.out:
        if e.path in marked and e.direction is not Direction.NAMED:
            p = Placed(e.direction, e.change, e.replaces, e.deep)
            if p not in out:
                out.append(p)
    return out

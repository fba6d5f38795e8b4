"""Path effects (S2.1): every path the executed commands name, with its direction and class.

Sources, per command: redirect targets; argv operands and option values, read through the
per-program table ``gatesh.vocab.paths.uses.USES`` (a program it does not know reads-or-writes every
word that looks like a path, and writes the values of the generic output options); ``if=``/``of=``
style values; and the string literals of inline code (``node -e``, ``python -c``, ``perl -e``,
``awk``), written when they are the target of a file-writing call. ``~``, ``~user``, ``$HOME``,
``$PWD``, ``..`` and ``cd`` earlier in the line are resolved before classing, and symlinks inside
the working tree are followed (one ``realpath`` per such path). Never raises on odd input; a
path it cannot resolve is kept with class UNKNOWN.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
import posixpath
import pwd
import re
import shlex
import stat
from collections.abc import Iterator, Sequence
from typing import Final

from gatesh import _paths as gate_paths
from gatesh._types import (
    Change,
    Code,
    CodeSource,
    Context,
    Direction,
    PathClass,
    PathEffect,
    SimpleCommand,
    Word,
)
from gatesh.vocab import inline, places, pycode
from gatesh.vocab.grammar import grammar_of, parse
from gatesh.vocab.paths import classes as pathclasses
from gatesh.vocab.paths import settings, uses
from gatesh.vocab.paths.use import PathUse
from gatesh.vocab.programs import interpreters
from gatesh.vocab.words import FIND_FILTERS

from ._known import candidates

R, W, U = Direction.READ, Direction.WRITE, Direction.UNKNOWN

# Redirections that truncate their target (``>>`` appends, ``<>`` opens without truncating).
_TRUNCATING: Final = frozenset({">", ">|", "&>", ">&"})
# Bounds: a line naming more paths than this is judged on the first ones (the rest are noted).
MAX_EFFECTS: Final = 256
_WORD_CAP: Final = 4096  # longer words are code or data, not paths

_HOME_VAR: Final = re.compile(r"^(?:\$HOME|\$\{HOME\})(?=/|$)")
_PWD_VAR: Final = re.compile(r"^(?:\$PWD|\$\{PWD\}|\$\(pwd\))(?=/|$)")
_TMP_VAR: Final = re.compile(r"^(?:\$TMPDIR|\$\{TMPDIR(?::-[^}]*)?\})(?=/|$)")
_URL_FILE: Final = re.compile(r"^file://(?:localhost)?(~?/.*)$", re.I)
# bash's `$(<FILE)`: the file's content, read by the shell itself (inside any word, any command).
_READ_SUBST: Final = re.compile(r"\$\(\s*<\s*([^)\s]+)\s*\)")
# Another host's path (user@host:path, host.domain:path, remote:path) or a URL.
_REMOTE: Final = re.compile(
    r"^(?:[\w.-]+@[\w.\[\]:-]+:|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+:|[\w-]+:(?!//)"
    r"|[a-z][a-z0-9+.-]*://)",
    re.I,
)
# Names that are a path whatever the folder (a bare `cat .netrc` names the credential store).
_SPECIAL_NAMES: Final = re.compile(
    r"^(?:\.netrc|_netrc|\.env(?:\.[\w.-]+)?|\.git-credentials|\.pgpass|"
    r"id_(?:rsa|dsa|ecdsa|ed25519)|\.bash_history|\.zsh_history|"
    r"\.bashrc|\.zshrc|\.profile|\.bash_profile|authorized_keys|shadow)$"
)


# A ~user name, a letters-only tar mode word (`xvf`), the key of a KEY=PATH word.
_USER_NAME: Final = re.compile(r"^[a-z_][\w.-]*$")
_LETTERS: Final = re.compile(r"^[A-Za-z]+$")
_KEY: Final = re.compile(r"^[\w.-]+$")
_FILE_NAME: Final = re.compile(r"^[\w.+-]+\.[A-Za-z0-9]{1,6}$")
_CODEISH: Final = re.compile(r"[()\"'<>|;&{}`$\\,*]")
# A variable a path starts with: home, the working folder or the temporary folder (a path alone),
# or any other variable, defaulted or not, before a `/` (`$XDG_STATE_HOME/gatesh`).
_VAR_PREFIX: Final = re.compile(
    r"^(?:\$HOME|\$\{HOME\}|\$PWD|\$\{PWD\}|\$TMPDIR|\$\{TMPDIR(?::-[^}]*)?\})(?=/|$)"
    r"|^(?:\$[A-Za-z_]\w*|\$\{[A-Za-z_]\w*(?::?[-=+?][^{}]*)?\})(?=/)"
)


# Words repeat from line to line (`-f`, `path/to/file`, `.`): the answers below are pure functions of
# their arguments and are remembered, at most this many of each (a few hundred KiB at most).
_CACHE_SIZE: Final = 4096


def looks_like_path(text: str) -> bool:
    """A word an unknown program may take as a file: absolute, home-relative, dotted-relative,
    holding a slash, or a well-known credential or startup file name; never code or a remote path.

    Remembered for words up to ``_WORD_CAP`` long (longer ones are never paths), so the cache's
    keys stay small whatever an agent sends."""
    return len(text) <= _WORD_CAP and _looks_like_path(text)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _looks_like_path(text: str) -> bool:
    if not text or len(text) > _WORD_CAP or "\n" in text or text.startswith("-"):
        return False
    if _REMOTE.match(text) and not _URL_FILE.match(text):
        return False
    if text.startswith("//"):
        return False  # `//render/x` (blender), `//h:h1` (an XPath): not a POSIX path an agent means
    core = _VAR_PREFIX.sub("", text)
    if _CODEISH.search(core.replace("*", "")):
        return False
    if " " in core and not text.startswith(("/", "~/")):
        return False
    if core != text or text[0] in "/~" or text.startswith(("./", "../")) or "/" in text:
        return True
    return bool(_SPECIAL_NAMES.match(text))


@functools.lru_cache(maxsize=64)
def _user_home(name: str) -> str | None:
    try:
        return pwd.getpwnam(name).pw_dir
    except (KeyError, OSError):
        return None


def resolve(text: str, cwd: str | None, home: str, *, static: bool, home_known: bool = True) -> str:
    """``text`` as an absolute normalised path ("" when it depends on an unknown value)."""
    t = text
    if not static:
        if not home_known and t.lstrip('"').startswith("~"):
            return ""
        values, unknown = candidates(t, cwd, home if home_known else None)
        if unknown or len(values) != 1:
            return ""
        t = values[0]
    m = _URL_FILE.match(t)
    if m:
        t = m.group(1)
    if t == "~" or t.startswith("~/"):
        t = home + t[1:]
    elif t.startswith("~"):
        name, _, rest = t[1:].partition("/")
        other = _user_home(name) if _USER_NAME.match(name) else None
        if other is None:
            return ""
        t = other + ("/" + rest if rest else "")
    if not t.startswith("/"):
        if not cwd:
            return ""
        t = posixpath.join(cwd, t)
    norm = posixpath.normpath(t)
    return "/" if norm.startswith("//") else norm


def tree_root(cwd: str | None, home: str) -> str | None:
    """The working tree of ``cwd``: the enclosing git work tree, else ``cwd`` itself; None when
    ``cwd`` is unknown, ``/``, the home folder, or a folder of the machine itself."""
    if not cwd or not cwd.startswith("/"):
        return None
    d = posixpath.normpath(cwd)
    probe = d
    for _ in range(32):  # bounded walk up
        if probe not in ("/", home) and os.path.lexists(probe + "/.git"):
            return probe if pathclasses.tree_root_ok(probe) else None
        parent = posixpath.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if d in ("/", home) or not pathclasses.tree_root_ok(d):
        return None
    return d


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _classify(
    path: str, home: str, tree: str | None, gate: tuple[str, ...]
) -> tuple[PathClass, pathclasses.PathRow | None]:
    """``pathclasses.classify``, remembered: it matches strings only (no file system, no environment),
    so its answer is a function of exactly these arguments."""
    return pathclasses.classify(path, home=home, tree=tree, gate=gate)


def real_path(path: str) -> str:
    """``os.path.realpath(path)`` of an absolute, normalised ``path``, with one ``lstat`` per
    component and no more: a path none of whose components is a symlink is its own real path (a
    component that does not exist ends the walk: nothing below it exists either, and realpath
    keeps such a tail as written); at the first symlink, ``os.path.realpath`` resolves it all."""
    k = 0
    while True:
        k = path.find("/", k + 1)
        try:
            st = os.lstat(path if k < 0 else path[:k])
        except OSError:
            return path
        if stat.S_ISLNK(st.st_mode):
            return os.path.realpath(path)
        if k < 0:
            return path


def _home() -> str:
    """``os.path.expanduser("~")``: ``HOME`` without its trailing slashes when it is set (what
    expanduser computes, without its general machinery: this runs once per reading)."""
    home = os.environ.get("HOME")
    if home is None:
        return os.path.expanduser("~")
    return home.rstrip("/") or "/"


def _gate_roots() -> tuple[str, ...]:
    """gatesh's own places (config, state, runtime, data, system tier and the installation its
    record names: ``gatesh.vocab.places``), for the class of a path a person reads. Only a label:
    what touching any of them means is decided by self-protection (S3.4), from the same table,
    before any rating."""
    paths = gate_paths.current()
    return places.gate_roots(paths, paths.installation())


class _Collector:
    """Builds the effects of one reading, with the context every path needs to be classed."""

    def __init__(self, cwd: str | None, home: str, home_known: bool) -> None:
        self.cwd = cwd
        self.home = home
        self.home_known = home_known
        self._tree: str | bool | None = False  # False: not looked up yet
        self._gate: tuple[str, ...] | None = None
        self.out: list[PathEffect] = []
        self._seen: set[tuple[str, Direction, int, bool, Change, bool]] = set()

    @property
    def tree(self) -> str | None:
        """The working tree's root, looked up on the first path that needs classing."""
        if self._tree is False:
            self._tree = tree_root(self.cwd, self.home)
        return self._tree  # type: ignore[return-value]

    @property
    def gate(self) -> tuple[str, ...]:
        """gatesh's own roots, computed on the first path that needs classing (most lines have none)."""
        if self._gate is None:
            self._gate = _gate_roots()
        return self._gate

    def add(
        self,
        text: str,
        static: bool,
        direction: Direction,
        index: int,
        cwd: str | None,
        via: str,
        replaces: bool = False,
        only: str = "",
        change: Change = Change.CONTENT,
        deep: bool = False,
        partial: bool = False,
        reach: int | None = None,
    ) -> None:
        if len(self.out) >= MAX_EFFECTS or not text or len(text) > _WORD_CAP:
            return
        key = (text, direction, index, replaces, change, deep)
        if key in self._seen:
            return
        self._seen.add(key)
        if static and text.startswith("@") and len(text) > 1:
            text = text[1:]  # response files and curl's @file
        # the effect as it is when the path cannot be resolved; resolved ones are copies of it
        blank = PathEffect(
            text,
            "",
            direction,
            PathClass.UNKNOWN,
            index,
            via,
            replaces,
            only,
            "",
            change,
            deep,
            partial,
            reach,
        )
        if not static:
            self._dynamic(blank, cwd)
            return
        resolved = resolve(text, cwd, self.home, static=static, home_known=self.home_known)
        if not resolved:
            self.out.append(blank)
            return
        resolved = self._follow(resolved)
        # With a glob filter (`find /tmp -name '*.swp' -delete`) the files touched are the ones
        # under the folder the glob keeps, not the folder: they are classed as such a file (not
        # under `/`, whose files are every class there is). Likewise a write that replaces nothing
        # in a temporary folder itself (`mktemp -p /tmp`, `tar -C /tmp -x`) makes files in it:
        # only emptying or replacing the folder loses it.
        inside = (
            (only and resolved != "/")
            or (partial and pathclasses.temp_root(resolved))
            or (direction is not R and not replaces and pathclasses.temp_root(resolved))
        )
        member = posixpath.join(resolved, "x") if inside else resolved
        self.out.append(self._classed(blank, resolved, member))

    def _classed(self, blank: PathEffect, resolved: str, member: str) -> PathEffect:
        """``blank`` (an effect not yet resolved) at ``resolved``, classed as ``member`` is."""
        cls, row = _classify(member, self.home, self.tree, self.gate)
        return dataclasses.replace(
            blank, resolved=resolved, cls=cls, kind=row.name if row is not None else ""
        )

    def _dynamic(self, blank: PathEffect, cwd: str | None) -> None:
        """A path only known when it runs: one effect per value the gate can work out
        (``_known.candidates``), and ``blank`` (unresolved) when it may also be another."""
        text = blank.path
        if not self.home_known and text.lstrip('"').startswith("~"):
            values: tuple[str, ...] = ()
            unknown = True
        else:
            values, unknown = candidates(text, cwd, self.home if self.home_known else None)
        for value in values:
            resolved = resolve(value, cwd, self.home, static=True) if value else ""
            if not resolved:
                unknown = True
                continue
            resolved = self._follow(resolved)
            self.out.append(self._classed(blank, resolved, resolved))
        if unknown or not values:
            self.out.append(blank)

    def _follow(self, path: str) -> str:
        """Symlinks inside the working tree resolved (S2.1); other paths stay lexical."""
        tree = self.tree
        if (
            tree
            and (path == tree or path.startswith(tree + "/"))
            and not any(ch in path for ch in "*?[")
        ):
            try:
                return real_path(path)
            except (OSError, ValueError):
                return path
        return path


def _is_python(head: str) -> bool:
    lang = interpreters.interpreter(head)
    return lang is not None and lang.name == "python"


def _python_files(col: _Collector, code: str, i: int, cwd: str | None) -> None:
    """The files Python ``code`` opens by a name it spells out, relative names included (``open``
    is given a path whatever it looks like)."""
    for use in pycode.file_uses(code):
        col.add(
            use.name, True, W if use.writes else R, i, cwd, "inline code", replaces=use.replaces
        )


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
        if cmd.remote or cmd.context == "remote":
            _elsewhere(col, cmd, i)
            continue
        _command(col, cmd, i, cur, commands[i + 1 : i + 4])
        if i in defined:
            _python_files(col, defined[i], i, cur)
        for w in fed.get(i, ()):
            col.add(w.text, w.static, U, i, cur, "piped name")
        if cmd.context == "xargs":
            _fed_to_xargs(col, commands, pipelines, i, cur)
        if cmd.head in ("cd", "pushd", "chdir") and cmd.context in ("top", "function"):
            folder = _cd_operand(cmd)
            if folder is not None:
                col.add(folder.text, folder.static, Direction.NAMED, i, cur, "cd")
            cur = _cd(cmd, cur, h)
    return tuple(col.out)


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
            col.out.append(dataclasses.replace(e, via=f"{e.via} on another host or in a container"))


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
            if dst.context == "xargs":
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
                        "piped name",
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


def _command(
    col: _Collector,
    cmd: SimpleCommand,
    i: int,
    cwd: str | None,
    following: Sequence[SimpleCommand] = (),
) -> None:
    for r in cmd.redirects:
        if r.target is None and r.writes and r.text:
            # a target only known when it runs (`> "$f"`, `> ${XDG_STATE_HOME:-…}/x`)
            col.add(r.text, False, W, i, cwd, "redirect", replaces=r.op in _TRUNCATING)
            continue
        if r.target is None or r.op.startswith("<<"):
            continue
        if r.op in (">&", "<&") and (r.target.isdigit() or r.target == "-"):
            continue
        if r.writes:
            col.add(r.target, True, W, i, cwd, "redirect", replaces=r.op in _TRUNCATING)
        elif r.op == "<>":
            col.add(r.target, True, U, i, cwd, "redirect")
        else:
            col.add(r.target, True, R, i, cwd, "redirect")
    head = cmd.head
    words = list(cmd.argv[1:])
    _wrapped(col, cmd, i, cwd)
    program = cmd.argv[0] if cmd.argv else None
    if program is not None and not program.static and "/" in program.text:
        # a program named by a path only known when it runs (`"$HOME/venv/bin/pip"`)
        if looks_like_path(program.text.replace('"', "")):
            col.add(program.text, False, R, i, cwd, "program")
    if head == "find":
        _find(col, cmd, words, i, cwd, [c for c in following if c.context.startswith("find")])
        return
    for w in words:
        if "$(" not in w.text:
            continue  # what every match starts with (most words: skipped without the pattern)
        for m in _READ_SUBST.finditer(w.text):
            col.add(m.group(1).strip("'\""), True, R, i, cwd, "redirect")
    for w in (
        words
    ):  # a file:// URL names a local file, whatever the program (curl, aws --cli-input-json …)
        t = w.text
        k = t.find("file://")
        if w.static and k >= 0:
            url = _URL_FILE.match(t[k:].split(",", 1)[0])
            if url:
                col.add(url.group(1), True, R, i, cwd, "argv")
    if head in _NAME_ONLY_READS:
        for k, w in enumerate(words[:-1]):
            if w.static and w.text in _NAME_ONLY_READS[head]:
                col.add(words[k + 1].text, words[k + 1].static, R, i, cwd, "option")
    if head == "man" and any(w.static and "/" in w.text for w in words):
        for w in words:
            if w.static and "/" in w.text and not w.text.startswith("-"):
                col.add(w.text, True, R, i, cwd, "argv")  # man renders a file named by a path
        return
    if not head or head in uses.NAME_ONLY or not cmd.argv:
        return
    if head in ("docker", "podman", "nerdctl") and len(words) >= 3 and words[0].text == "cp":
        local = [w for w in words[1:] if not w.text.startswith("-") and ":" not in w.text]
        if local and ":" in words[-1].text:
            col.add(local[0].text, local[0].static, R, i, cwd, "argv")
        elif local and local[-1] is words[-1]:
            col.add(words[-1].text, words[-1].static, W, i, cwd, "argv", replaces=True)
        return
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
                    "argv",
                    replaces="trunc" in opts or kind == "create",
                )
        return
    if head in ("sed", "gsed"):
        for w in words:
            if w.static:
                for m in _SED_WRITE.finditer(w.text):
                    col.add(m.group(1), True, W, i, cwd, "inline code", replaces=True)
    if head in ("sqlite3", "sqlite", "duckdb"):
        db = next((w for w in words if not (w.static and w.text.startswith("-"))), None)
        if db is not None:  # the database file, perhaps as an SQLite URI (file:PATH?mode=ro)
            text = db.text.replace('"', "")
            text = text[5:] if text.startswith("file:") else text
            col.add(text.split("?", 1)[0], db.static, U, i, cwd, "argv")
        for text in [w.text for w in words if w.static] + ([cmd.raw] if _heredoc(cmd) else []):
            for m in _SQLITE_DOT.finditer(text):
                verb = m.group(1).lower()
                writes = verb in ("output", "once", "save", "backup", "dump", "excel")
                col.add(
                    m.group(2), True, W if writes else R, i, cwd, "inline code", replaces=writes
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
                        "option",
                        replaces=direction is W,
                    )
        return
    if head in uses.CREDENTIAL_USERS:
        return  # loading or using a key is the key's purpose
    for setting in settings.setting_writes(head, [w.text for w in words if w.static]):
        col.add(setting, True, W, i, cwd, "implicit")  # `pip config set …` writes pip.conf
    implicit = uses.IMPLICIT_WRITES.get(head)
    if implicit is not None and not any(
        w.static and w.text in ("-c", "--check", "-f", "--file") for w in words
    ):
        col.add(implicit, True, W, i, cwd, "implicit")
    if head in ("tar", "gtar", "bsdtar"):
        _tar(col, words, i, cwd)
        return
    if interpreters.is_interpreter(head) or head in _CODE_PROGRAMS:
        python = _is_python(head)
        for code in _inline_code(cmd):
            deleted = removed(code)
            for text, direction, replaces in code_paths(code):
                change = Change.REMOVE if text in deleted else Change.CONTENT
                col.add(
                    text, True, direction, i, cwd, "inline code", replaces=replaces, change=change
                )
            if python:
                _python_files(col, code, i, cwd)
    use = uses.use_of(head)
    if use is None and interpreters.is_interpreter(head):
        use = _INTERPRETER_USE
    if cmd.argv[0].static and "/" in cmd.argv[0].text:
        # the program file itself is read to run it
        col.add(cmd.argv[0].text, True, R, i, cwd, "program")
    _argv(col, cmd, words, use, i, cwd)
    if use is None or use is _INTERPRETER_USE or head in _EMBEDDERS:
        _embedded(col, cmd, words, i, cwd)


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
                col.add(path, True, U, i, cwd, "embedded")


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
                "argv",
                replaces="-a" not in rest and "--append" not in rest,
            )
    wanted = [w for w in wanted if w != "script"]
    for k, w in enumerate(words[:-1]):
        for wrapper in wanted:
            direction = _WRAPPER_PATHS[wrapper].get(w)
            if direction is not None:
                col.add(words[k + 1], True, direction, i, cwd, "option", replaces=direction is W)


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
            col.add(rest[j + 1].text, rest[j + 1].static, W, i, cwd, "option", replaces=True)
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
                "argv",
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
                    "argv",
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
            "option",
            replaces=mode == "c",
        )
    if mode == "x":
        # everything the archive holds lands in its folder (the current one without -C)
        place = folder if folder is not None else Word(".")
        col.add(place.text, place.static, W, i, cwd, "option", deep=True)
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
    head = cmd.head
    cred_opts = uses.CREDENTIAL_OPTIONS.get(head, frozenset())
    writes = use.writes if use else uses.generic_output(head)
    reads = use.reads if use else frozenset()
    values = uses.HEAD_VALUES.get(head, use.values if use else frozenset())
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
    modes = _pattern(use.modes) if use is not None and use.modes else None
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
                    "option",
                    replaces=direction is W and (replaces or use is None),
                    deep=deep and direction is W,
                )
            k += 1 if eq else 2
            continue
        if name in values:
            k += 1 if eq else 2
            continue
        if eq and looks_like_path(value):
            col.add(value, True, U, i, cwd, "option")
        elif (
            not name.startswith("--")
            and len(name) > 2
            and name[:2] in writes
            and looks_like_path(name[2:])
        ):
            col.add(name[2:], True, W, i, cwd, "option", replaces=replaces or use is None)
        k += 1
    _skip_and_operands(col, cmd, operands, use, i, cwd, replaces, editing, flags, deep)


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
                    "option",
                    replaces=direction is W and (replaces or use is None) and not into,
                    deep=deep and direction is W,
                )
        elif attached and o.name.startswith("--") and looks_like_path(o.value):
            col.add(o.value, True, U, i, cwd, "option")
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
                        "argv",
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
            col.add(t, False, direction, i, cwd, "argv", replaces, "", change, deep)
        return
    if all_operands or looks_like_path(t):
        if "=" in t and not t.startswith(("/", "~", ".")):
            key, _, value = t.partition("=")
            if looks_like_path(value) and _KEY.match(key):
                col.add(value, True, direction, i, cwd, "option", replaces, "", change, deep)
            return
        col.add(t, True, direction, i, cwd, "argv", replaces, "", change, deep)
    elif "=" in t:
        key, _, value = t.partition("=")
        if _KEY.match(key) and looks_like_path(value):
            col.add(value, True, direction, i, cwd, "option", False, "", change, deep)


# --- inline code ----------------------------------------------------------------------------------

_INLINE_FLAGS: Final = frozenset(
    {"-c", "-e", "-E", "-r", "--eval", "-eval", "-p", "--print", "-x", "--execute"}
)
# Programs that are not interpreters of the table but run the code they are given inline: awk,
# and emacs's --eval (Lisp).
_CODE_PROGRAMS: Final = frozenset({"awk", "gawk", "mawk", "nawk", "emacs", "emacsclient"})
_LITERAL: Final = re.compile(r"""(['"`])((?:/|~/|\./|\.\./)[^'"`\s$]{1,512}?)\1""")
# A relative file name in program text: a dotted name or a name with a folder (`.git/config`).
_REL_LITERAL: Final = re.compile(r"""(['"`])((?:\.[\w.-]+|[\w.-]+/[\w./-]+))\1""")
# A perl/ruby open mode written into the literal: open(F, ">/etc/x"), open(">>log").
_MODE_LITERAL: Final = re.compile(r"""(['"])\s*(\+?[<>]{1,2})\s*((?:/|~/)[^'"\s]{1,512})\1""")
# A file-writing call of the table whose first argument is a literal path, and `open(LIT, "w")`:
# the path is written whatever it looks like (`File.write("src/app.py", "")`).
_WRITE_LITERAL: Final = re.compile(
    rf"(?:{inline.pattern_of(inline.ApiKind.WRITE)})\s*\(?\s*(['\"])([^'\"\n]{{1,512}})\1"
)
_OPEN_LITERAL: Final = re.compile(
    r"(?<![\w.])(?:open|fopen|File\.open|io\.open|codecs\.open)\s*\(\s*(['\"])([^'\"\n]{1,512})\1"
    r"\s*,\s*(?:mode\s*=\s*)?['\"]([rwax+bt]+)['\"]"
)
_WRITE_CALL: Final = re.compile(
    r"(?:writeFileSync|writeFile|appendFileSync|appendFile|createWriteStream|copyFileSync|copyFile|renameSync|rename"
    r"|symlinkSync|symlink|linkSync|write_text|write_bytes|File\.write|IO\.write|file_put_contents|fputs|fwrite"
    r"|shutil\.(?:copy\w*|move)|os\.(?:rename|replace|symlink|link)|Files\.write\w*|FileWriter|FileOutputStream"
    r"|PrintWriter|fs\.promises\.writeFile|Deno\.writeTextFile|Deno\.writeFile|Bun\.write|\bcp\s*\("
    r"|\bprint\b[^;\n]*>|\bprintf\b[^;\n]*>)\s*\(?[^;\n]*$"
)
# A call that reads the file it is given, or lists the folder (or pattern) it is given: a listing
# reads names, what is then done with each name found is the code rules' business.
_READ_CALL: Final = re.compile(
    r"(?:readFileSync|readFile|createReadStream|read_text|read_bytes|File\.read|IO\.read|file_get_contents|readlines"
    r"|Files\.read\w*|FileReader|FileInputStream|Deno\.readTextFile|Bun\.file|getline|\bopen|\bfopen|\brequire"
    rf"|\bload|\bslurp|\bcat|{inline.pattern_of(inline.ApiKind.LIST)})\s*\(?[^;\n]*$"
)
# Calls that delete or truncate the file they are given, in the languages inline code is written in
# (the one table of inline-code calls, gatesh.vocab.inline, and Java's).
_DELETERS: Final = inline.pattern_of(inline.ApiKind.DELETE) + r"|Files\.delete\w*"
_CALL_OPEN: Final = r"\s*\(?\s*(?:glob\s*\(?\s*)?(?:Path\s*\(\s*)?"
_DELETE_CALL: Final = re.compile(rf"(?:{_DELETERS}|\.unlink|\.rmtree|\btruncate){_CALL_OPEN}$")
# A deletion call's literal argument, whatever it looks like (`os.remove('notes.txt')`).
_DELETE_LITERAL: Final = re.compile(rf"(?:{_DELETERS}){_CALL_OPEN}(['\"])([^'\"\n]{{1,512}})\1")
_APPEND_CALL: Final = re.compile(r"append|>>\s*$|['\"]a\+?['\"]")
# A mode after the literal: open("/etc/x", "w"), fopen("/x", "a"), File.open("/x", "w").
_MODE_AFTER: Final = re.compile(r"""^\s*,\s*(?:mode\s*=\s*)?['"]([rwax+bt]+)['"]""")


def _inline_code(cmd: SimpleCommand) -> Iterator[str]:
    args = cmd.argv[1:]
    head = cmd.head
    if head in ("awk", "gawk", "mawk", "nawk"):
        for w in args:
            if w.static and not w.text.startswith("-") and len(w.text) > 3:
                yield w.text
                return
        return
    flags = interpreters.inline_opts(head) or _INLINE_FLAGS
    for k, w in enumerate(args):
        if w.static and w.text in flags and k + 1 < len(args) and args[k + 1].static:
            yield args[k + 1].text
        elif w.static and len(w.text) > 2 and w.text[:2] in flags and not w.text.startswith("--"):
            yield w.text[2:]
    if any(r.op.startswith("<<") for r in cmd.redirects) and cmd.raw:
        yield cmd.raw[:65536]


def removed(code: str) -> frozenset[str]:
    """The literal paths ``code`` hands a deletion call (``os.remove('x')``, ``unlink "/y"``)."""
    if len(code) > 65536:
        code = code[:65536]
    out = {m.group(2) for m in _DELETE_LITERAL.finditer(code)}
    for m in _LITERAL.finditer(code):
        before = code[max(0, m.start() - 80) : m.start()]
        if _DELETE_CALL.search(before.rsplit(";", 1)[-1].rsplit("\n", 1)[-1]):
            out.add(m.group(2))
    return frozenset(out)


def code_paths(code: str) -> Iterator[tuple[str, Direction, bool]]:
    """(path, direction, replaces) for each path literal in ``code``, by the call it is given to."""
    if len(code) > 65536:
        code = code[:65536]
    for m in _MODE_LITERAL.finditer(code):
        mode = m.group(2)
        if ">" in mode:
            yield m.group(3), W, ">>" not in mode and "+<" not in mode
        else:
            yield m.group(3), R, False
    taken: set[int] = set()
    for m in _DELETE_LITERAL.finditer(code):
        taken.add(m.start(2))
        yield m.group(2), W, True
    for m in _WRITE_LITERAL.finditer(code):
        if m.start(2) not in taken:
            taken.add(m.start(2))
            yield m.group(2), W, "append" not in m.group(0).lower()
    for m in _OPEN_LITERAL.finditer(code):
        if m.start(2) not in taken:
            taken.add(m.start(2))
            mode = m.group(3)
            if any(ch in mode for ch in "wax+"):
                yield m.group(2), W, "w" in mode
            else:
                yield m.group(2), R, False
    for m in _REL_LITERAL.finditer(code):
        # a relative name (`'.git/config'`, `'.gitconfig'`) counts only as a file call's argument
        if m.start(2) in taken:
            continue
        before = code[max(0, m.start() - 80) : m.start()]
        before = before.rsplit(";", 1)[-1].rsplit("\n", 1)[-1]
        after = _MODE_AFTER.match(code[m.end() : m.end() + 24])
        if after is not None:
            taken.add(m.start(2))
            mode = after.group(1)
            if any(ch in mode for ch in "wax+"):
                yield m.group(2), W, "w" in mode
            else:
                yield m.group(2), R, False
        elif _WRITE_CALL.search(before):
            taken.add(m.start(2))
            yield m.group(2), W, not _APPEND_CALL.search(before)
    for m in _LITERAL.finditer(code):
        path = m.group(2)
        if m.start(2) in taken:
            continue
        before = code[max(0, m.start() - 80) : m.start()]
        before = before.rsplit(";", 1)[-1].rsplit("\n", 1)[-1]
        after = _MODE_AFTER.match(code[m.end() : m.end() + 24])
        if after is not None:
            mode = after.group(1)
            if any(ch in mode for ch in "wax+"):
                yield path, W, "w" in mode
            else:
                yield path, R, False
        elif _DELETE_CALL.search(before):
            yield path, W, True
        elif _WRITE_CALL.search(before):
            yield path, W, not _APPEND_CALL.search(before)
        elif _READ_CALL.search(before):
            yield path, R, False
        else:
            yield path, U, False

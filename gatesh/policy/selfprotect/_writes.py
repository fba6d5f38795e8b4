"""Writes and removals of protected places, read from the reader's path facts.

Every path a command writes, removes, re-modes or creates is a path effect of the reader
(``Facts.paths``, S2.1): redirections, the per-program path table, find's and xargs' fed names,
inline code's path literals. Self-protection matches each against the protected places
(:meth:`Protected.hit`) and adds what no path names: the venv's own package installer (whatever
it installs becomes the gate's code), inline code that names a place by a spelling the reader
does not resolve (``os.path.join(os.environ["HOME"], ".claude", …)``), and work done inside a
protected folder after ``cd`` by a program not known to only read.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Final

from gatesh._types import Change, Direction, Facts, PathEffect, SimpleCommand, Via
from gatesh.vocab.programs.interpreters import interpreter, invocation, is_interpreter
from gatesh.vocab.reads import command_reads
from gatesh.vocab.words import inline_code

from ._places import Kind, Protected, anywhere

__all__ = ["Act", "Touch", "touches"]


class Act(enum.Enum):
    """What a command does to a protected place."""

    REMOVE = "remove"  # deletes it or moves it away
    WRITE = "write"  # writes, replaces, re-modes or creates it
    WORK_IN = "work in"  # changes into it, then runs a program not known to only read
    STAMP = "stamp"  # only sets its times, or creates it empty when missing (touch)


@dataclass(frozen=True)
class Touch:
    """One protected place a command changes: its rule family and what is done to it."""

    kind: Kind
    act: Act


_REMOVALS: Final = frozenset({Change.REMOVE, Change.REMOVE_EMPTY})
# Programs whose writes only set a file's times or create it empty when it is missing: what the
# file holds is never written, so a record they name keeps every line it had.
_STAMPERS: Final = frozenset({"touch"})


def touches(
    cmd: SimpleCommand, index: int, effects: list[PathEffect], facts: Facts, prot: Protected
) -> tuple[Touch, ...]:
    """Every protected place command ``index`` changes, in the order its effects name them;
    ``effects`` are its path effects."""
    out: list[Touch] = []
    for e in effects:
        d = e.direction
        if d is Direction.NAMED:
            if e.via is Via.CD:
                kind = _worked_in(e, index, facts, prot)
                if kind is not None:
                    out.append(Touch(kind, Act.WORK_IN))
            continue
        if e.via is Via.PROGRAM:
            if _venv_installer(cmd, e, prot):
                out.append(Touch(Kind.INSTALL, Act.WRITE))
            continue
        if not d.writes:
            continue
        kind = prot.hit(e)
        if kind is not None:
            out.append(Touch(kind, _act(cmd, e)))
    if is_interpreter(cmd.head):
        kind = _code_names(cmd, prot)
        if kind is not None:
            out.append(Touch(kind, Act.WRITE))
    return tuple(out)


def _act(cmd: SimpleCommand, e: PathEffect) -> Act:
    """What writing effect ``e`` of ``cmd`` does to its place."""
    if e.change in _REMOVALS:
        return Act.REMOVE
    if cmd.head in _STAMPERS and e.via is Via.ARGV and e.change is Change.CONTENT:
        return Act.STAMP
    return Act.WRITE


def _worked_in(e: PathEffect, index: int, facts: Facts, prot: Protected) -> Kind | None:
    """``cd ~/.config/gatesh && make``: the folder changed into is a protected place and a later
    command is not known to only read (what it writes there, it writes in the gate)."""
    if not e.resolved:
        return None
    kind = prot.kind_of(e.resolved) or anywhere(e.resolved)
    if kind is None:
        return None
    for c in facts.commands[index + 1 :]:
        if c.head not in ("cd", "pushd", "popd") and not command_reads(c):
            return kind
    return None


# Package installers a venv's bin folder holds: what they install or remove is the venv's code.
_INSTALLERS: Final = re.compile(r"^(?:pip|easy_install|uv)")
_INSTALLER_MODULES: Final = frozenset({"pip", "ensurepip", "uv"})
_GATE_VENV_BIN: Final = re.compile(r"(?:^|/)gatesh/venv/bin/[^/]+$")


def _venv_installer(cmd: SimpleCommand, e: PathEffect, prot: Protected) -> bool:
    """True when the program ``e`` names is a package installer of gatesh's venv (its ``pip``,
    its ``python -m pip``): whatever it installs or removes becomes the gate's code."""
    path = e.resolved
    if not path or not (
        any(path.startswith(v + "/") for v in prot.venvs) or _GATE_VENV_BIN.search(path)
    ):
        return False
    program = path.rsplit("/", 1)[-1]
    if _INSTALLERS.match(program):
        return True
    lang = interpreter(program)
    if lang is None:
        return False
    how = invocation(lang, cmd.args, tuple(w.static for w in cmd.argv[1:]))
    return how.module_name in _INSTALLER_MODULES


# A call in program text that writes, moves or removes a file.
_WRITE_CODE: Final = re.compile(
    r"""open\(.*?,\s*['"](?:[wax]|r\+)|mode\s*=\s*['"][wax]|\.write|remove|unlink|rmtree|rename|replace|chmod"""
    r"""|truncate|mkdir|writeFile|appendFile|rmSync|rm\(|copy|move|symlink|link\(|write_text|write_bytes"""
    r"""|dump\(|File\.write|IO\.write|>>?\s*['"$]"""
)
# What inline code may call protected places by, besides the paths the reader resolves: their
# default layout anywhere in the text, and joins of their parts (most specific first).
_TEXT_KINDS: Final[tuple[tuple[Kind, re.Pattern[str]], ...]] = (
    (
        Kind.INSTALL,
        re.compile(r"\.local/bin/gatesh\b|man1/gatesh\.1|gatesh/(?:venv|shims|install\.json)\b"),
    ),
    (Kind.GIT_HOOKS, re.compile(r"gatesh/git-hooks\b")),
    (
        Kind.FILES,
        re.compile(
            r"/etc/gatesh\b|\.config/gatesh\b|\.local/(?:state|share)/gatesh\b|gatesh-\d+\b"
        ),
    ),
    (
        Kind.TRANSCRIPT,
        re.compile(
            r"\.claude/projects\b|\.codex/sessions\b|\.gemini/tmp\b"
            r"|['\"]\.claude['\"][\s\S]{0,40}['\"]projects['\"]"
        ),
    ),
    (
        Kind.HARNESS,
        re.compile(
            r"\.claude/settings(?:\.local)?\.json|\.gemini/settings\.json|\.codex/(?:config\.toml|hooks\.json)"
            r"|\.(?:claude|gemini|codex)['\"]?[\s\S]{0,40}(?:settings(?:\.local)?\.json|config\.toml|hooks\.json)"
            r"|disableAllHooks"
        ),
    ),
)
# How program text names the home folder: each is read as `~` before the places are looked for.
_HOME_IN_CODE: Final = re.compile(
    r"""\$\{?HOME\}?|\$ENV\{['"]?HOME['"]?\}|ENV\[['"]HOME['"]\]|process\.env\.HOME|\$\{process\.env\.HOME\}"""
    r"""|os\.environ\[['"]HOME['"]\]|os\.getenv\(['"]HOME['"]\)|os\.path\.expanduser\(['"]~['"]\)"""
    r"""|Path\.home\(\)|(?:require\(['"]os['"]\)|os)\.homedir\(\)|\$\{os\.homedir\(\)\}|Dir\.home|getenv\(['"]HOME['"]\)"""
)


def program_texts(cmd: SimpleCommand) -> tuple[str, ...]:
    """The program text an interpreter runs: its inline code (``-c``/``-e``), or its source text
    when a here-document or here-string feeds it (``python3 - <<EOF …``)."""
    fed = is_interpreter(cmd.head) and any(r.op in ("<<", "<<-", "<<<") for r in cmd.redirects)
    return (*inline_code(cmd), cmd.raw) if fed else inline_code(cmd)


def code_writes(cmd: SimpleCommand) -> bool:
    """Whether the program text ``cmd`` runs calls something that writes, moves or removes."""
    return any(_WRITE_CODE.search(code) for code in program_texts(cmd))


def _code_names(cmd: SimpleCommand, prot: Protected) -> Kind | None:
    """The kind of protected place the program text of ``cmd`` names next to a call that writes."""
    for code in program_texts(cmd):
        if not _WRITE_CODE.search(code):
            continue
        for kind, pattern in _TEXT_KINDS:
            if pattern.search(code):
                return kind
        folded = _HOME_IN_CODE.sub("~", code)
        for root, kind in sorted(prot.roots, key=lambda rk: -len(rk[0])):
            if root in code:
                return kind
            if root.startswith(prot.home + "/") and "~" + root[len(prot.home) :] in folded:
                return kind
    return None

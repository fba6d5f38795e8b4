"""Self-protection (S3.4): tampering with the gate is an attack, at every rung.

Families, one table: changing gatesh's own files (config, state, audit log, socket, the system
tier) or its installation (launcher, shims, venv, man page, install record); switching a harness's
hooks off (the settings and hooks files gatesh wrote entries into, and the settings that disable
hooks wherever the harness reads them); forging a harness's transcript; switching gatesh's git
hooks off (the hook scripts, ``core.hooksPath``, ``init.templateDir``); pointing an inner gatesh
at other folders by environment; stopping or tracing the daemon; disarming the shell hook of a
gated session; and leaving the gate (a human-only verb, or a shell that nothing gates). A
project's ``.gatesh.toml`` is not protected: that tier can only tighten (S12), so editing it is
ordinary work.

Where the installation is comes from its install record, read at every check
(:meth:`gatesh._paths.GatePaths.installation`, turned into places by :func:`protected_for`), as
well as the default places. Reading any of these files stays ordinary work; so does setting git's ``user.*``
and ``remote.*`` keys, and editing the project's own files.
"""

from __future__ import annotations

import enum
import fnmatch
import functools
import os
import posixpath
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from gatesh._paths import GatePaths, environ_values
from gatesh._types import Facts, Finding, Outcome, SimpleCommand
from gatesh.policy._rules import (
    FIND_FILTERS,
    canon_path,
    has_long,
    has_short,
    inline_code,
    option_values,
    reads_code_from_stdin,
    split_args,
    unquote,
)
from gatesh.vocab import places
from gatesh.vocab.paths import GIT_HOOK_MARKER, GIT_HOOK_NAMES
from gatesh.vocab.programs import SHELLS, is_interpreter

__all__ = ["RULES", "SelfRule", "check"]


class Kind(enum.Enum):
    """Which part of the gate a protected path is, for the rule that names it."""

    FILES = "files"  # config, state, audit log, socket, the system tier
    INSTALL = "install"  # launcher, shims, venv, man page, install record
    HARNESS = "harness"  # a harness's settings or hooks file
    TRANSCRIPT = "transcript"  # a harness's session transcripts
    SNAPSHOT = "snapshot"  # a harness's shell snapshots (sourced before each command, unread)
    GIT_HOOKS = "git-hooks"  # the git hooks gatesh installed


@dataclass(frozen=True)
class Protected:
    """The protected locations of one check, absolute, computed once per call.

    ``roots`` pairs each path with its kind; a path covers itself and everything under it. ``cwd``
    resolves relative paths for the checks that read the disk (a repository's git hooks).
    """

    roots: tuple[tuple[str, Kind], ...]
    home: str
    volatile: tuple[str, ...] = ()  # roots matched only themselves, never through a parent folder
    cwd: str = ""
    launchers: tuple[str, ...] = ()
    venvs: tuple[str, ...] = ()
    shims: tuple[str, ...] = ()
    git_global: bool = False
    paths: GatePaths | None = None
    values: tuple[
        tuple[str, str], ...
    ] = ()  # NAME=value statements of this text with a static value

    def with_values(self, values: tuple[tuple[str, str], ...]) -> Protected:
        """This, for one check of a text whose static ``NAME=value`` statements are ``values``
        (what :func:`dataclasses.replace` gives, built directly)."""
        return Protected(
            self.roots,
            self.home,
            self.volatile,
            self.cwd,
            self.launchers,
            self.venvs,
            self.shims,
            self.git_global,
            self.paths,
            values,
        )

    @functools.cached_property
    def _kinds(self) -> dict[str, Kind]:
        """Each root's kind, by its path (the roots are distinct normalised paths)."""
        return dict(self.roots)

    def kind_of(self, path: str) -> Kind | None:
        """The kind of the most specific root holding ``path`` (absolute), or None.

        A root holds ``path`` when it is ``path`` or ``path`` continues it after a ``/``: so the
        candidates are ``path`` and its prefixes that end before a ``/``, longest (most specific)
        first, each one table lookup instead of a comparison with every root."""
        kinds = self._kinds
        end = len(path)
        while end > 0:
            kind = kinds.get(path[:end])
            if kind is not None:
                return kind
            end = path.rfind("/", 0, end)
        return None


@dataclass(frozen=True)
class SelfRule:
    """One self-protection rule; like :class:`gatesh.policy._rules.Rule`, with the protected paths.

    Invariant: ids start with ``self.``; examples are checked against the default XDG layout
    under the test's home folder.
    """

    id: str
    reason: str
    test: Callable[[SimpleCommand, Facts, Protected], bool]
    examples: tuple[str, ...]
    counter: tuple[str, ...]
    # What no single command shows (bare `NAME=value` statements, function definitions, `(( ))`):
    # matched once per check, after every command has been matched against every rule.
    whole: Callable[[Facts], bool] | None = None


# --- gatesh's own files -----------------------------------------------------------------------

# Where gatesh lives in any layout, for words whose value the reader cannot know ($XDG_*). Most
# specific first: the venv in the data folder is the installation, not just a data file.
_GENERIC_KINDS: Final[tuple[tuple[Kind, re.Pattern[str]], ...]] = (
    (
        Kind.INSTALL,
        re.compile(
            r"(?:^|/)\.local/bin/gatesh$|(?:^|/)share/man/man1/gatesh\.1(?:\.gz)?$"
            r"|(?:(?:^|/)\.local/share|\$\{?XDG_DATA_HOME\}?)/gatesh/(?:venv|shims|install\.json)(?:/|$)"
        ),
    ),
    (
        Kind.GIT_HOOKS,
        re.compile(r"(?:(?:^|/)\.local/share|\$\{?XDG_DATA_HOME\}?)/gatesh/git-hooks(?:/|$)"),
    ),
    (
        Kind.FILES,
        re.compile(
            r"(?:^|/)(?:\.config/gatesh|\.local/(?:state|share)/gatesh|gatesh-\d+)(?:/|$)|^/etc/gatesh(?:/|$)"
            r"|/run/user/\d+/gatesh(?:/|$)|\$\{?XDG_(?:CONFIG|STATE|DATA)_HOME\}?/gatesh|\$\{?XDG_RUNTIME_DIR\}?/gatesh"
        ),
    ),
    (
        Kind.HARNESS,
        re.compile(
            r"\$\{?CLAUDE_CONFIG_DIR\}?/settings(?:\.local)?\.json$|\$\{?CODEX_HOME\}?/(?:config\.toml|hooks\.json)$"
        ),
    ),
    (
        Kind.TRANSCRIPT,
        re.compile(
            r"(?:^|/)\.claude/projects(?:/|$)|\$\{?CLAUDE_CONFIG_DIR\}?/projects(?:/|$)"
            r"|(?:^|/)\.codex/sessions(?:/|$)|\$\{?CODEX_HOME\}?/sessions(?:/|$)|(?:^|/)\.gemini/tmp(?:/|$)"
        ),
    ),
)
# Whether any of them matches (one search for the many words that name no gate file).
_GENERIC_ANY: Final = re.compile("|".join(f"(?:{p.pattern})" for _, p in _GENERIC_KINDS))
# A literal every text _GENERIC_ANY matches holds (each alternative above spells one out; the
# patterns fold no case). Searched first: a plain literal search skips ahead where the anchored
# alternatives are tried at every position.
_GENERIC_NEEDS: Final = re.compile(
    r"gatesh|CLAUDE_CONFIG_DIR|CODEX_HOME|\.claude/projects|\.codex/sessions|\.gemini/tmp"
)
# Settings a harness reads in any folder (the project's own): writing one can switch the hooks off
# (Claude Code's `disableAllHooks`, a project `.gemini/settings.json`, Codex's `features.hooks`).
# Writes only: deleting a project's settings cannot take the user's hooks away.
_PROJECT_HARNESS: Final = re.compile(
    r"(?:^|/)\.claude/settings(?:\.local)?\.json$|(?:^|/)\.gemini/settings\.json$"
    r"|(?:^|/)\.codex/(?:config\.toml|hooks\.json)$"
)
# The folder holding them, as the target of a copy or move (`cp -r /tmp/x .claude`).
_PROJECT_HARNESS_DIR: Final = re.compile(r"(?:^|/)\.(?:claude|gemini|codex)/?$")
# A name every text the two above match holds; canon_path only drops or folds whole path
# components (never creates a name), so a text without one is matched by neither, canonical or not.
_HARNESS_NAMES: Final = re.compile(r"claude|gemini|codex")
# What a relative word needs to name a gate file: a literal of _GENERIC_NEEDS or _HARNESS_NAMES, or
# `.git` (a repository's hooks); without one, only an absolute path or one from home can.
_RELATIVE_NEEDS: Final = re.compile(
    r"gatesh|CLAUDE_CONFIG_DIR|CODEX_HOME|claude|gemini|codex|\.git"
)
# A repository's hook scripts (and the folders holding them): gatesh's when they carry its marker.
_GIT_HOOK_PATH: Final = re.compile(r"(?:^|/)\.git(?:/hooks(?:/(?P<name>[^/]+))?)?/?$")
_GLOB_CHARS: Final = re.compile(r"[*?\[]")
# How much of a hook script is read to find gatesh's marker (it is on the second line).
_MARKER_BYTES: Final = 4096


def _absolute(word: str, prot: Protected) -> str:
    """``word`` as canon_path writes it, a path from home made absolute (normalised): canon_path
    has normalised an absolute path already, and leaves a relative one relative."""
    path = canon_path(word)
    if path == "~" or path.startswith("~/"):
        path = prot.home + path[1:]
        return posixpath.normpath(path) if path.startswith("/") else path
    return path


_VAR_REF: Final = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")


def _expand(text: str, values: tuple[tuple[str, str], ...]) -> str:
    """``text`` with ``$NAME``/``${NAME}`` put as the static value this command text gave NAME
    (``f=~/.claude/settings.json; cp x "$f"``); other references stay as written."""
    if not values or "$" not in text:
        return text
    table = dict(values)
    return _VAR_REF.sub(lambda m: table.get(m.group(1) or m.group(2), m.group(0)), text)


# `for NAME in WORD …; do`: the loop variable takes each word (the first stands for them here).
_FOR_WORDS: Final = re.compile(r"(?:^|(?<=[\s;&|(]))for\s++([A-Za-z_]\w*+)\s++in\s++([^;\n]*+)")


def _static_values(facts: Facts) -> tuple[tuple[str, str], ...]:
    """The bare ``NAME=value`` statements of ``facts`` whose value is known without running
    anything (quotes removed; ``~`` and ``$HOME`` kept for the path helpers to fold), and the
    first word of each ``for NAME in …`` loop."""
    out: dict[str, str] = {}
    if "for" in facts.text:
        for m in _FOR_WORDS.finditer(facts.text):
            words = m.group(2).split()
            if words and "$(" not in words[0] and "`" not in words[0]:
                out[m.group(1)] = unquote(words[0])
    for a in facts.assignments:
        name, eq, value = a.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_]\w*", name):
            continue
        value = unquote(value)
        if "`" in value or "$(" in value or re.search(r"\$(?!\{?HOME\b)", value):
            out.pop(name, None)  # a dynamic value: references to it stay unknown
            continue
        out[name] = value
    return tuple(out.items())


def _ours_on_disk(path: str) -> bool:
    """True when the hook script at ``path`` is one gatesh wrote (its marker is in it)."""
    try:
        with open(path, "rb") as f:
            return GIT_HOOK_MARKER.encode() in f.read(_MARKER_BYTES)
    except OSError:
        return False


def _git_hook_kind(text: str, prot: Protected, *, ancestors: bool) -> Kind | None:
    """GIT_HOOKS when ``text`` names a repository hook script gatesh wrote (read from the disk,
    relative to the command's folder), or, with ``ancestors``, a ``.git`` or hooks folder holding one."""
    m = _GIT_HOOK_PATH.search(text)
    if m is None:
        return None
    path = _absolute(text, prot)
    if not path.startswith("/"):
        if not prot.cwd:
            return None
        path = posixpath.normpath(posixpath.join(prot.cwd, path))
    if m.group("name"):
        name = m.group("name")
        if _GLOB_CHARS.search(name):  # `rm .git/hooks/*`: every hook script the glob names
            folder = (
                path if path.endswith("/hooks") else posixpath.dirname(path)
            )  # canon_path drops `/*`
            hit = any(
                fnmatch.fnmatchcase(n, name) and _ours_on_disk(posixpath.join(folder, n))
                for n in GIT_HOOK_NAMES
            )
            return Kind.GIT_HOOKS if hit else None
        return Kind.GIT_HOOKS if _ours_on_disk(path) else None
    if not ancestors:
        return None
    folder = path if path.endswith("/hooks") else posixpath.join(path, "hooks")
    return (
        Kind.GIT_HOOKS
        if any(_ours_on_disk(posixpath.join(folder, n)) for n in GIT_HOOK_NAMES)
        else None
    )


def _touches(
    word: str, prot: Protected, *, ancestors: bool, write: bool = False, into: bool = False
) -> Kind | None:
    """The kind of gate file ``word`` names (or, with ``ancestors``, a folder holding one); None if none.

    ``write``: the command writes ``word`` (a project's harness settings count only then);
    ``into``: it copies or moves something to ``word`` (so a project's ``.claude`` folder counts).
    """
    text = _expand(unquote(word), prot.values)
    if not text or text.startswith("-"):
        return None
    lead = text[0] if not text[0].isspace() else text.lstrip()[:1]
    if lead not in ("/", "~", "$") and not _RELATIVE_NEEDS.search(text):
        # A relative word naming none of the gate's names: _absolute leaves it relative (only a
        # leading `/`, `~` or `$HOME` makes it absolute), so no test below can find anything.
        return None
    if _GENERIC_NEEDS.search(text) and _GENERIC_ANY.search(text):
        for kind, pattern in _GENERIC_KINDS:
            if pattern.search(text):
                return kind
    if (
        write
        and _HARNESS_NAMES.search(text)
        and (
            _PROJECT_HARNESS.search(canon_path(text))
            or (into and _PROJECT_HARNESS_DIR.search(text))
        )
    ):
        return Kind.HARNESS
    hook = _git_hook_kind(text, prot, ancestors=ancestors) if ".git" in text else None
    if hook is not None:
        return hook
    path = _absolute(text, prot)
    if not path.startswith("/"):
        return None
    inside = prot.kind_of(path)
    if inside is not None:
        return inside
    globbed = bool(_GLOB_CHARS.search(path))
    if not (ancestors or globbed):
        return (
            None  # nothing below can match: only a parent folder or a glob names a root from above
        )
    above = path.rstrip("/") + "/"
    for root, kind in prot.roots:
        if root in prot.volatile:
            continue  # the socket folder is recreated on demand: clearing /tmp is not an attack
        if ancestors and (root.startswith(above) or path == "/"):
            return kind
        if globbed:
            # `rm -rf ~/.config/*` names the config folder through a glob.
            parts = root.split("/")
            for n in range(2, len(parts) + 1):
                prefix = "/".join(parts[:n])
                if fnmatch.fnmatchcase(prefix, path) and (ancestors or prefix == root):
                    return kind
    return None


_DELETERS: Final = frozenset(
    {
        "rm",
        "rmdir",
        "unlink",
        "shred",
        "srm",
        "wipe",
        "trash",
        "trash-put",
        "mv",
        "gio",
        "kioclient",
        "kioclient5",
    }
)
_DEST_WRITERS: Final = frozenset({"cp", "install", "ln", "rsync", "scp", "link", "rclone"})
_FILE_WRITERS: Final = frozenset(
    {
        "tee",
        "truncate",
        "touch",
        "chmod",
        "chown",
        "chgrp",
        "chattr",
        "setfacl",
        "chcon",
        "mkdir",
        "mkfifo",
        "mknod",
        "vi",
        "vim",
        "nvim",
        "nano",
        "emacs",
        "ed",
        "ex",
        "pico",
        "micro",
        "code",
        "subl",
        "gedit",
        "kate",
        "sqlite3",
        "dd",
        "patch",
        "git",
        "tar",
        "unzip",
        "7z",
        "sed",
        "perl",
        "ruby",
        "sponge",
        "openssl",
        "ssh-keygen",
        "crontab",
    }
)
# Commands that only read the paths they are given.
_READERS: Final = frozenset(
    {
        "cat",
        "less",
        "more",
        "head",
        "tail",
        "ls",
        "ll",
        "stat",
        "file",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "diff",
        "cmp",
        "wc",
        "md5sum",
        "sha256sum",
        "sha1sum",
        "sha512sum",
        "jq",
        "bat",
        "du",
        "tree",
        "realpath",
        "readlink",
        "test",
        "[",
        "[[",
        "cd",
        "pushd",
        "echo",
        "printf",
        "basename",
        "dirname",
        "gatesh",
        "find",
        "lsof",
        "fuser",
        "namei",
        "exa",
        "eza",
        "column",
        "python",
        "python3",
        "node",
        "zcat",
        "view",
        "od",
        "xxd",
        "hexdump",
        "strings",
        "source",
        ".",
        "ssh",
        "mosh",  # their command operands run on the other host
    }
)


def _operand_words(cmd: SimpleCommand) -> list[str]:
    return [w.text for w in cmd.argv[1:]]


def _first(kinds: object) -> Kind | None:
    """The first kind in an iterable of ``Kind | None`` that is not None."""
    return next((k for k in kinds if k is not None), None)  # type: ignore[attr-defined]


def _deleted(cmd: SimpleCommand, facts: Facts, prot: Protected) -> Kind | None:
    """The kind of gate file ``cmd`` deletes or moves away, or None."""
    if cmd.head == "tar" and any(w == "--remove-files" for w in cmd.args):
        return _first(_touches(w, prot, ancestors=True) for w in _operand_words(cmd))
    if cmd.head not in _DELETERS:
        return None
    words = _operand_words(cmd)
    if cmd.head == "mv" and not any(
        w in ("-t", "--target-directory") or w.startswith("--target-directory=") for w in words
    ):
        # Moving something *into* a folder that holds gate files leaves them in place.
        _, operands = split_args(words, frozenset({"-S", "--suffix"}))
        if len(operands) >= 2:
            return _first(
                [
                    *(_touches(w, prot, ancestors=True) for w in operands[:-1]),
                    _touches(operands[-1], prot, ancestors=False, write=True, into=True),
                ]
            )
    return _first(_touches(w, prot, ancestors=True) for w in words)


# sed, perl and ruby write the files they are given only in place (-i); otherwise they read them.
_IN_PLACE: Final = frozenset({"sed", "perl", "ruby"})
_TAR_VALUE: Final = frozenset(
    {
        "-f",
        "--file",
        "-C",
        "--directory",
        "-T",
        "--files-from",
        "-X",
        "--exclude-from",
        "-b",
        "--blocking-factor",
        "-H",
        "--format",
        "-I",
        "--use-compress-program",
    }
)


def _tar_targets(words: list[str]) -> list[str] | None:
    """What a tar command writes: the archive when creating, the folder when extracting; None when
    its mode is not one of those two (judged as any writer)."""
    opts, _ = split_args(words, _TAR_VALUE)
    cluster = words[0] if words and not words[0].startswith("-") else ""
    creates = "c" in cluster or has_short(opts, "c") or has_long(opts, "--create")
    extracts = "x" in cluster or has_short(opts, "x") or has_long(opts, "--extract", "--get")
    if creates:
        return list(option_values(tuple(words), frozenset({"-f", "--file"})))
    if extracts:
        return list(option_values(tuple(words), frozenset({"-C", "--directory"}))) or ["."]
    return None


# A write redirection in a command's source text, with its target word (quoted parts whole).
_REDIRECT_TEXT: Final = re.compile(
    r"""(?:^|(?<=[\s;&|(]))(?:\d*|&)>>?\|?[^\S\n]*+((?:"[^"]*+"|'[^']*+'|[^\s;&|<>()'"]++)++)"""
)


def _write_targets(cmd: SimpleCommand) -> list[str]:
    """The targets ``cmd`` redirects its output to; a target the reader could not make static
    (``> "$HOME/x"``, ``> "$f"``) is taken from the source text, as written."""
    writes = cmd.writes
    if not writes:
        return []
    targets = [t for t in writes if t is not None]
    if len(targets) < len(writes):
        targets += [m.group(1) for m in _REDIRECT_TEXT.finditer(cmd.raw)]
    return targets


def _written(cmd: SimpleCommand, facts: Facts, prot: Protected) -> Kind | None:
    """The kind of gate file ``cmd`` writes (creates, replaces, edits, re-modes), or None."""
    found = _first(_touches(t, prot, ancestors=False, write=True) for t in _write_targets(cmd))
    if found is not None:
        return found
    head = cmd.head
    words = _operand_words(cmd)

    def any_of(candidates: list[str], *, ancestors: bool = False) -> Kind | None:
        return _first(_touches(w, prot, ancestors=ancestors, write=True) for w in candidates)

    if head in _DEST_WRITERS:
        _, operands = split_args(
            words,
            frozenset(
                {
                    "-t",
                    "--target-directory",
                    "-S",
                    "--suffix",
                    "-m",
                    "--mode",
                    "-o",
                    "--owner",
                    "-g",
                    "--group",
                    "-e",
                }
            ),
        )
        targets = operands[-1:] + [
            v for i, v in enumerate(words[1:]) if words[i] in ("-t", "--target-directory")
        ]
        targets += [w.split("=", 1)[1] for w in words if w.startswith("--target-directory=")]
        if any(_LOCATES_GATESH.search(t) for t in targets):
            return (
                Kind.INSTALL
            )  # `cp /bin/true "$(command -v gatesh)"`: the launcher, wherever it is
        opts, _ = split_args(words)
        # A recursive copy into a folder holding gate files replaces what is in it.
        recursive = has_short(opts, "rRa") or has_long(opts, "--recursive", "--archive", "--delete")
        return _first(
            _touches(w, prot, ancestors=recursive, write=True, into=True) for w in targets
        )
    if head == "find":
        return _find_writes(cmd, facts, prot)
    if head in ("chmod", "chown", "chgrp", "setfacl", "chattr"):
        opts, _ = split_args(words)
        recursive = has_short(opts, "R") or has_long(opts, "--recursive")
        return any_of(words, ancestors=recursive)
    if head == "dd":
        return any_of([w[3:] for w in words if w.startswith("of=")])
    if head == "fuser":
        return any_of(words) if "-k" in words else None
    if head == "tar":
        tar_targets = _tar_targets(words)
        if tar_targets is None:
            return any_of(words)
        # Extracting into a folder that holds gate files can replace them.
        return _first(_touches(t, prot, ancestors=True, write=True, into=True) for t in tar_targets)
    if head in ("unzip", "7z", "bsdtar") and any(w.startswith(("-d", "-o")) for w in words):
        folders = list(option_values(tuple(words), frozenset({"-d"}))) + [
            w[2:] for w in words if w.startswith("-o") and len(w) > 2
        ]
        found = _first(_touches(t, prot, ancestors=True, write=True, into=True) for t in folders)
        if found is not None:
            return found
    if head in _IN_PLACE:
        opts, _ = split_args(words, frozenset({"-e", "--expression", "-f", "--file", "-E", "-l"}))
        if not (
            has_short([o for o in opts if not o.startswith("-e")], "i")
            or has_long(opts, "--in-place")
        ):
            return _code_writes(cmd, prot)
        return any_of(words)
    if head in _FILE_WRITERS:
        return any_of(words)
    if _changes_venv(cmd, prot):
        return Kind.INSTALL  # the venv's own pip (or python -m pip) changes the gate's code
    interpreter = is_interpreter(head)
    if head not in _READERS and head not in _DELETERS and not interpreter:
        # An unknown program handed a gate path may write it; a substitution is judged on its own.
        for w in cmd.argv[1:]:
            if w.static:
                kind = _touches(w.text, prot, ancestors=False, write=True)
                if kind is not None:
                    return kind
        return None
    if interpreter:
        return _code_writes(cmd, prot)
    return None


# A word whose value is where the launcher is: `$(which gatesh)`, `` `command -v gatesh` ``.
_LOCATES_GATESH: Final = re.compile(
    r"(?:\$\(|`)\s*(?:which|command\s+-[vV]|type\s+-[pP]|whereis|readlink\s+-f\s+\S*)"
    r"\s+(?:-\S+\s+)*gatesh\b"
)


_GATE_VENV_BIN: Final = re.compile(r"(?:^|/)gatesh/venv/bin/")


def _changes_venv(cmd: SimpleCommand, prot: Protected) -> bool:
    """True when ``cmd`` runs a package installer of gatesh's venv (its ``pip``, ``python -m
    pip``): whatever it installs or removes becomes the gate's code."""
    if not cmd.argv:
        return False
    written = _expand(unquote(cmd.argv[0].text), prot.values)
    if "/" not in written and "~" not in written and "$" not in written:
        return False  # a bare name (`pip`): a folder is named only with a slash, ~ or $HOME
    argv0 = _absolute(written, prot)
    inside = any(argv0.startswith(v + "/") for v in prot.venvs) or bool(
        _GATE_VENV_BIN.search(argv0)
    )
    if not inside:
        return False
    program = argv0.rsplit("/", 1)[-1]
    if program.startswith(("pip", "easy_install", "uv")):
        return True
    args = cmd.args
    return (
        program.startswith("python")
        and "-m" in args
        and args[args.index("-m") + 1 :][:1] in (("pip",), ("ensurepip",), ("uv",))
    )


def _program_texts(cmd: SimpleCommand) -> tuple[str, ...]:
    """The program text an interpreter runs: its inline code (``-c``/``-e``), or its source text
    when a here-document or here-string feeds it (``python3 - <<EOF …``)."""
    fed = is_interpreter(cmd.head) and any(r.op in ("<<", "<<-", "<<<") for r in cmd.redirects)
    return (*inline_code(cmd), cmd.raw) if fed else inline_code(cmd)


def _code_writes(cmd: SimpleCommand, prot: Protected) -> Kind | None:
    """The kind of gate file the inline code of ``cmd`` names next to a call that writes files."""
    for code in _program_texts(cmd):
        if _WRITE_CODE.search(code):
            found = _touches_text(code, prot)
            if found is not None:
                return found
    return None


_EXEC_FLAGS: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _find_writes(cmd: SimpleCommand, facts: Facts, prot: Protected) -> Kind | None:
    """``find ROOT … -delete`` or ``-exec WRITER`` over a gate folder."""
    words = _operand_words(cmd)
    runs = [words[i + 1].rsplit("/", 1)[-1] for i, w in enumerate(words[:-1]) if w in _EXEC_FLAGS]
    deletes = "-delete" in words or any(r in _DELETERS for r in runs)
    writes = any(
        r in _DEST_WRITERS or r in _FILE_WRITERS or r in SHELLS or is_interpreter(r) for r in runs
    )
    if not (deletes or writes):
        return None
    # A filtered find over a parent folder deletes a selection: the rater judges its scope.
    filtered = any(w in FIND_FILTERS for w in words)
    roots = [
        w for w in words[: next((i for i, w in enumerate(words) if w.startswith("-")), len(words))]
    ]
    return _first(
        _touches(w, prot, ancestors=deletes and not filtered, write=True) for w in roots or words
    )


_WRITE_CODE: Final = re.compile(
    r"""open\(.*?,\s*['"](?:[wax]|r\+)|mode\s*=\s*['"][wax]|\.write|remove|unlink|rmtree|rename|replace|chmod"""
    r"""|truncate|mkdir|writeFile|appendFile|rmSync|rm\(|copy|move|symlink|link\(|write_text|write_bytes"""
    r"""|dump\(|File\.write|IO\.write|>>?\s*['"$]"""
)


# What inline code may call gate files by, besides their absolute paths (most specific first).
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


# How program text names the home folder: each is read as `~` before the roots are looked for.
_HOME_IN_CODE: Final = re.compile(
    r"""\$\{?HOME\}?|\$ENV\{['"]?HOME['"]?\}|ENV\[['"]HOME['"]\]|process\.env\.HOME|\$\{process\.env\.HOME\}"""
    r"""|os\.environ\[['"]HOME['"]\]|os\.getenv\(['"]HOME['"]\)|os\.path\.expanduser\(['"]~['"]\)"""
    r"""|Path\.home\(\)|(?:require\(['"]os['"]\)|os)\.homedir\(\)|\$\{os\.homedir\(\)\}|Dir\.home|getenv\(['"]HOME['"]\)"""
)


def _touches_text(code: str, prot: Protected) -> Kind | None:
    """The kind of gate file program text names (its path, a default layout, or a harness file)."""
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


_CD: Final = frozenset({"cd", "pushd"})
_WRITER_HEADS: Final = _DELETERS | _DEST_WRITERS | _FILE_WRITERS
_FED_WRITER_HEADS: Final = _WRITER_HEADS | _IN_PLACE


def _worked_inside(cmd: SimpleCommand, facts: Facts, prot: Protected) -> Kind | None:
    # `cd ~/.config/gatesh && rm config.toml`: a later writer works on relative paths in there.
    if cmd.head not in _CD or not cmd.args:
        return None
    kind = _touches(cmd.args[-1], prot, ancestors=False)
    if kind is None or not any(c.head in _WRITER_HEADS or any(c.writes) for c in facts.commands):
        return None
    return kind


def _fed_to_writer(cmd: SimpleCommand, facts: Facts, prot: Protected) -> Kind | None:
    """``ls ~/.claude/projects/*/*.jsonl | xargs sed -i …``: gate paths fed to a writer by xargs.

    Only the commands before ``cmd`` in its own pipeline feed it, and only when the words xargs
    puts in land where ``cmd`` writes (a copy's sources and a tar archive's members are read)."""
    if cmd.context != "xargs" or cmd.head not in _FED_WRITER_HEADS:
        return None
    if cmd.head in _IN_PLACE and not any(a.startswith("-i") or a == "--in-place" for a in cmd.args):
        return None
    if not _fed_words_written(cmd):
        return None
    for pipe in facts.pipelines:
        members = [facts.commands[i] for i in pipe]
        at = next((n for n, c in enumerate(members) if c is cmd), None)
        if at is None:
            continue
        for feeder in members[:at]:
            found = (
                _find_feeds(feeder, prot)
                if feeder.head == "find"
                else _first(_touches(w, prot, ancestors=True) for w in _feeder_words(feeder))
            )
            if found is not None:
                return found
    return None


# Options of the GNU copy family naming the folder everything goes into (the operands are sources).
_TARGET_DIR: Final = frozenset({"-t", "--target-directory"})
_TARGET_DIR_HEADS: Final = frozenset({"cp", "mv", "ln", "install", "link"})


def _fed_words_written(cmd: SimpleCommand) -> bool:
    """Whether the words xargs puts into ``cmd`` (at its ``{}`` placeholders, else after its
    arguments) are paths it writes. A copy writes its last operand or its ``-t`` folder; tar writes
    its archive when creating and its folder when extracting; every other writer, its operands."""
    words = _operand_words(cmd)
    placed = any("{}" in w for w in words)
    if cmd.head == "tar":
        # Appended words are members (read when creating, named when extracting) unless the
        # archive option is the last word: then the first of them is the archive created.
        targets = _tar_targets(words)
        holder = next(
            (
                i
                for i, w in enumerate(words)
                if w in ("-f", "--file")
                or (not w.startswith("--") and "f" in w and (w.startswith("-") or i == 0))
            ),
            None,
        )
        return targets is None or placed or holder == len(words) - 1
    if cmd.head not in _DEST_WRITERS:
        return True
    if cmd.head in _TARGET_DIR_HEADS:
        folders = _target_folders(words)
        if folders:
            return any("{}" in f for f in folders)
    _, operands = split_args(
        words,
        frozenset(
            {"-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group", "-e", "--rsh"}
        ),
    )
    if placed:
        return bool(operands) and "{}" in operands[-1]
    return True  # the words are appended: the last of them is the destination


def _target_folders(words: list[str]) -> list[str]:
    """The ``-t DIR`` / ``-tDIR`` / ``-vt DIR`` / ``--target-directory[=]DIR`` values of a GNU copy."""
    out = [w.split("=", 1)[1] for w in words if w.startswith("--target-directory=")]
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in _TARGET_DIR:
            out.append(nxt)
        elif w.startswith("-") and not w.startswith("--") and "t" in w[1:]:
            rest = w[w.index("t", 1) + 1 :]
            out.append(rest or nxt)
    return out


# Programs whose first operand is a pattern or a script, not a path (unless given by -e/-f).
_PATTERN_FIRST: Final = frozenset(
    {"grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "sed", "awk", "gawk", "mawk"}
)


def _feeder_words(feeder: SimpleCommand) -> list[str]:
    """The words of a command feeding xargs that may name paths it prints (`grep /` prints no `/`)."""
    words = _operand_words(feeder)
    if feeder.head not in _PATTERN_FIRST or any(
        w.startswith(("-e", "-f", "--regexp", "--file", "--expression")) for w in words
    ):
        return words
    operand = next((i for i, w in enumerate(words) if not w.startswith("-")), None)
    return words if operand is None else words[:operand] + words[operand + 1 :]


# find's actions: a -name test after one of them no longer limits what it prints.
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
_FIND_LEADING: Final = frozenset({"-H", "-L", "-P", "-x", "-E", "-s", "-X", "-d"})
_FIND_COMBINERS: Final = frozenset({"-o", "-or", "!", "-not", ",", "(", ")", "\\(", "\\)"})


def _find_feeds(feeder: SimpleCommand, prot: Protected) -> Kind | None:
    """The kind of gate file ``find`` may print to xargs: anything under a gate folder; under a
    parent of one, only when its ``-name``/``-iname`` tests (all of them must hold) can match a
    folder or file on the way down to a gate root (``find / -name '*.mp3'`` prints none)."""
    words = _operand_words(feeder)
    lead = 0  # find's own options come before its start folders (`find -L /`, BSD `find -x /`, `-f DIR`)
    starts: list[str] = []
    while lead < len(words) and (
        words[lead] in _FIND_LEADING
        or words[lead] in ("-D", "-f")
        or re.fullmatch(r"-O\d", words[lead])
    ):
        if words[lead] in ("-D", "-f"):
            starts += [words[lead + 1]] if words[lead] == "-f" and lead + 1 < len(words) else []
            lead += 1
        lead += 1
    words = words[lead:]
    first = next(
        (i for i, w in enumerate(words) if w.startswith(("-", "(", "!", "\\("))), len(words)
    )
    starts, expr = starts + words[:first] or ["."], words[first:]
    patterns = _find_names(expr)
    for start in starts:
        kind = _touches(start, prot, ancestors=False)
        if kind is not None or patterns is None:
            kind = kind or _touches(start, prot, ancestors=True)
            if kind is not None:
                return kind
            continue
        if _touches(start, prot, ancestors=True) is None:
            continue
        base = _absolute(_expand(unquote(start), prot.values), prot).rstrip("/")
        for root, root_kind in prot.roots:
            if root in prot.volatile or not root.startswith(base + "/"):
                continue
            names = root[len(base) + 1 :].split("/")
            if any(_matches_all(n, patterns) for n in names) or _holds_match(root, patterns):
                return root_kind
    return None


def _matches_all(name: str, patterns: list[tuple[str, bool]]) -> bool:
    return all(fnmatch.fnmatchcase(name.casefold() if fold else name, p) for p, fold in patterns)


# How many entries of a gate folder are looked at for a name find could print: the config and
# state folders hold a handful; past this (a venv) the folder is taken to hold a match.
_WALK_LIMIT: Final = 2000


def _holds_match(root: str, patterns: list[tuple[str, bool]]) -> bool:
    """Whether anything inside the gate folder ``root`` has a name matching ``patterns`` (find
    descends into it), looked up on disk; True past :data:`_WALK_LIMIT` entries or on an error."""
    todo, seen = [root], 0
    while todo:
        try:
            with os.scandir(todo.pop()) as entries:
                for e in entries:
                    seen += 1
                    if seen > _WALK_LIMIT or _matches_all(e.name, patterns):
                        return True
                    if e.is_dir(follow_symlinks=False):
                        todo.append(e.path)
        except NotADirectoryError:
            continue
        except FileNotFoundError:
            continue
        except OSError:
            return True
    return False


def _find_names(expr: list[str]) -> list[tuple[str, bool]] | None:
    """The ``-name``/``-iname`` patterns every printed path must match (case-folded for -iname),
    or None when the expression does not limit its output that way (none, an action before them,
    or an -o / ! / group that may print other paths)."""
    if any(w in _FIND_COMBINERS for w in expr):
        return None
    out: list[tuple[str, bool]] = []
    for i, w in enumerate(expr):
        if w in _FIND_ACTIONS:
            break
        if w in ("-name", "-iname") and i + 1 < len(expr):
            pattern = unquote(expr[i + 1])
            out.append((pattern.casefold() if w == "-iname" else pattern, w == "-iname"))
    return out or None


PathTest = Callable[[SimpleCommand, Facts, Protected], Kind | None]


class _On:
    """A rule test: one of ``tests`` finds a gate file of ``kind``. Data :func:`check` reads
    directly (each path test runs once per command, whichever rules ask it)."""

    __slots__ = ("kind", "tests")

    def __init__(self, kind: Kind, tests: tuple[PathTest, ...]) -> None:
        self.kind = kind
        self.tests = tests

    def __call__(self, cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
        return any(t(cmd, facts, prot) is self.kind for t in self.tests)


def _on(kind: Kind, *tests: PathTest) -> _On:
    """A rule test: one of ``tests`` finds a gate file of ``kind``."""
    return _On(kind, tests)


# --- git's hooks ------------------------------------------------------------------------------

# Keys whose change moves git's hooks away from gatesh's (S3.4, S11.3). Git folds key names' case.
_HOOK_KEYS: Final = re.compile(
    r"^(?:core\.hookspath|init\.templatedir|include\.path|includeif\..+\.path)$", re.IGNORECASE
)  # an included file may set either
_HOOK_KEY_TEXT: Final = re.compile(r"hooks\s*path|template\s*dir", re.IGNORECASE)
_GIT_VALUE_OPTS: Final = frozenset(
    {
        "-C",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--exec-path",
        "--super-prefix",
        "--list-cmds",
        "--attr-source",
    }
)
_GIT_CONFIG_READS: Final = frozenset(
    {
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--list",
        "-l",
        "--show-origin",
        "--show-scope",
        "--get-color",
        "--get-colorbool",
        "get",
        "list",
    }
)
_GIT_CONFIG_CHANGES: Final = frozenset(
    {"--unset", "--unset-all", "--add", "--replace-all", "--append", "--all"}
)
_CONFIG_VALUE_OPTS: Final = frozenset(
    {"-f", "--file", "--blob", "--type", "--default", "--comment", "--value"}
)
# Files git reads its configuration from, in any repository or home.
_GIT_CONFIG_FILE: Final = re.compile(
    r"(?:^|/)(?:\.git/(?:modules/[^/]+/)?config(?:\.worktree)?|\.gitconfig"
    r"|\.config/git/config|etc/gitconfig)$"
)
_GLOBAL_GIT_CONFIG: Final = re.compile(
    r"^(?:~|/(?:home|Users)/[^/]+|/root)/(?:\.gitconfig|\.config/git/config)$"
)


def _git_split(args: tuple[str, ...]) -> tuple[list[str], str, list[str]]:
    """git's argv[1:] as (global options with their values, subcommand, its arguments)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a in _GIT_VALUE_OPTS or a == "-c":
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        return list(args[:i]), a, list(args[i + 1 :])
    return list(args), "", []


def _git_hooks_setting(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    """Moves git's hooks away from gatesh's: ``core.hooksPath`` or ``init.templateDir`` set,
    unset or overridden (``git config``, ``git -c``, ``--config-env``, ``GIT_CONFIG_*`` variables),
    a git config file edited to say so, or — when gatesh set the global ``core.hooksPath`` — the
    global config replaced or hidden from git (``GIT_CONFIG_GLOBAL``, ``HOME`` for git)."""
    if cmd.head == "git":
        options, sub, rest = _git_split(cmd.args)
        for i, o in enumerate(options):
            value = (
                options[i + 1]
                if o == "-c" and i + 1 < len(options)
                else (o.split("=", 1)[1] if o.startswith("--config-env=") else "")
            )
            if value and _HOOK_KEYS.match(value.split("=", 1)[0]):
                return True
        if sub == "config":
            opts, operands = split_args(rest, _CONFIG_VALUE_OPTS)
            if any(o in ("--edit", "-e") for o in opts) or (operands[:1] == ["edit"]):
                return True  # an editor on the config file: any key may change
            reading = any(o in _GIT_CONFIG_READS for o in opts) or operands[:1] in (
                ["get"],
                ["list"],
            )
            changes = (
                any(o in _GIT_CONFIG_CHANGES for o in opts)
                or operands[:1] in (["set"], ["unset"])
                or (
                    bool(operands)
                    and _HOOK_KEYS.match(operands[0]) is not None
                    and len(operands) >= 2
                )
            )
            if changes and not reading and any(_HOOK_KEYS.match(w) for w in operands):
                return True
            sections = [
                rest[i + 1]
                for i in range(len(rest) - 1)
                if rest[i] in ("--remove-section", "--rename-section")
            ]
            sections += (
                operands[1:2] if operands[:1] in (["remove-section"], ["rename-section"]) else []
            )
            if any(v.lower() in ("core", "init") for v in sections):
                return True
    for a in _env_words(cmd, facts):
        name, _, value = a.partition("=")
        value = unquote(value)
        if name == "GIT_CONFIG_PARAMETERS" and _HOOK_KEY_TEXT.search(value):
            return True
        if name.startswith("GIT_CONFIG_KEY_") and _HOOK_KEYS.match(value):
            return True
        if name == "GIT_TEMPLATE_DIR":
            return True
        if prot.git_global and (
            name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")
            or (name == "HOME" and cmd.head == "git")
        ):
            return True
    return _git_config_file_write(cmd, facts, prot)


# Programs whose operands (not only their redirections) may be the git config file they write.
_CONFIG_FILE_WRITERS: Final = _DEST_WRITERS | {"mv", "truncate", "dd", "tee", "sponge"} | _IN_PLACE


def _git_config_file_write(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    targets = _write_targets(cmd)
    words = _operand_words(cmd)
    if cmd.head in _CONFIG_FILE_WRITERS:
        targets += [w[3:] if w.startswith("of=") else w for w in words if not w.startswith("-")]
    if is_interpreter(cmd.head) or cmd.head in _IN_PLACE:
        codes = inline_code(cmd)
        targets += [
            m.group(0)
            for code in codes
            for m in re.finditer(r"[\w./~-]*(?:\.gitconfig|\.git/config)", code)
        ]
    for t in targets:
        path = canon_path(t)
        if not _GIT_CONFIG_FILE.search(path):
            continue
        if _HOOK_KEY_TEXT.search(facts.text):
            return True
        if (
            prot.git_global
            and _GLOBAL_GIT_CONFIG.match(path)
            and t not in {r.target for r in cmd.redirects if r.op == ">>"}
        ):
            return True  # the global config gatesh's core.hooksPath lives in, replaced or edited
    if prot.git_global and cmd.head in _DELETERS:
        return any(_GLOBAL_GIT_CONFIG.match(canon_path(w)) for w in words)
    return False


def _env_words(cmd: SimpleCommand, facts: Facts) -> list[str]:
    """``NAME=value`` words that set the environment of ``cmd`` or of later commands: prefix and
    ``env`` assignments, and ``export``/``declare -x``/``typeset -x``/… arguments."""
    words = list(cmd.assignments)
    if cmd.head in _DECLARERS or cmd.head == "setenv":
        args = [a for a in cmd.args if not a.startswith(("-", "+"))]
        if cmd.head == "setenv" and len(args) >= 1:  # csh-style `setenv NAME value`
            args = [f"{args[0]}={args[1] if len(args) > 1 else ''}"]
        words += [a if "=" in a else a + "=" for a in args]
    return words


# --- harness hooks ----------------------------------------------------------------------------

_HOOKS_OFF_TEXT: Final = re.compile(
    r"disableAllHooks|features\.hooks\s*=\s*['\"]?(?:false|0|no|off)|\bhooks\s*=\s*(?:false|0)\b"
    r"|enableHooks['\"]?\s*:\s*false|hooksConfig",
    re.IGNORECASE,
)
_HARNESS_HOMES: Final = frozenset(
    {
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GEMINI_CLI_HOME",
        "GEMINI_DIR",
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
        "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
        "CLAUDE_CODE_SHELL",
        "CODEX_SANDBOX",
    }
)
_HARNESSES: Final = frozenset({"claude", "codex", "gemini", "claude-code"})


def _says_hooks_off(text: str) -> bool:
    """``_HOOKS_OFF_TEXT.search(text)``, searched only when the case-folded text holds ``hooks``:
    every alternative spells it, and what the pattern's case-blind match takes for each of its
    letters (``K``, the Kelvin sign, ``ſ`` …) case-folds to that letter. The pattern alone costs
    tens of microseconds on a line (case-blind alternatives are tried at every position)."""
    return "hooks" in text.casefold() and _HOOKS_OFF_TEXT.search(text) is not None


def _harness_hooks_off(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    """Starts a harness with gatesh's hooks off (a nested agent nothing gates), or moves where a
    harness reads its settings: ``codex -c features.hooks=false``, ``claude --settings`` holding
    ``disableAllHooks``, ``claude --setting-sources`` without the user's, ``CLAUDE_CONFIG_DIR=…``;
    or writes a setting that switches hooks off into any file."""
    head = cmd.head
    if head in _HARNESSES:
        args = cmd.args
        if head == "codex":
            values = list(option_values(args, frozenset({"-c", "--config"})))
            if any(
                _HOOKS_OFF_TEXT.search(v) or re.match(r"\s*features\.hooks\s*=", v) for v in values
            ):
                return True
            if any(v == "hooks" for v in option_values(args, frozenset({"--disable"}))):
                return True
        if head in ("claude", "claude-code"):
            settings = list(option_values(args, frozenset({"--settings"})))
            if settings and _says_hooks_off(facts.text):
                return True  # inline settings, or a file this text writes, that switch hooks off
            sources = list(option_values(args, frozenset({"--setting-sources"})))
            if any("user" not in v.split(",") for v in sources):
                return True
        if any(a.partition("=")[0] in _HARNESS_HOMES for a in cmd.assignments):
            return True
    if any(
        a.partition("=")[0] in _HARNESS_HOMES
        for a in _env_words(cmd, facts)
        if cmd.head in _DECLARERS
    ):
        return True
    if _says_hooks_off(facts.text):
        writes = (
            any(t is not None for t in cmd.writes)
            or cmd.head
            in _DEST_WRITERS | _IN_PLACE | {"tee", "sponge", "jq", "yq", "dasel", "toml", "crudini"}
            or bool(_code_writes_any(cmd))
        )
        return writes and _says_hooks_off(cmd.raw + " " + " ".join(cmd.words))
    return False


def _code_writes_any(cmd: SimpleCommand) -> bool:
    return any(_WRITE_CODE.search(code) for code in inline_code(cmd))


# --- the environment of an inner gatesh --------------------------------------------------------

# Variables that move gatesh's folders (S3.4): config, state, data, runtime (the socket: another
# daemon, with a fresh state), the home they default to, and gatesh's own (GATESH_SESSION picks the
# session, GATESH_OPERATOR who answers, GATESH_SYSTEM_CONFIG the system tier).
_GATE_ENV: Final = re.compile(
    r"^(?:XDG_(?:CONFIG|STATE|DATA)_HOME|XDG_RUNTIME_DIR|HOME|GATESH_\w+)$"
)
_ALWAYS_GATE_ENV: Final = re.compile(r"^GATESH_\w+$")
_ENV_UNSET: Final = re.compile(r"(?:^|\s)(?:-u\s*|--unset[=\s])(XDG_\w+|HOME|GATESH_\w+)\b")
# `VAR=… bash -c '…'`: the reader keeps the inner command, not the shell's own prefix, so the
# text decides: a prefix assignment of a gate variable right before a shell or gatesh (through
# `env`, `sudo`, … and their options). Read word by word in one pass (linear in the text).
_GATE_PREFIX_VAR: Final = re.compile(
    r"(?:XDG_(?:CONFIG|STATE|DATA)_HOME|XDG_RUNTIME_DIR|GATESH_\w+)="
)
_ANY_ASSIGNMENT: Final = re.compile(r"[A-Za-z_]\w*=")
_PREFIX_WRAPPERS: Final = frozenset(
    {"sudo", "env", "exec", "command", "nohup", "setsid", "nice", "time"}
)
_RUNS_GATESH_WORD: Final = re.compile(r"(?:ba|z|da|k|mk|a)?sh|gatesh")  # a program's basename
_WORD_SEPARATORS: Final = frozenset(";&|()\n")


def _shell_prefix_text(text: str) -> bool:
    """True when ``text`` gives a gate variable to a shell or gatesh as a prefix assignment."""
    pending = False  # a gate variable was assigned in the current run of prefix words
    after_python = False
    for m in re.finditer(r"[^\s;&|()]+|[;&|()\n]", text):
        word = m.group(0).lstrip("\"'`")
        if not word or word[0] in _WORD_SEPARATORS:
            pending = after_python = False
            continue
        if _ANY_ASSIGNMENT.match(word):
            pending = pending or bool(_GATE_PREFIX_VAR.match(word))
            continue
        if not pending:
            continue
        if after_python:
            if word == "-m":
                continue
            if word == "gatesh":
                return True
            pending = after_python = False
            continue
        if word in _PREFIX_WRAPPERS or word.startswith("-"):
            continue
        base = word.rsplit("/", 1)[-1]
        if _RUNS_GATESH_WORD.fullmatch(base):
            return True
        if re.fullmatch(r"python[\d.]*", base):
            after_python = True
            continue
        pending = False
    return False


def _runs_gatesh(cmd: SimpleCommand, prot: Protected, *, shells: bool = True) -> bool:
    """True when ``cmd`` starts gatesh (its launcher, a shim, ``python -m gatesh``) or, with
    ``shells``, a shell, which a gated session's PATH or harness may resolve to gatesh's shim."""
    if cmd.head in ("gatesh", "gatesh.py") or (shells and cmd.head in SHELLS):
        return True
    argv0 = _absolute(cmd.argv[0].text, prot) if cmd.argv else ""
    if argv0 in prot.launchers or any(argv0.startswith(d + "/") for d in prot.shims):
        return True
    return _gatesh_argv(cmd) is not None


def _inner_gatesh_env(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    """Points an inner gatesh at other folders or another session: a gate variable exported, set
    for this shell, unset, or given to a command that runs gatesh or a shell; ``env -i`` before one."""
    for a in _env_words(cmd, facts):
        name = a.partition("=")[0]
        if not _GATE_ENV.match(name):
            continue
        if (
            _ALWAYS_GATE_ENV.match(name)
            or cmd.head in _DECLARERS
            or _runs_gatesh(cmd, prot, shells=name != "HOME")
        ):
            return True
    if cmd.head == "unset" and any(_GATE_ENV.match(a) for a in cmd.args if not a.startswith("-")):
        return True
    if cmd.head in ("read", "mapfile", "readarray", "printf", "print", "getopts"):
        # `read XDG_RUNTIME_DIR <<< /tmp/x`, `printf -v GATESH_SESSION x`: set by a builtin.
        names = (
            list(option_values(cmd.args, frozenset({"-v"})))
            if cmd.head in ("printf", "print")
            else [a for a in cmd.args if not a.startswith("-")]
        )
        if any(_GATE_ENV.match(n) for n in names):
            return True
    if "env" in cmd.wrappers or cmd.head == "env":
        raw = cmd.raw
        if _ENV_UNSET.search(raw):
            return True
        if _ENV_CLEARS.search(raw) and _runs_gatesh(cmd, prot, shells=False):
            return True  # no XDG_RUNTIME_DIR: another daemon, with a fresh state
    return False


def _inner_gatesh_env_whole(facts: Facts) -> bool:
    """Bare ``XDG_RUNTIME_DIR=…`` statements (they change this shell's gate), and the prefix of a
    shell the reader peeled (``XDG_STATE_HOME=/tmp/s bash -c '…'``)."""
    if facts.assignments and any(_GATE_ENV.match(a.partition("=")[0]) for a in facts.assignments):
        return True
    text = facts.text
    return ("GATESH_" in text or "XDG_" in text) and _shell_prefix_text(text)


# --- the daemon -------------------------------------------------------------------------------

_KILLERS: Final = frozenset({"kill", "pkill", "killall", "skill", "slay", "tkill", "xkill"})
_TRACERS: Final = frozenset(
    {"strace", "ltrace", "gdb", "lldb", "perf", "bpftrace", "ptrace", "gcore"}
)
_FINDERS: Final = frozenset(
    {"pgrep", "pidof", "ps", "cat", "lsof", "fuser", "pstree", "ss", "head"}
)
_GATESH_WORD: Final = re.compile(r"gatesh|daemon\.(?:sock|lock|pid)", re.IGNORECASE)


def _names_daemon(cmd: SimpleCommand, facts: Facts) -> bool:
    if any(_GATESH_WORD.search(w.text) for w in cmd.argv[1:]):
        return True
    if any(not w.static for w in cmd.argv[1:]):
        return any(
            c.context in ("substitution", "process-substitution")
            and c.head in _FINDERS
            and any(_GATESH_WORD.search(w) for w in c.words)
            for c in facts.commands
        )
    return False


@dataclass(frozen=True)
class DaemonId:
    """How a process-matching command would see the daemon: its pid (when it runs), its name as
    ``pkill``/``killall`` match it and its command line as ``pkill -f`` and ``ps`` show it."""

    pid: int | None
    comm: str
    cmdline: str


_daemon_cache: dict[str, tuple[float, DaemonId]] = {}
# How long the daemon's identity is remembered: it changes only when the daemon restarts.
_DAEMON_ID_TTL_S: Final = 2.0


def daemon_identity(lock: str) -> DaemonId:
    """The daemon that holds ``lock`` (its pid is in the file), read from ``/proc``; without one
    (the in-process fallback), a daemon as this installation would start it."""
    now = time.monotonic()
    hit = _daemon_cache.get(lock)
    if hit is not None and now - hit[0] < _DAEMON_ID_TTL_S:
        return hit[1]
    found: DaemonId | None = None
    try:
        with open(lock, encoding="ascii", errors="replace") as f:
            pid = int(f.read(32).strip())
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read(65536).split(b"\0")
        with open(f"/proc/{pid}/comm", "rb") as f:
            comm = f.read(64).decode(errors="replace").strip()
        cmdline = " ".join(a.decode(errors="replace") for a in argv if a)
        if "gatesh" in cmdline:
            found = DaemonId(pid, comm, cmdline)
    except (OSError, ValueError):
        pass
    if found is None:
        exe = os.path.realpath(sys.executable) if sys.executable else "python3"
        found = DaemonId(None, os.path.basename(exe)[:15], f"{exe} -m gatesh daemon")
    _daemon_cache[lock] = (now, found)
    return found


def _pattern_reaches(pattern: str, target: str, *, exact: bool = False, fold: bool = False) -> bool:
    """Whether a process-name pattern (an extended regex, as pgrep reads it) matches ``target``."""
    flags = re.IGNORECASE if fold else 0
    try:
        rx = re.compile(pattern, flags)
    except re.error:
        return (pattern.lower() in target.lower()) if fold else pattern in target
    return bool(rx.fullmatch(target) if exact else rx.search(target))


_PGREP_VALUE: Final = frozenset(
    {
        "-u",
        "-U",
        "-g",
        "-G",
        "-P",
        "-s",
        "-t",
        "-d",
        "--delimiter",
        "-F",
        "--pidfile",
        "--signal",
        "-q",
        "--queue",
        "--ns",
        "--nslist",
        "--euid",
        "--uid",
        "--pgroup",
        "--group",
        "--parent",
        "--session",
        "--terminal",
        "-n",
        "-o",
        "-O",
        "--older",
    }
)


def _pgrep_reaches(cmd: SimpleCommand, ident: DaemonId, prot: Protected) -> bool:
    """``pgrep``/``pkill PATTERN`` (``-f``: the command line; ``-x``: exact; ``-i``: any case),
    ``--pidfile`` of a gate file, or ``pidof``/``killall NAME``: reaches the daemon?"""
    args = [a for a in cmd.args if not re.fullmatch(r"-\d+|-[A-Z]+\d*|-SIG\w+", a)]
    if cmd.head in ("pidof", "killall"):
        opts, names = split_args(args, frozenset({"-o", "-s", "--signal", "-u", "--user", "-y"}))
        regex = cmd.head == "killall" and (has_short(opts, "r") or has_long(opts, "--regexp"))
        fold = cmd.head == "killall" and (has_short(opts, "I") or has_long(opts, "--ignore-case"))
        return any(
            _pattern_reaches(n, ident.comm, exact=not regex, fold=fold)
            or (not regex and n == os.path.basename(ident.cmdline.split(" ", 1)[0]))
            for n in names
            if n
        )
    opts, patterns = split_args(args, _PGREP_VALUE)
    if any(
        _touches(v, prot, ancestors=False)
        for v in option_values(tuple(args), frozenset({"-F", "--pidfile"}))
    ):
        return True
    full = has_short(opts, "f") or has_long(opts, "--full")
    exact = has_short(opts, "x") or has_long(opts, "--exact")
    fold = has_short(opts, "i") or has_long(opts, "--ignore-case")
    target = ident.cmdline if full else ident.comm
    return any(_pattern_reaches(unquote(p), target, exact=exact, fold=fold) for p in patterns if p)


_LISTERS: Final = frozenset({"ps", "pstree", "ss", "top", "htop", "pgrep", "lsof", "netstat"})
_GREPS: Final = frozenset({"grep", "egrep", "fgrep", "rg", "ag"})


def _finders_reach(facts: Facts, ident: DaemonId, prot: Protected, killer: SimpleCommand) -> bool:
    """Whether the command text finds the daemon's pid for a kill whose targets are computed
    (``kill $(…)``, ``kill $PID``, ``… | xargs kill``): a finder that matches it, a gate file read
    for its pid, or a process listing filtered by a pattern that matches its command line."""
    listed = any(c.head in _LISTERS for c in facts.commands)
    for c in facts.commands:
        if c is killer:
            continue
        if any(_GATESH_WORD.search(w) for w in c.words):
            return True
        if c.head in ("pgrep", "pidof") and _pgrep_reaches(c, ident, prot):
            return True
        if c.head in ("cat", "head", "tail", "lsof", "fuser", "read", "<") and any(
            _touches(w, prot, ancestors=False) for w in c.args
        ):
            return True
        if c.head in _GREPS and listed:
            opts, operands = split_args(c.args, frozenset({"-e", "-m", "-A", "-B", "-C"}))
            if has_short(opts, "v") or has_long(opts, "--invert-match"):
                continue
            patterns = list(option_values(c.args, frozenset({"-e"}))) or operands[:1]
            fold = has_short(opts, "i") or has_long(opts, "--ignore-case")
            if any(_pattern_reaches(unquote(p), ident.cmdline, fold=fold) for p in patterns):
                return True
    return False


_KILL_VALUE: Final = frozenset({"-s", "-n", "--signal"})


def _kill_operands(args: tuple[str, ...]) -> tuple[str, list[str]]:
    """``kill``'s (signal, targets): ``-9``, ``-KILL``, ``-s KILL``, ``--signal=9`` name the signal;
    the words after it (negative numbers included: process groups) are the targets."""
    signal, i = "", 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if a in _KILL_VALUE and i + 1 < len(args):
            signal, i = args[i + 1], i + 2
            continue
        if a.startswith("--signal="):
            signal, i = a.split("=", 1)[1], i + 1
            continue
        if (
            not signal
            and re.fullmatch(r"-(?:\d+|[A-Za-z][A-Za-z0-9+]*)", a)
            and a not in ("-l", "-L")
        ):
            signal, i = a, i + 1
            continue
        if a.startswith("-") and not a.lstrip("-").isdigit():
            i += 1
            continue
        break
    return signal, list(args[i:])


_KILL_CODE: Final = re.compile(
    r"\bkill(?:pg)?\s*\(|\.(?:kill|terminate|send_signal)\s*\(|\bProcess\.kill\b"
    r"|\bkill\s+-|\bsignal\.SIG(?:KILL|TERM|STOP|INT|HUP|QUIT)\b"
)


def _kills_daemon(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    head = cmd.head
    if head in _KILLERS:
        if head in ("kill", "tkill") and _kill_operands(cmd.args)[0] in ("0", "-0"):
            return False  # signal 0 only asks whether the process exists
        if _names_daemon(cmd, facts):
            return True
        ident = (
            daemon_identity(prot.paths.lock) if prot.paths is not None else DaemonId(None, "", "")
        )
        if head in ("pkill", "killall", "skill", "slay"):
            return _pgrep_reaches(cmd, ident, prot)
        if head != "kill" and head != "tkill":
            return False
        signal, targets = _kill_operands(cmd.args)
        if signal in ("0", "-0"):
            return False  # signal 0 only asks whether the process exists
        for t in targets:
            text = unquote(t)
            if text.lstrip("-").isdigit():
                if ident.pid is not None and abs(int(text)) == ident.pid:
                    return True  # the daemon's pid, or its process group (it leads its own)
            elif "$" in text or "`" in text:
                return _finders_reach(facts, ident, prot, cmd)
        return cmd.context == "xargs" and _finders_reach(facts, ident, prot, cmd)
    if head in ("systemctl", "launchctl", "service"):
        verbs = {
            "stop",
            "kill",
            "disable",
            "mask",
            "restart",
            "unload",
            "remove",
            "bootout",
            "freeze",
        }
        return bool(verbs & set(cmd.args)) and _names_daemon(cmd, facts)
    if is_interpreter(head):
        for code in _program_texts(cmd):
            if _KILL_CODE.search(code) and (
                _GATESH_WORD.search(code)
                or any(root in code for root, kind in prot.roots if kind is Kind.FILES)
            ):
                return True
    return False


def _traces_daemon(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    attached = cmd.head in _TRACERS or any(w in _TRACERS for w in cmd.wrappers)
    if not attached:
        return False
    raw = " ".join(cmd.words) + " " + cmd.raw
    return bool(re.search(r"(?:^|\s)(?:-p|--pid|--attach|attach|-ex)\b", raw)) and (
        _names_daemon(cmd, facts) or bool(_GATESH_WORD.search(cmd.raw))
    )


# --- the shell hook ---------------------------------------------------------------------------

# History variables (HISTCONTROL, HISTIGNORE, HISTSIZE) are `self.hook-history`'s (only making them
# unchangeable is tampering); HISTFILE only changes the file on disk, never the in-memory list the
# gate reads (the rater judges evasion).
_HOOK_VARS: Final = re.compile(
    r"^(?:PROMPT_COMMAND|preexec_functions|precmd_functions|zshaddhistory_functions|BASH_ENV|ENV"
    r"|PS0|histchars|HISTCMD)(?:\[[^\]]*\])?\+?(?:=|$)"
)
_HOOK_FUNCS: Final = re.compile(
    r"gatesh|^(?:preexec|precmd|TRAPDEBUG|accept-line|zshaddhistory|command_not_found_handle)$",
    re.IGNORECASE,
)
_HOOK_ARRAYS: Final = frozenset(
    {"preexec_functions", "precmd_functions", "zshaddhistory_functions"}
)
# `NAME[KEY]+=value` as written (a declare argument, a prefix or a bare statement).
_ASSIGN_WORD: Final = re.compile(r"^([A-Za-z_]\w*)(?:\[([^\]]*)\])?(\+?=)(.*)$", re.DOTALL)
_HOOK_FUNC_TEXT: Final = re.compile(r"TRAPDEBUG|__gatesh_|zshaddhistory|precmd|preexec|accept-line")
_DECLARERS: Final = frozenset(
    {"export", "declare", "typeset", "readonly", "local", "integer", "float"}
)


def _assignments(cmd: SimpleCommand | None, facts: Facts) -> list[str]:
    """Every ``NAME=value`` the command (or, with no command, the whole line) writes, as written."""
    if cmd is None:
        return list(facts.assignments)
    words = list(cmd.assignments)
    if cmd.head in _DECLARERS:
        words += [a for a in cmd.args if not a.startswith(("-", "+"))]
    return words


def _rewrites_functions(word: str) -> bool:
    """zsh's ``functions`` array: ``functions[TRAPDEBUG]=…``, ``functions=()``, ``functions+=([f]=…)``."""
    m = _ASSIGN_WORD.match(word)
    if m is None or m.group(1) != "functions":
        return False
    key, op, value = m.group(2), m.group(3), m.group(4)
    if key is not None:
        return bool(_HOOK_FUNCS.search(unquote(key)))
    return op == "=" or bool(_HOOK_FUNC_TEXT.search(value))


def _zsh_option_off(name: str, setting: bool) -> bool:
    """True when ``setopt NAME`` (``setting``) or ``unsetopt NAME`` turns DEBUG_BEFORE_CMD off.

    zsh folds case and underscores and reads a ``no`` prefix as the inverse. Without
    DEBUG_BEFORE_CMD the DEBUG trap runs *after* each command: the gate would judge what already ran.
    (Measured on zsh 5.9: LOCAL_OPTIONS, ERR_EXIT and `emulate` do not stop the trap's skip.)
    """
    norm = name.lower().replace("_", "")
    if norm.startswith("no"):
        norm, setting = norm[2:], not setting
    return norm == "debugbeforecmd" and not setting


def _listing_only(cmd: SimpleCommand) -> bool:
    """``declare -p NAME``, ``typeset -f NAME``, ``functions NAME``, ``alias NAME``: prints, changes nothing."""
    if any("=" in a for a in cmd.args):
        return False
    opts = [a for a in cmd.args if a.startswith(("-", "+"))]
    if cmd.head in ("declare", "typeset"):
        return bool(opts) and all(o.startswith("-") and set(o[1:]) <= set("pfF") for o in opts)
    return cmd.head in ("functions", "alias") and not opts


def _disarms_hook(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    head, args = cmd.head, cmd.args
    if head == "trap":
        return (
            bool(args)
            and args[0] not in ("-p", "-l")
            and any(a.upper() in ("DEBUG", "RETURN") for a in args[1:])
        )
    if head == "set":
        if any(
            a in ("-A", "+A") and i + 1 < len(args) and args[i + 1] in _HOOK_ARRAYS
            for i, a in enumerate(args)
        ):
            return True  # zsh `set -A precmd_functions …`
        if any(
            a in ("-o", "+o") and i + 1 < len(args) and _zsh_option_off(args[i + 1], a == "-o")
            for i, a in enumerate(args)
        ):
            return True
        return any(a.startswith("+") and "T" in a for a in args) or any(
            a == "+o" and i + 1 < len(args) and args[i + 1] in ("functrace", "history")
            for i, a in enumerate(args)
        )
    if head == "shopt":
        # promptvars off: PS0 is printed, not expanded, so the gate never runs for an entry.
        opts, names = split_args(args)
        return (
            has_short(opts, "u")
            and not has_short(opts, "o")
            and bool({"extdebug", "promptvars"} & set(names))
        )
    if head in ("setopt", "unsetopt"):
        return any(
            _zsh_option_off(a, head == "setopt") for a in args if not a.startswith(("-", "+"))
        )
    if head == "shift":
        return any(a in _HOOK_ARRAYS for a in args)
    if head == "unset" and any(
        _rewrites_functions(a + "=") for a in args if a.startswith("functions[")
    ):
        return True
    if any(_rewrites_functions(a) for a in _assignments(cmd, facts)):
        return True
    if head == "bind":
        opts_ok = {"-p", "-P", "-v", "-V", "-s", "-S", "-l"}
        return (
            bool(args)
            and not all(a in opts_ok for a in args)
            and not (args[0] in ("-q", "-Q") and len(args) == 2)
        )
    if head == "bindkey":
        _, operands = split_args(args, frozenset({"-M"}))
        return len(operands) >= 2 or any(
            a in ("-r", "-d", "-D", "-A", "-N", "-s", "-R", "-e", "-v", "-a") for a in args
        )
    if head == "zle":
        return "accept-line" in args or any(a in ("-D", "-A") for a in args)
    if head in ("unset", "unfunction", "unalias", "unhash"):
        return any(
            _HOOK_FUNCS.search(a) or _HOOK_VARS.match(a) for a in args if not a.startswith("-")
        )
    if head == "add-zsh-hook":
        return any(a in ("-d", "-D") for a in args)
    if head == "enable":
        return "-n" in args and any(
            a in ("trap", "set", "shopt", "bind", "builtin", "history", "fc") for a in args
        )
    if head in _DECLARERS and not _listing_only(cmd):
        if any(_HOOK_VARS.match(a) for a in args if not a.startswith("-")):
            return True
    if any(_HOOK_VARS.match(a) for a in cmd.assignments):
        return True
    return any(
        f.upper() == "TRAPDEBUG" or (_HOOK_FUNCS.search(f) and "gatesh" in f.lower())
        for f in facts.functions
    )


def _disarms_hook_whole(facts: Facts) -> bool:
    """Bare statements: ``PS0=``, ``precmd_functions=()``, ``functions[TRAPDEBUG]=``."""
    if facts.assignments and any(
        _HOOK_VARS.match(a) or _rewrites_functions(a) for a in facts.assignments
    ):
        return True
    return bool(facts.functions) and any(f.upper() == "TRAPDEBUG" for f in facts.functions)


# The gate's own functions and variables (`__gatesh_gate`, `__gatesh_v`, `__gatesh_state` …).
_GATESH_NAME: Final = re.compile(r"(?<![\w${])__gatesh_")
# Builtins whose operands are names of variables, functions or aliases.
_NAME_TAKERS: Final = (
    frozenset(
        {
            "unset",
            "unfunction",
            "unhash",
            "unalias",
            "alias",
            "functions",
            "autoload",
            "let",
            "read",
            "mapfile",
            "readarray",
            "getopts",
            "vared",
            "disable",
            "enable",
            "shift",
            "add-zsh-hook",
            "zle",
            "nameref",
        }
    )
    | _DECLARERS
)
_NAME_OPTIONS: Final = {
    "printf": frozenset({"-v"}),
    "print": frozenset({"-v"}),
    "wait": frozenset({"-p"}),
}
# `${__gatesh_v:=…}`, and `(( __gatesh_v = 1 ))` / `$(( __gatesh_v++ ))`: the reader records no command
# for an arithmetic statement, so its text decides. Each alternative is anchored on a literal and
# scans forward without nesting (linear).
_GATESH_EXPANSION_WRITE: Final = re.compile(
    r"\$\{__gatesh_\w*+(?:\[[^\]]*+\])?:?=|\(\([^()]*?__gatesh_\w*+\s*+(?:\[[^\]]*+\]\s*+)?(?:[-+*/%&|^]|<<|>>)?=(?!=)"
    r"|\(\([^()]*?(?:\+\+|--)\s*+__gatesh_|__gatesh_\w*+\s*+(?:\+\+|--)"
)


def _names_gate_internals(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    if cmd.head.startswith("__gatesh_") or (cmd.argv and cmd.argv[0].text.startswith("__gatesh_")):
        return True  # running the hook's own functions by hand
    if any(f.startswith("__gatesh_") for f in facts.functions):
        return True  # redefining one (`__gatesh_gate() { echo '0)'; }`)
    if cmd.head in _NAME_TAKERS and not _listing_only(cmd):
        if any(_GATESH_NAME.search(a) for a in cmd.args):
            return True
    names = _NAME_OPTIONS.get(cmd.head)
    if names and any(_GATESH_NAME.match(v) for v in option_values(cmd.args, names)):
        return True
    if any(_GATESH_NAME.match(a) for a in cmd.assignments):
        return True
    return any(not w.static and _GATESH_EXPANSION_WRITE.search(w.text) for w in cmd.argv)


def _names_gate_internals_whole(facts: Facts) -> bool:
    if facts.assignments and any(_GATESH_NAME.match(a) for a in facts.assignments):
        return True
    if facts.functions and any(f.startswith("__gatesh_") for f in facts.functions):
        return True
    return "__gatesh_" in facts.text and bool(_GATESH_EXPANSION_WRITE.search(facts.text))


# What the hooks call by name without `builtin` (or call `builtin` itself): a function or alias of
# that name, or a disabled builtin, changes what the gate does. zsh's TRAPDEBUG runs `print` to hand
# the entry to gatesh and `setopt ERR_EXIT` to skip a refused one; bash's `local`, `return`.
_HOOK_BUILTINS: Final = frozenset(
    {
        "builtin",
        "command",
        "local",
        "return",
        "print",
        "printf",
        "setopt",
        "unsetopt",
        "emulate",
        "history",
        "shopt",
        "set",
        "unset",
        "declare",
        "typeset",
        "kill",
        "eval",
    }
)


def _shadows_hook_builtin(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    if cmd.head == "alias":
        return any("=" in a and a.split("=", 1)[0] in _HOOK_BUILTINS for a in cmd.args)
    if cmd.head == "disable":  # zsh: `disable print` turns the builtin off
        return any(a in _HOOK_BUILTINS for a in cmd.args)
    if cmd.head == "enable":  # bash: `enable -n local`
        return "-n" in cmd.args and any(a in _HOOK_BUILTINS for a in cmd.args)
    return False


# The reader takes `local() { …; }` for a declaration (no function recorded): the text decides.
_DECLARER_FUNC: Final = re.compile(
    r"(?<![\w-])(?:local|declare|typeset|export|readonly)[^\S\n]*+\([^\S\n]*+\)"
)


def _shadows_hook_builtin_whole(facts: Facts) -> bool:
    # _DECLARER_FUNC matches a literal `(`: a text without one is not searched.
    return not _HOOK_BUILTINS.isdisjoint(facts.functions) or (
        "(" in facts.text and bool(_DECLARER_FUNC.search(facts.text))
    )


# The history settings the bash hook sets again before every entry is read (see
# gatesh/shell/bash_hook.bash): while it can, nothing a command does to them or to the history
# list changes what the gate reads next, and the user's own values still decide what the list
# keeps. Only a setting made unchangeable stops the hook from setting it.
_HISTORY_VARS: Final = frozenset({"HISTCONTROL", "HISTIGNORE", "HISTSIZE"})


def _tampers_history(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    """``readonly HISTSIZE=0``, ``declare -r HISTCONTROL=ignorespace``, ``typeset -r HISTIGNORE``;
    also ``shopt -uo history`` (``set +o history`` spelt as shopt: the hook cannot turn the list
    back on from its prompt function, so every later entry would go unread and be refused)."""
    if cmd.head == "shopt":
        opts, names = split_args(cmd.args)
        return has_short(opts, "u") and has_short(opts, "o") and "history" in names
    readonly = cmd.head == "readonly" or (
        cmd.head in ("declare", "typeset", "local", "export")
        and any(a.startswith("-") and not a.startswith("--") and "r" in a[1:] for a in cmd.args)
    )
    if not readonly:
        return False
    declared = {
        a.split("=", 1)[0].removesuffix("+") for a in cmd.args if not a.startswith(("-", "+"))
    }
    return bool(_HISTORY_VARS & declared)


def _reruns_edited(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    """``fc`` and zsh's ``r`` run a history line again; an edited or substituted one was never gated.

    The gate sees only the ``fc`` line. Re-running an earlier entry unchanged (``fc -s``, ``r``,
    ``fc -e - 12``) runs what was gated when it was typed, so it stays ordinary. A substitution
    (``fc -s PAT=REP``, ``r old=new``) or an editor (``fc``, ``fc -e CMD``) makes a new command the gate
    never read: that is the escape.
    """
    head, args = cmd.head, cmd.args
    if head == "r":
        opts, operands = split_args(args)
        return not opts and any(re.match(r"^[^=]+=", a) for a in operands)
    if head != "fc":
        return False
    opts, operands = split_args(args, frozenset({"-e"}))
    if has_short([o for o in opts if o != "-"], "lpPRWAI"):
        return False  # listing, or the history stack and file (self.hook-history judges those)
    editors = [opts[i + 1] for i, o in enumerate(opts[:-1]) if o == "-e"]
    if any(e != "-" for e in editors):
        return True
    if not editors and not has_short(opts, "s"):
        return True  # `fc` alone opens $FCEDIT and runs what the editor leaves
    return any("=" in a for a in operands)


# --- leaving the gate -------------------------------------------------------------------------

# Human-only verbs (S9.5); `config` changes and `watch` (which answers prompts) included.
_HUMAN_VERBS: Final = frozenset(
    {"approve", "deny", "resume", "mandate", "watch", "uninstall", "answer"}
)
_CONFIG_READS: Final = frozenset({"show", "get", "path", "list", "--json", "--help"})


def _gatesh_argv(cmd: SimpleCommand) -> tuple[str, ...] | None:
    if cmd.head in ("gatesh", "gatesh.py"):
        return cmd.args
    if is_interpreter(cmd.head) and "-m" in cmd.args:
        i = cmd.args.index("-m")
        if i + 1 < len(cmd.args) and cmd.args[i + 1].split(".")[0] == "gatesh":
            return cmd.args[i + 2 :]
    return None


def _human_verb(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    argv = _gatesh_argv(cmd)
    if argv is None:
        return False
    positional = [a for a in argv if not a.startswith("-")]
    if not positional:
        return False
    verb = positional[0]
    if verb in _HUMAN_VERBS:
        return True
    if verb == "install" and "--uninstall" in argv:
        return True  # takes gatesh's hooks, git hooks or shims away: a person's call
    return verb == "config" and any(p not in _CONFIG_READS for p in positional[1:])


_SHELL_WITH_ARG: Final = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_ENV_CLEARS: Final = re.compile(r"\benv\s+(?:-\S+\s+)*?(?:-i\b|--ignore-environment\b|-\s)")


def _shell_is_interactive(cmd: SimpleCommand) -> bool:
    """A shell with neither ``-c`` nor a script operand reads its commands from a terminal or stdin."""
    opts, operands = split_args(cmd.args, _SHELL_WITH_ARG)
    if has_short([o for o in opts if not o.startswith("--")], "c") or "--command" in opts:
        return False
    return not operands


def _ungated_shell(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    head = cmd.head
    if (
        head == "script"
    ):  # the typescript recorder starts a shell of its own (no -c: the reader peels -c)
        return "/" not in (cmd.argv[0].text if cmd.argv else "/") and not any(
            a in ("-V", "--version", "-h", "--help") for a in cmd.args
        )
    if head in ("su", "sudo", "doas", "pkexec", "run0", "machinectl"):
        # `su`, `sudo -i`, `sudo -s`: a root shell with nobody gating it.
        if head == "sudo":
            return any(
                a in ("-i", "-s", "--login", "--shell")
                or (a.startswith("-") and not a.startswith("--") and ("i" in a or "s" in a))
                for a in cmd.args
            )
        if head == "machinectl":
            return "shell" in cmd.args
        return not any(a in ("-h", "--help", "-V", "--version") for a in cmd.args)
    if head not in SHELLS or not _shell_is_interactive(cmd):
        return False
    argv0 = cmd.argv[0].text if cmd.argv else ""
    if "/" in argv0:
        return True  # an absolute path bypasses the shims on PATH
    if "exec" in cmd.wrappers or cmd.privileged or cmd.context == "find -exec":
        return True
    return "env" in cmd.wrappers and bool(_ENV_CLEARS.search(cmd.raw))


_SHELL_NAME: Final = (
    r"""(?:/usr)?(?:/local)?(?:/bin/)?(?:ba|z|da|k|tc|c|fi|a|mk)?sh(?:\s+-[il]+)?"""
)
# Linear (bypass_failures, "still quadratic"): every blank run is possessive and followed by a
# non-blank, so no run is re-split between two quantifiers (`system` + 20 KB of blanks was cubic).
_ESCAPE_CODE: Final = re.compile(
    r"pty\.spawn\s*+\("
    r"|(?:system|exec[lvpe]*|spawn(?:Sync)?|popen|Popen|execute|call|run|check_call|passthru|shell_exec"
    r"|proc_open|pcntl_exec|exec)\s*+\(?\s*+\[?\s*+[\"']"
    + _SHELL_NAME
    + r"""[\"']\s*+(?:\)|\]|$|;|,\s*+[\[{]|,\s*+["'](?:-?[il]|-?\w*sh)["'])"""
    r"|^\s*+:?\s*+!\s*+" + _SHELL_NAME + r"\s*+$"
    r"|^\s*+:?\s*+sh(?:ell)?\s*+$|:set\s++shell="
    r"|\bexec\s++" + _SHELL_NAME + r"\b"
)


def _interpreter_escape(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    return any(_ESCAPE_CODE.search(code) for code in inline_code(cmd))


RULES: Final[tuple[SelfRule, ...]] = (
    SelfRule(
        "self.files-delete",
        "deletes or moves gatesh's own config, state, audit log or socket: tampering with the gate",
        _on(Kind.FILES, _deleted),
        examples=(
            "rm -rf ~/.config/gatesh",
            "rm ~/.local/state/gatesh/audit.jsonl",
            "mv ~/.config/gatesh/config.toml /tmp/",
            "rm -rf ~/.config/*",
            "rm -rf ~/.local",
            'sudo rm -rf "$XDG_STATE_HOME/gatesh"',
            "rm -f /etc/gatesh/config.toml",
        ),
        counter=("rm -rf ~/.config/nvim", "rm .gatesh.toml", "mv notes.txt ~/docs/"),
    ),
    SelfRule(
        "self.files-write",
        "writes into gatesh's own config, state, audit log or socket: tampering with the gate",
        _on(Kind.FILES, _written, _fed_to_writer),
        examples=(
            "echo 'rung = \"bypass\"' >> ~/.config/gatesh/config.toml",
            "cp evil.toml ~/.config/gatesh/config.toml",
            "tee ~/.local/state/gatesh/audit.jsonl",
            "sed -i s/auto/bypass/ ~/.config/gatesh/config.toml",
            "truncate -s0 ~/.local/state/gatesh/audit.jsonl",
            "chmod 777 ~/.config/gatesh",
            "ln -sf /dev/null ~/.local/state/gatesh/audit.jsonl",
            "find ~/.local/state/gatesh -delete",
            "vim ~/.config/gatesh/config.toml",
            "python3 -c \"open('/etc/gatesh/config.toml','w').write('')\"",
            "bash -c 'cat x > ~/.config/gatesh/config.toml'",
            "find / -print0 -name '*.txt' | xargs -0 -I{} mv {} {}.bak",
            "find / | xargs -I{} tar cf {} notes",
            "find ~ -iname GATESH | xargs chmod -R 777",
            "find / -name '*.mp3' -o -name gatesh | xargs rm -rf",
            "find -L / -user me | xargs chown you",
        ),
        counter=(
            "cat ~/.config/gatesh/config.toml",
            "cp ~/.config/gatesh/config.toml /tmp/backup.toml",
            "echo 'rung = \"write\"' >> .gatesh.toml",
            "ls -la ~/.local/state/gatesh",
            "grep rung ~/.config/gatesh/config.toml",
            "sed -n 1p ~/.config/gatesh/config.toml",
            "find / -print0 | xargs -0 tar cjf all.tar.bz2",
            "find ~ -name '*.txt' -print0 | xargs -0 cp -ut ~/newdir",
            "find / -iname '*.mp3' | xargs -I{} rsync -a {} /mnt/mp3/",
            "find / -iname '*.mp3' -type f | xargs -I{} mv {} /mnt/mp3",
            "cat dirs.txt | grep / | sort -u | xargs mkdir -p",
        ),
    ),
    SelfRule(
        "self.files-cwd",
        "changes into gatesh's own folders and writes there: tampering with the gate",
        _on(Kind.FILES, _worked_inside),
        examples=(
            "cd ~/.config/gatesh && rm config.toml",
            "cd ~/.local/state/gatesh; echo > audit.jsonl",
        ),
        counter=("cd ~/.config/gatesh && cat config.toml", "cd ~/src && rm -rf build"),
    ),
    SelfRule(
        "self.install",
        "replaces, edits or removes gatesh's installation (its launcher, shims, venv, man page or install "
        "record): tampering with the gate",
        _on(Kind.INSTALL, _deleted, _written, _worked_inside, _fed_to_writer),
        examples=(
            "cp /bin/true ~/.local/bin/gatesh",
            "ln -sf /bin/bash ~/.local/bin/gatesh",
            "rm ~/.local/bin/gatesh",
            "chmod -x ~/.local/bin/gatesh",
            "rm -rf ~/.local/share/gatesh/venv",
            "ln -sf /bin/bash ~/.local/share/gatesh/shims/bash",
            "~/.local/share/gatesh/venv/bin/pip uninstall -y gatesh",
            "sed -i s/ATTACK/SAFE/ ~/.local/share/gatesh/venv/lib/python3.11/site-packages/gatesh/x.py",
            "rm ~/.local/share/man/man1/gatesh.1",
            "python3 -c \"import os; os.remove(os.path.expanduser('~/.local/bin/gatesh'))\"",
        ),
        counter=(
            "cat ~/.local/bin/gatesh",
            "ls ~/.local/share/gatesh/venv/bin",
            "man gatesh",
            "~/.local/share/gatesh/venv/bin/python -c 'print(1)'",
            "cp ~/.local/bin/gatesh /tmp/launcher.txt",
            "pip install -e .",
        ),
    ),
    SelfRule(
        "self.harness-settings",
        "changes a harness's settings or hooks file, where its gatesh hooks are or can be switched off: "
        "tampering with the gate",
        _on(Kind.HARNESS, _deleted, _written, _worked_inside, _fed_to_writer),
        examples=(
            "echo '{}' > ~/.gemini/settings.json",
            "rm ~/.claude/settings.json",
            "jq 'del(.hooks)' ~/.claude/settings.json | sponge ~/.claude/settings.json",
            "sed -i '/gatesh/d' ~/.codex/hooks.json",
            "mv ~/.codex/hooks.json ~/.codex/hooks.off",
            "echo '{\"disableAllHooks\": true}' > .claude/settings.local.json",
            "cp /tmp/s.json .gemini/settings.json",
            "echo 'features.hooks = false' >> ~/.codex/config.toml",
            "python3 -c \"import json,os;p=os.path.expanduser('~/.claude/settings.json');json.dump({},open(p,'w'))\"",
        ),
        counter=(
            "cat ~/.claude/settings.json",
            "jq .hooks ~/.claude/settings.json",
            "sed -n '/hooks/p' ~/.claude/settings.json",
            "rm .claude/settings.local.json",
            "cat .gemini/settings.json",
            "ls ~/.codex",
        ),
    ),
    SelfRule(
        "self.harness-hooks-off",
        "starts a harness with its hooks off, moves where it reads its settings, or writes a setting that "
        "switches hooks off: escaping the gate",
        _harness_hooks_off,
        examples=(
            "codex -c features.hooks=false exec 'make'",
            "claude --settings '{\"disableAllHooks\":true}' -p hi",
            "CLAUDE_CONFIG_DIR=/tmp/c claude -p hi",
            "CODEX_HOME=/tmp/x codex exec ls",
            "claude --setting-sources project -p hi",
            "echo '{\"disableAllHooks\": true}' > /tmp/s.json",
        ),
        counter=(
            "claude -p 'fix the tests'",
            "codex exec 'make test'",
            "codex -c model=o3 exec ls",
            "grep -r disableAllHooks docs/",
        ),
    ),
    SelfRule(
        "self.transcript",
        "writes or deletes a harness's session transcript (the record of what the user said): tampering "
        "with the gate",
        _on(Kind.TRANSCRIPT, _deleted, _written, _worked_inside, _fed_to_writer),
        examples=(
            'echo \'{"type":"user"}\' >> ~/.claude/projects/p/s.jsonl',
            "rm -rf ~/.claude/projects",
            "tee -a ~/.codex/sessions/2025/x.jsonl",
            "cd ~/.claude/projects/p && echo x >> s.jsonl",
            "python3 -c \"open('/root/.claude/projects/p/s.jsonl','a').write('x')\"",
        ),
        counter=(
            "cat ~/.claude/projects/p/s.jsonl",
            "tail -n 5 ~/.claude/projects/p/s.jsonl",
            "grep -r hello ~/.claude/projects",
            "ls ~/.gemini/tmp",
        ),
    ),
    SelfRule(
        "self.harness-snapshot",
        "changes a harness's shell snapshot, which the harness sources before every command and the "
        "gate does not read (harness boilerplate, S1): escaping the gate",
        _on(Kind.SNAPSHOT, _deleted, _written, _worked_inside, _fed_to_writer),
        examples=(
            "echo 'rm -rf ~' >> ~/.claude/shell-snapshots/snapshot-bash-1-abc.sh",
            "cp /tmp/payload.sh ~/.codex/shell_snapshots/0198a7c2.sh",
            "tee ~/.codex/shell_snapshots/x.sh < /tmp/p",
            "cd ~/.claude/shell-snapshots && echo x > s.sh",
        ),
        counter=(
            "cat ~/.claude/shell-snapshots/snapshot-bash-1-abc.sh",
            "ls ~/.codex/shell_snapshots",
            "grep -r alias ~/.claude/shell-snapshots",
        ),
    ),
    SelfRule(
        "self.git-hooks",
        "changes or removes the git hooks gatesh installed: tampering with the gate",
        _on(Kind.GIT_HOOKS, _deleted, _written, _worked_inside, _fed_to_writer),
        examples=(
            "rm -rf ~/.local/share/gatesh/git-hooks",
            "chmod -x ~/.local/share/gatesh/git-hooks/pre-push",
            "echo 'exit 0' > ~/.local/share/gatesh/git-hooks/pre-push",
        ),
        counter=(
            "cat ~/.local/share/gatesh/git-hooks/pre-push",
            "ls .git/hooks",
            "rm .git/hooks/pre-commit.sample",
        ),
    ),
    SelfRule(
        "self.git-hooks-path",
        "moves git's hooks away from gatesh's (core.hooksPath, init.templateDir): tampering with the gate",
        _git_hooks_setting,
        examples=(
            "git config --local core.hooksPath .nohooks",
            "git config --global --unset core.hooksPath",
            "git -c core.hooksPath=/dev/null push",
            "git config core.HooksPath /tmp/h",
            "git config --global init.templateDir /tmp/t",
            "git config --remove-section core",
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/x git push",
            "echo '[core] hooksPath = /x' >> .git/config",
            "sed -i 's/hooksPath.*//' ~/.gitconfig",
            "git config set core.hooksPath /x",
            "git config --edit",
        ),
        counter=(
            "git config user.email me@example.com",
            "git config --global user.name 'Me'",
            "git config remote.origin.url git@example.com:me/p.git",
            "git config --get core.hooksPath",
            "git config --list",
            "echo '[user] name = me' >> ~/.gitconfig",
            "git push origin main",
            "git config core.editor vim",
        ),
    ),
    SelfRule(
        "self.inner-env",
        "points an inner gatesh at other folders or another session by environment (XDG_*, HOME, GATESH_*): "
        "escaping the gate",
        _inner_gatesh_env,
        examples=(
            "XDG_STATE_HOME=/tmp/s gatesh -c 'git reset --hard'",
            "env XDG_RUNTIME_DIR=/tmp/r gatesh -c ls",
            "export XDG_CONFIG_HOME=/tmp/c",
            "GATESH_SESSION=fresh make",
            "unset XDG_RUNTIME_DIR",
            "env -u XDG_RUNTIME_DIR gatesh -c ls",
            "declare -x GATESH_OPERATOR=person",
            "HOME=/tmp/h python3 -m gatesh -c ls",
            "env -i gatesh -c 'touch x'",
        ),
        counter=(
            "echo $XDG_STATE_HOME",
            "XDG_CONFIG_HOME=/tmp/c nvim",
            "HOME=/tmp/h npm install",
            "printenv GATESH_SESSION",
            "gatesh -c 'ls'",
        ),
        whole=_inner_gatesh_env_whole,
    ),
    SelfRule(
        "self.daemon-kill",
        "stops the gatesh daemon: tampering with the gate",
        _kills_daemon,
        examples=(
            "pkill -f gatesh",
            "killall gatesh",
            "kill $(pgrep gatesh)",
            "kill -9 `pidof gatesh`",
            "systemctl --user stop gatesh",
            "sudo pkill -9 -f 'gatesh daemon'",
            "pgrep -f gatesh | xargs kill",
            "ps aux | grep gates[h] | awk '{print $2}' | xargs kill -9",
            "kill -9 $(cat ~/.local/state/gatesh/daemon.lock)",
            "pkill -f 'python.* -m gatesh'",
            "python3 -c \"import os,signal;os.kill(int(open('/tmp/gatesh-0/daemon.lock').read()),9)\"",
        ),
        counter=(
            "pkill -f webpack",
            "kill 1234",
            "kill $(pgrep node)",
            "systemctl status gatesh",
            "kill -0 $(pgrep -f gatesh)",
            "kill %1",
            "pgrep -f gatesh",
        ),
    ),
    SelfRule(
        "self.daemon-trace",
        "attaches a tracer or debugger to the gatesh daemon: tampering with the gate",
        _traces_daemon,
        examples=(
            "strace -p $(pgrep -f gatesh)",
            "gdb -p $(pidof gatesh)",
            "sudo ltrace -p $(pgrep gatesh)",
        ),
        counter=("strace -p 1234", "strace ls", "gdb ./a.out"),
    ),
    SelfRule(
        "self.hook-names",
        "changes or runs the gate's own __gatesh_* functions or variables in this shell: tampering with the gate",
        _names_gate_internals,
        examples=(
            "__gatesh_v=0",
            "__gatesh_state=allowed",
            "unset __gatesh_v",
            "declare -i __gatesh_v=0",
            "typeset -g __gatesh_state=allowed",
            "readonly __gatesh_v",
            "local __gatesh_h=1",
            "export __gatesh_entry=ls",
            "__gatesh_gate() { echo '0)'; }",
            "__gatesh_prompt",
            "__gatesh_addhistory 'ls'",
            "printf -v __gatesh_v %s 0",
            "read __gatesh_h <<< 5",
            "let __gatesh_h=0",
            "(( __gatesh_h = 0 ))",
            ": ${__gatesh_v:=0}",
            "alias __gatesh_gate=\"echo '0)'\"",
            "__gatesh_h=1 true",
            "unfunction __gatesh_precmd",
            "unset -f __gatesh_gate",
            "add-zsh-hook -d precmd __gatesh_precmd",
        ),
        counter=(
            'echo "__gatesh_x"',
            "echo __gatesh_v",
            "declare -p __gatesh_v",
            "typeset -f __gatesh_gate",
            "echo $__gatesh_h",
            "grep __gatesh_ gatesh/shell/bash_hook.bash",
            "my_gatesh_v=1",
            "(( x = __gatesh_h + 1 ))",
        ),
        whole=_names_gate_internals_whole,
    ),
    SelfRule(
        "self.hook",
        "disarms the gate's hook in this shell (traps, key bindings, hook variables): tampering with the gate",
        _disarms_hook,
        examples=(
            "trap - DEBUG",
            "trap '' DEBUG",
            "trap 'echo hi' DEBUG",
            "set +o functrace",
            "shopt -u extdebug",
            "bind -x '\"\\C-m\": true'",
            "bindkey '^M' self-insert",
            "zle -D accept-line",
            "unfunction preexec",
            "PROMPT_COMMAND=",
            "export PROMPT_COMMAND='true'",
            "unset PROMPT_COMMAND",
            "precmd_functions=()",
            "enable -n trap",
            "PS0=",
            "PS0+='x'",
            "unset PS0",
            "readonly PS0",
            "shopt -u promptvars",
            "shopt -qu promptvars",
            "functions[TRAPDEBUG]=",
            "unset 'functions[TRAPDEBUG]'",
            "TRAPDEBUG() { :; }",
            "unfunction TRAPDEBUG",
            "unset -f TRAPDEBUG",
            "setopt no_debug_before_cmd",
            "unsetopt DEBUG_BEFORE_CMD",
            "set +o debugbeforecmd",
            "add-zsh-hook -D precmd '*'",
            "zshaddhistory_functions=()",
            "preexec_functions+=(mine)",
            "shift precmd_functions",
            "set -A precmd_functions",
        ),
        counter=(
            "trap 'rm -f $tmp' EXIT",
            "trap -p",
            "bind -p",
            "bindkey",
            "set -e",
            "shopt -s globstar",
            "unset -f myfunc",
            "export PATH=$PATH:~/bin",
            "shopt -s promptvars",
            "shopt -u nullglob",
            "echo $PS0",
            "declare -p PS0",
            "setopt debug_before_cmd",
            "unsetopt nomatch",
            "setopt localoptions",
            "functions[myfn]='echo hi'",
            "set -A files a b",
            "set +o histexpand",
            "PS1='$ '",
        ),
        whole=_disarms_hook_whole,
    ),
    SelfRule(
        "self.hook-shadow",
        "replaces a builtin the gate's hook calls (a function, alias or disabled builtin of that name): "
        "tampering with the gate",
        _shadows_hook_builtin,
        examples=(
            "print() { builtin print -rn -- ls; }",
            "function setopt { :; }",
            "alias print='echo ls'",
            "local() { :; }",
            "builtin() { :; }",
            "disable print",
            "enable -n setopt",
            "history() { :; }",
        ),
        counter=(
            'ls() { command ls -F "$@"; }',
            "alias ll='ls -l'",
            "disable -p",
            "print -r -- hi",
            "setopt extendedglob",
            "alias",
        ),
        whole=_shadows_hook_builtin_whole,
    ),
    SelfRule(
        "self.hook-history",
        "makes a history setting the gate's hook sets before every entry unchangeable, so the "
        "gate can no longer read entries: tampering with the gate",
        _tampers_history,
        examples=(
            "readonly HISTSIZE=0",
            "declare -r HISTCONTROL=ignorespace",
            "typeset -r HISTIGNORE='*'",
            "readonly HISTCONTROL",
            "declare -gr HISTSIZE=1",
            "shopt -uo history",
        ),
        counter=(
            "history -c",
            "history -d 12",
            "HISTCONTROL=ignoreboth",
            "HISTSIZE=0",
            "export HISTSIZE=1",
            "shopt -u cmdhist",
            "HISTFILE=~/.bash_history_agent",
            "declare -p HISTCONTROL",
            "readonly PATH_X=1",
            "fc -p",
            "HISTTIMEFORMAT='%F '",
        ),
    ),
    SelfRule(
        "self.history-rerun",
        "re-runs a history line edited or substituted after the gate read it (fc, r): escaping the gate",
        _reruns_edited,
        examples=(
            "fc -s ls=rm",
            "fc -s 'echo '= 3",
            "fc -e - echo=rm",
            "fc -e vim",
            "fc -e 'sed -i s/a/b/' -1",
            "fc",
            "fc 10 12",
            "r ls=rm",
            "r echo=rm 5",
        ),
        counter=(
            "fc -l",
            "fc -ln -10",
            "fc -s",
            "fc -s make",
            "fc -e - 12",
            "r",
            "r make",
            "fc -W",
        ),
    ),
    SelfRule(
        "self.human-verb",
        "runs a gatesh verb only a person may run (approve, deny, resume, mandate, watch, config changes, "
        "uninstalling an integration)",
        _human_verb,
        examples=(
            "gatesh approve 42",
            "gatesh deny 42",
            "gatesh resume s1",
            "gatesh mandate 'delete it all'",
            "gatesh install claude-code --uninstall",
            "gatesh config set rung bypass",
            "python3 -m gatesh approve 7",
            "gatesh watch",
        ),
        counter=(
            "gatesh explain 'rm -rf x'",
            "gatesh status",
            "gatesh config",
            "gatesh log --json",
            "gatesh install git",
        ),
    ),
    SelfRule(
        "self.ungated-shell",
        "starts a shell that gatesh does not gate: escaping the gate",
        _ungated_shell,
        examples=(
            "/bin/bash",
            "/usr/bin/zsh -i",
            "exec bash",
            "exec /bin/sh",
            "script",
            "script -q /dev/null",
            "env -i bash",
            "sudo -i",
            "sudo su",
            "su -",
            "sudo bash",
            "find . -exec /bin/sh \\; -quit",
            "/bin/bash --login",
        ),
        counter=(
            "bash",
            "sh",
            "/bin/bash -c 'ls'",
            "/bin/bash build.sh",
            "exec bash -c 'make'",
            "script -c 'make test' build.log",
            "bash -lc 'npm test'",
            "sudo -u me ls",
            "zsh -i",
        ),
    ),
    SelfRule(
        "self.interpreter-escape",
        "an interpreter starts an interactive shell nothing gates: escaping the gate",
        _interpreter_escape,
        examples=(
            "python3 -c 'import pty; pty.spawn(\"/bin/bash\")'",
            "python -c 'import os; os.system(\"/bin/sh\")'",
            "perl -e 'exec \"/bin/sh\";'",
            "ruby -e 'exec \"/bin/sh\"'",
            "vim -c ':!/bin/sh'",
            "awk 'BEGIN {system(\"/bin/sh\")}'",
            "php -r 'system(\"/bin/bash -i\");'",
            'node -e \'require("child_process").spawn("/bin/sh", {stdio: [0, 1, 2]})\'',
            "lua -e 'os.execute(\"/bin/sh\")'",
            "vim -c ':sh'",
        ),
        counter=(
            "python -c 'print(1)'",
            'python -c \'import subprocess; subprocess.run(["bash", "build.sh"])\'',
            "awk '{print $1}' f",
            "vim -c ':wq' notes.txt",
            "perl -e 'print \"sh\"'",
        ),
    ),
)


def protected_for(paths: GatePaths, cwd: str = "") -> Protected:
    """The protected locations for ``paths``: the rows of the places table that self-protection
    guards (``gatesh.vocab.places``), resolved for this home, environment and the installation
    its record names (read now); cached per inputs."""
    global _last_protected
    home, claude_home, codex_home = environ_values(("HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME"))
    key = (paths, home or "", paths.installation(), claude_home or "", codex_home or "", cwd)
    last = _last_protected
    if last is not None and last[0] == key:
        return last[
            1
        ]  # the same inputs as the last call (a tuple compare, items by identity first)
    found = _protected(*key)
    _last_protected = (key, found)
    return found


# The inputs and answer of the last protected_for call: a daemon asks with the same ones again and
# again, and _protected is a function of them alone, so this answers as its cache would, without
# hashing the inputs. One tuple, replaced whole (a reader in another thread sees an old or a new pair).
_last_protected: tuple[tuple[GatePaths, str, object, str, str, str], Protected] | None = None

# Which rule family names a place of each kind self-protection guards.
_KIND_OF_PLACE: Final = {
    **dict.fromkeys(
        (
            places.Kind.GATE_CONFIG,
            places.Kind.GATE_STATE,
            places.Kind.AUDIT_LOG,
            places.Kind.GATE_RUNTIME,
            places.Kind.GATE_DATA,
            places.Kind.SYSTEM_TIER,
        ),
        Kind.FILES,
    ),
    **dict.fromkeys(
        (
            places.Kind.LAUNCHER,
            places.Kind.VENV,
            places.Kind.SHIMS,
            places.Kind.MAN_PAGE,
            places.Kind.INSTALL_RECORD,
            places.Kind.PACKAGE,
        ),
        Kind.INSTALL,
    ),
    places.Kind.GATE_GIT_HOOKS: Kind.GIT_HOOKS,
    places.Kind.HARNESS_SETTINGS: Kind.HARNESS,
    places.Kind.TRANSCRIPT: Kind.TRANSCRIPT,
    places.Kind.SNAPSHOT: Kind.SNAPSHOT,
}
_GUARDED: Final = tuple(p for p in places.PLACES if p.guard is places.Guard.SELF_PROTECTION)


@functools.lru_cache(maxsize=64)
def _protected(
    paths: GatePaths, _home_env: str, inst: object, claude_home: str, codex_home: str, cwd: str
) -> Protected:
    from gatesh._paths import Installation

    assert isinstance(inst, Installation)
    home = os.path.expanduser("~")
    env = {"CLAUDE_CONFIG_DIR": claude_home, "CODEX_HOME": codex_home}
    resolved = places.resolve(home, env, inst, gate=paths, places=_GUARDED)
    clean: dict[str, Kind] = {}
    by_kind: dict[places.Kind, list[str]] = {}
    for r in resolved:
        if r.names:
            continue  # a part of a folder that is protected whole
        by_kind.setdefault(r.kind, []).append(r.path)
        if r.path not in ("/", home):
            clean.setdefault(r.path, _KIND_OF_PLACE[r.kind])
    return Protected(
        roots=tuple(clean.items()),
        home=home,
        volatile=tuple(r.path for r in resolved if r.place.recreated),
        cwd=cwd,
        launchers=tuple(by_kind.get(places.Kind.LAUNCHER, ())),
        venvs=tuple(by_kind.get(places.Kind.VENV, ())),
        shims=tuple(by_kind.get(places.Kind.SHIMS, ())),
        git_global=inst.git_global,
        paths=paths,
    )


# --- which rules a plain command can match ---------------------------------------------------

# The wrappers a test reads (`env -u X gatesh`, `strace -p`); the others (sudo, nohup, …) none reads.
_READ_WRAPPERS: Final = frozenset({"env"}) | _TRACERS


def _plain(cmd: SimpleCommand) -> bool:
    """A command none of whose parts every rule looks at whatever its head: a static head that is
    no shell, interpreter or ``__gatesh_`` name, every word static, no assignment, no write
    redirection, not run by xargs, no ``env`` or tracer wrapper.

    Each test in :data:`_PLAIN_HEADS` reads a plain command only through its head: for a plain
    command whose head is not one of its heads it answers no (each test's code shows why; the
    equivalence is tested over every rule's examples and seeded splices of them)."""
    head = cmd.head
    argv = cmd.argv
    if not head or not argv or cmd.assignments or cmd.writes or cmd.context == "xargs":
        return False
    if (
        head in SHELLS
        or is_interpreter(head)
        or head.startswith("__gatesh_")
        or argv[0].text.startswith("__gatesh_")
    ):
        return False
    if cmd.wrappers and not _READ_WRAPPERS.isdisjoint(cmd.wrappers):
        return False
    for w in argv:
        if not w.static:
            return False
    return True


#: For each test (a rule's, or a path test of the ``_on`` rules), the heads of the plain commands
#: (:func:`_plain`, in a line with no function definition and no hooks-off setting in its text)
#: it can match. A test not listed is asked of every command (``_written``: an unknown program
#: handed a gate path may write it; ``_interpreter_escape``: its inline code).
_PLAIN_HEADS: Final[dict[object, frozenset[str]]] = {
    _deleted: _DELETERS | {"tar"},
    _fed_to_writer: _FED_WRITER_HEADS,
    _worked_inside: _CD,
    _harness_hooks_off: _HARNESSES | _DECLARERS,
    _git_hooks_setting: _DECLARERS
    | _CONFIG_FILE_WRITERS
    | _IN_PLACE
    | _DELETERS
    | {"git", "setenv"},
    _inner_gatesh_env: _DECLARERS
    | {"setenv", "unset", "read", "mapfile", "readarray", "printf", "print", "getopts", "env"},
    _kills_daemon: _KILLERS | {"systemctl", "launchctl", "service"},
    _traces_daemon: _TRACERS,
    _names_gate_internals: _NAME_TAKERS | frozenset(_NAME_OPTIONS),
    _disarms_hook: _DECLARERS
    | {
        "trap",
        "set",
        "shopt",
        "setopt",
        "unsetopt",
        "shift",
        "unset",
        "bind",
        "bindkey",
        "zle",
        "unfunction",
        "unalias",
        "unhash",
        "add-zsh-hook",
        "enable",
    },
    _shadows_hook_builtin: frozenset({"alias", "disable", "enable"}),
    _tampers_history: frozenset({"shopt", "readonly", "declare", "typeset", "local", "export"}),
    _reruns_edited: frozenset({"r", "fc"}),
    _human_verb: frozenset({"gatesh", "gatesh.py"}),
    _ungated_shell: SHELLS | {"script", "su", "sudo", "doas", "pkexec", "run0", "machinectl"},
}

# One rule as check() asks it: the rule, and for an `_on` rule its kind and the path tests to ask.
_Step = tuple[SelfRule, Kind | None, tuple[PathTest, ...]]


def _steps(head: str | None) -> tuple[_Step, ...]:
    """Every rule in order (``head`` None), or those a plain command with ``head`` can match, each
    ``_on`` rule with only the path tests that can find something for it."""

    def asked(test: object) -> bool:
        heads = _PLAIN_HEADS.get(test)
        return head is None or heads is None or head in heads

    out: list[_Step] = []
    for rule in RULES:
        test = rule.test
        if type(test) is _On:
            tests = tuple(t for t in test.tests if asked(t))
            if tests:
                out.append((rule, test.kind, tests))
        elif asked(test):
            out.append((rule, None, ()))
    return tuple(out)


_ALL_STEPS: Final = _steps(None)
# The steps of a plain command, by its head; a head no test names gets the default.
_PLAIN_STEPS: Final = {h: _steps(h) for heads in _PLAIN_HEADS.values() for h in heads}
_PLAIN_DEFAULT: Final = _steps("")
_WHOLE_RULES: Final = tuple(r for r in RULES if r.whole is not None)
_HOOK_RULE: Final = next(r for r in RULES if r.id == "self.hook")


def _holds_any(text: str, literals: tuple[str, ...]) -> bool:
    """Whether ``text`` holds one of ``literals`` (a substring search each: cheaper than a regex)."""
    for literal in literals:
        if literal in text:
            return True
    return False


def check(
    facts: Facts, paths: GatePaths, cwd: str = "", *, every_rule: bool = False
) -> Finding | None:
    """The first self-protection rule the command matches, as an ATTACK finding; None if none.

    Guarantees: every executed command the reader found is matched, whatever its context.
    ``cwd`` (the command's folder) lets the checks that read the disk resolve relative paths.
    A plain command (:func:`_plain`) is asked only the rules its head can match
    (:data:`_PLAIN_HEADS`); ``every_rule`` asks every rule of every command (the same answer).
    """
    prot = protected_for(paths, cwd)
    values = _static_values(facts)
    if values:
        prot = prot.with_values(values)
    # A function definition or a hooks-off setting anywhere is read by rules whatever the head.
    plain_line = not every_rule and not facts.functions and not _says_hooks_off(facts.text)
    for cmd in facts.commands:
        if cmd.remote:
            continue  # another host's files and processes are not this gate's
        steps = (
            _PLAIN_STEPS.get(cmd.head, _PLAIN_DEFAULT) if plain_line and _plain(cmd) else _ALL_STEPS
        )
        # Each path test of the `_on` rules runs at most once for this command, in rule order.
        seen: dict[PathTest, Kind | None] = {}
        for rule, kind, tests in steps:
            if kind is None:
                hit = rule.test(cmd, facts, prot)
            else:
                hit = False
                for t in tests:
                    if t in seen:
                        got = seen[t]
                    else:
                        got = seen[t] = t(cmd, facts, prot)
                    if got is kind:
                        hit = True
                        break
            if hit:
                return Finding(rule.id, Outcome.ATTACK, rule.reason)
    for rule in _WHOLE_RULES:
        if rule.whole is not None and rule.whole(facts):
            return Finding(rule.id, Outcome.ATTACK, rule.reason)
    text = facts.text
    if _holds_any(text, _HOOK_NAMES) and _HOOK_ASSIGN_TEXT.search(text):
        # The reader drops a bare assignment with no command (`PROMPT_COMMAND=`), so the text decides.
        return Finding(_HOOK_RULE.id, Outcome.ATTACK, _HOOK_RULE.reason)
    if (
        _holds_any(text, _RAW_NEEDS)
        and (not facts.readable or reads_code_from_stdin(facts))
        and _RAW.search(text)
    ):
        return Finding(
            "self.raw-text",
            Outcome.ATTACK,
            "text the reader could not unfold (unreadable, or fed to a shell on stdin) changes "
            "gatesh's files, daemon or hook, or runs a human-only verb: tampering with the gate",
        )
    return None


# Linear (bypass_failures #12, the same ReDoS class): the old `(?:^|[;&|\n({])\s*(?:NAME=\S*\s+)*`
# re-scanned a newline run or a blank-free `a=1;a=1;…` from every separator (10 s at 20 KB).
# Now blanks never cross a newline (the newline is itself a start), values are possessive and
# stop at unquoted separators (quoted, `$(…)`, `${…}` parts kept whole), and `{` starts only as
# the reserved word (blank on both sides), so no start re-reads another start's text.
_ASSIGN_VALUE: Final = (
    r"(?:\$\(\([^()]*+\)\)|\$\([^()]*+\)|\$\{[^{}]*+\}|'[^']*+'|"
    + '"[^"]*+"'
    + r"|[^\s;&|'"
    + '"'
    + r"($]++|\$)*+"
)
_HOOK_ASSIGN_TEXT: Final = re.compile(
    r"(?:^|(?<=[;&|\n(])|(?<=(?<![^\s;&|(])\{)(?=\s))[^\S\n]*+(?:[A-Za-z_]\w*+="
    + _ASSIGN_VALUE
    + r"[^\S\n]++)*(?:PROMPT_COMMAND|preexec_functions|precmd_functions"
    r"|zshaddhistory_functions|PS0)(?:\[[^\]]*\])?\+?="
)
# One of these is in every text _HOOK_ASSIGN_TEXT matches (it is not searched otherwise).
_HOOK_NAMES: Final = (
    "PROMPT_COMMAND",
    "preexec_functions",
    "precmd_functions",
    "zshaddhistory_functions",
    "PS0",
)

# For unreadable text only: names of gatesh's files or hook next to a verb that changes them.
# Linear: only the first verb of a `;&|`/newline segment is tried (a later verb's name search sees a
# subset of the first one's text, so no match is lost); `rm rm rm …` re-scanned the segment from
# every verb (20 s at 20 KB).
_RAW_VERB: Final = (
    r"(?:\brm\b|\bmv\b|>|\btee\b|\bsed\s++-i|\btruncate\b|\bchmod\b|\bpkill\b|\bkillall\b|\bkill\b)"
)
_RAW: Final = re.compile(
    r"(?:^|(?<=[;&|\n]))(?:(?!" + _RAW_VERB + r")[^;&|\n])*" + _RAW_VERB + r"[^;&|\n]*"
    r"(?:\.config/gatesh|\.local/(?:state|share)/gatesh|/etc/gatesh|\bgatesh\b)"
    r"|\btrap\s++(?:-|''|\"\")\s++DEBUG|\bgatesh\s++(?:approve|deny|resume|mandate)\b"
)
# One of these is in every text _RAW matches (its gatesh names, or the DEBUG of the trap).
_RAW_NEEDS: Final = ("gatesh", "DEBUG")

"""Harness wrappers (S1): the boilerplate agent harnesses put around the agent's command.

Two kinds of harness text reach a shell gatesh stands in (``-c``, the shims, a login shell):

- a **wrapper** around the agent's command (Claude Code's ``eval '…'``, Gemini CLI's subshell,
  Codex's snapshot ``exec``): the agent's command is taken out and gated; the boilerplate is not
  rated. The ``# why:`` justification and a person's pending approval then apply to the agent's
  command, whatever random names (``/tmp/claude-XXXX-cwd``, ``/tmp/gemini-shell-XXXXXX``) the
  boilerplate carries this time;
- a harness's own **shell-snapshot script**, run once at session start to capture the user's
  shell (it sources the user's rc file and writes a snapshot file the harness sources later).
  Nothing in it is the agent's: it is recognised as boilerplate (:attr:`Part.SNAPSHOT`), so it is
  neither rated nor counted as a negotiation round. Starting the user's login shell runs the same
  rc file ungated, so this grants nothing a shell start does not.

Recognition is exact, per shape in :data:`SHAPES` (each names the pinned harness versions whose CI
run showed it, S11.4). A snapshot script is matched by the SHA-256 of its text with its variable
parts (the snapshot path, the rc file, a heredoc delimiter, the PATH value) replaced by
placeholders, each variable part first checked against a narrow pattern; the hashes are of the
pinned versions' scripts (gatesh does not carry the harnesses' text). Anything that differs in any
part is gated as a whole (``None``).
"""

from __future__ import annotations

import enum
import hashlib
import os
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gatesh._paths import LAUNCHER_HEADER
from gatesh.harnesses import Harness
from gatesh.vocab.programs.shells import PARSED_SHELLS

from ._walk import parse

__all__ = [
    "CODEX_SHIM",
    "SHAPES",
    "Part",
    "Shape",
    "Unwrapped",
    "classify",
    "unwrap",
    "unwrap_argv",
]


class Part(enum.Enum):
    """What a recognised harness string is."""

    COMMAND = "command"  # a wrapper: the agent's command inside is gated
    SNAPSHOT = "snapshot"  # the harness's own shell-snapshot script: nothing of the agent's
    # Boilerplate that ends by exec-ing a gatesh shim with the agent's command (Codex 0.169 with a
    # shim as login shell): the shim gates the command there, so it is not gated twice (a
    # person's one-time approval would be used up by the first).
    HANDOFF = "handoff"


@dataclass(frozen=True)
class Unwrapped:
    """A recognised harness string. ``command`` is the agent's command ("" for a snapshot)."""

    harness: Harness
    part: Part
    command: str
    shape: str  # the id of the :data:`SHAPES` row that matched


_SQ_BODY = r"(?:[^']|'\"'\"')*"  # a single-quoted body where ' is written '"'"'
_SAFE_PATH = r"[A-Za-z0-9_.+~/-]+"  # a path, ~ or / first: no quote, space or expansion
# A PATH value a snapshot may carry: folders, no character that could expand or end a line.
_PATH_VALUE = r"[A-Za-z0-9_.+~/:@%,=-]*"

# --- wrappers ----------------------------------------------------------------------------------

# Claude Code: [source SNAPSHOT [2>/dev/null || true] &&] [shopt -u extglob … || true &&]
# eval 'CMD' [< /dev/null] && pwd -P >| TMP/claude-XXXX-cwd
_CLAUDE = re.compile(
    r"(?:source (?P<q>['\"]?)"
    + _SAFE_PATH
    + r"/\.claude/shell-snapshots/snapshot-[A-Za-z0-9_.-]+\.sh(?P=q)"
    r"(?: 2>/dev/null \|\| true)? && )?"
    r"(?:(?:shopt -u extglob|setopt NO_EXTENDED_GLOB) 2>/dev/null \|\| true && )?"
    r"eval '(?P<cmd>" + _SQ_BODY + r")'"
    r"(?: \\?< /dev/null)?"
    r" && pwd -P >\| " + _SAFE_PATH + r"/claude-[0-9a-f]{4,16}-cwd",
    re.DOTALL,
)

# Gemini CLI up to 0.4x: shopt -u …; { CMD; }; __code=$?; pgrep -g 0 >TMP/shell_pgrep_<hex>.tmp 2>&1;
# exit $__code;
_GEMINI_PGREP = re.compile(
    r"shopt -u promptvars nullglob extglob nocaseglob dotglob; \{ (?P<cmd>.*); \}; __code=\$\?; "
    r"pgrep -g 0 >" + _SAFE_PATH + r"/shell_pgrep_[0-9a-f]+\.tmp 2>&1; exit \$__code;",
    re.DOTALL,
)

# Gemini CLI 0.61: the command in a subshell whose EXIT trap lists its background jobs.
_GEMINI_SUBSHELL = re.compile(
    r"shopt -u promptvars nullglob extglob nocaseglob dotglob; "
    r"_bgpids_file=" + _SAFE_PATH + r"/gemini-shell-[A-Za-z0-9]+/bgpids\.tmp\n"
    r"\(\n  trap 'jobs -p > \"\$_bgpids_file\"' EXIT\n"
    r"(?P<cmd>.*)\n"
    r"\)\n__code=\$\?\nexit \$__code",
    re.DOTALL,
)

# Codex: <shell> -c '. "$1" && shift && exec "$@"' ARG0 SNAPSHOT ARGV...
CODEX_SHIM: Final = '. "$1" && shift && exec "$@"'
_CODEX_SNAPSHOT = re.compile(_SAFE_PATH + r"/\.codex/shell_snapshots/[A-Za-z0-9_.-]+\.sh")

# --- shell-snapshot scripts ----------------------------------------------------------------------

# Claude Code: SNAPSHOT_FILE=<home>/.claude/shell-snapshots/snapshot-<shell>-<ms>-<rand>.sh, then a
# script that sources the rc file and appends functions, options, aliases and PATH to that file.
_CLAUDE_SNAPSHOT_FILE = re.compile(
    r"\ASNAPSHOT_FILE=(?P<file>(?P<home>" + _SAFE_PATH + r")/\.claude/shell-snapshots/snapshot-"
    r"(?:bash|zsh)-[0-9]+-[a-z0-9]+\.sh)\n"
)
_CLAUDE_SNAPSHOT_RC = re.compile(
    r'source "(?P<rc>' + _SAFE_PATH + r'/\.(?:bashrc|zshrc))" < /dev/null'
)
_CLAUDE_SNAPSHOT_PATH = re.compile(
    r"<< '(?P<delim>PATH_END_[a-z0-9]+)'\nexport PATH=(?P<value>" + _PATH_VALUE + r")\n(?P=delim)\n"
)


def _claude_snapshot_key(text: str) -> str | None:
    """The snapshot script with its variable parts as placeholders, or None when a part is off.

    The parts: the PATH heredoc (its random delimiter and the PATH value), the snapshot file, the
    rc file, and the HOME the snapshot file lies in (the script also names
    ``HOME/.local/bin/claude``).
    """
    m = _CLAUDE_SNAPSHOT_FILE.match(text)
    if m is None or len(_CLAUDE_SNAPSHOT_PATH.findall(text)) != 1:
        return None
    out = _CLAUDE_SNAPSHOT_PATH.sub("<< '{delim}'\nexport PATH={path}\n{delim}\n", text)
    out = out.replace(m.group("file"), "{snapshot}")
    if len(_CLAUDE_SNAPSHOT_RC.findall(out)) != 1:
        return None
    out = _CLAUDE_SNAPSHOT_RC.sub('source "{rc}" < /dev/null', out)
    if m.group("home") not in ("", "/"):
        out = out.replace(m.group("home") + "/", "{home}/")
    return out


# Codex checks a snapshot it just wrote by sourcing it once: set -e; . "<snapshot>.tmp-<digits>".
_CODEX_SNAPSHOT_CHECK = re.compile(
    r'set -e; \. "' + _SAFE_PATH + r'/\.codex/shell_snapshots/[A-Za-z0-9_.-]+\.tmp-[0-9]+"'
)


# Codex 0.169 runs each command through an environment-preserving wrapper: save Codex's own
# variables, source the snapshot, restore them, put Codex's helper folder on PATH, then
# exec '<login shell>' -c '<command>'.
_CODEX_ENV_SOURCE = re.compile(
    r"^if \. '(?P<snap>" + _SAFE_PATH + r"/\.codex/shell_snapshots/[A-Za-z0-9_.-]+\.sh)' "
    r">/dev/null 2>&1; then :; fi$",
    re.MULTILINE,
)
_CODEX_ENV_PATH = re.compile(
    r"""^if \[ -n "\$\{PATH:-\}" \]; then export PATH='(?P<dir>/[A-Za-z0-9_.+@/-]*)':"\$PATH"; """
    r"else export PATH='(?P=dir)'; fi$",
    re.MULTILINE,
)
_CODEX_ENV_EXEC = re.compile(
    r"\nexec '(?P<shell>" + _SAFE_PATH + r"/(?:bash|zsh|sh))' -c '(?:[^']|'\"'\"')*'\Z"
)


_CODEX_ENV_START: Final = "__CODEX_SNAPSHOT_OVERRIDE_SET_0="


def _codex_env_key(text: str) -> str | None:
    if not text.startswith(_CODEX_ENV_START):
        return None
    sources = list(_CODEX_ENV_SOURCE.finditer(text))
    paths = list(_CODEX_ENV_PATH.finditer(text))
    tail = _CODEX_ENV_EXEC.search(text)
    if len(sources) != 1 or len(paths) != 1 or tail is None:
        return None
    out = text[: tail.start()] + "\nexec '{shell}' -c '{command}'"
    out = _CODEX_ENV_SOURCE.sub("if . '{snapshot}' >/dev/null 2>&1; then :; fi", out)
    return _CODEX_ENV_PATH.sub(
        """if [ -n "${PATH:-}" ]; then export PATH='{dir}':"$PATH"; """
        "else export PATH='{dir}'; fi",
        out,
    )


def _hands_to_gatesh(text: str) -> bool:
    """A handoff's final ``exec SHELL -c …`` names a gatesh shim (so the command is gated there)."""
    tail = _CODEX_ENV_EXEC.search(text)
    return tail is not None and _is_gatesh(tail.group("shell"))


def _is_gatesh(path: str) -> bool:
    """True when ``path`` (links followed) is a launcher gatesh wrote: what it is exec-ed with is
    gated there. Read now, where the command is decided; the launcher and the shims are gatesh's
    own files, which a gated command cannot change (S3.4)."""
    try:
        real = os.path.realpath(path)
        with open(real, "rb") as f:
            head = f.read(512)
    except (OSError, ValueError):
        return False
    return os.path.basename(real) == "gatesh" and LAUNCHER_HEADER.encode() in head


def _whole_key(text: str) -> str | None:
    """A snapshot script with no variable part (Codex's refers to "$HOME/.bashrc" by name)."""
    return text


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# --- the table -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """One harness shape gatesh recognises. ``versions`` are those whose real runs showed it.

    A wrapper shape has ``wrapper`` (a pattern whose ``cmd`` group is the agent's command, with
    ``'"'"'`` turned back into ``'`` when ``single_quoted``); a snapshot shape has ``key`` (the
    text with its variable parts as placeholders) and ``digests`` (of the keys of the pinned
    versions' scripts), or ``boilerplate``, a pattern for a whole one-line text (Codex sourcing
    the snapshot it just wrote, to check it).
    """

    id: str
    harness: Harness
    versions: str
    part: Part
    wrapper: re.Pattern[str] | None = None
    single_quoted: bool = False
    key: Callable[[str], str | None] | None = None
    digests: frozenset[str] = frozenset()
    boilerplate: re.Pattern[str] | None = None  # a whole-text pattern with nothing of the agent's
    # How every text of this shape starts (one of these; empty: any text may be one). A text that
    # starts otherwise is not tried: the patterns and key functions above all anchor on them.
    starts: tuple[str, ...] = ()


SHAPES: Final = (
    Shape(
        "claude-code.eval",
        Harness.CLAUDE_CODE,
        "1.0 - 2.1.197",
        Part.COMMAND,
        _CLAUDE,
        single_quoted=True,
        starts=("source ", "shopt -u extglob ", "setopt NO_EXTENDED_GLOB ", "eval '"),
    ),
    Shape(
        "gemini.group-pgrep",
        Harness.GEMINI,
        "0.1 - 0.4x",
        Part.COMMAND,
        _GEMINI_PGREP,
        starts=("shopt -u promptvars ",),
    ),
    Shape(
        "gemini.subshell-bgpids",
        Harness.GEMINI,
        "0.61.0",
        Part.COMMAND,
        _GEMINI_SUBSHELL,
        starts=("shopt -u promptvars ",),
    ),
    Shape(
        "codex.snapshot-exec", Harness.CODEX, "0.1x - 0.169.0", Part.COMMAND
    ),  # argv: unwrap_argv
    Shape(
        "claude-code.snapshot",
        Harness.CLAUDE_CODE,
        "2.1.197 (bash)",
        Part.SNAPSHOT,
        key=_claude_snapshot_key,
        starts=("SNAPSHOT_FILE=",),
        digests=frozenset(
            {
                "1251115104f39710dbee7915f3dd151b221ef0e5345356394f6eb8a9ce54ea49",  # 2.1.197, bash
            }
        ),
    ),
    Shape(
        "codex.snapshot-check",
        Harness.CODEX,
        "0.169.0",
        Part.SNAPSHOT,
        boilerplate=_CODEX_SNAPSHOT_CHECK,
        starts=('set -e; . "',),
    ),
    Shape(
        "codex.env-exec",
        Harness.CODEX,
        "0.169.0",
        Part.HANDOFF,
        key=_codex_env_key,
        starts=(_CODEX_ENV_START,),
        digests=frozenset(
            {
                "169b20dfd100aaed2b90a82a76a89ebb73abe10ddb7212921bbea7c5327fcdfb",  # 0.169.0
            }
        ),
    ),
    Shape(
        "codex.snapshot",
        Harness.CODEX,
        "0.169.0 (bash)",
        Part.SNAPSHOT,
        key=_whole_key,
        digests=frozenset(
            {
                "6414b5f0a9e24341a4f2215ad77a0ae9b1871bcfa1dfff48260df5e29f4f8638",  # 0.169.0, bash
            }
        ),
    ),
)


# How the Codex shape starts: a shell's `-c` (checked before the shape is parsed at all).
_SHELL_C: Final = tuple(
    f"{s} -c "
    for s in (
        "bash",
        "sh",
        "zsh",
        "/bin/bash",
        "/bin/sh",
        "/bin/zsh",
        "/usr/bin/bash",
        "/usr/bin/zsh",
    )
)


def classify(text: str) -> Unwrapped | None:
    """The harness shape ``text`` is exactly, else None.

    Guarantees: a wrapper's command is returned only for an exact match of a shape in
    :data:`SHAPES`, and only when it reads as shell without a syntax error (so it cannot close
    the boilerplate around it and run something after it); a snapshot only when every variable
    part has its narrow form and the rest hashes to a pinned version's script. Never raises on
    text; every other string gives None.
    """
    for shape in SHAPES:
        if shape.starts and not text.startswith(shape.starts):
            continue
        if shape.wrapper is not None:
            m = shape.wrapper.fullmatch(text)
            if m is None:
                continue
            cmd = m.group("cmd")
            if shape.single_quoted:
                cmd = cmd.replace("'\"'\"'", "'")
            return Unwrapped(shape.harness, Part.COMMAND, cmd, shape.id) if _clean(cmd) else None
        if shape.boilerplate is not None and shape.boilerplate.fullmatch(text):
            return Unwrapped(shape.harness, Part.SNAPSHOT, "", shape.id)
        if shape.key is not None:
            key = shape.key(text)
            if key is None or _digest(key) not in shape.digests:
                continue
            if shape.part is Part.HANDOFF and not _hands_to_gatesh(text):
                return None
            return Unwrapped(shape.harness, shape.part, "", shape.id)
    if text.startswith(_SHELL_C):
        if not _plain_words(text):
            return None
        try:
            words = shlex.split(text)
        except ValueError:
            return None
        if len(words) >= 3 and words[1] == "-c":
            found = unwrap_argv(words[2:])
            return (
                Unwrapped(found[0], Part.COMMAND, found[1], "codex.snapshot-exec")
                if found
                else None
            )
    return None


def unwrap(text: str) -> tuple[Harness, str] | None:
    """(harness, agent command) when ``text`` is exactly a known wrapper, else None (also for a
    snapshot script, which has no agent command: see :func:`classify`)."""
    found = classify(text)
    if found is None or found.part is not Part.COMMAND:
        return None
    return found.harness, found.command


def unwrap_argv(args: Sequence[str]) -> tuple[Harness, str] | None:
    """The Codex shape given as argv after the shell: ``[SHIM, ARG0, SNAPSHOT, *ORIGINAL]``.

    Returns (Harness.CODEX, command) where command is the original ``shell -c CMD``'s CMD, or the
    original argv joined with shell quoting; None for any other shape.
    """
    if len(args) < 4 or args[0] != CODEX_SHIM or not _CODEX_SNAPSHOT.fullmatch(args[2]):
        return None
    original = list(args[3:])
    first = original[0].rsplit("/", 1)[-1]
    if first in PARSED_SHELLS and len(original) == 3 and original[1] in ("-c", "-lc", "-l -c"):
        cmd = original[2]
    else:
        cmd = shlex.join(original)
    return (Harness.CODEX, cmd) if _clean(cmd) else None


def snapshot_key(text: str) -> tuple[str, str] | None:
    """(shape id, digest) of ``text`` read as each snapshot shape's key, for the first shape whose
    variable parts fit (whether or not the digest is pinned): how a new version's digest is found."""
    for shape in SHAPES:
        if shape.key is not None and shape.key is not _whole_key:
            key = shape.key(text)
            if key is not None:
                return shape.id, _digest(key)
    return None


# An unquoted word bash passes on unchanged (no expansion, glob, escape or operator in it).
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_.+~/:=,@%-]+")


def _plain_words(text: str) -> bool:
    """Whether ``text`` is one simple command of words that ``shlex.split`` splits exactly as bash
    does: plain words, single-quoted strings and double-quoted strings with no ``$``, backquote
    or backslash, each alone or touching. Anything else — a newline, ``;``, ``&&``, ``|``, a
    redirection, an expansion, a comment — makes the text more than the Codex shape, and
    ``shlex.split`` would turn those operators into words: ``SHIM … ls && rm -rf ~`` read as
    ``ls '&&' rm -rf '~'``."""
    try:
        root = parse(text.encode("utf-8", "surrogatepass")).root_node
    except Exception:
        return False
    if root.has_error or root.named_child_count != 1 or root.named_children[0].type != "command":
        return False
    command = root.named_children[0]
    if root.text.strip() != command.text:
        return False  # a `;` or `&` after the command
    return all(_plain_part(c) for c in command.children)


def _plain_part(node: Any) -> bool:
    t = node.type
    if t == "command_name":
        return node.named_child_count == 1 and _plain_part(node.named_children[0])
    if t == "word":
        return _PLAIN_WORD.fullmatch(node.text.decode("utf-8", "surrogatepass")) is not None
    if t == "raw_string":
        return True
    if t == "string":
        return all(c.type == "string_content" for c in node.named_children) and not any(
            ch in node.text for ch in (b"$", b"`", b"\\")
        )
    if t == "concatenation":
        return all(_plain_part(c) for c in node.children)
    return False


def _clean(cmd: str) -> bool:
    if not cmd.strip():
        return False
    try:
        return not parse(cmd.encode("utf-8", "surrogatepass")).root_node.has_error
    except Exception:
        return False

"""Harness wrappers (S1): the boilerplate agent harnesses put around the agent's command.

Only exact shapes are recognised; anything that differs in any part is gated whole (``None``).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from gatesh.vocab.programs import PARSED_SHELLS

from ._walk import parse

_SQ_BODY = r"(?:[^']|'\"'\"')*"  # a single-quoted body where ' is written '"'"'
_SAFE_PATH = r"[A-Za-z0-9_.+~/-]+"

# Claude Code: source SNAPSHOT [2>/dev/null || true] && [known setup &&] eval 'CMD'
# [< /dev/null] && pwd -P >| TMP/claude-XXXX-cwd
_CLAUDE = re.compile(
    r"source (?P<q>['\"]?)" + _SAFE_PATH + r"/\.claude/shell-snapshots/snapshot-[A-Za-z0-9_.-]+\.sh(?P=q)"
    r"(?: 2>/dev/null \|\| true)?"
    r"(?: && (?:shopt -u extglob|setopt NO_EXTENDED_GLOB) 2>/dev/null \|\| true)?"
    r" && eval '(?P<cmd>" + _SQ_BODY + r")'"
    r"(?: \\?< /dev/null)?"
    r" && pwd -P >\| " + _SAFE_PATH + r"/claude-[0-9a-f]{4,16}-cwd",
    re.DOTALL,
)

# Gemini CLI: shopt -u …; { CMD; }; __code=$?; pgrep -g 0 >/tmp/shell_pgrep_<hex>.tmp 2>&1; exit $__code;
_GEMINI = re.compile(
    r"shopt -u promptvars nullglob extglob nocaseglob dotglob; \{ (?P<cmd>.*); \}; __code=\$\?; "
    r"pgrep -g 0 >" + _SAFE_PATH + r"/shell_pgrep_[0-9a-f]+\.tmp 2>&1; exit \$__code;",
    re.DOTALL,
)

# Codex: <shell> -c '. "$1" && shift && exec "$@"' ARG0 SNAPSHOT ARGV...
CODEX_SHIM = '. "$1" && shift && exec "$@"'
_CODEX_SNAPSHOT = re.compile(_SAFE_PATH + r"/\.codex/shell_snapshots/[A-Za-z0-9_.-]+\.sh")


def unwrap(text: str) -> tuple[str, str] | None:
    """(harness, agent command) when ``text`` is exactly a known harness wrapper, else None.

    Guarantees: the agent command is returned only for an exact match of a shape in S1, and only
    when it reads as shell without a syntax error (so the boilerplate cannot be split apart by
    it); every other string gives None.
    """
    m = _CLAUDE.fullmatch(text)
    if m:
        cmd = m.group("cmd").replace("'\"'\"'", "'")
        return ("claude-code", cmd) if _clean(cmd) else None
    m = _GEMINI.fullmatch(text)
    if m:
        cmd = m.group("cmd")
        return ("gemini", cmd) if _clean(cmd) else None
    if text.startswith(tuple(f"{s} -c " for s in ("bash", "sh", "zsh", "/bin/bash", "/bin/sh",
                                                    "/bin/zsh", "/usr/bin/bash", "/usr/bin/zsh"))):
        try:
            words = shlex.split(text)
        except ValueError:
            return None
        if len(words) >= 3 and words[1] == "-c":
            return unwrap_argv(words[2:])
    return None


def unwrap_argv(args: Sequence[str]) -> tuple[str, str] | None:
    """The Codex shape given as argv after the shell: ``[SHIM, ARG0, SNAPSHOT, *ORIGINAL]``.

    Returns ("codex", command) where command is the original ``shell -c CMD``'s CMD, or the
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
    return ("codex", cmd) if _clean(cmd) else None


def _clean(cmd: str) -> bool:
    if not cmd.strip():
        return False
    try:
        return not parse(cmd.encode("utf-8", "surrogatepass")).root_node.has_error
    except Exception:
        return False

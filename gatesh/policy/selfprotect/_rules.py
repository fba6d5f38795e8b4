"""The self-protection rule table and :func:`check` (S3.4): tampering with the gate is an attack.

Each row names one hazard with an id, the reason a person reads, its test, and examples the real
reader must match (and counter-examples it must not). The path rows (``Touched``) are answered
from the reader's path facts matched against the protected places; the others read one command's
facts (its argv, wrappers, assignments) or, for what no single command shows, the whole line.

A project's ``.gatesh.toml`` is not protected: that tier can only tighten (S12). Reading any of
the protected places stays ordinary work; so does setting git's ``user.*`` and ``remote.*`` keys.

The rows are in :mod:`._rows_places` and :mod:`._rows_switches` (in that order), the row type in
:mod:`._row`.
"""

from __future__ import annotations

import re
from typing import Final

from gatesh._paths import GatePaths
from gatesh._types import Context, Facts, Finding, Outcome, PathEffect, SimpleCommand
from gatesh.policy.selfprotect import _rows_places, _rows_switches
from gatesh.policy.selfprotect._row import DEFAULT_BRANCHES, Seen, SelfRule, Touched
from gatesh.vocab.programs.interpreters import is_interpreter
from gatesh.vocab.programs.shells import SHELLS
from gatesh.vocab.words import reads_code_from_stdin

from ._daemon import TRACERS
from ._places import protected_for
from ._settings import (
    says_hooks_off,
)

__all__ = ["RULES", "check"]

RULES: Final[tuple[SelfRule, ...]] = (*_rows_places.ROWS, *_rows_switches.ROWS)


# --- which rules a plain command can match -------------------------------------------------------

# The wrappers a test reads (`env -u X gatesh`, `strace -p`); the others (sudo, nohup, …) none reads.
_READ_WRAPPERS: Final = frozenset({"env"}) | TRACERS


def plain(cmd: SimpleCommand) -> bool:
    """A command none of whose parts every rule looks at whatever its head: a static head that is
    no shell, interpreter or ``__gatesh_`` name, every word static, no assignment, no write
    redirection, not run by xargs, no ``env`` or tracer wrapper.

    A rule with ``heads`` reads a plain command only through its head (and, with ``on_writes``,
    its write effects): for a plain command of another head it answers no (each test's code shows
    why; the equivalence is tested over every rule's examples and seeded splices of them)."""
    head = cmd.head
    argv = cmd.argv
    if not head or not argv or cmd.assignments or cmd.writes or cmd.context is Context.XARGS:
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


def _steps(head: str | None, writes: bool, paths: bool = True) -> tuple[SelfRule, ...]:
    """Every rule in order (``head`` None), or those a plain command with ``head`` (and, with
    ``writes``, a write effect) can match; without ``paths``, none of the path rules (a command
    with no path effects that runs no program text changes no place)."""
    return tuple(
        r
        for r in RULES
        if (paths or not isinstance(r.test, Touched))
        and (head is None or r.heads is None or head in r.heads or (writes and r.on_writes))
    )


_ALL_STEPS: Final = _steps(None, True)
_ALL_BUT_PATHS: Final = _steps(None, True, paths=False)
_NAMED_HEADS: Final = frozenset(h for r in RULES if r.heads for h in r.heads)
# The steps of a plain command, by its head and whether it writes; a head no rule names gets
# the defaults.
_PLAIN_STEPS: Final = {(h, w): _steps(h, w) for h in _NAMED_HEADS for w in (False, True)}
_PLAIN_DEFAULT: Final = {w: _steps("", w) for w in (False, True)}
_PLAIN_NO_PATHS: Final = {h: _steps(h, False, paths=False) for h in _NAMED_HEADS}
_PLAIN_NO_PATHS_DEFAULT: Final = _steps("", False, paths=False)
_WHOLE_RULES: Final = tuple(r for r in RULES if r.whole is not None)
_HOOK_RULE: Final = next(r for r in RULES if r.id == "self.hook")


def _holds_any(text: str, literals: tuple[str, ...]) -> bool:
    """Whether ``text`` holds one of ``literals`` (a substring search each: cheaper than a regex)."""
    for literal in literals:
        if literal in text:
            return True
    return False


def check(
    facts: Facts,
    paths: GatePaths,
    cwd: str = "",
    *,
    every_rule: bool = False,
    branches: tuple[str, ...] = DEFAULT_BRANCHES,
) -> Finding | None:
    """The first self-protection rule the command matches, as an ATTACK finding; None if none.

    Guarantees: every executed command the reader found is matched, whatever its context, with
    the path effects the reader found for it. Fails closed: a line the reader could not read
    whole, fed to a shell on its input, or naming more paths than the reader records, is also
    matched on its raw text (``self.raw-text``). ``cwd`` is the command's folder, ``branches``
    the protected branches the config names (``git.protected_branches``). A plain command
    (:func:`plain`) is asked only the rules its head can match; ``every_rule`` asks every rule of
    every command (the same answer).
    """
    prot = protected_for(paths, cwd)
    # A function definition or a hooks-off setting anywhere is read by rules whatever the head.
    plain_line = not every_rule and not facts.functions and not says_hooks_off(facts.text)
    by_command: dict[int, list[PathEffect]] = {}
    for e in facts.paths:
        found = by_command.get(e.command)
        if found is None:
            by_command[e.command] = [e]
        else:
            found.append(e)
    for index, cmd in enumerate(facts.commands):
        if cmd.remote:
            continue  # another host's files and processes are not this gate's
        effects = by_command.get(index, _NONE)
        # a command with no path effects that runs no program text changes no protected place
        touching = bool(effects) or is_interpreter(cmd.head)
        if plain_line and plain(cmd):
            if not touching:
                steps = _PLAIN_NO_PATHS.get(cmd.head, _PLAIN_NO_PATHS_DEFAULT)
            else:
                writes = any(e.direction.writes for e in effects)
                steps = _PLAIN_STEPS.get((cmd.head, writes)) or _PLAIN_DEFAULT[writes]
        else:
            steps = _ALL_STEPS if touching or every_rule else _ALL_BUT_PATHS
        seen = Seen(cmd, index, effects, facts, prot, branches)
        for rule in steps:
            if rule.test(seen):
                return Finding(rule.id, Outcome.ATTACK, rule.reason)
    for rule in _WHOLE_RULES:
        if rule.whole is not None and rule.whole(facts, prot):
            return Finding(rule.id, Outcome.ATTACK, rule.reason)
    text = facts.text
    if _holds_any(text, _HOOK_NAMES) and _HOOK_ASSIGN_TEXT.search(text):
        # The reader drops a bare assignment with no command (`PROMPT_COMMAND=`), so the text decides.
        return Finding(_HOOK_RULE.id, Outcome.ATTACK, _HOOK_RULE.reason)
    if (
        _holds_any(text, _RAW_NEEDS)
        and (not facts.readable or facts.paths_cut or reads_code_from_stdin(facts))
        and _RAW.search(text)
    ):
        return Finding(RAW_TEXT_ID, Outcome.ATTACK, _RAW_REASON)
    return None


_NONE: Final[list[PathEffect]] = []
RAW_TEXT_ID: Final = "self.raw-text"
_RAW_REASON: Final = (
    "text the reader could not unfold whole (unreadable, fed to a shell on stdin, or naming more "
    "paths than it records) changes gatesh's files, daemon, hook or a harness's settings, or "
    "runs a human-only verb: tampering with the gate"
)


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

# For text the reader could not unfold only: names of gatesh's files, a harness's settings or the
# hook next to a verb that changes them.
# Linear: only the first verb of a `;&|`/newline segment is tried (a later verb's name search sees a
# subset of the first one's text, so no match is lost); `rm rm rm …` re-scanned the segment from
# every verb (20 s at 20 KB).
_RAW_VERB: Final = (
    r"(?:\brm\b|\bmv\b|>|\btee\b|\bsed\s++-i|\btruncate\b|\bchmod\b|\bpkill\b|\bkillall\b|\bkill\b)"
)
_RAW: Final = re.compile(
    r"(?:^|(?<=[;&|\n]))(?:(?!" + _RAW_VERB + r")[^;&|\n])*" + _RAW_VERB + r"[^;&|\n]*"
    r"(?:\.config/gatesh|\.local/(?:state|share)/gatesh|/etc/gatesh|\bgatesh\b"
    r"|\.claude/(?:settings|projects|shell-snapshots)|\.codex/(?:config\.toml|hooks\.json|sessions"
    r"|shell_snapshots)|\.gemini/(?:settings\.json|tmp))"
    r"|\btrap\s++(?:-|''|\"\")\s++DEBUG|\bgatesh\s++(?:approve|deny|resume|mandate|undo)\b"
)
# One of these is in every text _RAW matches (its names, or the DEBUG of the trap).
_RAW_NEEDS: Final = ("gatesh", "DEBUG", ".claude/", ".codex/", ".gemini/")

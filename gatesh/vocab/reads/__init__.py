"""Which invocations of which programs only read (S3 step 9, S4): the read-only table.

A row names programs and, where their arguments can make them write, a check over argv[1:];
:func:`command_reads` answers for one simple command: the row's check passes, with no write
redirection (except to ``/dev/null`` and descriptor copies), no dynamic head, no privilege, no
remote host and no credential file named. Policy's read-only stage (:mod:`gatesh.policy.readonly`)
adds the whole-line conditions; the builtin rater asks the same table when it decides whether a
verb it has no model of is a gap. Every row says why its programs only read. When in doubt a row
says no: a miss costs one rating, a wrong yes lets a write through unrated.

The rows live in :mod:`~.rows_system` and :mod:`~.rows_tools` (in that order: a program named
twice takes the later row), the row type and check combinators in :mod:`~.rule`, the checks of
single programs in :mod:`~.checks_system` and :mod:`~.checks_tools`.
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Final

from gatesh._types import Context, SimpleCommand
from gatesh.vocab.grammar import NEUTRAL_WRAPPERS
from gatesh.vocab.paths.devices import ENDLESS_DEVICES
from gatesh.vocab.reads import rows_system, rows_tools
from gatesh.vocab.reads.checks_system import version_only
from gatesh.vocab.reads.rule import ReadOnlyRule
from gatesh.vocab.words import is_credential_path

__all__ = ["RULES", "command_reads", "rule_for"]

RULES: Final[tuple[ReadOnlyRule, ...]] = (*rows_system.ROWS, *rows_tools.ROWS)

_BY_HEAD: Final = MappingProxyType({head: rule for rule in RULES for head in rule.heads})

# Assignment prefixes that only change formatting or locale (PATH=, LD_PRELOAD=, PAGER= could run code).
_SAFE_ASSIGN: Final = re.compile(
    r"^(?:LC_\w+|LANG|LANGUAGE|TZ|COLUMNS|LINES|NO_COLOR|CLICOLOR|CLICOLOR_FORCE|TERM"
    r"|GIT_PAGER|PAGER|FORCE_COLOR|COLORTERM)=[\w.:/@+-]*$"
)
_SAFE_SINKS: Final = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_PAGERS: Final = frozenset({"cat", "less -R", ""})
_SYSTEM_BIN: Final = (
    "/bin/",
    "/usr/bin/",
    "/usr/local/bin/",
    "/sbin/",
    "/usr/sbin/",
    "/opt/homebrew/bin/",
)
# Programs that print help or a version for one lone flag, whatever the program.
_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9._+-]*$")


# Programs that read only as much as an option of theirs says (`head -c 16`, `od -N 4`).
_BOUNDED_BY: Final = {
    "head": ("-c", "--bytes", "-n", "--lines"),
    "od": ("-N", "--read-bytes"),
    "xxd": ("-l", "-len"),
    "hexdump": ("-n", "--length"),
}


def _bounded_read(cmd: SimpleCommand) -> bool:
    """Whether ``cmd`` reads a bounded amount of whatever it reads."""
    names = _BOUNDED_BY.get(cmd.head)
    if names is None:
        return False
    args = cmd.args
    return any(a in names or a.startswith(tuple(n for n in names if len(n) == 2)) for a in args)


def rule_for(cmd: SimpleCommand) -> ReadOnlyRule | None:
    """The read-only row whose head this command has (no argument check), or None."""
    return _BY_HEAD.get(cmd.head)


def command_reads(cmd: SimpleCommand) -> bool:
    """True when ``cmd`` alone is known to only read (every check of
    :func:`gatesh.policy.readonly.is_read_only` but the whole-line ones: readable, no script, no host)."""
    if (
        cmd.dynamic_head
        or cmd.privileged
        or cmd.remote
        or cmd.context is Context.REMOTE
        or not cmd.argv
    ):
        return False
    argv0 = cmd.argv[0].text
    if "/" in argv0 and not argv0.startswith(_SYSTEM_BIN):
        return False  # `./ls` or `/join` is whatever that file is, not the program in the table
    if any(w not in NEUTRAL_WRAPPERS for w in cmd.wrappers):
        return False
    for a in cmd.assignments:
        if not _SAFE_ASSIGN.match(a):
            return False
        if a.startswith(("GIT_PAGER=", "PAGER=")) and a.split("=", 1)[1] not in _PAGERS:
            return False
    for r in cmd.redirects:
        if r.writes and r.target not in _SAFE_SINKS:
            return False
        if r.target is not None and not r.writes and is_credential_path(r.target):
            return False
    if any(w.static and is_credential_path(w.text) for w in cmd.argv[1:]):
        return False
    if (
        any(w.text in ENDLESS_DEVICES for w in cmd.argv[1:])
        or any(r.target in ENDLESS_DEVICES for r in cmd.redirects if not r.writes)
    ) and not _bounded_read(cmd):
        return False  # `tail /dev/zero`: reading what never ends fills memory or never stops
    args = cmd.args
    rule = _BY_HEAD.get(cmd.head)
    if rule is None:
        return "/" not in argv0 and bool(_NAME.match(cmd.head)) and version_only(args)
    return rule.check is None or rule.check(args)

"""The read-only row, and the argument checks its rows are built from.

A :class:`ReadOnlyRule` names programs that only read and, where their arguments can make them
write, a :data:`Check` over argv[1:]. The combinators here (:func:`forbid`, :func:`max_operands`,
:func:`subcommands` ...) build the checks most rows need; checks of one program live in
:mod:`gatesh.vocab.reads.checks_system` and :mod:`gatesh.vocab.reads.checks_tools`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from gatesh.vocab.grammar import (
    Grammar,
    Options,
    read,
)
from gatesh.vocab.programs.info import LONG_INFO, SUBCOMMAND_INFO
from gatesh.vocab.words import has_long, split_args

Check = Callable[[tuple[str, ...]], bool]  # argv[1:] -> still read-only?


@dataclass(frozen=True)
class ReadOnlyRule:
    """Programs that only read, with an optional check on their arguments.

    Invariant: ``check`` (when set) returns False for every argument list that can write,
    delete, execute another program, change system state, or send what it is given off this
    machine (a name it looks up reaches the network's name servers).
    """

    id: str
    heads: frozenset[str]
    reason: str
    examples: tuple[str, ...]
    counter: tuple[str, ...]
    check: Check | None = None


# --- argument checks ------------------------------------------------------------------------------


def option_words(args: Iterable[str]) -> list[str]:
    return [a for a in args if a.startswith("-") and a != "-"]


def forbid(short: str = "", long: tuple[str, ...] = (), words: tuple[str, ...] = ()) -> Check:
    """Reject short letters (in any cluster), long options (with or without ``=``) or exact words."""

    def check(args: tuple[str, ...]) -> bool:
        opts = option_words(args)
        if short and any(
            not o.startswith("--") and not o[1:].isdigit() and any(ch in o[1:] for ch in short)
            for o in opts
        ):
            return False
        if long and has_long(opts, *long):
            return False
        return not (words and any(a in words for a in args))

    return check


def max_operands(n: int, with_arg: frozenset[str] = frozenset()) -> Check:
    """At most ``n`` operands (``uniq IN OUT`` writes OUT, ``xxd IN OUT`` too)."""
    return lambda args: len(split_args(args, with_arg)[1]) <= n


def both(*checks: Check) -> Check:
    return lambda args: all(c(args) for c in checks)


def only_options(*allowed: str) -> Check:
    """Every argument is one of ``allowed`` (or there are none)."""
    ok = frozenset(allowed)
    return lambda args: all(a in ok for a in args)


def subcommands(
    table: Mapping[str, Check | None],
    with_arg: frozenset[str] | Options = frozenset(),
    bare: bool = False,
    global_ok: Check | None = None,
) -> Check:
    """The first operand names a read-only subcommand; its row checks the words after it.

    ``with_arg``: the options before the subcommand that take a value — the program's grammar
    (:mod:`gatesh.vocab.grammar`) where it has a row, so the two cannot disagree.
    ``bare``: the program with no subcommand at all is read-only too (``git`` prints help).
    ``global_ok`` checks the options before the subcommand.
    """
    options = with_arg if isinstance(with_arg, Options) else Options(with_arg)
    grammar = Grammar("read-only", options=dataclasses.replace(options, ends_at=1))

    def check(args: tuple[str, ...]) -> bool:
        argv = read(grammar, args)
        i = argv.operand_at[0] if argv.operand_at else len(args)
        if global_ok is not None and not global_ok(args[:i]):
            return False
        if i >= len(args):
            return bare or any(a in SUBCOMMAND_INFO for a in args)
        if args[i] not in table:
            return False
        sub = table[args[i]]
        return sub is None or sub(args[i + 1 :])

    return check


def verbs_end_with(read_verbs: frozenset[str], deny: re.Pattern[str] | None = None) -> Check:
    """Cloud CLIs: the positional words (before the first option) end with a read verb."""

    def check(args: tuple[str, ...]) -> bool:
        words = []
        for a in args:
            if a.startswith("-"):
                break
            words.append(a)
        if not words:
            return any(a in LONG_INFO for a in args)
        last = words[-1]
        if deny is not None and any(deny.search(w) for w in words):
            return False
        return last in read_verbs or any(
            last.startswith(v + "-") for v in read_verbs if v in ("describe", "list", "get")
        )

    return check


NONE: Final[Check] = lambda args: not args  # noqa: E731 - no arguments at all

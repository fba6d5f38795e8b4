"""The one argv parser: a program's words read as its own option parser reads them.

A :class:`Grammar` says which options take a value, how short options bundle, and where the
subcommand starts; :func:`read` applies one to an argv and returns an :class:`Argv` whose options
carry their values and whose operands hold no option value. Every spelling a program accepts for
the same request reads the same: ``--opt v``, ``--opt=v``, ``-o v``, ``-ov``, ``-xo v`` (bundled),
an unambiguous abbreviation of a long option where the program allows it, and options before or
after the operands where the program permutes them. Pure functions over words: no I/O, no state.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final


class Bundling(enum.StrEnum):
    """How a program reads a word that starts with one dash."""

    GETOPT = "getopt"  # `-abc` is `-a -b -c`; a letter that takes a value takes the rest or the next word
    NONE = "none"  # `-name` is one option (find, terraform, java): no letters are bundled


@dataclass(frozen=True)
class Options:
    """The options one level of a program reads.

    ``value``: options that take a value (``--opt v``, ``--opt=v``; short: ``-o v``, ``-ov``).
    ``optional``: options whose value may only be attached (``--exec-path=DIR``; alone they take
    none, and the next word is not theirs). ``flags``: options known to take no value (they make
    abbreviations unambiguous and feed the spelling test; an option in no set is read as a flag).
    ``ends_at``: the operand, counted from 1, after which no word is an option (1: the first
    operand ends the options, as POSIX getopt and every wrapper read them; 2: ssh's host, then its
    remote command); 0: options may follow operands anywhere (GNU getopt permutes). ``abbreviate``: a long option may
    be shortened to an unambiguous prefix of a known one (getopt_long and git's parse-options).
    ``long_values``: a long option in no set takes a value too (the aws CLI, whose options all
    take one but the few in ``flags``).
    """

    value: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    flags: frozenset[str] = frozenset()
    bundling: Bundling = Bundling.GETOPT
    ends_at: int = 0
    abbreviate: bool = False
    long_values: bool = False

    def __or__(self, other: Options) -> Options:
        """The options of both (a subcommand's own with the ones it inherits); ``other`` decides
        the reading rules."""
        return Options(
            self.value | other.value,
            self.optional | other.optional,
            self.flags | other.flags,
            other.bundling,
            other.ends_at,
            other.abbreviate or self.abbreviate,
            other.long_values,
        )

    def known(self) -> frozenset[str]:
        return self.value | self.optional | self.flags


_EMPTY_SUBS: Final[Mapping[str, Grammar]] = MappingProxyType({})
_EMPTY_ALIASES: Final[Mapping[str, str]] = MappingProxyType({})


@dataclass(frozen=True, eq=False)
class Grammar:
    """One program's argv, or one subcommand's.

    ``subcommands``: the words that open a deeper level (``git`` → ``stash`` → ``drop``), each with
    its own grammar; ``aliases`` spell a subcommand another way (``npm i`` is ``install``).
    ``open``: any first operand at this level is a subcommand (git runs aliases and ``git-NAME``
    programs), read with ``default``'s options when it is not listed. ``inherit``: the options of
    the levels above stay valid at this one (cobra's persistent flags: ``kubectl delete -n x``).
    ``why``: where the facts come from, for a person changing the row.
    """

    id: str
    programs: frozenset[str] = frozenset()
    options: Options = Options()
    subcommands: Mapping[str, Grammar] = field(default_factory=lambda: _EMPTY_SUBS)
    aliases: Mapping[str, str] = field(default_factory=lambda: _EMPTY_ALIASES)
    open: bool = False
    default: Options = Options()
    inherit: bool = False
    why: str = ""


@dataclass(frozen=True)
class Opt:
    """One option as the program reads it: ``name`` as spelled up to ``=`` (a bundled letter is
    its own ``-x``; an abbreviation is the full name), its ``value`` (None for a flag), the index
    in argv[1:] of the word holding it and of the word holding its value (-1: none), and the
    ``level`` (how many subcommand words came before it)."""

    name: str
    value: str | None
    at: int
    value_at: int = -1
    level: int = 0


@dataclass(frozen=True)
class Argv:
    """An argv read through a :class:`Grammar`.

    ``path``: the subcommand words, lower-cased (``("stash", "drop")``); ``operands``: the other
    words that are not options or option values, in order (everything after ``--`` included);
    ``unknown``: a word only known when the command runs stood where an option, its value or the
    subcommand was looked for, so what follows it may be read wrongly (callers fail closed).
    """

    path: tuple[str, ...] = ()
    path_at: tuple[int, ...] = ()
    options: tuple[Opt, ...] = ()
    operands: tuple[str, ...] = ()
    operand_at: tuple[int, ...] = ()
    dashdash: int = -1
    unknown: bool = False
    _names: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    @property
    def subcommand(self) -> str:
        return self.path[0] if self.path else ""

    def sub(self, k: int = 0) -> str:
        """The ``k``-th subcommand word, or ''."""
        return self.path[k] if len(self.path) > k else ""

    def has(self, *names: str, level: int | None = None) -> bool:
        """Whether any option of ``names`` was given (at ``level`` only, when given)."""
        if level is None:
            return not self._names.isdisjoint(names)
        return any(o.name in names and o.level == level for o in self.options)

    def values(self, *names: str, level: int | None = None) -> tuple[str, ...]:
        """The values given to the options ``names``, in order (flags give none)."""
        return tuple(
            o.value
            for o in self.options
            if o.name in names and o.value is not None and (level is None or o.level == level)
        )

    def value(self, *names: str, level: int | None = None) -> str | None:
        """The last value given to any of ``names`` (the one most programs use), or None."""
        vals = self.values(*names, level=level)
        return vals[-1] if vals else None

    def opts(self, *names: str, level: int | None = None) -> tuple[Opt, ...]:
        return tuple(
            o for o in self.options if o.name in names and (level is None or o.level == level)
        )

    @property
    def end_of_path(self) -> int:
        """The index in argv[1:] after the last subcommand word (0 with none)."""
        return self.path_at[-1] + 1 if self.path_at else 0


def _is_option(word: str) -> bool:
    return len(word) > 1 and word[0] == "-"


def _abbrev(name: str, opts: Options) -> str:
    """``name`` expanded to the one known long option it abbreviates, else itself."""
    if not opts.abbreviate or name in opts.known():
        return name
    found = [k for k in opts.known() if k.startswith("--") and k.startswith(name)]
    return found[0] if len(found) == 1 else name


def _read_option(
    args: Sequence[str],
    i: int,
    opts: Options,
    depth: int,
    options: list[Opt],
    static: Sequence[bool] | None,
) -> tuple[int, bool]:
    """Read the option word ``args[i]`` into ``options`` as ``opts`` says: a long option
    (``--opt=v``, ``--opt v``, an abbreviation), a number (``-5``), or a cluster of short letters
    where the first that takes a value takes the rest of the word or the next word.

    Returns the words it took, and whether its value is a word only known at run time."""
    a = args[i]
    n = len(args)
    if a.startswith("--") or opts.bundling is Bundling.NONE:
        name, eq, val = a.partition("=")
        if a.startswith("--"):
            name = _abbrev(name, opts)
        if eq:
            options.append(Opt(name, val, i, i, depth))
            return 1, False
        takes = name in opts.value or (
            opts.long_values and a.startswith("--") and name not in opts.known()
        )
        if takes and i + 1 < n:
            options.append(Opt(name, args[i + 1], i, i + 1, depth))
            return 2, static is not None and not static[i + 1]
        options.append(Opt(name, None, i, -1, depth))
        return 1, False
    if a[1:].isdigit():  # `head -5`, `kill -9`: a number, not letters
        options.append(Opt(a, None, i, -1, depth))
        return 1, False
    for j in range(1, len(a)):
        letter = "-" + a[j]
        rest = a[j + 1 :]
        if letter in opts.value:
            if rest:
                options.append(Opt(letter, rest.removeprefix("="), i, i, depth))
            elif i + 1 < n:
                options.append(Opt(letter, args[i + 1], i, i + 1, depth))
                return 2, False
            else:
                options.append(Opt(letter, None, i, -1, depth))
            return 1, False
        if letter in opts.optional:
            options.append(Opt(letter, rest or None, i, i if rest else -1, depth))
            return 1, False
        options.append(Opt(letter, None, i, -1, depth))
    return 1, False


def _enter(level: Grammar, opts: Options, word: str) -> tuple[Grammar, Options] | None:
    """The grammar and options in force after the subcommand ``word`` of ``level`` (a subcommand
    inherits ``opts`` when its row says so; an open level takes any word, with its default
    options); None when ``word`` is no subcommand of ``level``."""
    nxt = level.subcommands.get(word)
    if nxt is not None:
        return nxt, (opts | nxt.options) if nxt.inherit else nxt.options
    if level.open:
        entered = Grammar(word, options=level.default)
        return entered, entered.options
    return None


def _argv(
    args: Sequence[str],
    path: list[str],
    path_at: list[int],
    options: list[Opt],
    operand_at: list[int],
    dashdash: int,
    unknown: bool,
) -> Argv:
    """The :class:`Argv` of a finished reading; its operands are the words at ``operand_at``."""
    operands = tuple(args[k] for k in operand_at)
    names = frozenset(o.name for o in options)
    return Argv(
        tuple(path),
        tuple(path_at),
        tuple(options),
        operands,
        tuple(operand_at),
        dashdash,
        unknown,
        names,
    )


def read(
    grammar: Grammar,
    args: Sequence[str],
    static: Sequence[bool] | None = None,
) -> Argv:
    """``args`` (argv[1:]) as ``grammar``'s program reads them. ``static`` marks the words known
    before the command runs (all of them when None): an unknown word is an operand, and when it
    stands where the subcommand is looked for, the search stops and ``unknown`` is set.

    Guarantees: every word is an option, an option's value, a subcommand word or an operand,
    exactly once; the reading never raises on odd input.
    """
    n = len(args)
    level = grammar
    opts = grammar.options
    path: list[str] = []
    path_at: list[int] = []
    options: list[Opt] = []
    operand_at: list[int] = []
    dashdash = -1
    unknown = False
    seeking = bool(grammar.subcommands) or grammar.open  # a subcommand may still come
    ended = False
    after_dashdash = False  # a `--` came where the subcommand was looked for
    level_operands = 0  # operands read at the current level
    i = 0
    while i < n:
        a = args[i]
        known = static is None or static[i]
        if ended or (after_dashdash and _is_option(a)):
            ended = True
            operand_at.append(i)
            i += 1
            continue
        if not known:
            if seeking or (_is_option(a) and a[:2] != "--"):
                unknown = True
            seeking = False
            operand_at.append(i)
            i += 1
            continue
        if a == "--":
            dashdash = i
            if seeking:
                # `git -- reset --hard`: a program may refuse a `--` before its subcommand, but
                # the reading that finds the subcommand is the one that fails closed.
                after_dashdash = True
            else:
                ended = True
            i += 1
            continue
        if _is_option(a):
            step, late_value = _read_option(args, i, opts, len(path), options, static)
            unknown = unknown or (late_value and seeking)
            i += step
            continue
        # an operand: the next subcommand word, or an operand of this level
        if seeking:
            word = a.casefold()
            word = level.aliases.get(word, word)
            entered = _enter(level, opts, word)
            if entered is not None:
                path.append(word)
                path_at.append(i)
                level, opts = entered
                seeking = bool(level.subcommands) or level.open
                level_operands = 0
                after_dashdash = False
                i += 1
                continue
            seeking = False
            if after_dashdash:
                ended = True
        operand_at.append(i)
        level_operands += 1
        if opts.ends_at and level_operands >= opts.ends_at:
            ended = True
        i += 1
    return _argv(args, path, path_at, options, operand_at, dashdash, unknown)

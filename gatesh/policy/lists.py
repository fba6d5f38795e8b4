"""Allow, deny and escalate lists (S3.6): the person's own rules, matched against read facts.

- ``exact`` and ``glob`` compare the whole command, whitespace-collapsed (and, part by part, each
  simple command's text);
- ``prefix`` compares argv words, so ``git push`` matches ``git push -f`` but not ``git pushx``;
- ``regex`` searches, within a budget: an undecided regex is no match for ``allow`` and a match
  for ``deny``/``escalate``.

An entry means the command, not its spelling (S10): each part is compared as written and also as
read — its program by name (``/usr/bin/touch`` is ``touch``), every path it names resolved (``~``,
``..``, ``//``, ``./``, and a ``cd`` earlier in the line), ``--`` dropped, a ``find -exec`` or
``xargs`` payload as the command it is. For ``deny`` and ``escalate`` (which only tighten) a
``prefix`` entry also matches its command with more options (``touch -a`` is ``touch``, ``rm -fr``
is ``rm -rf``), and an entry whose command writes a path matches any command that writes that
path (``: > P``, ``cp /dev/null P``, ``tee P`` for ``touch P``). A word known only when the command runs (``touch "$F"``,
``: > "$D/MARK"``) may be any word, so for ``deny`` and ``escalate`` a part of the entry's program
whose run-time words could complete the entry's command matches it (and a write to a path spelled
with such a word matches an entry that writes a path it could be): what cannot be read before it
runs is never taken to be some other command. :class:`Match` says which entry matched and why, for
the refusal message and ``gatesh explain``.

``deny`` and ``escalate`` match when any single part (or the whole) matches. ``allow`` matches
only when every part of the command is allowed, and never an unreadable command. Precedence
between the lists is the pipeline's job.
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
import re
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from gatesh._types import Context, Direction, Facts, SimpleCommand, Tier, Via

__all__ = ["MATCH_KINDS", "ListEntry", "Match", "find", "match"]

MatchKind = Literal["exact", "prefix", "glob", "regex"]
MATCH_KINDS: Final = ("exact", "prefix", "glob", "regex")

# A regex never reads more than this many characters: Python's `re` cannot be interrupted,
# so the budget is kept by bounding the input (and refusing patterns that can backtrack
# exponentially, see ListEntry.validate). Longer text leaves the regex undecided.
REGEX_MAX_INPUT: Final = 8192
# A regex that took longer than this is treated as undecided all the same (S3.6 time budget).
REGEX_BUDGET_S: Final = 0.05


@dataclass(frozen=True)
class ListEntry:
    """One list entry from a config tier: ``{match, pattern, rate?, note?}``.

    Invariant (after :meth:`validate`): ``match`` is one of :data:`MATCH_KINDS`, ``pattern`` is
    non-empty, and a regex pattern compiles and has no nested unbounded repetition.
    """

    match: MatchKind
    pattern: str
    rate: bool = False  # allow entries only: the rater still runs as a tripwire (S3 step 7)
    note: str = ""  # shown with a deny refusal
    tier: Tier = Tier.USER  # which config tier it came from

    def describe(self) -> str:
        """The entry as a person would write it, e.g. ``prefix "git push"``."""
        return f'{self.match} "{self.pattern}"'

    def validate(self) -> None:
        """Raise ValueError naming the problem when the entry cannot be used."""
        if self.match not in MATCH_KINDS:
            raise ValueError(f"match must be one of {', '.join(MATCH_KINDS)}, not {self.match!r}")
        if not isinstance(self.pattern, str) or not self.pattern.strip():
            raise ValueError("pattern must be a non-empty string")
        if self.match == "prefix":
            try:
                words = shlex.split(self.pattern)
            except ValueError as exc:
                raise ValueError(
                    f"prefix pattern {self.pattern!r} does not split into words: {exc}"
                ) from None
            if not words:
                raise ValueError("prefix pattern has no words")
        if self.match == "regex":
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"regex {self.pattern!r} does not compile: {exc}") from None
            if _backtracks(self.pattern):
                raise ValueError(
                    f"regex {self.pattern!r} repeats a group that itself repeats (like (a+)+), which can take "
                    "exponential time; rewrite it without the nested repetition"
                )


# --- regex safety -----------------------------------------------------------------------------


def _backtracks(pattern: str) -> bool:
    """True when ``pattern`` has an unbounded repeat inside another unbounded repeat."""
    try:
        from re import _constants as c  # type: ignore[attr-defined]
        from re import _parser as p  # type: ignore[attr-defined]

        tree = p.parse(pattern)
    except Exception:  # the private parser moved: fall back to the input-length guard alone
        return False
    repeats = {c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)}

    def nested(items: object, depth: int) -> bool:
        for op, av in items:  # type: ignore[attr-defined]
            if op in repeats:
                _lo, hi, sub = av
                unbounded = hi == c.MAXREPEAT
                if unbounded and depth > 0:
                    return True
                if nested(sub, depth + (1 if unbounded else 0)):
                    return True
            elif op is c.SUBPATTERN:
                if nested(av[-1], depth):
                    return True
            elif op is c.BRANCH:
                if any(nested(b, depth) for b in av[1]):
                    return True
            elif op in (c.ASSERT, c.ASSERT_NOT):
                if nested(av[1], depth):
                    return True
        return False

    return nested(tree, 0)


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


def _regex(pattern: str, text: str) -> bool | None:
    """True/False, or None when undecided (input too long, slow, or a pattern that won't compile)."""
    rx = _compiled(pattern)
    if rx is None or len(text) > REGEX_MAX_INPUT or _backtracks_cached(pattern):
        return None
    start = time.perf_counter()
    found = rx.search(text) is not None
    if time.perf_counter() - start > REGEX_BUDGET_S:
        return None
    return found


@functools.lru_cache(maxsize=512)
def _backtracks_cached(pattern: str) -> bool:
    return _backtracks(pattern)


# --- normalising --------------------------------------------------------------------------------

# Linear: a match starts only at the first blank of a run (a run is not re-scanned from each blank).
_WHY: Final = re.compile(r"(?<!\s)\s++#\s*+why:.*\Z", re.S | re.I)


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _whole(facts: Facts) -> str:
    text = facts.text
    if facts.justification:
        text = _WHY.sub("", text)
    return _collapse(text)


@functools.lru_cache(maxsize=512)
def _prefix_words(pattern: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(pattern))
    except ValueError:
        return tuple(pattern.split())


def _raw_words(cmd: SimpleCommand) -> tuple[str, ...]:
    if not cmd.raw:
        return ()
    try:
        return tuple(shlex.split(cmd.raw))
    except ValueError:
        return tuple(cmd.raw.split())


def _part_texts(cmd: SimpleCommand, *, peeled: bool) -> tuple[str, ...]:
    """The texts a part is compared as: its source text, and (when ``peeled``) its argv."""
    texts = [_collapse(cmd.raw)] if cmd.raw else []
    if peeled or not texts:
        texts.append(" ".join(cmd.words))
    return tuple(texts)


# --- matching -----------------------------------------------------------------------------------


def _text_match(entry: ListEntry, text: str, *, undecided: bool) -> bool:
    if entry.match == "exact":
        return text == _collapse(entry.pattern)
    if entry.match == "glob":
        return fnmatch.fnmatchcase(text, _collapse(entry.pattern))
    if entry.match == "regex":
        found = _regex(entry.pattern, text)
        return undecided if found is None else found
    want = _prefix_words(entry.pattern)  # prefix, the only kind left
    return tuple(text.split()[: len(want)]) == want


def _part_match(entry: ListEntry, cmd: SimpleCommand, *, allow: bool) -> bool:
    # Allow never looks past a privilege wrapper: `git push` allowed is not `sudo git push`.
    peeled = not (allow and cmd.privileged)
    if entry.match == "prefix":
        want = _prefix_words(entry.pattern)
        candidates = [cmd.words] if peeled else []
        if not allow or not peeled:
            candidates.append(_raw_words(cmd))
        return any(len(words) >= len(want) and words[: len(want)] == want for words in candidates)
    return any(_text_match(entry, t, undecided=not allow) for t in _part_texts(cmd, peeled=peeled))


@dataclass(frozen=True)
class Match:
    """The entry that decided a command, and one phrase saying why (for messages and explain)."""

    entry: ListEntry
    why: str


def match(
    entries: Sequence[ListEntry], facts: Facts, *, kind: Literal["allow", "deny", "escalate"]
) -> ListEntry | None:
    """The entry of ``entries`` that decides ``facts`` for a list of ``kind``, or None (see
    :func:`find`, which also says why)."""
    found = find(entries, facts, kind=kind)
    return found.entry if found is not None else None


def find(
    entries: Sequence[ListEntry], facts: Facts, *, kind: Literal["allow", "deny", "escalate"]
) -> Match | None:
    """The entry of ``entries`` that decides ``facts`` for a list of ``kind``, with why, or None.

    deny/escalate: the first entry matching the whole command or any single part of it, as
    written or as read (module docstring). allow: an entry only when the command is readable and
    every part is matched by some entry (the one returned is the entry that matched the first
    part, or the whole-text match).
    """
    if not entries:
        return None
    whole = _whole(facts)
    if kind != "allow":
        read_parts = _read_parts(facts)
        for entry in entries:
            if _text_match(entry, whole, undecided=True):
                return Match(entry, "the command's text matches it")
            for i, cmd in enumerate(facts.commands):
                if _part_match(entry, cmd, allow=False):
                    return Match(
                        entry, f"its part `{_short(cmd.raw or ' '.join(cmd.words))}` matches it"
                    )
                why = _read_match(entry, read_parts[i])
                if why:
                    return Match(entry, why)
            why = _writes_match(entry, facts)
            if why:
                return Match(entry, why)
        return None
    if not facts.readable or not facts.commands:
        return None
    for entry in entries:
        # A whole-text glob or regex could span `;` or `&&`; it may decide only a single command.
        if entry.match == "exact" or (len(facts.commands) == 1 and entry.match != "prefix"):
            if _text_match(entry, whole, undecided=False):
                return Match(entry, "the command's text matches it")
    first: ListEntry | None = None
    read_parts = _read_parts(facts)
    for i, cmd in enumerate(facts.commands):
        hit = next(
            (
                e
                for e in entries
                if _part_match(e, cmd, allow=True)
                or (not cmd.privileged and _read_match(e, read_parts[i], loose=False))
            ),
            None,
        )
        if hit is None:
            return None
        first = first or hit
    assert first is not None
    return Match(first, "every part of the command matches an allow entry")


# --- the command as read ------------------------------------------------------------------------

# Folders a program named by path is the program itself from (for an allow entry, `./git` is not
# `git`: a file of the working tree may be anything).
_SYSTEM_BINS: Final = (
    "/usr/bin/",
    "/bin/",
    "/usr/sbin/",
    "/sbin/",
    "/usr/local/bin/",
    "/usr/local/sbin/",
)


@dataclass(frozen=True)
class _Read:
    """One part as read: its program's name, then its words with paths resolved and ``--``
    dropped (several spellings when a ``find -exec`` payload's ``{}`` stands for a start path);
    ``system``: its program was named bare or by a system path."""

    spellings: tuple[tuple[str, ...], ...]
    system: bool
    # The words known only when the part runs, each as a glob of what it may be (``$F`` → ``*``,
    # ``"$D/MARK"`` → ``*/MARK``); empty when every word is static.
    runtime: tuple[str, ...] = ()


def _read_parts(facts: Facts) -> list[_Read]:
    resolved: dict[tuple[int, str], str] = {}
    for p in facts.paths:
        if p.resolved:
            resolved[(p.command, p.path)] = p.resolved
    roots = _find_roots(facts)
    fed = {p.command for p in facts.paths if p.via is Via.PIPED_NAME}
    out: list[_Read] = []
    for i, cmd in enumerate(facts.commands):
        head = cmd.head or (cmd.words[0] if cmd.words else "")
        first = cmd.argv[0].text if cmd.argv else ""
        system = "/" not in first or first.startswith(_SYSTEM_BINS)
        words: list[str] = [head]
        for w in cmd.argv[1:]:
            if w.static and w.text == "--":
                continue
            words.append(resolved.get((i, w.text), _clean_path(w.text)))
        spellings = [tuple(words)]
        written = (head, *(w for w in cmd.words[1:] if w != "--"))
        if written != spellings[0]:
            spellings.append(written)  # a relative entry's words are compared as written
        if cmd.context is Context.FIND_EXEC and any("{}" in w for w in words):
            spellings.extend(
                tuple(_clean_path(w.replace("{}", root)) for w in words) for root in roots
            )
        runtime = tuple(_runtime_glob(w.text) for w in cmd.argv[1:] if not w.static)
        if cmd.context is Context.XARGS and i not in fed:
            runtime += ("*",)  # xargs adds the words its input holds, unknown until it runs
        out.append(_Read(tuple(spellings), system, runtime))
    return out


# An expansion whose value is known only at run time: ``${…}``, ``$(…)``, backquotes, ``$NAME``,
# and the special parameters.
_EXPANSION: Final = re.compile(
    r"\$\{[^}]*\}|\$\([^)]*\)|`[^`]*`|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?$!-]"
)


def _spelled_at_runtime(word: str) -> bool:
    """Whether a word as written holds an expansion known only when it runs."""
    return "$" in word or "`" in word


def _runtime_glob(text: str) -> str:
    """What a word spelled with run-time expansions may be, as a glob: each expansion is ``*``,
    quotes are dropped (``"$D"/MARK`` → ``*/MARK``). An expansion the pattern cannot bound
    (an unclosed one, say) makes the whole word ``*``."""
    glob = _EXPANSION.sub(lambda _m: "\0", text)
    if "$" in glob or "`" in glob:
        return "*"
    glob = glob.replace('"', "").replace("'", "")
    glob = re.sub("\0+", "*", glob)
    return glob if len(glob) <= 4096 else "*"


def _find_roots(facts: Facts) -> list[str]:
    """The start paths of every ``find`` in the line, resolved (what ``{}`` stands for first)."""
    resolved = {(p.command, p.path): p.resolved for p in facts.paths if p.resolved}
    roots: list[str] = []
    for i, cmd in enumerate(facts.commands):
        if cmd.head != "find" or cmd.context is Context.FIND_EXEC:
            continue
        for w in cmd.argv[1:]:
            if w.text.startswith(("-", "(", "!")):
                break
            roots.append(resolved.get((i, w.text), _clean_path(w.text)))
    return roots[:16]


def _clean_path(word: str) -> str:
    """An absolute path as the kernel reads it (``//``, ``/./``, ``..``); other words as they are."""
    if not word.startswith("/") or len(word) > 4096:
        return word
    return posixpath.normpath(word).replace("//", "/")


def _options(words: Sequence[str]) -> tuple[set[str], list[str]]:
    """A part's options (short clusters split: ``-rf`` is ``-r`` and ``-f``) and its operands."""
    opts: set[str] = set()
    operands: list[str] = []
    for w in words:
        if len(w) > 1 and w.startswith("-") and w != "-":
            if not w.startswith("--") and w[1:].isalpha():
                opts.update("-" + c for c in w[1:])
            else:
                opts.add(w)
        else:
            operands.append(w)
    return opts, operands


def _first_operands(words: Sequence[str]) -> list[str]:
    """The words that may be a part's first operand: a word right after an option may be that
    option's value or the first operand (``git -C repo push``, ``rm -fr build``), so every such
    word up to and including the first word that follows no option."""
    out: list[str] = []
    after_option = False
    for w in words:
        if len(w) > 1 and w.startswith("-") and w != "-":
            after_option = "=" not in w
            continue
        out.append(w)
        if not after_option:
            break
        after_option = False
    return out


def _subsequence(want: Sequence[str], have: Sequence[str]) -> bool:
    it = iter(have)
    return all(any(h == w for h in it) for w in want)


@functools.lru_cache(maxsize=512)
def _pattern_read(pattern: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """A pattern's first command as read (its words, absolute paths cleaned), and the absolute
    paths its commands write. Read with the real reader, once per pattern."""
    try:
        from gatesh.reading import read

        facts = read(pattern, cwd="/")
    except Exception:
        return (), frozenset()
    words: tuple[str, ...] = ()
    if facts.commands:
        cmd = facts.commands[0]
        words = tuple(
            [cmd.head or (cmd.words[0] if cmd.words else "")]
            + [_clean_path(w) for w in cmd.words[1:] if w != "--"]
        )
    writes = frozenset(
        _clean_path(p.path)
        for p in facts.paths
        if p.direction is Direction.WRITE and p.path.startswith("/")
    )
    return words, writes


def _read_match(entry: ListEntry, part: _Read, *, loose: bool = True) -> str:
    """Why ``part`` as read matches ``entry`` ("" when it does not). ``loose`` (deny, escalate):
    a prefix entry matches with more options in the part."""
    if entry.match not in ("prefix", "exact") and not loose:
        return ""
    if not loose and not part.system:
        return ""
    for words in part.spellings:
        text = " ".join(words)
        if entry.match in ("glob", "regex"):
            if _text_match(entry, text, undecided=loose):
                return f"its part read as `{_short(text)}` matches it"
            continue
        want, _ = _pattern_read(entry.pattern)
        if not want or not words or want[0] != words[0]:
            continue
        if entry.match == "exact":
            if tuple(words) == want:
                return f"its part read as `{_short(text)}` is the entry's command"
            continue
        if len(words) >= len(want) and tuple(words[: len(want)]) == want:
            return f"its part read as `{_short(text)}` starts with the entry's words"
        if loose:
            p_opts, p_ops = _options(want[1:])
            c_opts, c_ops = _options(words[1:])
            anchored = bool(p_ops) and "/" not in p_ops[0]
            if (
                p_opts <= c_opts
                and _subsequence(p_ops, c_ops)
                and (not anchored or p_ops[0] in _first_operands(words[1:]))
            ):
                return f"its part read as `{_short(text)}` is the entry's command with more options"
    if loose and part.runtime and entry.match in ("prefix", "exact"):
        return _runtime_match(entry, part)
    return ""


def _runtime_match(entry: ListEntry, part: _Read) -> str:
    """Why ``part`` may be ``entry``'s command once its run-time words are known ("" when it
    cannot be): the same program, every word of the entry either among the part's words or one a
    run-time word may be (an unquoted one may stand for several words, so order is not asked),
    and a command the entry names by its first operand (``git push``) not named otherwise."""
    want, _ = _pattern_read(entry.pattern)
    words = part.spellings[0]
    if not want or not words or want[0] != words[0]:
        return ""
    static = [w for w in words[1:] if not _spelled_at_runtime(w)]
    for w in want[1:]:
        if w in static or any(fnmatch.fnmatchcase(w, g) for g in part.runtime):
            continue
        return ""
    _, p_ops = _options(want[1:])
    if p_ops and "/" not in p_ops[0]:
        firsts = _first_operands(words[1:])
        if p_ops[0] not in firsts and not any(_spelled_at_runtime(w) for w in firsts):
            return ""
    shown = ", ".join(f"`{_short(w)}`" for w in words[1:] if _spelled_at_runtime(w))
    return (
        f"its part `{_short(' '.join(words))}` may be the entry's command: "
        f"{shown} {'is' if shown.count('`') == 2 else 'are'} known only when it runs"
    )


def _writes_match(entry: ListEntry, facts: Facts) -> str:
    """Why the command writes a path the entry's own command writes ("" when it does not)."""
    if entry.match not in ("prefix", "exact"):
        return ""
    _, writes = _pattern_read(entry.pattern)
    if not writes:
        return ""
    roots = _find_roots(facts)
    for p in facts.paths:
        if p.direction is Direction.READ:
            continue
        if not p.resolved:
            glob = _runtime_glob(p.path)
            hit = {w for w in writes if fnmatch.fnmatchcase(w, glob)}
            if hit:
                return (
                    f"it writes `{_short(p.path)}`, known only when it runs, which may be "
                    f"{min(hit)}, a path the entry's command writes"
                )
            continue
        targets = {_clean_path(p.resolved)}
        if "{}" in p.path:
            targets |= {_clean_path(p.path.replace("{}", r)) for r in roots}
        hit = targets & writes
        if hit:
            return f"it writes {min(hit)}, which the entry's command writes"
    return ""


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 120 else text[:117] + "..."

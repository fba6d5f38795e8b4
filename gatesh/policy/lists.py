"""Allow, deny and escalate lists (S3.6): the person's own rules, matched against read facts.

- ``exact`` and ``glob`` compare the whole command, whitespace-collapsed (and, part by part, each
  simple command's text);
- ``prefix`` compares argv words, so ``git push`` matches ``git push -f`` but not ``git pushx``;
- ``regex`` searches, within a budget: an undecided regex is no match for ``allow`` and a match
  for ``deny``/``escalate``.

``deny`` and ``escalate`` match when any single part (or the whole) matches. ``allow`` matches
only when every part of the command is allowed, and never an unreadable command. Precedence
between the lists is the pipeline's job.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from gatesh._types import Facts, SimpleCommand, Tier

__all__ = ["MATCH_KINDS", "ListEntry", "match"]

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


def match(
    entries: Sequence[ListEntry], facts: Facts, *, kind: Literal["allow", "deny", "escalate"]
) -> ListEntry | None:
    """The entry of ``entries`` that decides ``facts`` for a list of ``kind``, or None.

    deny/escalate: the first entry matching the whole command or any single part of it.
    allow: an entry only when the command is readable and every part is matched by some entry
    (the one returned is the entry that matched the first part, or the whole-text match).
    """
    if not entries:
        return None
    whole = _whole(facts)
    if kind != "allow":
        for entry in entries:
            if _text_match(entry, whole, undecided=True):
                return entry
            if any(_part_match(entry, cmd, allow=False) for cmd in facts.commands):
                return entry
        return None
    if not facts.readable or not facts.commands:
        return None
    for entry in entries:
        # A whole-text glob or regex could span `;` or `&&`; it may decide only a single command.
        if entry.match == "exact" or (len(facts.commands) == 1 and entry.match != "prefix"):
            if _text_match(entry, whole, undecided=False):
                return entry
    first: ListEntry | None = None
    for cmd in facts.commands:
        hit = next((e for e in entries if _part_match(e, cmd, allow=True)), None)
        if hit is None:
            return None
        first = first or hit
    return first

"""Static values (S2.1): variables and parameters given static values in the same text.

``f=/etc/shadow; cp "$f" x`` copies /etc/shadow; ``f() { rm -rf "$1"; }; f ~`` deletes home.
The reader substitutes such values before judging:

- :func:`expand` computes the words a word becomes once its parameters are known, as bash
  expands them (quotes, escapes, ``$'…'``, ``$NAME``, ``${NAME}``, positional ``$1``; word
  splitting of unquoted values at blanks). Any other expansion leaves the word as it is.
- :class:`TextEnv` decides, for one text, which values are *certain* at a position: a variable
  assigned only by plain assignments that always run before the use (at the top level of the
  text, not in a loop, branch, pipeline, subshell or function, not after ``eval`` or ``source``,
  and named nowhere else in the text, so nothing else binds it). A value that is only *possible*
  (assigned in a branch, or beside other bindings) is read as well, as one more reading of the
  command, next to the command as written: the stricter union.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from gatesh._errors import ReadError
from gatesh._types import Word

from ._words import decode_ansi_c

# The values one command is read with, at most (each possible value is one more reading).
MAX_VARIANTS: Final = 8
# Words of a `for NAME in WORDS` loop its body is read once each for, at most.
MAX_LOOP_WORDS: Final = 16

_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# What changes the positional parameters besides one `set --`: shift, another set, a function.
_MOVES_POSITIONAL: Final = re.compile(
    r"(?:^|[\s;&|(`])(?:shift|set\s+--[\s\S]*?(?:^|[\s;&|(`])set\s+(?:--|-\w))(?=\s|;|$)|\(\s*\)\s*\{"
)
_BRACE: Final = re.compile(r"\{[^{}\s]*(?:,|\.\.)[^{}\s]*\}")
# Words in a text after which any variable may hold anything (they run code in this shell).
_BINDS_ANYTHING: Final = re.compile(
    r"(?:^|[\s;&|(`])(?:eval|source|\.|set\s+-[a-z]*a|declare\s+-[a-z]*n"
    r"|typeset\s+-[a-z]*n|local\s+-[a-z]*n)(?=\s)|\$\{!"
)


@dataclass(frozen=True)
class Binding:
    """A plain assignment ``NAME=VALUE`` in a text. ``value`` None: not a static value (dynamic,
    an array, ``+=``). ``unconditional``: it runs whenever the text runs, before what follows."""

    name: str
    value: str | None
    start: int
    unconditional: bool
    source: str = ""  # a dynamic value as written (``"$1"``), for the reader to resolve
    declared: bool = False  # an operand of export/declare/local/readonly/typeset
    # The byte span of the function body it runs in whenever that function runs (not in a
    # branch, loop … of the body); None at the top level or where it may not run.
    scope: tuple[int, int] | None = None


class _Unknown(ReadError):
    """A part of a word whose value is not known statically; caught in ``expand``, never escapes."""


def expand(word: Word, lookup: Callable[[str], str | None]) -> list[Word] | None:
    """The words ``word`` becomes when every parameter in it is known to ``lookup`` (a name, or a
    digit for a positional parameter, to its value); None when any part is not known."""
    if word.static:
        return [word]
    if "$" not in word.text:
        return None  # dynamic for another reason (a brace range too long, `…`, <(…))
    try:
        return _expand(word.text, lookup)
    except _Unknown:
        return None


def _expand(src: str, lookup: Callable[[str], str | None]) -> list[Word]:
    """The fields bash makes of the word ``src`` (quotes removed, parameters ``lookup`` knows
    put in, unquoted values split at blanks); raises ``_Unknown`` for anything it does not
    compute (a substitution, a brace expansion, an unknown parameter)."""
    fields: list[str] = []
    cur: list[str] = []
    have = False  # the current field exists (something quoted, or text) even when empty
    i, n = 0, len(src)
    dq = False

    while i < n:
        ch = src[i]
        if dq:
            i, dq = _double_quoted(src, i, cur, lookup)
            continue
        if ch == "'":
            close = src.find("'", i + 1)
            if close < 0:
                raise _Unknown
            cur.append(src[i + 1 : close])
            have = True
            i = close + 1
        elif ch == '"':
            dq, have = True, True
            i += 1
        elif ch == "\\":
            if i + 1 < n and src[i + 1] != "\n":
                cur.append(src[i + 1])
                have = True
            i += 2
        elif ch == "$" and src[i + 1 : i + 2] == "'":
            close = i + 2
            while close < n and src[close] != "'":
                close += 2 if src[close] == "\\" else 1
            if close >= n:
                raise _Unknown
            cur.append(decode_ansi_c(src[i + 2 : close]))
            have = True
            i = close + 1
        elif ch == "$" and src[i + 1 : i + 2] == '"':
            dq, have = True, True
            i += 2
        elif ch == "$":
            v, i = _param(src, i, lookup, dq)
            cur, have = _split_value(v, fields, cur, have)
        elif (
            ch == "`"
            or (ch in "<>" and src[i + 1 : i + 2] == "(")
            or (ch == "{" and _BRACE.match(src, i))
        ):
            raise _Unknown  # a substitution, or a brace expansion (the walker expands only static words)
        else:
            cur.append(ch)
            have = True
            i += 1
    if dq:
        raise _Unknown
    if cur or have:
        fields.append("".join(cur))
    return [Word(f, True) for f in fields]


def _param(src: str, at: int, lookup: Callable[[str], str | None], dq: bool) -> tuple[str, int]:
    """The value of the parameter at ``src[at] == '$'`` and where it ends (``dq``: inside
    double quotes); raises ``_Unknown`` when it is not computed."""
    n = len(src)

    def value_of(name: str) -> str:
        v = lookup(name)
        if v is None:
            raise _Unknown
        return v

    if at + 1 >= n:
        return "$", at + 1
    c = src[at + 1]
    if c == "{":
        close = src.find("}", at + 2)
        if close < 0:
            raise _Unknown
        inner = src[at + 2 : close]
        if not (_NAME.fullmatch(inner) or inner.isdigit()):
            raise _Unknown  # ${x:-y}, ${#x}, ${x#p}, ${!x}: not computed
        return value_of(inner), close + 1
    if c.isdigit():
        return value_of(c), at + 2
    m = _NAME.match(src, at + 1)
    if m:
        return value_of(m.group(0)), m.end()
    if c in "\"'" and not dq:
        return "", at + 1  # $"…" and $'…' are handled by the caller
    raise _Unknown  # $(…), $((…)), $@, $*, $#, $?, $$, $!, $-


def _double_quoted(
    src: str, i: int, cur: list[str], lookup: Callable[[str], str | None]
) -> tuple[int, bool]:
    """One step inside double quotes at ``src[i]``: what it stands for is added to ``cur``;
    returns where the next step starts and whether it is still inside the quotes."""
    n = len(src)
    dq = True
    ch = src[i]
    if ch == '"':
        dq = False
        i += 1
    elif ch == "\\" and i + 1 < n and src[i + 1] in '$`"\\\n':
        if src[i + 1] != "\n":
            cur.append(src[i + 1])
        i += 2
    elif ch == "$":
        v, i = _param(src, i, lookup, dq)
        cur.append(v)
    elif ch == "`":
        raise _Unknown
    else:
        cur.append(ch)
        i += 1
    return i, dq


def _split_value(v: str, fields: list[str], cur: list[str], have: bool) -> tuple[list[str], bool]:
    """Add the unquoted value ``v`` to the fields: split at blanks (the default IFS), a blank
    at either edge ending the field; returns the current field and whether it exists."""
    parts = v.split()  # an unquoted value is split at blanks (the default IFS)
    if not parts:
        return cur, have
    if v[:1].isspace() and (cur or have):
        fields.append("".join(cur))
        cur, have = [], False
    for k, part in enumerate(parts):
        if k:
            fields.append("".join(cur))
            cur, have = [], False
        cur.append(part)
        have = True
    if v[-1:].isspace():
        fields.append("".join(cur))
        cur, have = [], False
    return cur, have


@dataclass
class TextEnv:
    """Which values are known in one text, at which position (see the module docstring)."""

    bindings: list[Binding]
    text: str
    inherited: Mapping[str, str] = field(default_factory=dict)
    # The byte spans of the text's function bodies: what runs there runs when the function is
    # called, so only the values the body itself gives, or one value a name has everywhere,
    # are certain there.
    functions: Sequence[tuple[int, int]] = ()
    _sites: dict[str, list[Binding]] = field(default_factory=dict)
    _certain: set[str] = field(default_factory=set)
    _scoped: dict[str, tuple[int, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.bindings and not self.inherited:
            return  # no name has a value to know (most texts): nothing is certain
        for b in self.bindings:
            self._sites.setdefault(b.name, []).append(b)
        anything = bool(_BINDS_ANYTHING.search(self.text))
        ifs = "IFS" in self._sites or re.search(r"\bIFS\b", self.text) is not None
        for name in set(self._sites) | set(self.inherited):
            sites = self._sites.get(name, [])
            if anything or ifs or not all(b.value is not None for b in sites):
                continue
            scopes = {b.scope for b in sites if not b.unconditional}
            if any(s is None for s in scopes):
                continue  # a binding that may not run: in a branch, a loop, a pipeline …
            if scopes:
                if len(scopes) > 1 or any(b.unconditional for b in sites) or name.isdigit():
                    continue  # bound in more than one place a function runs, or also outside
                if name in self.inherited:
                    continue
                scope = next(iter(scopes))
                assert scope is not None
                self._scoped[name] = scope
            if name.isdigit():
                # a positional parameter `set --` gave: certain while nothing else moves them
                if len({b.start for b in sites}) == 1 and not _MOVES_POSITIONAL.search(self.text):
                    self._certain.add(name)
                continue
            if _occurrences(self.text, name) != len(sites):
                continue  # named elsewhere: `read NAME`, `for NAME in`, `unset NAME`, …
            self._certain.add(name)

    def certain(self, name: str, at: int) -> str | None:
        """The value ``name`` surely has at byte ``at`` of the text, or None. In a function's
        body that is a value the body gave it before ``at`` (a name bound only there), or the
        one value a name bound only outside functions has everywhere: the function runs when
        it is called, after any of the text's bindings."""
        if name not in self._certain:
            return None
        sites = self._sites.get(name, [])
        inner = self._function_at(at)
        scope = self._scoped.get(name)
        if scope is not None:
            if inner != scope:
                return None  # outside the body that binds it, or in a function inside it
            before = [b for b in sites if scope[0] <= b.start < at]
            return before[-1].value if before else None
        if inner is not None:
            if name.isdigit():
                return None  # a function's $1 … are its call's words
            values = {b.value for b in sites}
            if name in self.inherited:
                values.add(self.inherited[name])
            if len(values) != 1 or not (sites or name in self.inherited):
                return None
            if sites and not any(b.start < at for b in sites) and name not in self.inherited:
                return None  # bound only after the definition: a call before it sees none
            return values.pop()
        before = [b for b in sites if b.start < at]
        if before:
            return before[-1].value
        return self.inherited.get(name)

    def _function_at(self, at: int) -> tuple[int, int] | None:
        """The innermost function body holding byte ``at``, or None at the top level."""
        inner: tuple[int, int] | None = None
        for span in self.functions:
            if span[0] <= at < span[1] and (inner is None or span[0] >= inner[0]):
                inner = span
        return inner

    def possible(self, name: str) -> list[str]:
        """Static values ``name`` may have somewhere in the text (for the union of readings)."""
        values = [b.value for b in self._sites.get(name, []) if b.value is not None]
        if name in self.inherited:
            values.insert(0, self.inherited[name])
        return list(dict.fromkeys(values))

    def known_at(self, at: int) -> dict[str, str]:
        """Every certain value at byte ``at``: what a same-shell text run from there inherits."""
        out: dict[str, str] = {}
        for name in self._certain:
            v = self.certain(name, at)
            if v is not None:
                out[name] = v
        return out


def _occurrences(text: str, name: str) -> int:
    """How often ``name`` appears in ``text`` as a word that is not a use (``$name``, ``${name``)
    nor part of an option (``-d``, ``--d``: no name is bound by a word starting with a dash)."""
    count = 0
    for m in re.finditer(r"(?<![\w$-])" + re.escape(name) + r"(?!\w)", text):
        before = text[max(0, m.start() - 2) : m.start()]
        if before.endswith("${") or before.endswith("$"):
            continue
        count += 1
    return count


def names_in(word: Word) -> list[str]:
    """The parameter names a dynamic word's source refers to (``$x``, ``${x}``)."""
    return [
        m.group(1) or m.group(2)
        for m in re.finditer(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))", word.text)
    ]

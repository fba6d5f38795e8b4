"""Brace expansion: ``rm -rf {x,/}`` runs ``rm -rf x /``; ``{rm,-rf,~}`` runs ``rm -rf ~``.

Bash expands braces before anything else, in every word of a simple command (the command name
included), but not in assignments or redirections, and only where the braces are unquoted.
``expand`` takes a word's source text and returns the words bash makes of it, or None when
bash makes no change (no unquoted ``{…,…}`` or ``{A..B}``). A static part keeps its value
(quotes removed); a word holding an expansion or substitution keeps that part's source and is
dynamic. More than ``MAX_WORDS`` words: the word stays as written but is dynamic.
"""

from __future__ import annotations

import itertools
from typing import Final

from gatesh._errors import ReadError
from gatesh._types import Word

from ._subst import _skip_backquote, _skip_comsub, _skip_dquote
from ._words import _unescape_dquoted, decode_ansi_c

MAX_WORDS: Final = 1024
_NAME: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789")
_SPECIAL: Final = frozenset("@*#?-$!0123456789")

# One character of a word: (text, active: an unquoted brace or comma, dynamic part).
_Ch = tuple[str, bool, bool]


class _TooMany(ReadError):
    pass


def expand(src: str) -> list[Word] | None:
    """The words bash makes of the word written ``src`` by brace expansion (see the module)."""
    if "{" not in src:
        return None
    chars = _lex(src)
    if chars is None or not any(c[1] and c[0] == "{" for c in chars):
        return None
    try:
        out = _expand(chars, [0])
    except (_TooMany, RecursionError):
        return [Word(src, False)]
    if len(out) == 1 and out[0] == chars:
        return None
    words: list[Word] = []
    for w in out:
        if not w:
            continue  # an empty alternative leaves no word
        words.append(Word("".join(c[0] for c in w), not any(c[2] for c in w)))
    return words


def _lex(src: str) -> list[_Ch] | None:
    """The characters of ``src`` with quoting applied (None: text it cannot follow)."""
    b = src.encode("utf-8", "surrogatepass")
    out: list[_Ch] = []
    i, n = 0, len(b)

    def dyn(j: int) -> None:
        out.extend((ch, False, True) for ch in b[i:j].decode("utf-8", "surrogatepass"))

    while i < n:
        c = b[i : i + 1]
        if c == b"\\":
            j = _char_end(b, i + 1)  # the escaped character may take several bytes
            if b[i + 1 : j] != b"\n":
                out.append(
                    (
                        b[i + 1 : j].decode("utf-8", "surrogatepass") if j > i + 1 else "\\",
                        False,
                        False,
                    )
                )
            i = j
            continue
        if c == b"'":
            j = b.find(b"'", i + 1)
            if j < 0:
                return None
            out.extend((ch, False, False) for ch in b[i + 1 : j].decode("utf-8", "surrogatepass"))
            i = j + 1
            continue
        if c == b"$" and b[i + 1 : i + 2] == b"'":
            j = i + 2
            while j < n and b[j : j + 1] != b"'":
                j += 2 if b[j : j + 1] == b"\\" else 1
            if j >= n:
                return None
            body = decode_ansi_c(b[i + 2 : j].decode("utf-8", "surrogatepass"))
            out.extend((ch, False, False) for ch in body)
            i = j + 1
            continue
        if c == b'"' or (c == b"$" and b[i + 1 : i + 2] == b'"'):
            start = i + (2 if c == b"$" else 1)
            j = _skip_dquote(b, start)
            if b[j - 1 : j] != b'"' or j - 1 < start:
                return None  # never closed (the last byte may be part of a character)
            inner = b[start : j - 1]
            if b"$" in inner or b"`" in inner:
                dyn(j)
            else:
                text = _unescape_dquoted(inner.decode("utf-8", "surrogatepass"))
                out.extend((ch, False, False) for ch in text)
            i = j
            continue
        end = _dynamic_end(b, i)
        if end is not None:
            dyn(end)
            i = end
            continue
        j = _char_end(b, i)  # one (possibly multi-byte) unquoted character
        ch = b[i:j].decode("utf-8", "surrogatepass")
        out.append((ch, ch in "{},", False))
        i = j
    return out


def _dynamic_end(b: bytes, i: int) -> int | None:
    """Where the expansion or substitution starting at ``b[i]`` ends (``$(…)``, ``$[…]``,
    ``${…}``, ``$?`` and the like, ``$NAME``, backquotes, ``<(…)``); None when none starts there."""
    n = len(b)
    c = b[i : i + 1]
    if c == b"$" and b[i + 1 : i + 2] in (b"(", b"["):
        j = _skip_comsub(b, i + 2) if b[i + 1 : i + 2] == b"(" else _skip_pair(b, i + 2, b"[", b"]")
        return j
    if c == b"$" and b[i + 1 : i + 2] == b"{":
        j = _skip_pair(b, i + 2, b"{", b"}")
        return j
    if c == b"$" and i + 1 < n and chr(b[i + 1]) in _SPECIAL:
        return i + 2
    if c == b"$" and i + 1 < n and chr(b[i + 1]) in _NAME:
        j = i + 1
        while j < n and chr(b[j]) in _NAME:
            j += 1
        return j
    if c == b"`":
        j = _skip_backquote(b, i)
        return j
    if c in (b"<", b">") and b[i + 1 : i + 2] == b"(":
        j = _skip_comsub(b, i + 2)
        return j
    return None


def _char_end(b: bytes, i: int) -> int:
    """The end of the UTF-8 character starting at byte ``i`` (``i`` itself past the end)."""
    if i >= len(b):
        return i
    j = i + 1
    while j < len(b) and (b[j] & 0xC0) == 0x80:
        j += 1
    return j


def _skip_pair(b: bytes, i: int, open_: bytes, close: bytes) -> int:
    depth, n = 1, len(b)
    while i < n:
        c = b[i : i + 1]
        if c == b"\\":
            i += 2
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _expand(chars: list[_Ch], count: list[int]) -> list[list[_Ch]]:
    """Bash's brace expansion of ``chars``; ``count`` bounds the words made."""
    n = len(chars)
    i = 0
    while i < n:
        ch, active, _ = chars[i]
        if not (active and ch == "{"):  # (an unquoted `${` was lexed as an expansion)
            i += 1
            continue
        depth, commas, j = 0, [], i
        while j < n:
            c, a, _ = chars[j]
            if a and c == "{":
                depth += 1
            elif a and c == "}":
                depth -= 1
                if depth == 0:
                    break
            elif a and c == "," and depth == 1:
                commas.append(j)
            j += 1
        if j >= n:
            i += 1
            continue
        if commas:
            bounds = [i, *commas, j]
            alts = [chars[a + 1 : b] for a, b in itertools.pairwise(bounds)]
        else:
            seq = _sequence(chars[i + 1 : j])
            if seq is None:
                i += 1
                continue
            alts = [[(s, False, False) for s in item] for item in seq]
        prefix, suffix = chars[:i], chars[j + 1 :]
        tails = _expand(suffix, count)
        out: list[list[_Ch]] = []
        for alt in alts:
            for expanded in _expand(alt, count):
                for t in tails:
                    count[0] += 1
                    if count[0] > MAX_WORDS:
                        raise _TooMany
                    out.append(prefix + expanded + t)
        return out
    return [chars]


def _sequence(inner: list[_Ch]) -> list[str] | None:
    """``A..B`` or ``A..B..STEP`` (integers, or single letters): the items, else None."""
    if any(d for _, _, d in inner):
        return None
    text = "".join(c for c, _, _ in inner)
    parts = text.split("..")
    if len(parts) not in (2, 3):
        return None
    step = 1
    if len(parts) == 3:
        try:
            step = abs(int(parts[2])) or 1
        except ValueError:
            return None
    a, b = parts[0], parts[1]
    try:
        x, y = int(a), int(b)
    except ValueError:
        if (
            len(a) == 1
            and len(b) == 1
            and a.isascii()
            and b.isascii()
            and a.isalpha()
            and b.isalpha()
        ):
            x, y = ord(a), ord(b)
            rng = range(x, y + 1, step) if x <= y else range(x, y - 1, -step)
            if len(rng) > MAX_WORDS:
                raise _TooMany from None
            return [chr(v) for v in rng]
        return None
    rng = range(x, y + 1, step) if x <= y else range(x, y - 1, -step)
    if len(rng) > MAX_WORDS:
        raise _TooMany
    width = (
        max(len(a), len(b))
        if (a.lstrip("-").startswith("0") and len(a.lstrip("-")) > 1)
        or (b.lstrip("-").startswith("0") and len(b.lstrip("-")) > 1)
        else 0
    )
    return [str(v).zfill(width) if width else str(v) for v in rng]

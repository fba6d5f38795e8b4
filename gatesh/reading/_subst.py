"""Command substitutions in text tree-sitter-bash leaves unparsed, found by bash's own rules.

tree-sitter-bash keeps some text bash expands as one leaf: the pattern of ``${x#PAT}``,
``${x%PAT}``, ``${x^PAT}``, ``${x,PAT}`` (a ``regex`` node), the right side of ``=~``, backquotes
left inside a word (``${x:=`cmd`}``), and most of an unquoted here-document's body (backquotes,
``\\\\$(cmd)``, ``${x#$(cmd)}``). Bash runs every ``$(…)`` and ```…``` there.

``substitutions`` lists them from the text: the span and the command text inside, for the reader
to read as a substitution. It errs towards finding too much: quotes outside a substitution are
not honoured (in a here-document body and inside ``"${…}"`` they are literal; an unquoted
``'$(x)'`` pattern it reads too), and a substitution that does not close runs to the end.
"""

from __future__ import annotations

from typing import Final

_BS: Final = 0x5C  # backslash
_BQ: Final = 0x60  # `
_SQ: Final = 0x27
_DQ: Final = 0x22
_WORD_START: Final = frozenset(b" \t\n;&|()<>")


def substitutions(data: bytes) -> list[tuple[int, int, str]]:
    """(start, end, command text) of each outermost ``$(…)`` and ```…``` in ``data``, read as
    an unquoted here-document body: a backslash quotes the next byte, quotes are literal.
    ``$((…))`` is arithmetic (its inside is searched) unless bash reads it as ``$( (…) … )``.
    """
    out: list[tuple[int, int, str]] = []
    i, n = 0, len(data)
    while i < n:
        c = data[i]
        if c == _BS:
            i += 2
            continue
        if c == _BQ:
            end = _skip_backquote(data, i)
            out.append(
                (
                    i,
                    end,
                    _unescape_backquoted(data[i + 1 : end - 1 if _closed(data, end, _BQ) else end]),
                )
            )
            i = end
            continue
        if c == 0x24 and data[i + 1 : i + 2] == b"(":
            end = _skip_comsub(data, i + 2)
            inner = data[i + 2 : end - 1 if _closed(data, end, 0x29) else end]
            if inner.startswith(b"(") and _arithmetic(inner):
                i += 3  # $(( … )): search inside the expression
                continue
            out.append((i, end, inner.decode("utf-8", "surrogateescape")))
            i = end
            continue
        i += 1
    return out


def _closed(data: bytes, end: int, close: int) -> bool:
    return 0 < end <= len(data) and data[end - 1] == close


def _arithmetic(inner: bytes) -> bool:
    """Whether ``$(`` + ``inner`` + ``)`` (``inner`` starting with ``(``) is ``$(( … ))``:
    the parenthesis that closes inner's first ``(`` is its last byte."""
    end = _skip_comsub(inner, 1)
    return end == len(inner) and inner.endswith(b")")


def _unescape_backquoted(raw: bytes) -> str:
    """Inside backquotes bash removes a backslash before ``$``, ``` ` `` or ``\\``."""
    out = bytearray()
    i, n = 0, len(raw)
    while i < n:
        if raw[i] == _BS and i + 1 < n and raw[i + 1] in b"$`\\":
            out.append(raw[i + 1])
            i += 2
            continue
        out.append(raw[i])
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _skip_backquote(data: bytes, i: int) -> int:
    """The offset after the backquote closing the one at ``i`` (or the end of ``data``)."""
    j, n = i + 1, len(data)
    while j < n:
        if data[j] == _BS:
            j += 2
            continue
        if data[j] == _BQ:
            return j + 1
        j += 1
    return n


def _skip_dquote(data: bytes, i: int) -> int:
    """The offset after the ``"`` closing the one at ``i - 1`` (or the end of ``data``)."""
    j, n = i, len(data)
    while j < n:
        c = data[j]
        if c == _BS:
            j += 2
        elif c == _DQ:
            return j + 1
        elif c == _BQ:
            j = _skip_backquote(data, j)
        elif c == 0x24 and data[j + 1 : j + 2] == b"(":
            j = _skip_comsub(data, j + 2)
        else:
            j += 1
    return n


def _skip_comsub(data: bytes, i: int) -> int:
    """The offset after the ``)`` closing a ``$(`` whose text starts at ``i`` (shell code:
    quotes, escapes, comments and nested parentheses honoured), or the end of ``data``."""
    depth, j, n = 1, i, len(data)
    while j < n:
        c = data[j]
        if c == _BS:
            j += 2
            continue
        if c == _SQ:
            k = data.find(b"'", j + 1)
            j = n if k < 0 else k + 1
            continue
        if c == _DQ:
            j = _skip_dquote(data, j + 1)
            continue
        if c == _BQ:
            j = _skip_backquote(data, j)
            continue
        if c == 0x23 and (j == i or data[j - 1] in _WORD_START):  # a comment
            k = data.find(b"\n", j)
            j = n if k < 0 else k
            continue
        if c == 0x28:
            depth += 1
        elif c == 0x29:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return n

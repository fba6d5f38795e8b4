"""Turning tree-sitter word nodes into :class:`Word` values: quoting removed where static."""

from __future__ import annotations

import re
from typing import Any

from gatesh._types import Word

from ._nodes import kind

# Node types whose value is only known when the command runs.
DYNAMIC_NODES = frozenset(
    {
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
    }
)

_UNQUOTED_ESCAPE = re.compile(r"\\(\n|.)", re.DOTALL)
_DQUOTE_ESCAPE = re.compile(r'\\([$`"\\\n])')
_ANSI_C = re.compile(
    r"\\(?:x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|([0-7]{1,3})|c(.)|(.))",
    re.DOTALL,
)
_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _unescape_unquoted(s: str) -> str:
    if "\\" not in s:
        return s
    return _UNQUOTED_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), s)


def _unescape_dquoted(s: str) -> str:
    if "\\" not in s:
        return s
    return _DQUOTE_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), s)


def decode_ansi_c(body: str) -> str:
    """The value of ``$'body'`` as bash computes it (\\x, \\u, octal, \\cX and letter escapes)."""

    def sub(m: re.Match[str]) -> str:
        hx, u4, u8, octal, ctl, other = m.groups()
        try:
            if hx:
                return chr(int(hx, 16))
            if u4:
                return chr(int(u4, 16))
            if u8:
                return chr(min(int(u8, 16), 0x10FFFF))
            if octal:
                return chr(int(octal, 8) & 0xFF)
        except ValueError:
            return m.group(0)
        if ctl is not None:
            return chr(ord(ctl) & 0x1F)
        return _ANSI_SIMPLE.get(other, "\\" + other)

    return _ANSI_C.sub(sub, body)


def node_bytes(node: Any, src: bytes) -> bytes:
    """The bytes of ``node`` in ``src``, the text its tree was parsed from: what ``node.text``
    returns, sliced directly (``node.text`` goes through a memoryview and costs ~1 us a call)."""
    return src[node.start_byte : node.end_byte]


def node_text(node: Any, src: bytes) -> str:
    """The node's source text in ``src`` (its tree's text; invalid bytes replaced, the reader
    rejects them earlier)."""
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def unquoted_word(text: str) -> Word:
    """The argv word of a ``word`` node whose source text is ``text`` (what :func:`word_of`
    gives for it: static, escapes removed)."""
    return Word(_unescape_unquoted(text), True)


def word_of(node: Any, src: bytes) -> Word:
    """The argv word for a tree-sitter argument node.

    Guarantees: ``static`` is False when any part is an expansion or substitution; a static word
    has its quoting and escapes removed (``$'…'`` decoded).
    """
    text, static = _value(node, src)
    return Word(text if static else node_text(node, src), static)


def word_of_run(nodes: list[Any], src: bytes) -> Word:
    """The one argv word made of argument nodes that touch (no byte between them).

    tree-sitter-bash sometimes ends a word early and starts another at the next byte
    (``r`true`m``, ``'a'b$/c``, ``$a/$b/c``); bash never breaks a word without a blank or an
    operator between, so the nodes are one word. Guarantees: static only when every part is.
    """
    if len(nodes) == 1:
        return word_of(nodes[0], src)
    texts: list[str] = []
    static = True
    for n in nodes:
        v, s = _value(n, src)
        texts.append(v)
        static = static and s
    if static:
        return Word("".join(texts), True)
    return Word("".join(node_text(n, src) for n in nodes), False)


def _value(node: Any, src: bytes) -> tuple[str, bool]:
    t = kind(node)
    if t == "word":
        return _unescape_unquoted(node_text(node, src)), True
    if t == "raw_string":
        s = node_text(node, src)
        return s[1:-1] if len(s) >= 2 else s, True
    if t == "ansi_c_string":
        s = node_text(node, src)
        return decode_ansi_c(s[2:-1] if len(s) >= 3 else ""), True
    if t in ("string", "translated_string"):
        return _string_value(node, src)
    if t == "concatenation":
        parts: list[str] = []
        static = True
        for child in node.children:
            v, child_static = _value(child, src)
            parts.append(v)
            static = static and child_static
        return "".join(parts), static
    if t in DYNAMIC_NODES:
        return node_text(node, src), False
    return node_text(node, src), True


def _string_value(node: Any, text: bytes) -> tuple[str, bool]:
    # The literal runs are taken from the source bytes between the quotes, not by joining
    # ``string_content`` children: tree-sitter-bash leaves newlines between children out of every
    # child, and `bash -c "ls<newline>rm -rf /"` must not read as `lsrm -rf /` (bypass_failures #1).
    base = node.start_byte
    src = text[base : node.end_byte]
    children = node.children
    lo, hi = 0, len(src)
    k, m = 0, len(children)
    while k < m and (kind(children[k]) == '"' or (k == 0 and kind(children[k]) == "$")):
        lo = children[k].end_byte - base
        k += 1
    if m > k and kind(children[-1]) == '"':
        hi = children[-1].start_byte - base
        m -= 1
    parts: list[str] = []
    static = True
    pos = lo
    for child in children[k:m]:
        ct = kind(child)
        if ct not in DYNAMIC_NODES and ct not in ("translated_string", "string"):
            continue  # string_content and stray tokens: part of the literal run from the source
        start, end = child.start_byte - base, child.end_byte - base
        parts.append(_unescape_dquoted(src[pos:start].decode("utf-8", "replace")))
        if ct in DYNAMIC_NODES:
            static = False
            parts.append(node_text(child, text))
        else:
            v, s = _string_value(child, text)
            parts.append(v)
            static = static and s
        pos = end
    parts.append(_unescape_dquoted(src[pos : max(pos, hi)].decode("utf-8", "replace")))
    return "".join(parts), static

"""The reader of record: a walk over tree-sitter-bash's syntax tree that lists what would execute.

The walk yields :class:`RawCommand` values (argv before wrapper peeling); ``_read`` peels them.
This module parses (one parser per thread), takes the short way for a line of plain words, and
works around tree-sitter's misreads of line breaks; the visit of the tree is :mod:`._walker`'s,
what it finds :mod:`._walk_result`'s.
"""

from __future__ import annotations

import bisect
import re
import threading
from typing import Any, Final

from tree_sitter import Parser

from gatesh._ts_hazard import overread_at
from gatesh._types import Context, Word

from ._nodes import LANGUAGE, kind
from ._walk_result import Loop, ParserHazard, RawCommand, Walk, WalkLimit
from ._walker import _Walker
from ._words import node_text

__all__ = [
    "PLAIN",
    "Loop",
    "ParserHazard",
    "RawCommand",
    "Walk",
    "WalkLimit",
    "parse",
    "walk_text",
]

# One parser per thread: building a parser costs more than parsing a line, and a tree-sitter
# parser is not thread-safe (two threads parsing with one parser crashed the process). The daemon
# decides on its event loop and in worker threads, so each thread gets its own.
_LOCAL = threading.local()


def _parser() -> Parser:
    parser = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = Parser(LANGUAGE)
    return parser


def parse(data: bytes) -> Any:
    """The tree-sitter tree for ``data``.

    Raises :class:`ParserHazard` (and only that) for a text tree-sitter-bash cannot parse
    without reading out of bounds (see :mod:`gatesh._ts_hazard`); any other byte string parses.
    """
    at = overread_at(data)
    if at is not None:
        raise ParserHazard(
            f"the bash parser reads out of bounds on the character after '{{' at byte {at}"
        )
    return _parser().parse(data)


# A line of plain words: no quotes, escapes, expansions, operators, newlines, comments or brackets.
# Such a word is its own value (nothing in it to unquote, expand or run), and a line of them is
# at most one simple command split at spaces.
PLAIN: Final = re.compile(r"[A-Za-z0-9_./:=,@%+\- ]*")

_PLAIN_BYTES: Final = re.compile(PLAIN.pattern.encode())

# The argument nodes tree-sitter-bash makes of a plain word.
_PLAIN_ARGS: Final = frozenset({"word", "number"})


def walk_text(data: bytes, context: Context, deadline: float = float("inf")) -> Walk:
    """Walk ``data`` (UTF-8 shell text). Raises :class:`WalkLimit` past a limit or deadline."""
    tree = parse(data)
    if _PLAIN_BYTES.fullmatch(data):
        plain = _plain_walk(tree, data, context)
        if plain is not None:
            return plain
    inserted: list[int] = []
    src = data
    if b"\n\\" in data:
        tree, inserted, src = _repair_line_start_escapes(data, tree)
    w = _walk_tree(tree, src, context, deadline)
    if w.glued:
        # tree-sitter read two lines as one command: put a `;` where bash ends the first one
        # and read again (rare: only text where tree-sitter glued lines pays for this).
        fixed = inserted
        for _ in range(_REPAIR_ROUNDS):
            sites = sorted(set(w.glued))
            if any(src[at - 1 : at] == b"\\" for at in sites):
                # a `;` there would be escaped: leave the tree as it is, read with an error
                w.result.has_error = True
                w.result.error_at = w.result.error_at or _GLUED.format(sites[0])
                break
            src, fixed = _insert_semicolons(src, sites, fixed)
            w = _walk_tree(parse(src), src, context, deadline)
            if not w.glued:
                break
        else:
            w.result.has_error = True
            w.result.error_at = w.result.error_at or _GLUED.format(sites[0])
        inserted = fixed
    if inserted:
        _unshift(w.result, inserted)
    return w.result


def _plain_walk(tree: Any, data: bytes, context: Context) -> Walk | None:
    """The walk of a :data:`PLAIN` line that tree-sitter read as one ``command`` of plain leaf
    words (a ``command_name`` word, then ``word``/``number`` arguments, no two touching); None for
    any other tree (an assignment, a declaration, a reserved word, an error: the full walk reads it).

    Guarantees: for such a tree the result equals what :class:`_Walker` makes of it (one
    :class:`RawCommand` whose words are the nodes' texts, static; nothing else found): a plain
    word has no quoting, escape, brace or expansion to remove, no newline to glue and nothing
    inside it that runs. It only skips visiting the nodes one by one (~80 % of agent lines).
    """
    root = tree.root_node
    if root.has_error or root.child_count != 1:
        return None
    node = root.children[0]
    if kind(node) != "command":
        return None
    children = node.children
    name = children[0]
    if kind(name) != "command_name" or name.child_count != 1:
        return None
    words: list[Word] = []
    end = -1
    for k, child in enumerate(children):
        leaf = name.children[0] if k == 0 else child
        if kind(leaf) not in _PLAIN_ARGS or leaf.named_child_count:
            return None
        start = leaf.start_byte
        if start <= end:
            return None  # touching nodes: the full walk joins them and notes it
        end = leaf.end_byte
        words.append(Word(data[start:end].decode("utf-8", "replace"), True))
    result = Walk()
    result.commands.append(RawCommand(words, context, 0, node.start_byte, node_text(node, data)))
    return result


def _walk_tree(tree: Any, src: bytes, context: Context, deadline: float) -> _Walker:
    """Walk ``tree``, parsed from ``src``."""
    root = tree.root_node
    w = _Walker(src, context, deadline)
    if root.has_error:
        w.result.has_error = True
        w.result.error_at = _first_error(root, src)
    w.walk(root, context, 0, 0)
    return w


def _insert_semicolons(
    src: bytes, sites: list[int], inserted: list[int]
) -> tuple[bytes, list[int]]:
    """``src`` with a ``;`` inserted at each of ``sites`` (offsets in ``src``), and the offsets
    of every byte inserted so far (``inserted`` were offsets in ``src``), in the new text."""

    def moved(b: int) -> int:
        return b + bisect.bisect_right(sites, b)

    out = bytearray()
    last = 0
    new: list[int] = []
    for k, at in enumerate(sites):
        out += src[last:at]
        new.append(at + k)
        out += b";"
        last = at
    out += src[last:]
    return bytes(out), sorted([moved(b) for b in inserted] + new)


_GLUED: Final = "tree-sitter read a line break inside a command at byte {}"

# Rounds of re-parsing after a repair (each round fixes every misread tree-sitter showed).
_REPAIR_ROUNDS = 4

_NL_BACKSLASH = re.compile(rb"\n(?=\\)")


def _repair_line_start_escapes(data: bytes, tree: Any) -> tuple[Any, list[int], bytes]:
    """Work around tree-sitter-bash gluing a line that starts with a backslash onto the line before.

    tree-sitter-bash 0.25 reads ``ls<nl>\\rm -rf ~`` as one command ``ls`` with a word
    ``<nl>\\rm`` (and ``sh <<'EOF'<nl>\\rm …`` as heredoc arguments, leaving the body empty):
    the newline becomes part of a word, which no shell ever does (bypass_failures #2/#14). Where
    a word node starts with that newline, a space is put after the newline and the text is parsed
    again; a space at the start of a line changes nothing for bash. Returns the new tree and the
    sorted byte offsets (in the new text) of the inserted spaces, for ``_unshift``, and the new text.
    """
    sites = [m.start() for m in _NL_BACKSLASH.finditer(data)]
    src = data
    fixes: list[int] = []  # sorted offsets in ``data`` (the original) of the newlines to repair
    inserted: list[int] = []
    for _ in range(_REPAIR_ROUNDS):
        root = tree.root_node
        new: set[int] = set()
        done = set(fixes)
        for orig in sites:
            if orig in done:
                continue
            at = orig + bisect.bisect_left(fixes, orig)  # the newline's offset in the parsed text
            node = root.descendant_for_byte_range(at, at + 1)
            if (
                node is not None
                and kind(node) == "word"
                and node.start_byte <= at
                and not node.text[: at - node.start_byte + 1].strip()
            ):
                new.add(orig)
        if not new:
            break
        fixes = sorted(done | new)
        out = bytearray()
        last = 0
        inserted = []
        for orig in fixes:
            out += data[last : orig + 1]
            inserted.append(len(out))
            out += b" "
            last = orig + 1
        out += data[last:]
        src = bytes(out)
        tree = parse(src)
    return tree, inserted, src


def _unshift(result: Walk, inserted: list[int]) -> None:
    """Map byte offsets of a repaired text back onto the text as given (see the repair above)."""

    def orig(b: int) -> int:
        return b - bisect.bisect_left(inserted, b)

    for cmd in result.commands:
        cmd.start = orig(cmd.start)
    result.blind = [(orig(a), orig(b)) for a, b in result.blind]


def _first_error(root: Any, src: bytes) -> str:
    stack = [root]
    while stack:
        n = stack.pop()
        if kind(n) == "ERROR" or n.is_missing:
            text = node_text(n, src)[:40]
            what = "missing " + kind(n) if n.is_missing else "unexpected"
            return f"{what} {text!r} at byte {n.start_byte}"
        if n.has_error:
            stack.extend(reversed(n.children))
    return "syntax error"

"""Repairs for text bash reads but tree-sitter-bash rejects, each meaning-preserving for bash.

``repair`` runs only when tree-sitter's tree has an error. Every repair inserts bytes at a place
the tree points to, and follows a rule of bash's own grammar (each checked against bash 5.2):

- a lone backslash ending the text: ``bash -c 'echo a \\'`` passes a literal ``\\`` (zsh and a
  script drop it), so it is doubled: the same literal, and the words and commands are unchanged;
- a here-document still open at the end of the text: bash warns and ends the body there, so the
  delimiter line is appended after it (the body keeps every byte it had, nothing follows it);
- ``for NAME do`` (no ``in``, no ``;``): bash runs the body once per ``"$@"`` exactly as for
  ``for NAME; do``, which tree-sitter knows, so a ``;`` is put after NAME;
- ``((`` opening a command where bash reads two subshells (the ``)`` closing the second ``(`` is
  not followed by ``)``): a space is put between the two ``(``;
- a ``$`` that starts no expansion (``s/x$//``, ``a:$%``): bash keeps it literally, so it is
  written ``\\$``, the same literal;
- operands written side by side in ``$(( ))`` (``$(($(date +%s)000))``): bash expands the text
  before evaluating it and removes double quotes there, so the operands are put in ``"…"``;
- a brace expansion where a command starts (``{curl,-s,URL}|{bash,}``): bash expands it into the
  command's words; ``""`` is put before the ``{`` (``""{a,b}`` expands to the same words), which
  tree-sitter reads as one word.

The caller (``Reader.read_text``) has both readers read the repaired text instead of the original
only when tree-sitter then reads it without any error; the reading is then readable, with a
"repaired: …" note per repair. Otherwise nothing changes (the original is read, errors and all).
No repair can hide a command: none removes a byte, and each gives tree-sitter the structure bash
itself reads (a literal stays a literal, a heredoc body stays the same body, a loop or subshell
keeps every command in it).
"""

from __future__ import annotations

import re
from typing import Any, Final

from ._limits import clock
from ._subst import _skip_comsub
from ._walk import ParserHazard, parse

MAX_REPAIR_BYTES: Final = 8 * 1024  # longer text is read as written (real repaired lines: < 300 B)
_ROUNDS: Final = 4  # rounds of repair and re-parse (each round fixes every site the tree shows)
_MAX_SITES: Final = 16  # error sites per round: real lines have one to three; more is not shell
_MAX_HEREDOCS: Final = 16  # open heredocs repaired at once (each costs a scan of the text after it)
# What may follow a `$` for bash to expand it: a name, a digit, a special parameter, `{`, `(`,
# `'` ($'…'), `"` ($"…") or `[` ($[…]). After anything else the `$` is a literal character.
_EXPANDS: Final = frozenset(
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789@*#?-$!{('\"["
)
# Nodes that can stand as one operand of an arithmetic expression.
_OPERANDS: Final = frozenset(
    {
        "command_substitution",
        "simple_expansion",
        "expansion",
        "number",
        "word",
        "variable_name",
        "arithmetic_expansion",
    }
)


def repair(data: bytes, deadline: float = float("inf")) -> tuple[bytes, list[str]] | None:
    """(repaired text, one note per repair) when tree-sitter reads the repaired text without
    error; None when no repair applies, tree-sitter still fails, the text is longer than
    ``MAX_REPAIR_BYTES`` or a parse would end past ``deadline`` (tree-sitter's error recovery
    is superlinear: 8 KiB of errors parse in ~0.1 s). Never raises on any input.
    """
    if len(data) > MAX_REPAIR_BYTES:
        return None
    try:
        return _repaired(data, deadline)
    except ParserHazard:
        return None  # a repair put text there that tree-sitter cannot be handed


def _repaired(data: bytes, deadline: float) -> tuple[bytes, list[str]] | None:
    notes: list[str] = []
    for _ in range(_ROUNDS):
        started = clock()
        root = parse(data).root_node
        if not root.has_error:
            return (data, notes) if notes else None
        if clock() + (clock() - started) > deadline:
            return None  # another parse would likely pass the reading's time budget
        sites = _sites(data, root)
        if not sites:
            return None
        out = bytearray()
        last = 0
        done: set[int] = set()
        for at, add, note in sorted(sites, key=lambda s: s[0]):  # stable: end-of-text order kept
            if at in done and at < len(data):
                continue  # two repairs at one byte: the first only (the next round re-checks)
            done.add(at)
            out += data[last:at] + add
            last = at
            if note and note not in notes:
                notes.append(note)
        out += data[last:]
        data = bytes(out)
    if clock() > deadline:
        return None
    return (data, notes) if not parse(data).root_node.has_error else None


def _sites(data: bytes, root: Any) -> list[tuple[int, bytes, str]]:
    """(offset, bytes to insert there, note) for every repair the tree calls for; none when
    the tree has ``_MAX_SITES`` error sites or more (not a command line with a slip or two).
    Insertions at the end of the text come in the order given: a backslash before a delimiter.
    """
    out: list[tuple[int, bytes, str]] = []
    errors, dollars = _error_nodes(root)
    if len(errors) + len(dollars) >= _MAX_SITES:
        return []
    for err in errors:
        out.extend(_at_error(data, err))
    for at in dollars:
        if data[at + 1 : at + 2] not in _EXPAND_NEXT:
            out.append((at, b"\\", _LONE_DOLLAR))
    tail = len(data) - len(data.rstrip(b"\\"))
    if tail % 2 == 1:
        out.append(
            (
                len(data),
                b"\\",
                "a lone backslash ends the command: read as the literal backslash bash -c passes",
            )
        )
    out.extend(_open_heredocs(data, root))
    out.extend(_brace_words(data))
    return out


# A brace expansion standing where a command starts (``{curl,-s,URL}|{bash,}``): bash expands it
# into words, tree-sitter reads a broken group. The word begins the text or follows an operator.
_BRACE_WORD: Final = re.compile(
    rb"(?:^|(?<=[|;&(\n]))[ \t]*(\{)[^\s{}'\"]*?(?:,|\.\.)[^\s{}'\"]*\}(?=[\s|;&)]|$)"
)
_BRACE_NOTE: Final = (
    "a brace expansion where a command starts: read as the words bash expands it to ('\"\"{…}')"
)


def _brace_words(data: bytes) -> list[tuple[int, bytes, str]]:
    """An empty quoted string put before each such brace word: bash expands ``""{a,b}`` to the
    same words as ``{a,b}``, and tree-sitter reads it as one word."""
    if b"{" not in data:
        return []
    return [
        (m.start(1), b'""', _BRACE_NOTE)
        for m in _BRACE_WORD.finditer(data)
        if data[max(0, m.start(1) - 2) : m.start(1)] != b'""'
    ]


def _error_nodes(root: Any) -> tuple[list[Any], list[int]]:
    """The ERROR nodes, and the offsets of ``$`` tokens, in the parts of the tree with errors
    (tree-sitter may also misread a literal ``$.`` as an expansion with a missing name)."""
    errors: list[Any] = []
    dollars: list[int] = []
    stack = [root]
    while stack and len(errors) + len(dollars) < _MAX_SITES:
        n = stack.pop()
        if n.type == "ERROR":
            errors.append(n)
        elif n.type == "$" and n.end_byte - n.start_byte == 1:
            dollars.append(n.start_byte)
        if n.has_error:
            stack.extend(reversed(n.children))
    return errors, dollars


def _at_error(data: bytes, err: Any) -> list[tuple[int, bytes, str]]:
    """The repair the ERROR node ``err`` calls for (see the module docstring), if any."""
    start = err.start_byte
    kids = err.children
    types = [k.type for k in kids]
    if data[start : start + 1] == b"$" and data[start + 1 : start + 2] not in _EXPAND_NEXT:
        return [(start, b"\\", _LONE_DOLLAR)]
    if types[:3] == ["for", "variable_name", "do"] and not data[
        kids[1].end_byte : kids[2].start_byte
    ].strip(b" \t"):
        return [
            (
                kids[1].end_byte,
                b";",
                "'for NAME do' read as 'for NAME; do' (bash's same loop over \"$@\")",
            )
        ]
    if types[:1] == ["(("] and _dparen_is_subshells(data, kids[0].end_byte):
        return [(start + 1, b" ", "'((' read as two subshells, as bash reads it here")]
    parent, nxt = err.parent, err.next_sibling
    if (
        parent is not None
        and parent.type == "arithmetic_expansion"
        and nxt is not None
        and nxt.start_byte == err.end_byte
        and nxt.type in _OPERANDS
        and kids
        and all(k.is_named and k.type in _OPERANDS and not k.has_error for k in kids)
        and not _quoting_outside(data, start, nxt.end_byte, [*kids, nxt])
    ):
        return [
            (
                start,
                b'"',
                "arithmetic operands written side by side: read as the one word bash makes of them",
            ),
            (nxt.end_byte, b'"', ""),
        ]
    return []


def _quoting_outside(data: bytes, start: int, end: int, parts: list[Any]) -> bool:
    """Whether ``data[start:end]`` has a quote, backslash or backquote outside the
    substitutions among ``parts`` (inside ``$( )`` quoting starts afresh and stays as it is)."""
    pos = start
    for p in parts:
        if p.type in ("command_substitution", "arithmetic_expansion"):
            if any(q in data[pos : p.start_byte] for q in (b'"', b"'", b"\\", b"`")):
                return True
            pos = p.end_byte
    return any(q in data[pos:end] for q in (b'"', b"'", b"\\", b"`"))


_EXPAND_NEXT: Final = frozenset(bytes([c]) for c in _EXPANDS)
_LONE_DOLLAR: Final = "a '$' that starts no expansion: read as the literal bash keeps"


def _dparen_is_subshells(data: bytes, pos: int) -> bool:
    """Whether bash reads the ``((`` ending at ``pos`` as two subshells: the ``)`` that closes
    the second ``(`` (quotes, substitutions and nested parentheses skipped) is not followed by
    another ``)``. False when the text ends there or first (then nothing is repaired).
    """
    end = _skip_comsub(data, pos)
    return end < len(data) and data[end : end + 1] != b")"


def _open_heredocs(data: bytes, root: Any) -> list[tuple[int, bytes, str]]:
    """Delimiter lines for here-documents bash ends at the end of the text, in order."""
    starts: list[tuple[Any, bool]] = []
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "heredoc_start":
            parent = n.parent
            ended = (
                parent is not None
                and parent.type == "heredoc_redirect"
                and any(c.type == "heredoc_end" and not c.is_missing for c in parent.children)
            )
            if not ended:
                prev = n.prev_sibling
                starts.append((n, prev is not None and prev.type == "<<-"))
        elif n.has_error or n.type == "heredoc_redirect":
            stack.extend(reversed(n.children))
    if not starts or len(starts) > _MAX_HEREDOCS:
        return []
    add = bytearray()
    names: list[str] = []
    for node, strip_tabs in sorted(starts, key=lambda s: s[0].start_byte):
        delim = _delimiter(data[node.start_byte : node.end_byte])
        if delim is None:
            return []
        nl = data.find(b"\n", node.end_byte)
        after = data[nl + 1 :].split(b"\n") if nl >= 0 else []
        if any((line.lstrip(b"\t") if strip_tabs else line) == delim for line in after):
            return []  # bash ends it earlier: something else is wrong, nothing is repaired
        if not add and not data.endswith(b"\n"):
            add += b"\n"
        add += delim + b"\n"
        names.append(delim.decode("utf-8", "replace"))
    note = (
        f"here-document ended by the end of the command (wanted {', '.join(names)}): "
        f"read with its body ending there, as bash does"
    )
    return [(len(data), bytes(add), note)]


def _delimiter(word: bytes) -> bytes | None:
    """A heredoc delimiter word with its quoting removed (bash's rule); None when unsure."""
    out = bytearray()
    i, n = 0, len(word)
    quote = 0
    while i < n:
        c = word[i]
        if quote == 0x27:
            if c == 0x27:
                quote = 0
            else:
                out.append(c)
        elif quote == 0x22:
            if c == 0x22:
                quote = 0
            elif c == 0x5C and i + 1 < n and word[i + 1] in b'$`"\\':
                out.append(word[i + 1])
                i += 1
            else:
                out.append(c)
        elif c in (0x27, 0x22):
            quote = c
        elif c == 0x5C and i + 1 < n:
            out.append(word[i + 1])
            i += 1
        elif c == 0x24 and i + 1 < n and word[i + 1] in (0x27, 0x22):
            return None  # $'…' / $"…" delimiters: not worth guessing
        else:
            out.append(c)
        i += 1
    if quote or not out or b"\n" in out:
        return None
    return bytes(out)

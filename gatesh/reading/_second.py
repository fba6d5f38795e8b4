"""The second reader: bashlex, independent of tree-sitter (S2 "stricter union").

bashlex is imported once, lazily, on first use (~100 ms). It fails on many constructs
(``case``, ``[[ ]]``, ``$(( ))``, arrays…): that is a note, never an error.
"""

from __future__ import annotations

import functools
from typing import Any

from gatesh._types import Word

from ._braces import expand
from ._walk import RawCommand

_bashlex: Any = None

_DYNAMIC_PARTS = frozenset({"parameter", "commandsubstitution", "processsubstitution"})


def _lib() -> Any:
    global _bashlex
    if _bashlex is None:
        import bashlex

        _guard_unclosed_braces(bashlex)
        _bashlex = bashlex
    return _bashlex


def _guard_unclosed_braces(bashlex: Any) -> None:
    """Make bashlex fail, not loop, on ``${`` with no ``}`` after it in a word.

    bashlex 0.18's ``subst._paramexpand`` looks for the ``}`` with ``str.find`` and, finding
    none, hands back index 0, so its caller scans the word from the start again, forever: a
    56-character line with an unclosed ``${`` inside quotes held the daemon for minutes. Such a
    word is a syntax error to bash too ("bad substitution"), so a parse error is what bashlex
    should report; tree-sitter still reads the line.
    """
    subst = bashlex.subst
    if getattr(subst._paramexpand, "gatesh_guarded", False):
        return
    original = subst._paramexpand

    def paramexpand(parserobj: Any, string: str, sindex: int) -> Any:
        if string.startswith("${", sindex) and string.find("}", sindex + 2) < 0:
            raise bashlex.errors.ParsingError("bad substitution: no closing '}'", string, sindex)
        return original(parserobj, string, sindex)

    paramexpand.gatesh_guarded = True  # type: ignore[attr-defined]
    subst._paramexpand = paramexpand


def preload() -> None:
    """Import bashlex now (the daemon calls this at start so no decision pays for it)."""
    _lib()


@functools.lru_cache(maxsize=512)
def read_second(text: str) -> tuple[tuple[RawCommand, ...] | None, str]:
    """(commands bashlex sees executing, "") or (None, why bashlex could not read ``text``).

    Never raises. Cached: a negotiation repeats the same command.
    """
    try:
        trees = _lib().parse(text)
    except RecursionError:
        return None, "too deep for bashlex"
    except Exception as exc:  # bashlex raises many types; any of them means "could not read"
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return None, msg[:120]
    out: list[RawCommand] = []
    try:
        for t in trees:
            _visit(t, text, "top", out, 0)
    except RecursionError:
        return None, "too deep for bashlex"
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"[:120]
    return tuple(out), ""


def _word(node: Any, text: str) -> Word:
    parts = getattr(node, "parts", None) or ()
    if any(p.kind in _DYNAMIC_PARTS for p in parts):
        return Word(text[node.pos[0]:node.pos[1]], False)
    return Word(node.word)


def _visit(node: Any, text: str, ctx: str, out: list[RawCommand], d: int) -> None:
    if d > 400:
        raise RecursionError
    kind = node.kind
    if kind == "command":
        cmd = RawCommand([], ctx, 0, node.pos[0], text[node.pos[0]:node.pos[1]])
        out.append(cmd)
        for part in node.parts:
            if part.kind == "word":
                src = text[part.pos[0]:part.pos[1]]
                braced = expand(src) if "{" in src else None
                cmd.words.extend(braced if braced is not None else [_word(part, text)])
            elif part.kind == "assignment":
                cmd.assignments.append(part.word)
            elif part.kind == "redirect":
                hd = getattr(part, "heredoc", None)
                if hd is not None:
                    cmd.heredoc = (hd.value, False)
        for part in node.parts:
            _visit_children(part, text, ctx, out, d + 1)
        return
    if kind == "commandsubstitution":
        _visit_children(node, text, "substitution", out, d + 1)
        return
    if kind == "processsubstitution":
        _visit_children(node, text, "process-substitution", out, d + 1)
        return
    if kind == "function":
        _visit_children(node, text, "function", out, d + 1)
        return
    _visit_children(node, text, ctx, out, d + 1)


def _visit_children(node: Any, text: str, ctx: str, out: list[RawCommand], d: int) -> None:
    for attr in ("parts", "list", "command", "body", "output"):
        val = getattr(node, attr, None)
        if val is None or isinstance(val, (str, int)):
            continue
        if isinstance(val, list):
            for v in val:
                if hasattr(v, "kind"):
                    _visit(v, text, ctx, out, d)
        elif hasattr(val, "kind"):
            _visit(val, text, ctx, out, d)

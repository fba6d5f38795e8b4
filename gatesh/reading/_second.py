"""The second reader: bashlex, independent of tree-sitter (S2 "stricter union").

bashlex is imported once, lazily, on first use (~100 ms). It fails on many constructs
(``case``, ``[[ ]]``, ``$(( ))``, arrays…): that is a note, never an error.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final

from gatesh._types import Context, Word

from ._braces import expand
from ._walk import RawCommand, Walk

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
            _visit(t, text, Context.TOP, out, 0)
    except RecursionError:
        return None, "too deep for bashlex"
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"[:120]
    return tuple(out), ""


def _word(node: Any, text: str) -> Word:
    parts = getattr(node, "parts", None) or ()
    if any(p.kind in _DYNAMIC_PARTS for p in parts):
        return Word(text[node.pos[0] : node.pos[1]], False)
    return Word(node.word)


def _visit(node: Any, text: str, ctx: Context, out: list[RawCommand], d: int) -> None:
    if d > 400:
        raise RecursionError
    kind = node.kind
    if kind == "command":
        cmd = RawCommand([], ctx, 0, node.pos[0], text[node.pos[0] : node.pos[1]])
        out.append(cmd)
        for part in node.parts:
            if part.kind == "word":
                src = text[part.pos[0] : part.pos[1]]
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
        _visit_children(node, text, Context.SUBSTITUTION, out, d + 1)
        return
    if kind == "processsubstitution":
        _visit_children(node, text, Context.PROCESS_SUBSTITUTION, out, d + 1)
        return
    if kind == "function":
        _visit_children(node, text, Context.FUNCTION, out, d + 1)
        return
    _visit_children(node, text, ctx, out, d + 1)


def _visit_children(node: Any, text: str, ctx: Context, out: list[RawCommand], d: int) -> None:
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


# --- lines whose reading needs no second reader ------------------------------------------------
#
# A simple line: simple commands joined by `|`, `&&`, `||`, `;` or `&`, each made of words with
# optional NAME=VALUE assignments before them and `[N]>`, `>>`, `<`, `>&`, `<&`, `&>` redirections
# after the first word. A word is built of characters that are never special to bash (no blanks,
# quotes, backslashes, expansions, operators, brackets or `#`), single-quoted runs and
# double-quoted runs holding no `$`, backquote or backslash (a quoted run may span lines: inside
# quotes a newline is a character of the word, as in `python3 -c "…"`): nothing in it expands,
# substitutes or nests, and no line continues another outside quotes, so bash splits the line exactly
# at these tokens, and removing the quotes gives each word's value. For such a line the commands
# are read here with an exact tokenizer; where tree-sitter's commands are the very same (same
# number, same static words, same assignments), no reader can see another command in it, and
# bashlex (~80 % of a reading's time when it runs) is not asked. Anything else, or any
# difference, leaves the line to both readers.
_TOKEN: Final = re.compile(
    r"""(?P<ws>[ \t]+)|(?P<redir>[0-9]*(?:>>|>&|<&|>|<)|&>>?)|(?P<op>&&|\|\||[|;&])"""
    r"""|(?P<word>(?:[^\s'"\\$`|&;<>()\[\]{}#]|'(?:[^'$`]|\$(?!\())*'|"[^"$`\\]*")+)"""
)
_QUOTED: Final = re.compile(r"'([^']*)'|\"([^\"]*)\"")
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
# Words bash gives a meaning of their own as a command's first word (reserved words and the
# declaration builtins tree-sitter reads as declarations): such a line is left to both readers.
_FIRST_WORDS: Final = frozenset(
    {
        "!",
        "{",
        "}",
        "[[",
        "]]",
        "case",
        "coproc",
        "do",
        "done",
        "elif",
        "else",
        "esac",
        "fi",
        "for",
        "function",
        "if",
        "in",
        "select",
        "then",
        "time",
        "until",
        "while",
        "declare",
        "export",
        "local",
        "readonly",
        "typeset",
        "unset",
    }
)


def _unquote(token: str) -> str:
    return (
        _QUOTED.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), token)
        if "'" in token or '"' in token
        else token
    )


def simple_line(text: str) -> list[tuple[list[str], list[str]]] | None:
    """(words, assignments) of each command of a simple line (see above), None when ``text``
    is not one."""
    out: list[tuple[list[str], list[str]]] = []
    words: list[str] = []
    assigns: list[str] = []
    target = False  # a redirection waits for its target word
    pending = False  # an operator waits for the command after it
    pos, n = 0, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            return None
        pos = m.end()
        kind = m.lastgroup
        if kind == "ws":
            continue
        token = m.group()
        if target:
            if kind != "word":
                return None
            target = False
        elif kind == "word":
            if not words and _ASSIGNMENT.match(token):
                assigns.append(token)
            elif not words and token in _FIRST_WORDS:
                return None
            else:
                words.append(_unquote(token))
                pending = False
        elif kind == "redir":
            if not words:
                return None
            target = True
        else:
            if not words:
                return None
            out.append((words, assigns))
            words, assigns = [], []
            pending = token not in (";", "&")
    if target or pending or (assigns and not words):
        return None
    if words:
        out.append((words, assigns))
    return out


def tree_sitter_confirmed(text: str, walk: Walk) -> bool:
    """Whether ``text`` is a simple line tree-sitter read exactly as bash splits it: then the
    second reader could add no command (S2's stricter union is already complete)."""
    if walk.has_error or walk.embedded or walk.loops or walk.blind or walk.function_bodies:
        return False
    line = simple_line(text)
    if line is None or len(line) != len(walk.commands):
        return False
    for raw, (words, assigns) in zip(walk.commands, line, strict=True):
        if raw.assignments != assigns or len(raw.words) != len(words) or raw.declaration:
            return False
        for w, text_of in zip(raw.words, words, strict=True):
            if not w.static or w.text != text_of:
                return False
    return True

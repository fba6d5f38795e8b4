"""What a gated shell announces before each command, and whether a decision covers it (S10).

Before each command runs, bash hands its DEBUG trap the command as bash prints it
(``$BASH_COMMAND``: one simple command, a loop header, ``[[ … ]]``, ``(( … ))``), and zsh hands
it the whole pipeline or list about to run (``$ZSH_DEBUG_CMD``). The gate decided a *line*; a
command the shell announces is **covered** by that decision when the line holds that very
command. This module answers that question with text alone, so the answer is the same in the
relay, in a test and in a benchmark:

- :func:`units` lists every command a text holds (at any depth: substitutions, loop bodies,
  function bodies), each rendered as bash prints it: words as written, one space between them,
  redirections in bash's form (``>f`` → ``> f``, ``1>f`` → ``> f``, ``>&2`` → ``1>&2``, ``|&``
  → ``2>&1``), ``$'…'`` as the single-quoted text it means, command substitutions rendered
  again inside their words.
- :func:`covers` renders what the shell announced the same way and says whether every command
  in it is among a decision's units. A command that no decided line holds — an alias expansion,
  a history re-run, a prompt string's substitution — is never covered: it is decided on its own.

Guarantees: rendering never raises (an unreadable text has no units, so nothing it announces is
covered); a rendering mismatch can only make a covered command look uncovered (it is then decided
on its own), never the reverse, because an announced command is covered only by an identical
rendering of a command the decided text holds as a command.
"""

from __future__ import annotations

import codecs
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from gatesh._ts_hazard import overread_at

__all__ = ["announced_units", "covers", "printed", "units"]

# Largest text rendered: past it a text has no units (what it announces is decided on its own).
MAX_TEXT: Final = 256 * 1024
# Deepest nesting followed (substitutions in substitutions …); deeper commands are not units.
MAX_DEPTH: Final = 64

# Nodes whose text is one shell word (rendered as written, substitutions inside re-rendered).
_WORDS: Final = frozenset(
    {
        "word",
        "string",
        "raw_string",
        "ansi_c_string",
        "translated_string",
        "concatenation",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "number",
        "array",
        "brace_expression",
        "extglob_pattern",
        "regex",
        "variable_name",
        "special_variable_name",
        "test_operator",
    }
)
_STATEMENT_SEPARATORS: Final = {";": "; ", "&": " & ", "\n": "; ", "&&": " && ", "||": " || "}
# Redirection operators bash prints with a space before the target, and the fd it leaves out.
_FILE_OPS: Final = {">": 1, ">>": 1, ">|": 1, "<": 0, "&>": None, "&>>": None, "<>": -1}
_DUP_OPS: Final = {">&": 1, "<&": 0, ">&-": 1, "<&-": 0}
_KEYWORDS: Final = frozenset({"time", "coproc"})
_FD: Final = re.compile(r"[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\}")


_LOCAL = threading.local()


def _parse() -> Callable[[bytes], Any]:
    """This thread's tree-sitter-bash parser (a parser is not thread-safe; building one costs
    more than a parse). Only tree-sitter is loaded, not the whole reader: the session's first
    prompt waits for the first parse."""
    parser = getattr(_LOCAL, "parser", None)
    if parser is None:
        import tree_sitter_bash
        from tree_sitter import Language, Parser

        parser = _LOCAL.parser = Parser(Language(tree_sitter_bash.language()))
    parse = parser.parse

    def guarded(src: bytes) -> Any:
        if overread_at(src) is not None:
            raise ValueError("a text tree-sitter-bash reads out of bounds on")  # callers: unread
        return parse(src)

    return guarded


def _text(node: Any, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")


# --- words -------------------------------------------------------------------------------------


def _ansi_c(raw: str) -> str:
    """``$'…'`` as bash prints it: the single-quoted text it means (when that needs no quote)."""
    body = raw[2:-1] if raw.startswith("$'") and raw.endswith("'") else ""
    try:
        value = codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return raw
    if "'" in value or "\\" in body.replace("\\\\", "").replace("\\n", "").replace("\\t", ""):
        # Escapes bash and Python read differently (\e, \cX, octal widths): keep it as written.
        return raw
    return "'" + value + "'"


def _word(node: Any, src: bytes, depth: int) -> str:
    """One word as bash prints it."""
    kind = node.type
    if kind == "ansi_c_string":
        return _ansi_c(_text(node, src))
    if kind in ("command_substitution", "process_substitution"):
        return _substitution(node, src, depth)
    if not node.child_count:
        return _text(node, src)
    # As written, with every substitution inside rendered again (bash re-prints them).
    out: list[str] = []
    pos = node.start_byte
    for sub in _substitutions(node):
        out.append(src[pos : sub.start_byte].decode("utf-8", "surrogateescape"))
        out.append(_word(sub, src, depth + 1))
        pos = sub.end_byte
    out.append(src[pos : node.end_byte].decode("utf-8", "surrogateescape"))
    return "".join(out)


def _substitutions(node: Any) -> Iterator[Any]:
    """The outermost substitutions and ``$'…'`` strings inside a word, left to right."""
    for child in node.children:
        if child.type in ("command_substitution", "process_substitution", "ansi_c_string"):
            yield child
        elif child.child_count:
            yield from _substitutions(child)


def _substitution(node: Any, src: bytes, depth: int) -> str:
    raw = _text(node, src)
    if raw.startswith("`") or depth > MAX_DEPTH:
        return raw
    opener = raw[:2]  # "$(", "<(", ">("
    inner = [c for c in node.children if c.type not in ("$(", "<(", ">(", ")")]
    return opener + _list(inner, src, depth + 1) + ")"


def _list(nodes: Iterable[Any], src: bytes, depth: int) -> str:
    out: list[str] = []
    for node in nodes:
        if node.type in _STATEMENT_SEPARATORS:
            if out and not out[-1].endswith(" "):
                out.append(_STATEMENT_SEPARATORS[node.type])
            continue
        if node.type == "comment":
            continue
        if out and not out[-1].endswith(" "):
            out.append("; ")
        out.append(_statement(node, src, depth))
    return "".join(out).rstrip("; ").rstrip()


def _statement(node: Any, src: bytes, depth: int) -> str:
    """A statement as bash prints it inside a substitution (best effort: used only to render)."""
    kind = node.type
    if kind in ("command", "declaration_command", "unset_command"):
        return _command(node, (), src, depth, False)
    if kind == "redirected_statement":
        body, redirects = _split_redirected(node)
        if body is not None and body.type in ("command", "declaration_command", "unset_command"):
            return _command(body, redirects, src, depth, False)
    if kind == "pipeline":
        return _pipeline(node, src, depth)
    if kind == "list":
        return _list(node.children, src, depth)
    if kind in ("variable_assignment", "variable_assignments"):
        return _assignments(node, src, depth)
    return " ".join(_text(node, src).split())


def _pipeline(node: Any, src: bytes, depth: int) -> str:
    parts: list[str] = []
    children = list(node.children)
    for i, child in enumerate(children):
        if child.type in ("|", "|&"):
            continue
        text = _statement(child, src, depth)
        if i + 1 < len(children) and children[i + 1].type == "|&":
            text += " 2>&1"
        parts.append(text)
    return " | ".join(parts)


def _assignments(node: Any, src: bytes, depth: int) -> str:
    if node.type == "variable_assignment":
        return _word(node, src, depth)
    return " ".join(_word(c, src, depth) for c in node.children if c.type == "variable_assignment")


# --- commands ----------------------------------------------------------------------------------


def _split_redirected(node: Any) -> tuple[Any | None, tuple[Any, ...]]:
    body = None
    redirects = []
    for child in node.children:
        if child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            redirects.append(child)
        elif child.is_named and body is None:
            body = child
    return body, tuple(redirects)


def _redirect(node: Any, src: bytes, depth: int, fd: str = "") -> str:
    """One redirection as bash prints it (``fd``: its file descriptor when written before it)."""
    kind = node.type
    op = ""
    target: list[str] = []
    for child in node.children:
        ck = child.type
        if ck == "file_descriptor":
            fd = _text(child, src)
        elif not child.is_named and not op:
            op = ck
        elif ck in ("heredoc_start", "heredoc_body", "heredoc_end", "heredoc_content"):
            continue
        elif child.is_named:
            target.append(_word(child, src, depth))
    if kind == "heredoc_redirect":
        return _heredoc(node, src, fd, op)
    if kind == "herestring_redirect":
        return f"{fd}<<< {' '.join(target)}"
    value = " ".join(target)
    if op in (">&", "<&") and (value.isdigit() or value == "-" or value.startswith("$")):
        return f"{fd or _DUP_OPS[op]}{op}{value}"
    if op in _FILE_OPS:
        default = _FILE_OPS[op]
        if op == "<>" and not fd:
            fd = "0"
        elif default is not None and fd == str(default):
            fd = ""
        return f"{fd}{op} {value}"
    return f"{fd}{op}{value}"


def _heredoc(node: Any, src: bytes, fd: str, op: str) -> str:
    start = end = None
    for child in node.children:
        if child.type == "heredoc_start":
            start = child
        elif child.type == "heredoc_end":
            end = child
    if start is None or end is None:
        return _text(node, src)
    delimiter = _text(start, src)
    line_end = src.find(b"\n", start.end_byte)
    body_start = line_end + 1 if line_end >= 0 else start.end_byte
    line_start = src.rfind(b"\n", 0, end.start_byte) + 1
    body = src[body_start:line_start].decode("utf-8", "surrogateescape")
    if op == "<<-":
        body = "".join(line.lstrip("\t") for line in body.splitlines(keepends=True))
    closing = delimiter.strip("'\"")
    return f"{fd}{op}{delimiter}\n{body}{closing}\n"


def _command(node: Any, redirects: tuple[Any, ...], src: bytes, depth: int, _top: bool) -> str:
    words: list[tuple[Any, str]] = []
    inner_redirects: list[Any] = []
    for child in node.children:
        kind = child.type
        if kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            inner_redirects.append(child)
        elif kind == "command_name":
            words.extend((c, _word(c, src, depth)) for c in child.children)
        elif kind in ("variable_assignment", "variable_assignments"):
            words.append((child, _assignments(child, src, depth)))
        elif not child.is_named:
            words.append((child, kind))  # declare/export/local/…, unset
        elif kind != "comment":
            words.append((child, _word(child, src, depth)))
    # `time [-p]` and `coproc` are keywords: bash announces the command after them.
    while words and words[0][1] in _KEYWORDS:
        words.pop(0)
        if words and words[0][1] == "-p":
            words.pop(0)
    rendered: list[str] = []
    for r in (*inner_redirects, *redirects):
        fd = ""
        # tree-sitter reads the fd of `0<f` or `{h}>f` as the command's last word.
        if words and words[-1][0].end_byte == r.start_byte and _FD.fullmatch(words[-1][1]):
            fd = words.pop()[1]
        rendered.append(_redirect(r, src, depth, fd))
    text = " ".join(w for _, w in words if w)
    for one in rendered:
        text += ("" if one.startswith("\n") else " ") + one
    return text


def _arith(expr: str, *, header: bool) -> tuple[str, str]:
    """An arithmetic command: (as bash prints it, its key). bash prints ``((i=0))`` in a
    ``for (( … ))`` header and ``(( x = 1 ))`` alone; keys compare the expression without blanks,
    so the same expression covers either."""
    key = "((" + "".join(expr.split()) + "))"
    return ("((" + expr.strip() + "))" if header else "(( " + expr.strip() + " ))"), key


def _test(node: Any, src: bytes, depth: int) -> str:
    if node.type in _WORDS or not node.child_count:
        return _word(node, src, depth)
    return " ".join(_test(c, src, depth) for c in node.children)


def _header(node: Any, src: bytes, depth: int) -> str:
    """``for NAME in WORDS`` / ``select …`` / ``case WORD in `` as bash prints a loop's header."""
    parts: list[str] = []
    for child in node.children:
        kind = child.type
        if kind in ("do_group", "compound_statement", "case_item", "esac", ";", "\n", ";;"):
            break
        parts.append(_word(child, src, depth) if child.is_named else kind)
    text = " ".join(parts)
    return text + " " if node.type == "case_statement" else text


Unit = tuple[str, str]  # (as the shell prints it, the key it is compared by)
_STATEMENT_PARENTS: Final = frozenset(
    {
        "program",
        "list",
        "do_group",
        "compound_statement",
        "subshell",
        "command_substitution",
        "process_substitution",
        "if_statement",
        "elif_clause",
        "else_clause",
        "case_item",
        "pipeline",
        "redirected_statement",
        "while_statement",
        "negated_command",
    }
)
_SIMPLE: Final = frozenset({"command", "declaration_command", "unset_command"})


def _same(text: str) -> Unit:
    return text, text


def _units(node: Any, src: bytes, depth: int, out: list[Unit], suffix: str = "") -> None:
    """Append the units of ``node`` to ``out``; ``suffix`` is added to its own command (the
    ``2>&1`` bash adds to the command before ``|&``)."""
    if depth > MAX_DEPTH:
        return
    kind = node.type
    if kind == "redirected_statement":
        body, redirects = _split_redirected(node)
        if body is not None and body.type in _SIMPLE:
            out.append(_same(_command(body, redirects, src, depth, True) + suffix))
            for child in node.children:
                _children_units(child, src, depth, out)
            return
    if kind in _SIMPLE:
        out.append(_same(_command(node, (), src, depth, True) + suffix))
        _children_units(node, src, depth, out)
        return
    if kind == "pipeline":
        children = list(node.children)
        for i, child in enumerate(children):
            piped = i + 1 < len(children) and children[i + 1].type == "|&"
            _units(child, src, depth + 1, out, " 2>&1" if piped else "")
        return
    if kind in ("variable_assignment", "variable_assignments"):
        if node.parent is not None and node.parent.type in _STATEMENT_PARENTS:
            out.append(_same(_assignments(node, src, depth)))
    elif kind == "test_command":
        out.append(_same(_test(node, src, depth)))
    elif kind == "compound_statement" and node.child_count and node.children[0].type == "((":
        out.append(_arith(_text(node, src)[2:-2], header=False))
    elif kind in ("for_statement", "select_statement", "case_statement"):
        out.append(_same(_header(node, src, depth)))
    elif kind == "c_style_for_statement":
        current: list[Any] = []
        for child in node.children:
            if child.type in (";", "))"):
                expr = " ".join(_text(c, src) for c in current)
                if expr.strip():
                    out.append(_arith(expr, header=True))
                current = []
                if child.type == "))":
                    break
            elif child.type not in ("for", "(("):
                current.append(child)
    for child in node.children:
        _units(child, src, depth + 1, out)


def _children_units(node: Any, src: bytes, depth: int, out: list[Unit]) -> None:
    """Commands inside a command's words (substitutions) and redirections."""
    for child in node.children:
        _units(child, src, depth + 1, out)


def _all_units(text: str) -> tuple[Unit, ...]:
    if len(text) > MAX_TEXT:
        return ()
    src = text.encode("utf-8", "surrogateescape")
    try:
        tree = _parse()(src)
        out: list[Unit] = []
        _units(tree.root_node, src, 0, out)
    except Exception:
        return ()
    return tuple(dict.fromkeys(u for u in out if u[0].strip()))


def printed(text: str) -> tuple[str, ...]:
    """Every command ``text`` holds, exactly as bash would announce it to its DEBUG trap (the
    strings a hook can look up without asking); empty for a text too large to render."""
    return tuple(dict.fromkeys(p for p, _ in _all_units(text)))


def units(text: str) -> frozenset[str]:
    """The keys of every command ``text`` holds (see the module docstring); empty for a text too
    large to render. Never raises."""
    return frozenset(k for _, k in _all_units(text))


# Headers bash announces alone, which do not parse alone; a body is added to read them.
_HEADER_BODIES: Final = (("for ", "; do :; done"), ("select ", "; do :; done"), ("case ", "esac"))


def announced_units(announced: str) -> frozenset[str]:
    """The keys of what a shell announced (a bash DEBUG command or a zsh DEBUG list)."""
    for prefix, body in _HEADER_BODIES:
        if announced.startswith(prefix) and not announced.rstrip().endswith(("done", "esac")):
            found = _all_units(announced + body)
            return frozenset(k for _, k in found[:1])
    return units(announced)


def covers(decided: frozenset[str] | set[str], announced: str) -> bool:
    """Whether every command in ``announced`` is a command of the decided units ``decided``.

    An announcement with no command in it (nothing to run) is covered; one that cannot be read
    is not."""
    found = announced_units(announced)
    if not found:
        return not announced.strip()
    return found <= decided


def incomplete(text: str) -> bool:
    """Whether ``text`` reads as unfinished (bash would prompt for more): an open quote, loop,
    group, here-document or a trailing ``|``/``&&``/``\\``, where tree-sitter's error reaches the
    end of the text. A text with an error in its middle is complete (and decided as it is)."""
    stripped = text.rstrip()
    if not stripped:
        return False
    if stripped.endswith("\\") and not stripped.endswith("\\\\"):
        return True
    src = text.encode("utf-8", "surrogateescape")
    try:
        root = _parse()(src).root_node
    except Exception:
        return False
    if not root.has_error:
        return False
    end = len(stripped.encode("utf-8", "surrogateescape"))
    return _error_at_end(root, end)


def _error_at_end(node: Any, end: int) -> bool:
    if node.is_missing and node.start_byte >= end - 1:
        return True
    if node.type == "ERROR" and node.end_byte >= end:
        return True
    return any(_error_at_end(c, end) for c in node.children if c.has_error or c.is_missing)


def substitute(text: str, values: dict[str, str]) -> str:
    """``text`` with each plain ``$NAME``/``${NAME}`` (and ``$1``…) replaced by its value from
    ``values``, quoted for where it stands, so the reader judges the command the shell is about to
    run. Expansions with operators (``${x:-y}``, ``${#x}``) and names without a value stay as
    they are (dynamic). Never raises; returns ``text`` unchanged when it cannot render."""
    if not values or len(text) > MAX_TEXT:
        return text
    src = text.encode("utf-8", "surrogateescape")
    try:
        root = _parse()(src).root_node
    except Exception:
        return text
    edits: list[tuple[int, int, str]] = []

    def visit(node: Any, quoted: bool) -> None:
        kind = node.type
        if kind in ("simple_expansion", "expansion"):
            names = [c for c in node.children if c.is_named]
            if len(names) == 1 and names[0].type in ("variable_name", "special_variable_name"):
                plain = kind == "simple_expansion" or node.child_count == 3
                name = _text(names[0], src)
                if plain and name in values:
                    value = values[name]
                    edits.append((node.start_byte, node.end_byte, _quoted(value, quoted)))
                    return
        if kind in ("raw_string", "ansi_c_string", "heredoc_body"):
            return
        for child in node.children:
            visit(child, quoted or kind == "string")

    visit(root, False)
    if not edits:
        return text
    out = bytearray()
    pos = 0
    for start, end, value in sorted(edits):
        out += src[pos:start] + value.encode("utf-8", "surrogateescape")
        pos = end
    out += src[pos:]
    return out.decode("utf-8", "surrogateescape")


def _quoted(value: str, in_double_quotes: bool) -> str:
    if in_double_quotes:
        return "".join("\\" + c if c in '"\\$`' else c for c in value)
    import shlex

    return shlex.quote(value)

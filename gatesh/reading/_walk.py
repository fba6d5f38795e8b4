"""The reader of record: a walk over tree-sitter-bash's syntax tree that lists what would execute.

The walk yields :class:`RawCommand` values (argv before wrapper peeling); ``_read`` peels them.
"""

from __future__ import annotations

import bisect
import itertools
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Final

from tree_sitter import Parser

from gatesh._errors import ReadError
from gatesh._ts_hazard import overread_at
from gatesh._types import Redirect, Word

from ._braces import expand
from ._limits import MAX_COMMANDS, MAX_WALK_DEPTH
from ._nodes import LANGUAGE, kind, named
from ._subst import substitutions
from ._values import Binding
from ._words import node_bytes, node_text, unquoted_word, word_of, word_of_run

# One parser per thread: building a parser costs more than parsing a line, and a tree-sitter
# parser is not thread-safe (two threads parsing with one parser crashed the process). The daemon
# decides on its event loop and in worker threads, so each thread gets its own.
_LOCAL = threading.local()


def _parser() -> Parser:
    parser = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = Parser(LANGUAGE)
    return parser


# Operators that write the target file (``>&`` / ``&>`` only when the target is not an fd).
WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
# Leaf argument types that cannot contain a command substitution.
_LEAF_ARGS = frozenset({"word", "raw_string", "number", "ansi_c_string"})
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_DECLARATIONS = frozenset({"declaration_command", "unset_command"})
# Constructs bashlex cannot read or misreads (S2's measurements): its commands there are not added.
_BASHLEX_BLIND = frozenset(
    {"arithmetic_expansion", "test_command", "c_style_for_statement", "case_statement", "array"}
)


def _is_leaf(node: Any) -> bool:
    """A leaf argument: nothing in it runs (``number`` may hold one: ``$((10#$(cmd)))``)."""
    return kind(node) in _LEAF_ARGS and not node.named_child_count


# Leaves whose text bash expands but tree-sitter-bash does not parse (``${x#PAT}``, ``=~ RE``).
_UNPARSED = frozenset({"regex", "extglob_pattern"})


# Statements whose parts all run, in order, whenever they run (S2.1 static values).
_SEQUENTIAL: Final = frozenset(
    {
        "program",
        "variable_assignments",
        "redirected_statement",
        "declaration_command",
        "compound_statement",
    }
)


def _unconditional(node: Any) -> bool:
    """Whether ``node`` runs whenever its text runs, before what follows it: not in a branch,
    loop, pipeline, subshell, function, substitution, the right side of ``&&``/``||``, or ``&``."""
    return _runs_in(node) == _TOP


_TOP: Final = (-1, -1)


def _runs_in(node: Any) -> tuple[int, int] | None:
    """Where ``node`` runs whenever it is reached, before what follows it: :data:`_TOP` for the
    text itself (see :func:`_unconditional`), the byte span of a function's ``{ … }`` body for a
    node that runs whenever that function runs (in none of the places above within the body),
    None otherwise."""
    child, parent = node, node.parent
    while parent is not None:
        t = kind(parent)
        if t == "list":
            first = parent.named_children[0] if parent.named_children else None
            if (
                first is None
                or first.start_byte != child.start_byte
                or first.end_byte != child.end_byte
            ):
                return None
        elif t == "compound_statement":
            if parent.parent is not None and kind(parent.parent) == "function_definition":
                return (parent.start_byte, parent.end_byte)
        elif t not in _SEQUENTIAL:
            return None
        nxt = child.next_sibling
        if nxt is not None and kind(nxt) == "&":
            return None
        child, parent = parent, parent.parent
    return _TOP


class WalkLimit(ReadError):
    """The tree is deeper or larger than the reader's limits (the reading is unreadable)."""


@dataclass(slots=True)
class RawCommand:
    """A simple command as written, before wrappers are peeled."""

    words: list[Word]
    context: str
    frame: int  # substitution frame: redirects and pipes of a statement bind within one frame
    start: int = 0
    raw: str = ""
    assignments: list[str] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    heredoc: tuple[str, bool] | None = None  # (body, delimiter quoted)
    herestring: Word | None = None
    stdin_word: Word | None = None  # the word of a `< WORD` redirection of standard input
    fed_by: list[RawCommand] | None = None  # the pipeline stage before this one (set by the reader)
    target_words: dict[int, Word] = field(
        default_factory=dict
    )  # dynamic redirect targets, by index
    variant: bool = False  # a reading with possible values put in (not read for variants again)
    expanded_head: str = ""  # the first word as written, when static values were put in
    declaration: bool = False  # export/declare/local/readonly/unset: runs no program


@dataclass
class Walk:
    """What one tree-sitter walk found in one text."""

    commands: list[RawCommand] = field(default_factory=list)
    pipelines: list[list[list[int]]] = field(default_factory=list)  # stages of raw indexes
    functions: list[str] = field(default_factory=list)
    assignments: list[str] = field(default_factory=list)  # bare NAME=value statements
    has_error: bool = False
    error_at: str = ""
    embedded: list[str] = field(default_factory=list)  # `…` tree-sitter left inside a word
    blind: list[tuple[int, int]] = field(default_factory=list)  # byte spans bashlex misreads
    joined: list[int] = field(
        default_factory=list
    )  # bytes where a word tree-sitter split was rejoined
    bindings: list[Binding] = field(default_factory=list)  # plain NAME=VALUE assignments (S2.1)
    function_bodies: dict[str, str] = field(default_factory=dict)  # name -> body text
    function_spans: list[tuple[int, int]] = field(default_factory=list)  # bodies' byte spans
    loops: list[Loop] = field(default_factory=list)  # `for NAME in WORDS` with their bodies


@dataclass(frozen=True)
class Loop:
    """``for NAME in WORDS; do BODY; done``: read once per word when the words are static."""

    name: str
    words: tuple[Word, ...]
    body: str
    start: int


class ParserHazard(WalkLimit):
    """The text would make tree-sitter-bash read outside its memory (the reading is unreadable)."""


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


def walk_text(data: bytes, context: str, deadline: float = float("inf")) -> Walk:
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


def _plain_walk(tree: Any, data: bytes, context: str) -> Walk | None:
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


def _walk_tree(tree: Any, src: bytes, context: str, deadline: float) -> _Walker:
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


# The reserved words bash lets a `( … )` follow (tree-sitter reads them as command names).
_BEFORE_PAREN: Final = frozenset({"time", "coproc"})


def _crosses_line(node: Any, dest: list[Any], text: bytes) -> bool:
    """Whether a newline (not a line continuation) separates the redirection ``node``'s operator
    from its first target node, or one target node from the next (``text``: the tree's text)."""
    base = node.start_byte
    src = text[base : node.end_byte]
    pos = dest[0].start_byte - base
    gaps = [src[:pos]]
    for a, b in itertools.pairwise(dest):
        gaps.append(src[a.end_byte - base : b.start_byte - base])
    return any(b"\n" in g.replace(b"\\\n", b"") for g in gaps)


def _ends_inside(body: str, delim: str, strip_tabs: bool) -> bool:
    """Whether bash ends a heredoc with unquoted delimiter ``delim`` inside ``body``.

    For such a heredoc bash joins a line ending in an odd run of backslashes to the next one
    before comparing it with the delimiter (``EO\\<nl>F`` ends ``<<EOF``); ``<<-`` strips the
    joined line's leading tabs. tree-sitter compares physical lines only.
    """
    logical = ""
    for line in body.split("\n")[:-1] if body.endswith("\n") else body.split("\n"):
        run = len(line) - len(line.rstrip("\\"))
        if run % 2:
            logical += line[:-1]
            continue
        logical += line
        if (logical.lstrip("\t") if strip_tabs else logical) == delim:
            return True
        logical = ""
    return False


class _Walker:
    def __init__(self, src: bytes, context: str, deadline: float) -> None:
        self.src = src  # the text the tree was parsed from: node bytes are sliced from it
        self.result = Walk()
        self.frames = 0
        self.deadline = deadline
        self.seen: set[tuple[int, int]] = set()  # spans of substitutions already read
        self.glued: list[
            int
        ] = []  # where bash ends a command that tree-sitter continued (see _glue)

    def _embedded(self, node: Any) -> None:
        """tree-sitter leaves `…` inside ``${x:=`cmd`}`` as a plain word, and ``$(…)`` in the
        pattern of ``${x#PAT}`` or after ``=~`` as a leaf: bash runs them, so they are read."""
        data = node_bytes(node, self.src)
        if b"`" in data or b"$(" in data:
            self._scan(data, node.start_byte)

    def _scan(self, data: bytes, base: int) -> None:
        """Read each substitution ``_subst`` finds in ``data`` (at byte ``base``) that the
        walk has not read already."""
        for start, end, inner in substitutions(data):
            span = (base + start, base + end)
            if span not in self.seen:
                self.seen.add(span)
                self.result.embedded.append(inner)

    def _heredoc_body(self, node: Any, ctx: str, frame: int, d: int) -> None:
        """An unquoted here-document's body: tree-sitter-bash parses some of its expansions,
        not backquotes, ``\\\\$(…)`` or ``${x#$(…)}``; bash expands the body like a double-quoted
        word, so every substitution in it is found from the text as well."""
        self._children(node, ctx, frame, d)
        parent = node.parent
        start = (
            None
            if parent is None
            else next((c for c in parent.children if kind(c) == "heredoc_start"), None)
        )
        if start is not None and not any(
            q in node_bytes(start, self.src) for q in (b"'", b'"', b"\\")
        ):
            data = node_bytes(node, self.src)
            if b"`" in data or b"$(" in data:
                self._scan(data, node.start_byte)

    def _binding(self, node: Any, *, declared: bool = False) -> None:
        """Record ``NAME=VALUE`` for the static values of S2.1 (see ``_values``)."""
        name = node.child_by_field_name("name")
        if (
            name is None
            or kind(name) != "variable_name"
            or (node.parent is not None and kind(node.parent) == "c_style_for_statement")
        ):
            return  # an arithmetic loop's counter is no static value
        value = node.child_by_field_name("value")
        text = node_text(node, self.src)
        static: str | None = None
        source = ""
        if "+=" not in text.split("=", 1)[0] + "=" and (value is None or kind(value) != "array"):
            w = word_of(value, self.src) if value is not None else Word("", True)
            static = w.text if w.static else None
            source = "" if w.static else w.text
        runs_in = _runs_in(node)
        self.result.bindings.append(
            Binding(
                node_text(name, self.src),
                static,
                node.start_byte,
                runs_in == _TOP,
                source,
                declared,
                scope=None if runs_in == _TOP else runs_in,
            )
        )

    def _local(self, node: Any, words: list[Word]) -> None:
        """``local NAME`` (``declare``/``typeset`` without options) in a function's body: NAME is
        the function's own from there on, empty until it is assigned (``local t; t=$(mktemp)``).
        Elsewhere a bare name keeps the value it had, and is no binding."""
        runs_in = _runs_in(node)
        if (
            runs_in is None
            or runs_in == _TOP
            or not words
            or words[0].text not in ("local", "declare", "typeset")
            or any(w.text.startswith("-") for w in words[1:])
        ):
            return
        self.result.bindings.append(
            Binding(
                node_text(node, self.src), "", node.start_byte, False, declared=True, scope=runs_in
            )
        )

    def _loop(self, node: Any) -> None:
        name = node.child_by_field_name("variable")
        body = node.child_by_field_name("body")
        values = [c for k, c in enumerate(node.children) if node.field_name_for_child(k) == "value"]
        if name is None or body is None or not values:
            return
        inner = [c for c in body.children if named(c)]
        if not inner:
            return
        src = node_bytes(body, self.src)
        base = body.start_byte
        text = src[inner[0].start_byte - base : inner[-1].end_byte - base].decode(
            "utf-8", "replace"
        )
        self.result.loops.append(
            Loop(node_text(name, self.src), tuple(self._words(values)), text, node.start_byte)
        )

    def _new_frame(self) -> int:
        self.frames += 1
        return self.frames

    def walk(self, node: Any, ctx: str, frame: int, d: int) -> None:
        if d > MAX_WALK_DEPTH:
            raise WalkLimit("too deep: nesting beyond the reader's limit")
        t = kind(node)
        if t == "command":
            self._command(node, ctx, frame, d, ())
        elif t == "redirected_statement":
            self._redirected(node, ctx, frame, d)
        elif t == "pipeline":
            self._pipeline(node, ctx, frame, d)
        elif t == "function_definition":
            name = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            if body is not None:
                self.result.function_spans.append((body.start_byte, body.end_byte))
            if name is not None:
                self.result.functions.append(node_text(name, self.src))
                if body is not None:
                    self.result.function_bodies[node_text(name, self.src)] = node_text(
                        body, self.src
                    )
            for child in node.children:
                if child is not name:
                    self.walk(child, "function" if child == body else ctx, frame, d + 1)
        elif t == "subshell":
            for child in node.children:
                self.walk(child, "subshell", frame, d + 1)
        elif t == "command_substitution":
            self.seen.add((node.start_byte, node.end_byte))
            f = self._new_frame()
            for child in node.children:
                self.walk(child, "substitution", f, d + 1)
        elif t == "process_substitution":
            f = self._new_frame()
            for child in node.children:
                self.walk(child, "process-substitution", f, d + 1)
        elif t in _DECLARATIONS:
            self._declaration(node, ctx, frame, d)
        elif t == "variable_assignment":
            # Reached only for a bare assignment statement: a command's prefix assignments and a
            # declaration's operands are handled by their command and walk only the children.
            self.result.assignments.append(node_text(node, self.src))
            self._binding(node)
            self._children(node, ctx, frame, d)
        elif t == "for_statement":
            self._loop(node)
            for child in node.children:
                self.walk(child, ctx, frame, d + 1)
        elif t == "word" or t in _UNPARSED:
            self._embedded(node)
        elif t == "heredoc_body":
            self._heredoc_body(node, ctx, frame, d)
        elif t == "comment" or _is_leaf(node):
            return
        elif t in _BASHLEX_BLIND or (
            t == "compound_statement" and node.child_count and kind(node.children[0]) == "(("
        ):
            self.result.blind.append((node.start_byte, node.end_byte))
            for child in node.children:
                self.walk(child, ctx, frame, d + 1)
        else:
            for child in node.children:
                self.walk(child, ctx, frame, d + 1)

    def _children(self, node: Any, ctx: str, frame: int, d: int) -> None:
        for child in node.children:
            self.walk(child, ctx, frame, d + 1)

    # --- commands -------------------------------------------------------------------------

    def _add(self, cmd: RawCommand) -> int:
        cmds = self.result.commands
        if len(cmds) >= MAX_COMMANDS:
            raise WalkLimit(f"too many commands: more than {MAX_COMMANDS}")
        if len(cmds) % 256 == 255 and time.monotonic() > self.deadline:
            raise WalkLimit("too slow: reading took longer than its time budget")
        cmds.append(cmd)
        return len(cmds) - 1

    def _words(self, nodes: list[Any], target: bool = False) -> list[Word]:
        """Argv words of argument ``nodes`` in order; nodes that touch are joined into one word,
        and braces are expanded as bash does (``{x,/}``: two words) except in a redirection's
        ``target`` (the first word; bash refuses a target that expands to several)."""
        out: list[Word] = []
        src = self.src
        k, n = 0, len(nodes)
        while k < n:
            first = nodes[k]
            start, end = first.start_byte, first.end_byte
            j = k + 1
            while j < n:
                at = nodes[j].start_byte
                if at != end:
                    break
                self.result.joined.append(at)
                end = nodes[j].end_byte
                j += 1
            run = nodes[k:j]
            k = j
            # touching nodes: their bytes together are the text from the first to the last
            text = src[start:end]
            if b"{" in text and not (target and not out):
                words = expand(text.decode("utf-8", "replace"))
                if words is not None:
                    out.extend(words)
                    continue
            if len(run) == 1 and kind(first) == "word":
                out.append(
                    unquoted_word(text.decode("utf-8", "replace"))
                )  # word_of, without its dispatch
            else:
                out.append(word_of_run(run, src))
        return out

    def _first_text(self, cmd: RawCommand, run: list[Any]) -> str:
        """The first word of ``cmd`` as written so far (its pending ``run`` included)."""
        if cmd.words:
            return cmd.words[0].text
        return word_of(run[0], self.src).text

    def _glue(self, node: Any, raw: str) -> None:
        """Note where tree-sitter read a line break inside the command ``node`` (text ``raw``).

        tree-sitter-bash 0.25 continues the last command of a pipeline of three or more onto the
        next line when that line has a redirection (``a | b | c``, newline, ``bash <<'EOF'``: one
        command ``c bash``, the heredoc fed to the pipeline), which left a heredoc's commands
        unread. bash ends a command at an unquoted newline, so a ``;`` put right after the last
        code before that newline (a comment there would swallow it) reads as bash does.
        """
        if "\n" not in raw:
            return
        data = node_bytes(node, self.src)
        base = node.start_byte
        code_end = -1
        for a, b in itertools.pairwise(node.children):
            if kind(a) != "comment":
                code_end = a.end_byte
            gap = data[a.end_byte - base : b.start_byte - base]
            if b"\n" in gap.replace(b"\\\n", b"") and code_end >= 0:
                self.glued.append(code_end)
                return

    def _command(self, node: Any, ctx: str, frame: int, d: int, extra: tuple[Any, ...]) -> int:
        cmd = RawCommand([], ctx, frame, node.start_byte, node_text(node, self.src))
        self._glue(node, cmd.raw)
        idx = self._add(cmd)
        # a word inside the command can hold `…` or $(…) only if the command's text does
        scan = "`" in cmd.raw or "$(" in cmd.raw
        run: list[Any] = []  # argument nodes not yet made words (touching ones make one word)
        for child in node.children:
            ct = kind(child)
            if ct == "command_name":
                inner = child.named_children
                target = inner[0] if len(inner) == 1 else child
                run.append(target)
                if not _is_leaf(target):
                    self.walk(target, ctx, frame, d + 1)
                continue
            if (
                named(child)
                and ct != "comment"
                and ct != "variable_assignment"
                and ct not in _REDIRECTS
            ):
                if (
                    ct == "subshell"
                    and not self.result.has_error
                    and (
                        (not cmd.words and not run)
                        or self._first_text(cmd, run) not in _BEFORE_PAREN
                    )
                ):
                    # tree-sitter-bash accepts `f('x')` as a command followed by a subshell;
                    # bash rejects it, so this is not shell and is not read as such.
                    self.result.has_error = True
                    self.result.error_at = f"unexpected '(' at byte {child.start_byte}"
                run.append(child)
                if ct not in _LEAF_ARGS or child.named_child_count:  # not _is_leaf(child)
                    before = len(self.result.commands)
                    self.walk(child, ctx, frame, d + 1)
                    self._output_substitution(cmd, child, before)
                elif ct == "word" and scan:
                    self._embedded(child)
                continue
            cmd.words.extend(self._words(run))
            run = []
            if ct == "variable_assignment":
                cmd.assignments.append(node_text(child, self.src))
                self._children(child, ctx, frame, d)
            elif ct in _REDIRECTS:
                cmd.words.extend(self._redirect(cmd, child, ctx, frame, d))
        cmd.words.extend(self._words(run))
        if extra and kind(extra[0]) == "heredoc_redirect" and node.parent is not None:
            # tree-sitter-bash drops a lone `-` just before `<<` (`make -f - <<EOF`,
            # `cat - <<EOF`); bash keeps it as a word, so it is put back.
            base = node.parent.start_byte
            if (
                node_bytes(node.parent, self.src)[
                    node.end_byte - base : extra[0].start_byte - base
                ].strip()
                == b"-"
            ):
                cmd.words.append(Word("-", True))
        for r in extra:
            cmd.words.extend(self._redirect(cmd, r, ctx, frame, d))
        if len(cmd.words) >= 2 and cmd.words[0].text == "set" and cmd.words[1].text == "--":
            # `set -- a b`: the positional parameters $1, $2 … of what follows (S2.1)
            unconditional = _unconditional(node)
            for k, w in enumerate(cmd.words[2:], 1):
                self.result.bindings.append(
                    Binding(str(k), w.text if w.static else None, node.start_byte, unconditional)
                )
        return idx

    def _declaration(self, node: Any, ctx: str, frame: int, d: int) -> None:
        cmd = RawCommand(
            [], ctx, frame, node.start_byte, node_text(node, self.src), declaration=True
        )
        self._glue(node, cmd.raw)
        self._add(cmd)
        prev_end, prev_src = -1, ""
        for child in node.children:
            if not named(child):
                cmd.words.append(Word(node_text(child, self.src)))
                prev_end = -1
                continue
            text = node_text(child, self.src)
            word = (
                word_of(child, self.src)
                if kind(child) != "variable_assignment"
                else Word(text, "$" not in text and "`" not in text)
            )
            if child.start_byte == prev_end and cmd.words:
                # tree-sitter split one word (`local a`x`=1`): bash reads one word
                self.result.joined.append(child.start_byte)
                last = cmd.words[-1]
                static = last.static and word.static
                cmd.words[-1] = Word(last.text + word.text if static else prev_src + text, static)
                prev_src += text
            else:
                cmd.words.append(word)
                prev_src = text
            prev_end = child.end_byte
            if kind(child) == "variable_assignment":
                self._binding(child, declared=True)
                self._children(child, ctx, frame, d)
            elif kind(child) == "variable_name":
                self._local(child, cmd.words)
            elif not _is_leaf(child):
                self.walk(child, ctx, frame, d + 1)

    def _redirected(self, node: Any, ctx: str, frame: int, d: int) -> None:
        body = node.child_by_field_name("body")
        redirects = [c for c in node.children if kind(c) in _REDIRECTS]
        if body is None:
            # A statement that is only redirections (`> f`): bash runs the null command.
            cmd = RawCommand([], ctx, frame, node.start_byte, node_text(node, self.src))
            self._add(cmd)
            for r in redirects:
                self._redirect(cmd, r, ctx, frame, d)
            return
        if kind(body) == "command":
            idx = self._command(body, ctx, frame, d + 1, tuple(redirects))
            self.result.commands[idx].raw = node_text(node, self.src)
            return
        before = len(self.result.commands)
        self.walk(body, ctx, frame, d + 1)
        cands = [c for c in self.result.commands[before:] if c.frame == frame]
        for r in redirects:
            if kind(r) == "heredoc_redirect":
                # tree-sitter hangs `a && cat <<EOF` on the whole list: the heredoc belongs to
                # the last command that starts before the `<<`.
                owner = [c for c in cands if c.start < r.start_byte][-1:]
                for c in owner or cands[-1:]:
                    c.words.extend(self._redirect(c, r, ctx, frame, d))
            elif cands:
                for c in cands:
                    self._redirect(c, r, ctx, frame, d, walk=c is cands[0])
            else:
                self.walk(r, ctx, frame, d + 1)

    def _redirect(
        self, cmd: RawCommand, node: Any, ctx: str, frame: int, d: int, walk: bool = True
    ) -> list[Word]:
        """Record the redirection ``node`` on ``cmd``; returns the argv words written after it.

        tree-sitter-bash hangs the words that follow a redirection (``rm -rf 2>/dev/null /``)
        on the redirection as further destinations (heredocs: arguments); they are argv words.
        """
        t = kind(node)
        extra: list[Word] = []
        if t == "heredoc_redirect":
            op = "<<"
            delim = ""
            body = ""
            args: list[Any] = []
            for k, c in enumerate(node.children):
                if kind(c) in ("<<", "<<-"):
                    op = kind(c)
                elif kind(c) == "heredoc_start":
                    delim = node_text(c, self.src)
                elif kind(c) == "heredoc_body":
                    body = node_text(c, self.src)
                elif kind(c) in _REDIRECTS:
                    extra.extend(self._words(args))
                    args = []
                    extra.extend(self._redirect(cmd, c, ctx, frame, d, walk))
                elif node.field_name_for_child(k) == "argument":
                    args.append(c)
                elif kind(c) == "pipeline" and walk:
                    # tree-sitter hangs `| sh` of `cat <<EOF | sh` on the heredoc: the command
                    # owning the heredoc feeds the first command of that pipeline.
                    before = len(self.result.commands)
                    self.walk(c, ctx, frame, d + 1)
                    first = next(
                        (
                            i
                            for i in range(before, len(self.result.commands))
                            if self.result.commands[i].frame == frame
                        ),
                        None,
                    )
                    owner = next(
                        (i for i in range(before - 1, -1, -1) if self.result.commands[i] is cmd),
                        None,
                    )
                    if first is not None and owner is not None:
                        self.result.pipelines.append([[owner], [first]])
            extra.extend(self._words(args))
            quoted = any(q in delim for q in "'\"\\")
            cmd.redirects.append(Redirect(op, delim.strip("'\"\\")))
            cmd.heredoc = (body, quoted)
            if (
                not quoted
                and "\\\n" in body
                and not self.result.has_error
                and _ends_inside(body, delim, op == "<<-")
            ):
                # bash ends this heredoc earlier than tree-sitter: what follows is code to bash.
                self.result.has_error = True
                self.result.error_at = f"heredoc {delim!r} ends earlier for bash (a joined line)"
        elif t == "herestring_redirect":
            target = node.named_children[-1] if node.named_children else None
            word = word_of(target, self.src) if target is not None else Word("", True)
            cmd.redirects.append(Redirect("<<<", word.text if word.static else None))
            cmd.herestring = word
        else:
            op = ""
            fd: int | None = None
            dest: list[Any] = []  # the target, then words tree-sitter hung on the redirection
            for c in node.children:
                if kind(c) == "file_descriptor":
                    try:
                        fd = int(node_text(c, self.src))
                    except ValueError:
                        fd = None
                elif not named(c):
                    op = kind(c)
                elif kind(c) == "ERROR" and op == "<" and node_text(c, self.src) == ">":
                    op = "<>"  # tree-sitter-bash 0.25 does not know `<>` (read-write)
                else:
                    dest.append(c)
            if dest and not self.result.has_error and _crosses_line(node, dest, self.src):
                # tree-sitter-bash takes a redirection's target from the next line (`echo >`,
                # newline, `rm -rf ~`); bash ends the command at the newline and rejects it.
                self.result.has_error = True
                self.result.error_at = f"redirection without a target at byte {node.start_byte}"
            words = self._words(dest, target=True)
            extra.extend(words[1:])
            word = words[0] if words else Word("", False)
            target = word.text if word.static else None
            writes = op in WRITE_OPS
            if op in (">&", "<&") and target is not None and (target.isdigit() or target == "-"):
                writes = False  # fd duplication or close, not a file
            if not word.static:
                cmd.target_words[len(cmd.redirects)] = word
            cmd.redirects.append(Redirect(op, target, fd, writes, "" if word.static else word.text))
            if op == "<" and fd in (None, 0):
                cmd.stdin_word = word
        if walk:
            for c in node.children:
                if (
                    not _is_leaf(c)
                    and kind(c) not in _REDIRECTS
                    and named(c)
                    and not (t == "heredoc_redirect" and kind(c) == "pipeline")
                ):
                    before = len(self.result.commands)
                    self.walk(c, ctx, frame, d + 1)
                    self._output_substitution(cmd, c, before)
        return extra

    def _output_substitution(self, cmd: RawCommand, node: Any, before: int) -> None:
        """``CMD > >(sh)`` and ``tee >(sh)``: what CMD writes there is the substitution's input,
        as through a pipe, so the first command of ``>(…)`` is recorded as fed by CMD."""
        if kind(node) != "process_substitution" or not node_text(node, self.src).startswith(">("):
            return
        owner = next((i for i in range(before - 1, -1, -1) if self.result.commands[i] is cmd), None)
        inner = next(
            (
                i
                for i in range(before, len(self.result.commands))
                if self.result.commands[i].frame != cmd.frame
            ),
            None,
        )
        if owner is not None and inner is not None:
            self.result.pipelines.append([[owner], [inner]])

    def _pipeline(self, node: Any, ctx: str, frame: int, d: int) -> None:
        stages: list[list[int]] = []
        for child in node.children:
            if not named(child) or kind(child) == "comment":
                continue
            before = len(self.result.commands)
            self.walk(child, ctx, frame, d + 1)
            stages.append(
                [
                    i
                    for i in range(before, len(self.result.commands))
                    if self.result.commands[i].frame == frame
                ]
            )
        if len(stages) >= 2:
            self.result.pipelines.append(stages)

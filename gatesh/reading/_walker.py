"""The walk itself: a visit of tree-sitter-bash's syntax tree that lists every simple
command that would execute (substitutions, heredocs, pipelines and redirections
included), with the static values of plain assignments and the loops over static words.
"""

from __future__ import annotations

import itertools
from typing import Any, Final

from gatesh._types import Context, Redirect, Word

from ._braces import expand
from ._limits import MAX_COMMANDS, MAX_WALK_DEPTH, clock
from ._nodes import kind, named
from ._subst import substitutions
from ._values import Binding
from ._walk_result import Loop, RawCommand, Walk, WalkLimit
from ._walk_scope import TOP, at_top, scope_of
from ._words import node_bytes, node_text, unquoted_word, word_of, word_of_run

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
    def __init__(self, src: bytes, context: Context, deadline: float) -> None:
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

    def _heredoc_body(self, node: Any, ctx: Context, frame: int, d: int) -> None:
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
        runs_in = scope_of(node)
        self.result.bindings.append(
            Binding(
                node_text(name, self.src),
                static,
                node.start_byte,
                runs_in == TOP,
                source,
                declared,
                scope=None if runs_in == TOP else runs_in,
            )
        )

    def _local(self, node: Any, words: list[Word]) -> None:
        """``local NAME`` (``declare``/``typeset`` without options) in a function's body: NAME is
        the function's own from there on, empty until it is assigned (``local t; t=$(mktemp)``).
        Elsewhere a bare name keeps the value it had, and is no binding."""
        runs_in = scope_of(node)
        if (
            runs_in is None
            or runs_in == TOP
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

    def walk(self, node: Any, ctx: Context, frame: int, d: int) -> None:
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
                    self.walk(child, Context.FUNCTION if child == body else ctx, frame, d + 1)
        elif t == "subshell":
            for child in node.children:
                self.walk(child, Context.SUBSHELL, frame, d + 1)
        elif t == "command_substitution":
            self.seen.add((node.start_byte, node.end_byte))
            f = self._new_frame()
            for child in node.children:
                self.walk(child, Context.SUBSTITUTION, f, d + 1)
        elif t == "process_substitution":
            f = self._new_frame()
            for child in node.children:
                self.walk(child, Context.PROCESS_SUBSTITUTION, f, d + 1)
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

    def _children(self, node: Any, ctx: Context, frame: int, d: int) -> None:
        for child in node.children:
            self.walk(child, ctx, frame, d + 1)

    # --- commands -------------------------------------------------------------------------

    def _add(self, cmd: RawCommand) -> int:
        cmds = self.result.commands
        if len(cmds) >= MAX_COMMANDS:
            raise WalkLimit(f"too many commands: more than {MAX_COMMANDS}")
        if len(cmds) % 256 == 255 and clock() > self.deadline:
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

    def _command(self, node: Any, ctx: Context, frame: int, d: int, extra: tuple[Any, ...]) -> int:
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
            unconditional = at_top(node)
            for k, w in enumerate(cmd.words[2:], 1):
                self.result.bindings.append(
                    Binding(str(k), w.text if w.static else None, node.start_byte, unconditional)
                )
        return idx

    def _declaration(self, node: Any, ctx: Context, frame: int, d: int) -> None:
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

    def _redirected(self, node: Any, ctx: Context, frame: int, d: int) -> None:
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
        self, cmd: RawCommand, node: Any, ctx: Context, frame: int, d: int, walk: bool = True
    ) -> list[Word]:
        """Record the redirection ``node`` on ``cmd``; returns the argv words written after it.

        tree-sitter-bash hangs the words that follow a redirection (``rm -rf 2>/dev/null /``)
        on the redirection as further destinations (heredocs: arguments); they are argv words.
        """
        t = kind(node)
        if t == "heredoc_redirect":
            extra = self._heredoc_redirect(cmd, node, ctx, frame, d, walk)
        elif t == "herestring_redirect":
            extra = []
            target = node.named_children[-1] if node.named_children else None
            word = word_of(target, self.src) if target is not None else Word("", True)
            cmd.redirects.append(Redirect("<<<", word.text if word.static else None))
            cmd.herestring = word
        else:
            extra = self._file_redirect(cmd, node)
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

    def _heredoc_redirect(
        self, cmd: RawCommand, node: Any, ctx: Context, frame: int, d: int, walk: bool
    ) -> list[Word]:
        """Record the heredoc ``node`` on ``cmd`` (its body, whether its delimiter is quoted,
        redirections hung on it, a pipeline tree-sitter hangs on it); returns the argv words
        written after it. A body bash ends earlier than tree-sitter makes the walk erroneous."""
        extra: list[Word] = []
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
        return extra

    def _file_redirect(self, cmd: RawCommand, node: Any) -> list[Word]:
        """Record the file redirection ``node`` on ``cmd`` (operator, fd, static or dynamic
        target, whether it writes); returns the words tree-sitter hung on it after the target.
        A target tree-sitter took from the next line makes the walk erroneous (bash rejects it)."""
        extra: list[Word] = []
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

    def _pipeline(self, node: Any, ctx: Context, frame: int, d: int) -> None:
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

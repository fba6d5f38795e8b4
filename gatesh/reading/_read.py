"""The reader's core: a text is walked, each command finalized, and what it runs re-read.

:class:`Reader` reads one command line. Its state is one :class:`~._state.ReadState`; its parts
each own one kind of text a command runs, and take that state and the reader (as
:class:`~._state.Again`, to read text again): :class:`~._code.CodeReading` (a program's input),
:class:`~._defined.DefinedReading` (files written, then run),
:class:`~._positions.PositionReading` (command-valued options and variables),
:class:`~._settings.SettingReading` (settings that hold code), :class:`~._runs.RunReading`
(shells, eval, source, ssh …) and :class:`~._scripts.ScriptReading` (scripts on disk). The
limits are ``_limits``'s.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Final

from gatesh._types import Code, CodeSource, Context, Redirect, SimpleCommand, Word
from gatesh.vocab.programs.interpreters import is_interpreter
from gatesh.vocab.programs.positions import POSITION_PROGRAMS
from gatesh.vocab.programs.shells import PARSED_SHELLS, SHELLS

from . import _limits as L
from ._code import CodeReading, Fed
from ._continuation import join_continuations
from ._defined import RECIPE_RUNNERS, DefinedReading
from ._peel import Peeled, head_of, peel
from ._positional import expand_positional, follow_positional
from ._positions import PositionReading
from ._repair import repair
from ._runs import RunReading
from ._scripts import ScriptReading
from ._second import read_second, tree_sitter_confirmed
from ._settings import SETTING_BUILTINS, SettingReading
from ._state import Inherit, ReadLimit, ReadState
from ._static import resolved, substitute
from ._subst import substitutions
from ._tables import SOURCE_BUILTINS
from ._values import MAX_LOOP_WORDS, TextEnv
from ._walk import PLAIN, RawCommand, Walk, WalkLimit, walk_text

__all__ = ["ReadLimit", "Reader", "max_nesting"]

# `make` reading its makefile from stdin: `-f -`, `-f-`, `--file=-`, `--makefile=-` among its words.
# Test runners that run the test files of the folders they are given (``python -m pytest`` too).
_TEST_RUNNERS: Final = frozenset({"pytest", "py.test"})
_MAKEFILE_ON_STDIN: Final = re.compile(r"(?:.*\s)?(?:-f\s?-|--(?:file|makefile)[=\s]-)(?:\s.*)?")
# Folders whose programs are never scripts we should open (speed: no file I/O for /usr/bin/ls).
_SYSTEM_BIN_PREFIXES = ("/bin/", "/sbin/", "/usr/", "/lib", "/opt/homebrew/", "/nix/", "/System/")


# A line of plain words (``_walk.PLAIN``) is one simple command split at spaces, which tree-sitter
# (when it reads it cleanly) and bashlex cannot read differently, so bashlex (~80 % of a reading's
# time) is not asked. ~82 % of tldr.


def _without_quoted_heredocs(text: str, walk: Walk) -> str | None:
    """``text`` with the body of every heredoc whose delimiter is quoted taken out (None when it
    has none): the shell neither expands nor runs such a body, so the second reader needs it not."""
    bodies = [r.heredoc[0] for r in walk.commands if r.heredoc and r.heredoc[1] and r.heredoc[0]]
    if not bodies:
        return None
    for body in bodies:
        text = text.replace(body, "", 1)
    return text


def max_nesting(text: str) -> int:
    """An upper bound on bracket nesting in ``text`` (quotes ignored: over-counting is safe)."""
    depth = best = 0
    for ch in text:
        if ch in "({[`":
            depth += 1
            if depth > best:
                best = depth
        elif ch in ")}]":
            depth = depth - 1 if depth > 0 else 0
    return best


def _needs_nesting_scan(text: str) -> bool:
    return text.count("(") + text.count("{") + text.count("[") + text.count("`") > L.MAX_NESTING


class Reader:
    """One reading: the state and the parts that read what its commands run (see above)."""

    def __init__(self, cwd: str | None, home: str | None) -> None:
        self.st = ReadState(cwd, home)
        self.inputs = CodeReading(self.st, self)
        self.defined = DefinedReading(self.st, self, self.inputs)
        self.positions = PositionReading(self.st, self)
        self.settings = SettingReading(self.st, self)
        self.runs = RunReading(self.st, self, self.inputs, self.settings)
        self.on_disk = ScriptReading(self.st, self, self.defined)

    def read_text(
        self, text: str, context: Context, depth: int, inherit: Inherit, *, tolerant: bool = False
    ) -> list[int]:
        """Read ``text`` as shell; returns the indexes of the commands it produced.

        ``tolerant``: the text is another shell language read as sh for defence only (S2.1):
        where neither reader can parse it, that is a note, not an unreadable command.
        """
        if depth > L.MAX_REREAD_DEPTH:
            raise ReadLimit(f"too deep: strings re-read more than {L.MAX_REREAD_DEPTH} levels")
        self.st.check_time()
        if "\\\n" in text:
            text, joined = join_continuations(text)
            if not joined:
                self.st.note("line continuations next to a heredoc: read as written")
        data = text.encode("utf-8", "surrogatepass")
        if len(data) > L.MAX_COMMAND_BYTES and context != Context.SCRIPT:
            raise ReadLimit(f"too long: a nested command of {len(data)} bytes")
        if _needs_nesting_scan(text) and max_nesting(text) > L.MAX_NESTING:
            raise ReadLimit(f"too deep: brackets nested more than {L.MAX_NESTING} levels")
        try:
            walk = walk_text(data, context, self.st.deadline)
        except WalkLimit as exc:
            raise ReadLimit(str(exc)) from None
        except RecursionError:
            raise ReadLimit("too deep: nesting beyond the reader's limit") from None
        where = "" if depth == 0 else f" (in {context} at depth {depth})"
        if walk.has_error:
            text, data, walk = self._repaired(text, data, walk, context, where)
        if walk.joined:
            self.st.note(
                f"tree-sitter split a word that bash reads as one{where}: "
                f"read as one word (byte {walk.joined[0]})"
            )
        if not walk.has_error and PLAIN.fullmatch(text):
            second, second_err = None, ""  # both readers necessarily agree (see PLAIN)
        elif len(data) <= L.MAX_SECOND_READER_BYTES:
            # A simple line tree-sitter read exactly as bash splits it: bashlex can add nothing.
            second, second_err = (
                (None, "") if tree_sitter_confirmed(text, walk) else read_second(text)
            )
        else:
            # A quoted heredoc's body is data to the shell (no expansion, no command): without
            # the bodies, a long text that only writes files is short enough for bashlex.
            reduced = _without_quoted_heredocs(text, walk)
            if reduced is not None and len(reduced.encode("utf-8", "surrogatepass")) <= (
                L.MAX_SECOND_READER_BYTES
            ):
                second, second_err = read_second(reduced)
            else:
                second, second_err = None, "too long for bashlex"
                self.st.note(
                    f"only tree-sitter read this{where}: "
                    f"longer than {L.MAX_SECOND_READER_BYTES} bytes"
                )
        if walk.has_error:
            self.st.note(f"tree-sitter read with errors{where}: {walk.error_at}")
            if second is None and not self.st.unreadable and not tolerant:
                self.st.unreadable = (
                    f"unreadable: neither reader could parse it{where} "
                    f"(tree-sitter: {walk.error_at}; bashlex: {second_err})"
                )
        # bashlex failing alone is common (case, [[ ]], quoted heredocs) and no disagreement.
        for stages in walk.pipelines:  # what feeds what, for code on a shell's input (S2.1)
            for k in range(1, len(stages)):
                for i in stages[k]:
                    walk.commands[i].fed_by = [walk.commands[j] for j in stages[k - 1]]
        self.st.function_bodies.update(walk.function_bodies)
        env = TextEnv(
            resolved(self.st, walk.bindings, text, inherit, walk.function_spans),
            text,
            dict(inherit.bindings),
            walk.function_spans,
        )
        self.st.envs.append(env)
        try:
            return self._read_walk(text, data, walk, second, depth, inherit, where, env)
        finally:
            self.st.envs.pop()

    def _read_walk(
        self,
        text: str,
        data: bytes,
        walk: Walk,
        second: tuple[RawCommand, ...] | None,
        depth: int,
        inherit: Inherit,
        where: str,
        env: TextEnv,
    ) -> list[int]:
        """Finalize what the walk of ``text`` found (``read_text``'s second half)."""
        produced: list[int] = []
        raw_map: list[list[int]] = []
        surfaces: list[str] = []
        for raw in walk.commands:
            idxs, surface = self.finalize(raw, depth, inherit)
            raw_map.append(idxs)
            produced.extend(idxs)
            surfaces.append(surface)
        for stages in walk.pipelines:
            flat = tuple(i for stage in stages for raw_i in stage for i in raw_map[raw_i])
            if len(flat) >= 2:
                self.st.pipelines.append(flat)
        for name in walk.functions:
            if name not in self.st.functions:
                self.st.functions.append(name)
        self.st.assignments.extend(walk.assignments)
        produced.extend(self.settings.binding_settings(walk.bindings, text, depth, inherit))
        for inner_text in walk.embedded:
            produced.extend(self.read_text(inner_text, Context.SUBSTITUTION, depth + 1, inherit))
        if second is not None:
            to_char = _byte_to_char(text, data)
            at = {to_char(raw.start): s for raw, s in zip(walk.commands, surfaces, strict=True)}
            blind = [(to_char(a), to_char(b)) for a, b in walk.blind]
            produced.extend(self._union(second, surfaces, at, blind, depth, inherit, where))
            if walk.has_error:
                # bashlex reads no substitution in a here-document body, and tree-sitter did not
                # find the body: each one bash would run there is read from the body's text.
                for raw in second:
                    if raw.heredoc is not None:
                        body = raw.heredoc[0].encode("utf-8", "surrogatepass")
                        for _, _, inner in substitutions(body):
                            produced.extend(
                                self.read_text(inner, Context.SUBSTITUTION, depth + 1, inherit)
                            )
        produced.extend(self._loops(walk, depth, inherit, env))
        return produced

    def _loops(self, walk: Walk, depth: int, inherit: Inherit, env: TextEnv) -> list[int]:
        """``for NAME in WORDS`` over static words: the body is read once per word, NAME known
        (S2.1), up to ``MAX_LOOP_WORDS`` words."""
        out: list[int] = []
        for loop in walk.loops:
            words = loop.words
            if (
                not words
                or len(words) > MAX_LOOP_WORDS
                or not all(w.static for w in words)
                or len(loop.body) * len(words) > L.MAX_COMMAND_BYTES
            ):
                continue
            known = {**dict(inherit.bindings), **env.known_at(loop.start)}
            for w in words:
                bindings = tuple({**known, loop.name: w.text}.items())
                out.extend(
                    self.read_text(
                        loop.body, Context.LOOP, depth + 1, replace(inherit, bindings=bindings)
                    )
                )
        return out

    def _repaired(
        self, text: str, data: bytes, walk: Walk, context: Context, where: str
    ) -> tuple[str, bytes, Walk]:
        """The text both readers read instead of ``text`` when a repair of ``_repair`` makes
        tree-sitter read it without error (each repair noted); else ``text`` unchanged."""
        fixed = repair(data, self.st.deadline)
        if fixed is None:
            return text, data, walk
        try:
            again = walk_text(fixed[0], context, self.st.deadline)
        except (WalkLimit, RecursionError):
            return text, data, walk
        if again.has_error:
            return text, data, walk
        for note in fixed[1]:
            self.st.note(f"repaired{where}: {note}")
        return fixed[0].decode("utf-8", "surrogatepass"), fixed[0], again

    def _union(
        self,
        second: tuple[RawCommand, ...],
        surfaces: list[str],
        at: dict[int, str],
        blind: list[tuple[int, int]],
        depth: int,
        inherit: Inherit,
        where: str,
    ) -> list[int]:
        """Add every command bashlex saw that tree-sitter did not (the stricter union).

        A bashlex command at the same place as a tree-sitter command is the same command: it is
        added only when both heads are static and differ. Elsewhere a bashlex command is the same
        as a tree-sitter command of the same name only while tree-sitter has one of that name
        left unmatched: names are counted, so a second ``find`` that tree-sitter lost after a
        parse error is not hidden by the first. Commands bashlex reports inside constructs it
        cannot read (``(( ))``, ``[[ ]]``, ``case``) are not added.
        """
        added: list[int] = []
        seen_second: set[str] = set()
        left = Counter(surfaces)  # tree-sitter's commands no bashlex command has matched yet
        elsewhere: list[tuple[RawCommand, str]] = []
        for raw in second:
            if not raw.words:
                continue
            words = raw.words
            if inherit.positional is not None and raw.context != Context.FUNCTION:
                words = expand_positional(words, inherit.positional) or words  # as finalize does
            p = peel(words)
            surface = _surface(p.argv, p.shell_string is not None)
            seen_second.add(surface)
            ts_here = at.get(raw.start)
            if ts_here is None:
                elsewhere.append((raw, surface))
            elif ts_here == surface or not surface or not ts_here:
                left[ts_here] -= 1
            else:
                added.extend(self._add_second(raw, surface, depth, inherit, where))
        for raw, surface in elsewhere:
            if left[surface] > 0:
                left[surface] -= 1
                continue
            if surface in self.st.functions or any(a <= raw.start < b for a, b in blind):
                continue
            added.extend(self._add_second(raw, surface, depth, inherit, where))
        missing = sorted(h for h in set(surfaces) - seen_second if h not in ("", ":"))
        if missing:
            self.st.note(
                f"readers disagree{where}: tree-sitter read {', '.join(missing)} "
                f"that bashlex did not"
            )
        return added

    def _add_second(
        self, raw: RawCommand, surface: str, depth: int, inherit: Inherit, where: str
    ) -> list[int]:
        self.st.note(
            f"readers disagree{where}: bashlex read {surface or 'a dynamic head'!r} "
            f"that tree-sitter did not"
        )
        idxs, _ = self.finalize(raw, depth, inherit)
        return idxs

    def finalize(self, raw: RawCommand, depth: int, inherit: Inherit) -> tuple[list[int], str]:
        """Put in the static values ``raw``'s words are known to have (S2.1), peel it, re-read
        what it runs, emit its commands: (indexes, surface head). A value only possible (set in a
        branch, say) gives one more reading of the command, beside the one as written."""
        variants: list[RawCommand] = []
        if self.st.envs and raw.words:
            # a declaration's names too: `x=GATESH_OPERATOR; export $x=…` exports GATESH_OPERATOR
            raw, variants = substitute(self.st, raw, inherit)
        idxs, surface = self._finalize(raw, depth, inherit)
        for v in variants:
            idxs = idxs + self._finalize(v, depth, inherit)[0]
        return idxs, surface

    def _finalize(self, raw: RawCommand, depth: int, inherit: Inherit) -> tuple[list[int], str]:
        """One command, its static values already put in: (indexes, surface head).

        Its wrappers are peeled; a static string a wrapper runs (``sudo sh -c '…'``) replaces
        it; else the command is emitted and everything it runs is read (:meth:`_command`).
        """
        redirects = tuple(raw.redirects) + inherit.redirects
        pos = inherit.positional
        if (
            pos is not None
            and raw.context != Context.FUNCTION
            and raw.words
            and not raw.declaration
        ):
            # `sh -c '"$@"' _ rm -rf ~` runs `rm -rf ~`: positional parameters are the static
            # words after the string (bypass_failures #3). A function's "$@" is its own.
            expanded = expand_positional(raw.words, pos)
            if expanded is not None:
                raw = replace(raw, words=expanded)
        if raw.declaration or not raw.words:
            return self._declaration(raw, depth, inherit, redirects)
        p = peel(raw.words)
        wrappers = inherit.wrappers + tuple(p.wrappers)
        privileged = inherit.privileged or p.privileged
        context = p.context if p.context is not None else raw.context
        assignments = tuple(raw.assignments) + tuple(p.assignments)
        surface = _surface(p.argv, p.shell_string is not None)
        if p.placeholders:
            _normalise_placeholders(p)
        if p.inputs:
            idxs = self.runs.parallel(
                p,
                raw,
                depth,
                Inherit(wrappers, privileged, inherit.remote, redirects, tuple(p.placeholders)),
            )
            if idxs is not None:
                return idxs, surface
            if p.shell_string is not None and not p.shell_string.text:
                p.shell_string = Word(raw.raw, False)  # `parallel ::: $(…)`: the runner stays
        if p.shell_string is not None:
            inner = Inherit(wrappers, privileged, inherit.remote, redirects)
            idxs = self.runs.reread(p.shell_string, p.shell_via, depth, inner, raw)
            if idxs is not None:
                return idxs, surface
            argv = raw.words  # dynamic string: the outer command stays
            wrappers, privileged = inherit.wrappers, inherit.privileged
        else:
            argv = p.argv
        head = head_of(argv[0].text) if argv[0].static else ""
        if not head:
            self.st.note(f"dynamic head: {raw.raw[:80]!r}")
        cmd = SimpleCommand(
            tuple(argv),
            head,
            wrappers=wrappers,
            privileged=privileged,
            assignments=assignments,
            redirects=redirects,
            context=context,
            raw=raw.raw,
            depth=depth,
            remote=inherit.remote,
            expanded_head=raw.expanded_head if argv is p.argv or argv == raw.words else "",
        )
        inner = Inherit(
            (*wrappers, head),
            privileged,
            inherit.remote,
            placeholders=tuple(p.placeholders) or inherit.placeholders,
        )
        return self._command(cmd, argv, raw, bool(p.wrappers), depth, inherit, inner), surface

    def _declaration(
        self, raw: RawCommand, depth: int, inherit: Inherit, redirects: tuple[Redirect, ...]
    ) -> tuple[list[int], str]:
        """A declaration (``export``, ``declare`` …) or a line of assignments only: emitted as
        written, and the code its settings give the shell read (``export PAGER='…'``)."""
        head = head_of(raw.words[0].text) if raw.words else ":"
        cmd = SimpleCommand(
            tuple(raw.words),
            head,
            wrappers=inherit.wrappers,
            privileged=inherit.privileged,
            assignments=tuple(raw.assignments),
            redirects=redirects,
            context=raw.context,
            raw=raw.raw,
            depth=depth,
            remote=inherit.remote,
        )
        idx = self.st.emit(cmd)
        # `export PAGER='…'` gives later commands a command to run: read it as one.
        settings = (
            [w.text for w in raw.words[1:] if w.static and "=" in w.text] if raw.declaration else []
        )
        runs, opaque = self.positions.env_commands(
            tuple(raw.assignments) + tuple(settings),
            depth,
            Inherit(inherit.wrappers, inherit.privileged, inherit.remote),
        )
        self._env_opaque(idx, opaque)
        if raw.declaration:
            self.settings.declaration_opaque(cmd, idx)
        return [idx, *runs], head

    def _command(
        self,
        cmd: SimpleCommand,
        argv: list[Word],
        raw: RawCommand,
        wrapped: bool,
        depth: int,
        inherit: Inherit,
        inner: Inherit,
    ) -> list[int]:
        """Emit ``cmd`` (peeled; ``wrapped``: it had wrappers) and read what it runs: its
        variables' code, a shell's program (which replaces it), eval's string, a function this
        text defined, payloads, settings, the text it runs (:meth:`_runs_of`), recipes, and
        the files it writes (remembered for later runs)."""
        head, redirects = cmd.head, cmd.redirects
        env_runs, env_opaque = (
            self.positions.env_commands(cmd.assignments, depth, inner)
            if cmd.assignments
            else ([], [])
        )
        if head in PARSED_SHELLS:
            idxs = self.runs.shell(cmd, raw, depth, inner)
            if idxs is not None:
                if cmd.writes:
                    self.defined.record_writes(cmd, raw, depth, inner)
                if env_opaque:
                    self._env_opaque(idxs[0] if idxs else self.st.emit(cmd), env_opaque)
                return env_runs + idxs
        fed: Fed | None = None
        if head == "eval" and len(argv) > 1:
            fed = self.runs.eval_text(argv[1:])
            if fed.text is not None and not fed.dynamic:
                return env_runs + self.read_text(
                    fed.text,
                    Context.EVAL,
                    depth + 1,
                    replace(inner, redirects=redirects, positional=inherit.positional),
                )
        if head in ("cd", "pushd") and self.st.written:
            self.defined.follow_cd(
                argv
            )  # later runs of what this text fetched are found from there
        if inherit.positional is not None and head in ("shift", "set"):
            follow_positional(inherit.positional, head, argv)
        idx = self.st.emit(cmd)
        out = [idx, *env_runs]
        if env_opaque:
            self._env_opaque(idx, env_opaque)
        if head in self.st.function_bodies and not wrapped:
            out.extend(self.runs.call(cmd, raw, depth, inherit))
        if head in POSITION_PROGRAMS:
            out.extend(self.positions.read_positions(cmd, raw, idx, depth, inner))
        if head in SETTING_BUILTINS:
            out.extend(self.settings.builtin_settings(cmd, raw, idx, depth, inner))
        out.extend(self._runs_of(cmd, argv, raw, idx, depth, inherit, inner, fed))
        if head in RECIPE_RUNNERS and self.st.written:
            out.extend(self.defined.run_recipes(cmd, idx, depth, inner))
        out.extend(self.defined.record_writes(cmd, raw, depth, inner))
        return out

    def _runs_of(
        self,
        cmd: SimpleCommand,
        argv: list[Word],
        raw: RawCommand,
        idx: int,
        depth: int,
        inherit: Inherit,
        inner: Inherit,
        fed: Fed | None,
    ) -> list[int]:
        """The commands of the one text the emitted ``cmd`` (index ``idx``) runs, by the first
        route that applies: a file this text wrote earlier (S2.1 defined, then run), a foreign
        shell, eval of a dynamic string (``fed``), source, alias, find -exec, ssh, ``make -f -``,
        an interpreter, a script named by its path."""
        head = cmd.head
        ran = self.defined.run_written(cmd, raw, idx, depth, inner) if self.st.written else None
        if ran is not None:
            return ran
        if head in SHELLS and head not in PARSED_SHELLS:
            return self.inputs.foreign_shell(cmd, raw, idx, depth, inner)
        if head == "eval" and fed is not None:  # a bare `eval` runs nothing
            self.st.note(f"eval of a dynamic string: {raw.raw[:80]!r}")
            return self.inputs.run_fed(
                idx, "eval", fed, depth, replace(inner, redirects=cmd.redirects)
            )
        if head in SOURCE_BUILTINS and len(argv) > 1:
            return self.runs.source(cmd, raw, idx, depth, inner)
        if head == "alias":
            return self.runs.alias(argv, raw, idx, depth, inner)
        if head == "find":
            return self.runs.find(cmd, raw, depth, inherit, cmd.wrappers, cmd.privileged)
        if head == "ssh":
            return self.runs.ssh(cmd, raw, idx, depth, inherit, cmd.wrappers, cmd.privileged)
        if head in ("make", "gmake", "bmake") and _MAKEFILE_ON_STDIN.fullmatch(
            " ".join(w.text for w in argv[1:] if w.static)
        ):
            return self.runs.make_stdin(raw, idx, depth, inner)
        if head in _TEST_RUNNERS and self.st.written:
            return self.on_disk.test_run(cmd, raw, depth, inner)
        if is_interpreter(head):
            return self.runs.interpreter(cmd, raw, idx, depth, inner)
        if (
            argv[0].static
            and "/" in argv[0].text
            and not argv[0].text.startswith(_SYSTEM_BIN_PREFIXES)
        ):
            return self.on_disk.script(argv[0], "", depth, inner)
        return []

    def script(self, word: Word, interp: str, depth: int, inherit: Inherit) -> list[int]:
        """Read a script ``interp`` runs ("": by its shebang); see :class:`ScriptReading`."""
        return self.on_disk.script(word, interp, depth, inherit)

    def module(self, name: str, interp: str, index: int, depth: int, inherit: Inherit) -> list[int]:
        """Read the files ``interp -m name`` runs; see :meth:`ScriptReading.module`."""
        return self.on_disk.module(name, interp, index, depth, inherit)

    def _env_opaque(self, index: int, why: list[str]) -> None:
        for w in why:
            self.st.code.append(
                Code(index, self.st.commands[index].head, CodeSource.SETTING, opaque=w)
            )
            self.st.note(f"opaque code: {w}")


def _normalise_placeholders(p: Peeled) -> None:
    """Write every xargs/parallel placeholder as ``{}`` (the one the rater knows)."""
    others = [x for x in p.placeholders if x != "{}"]
    if not others:
        return

    def norm(w: Word) -> Word:
        text = w.text
        for x in others:
            text = text.replace(x, "{}")
        return w if text == w.text else Word(text, w.static)

    p.argv = [norm(w) for w in p.argv]
    if p.shell_string is not None:
        p.shell_string = norm(p.shell_string)


def _byte_to_char(text: str, data: bytes) -> Callable[[int], int]:
    """Maps tree-sitter byte offsets to bashlex character offsets."""
    if len(data) == len(text):
        return lambda b: b
    return lambda b: len(data[:b].decode("utf-8", "surrogatepass"))


def _surface(argv: list[Word], via_shell: bool) -> str:
    """A reader-independent name for a peeled command, for comparing the two readers."""
    if via_shell:
        return "<shell string>"
    if not argv:
        return ":"
    return head_of(argv[0].text) if argv[0].static else ""

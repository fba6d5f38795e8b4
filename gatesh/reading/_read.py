"""``read()``: text -> :class:`Facts`, the union of both readers, bounded by ``_limits``."""

from __future__ import annotations

import itertools
import os
import re
import shlex
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final

from gatesh._errors import ReadError
from gatesh._types import (
    ABSENT,
    VENV_OWN,
    Code,
    CodeSource,
    Context,
    Facts,
    PathEffect,
    Redirect,
    Script,
    SimpleCommand,
    Word,
)
from gatesh.vocab.paths.classes import others_may_create
from gatesh.vocab.programs.interpreters import interpreter, invocation, is_interpreter, venv_made
from gatesh.vocab.programs.positions import POSITION_PROGRAMS
from gatesh.vocab.programs.shells import PARSED_SHELLS, SHELL_OPTS_WITH_ARG, SHELLS, STDIN_NAMES
from gatesh.vocab.programs.workdir import CD_HEADS, CHDIR_WRAPPERS, NAMED_FILES_ONLY

from . import _limits as L
from ._code import CodeReading, Fed, whole_substitution
from ._continuation import join_continuations
from ._defined import RECIPE_RUNNERS, DefinedReading, Written, make_recipes
from ._hosts import hosts_in, ssh_split
from ._known import temp_made
from ._paths import MAX_EFFECTS
from ._paths import effects as path_effects
from ._peel import Peeled, head_of, peel, shebang_head
from ._positions import PositionReading
from ._repair import repair
from ._second import read_second, tree_sitter_confirmed
from ._settings import SETTING_BUILTINS, SettingReading
from ._subst import substitutions
from ._tables import FIND_EXEC, SOURCE_BUILTINS
from ._values import MAX_LOOP_WORDS, MAX_VARIANTS, Binding, TextEnv, expand, names_in
from ._variables import variables
from ._walk import PLAIN, RawCommand, Walk, WalkLimit, walk_text

# Folders whose programs are never scripts we should open (speed: no file I/O for /usr/bin/ls).
# `make` reading its makefile from stdin: `-f -`, `-f-`, `--file=-`, `--makefile=-` among its words.
_MAKEFILE_ON_STDIN: Final = re.compile(r"(?:.*\s)?(?:-f\s?-|--(?:file|makefile)[=\s]-)(?:\s.*)?")
_SYSTEM_BIN_PREFIXES = ("/bin/", "/sbin/", "/usr/", "/lib", "/opt/homebrew/", "/nix/", "/System/")


# A line of plain words (``_walk.PLAIN``) is one simple command split at spaces, which tree-sitter
# (when it reads it cleanly) and bashlex cannot read differently, so bashlex (~80 % of a reading's
# time) is not asked. ~82 % of tldr.


class ReadLimit(ReadError):
    """A limit of ``_limits`` was passed; the message is the ``unreadable`` reason."""


@dataclass
class _Positional:
    """``sh -c STRING ARG0 ARGS…``: the values of ``$0 $1 …`` while STRING is read.

    ``shift`` counts the ``shift``s read so far (in source order); ``known`` turns False when
    they can no longer be followed (``shift $n``, ``set --``): the words then stay dynamic.
    ``open_ended``: xargs or ``find -exec … +`` append more arguments after ARGS.
    """

    args: tuple[Word, ...]
    open_ended: bool = False
    shift: int = 0
    known: bool = True


# Characters that end an unquoted shell word: an alias name holding one can never be expanded.
_NEVER_A_TOKEN: Final = re.compile(r"[ \t\n|&;()<>]")
# Pipeline and list operators at the very start or end of an alias value (with blanks around).
_EDGE_OPERATORS: Final = re.compile(r"\A\s*(?:\|\||&&|\|&|\|)\s*|\s*(?:\|\||&&|\|&|\|)\s*\Z")
# A word that is one positional parameter: "$@" $@ ${@} $* "$*" $1 "${12}" $0 …
_POSITIONAL_WORD: Final = re.compile(r'(?P<q>"?)\$(?:(?P<n>[0-9@*])|\{(?P<b>[0-9]+|[@*])\})(?P=q)')


@dataclass(frozen=True)
class _Inherit:
    """What a re-read string inherits from the command that runs it."""

    wrappers: tuple[str, ...] = ()
    privileged: bool = False
    remote: bool = False
    redirects: tuple[Redirect, ...] = ()
    placeholders: tuple[str, ...] = ()  # words xargs/parallel replace by their input
    positional: _Positional | None = None  # sh -c STRING's static $0 $1 … (same shell only)
    bindings: tuple[
        tuple[str, str], ...
    ] = ()  # static values known where this text runs (same shell)


_CONTEXTS: Final = {c.value: c for c in Context}


def _context(name: str) -> Context:
    """``Context(name)``, by a dict look-up for the names of its members (the enum's own call
    is ~1 us; any other name still raises as ``Context(name)`` does)."""
    return _CONTEXTS.get(name) or Context(name)


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


# A virtual environment's activate script (venv, virtualenv, conda: `X/bin/activate`).
_VENV_ACTIVATE: Final = re.compile(r"(?:^|/)(?:bin|Scripts)/activate$")


class Reader(CodeReading, PositionReading, DefinedReading, SettingReading):
    """One reading: collects commands, pipelines, hosts, scripts and notes across re-reads."""

    def __init__(self, cwd: str | None, home: str | None) -> None:
        self.cwd = cwd
        self.home = home
        self.deadline = time.monotonic() + L.TIME_BUDGET_S
        self.commands: list[SimpleCommand] = []
        self.pipelines: list[tuple[int, ...]] = []
        self.hosts: list[str] = []
        self.functions: list[str] = []
        self.assignments: list[str] = []
        self.scripts: list[Script] = []
        self.code: list[Code] = []
        self.file_declarations: list[tuple[int, str, str]] = []
        self.function_bodies: dict[
            str, str
        ] = {}  # name -> body text, for calls (S2.1 static values)
        self._envs: list[TextEnv] = []  # the static values of each text being read, innermost last
        self._calling: set[str] = set()  # functions whose body is being read for a call
        self.written: dict[
            str, Written
        ] = {}  # files this text wrote, by path (S2.1 defined-then-run)
        self.written_cwd: str | None = None  # the folder a `cd` of this text moved to (for those)
        self.notes: list[str] = []
        self.unreadable = ""
        self.script_bytes = 0

    # --- helpers ---------------------------------------------------------------------------

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def _check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise ReadLimit(f"too slow: reading took longer than {L.TIME_BUDGET_S:g} s")

    # --- reading a text --------------------------------------------------------------------

    def read_text(
        self, text: str, context: str, depth: int, inherit: _Inherit, *, tolerant: bool = False
    ) -> list[int]:
        """Read ``text`` as shell; returns the indexes of the commands it produced.

        ``tolerant``: the text is another shell language read as sh for defence only (S2.1):
        where neither reader can parse it, that is a note, not an unreadable command.
        """
        if depth > L.MAX_REREAD_DEPTH:
            raise ReadLimit(f"too deep: strings re-read more than {L.MAX_REREAD_DEPTH} levels")
        self._check_time()
        if "\\\n" in text:
            text, joined = join_continuations(text)
            if not joined:
                self.note("line continuations next to a heredoc: read as written")
        data = text.encode("utf-8", "surrogatepass")
        if len(data) > L.MAX_COMMAND_BYTES and context != "script":
            raise ReadLimit(f"too long: a nested command of {len(data)} bytes")
        if _needs_nesting_scan(text) and max_nesting(text) > L.MAX_NESTING:
            raise ReadLimit(f"too deep: brackets nested more than {L.MAX_NESTING} levels")
        try:
            walk = walk_text(data, context, self.deadline)
        except WalkLimit as exc:
            raise ReadLimit(str(exc)) from None
        except RecursionError:
            raise ReadLimit("too deep: nesting beyond the reader's limit") from None
        where = "" if depth == 0 else f" (in {context} at depth {depth})"
        if walk.has_error:
            text, data, walk = self._repaired(text, data, walk, context, where)
        if walk.joined:
            self.note(
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
                self.note(
                    f"only tree-sitter read this{where}: "
                    f"longer than {L.MAX_SECOND_READER_BYTES} bytes"
                )
        if walk.has_error:
            self.note(f"tree-sitter read with errors{where}: {walk.error_at}")
            if second is None and not self.unreadable and not tolerant:
                self.unreadable = (
                    f"unreadable: neither reader could parse it{where} "
                    f"(tree-sitter: {walk.error_at}; bashlex: {second_err})"
                )
        # bashlex failing alone is common (case, [[ ]], quoted heredocs) and no disagreement.
        for stages in walk.pipelines:  # what feeds what, for code on a shell's input (S2.1)
            for k in range(1, len(stages)):
                for i in stages[k]:
                    walk.commands[i].fed_by = [walk.commands[j] for j in stages[k - 1]]
        self.function_bodies.update(walk.function_bodies)
        env = TextEnv(
            self._resolved(walk.bindings, text, inherit, walk.function_spans),
            text,
            dict(inherit.bindings),
            walk.function_spans,
        )
        self._envs.append(env)
        try:
            return self._read_walk(text, data, walk, second, depth, inherit, where, env)
        finally:
            self._envs.pop()

    def _read_walk(
        self,
        text: str,
        data: bytes,
        walk: Walk,
        second: tuple[RawCommand, ...] | None,
        depth: int,
        inherit: _Inherit,
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
                self.pipelines.append(flat)
        for name in walk.functions:
            if name not in self.functions:
                self.functions.append(name)
        self.assignments.extend(walk.assignments)
        produced.extend(self.binding_settings(walk.bindings, text, depth, inherit))
        for inner_text in walk.embedded:
            produced.extend(self.read_text(inner_text, "substitution", depth + 1, inherit))
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
                                self.read_text(inner, "substitution", depth + 1, inherit)
                            )
        produced.extend(self._loops(walk, depth, inherit, env))
        return produced

    def _loops(self, walk: Walk, depth: int, inherit: _Inherit, env: TextEnv) -> list[int]:
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
        self, text: str, data: bytes, walk: Walk, context: str, where: str
    ) -> tuple[str, bytes, Walk]:
        """The text both readers read instead of ``text`` when a repair of ``_repair`` makes
        tree-sitter read it without error (each repair noted); else ``text`` unchanged."""
        fixed = repair(data, self.deadline)
        if fixed is None:
            return text, data, walk
        try:
            again = walk_text(fixed[0], context, self.deadline)
        except (WalkLimit, RecursionError):
            return text, data, walk
        if again.has_error:
            return text, data, walk
        for note in fixed[1]:
            self.note(f"repaired{where}: {note}")
        return fixed[0].decode("utf-8", "surrogatepass"), fixed[0], again

    def _union(
        self,
        second: tuple[RawCommand, ...],
        surfaces: list[str],
        at: dict[int, str],
        blind: list[tuple[int, int]],
        depth: int,
        inherit: _Inherit,
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
            if inherit.positional is not None and raw.context != "function":
                words = _expand_positional(words, inherit.positional) or words  # as finalize does
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
            if surface in self.functions or any(a <= raw.start < b for a, b in blind):
                continue
            added.extend(self._add_second(raw, surface, depth, inherit, where))
        missing = sorted(h for h in set(surfaces) - seen_second if h not in ("", ":"))
        if missing:
            self.note(
                f"readers disagree{where}: tree-sitter read {', '.join(missing)} "
                f"that bashlex did not"
            )
        return added

    def _add_second(
        self, raw: RawCommand, surface: str, depth: int, inherit: _Inherit, where: str
    ) -> list[int]:
        self.note(
            f"readers disagree{where}: bashlex read {surface or 'a dynamic head'!r} "
            f"that tree-sitter did not"
        )
        idxs, _ = self.finalize(raw, depth, inherit)
        return idxs

    # --- one command -----------------------------------------------------------------------

    def _emit(self, cmd: SimpleCommand) -> int:
        if len(self.commands) >= L.MAX_COMMANDS:
            raise ReadLimit(f"too many commands: more than {L.MAX_COMMANDS}")
        self.commands.append(cmd)
        for h in hosts_in(cmd.head, cmd.argv):
            if h not in self.hosts:
                self.hosts.append(h)
        return len(self.commands) - 1

    def finalize(self, raw: RawCommand, depth: int, inherit: _Inherit) -> tuple[list[int], str]:
        """Put in the static values ``raw``'s words are known to have (S2.1), peel it, re-read
        what it runs, emit its commands: (indexes, surface head). A value only possible (set in a
        branch, say) gives one more reading of the command, beside the one as written."""
        variants: list[RawCommand] = []
        if self._envs and raw.words:
            # a declaration's names too: `x=GATESH_OPERATOR; export $x=…` exports GATESH_OPERATOR
            raw, variants = self._substitute(raw, inherit)
        idxs, surface = self._finalize(raw, depth, inherit)
        for v in variants:
            idxs = idxs + self._finalize(v, depth, inherit)[0]
        return idxs, surface

    @staticmethod
    def _positional(inherit: _Inherit, context: str, name: str) -> str | None:
        """The static value of positional parameter ``name`` (a digit) where ``inherit`` holds."""
        pos = inherit.positional
        if pos is None or not pos.known or context == "function":
            return None
        k = int(name)
        k = k + pos.shift if k else 0
        if k < len(pos.args):
            return pos.args[k].text if pos.args[k].static else None
        return None if pos.open_ended else ""

    def _resolved(
        self,
        bindings: list[Binding],
        text: str,
        inherit: _Inherit,
        functions: list[tuple[int, int]],
    ) -> list[Binding]:
        """``bindings`` with a dynamic value put in when its parts are known (``local d="$1"`` in
        a call, ``b="$a/x"`` after ``a=…``); an assignment's value is not split into words."""
        if not any(b.value is None and b.source for b in bindings):
            return bindings
        out: list[Binding] = []
        # HOME is the home folder the reader resolves `~` with, unless the text assigns it
        home = (
            None
            if any(b.name == "HOME" for b in bindings)
            else (self.home or os.path.expanduser("~"))
        )
        for b in bindings:
            made = temp_made(b.source) if b.value is None and b.source else None
            if made is not None:
                b = replace(b, value=made)  # `t=$(mktemp)`: a new name in the temporary folder
            if b.value is None and b.source:
                known = TextEnv(out, text, dict(inherit.bindings), functions)
                at = b.start
                in_function = any(a <= at < z for a, z in functions)

                def lookup(
                    n: str, at: int = at, known: TextEnv = known, in_function: bool = in_function
                ) -> str | None:
                    if n.isdigit():
                        # a function's $1 … are its call's words, not the text's
                        return None if in_function else self._positional(inherit, "", n)
                    value = known.certain(n, at)
                    return home if value is None and n == "HOME" else value

                got = expand(Word(b.source, False), lookup)
                if got is not None and len(got) <= 1:
                    b = replace(b, value=got[0].text if got else "")
            out.append(b)
        return out

    def _substitute(
        self, raw: RawCommand, inherit: _Inherit
    ) -> tuple[RawCommand, list[RawCommand]]:
        if all(w.static for w in raw.words) and not raw.target_words:
            return raw, []
        env = self._envs[-1]

        def certain(name: str) -> str | None:
            if name.isdigit():
                value = self._positional(inherit, raw.context, name)
                return value if value is not None else env.certain(name, raw.start)
            return env.certain(name, raw.start)

        words = _expand_all(raw.words, certain)
        changed = words is not raw.words
        redirects = list(raw.redirects)
        for k, w in raw.target_words.items():
            got = expand(w, certain)
            if got is not None and len(got) == 1 and k < len(redirects):
                r = redirects[k]
                redirects[k] = Redirect(r.op, got[0].text, r.fd, r.writes)
                changed = True
        if changed:
            head = (
                raw.words[0].text
                if not raw.words[0].static and words and words[0].static
                else raw.expanded_head
            )
            self.note(f"static values put in: {raw.raw[:80]!r}")
            raw = replace(raw, words=words, redirects=redirects, expanded_head=head)
        if raw.variant:
            return raw, []
        names = list(
            dict.fromkeys(
                n for w in raw.words if not w.static for n in names_in(w) if env.possible(n)
            )
        )
        if not names:
            return raw, []
        variants: list[RawCommand] = []
        for combo in itertools.islice(
            itertools.product(*(env.possible(n) for n in names)), MAX_VARIANTS
        ):
            values = dict(zip(names, combo, strict=True))
            alt = _expand_all(raw.words, lambda n, v=values: v.get(n, certain(n)))  # type: ignore[misc]
            if alt is not raw.words:
                head = raw.words[0].text if not raw.words[0].static else raw.expanded_head
                variants.append(replace(raw, words=alt, variant=True, expanded_head=head))
        if variants:
            self.note(f"read once per value its variables may have: {raw.raw[:80]!r}")
        return raw, variants

    def _finalize(self, raw: RawCommand, depth: int, inherit: _Inherit) -> tuple[list[int], str]:
        redirects = tuple(raw.redirects) + inherit.redirects
        pos = inherit.positional
        if pos is not None and raw.context != "function" and raw.words and not raw.declaration:
            # `sh -c '"$@"' _ rm -rf ~` runs `rm -rf ~`: positional parameters are the static
            # words after the string (bypass_failures #3). A function's "$@" is its own.
            expanded = _expand_positional(raw.words, pos)
            if expanded is not None:
                raw = replace(raw, words=expanded)
        if raw.declaration or not raw.words:
            head = head_of(raw.words[0].text) if raw.words else ":"
            cmd = SimpleCommand(
                tuple(raw.words),
                head,
                wrappers=inherit.wrappers,
                privileged=inherit.privileged,
                assignments=tuple(raw.assignments),
                redirects=redirects,
                context=_context(raw.context),
                raw=raw.raw,
                depth=depth,
                remote=inherit.remote,
            )
            idx = self._emit(cmd)
            # `export PAGER='…'` gives later commands a command to run: read it as one.
            settings = (
                [w.text for w in raw.words[1:] if w.static and "=" in w.text]
                if raw.declaration
                else []
            )
            runs, opaque = self.env_commands(
                tuple(raw.assignments) + tuple(settings),
                depth,
                _Inherit(inherit.wrappers, inherit.privileged, inherit.remote),
            )
            self._env_opaque(idx, opaque)
            if raw.declaration:
                self.declaration_opaque(cmd, idx)
            return [idx, *runs], head
        p = peel(raw.words)
        wrappers = inherit.wrappers + tuple(p.wrappers)
        privileged = inherit.privileged or p.privileged
        context = p.context or raw.context
        assignments = tuple(raw.assignments) + tuple(p.assignments)
        surface = _surface(p.argv, p.shell_string is not None)
        if p.placeholders:
            _normalise_placeholders(p)
        if p.inputs:
            idxs = self._parallel(
                p,
                raw,
                depth,
                _Inherit(wrappers, privileged, inherit.remote, redirects, tuple(p.placeholders)),
            )
            if idxs is not None:
                return idxs, surface
            if p.shell_string is not None and not p.shell_string.text:
                p.shell_string = Word(raw.raw, False)  # `parallel ::: $(…)`: the runner stays
        if p.shell_string is not None:
            inner = _Inherit(wrappers, privileged, inherit.remote, redirects)
            idxs = self._reread(p.shell_string, p.shell_via, depth, inner, raw)
            if idxs is not None:
                return idxs, surface
            argv = raw.words  # dynamic string: the outer command stays
            head = head_of(argv[0].text) if argv[0].static else ""
            wrappers, privileged = inherit.wrappers, inherit.privileged
        else:
            argv = p.argv
            head = head_of(argv[0].text) if argv[0].static else ""
        if not head:
            self.note(f"dynamic head: {raw.raw[:80]!r}")
        cmd = SimpleCommand(
            tuple(argv),
            head,
            wrappers=wrappers,
            privileged=privileged,
            assignments=assignments,
            redirects=redirects,
            context=_context(context),
            raw=raw.raw,
            depth=depth,
            remote=inherit.remote,
            expanded_head=raw.expanded_head if argv is p.argv or argv == raw.words else "",
        )
        inner = _Inherit(
            (*wrappers, head),
            privileged,
            inherit.remote,
            placeholders=tuple(p.placeholders) or inherit.placeholders,
        )
        env_runs, env_opaque = (
            self.env_commands(assignments, depth, inner) if assignments else ([], [])
        )
        if head in PARSED_SHELLS:
            idxs = self._shell(cmd, raw, depth, inner)
            if idxs is not None:
                if cmd.writes:
                    self.record_writes(cmd, raw, depth, inner)
                if env_opaque:
                    self._env_opaque(idxs[0] if idxs else self._emit(cmd), env_opaque)
                return env_runs + idxs, surface
        if head == "eval" and len(argv) > 1:
            fed = self._eval_text(argv[1:])
            if fed.text is not None and not fed.dynamic:
                return env_runs + self.read_text(
                    fed.text,
                    Context.EVAL,
                    depth + 1,
                    replace(inner, redirects=redirects, positional=inherit.positional),
                ), surface
        if head in ("cd", "pushd") and self.written:
            self.follow_cd(argv)  # later runs of what this text fetched are found from there
        if pos is not None and head in ("shift", "set"):
            _follow_positional(pos, head, argv)
        idx = self._emit(cmd)
        out = [idx, *env_runs]
        if env_opaque:
            self._env_opaque(idx, env_opaque)
        if head in self.function_bodies and not p.wrappers:
            out.extend(self._call(cmd, raw, depth, inherit))
        if head in POSITION_PROGRAMS:
            out.extend(self.read_positions(cmd, raw, idx, depth, inner))
        if head in SETTING_BUILTINS:
            out.extend(self.builtin_settings(cmd, raw, idx, depth, inner))
        ran = self.run_written(cmd, raw, idx, depth, inner) if self.written else None
        if ran is not None:
            out.extend(ran)  # a file this text wrote earlier, run (S2.1 defined, then run)
        elif head in SHELLS and head not in PARSED_SHELLS:
            out.extend(self.foreign_shell(cmd, raw, idx, depth, inner))
        elif head == "eval" and len(argv) > 1:  # a bare `eval` runs nothing
            self.note(f"eval of a dynamic string: {raw.raw[:80]!r}")
            out.extend(self.run_fed(idx, "eval", fed, depth, replace(inner, redirects=redirects)))
        elif head in SOURCE_BUILTINS and len(argv) > 1:
            out.extend(self._source(cmd, raw, idx, depth, inner))
        elif head == "alias":
            out.extend(self._alias(argv, raw, idx, depth, inner))
        elif head == "find":
            out.extend(self._find(cmd, raw, depth, inherit, wrappers, privileged))
        elif head == "ssh":
            out.extend(self._ssh(cmd, raw, idx, depth, inherit, wrappers, privileged))
        elif head in ("make", "gmake", "bmake") and _MAKEFILE_ON_STDIN.fullmatch(
            " ".join(w.text for w in argv[1:] if w.static)
        ):
            out.extend(self._make_stdin(raw, idx, depth, inner))
        elif is_interpreter(head):
            out.extend(self._interpreter(cmd, raw, idx, depth, inner))
        elif (
            argv[0].static
            and "/" in argv[0].text
            and not argv[0].text.startswith(_SYSTEM_BIN_PREFIXES)
        ):
            out.extend(self._script(argv[0], "", depth, inner))
        if head in RECIPE_RUNNERS and self.written:
            out.extend(self.run_recipes(cmd, idx, depth, inner))
        out.extend(self.record_writes(cmd, raw, depth, inner))
        return out, surface

    def _make_stdin(self, raw: RawCommand, idx: int, depth: int, inherit: _Inherit) -> list[int]:
        """``make -f -`` fed a makefile on its input (a heredoc, a here-string, or a pipe from
        ``echo``/``printf``): each recipe line (a tab first, or after ``target: ;``) is run by a
        shell, so it is read as shell; a makefile only known when it runs is opaque code."""
        body = self._stdin_body(raw)
        if body is None:
            fed = self.fed_input(raw)
            if fed is None:
                return []
            if fed.text is None or fed.dynamic:
                why = f"make runs the recipes of a makefile on its input, {fed.why or 'unknown'}"
                self.code.append(Code(idx, "make", fed.source, opaque=why))
                self.note(f"opaque code: {why}")
                return []
            body = (fed.text, True)
        recipes = make_recipes(body[0])
        if not recipes:
            return []
        self.note("make's recipe lines from its input are read as shell")
        return self.read_text("\n".join(recipes), "heredoc", depth + 1, inherit)

    def _call(
        self, cmd: SimpleCommand, raw: RawCommand, depth: int, inherit: _Inherit
    ) -> list[int]:
        """A call of a function this text defined, with arguments: its body is read again with
        ``$1 …`` the call's words (S2.1), once per function being called (no recursion)."""
        body = self.function_bodies[cmd.head]
        if cmd.head in self._calling or len(cmd.argv) < 2 or not _USES_PARAMETERS.search(body):
            return []
        env = self._envs[-1] if self._envs else None
        known = {**dict(inherit.bindings), **(env.known_at(raw.start) if env else {})}
        self._calling.add(cmd.head)
        try:
            return self.read_text(
                body,
                Context.CALL,
                depth + 1,
                _Inherit(
                    inherit.wrappers,
                    inherit.privileged,
                    inherit.remote,
                    positional=_Positional(tuple(cmd.argv)),
                    bindings=tuple(known.items()),
                ),
            )
        finally:
            self._calling.discard(cmd.head)

    def _env_opaque(self, index: int, why: list[str]) -> None:
        for w in why:
            self.code.append(Code(index, self.commands[index].head, CodeSource.SETTING, opaque=w))
            self.note(f"opaque code: {w}")

    def _reread(
        self, word: Word, via: str, depth: int, inherit: _Inherit, raw: RawCommand
    ) -> list[int] | None:
        if not word.static:
            self.note(f"{via} runs a dynamic string: {raw.raw[:80]!r}")
            return None
        return self.read_text(
            word.text,
            via if via in ("sh -c", "eval", "su -c", "remote", "xargs") else "sh -c",
            depth + 1,
            inherit,
        )

    def _parallel(
        self, p: Peeled, raw: RawCommand, depth: int, inherit: _Inherit
    ) -> list[int] | None:
        """``parallel CMD ::: a b``: read CMD once per input, the input put in place of ``{}``.

        None (read the command once, unexpanded) when the inputs are dynamic, come from files,
        or are more than ``MAX_PARALLEL_INPUTS``.
        """
        inputs = p.inputs or []
        if (
            p.input_files
            or not all(w.static for w in inputs)
            or len(inputs) > L.MAX_PARALLEL_INPUTS
        ):
            self.note(f"parallel inputs not expanded: {raw.raw[:80]!r}")
            return None
        out: list[int] = []
        for inp in inputs:
            if p.shell_string is not None:
                if not p.shell_string.static:
                    return None
                text = p.shell_string.text
                line = inp.text if not text else _put_input(text, inp.text)
                out.extend(self.read_text(line, "xargs", depth + 1, inherit))
                continue
            words = [Word(w.text.replace("{}", inp.text), w.static) for w in p.argv]
            if not any("{}" in w.text for w in p.argv):
                words.append(inp)
            sub = RawCommand(
                words,
                "xargs",
                raw.frame,
                raw.start,
                raw.raw,
                assignments=list(raw.assignments) + p.assignments,
            )
            idxs, _ = self.finalize(sub, depth, inherit)
            out.extend(idxs)
        return out

    def _shell(
        self, cmd: SimpleCommand, raw: RawCommand, depth: int, inner: _Inherit
    ) -> list[int] | None:
        """A Bourne shell: a -c STRING replaces it; a script operand, or the program on its input
        (a heredoc, a pipe, `< FILE`, `<(…)`), is read too. None: it reads a terminal."""
        args = cmd.argv[1:]
        has_c = reads_input = False
        i = 0
        while i < len(args):
            a = args[i]
            if not a.static:
                break
            s = a.text
            if s == "--" or s == "-":
                i += 1
                break
            if s in SHELL_OPTS_WITH_ARG:
                i += 2
                continue
            if s.startswith("--"):
                i += 1
                continue
            if s[:1] in "-+" and len(s) > 1:
                if s[0] == "-" and "c" in s[1:]:
                    has_c = True
                if s[0] == "-" and "s" in s[1:]:
                    reads_input = True  # `sh -s ARGS`: the operands are $1 …, the program is stdin
                i += 1
                continue
            break
        operand = args[i] if i < len(args) else None
        redirects = tuple(r for r in cmd.redirects if r.op not in ("<<", "<<-", "<<<"))
        inner = replace(inner, wrappers=inner.wrappers, redirects=redirects)
        if has_c:
            if operand is None:
                self.note(f"{cmd.head} -c without a command string")
                return None
            if cmd.context == "xargs" and operand.text.strip() in ("{}", *inner.placeholders):
                self.note(f"{cmd.head} -c runs its input as a command: {raw.raw[:80]!r}")
                return None
            # The words after the string are $0 $1 …; xargs and find -exec append more.
            positional = _Positional(
                tuple(args[i + 1 :]),
                open_ended=bool(inner.placeholders) or cmd.context in ("xargs", "find -exec"),
            )
            via = "xargs" if cmd.context == "xargs" else "sh -c"
            if not operand.static and whole_substitution(operand) is not None:
                evaluated = self._eval_text([operand])
                if evaluated.text is None or evaluated.dynamic:
                    idx = self._emit(cmd)
                    return [idx, *self.run_fed(idx, cmd.head, evaluated, depth, inner)]
                operand = Word(evaluated.text)
            return self._reread(operand, via, depth, replace(inner, positional=positional), raw)
        fed: Fed | None = None
        if operand is not None and not reads_input:
            sub = None if operand.static else whole_substitution(operand)
            if sub is not None and sub[0] == "<(":
                fed = self.output_of_text(sub[1], CodeSource.PROCESS_SUBSTITUTION)
            elif not (operand.static and operand.text in STDIN_NAMES):
                idx = self._emit(cmd)
                return [idx, *self._script(operand, cmd.head, depth, inner)]
        if fed is None:
            fed = self.fed_input(raw, pipe=cmd.context not in (Context.XARGS, Context.FIND_EXEC))
        if fed is None:
            return None  # a terminal: an interactive shell (the rater's escape rules judge it)
        if fed.source is CodeSource.HEREDOC and fed.text is not None and not fed.dynamic:
            return self.read_text(fed.text, Context.HEREDOC, depth + 1, inner)
        idx = self._emit(cmd)
        return [idx, *self.run_fed(idx, cmd.head, fed, depth, inner)]

    def _eval_text(self, words: list[Word] | tuple[Word, ...]) -> Fed:
        """The text ``eval WORDS…`` (or ``sh -c WORD``) runs: the words joined when static, a
        substitution's output when the one word is ``"$(…)"`` and that output is static."""
        if all(w.static for w in words):
            return Fed(CodeSource.INLINE, " ".join(w.text for w in words), "its arguments")
        if len(words) == 1:
            sub = whole_substitution(words[0])
            if sub is not None and sub[0] == "$(":
                fed = self.output_of_text(sub[1], CodeSource.SUBSTITUTION)
                return fed if fed.text is None else replace(fed, text=fed.text.rstrip("\n"))
        dynamic = " ".join(w.text for w in words if not w.static)
        return Fed(CodeSource.INLINE, None, f"text only known when it runs ({dynamic[:60]})")

    def _source(
        self, cmd: SimpleCommand, raw: RawCommand, idx: int, depth: int, inner: _Inherit
    ) -> list[int]:
        """``source FILE`` / ``. FILE``: the file is read as a script; ``<(…)`` and
        ``/dev/stdin`` give the program on its input, read as code of this shell."""
        word = cmd.argv[1]
        sub = None if word.static else whole_substitution(word)
        if sub is not None and sub[0] == "<(":
            return self.run_fed(
                idx,
                cmd.head,
                self.output_of_text(sub[1], CodeSource.PROCESS_SUBSTITUTION),
                depth,
                inner,
            )
        if word.static and word.text in STDIN_NAMES:
            fed = self.fed_input(raw)
            return [] if fed is None else self.run_fed(idx, cmd.head, fed, depth, inner)
        return self._script(word, "sh", depth, inner)

    def _alias(
        self, argv: list[Word], raw: RawCommand, index: int, depth: int, inherit: _Inherit
    ) -> list[int]:
        """``alias NAME='VALUE'`` counts as running VALUE (as a function definition runs its body,
        S2; bypass_failures #8): each static value is re-read as a command (context "alias")."""
        out: list[int] = []
        for w in argv[1:]:
            name, eq, value = w.text.partition("=")
            if not eq or not name or name.startswith("-"):
                continue
            if not w.static:
                # What the alias runs is only known when this runs (S10: reading an alias is
                # reading its code; what cannot be read is opaque code).
                self._setting_opaque(
                    index, f"alias {name[:40]} is set to a value only known when it runs"
                )
                continue
            if _NEVER_A_TOKEN.search(name):
                # A blank or operator always ends an unquoted word, and a quoted word is never
                # alias-expanded: no command line can use this alias (bash also refuses it).
                self.note(f"alias {name[:40]!r} can never be used: its value is not read")
                continue
            # A zsh global alias (`alias -g X='| cut -f2'`) may be a piece of a pipeline or list:
            # the operators joining it to its neighbours run nothing, the commands are read.
            piece = _EDGE_OPERATORS.sub("", value)
            if piece != value:
                self.note(
                    f"alias value {value[:40]!r} joins a pipeline or list: read without "
                    f"the joining operator"
                )
            if piece.strip():
                out.extend(self.read_text(piece, "alias", depth + 1, inherit))
        return out

    def _find(
        self,
        cmd: SimpleCommand,
        raw: RawCommand,
        depth: int,
        inherit: _Inherit,
        wrappers: tuple[str, ...],
        privileged: bool,
    ) -> list[int]:
        out: list[int] = []
        argv = cmd.argv
        i = 1
        while i < len(argv):
            if argv[i].static and argv[i].text in FIND_EXEC:
                j = i + 1
                while j < len(argv) and not (argv[j].static and argv[j].text in (";", "+")):
                    j += 1
                words = list(argv[i + 1 : j])
                if words:
                    sub = RawCommand(words, "find -exec", raw.frame, raw.start, raw.raw)
                    idxs, _ = self.finalize(
                        sub, depth, _Inherit((*wrappers, "find"), privileged, inherit.remote)
                    )
                    out.extend(idxs)
                i = j + 1
                continue
            i += 1
        return out

    def _ssh(
        self,
        cmd: SimpleCommand,
        raw: RawCommand,
        idx: int,
        depth: int,
        inherit: _Inherit,
        wrappers: tuple[str, ...],
        privileged: bool,
    ) -> list[int]:
        host, rest = ssh_split(cmd.argv)
        if host is None:
            return []
        remote = _Inherit((*wrappers, "ssh"), False, True)
        out: list[int] = []
        if rest and not all(w.static for w in rest):
            # S2.1: a payload only known when it runs is opaque code, on another host as here.
            self.note(f"ssh runs a dynamic remote command: {raw.raw[:80]!r}")
            self.code.append(
                Code(
                    idx,
                    cmd.head,
                    CodeSource.INLINE,
                    opaque=(
                        f"ssh runs a command on another host that is only known when it runs "
                        f"({' '.join(w.text for w in rest)[:60]})"
                    ),
                )
            )
        elif rest:
            out = self.read_text(" ".join(w.text for w in rest), "remote", depth + 1, remote)
        # What ssh is fed on stdin goes to the remote side: with no command a login shell runs it,
        # and `bash`, `sh -s` and the like run it too. A heredoc is always read (reading only adds
        # commands); a pipe or a file is the program only when a shell on the other side reads it.
        body = self._stdin_body(raw)
        if body is not None:
            self.note("ssh's input is read as commands run on the remote host")
            out.extend(self.read_text(body[0], "remote", depth + 1, remote))
        elif _remote_shell_reads_input(rest):
            fed = self.fed_input(raw)
            if fed is not None:
                self.note("ssh's input is read as commands run on the remote host")
                out.extend(
                    self.run_fed(
                        idx,
                        "ssh",
                        replace(fed, why=f"{fed.why} on {host.text[:40]}"),
                        depth,
                        remote,
                    )
                )
        return out

    @staticmethod
    def _stdin_body(raw: RawCommand) -> tuple[str, bool] | None:
        """A heredoc's or here-string's text, and whether it is static."""
        if raw.heredoc is not None:
            body, quoted = raw.heredoc
            return body, quoted or ("$" not in body and "`" not in body)
        if raw.herestring is not None:
            w = raw.herestring
            return w.text, w.static
        return None

    def _interpreter(
        self, cmd: SimpleCommand, raw: RawCommand, idx: int, depth: int, inner: _Inherit
    ) -> list[int]:
        """An interpreter: a script operand is model context; inline code of a language the
        rater does not model is opaque; a program on its input is context, or opaque when unknown."""
        lang = interpreter(cmd.head)
        assert lang is not None
        args = cmd.argv[1:]
        how = invocation(lang, [w.text for w in args], [w.static for w in args])
        if how.unknown or how.module:
            return []
        if how.inline:
            if not lang.modelled:
                self.code.append(
                    Code(
                        idx,
                        cmd.head,
                        CodeSource.INLINE,
                        opaque=(
                            f"{cmd.head} runs {cmd.head} code, a language gatesh does not read"
                        ),
                    )
                )
            return []  # inline code: the policy and the rater read it from argv
        if how.script is not None:
            self._script(Word(how.script), cmd.head, depth, inner)
            return []
        from_input = how.stdin
        if not from_input:
            return []
        fed = self.fed_input(raw, pipe=cmd.context not in (Context.XARGS, Context.FIND_EXEC))
        if fed is None:
            return []  # a terminal: an interactive interpreter (the rater judges it)
        if fed.text is not None and not fed.dynamic:
            self._context_script("<stdin>", cmd.head, fed.text)
            opaque = (
                ""
                if lang.modelled
                else f"{cmd.head} runs {cmd.head} code, a language gatesh does not read"
            )
            self.code.append(
                Code(
                    idx,
                    cmd.head,
                    fed.source,
                    text=fed.text[: L.MAX_CONTEXT_SCRIPT_BYTES],
                    opaque=opaque,
                )
            )
            return []
        if fed.text is not None:
            self._context_script("<stdin>", cmd.head, fed.text)
            fed = replace(fed, text=None, why=f"{fed.why}, holding values only known when it runs")
        return self.run_fed(idx, cmd.head, fed, depth, inner)

    def _context_script(self, path: str, interp: str, text: str) -> None:
        note = ""
        if len(text) > L.MAX_CONTEXT_SCRIPT_BYTES:
            text = text[: L.MAX_CONTEXT_SCRIPT_BYTES]
            note = f"shown only the first {L.MAX_CONTEXT_SCRIPT_BYTES} characters"
        self.scripts.append(Script(path, interp, text, note))

    # --- scripts on disk -------------------------------------------------------------------

    def _resolve(self, path: str) -> str:
        if path.startswith("~/") or path == "~":
            home = self.home or os.path.expanduser("~")
            path = home + path[1:]
        if not os.path.isabs(path):
            path = os.path.join(self.cwd or os.getcwd(), path)
        return path

    def _certain_dir(self) -> str | None:
        """The directory the command being read runs in, when the text says it for certain: the
        reading's own directory moved by every earlier top-level ``cd DIR`` with a static DIR.
        None when a directory change is scoped (a subshell, a function), dynamic, a stack move,
        or the command runs under a wrapper that may change it (``env -C``, ``sudo -D``)."""
        if self.cwd is None or not self.commands:
            return None
        *before, current = self.commands
        if (
            current.context is not Context.TOP
            or current.depth
            or CHDIR_WRAPPERS.intersection(current.wrappers)
        ):
            return None
        cwd = self.cwd
        for c in before:
            if c.head not in CD_HEADS:
                continue
            if c.head != "cd" or c.context is not Context.TOP or c.depth or c.wrappers:
                return None
            args = [w for w in c.argv[1:] if not (w.static and w.text in ("-L", "-P", "--"))]
            if not args:
                cwd = self.home or os.path.expanduser("~")
                continue
            if len(args) > 1 or not args[0].static or args[0].text == "-":
                return None
            target = args[0].text
            if target == "~" or target.startswith("~/"):
                target = (self.home or os.path.expanduser("~")) + target[1:]
            cwd = os.path.normpath(os.path.join(cwd, target))
        return cwd

    def _absent(self, name: str, where: str) -> bool:
        """Whether the script ``name`` cannot be found from ``where``: not there, nor (a name
        without a slash, which bash then looks up on PATH) on PATH; nor written by this text."""
        path = os.path.normpath(name if os.path.isabs(name) else os.path.join(where, name))
        if os.path.lexists(path) or self.written_at(name) is not None:
            return False
        if any(c.head not in NAMED_FILES_ONLY for c in self.commands[:-1]):
            return False  # an earlier command may make files it does not name (curl -O, tar x)
        if others_may_create(path):
            return False  # another user may put it there before it runs
        if "/" not in name:
            for folder in os.environ.get("PATH", "").split(os.pathsep):
                found = os.path.join(folder, name)
                if folder and (os.path.lexists(found) or others_may_create(found)):
                    return False
        return True

    def _venv_own(self, name: str, where: str) -> bool:
        """Whether the activate script ``name``, not there now, can only be the one a virtual
        environment tool earlier in this text makes: an earlier command makes a virtual
        environment in the script's folder, and every other earlier command makes no file it
        does not name (so nothing else can put a script there first)."""
        path = os.path.normpath(name if os.path.isabs(name) else os.path.join(where, name))
        if os.path.lexists(path) or self.written_at(name) is not None or others_may_create(path):
            return False
        env = os.path.dirname(os.path.dirname(path))
        made = False
        for c in self.commands[:-1]:
            folder = venv_made(c.head, c.args)
            if folder is not None:
                made = made or os.path.normpath(os.path.join(where, folder)) == env
            elif c.head not in NAMED_FILES_ONLY:
                return False
        return made

    def _script(self, word: Word, interp: str, depth: int, inherit: _Inherit) -> list[int]:
        """Read a script the command runs: a shell script is gated, others are model context.

        ``interp`` is the shell or interpreter head running it; "" means "by its shebang". A
        relative path is looked up where the text says the command runs (after ``cd DIR``). A
        virtual environment's activate script, or a script a shell is told to run (``bash
        x.sh``, ``source x.sh``), that is not there, where nothing earlier in the text can have
        made it and no other user can put it, runs nothing: the shell fails to open it. Any
        other script that is not there stays unread (a note, not a pass).
        """
        what = self.written_at(word.text) if self.written and word.static else None
        if what is not None:
            return self.run_text(
                len(self.commands) - 1,
                word.text,
                what,
                interp or "sh",
                depth,
                inherit,
                shebang=not interp,
            )
        if not word.static:
            self.scripts.append(Script(word.text, interp or "?", None, "dynamic path"))
            self.note(f"runs a script whose path is dynamic: {word.text[:80]!r}")
            return []
        path = self._resolve(word.text)
        explicit = bool(interp)
        where = self._certain_dir()
        if where is not None and not word.text.startswith("~"):
            if (
                _VENV_ACTIVATE.search(word.text) or (explicit and interp in PARSED_SHELLS)
            ) and self._absent(word.text, where):
                # a script a shell is told to run (or a virtual environment's activate script)
                # that is not there, and that nothing can put there before it runs: the shell
                # fails to open it and runs nothing (one that is there is read like any script;
                # a file changed between the check and the run is the same exposure either way)
                self.scripts.append(Script(word.text, interp or "?", None, ABSENT))
                return []
            if _VENV_ACTIVATE.search(word.text) and self._venv_own(word.text, where):
                self.scripts.append(Script(word.text, interp or "?", None, VENV_OWN))
                return []
            if not os.path.isabs(word.text):
                path = os.path.join(where, word.text)
        try:
            size = os.stat(path).st_size
            if not os.path.isfile(path):
                return []
            if size > L.MAX_SCRIPT_BYTES:
                self.scripts.append(Script(word.text, interp or "?", None, "too large"))
                self.note(f"script {word.text!r} is too large to read ({size} bytes)")
                return []
            with open(path, "rb") as fh:
                data = fh.read(L.MAX_SCRIPT_BYTES + 1)
        except OSError as exc:
            if not explicit or interp not in PARSED_SHELLS:
                # ./x or `bun add pkg`: no file to read; the head and argv say enough
                return []
            self.scripts.append(Script(word.text, interp, None, f"unreadable: {exc.strerror}"))
            self.note(f"script {word.text!r} could not be read: {exc.strerror}")
            return []
        if not explicit:
            interp = _shebang(data)
            if not interp:
                return []
        if b"\x00" in data[:4096]:
            self.scripts.append(Script(word.text, interp, None, "binary"))
            self.note(f"script {word.text!r} is binary")
            return []
        text = data.decode("utf-8", "replace")
        if interp in PARSED_SHELLS:
            self.script_bytes += len(data)
            if self.script_bytes > L.MAX_SCRIPT_TOTAL_BYTES:
                self.scripts.append(Script(word.text, interp, None, "too large"))
                self.note(f"scripts together exceed {L.MAX_SCRIPT_TOTAL_BYTES} bytes")
                return []
            self.scripts.append(Script(word.text, interp, text))
            return self.read_text(text, "script", depth + 1, inherit)
        self._context_script(word.text, interp, text)
        return []


# A function body that uses its parameters ($1, ${2}, "$@", $*, $#): a call is read with them.
_USES_PARAMETERS: Final = re.compile(r"\$(?:[1-9@*#]|\{[1-9@*#])")


def _expand_all(words: list[Word], lookup: Callable[[str], str | None]) -> list[Word]:
    """``words`` with every word whose parameters ``lookup`` knows expanded (``words`` itself,
    the same list object, when none is)."""
    out: list[Word] = []
    changed = False
    for w in words:
        got = None if w.static else expand(w, lookup)
        if got is None:
            out.append(w)
        else:
            out.extend(got)
            changed = True
    return out if changed else words


def _remote_shell_reads_input(rest: list[Word]) -> bool:
    """Whether ssh's remote command (``rest``) runs a shell that reads its input: none at all (a
    login shell), or a shell named without -c (``bash -s``, ``sh``)."""
    if not rest:
        return True
    words = rest[0].text.split() if len(rest) == 1 and rest[0].static else [w.text for w in rest]
    if not words or head_of(words[0]) not in SHELLS:
        return False
    return not any(w.startswith("-") and not w.startswith("--") and "c" in w[1:] for w in words[1:])


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


def _expand_positional(words: list[Word], pos: _Positional) -> list[Word] | None:
    """``words`` with each whole-word positional parameter put as its value (None: no change).

    Unquoted, a static value is split at blanks as bash would (``$1`` = "rm -rf ~" runs rm);
    a parameter past the known arguments stays dynamic when more may be appended, else is empty.
    """
    if not pos.known:
        return None
    out: list[Word] = []
    changed = False
    for w in words:
        m = None if w.static else _POSITIONAL_WORD.fullmatch(w.text)
        if m is None:
            out.append(w)
            continue
        changed = True
        name = m.group("n") or m.group("b")
        quoted = bool(m.group("q"))
        vals: list[Word]
        if name in ("@", "*"):
            vals = list(pos.args[1 + pos.shift :])
            if name == "*" and quoted:
                vals = [Word(" ".join(v.text for v in vals), all(v.static for v in vals))]
            if pos.open_ended:
                vals.append(w)
        else:
            k = int(name)
            k = k + pos.shift if k else 0
            if k < len(pos.args):
                vals = [pos.args[k]]
            else:
                vals = [w] if pos.open_ended else [Word("")] if quoted else []
        if not quoted:
            vals = [
                part
                for v in vals
                for part in ([Word(x) for x in v.text.split()] if v.static else [v])
            ]
        out.extend(vals)
    return out if changed else None


def _follow_positional(pos: _Positional, head: str, argv: list[Word]) -> None:
    """Track ``shift N`` and ``set -- …`` (which replaces the parameters) in source order."""
    args = argv[1:]
    if head == "shift":
        if not args:
            pos.shift += 1
        elif args[0].static and args[0].text.isdigit():
            pos.shift += int(args[0].text)
        else:
            pos.known = False
        return
    k = 0
    while k < len(args):
        a = args[k]
        if not a.static or a.text == "--" or a.text[:1] not in "-+":
            pos.known = False  # `set a b` / `set -- a b` gives new parameters
            return
        k += 2 if a.text in ("-o", "+o") else 1


def _put_input(line: str, value: str) -> str:
    """The command line parallel runs for one input: ``{}`` replaced, or the input appended."""
    quoted = shlex.quote(value)
    return line.replace("{}", quoted) if "{}" in line else f"{line} {quoted}"


def _shebang(data: bytes) -> str:
    """The head of the interpreter a shebang names ("" when none); ``env`` is looked through."""
    head = shebang_head(data[:4096].decode("utf-8", "replace"))
    if head in SHELLS or is_interpreter(head):
        return head
    return ""


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


def _written(paths: Sequence[PathEffect]) -> frozenset[str] | None:
    """The paths the line writes, or None when it writes one only known when it runs."""
    out: set[str] = set()
    for e in paths:
        if e.direction.writes:
            if not e.resolved:
                return None
            out.add(e.resolved)
    return frozenset(out)


def make_facts(reader: Reader, text: str) -> Facts:
    """Facts from a finished reading (path effects computed last, from the executed commands)."""
    assigns_home = any(a.startswith("HOME=") for a in reader.assignments) or any(
        a.startswith("HOME=") for c in reader.commands for a in c.assignments
    )
    paths = path_effects(
        reader.commands,
        reader.cwd,
        reader.home,
        assigns_home=assigns_home,
        pipelines=reader.pipelines,
        code=reader.code,
    )
    written = _written(paths)
    reader.file_settings(written)
    return Facts(
        text=text,
        commands=tuple(reader.commands),
        pipelines=tuple(reader.pipelines),
        hosts=tuple(reader.hosts),
        functions=tuple(reader.functions),
        assignments=tuple(reader.assignments),
        scripts=tuple(reader.scripts),
        code=tuple(reader.code),
        paths=paths,
        paths_cut=len(paths) >= MAX_EFFECTS,
        variables=variables(reader.commands, reader.assignments, reader.cwd, written),
        notes=tuple(reader.notes),
        readable=not reader.unreadable,
        unreadable=reader.unreadable,
    )

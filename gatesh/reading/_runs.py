"""Commands that run other text: the text is found and read as what runs (S2.1).

``sh -c STRING`` and a shell fed its program, ``eval``, ``source FILE``, ``alias NAME=VALUE``,
``find -exec``, ``ssh HOST CMD`` (and its input), ``parallel CMD ::: inputs``, ``make -f -``,
an interpreter's script or input, and a call of a function this text defined. Each method reads
the text with the reader's :class:`~._state.Again` and returns the indexes of the commands it
produced; what cannot be seen is a note or opaque code, never a pass.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from typing import Final

from gatesh._types import Code, CodeSource, Context, SimpleCommand, Word
from gatesh.vocab.programs.interpreters import interpreter, invocation
from gatesh.vocab.programs.shells import SHELL_OPTS_WITH_ARG, SHELLS, STDIN_NAMES

from . import _limits as L
from ._code import CodeReading, Fed, whole_substitution
from ._defined import make_recipes
from ._hosts import ssh_split
from ._peel import Peeled, head_of
from ._positional import Positional
from ._settings import SettingReading
from ._state import Again, Inherit, ReadState
from ._tables import FIND_EXEC
from ._walk import RawCommand

# The ways of running a string (a peeled wrapper's ``shell_via``) that are contexts of their own;
# any other way (``sudo -c``, ``flock -c``) reads the string as ``sh -c`` does.
_VIA_CONTEXTS: Final = frozenset(
    {Context.SH_C, Context.EVAL, Context.SU_C, Context.REMOTE, Context.XARGS}
)
# Characters that end an unquoted shell word: an alias name holding one can never be expanded.
_NEVER_A_TOKEN: Final = re.compile(r"[ \t\n|&;()<>]")
# Pipeline and list operators at the very start or end of an alias value (with blanks around).
_EDGE_OPERATORS: Final = re.compile(r"\A\s*(?:\|\||&&|\|&|\|)\s*|\s*(?:\|\||&&|\|&|\|)\s*\Z")
# A function body that uses its parameters ($1, ${2}, "$@", $*, $#): a call is read with them.
_USES_PARAMETERS: Final = re.compile(r"\$(?:[1-9@*#]|\{[1-9@*#])")


class RunReading:
    """Reading the text a command runs (a part of the reader)."""

    def __init__(
        self, st: ReadState, again: Again, inputs: CodeReading, settings: SettingReading
    ) -> None:
        self.st = st
        self.again = again
        self.inputs = inputs
        self.settings = settings

    def make_stdin(self, raw: RawCommand, idx: int, depth: int, inherit: Inherit) -> list[int]:
        """``make -f -`` fed a makefile on its input (a heredoc, a here-string, or a pipe from
        ``echo``/``printf``): each recipe line (a tab first, or after ``target: ;``) is run by a
        shell, so it is read as shell; a makefile only known when it runs is opaque code."""
        body = self.stdin_body(raw)
        if body is None:
            fed = self.inputs.fed_input(raw)
            if fed is None:
                return []
            if fed.text is None or fed.dynamic:
                why = f"make runs the recipes of a makefile on its input, {fed.why or 'unknown'}"
                self.st.code.append(Code(idx, "make", fed.source, opaque=why))
                self.st.note(f"opaque code: {why}")
                return []
            body = (fed.text, True)
        recipes = make_recipes(body[0])
        if not recipes:
            return []
        self.st.note("make's recipe lines from its input are read as shell")
        return self.again.read_text("\n".join(recipes), Context.HEREDOC, depth + 1, inherit)

    def call(self, cmd: SimpleCommand, raw: RawCommand, depth: int, inherit: Inherit) -> list[int]:
        """A call of a function this text defined, with arguments: its body is read again with
        ``$1 …`` the call's words (S2.1), once per function being called (no recursion)."""
        body = self.st.function_bodies[cmd.head]
        if cmd.head in self.st.calling or len(cmd.argv) < 2 or not _USES_PARAMETERS.search(body):
            return []
        env = self.st.envs[-1] if self.st.envs else None
        known = {**dict(inherit.bindings), **(env.known_at(raw.start) if env else {})}
        self.st.calling.add(cmd.head)
        try:
            return self.again.read_text(
                body,
                Context.CALL,
                depth + 1,
                Inherit(
                    inherit.wrappers,
                    inherit.privileged,
                    inherit.remote,
                    positional=Positional(tuple(cmd.argv)),
                    bindings=tuple(known.items()),
                ),
            )
        finally:
            self.st.calling.discard(cmd.head)

    def reread(
        self, word: Word, via: str, depth: int, inherit: Inherit, raw: RawCommand
    ) -> list[int] | None:
        if not word.static:
            self.st.note(f"{via} runs a dynamic string: {raw.raw[:80]!r}")
            return None
        return self.again.read_text(
            word.text,
            Context(via) if via in _VIA_CONTEXTS else Context.SH_C,
            depth + 1,
            inherit,
        )

    def parallel(
        self, p: Peeled, raw: RawCommand, depth: int, inherit: Inherit
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
            self.st.note(f"parallel inputs not expanded: {raw.raw[:80]!r}")
            return None
        out: list[int] = []
        for inp in inputs:
            if p.shell_string is not None:
                if not p.shell_string.static:
                    return None
                text = p.shell_string.text
                line = inp.text if not text else _put_input(text, inp.text)
                out.extend(self.again.read_text(line, Context.XARGS, depth + 1, inherit))
                continue
            words = [Word(w.text.replace("{}", inp.text), w.static) for w in p.argv]
            if not any("{}" in w.text for w in p.argv):
                words.append(inp)
            sub = RawCommand(
                words,
                Context.XARGS,
                raw.frame,
                raw.start,
                raw.raw,
                assignments=list(raw.assignments) + p.assignments,
            )
            idxs, _ = self.again.finalize(sub, depth, inherit)
            out.extend(idxs)
        return out

    def shell(
        self, cmd: SimpleCommand, raw: RawCommand, depth: int, inner: Inherit
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
                self.st.note(f"{cmd.head} -c without a command string")
                return None
            if cmd.context == Context.XARGS and operand.text.strip() in ("{}", *inner.placeholders):
                self.st.note(f"{cmd.head} -c runs its input as a command: {raw.raw[:80]!r}")
                return None
            # The words after the string are $0 $1 …; xargs and find -exec append more.
            positional = Positional(
                tuple(args[i + 1 :]),
                open_ended=bool(inner.placeholders)
                or cmd.context in (Context.XARGS, Context.FIND_EXEC),
            )
            via = "xargs" if cmd.context == Context.XARGS else "sh -c"
            if not operand.static and whole_substitution(operand) is not None:
                evaluated = self.eval_text([operand])
                if evaluated.text is None or evaluated.dynamic:
                    idx = self.st.emit(cmd)
                    return [idx, *self.inputs.run_fed(idx, cmd.head, evaluated, depth, inner)]
                operand = Word(evaluated.text)
            return self.reread(operand, via, depth, replace(inner, positional=positional), raw)
        fed: Fed | None = None
        if operand is not None and not reads_input:
            sub = None if operand.static else whole_substitution(operand)
            if sub is not None and sub[0] == "<(":
                fed = self.inputs.output_of_text(sub[1], CodeSource.PROCESS_SUBSTITUTION)
            elif not (operand.static and operand.text in STDIN_NAMES):
                idx = self.st.emit(cmd)
                return [idx, *self.again.script(operand, cmd.head, depth, inner)]
        if fed is None:
            fed = self.inputs.fed_input(
                raw, pipe=cmd.context not in (Context.XARGS, Context.FIND_EXEC)
            )
        if fed is None:
            return None  # a terminal: an interactive shell (the rater's escape rules judge it)
        if fed.source is CodeSource.HEREDOC and fed.text is not None and not fed.dynamic:
            return self.again.read_text(fed.text, Context.HEREDOC, depth + 1, inner)
        idx = self.st.emit(cmd)
        return [idx, *self.inputs.run_fed(idx, cmd.head, fed, depth, inner)]

    def eval_text(self, words: list[Word] | tuple[Word, ...]) -> Fed:
        """The text ``eval WORDS…`` (or ``sh -c WORD``) runs: the words joined when static, a
        substitution's output when the one word is ``"$(…)"`` and that output is static."""
        if all(w.static for w in words):
            return Fed(CodeSource.INLINE, " ".join(w.text for w in words), "its arguments")
        if len(words) == 1:
            sub = whole_substitution(words[0])
            if sub is not None and sub[0] == "$(":
                fed = self.inputs.output_of_text(sub[1], CodeSource.SUBSTITUTION)
                return fed if fed.text is None else replace(fed, text=fed.text.rstrip("\n"))
        dynamic = " ".join(w.text for w in words if not w.static)
        return Fed(CodeSource.INLINE, None, f"text only known when it runs ({dynamic[:60]})")

    def source(
        self, cmd: SimpleCommand, raw: RawCommand, idx: int, depth: int, inner: Inherit
    ) -> list[int]:
        """``source FILE`` / ``. FILE``: the file is read as a script; ``<(…)`` and
        ``/dev/stdin`` give the program on its input, read as code of this shell."""
        word = cmd.argv[1]
        sub = None if word.static else whole_substitution(word)
        if sub is not None and sub[0] == "<(":
            return self.inputs.run_fed(
                idx,
                cmd.head,
                self.inputs.output_of_text(sub[1], CodeSource.PROCESS_SUBSTITUTION),
                depth,
                inner,
            )
        if word.static and word.text in STDIN_NAMES:
            fed = self.inputs.fed_input(raw)
            return [] if fed is None else self.inputs.run_fed(idx, cmd.head, fed, depth, inner)
        return self.again.script(word, "sh", depth, inner)

    def alias(
        self, argv: list[Word], raw: RawCommand, index: int, depth: int, inherit: Inherit
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
                self.settings.setting_opaque(
                    index, f"alias {name[:40]} is set to a value only known when it runs"
                )
                continue
            if _NEVER_A_TOKEN.search(name):
                # A blank or operator always ends an unquoted word, and a quoted word is never
                # alias-expanded: no command line can use this alias (bash also refuses it).
                self.st.note(f"alias {name[:40]!r} can never be used: its value is not read")
                continue
            # A zsh global alias (`alias -g X='| cut -f2'`) may be a piece of a pipeline or list:
            # the operators joining it to its neighbours run nothing, the commands are read.
            piece = _EDGE_OPERATORS.sub("", value)
            if piece != value:
                self.st.note(
                    f"alias value {value[:40]!r} joins a pipeline or list: read without "
                    f"the joining operator"
                )
            if piece.strip():
                out.extend(self.again.read_text(piece, Context.ALIAS, depth + 1, inherit))
        return out

    def find(
        self,
        cmd: SimpleCommand,
        raw: RawCommand,
        depth: int,
        inherit: Inherit,
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
                    sub = RawCommand(words, Context.FIND_EXEC, raw.frame, raw.start, raw.raw)
                    idxs, _ = self.again.finalize(
                        sub, depth, Inherit((*wrappers, "find"), privileged, inherit.remote)
                    )
                    out.extend(idxs)
                i = j + 1
                continue
            i += 1
        return out

    def ssh(
        self,
        cmd: SimpleCommand,
        raw: RawCommand,
        idx: int,
        depth: int,
        inherit: Inherit,
        wrappers: tuple[str, ...],
        privileged: bool,
    ) -> list[int]:
        host, rest = ssh_split(cmd.argv)
        if host is None:
            return []
        remote = Inherit((*wrappers, "ssh"), False, True)
        out: list[int] = []
        if rest and not all(w.static for w in rest):
            # S2.1: a payload only known when it runs is opaque code, on another host as here.
            self.st.note(f"ssh runs a dynamic remote command: {raw.raw[:80]!r}")
            self.st.code.append(
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
            out = self.again.read_text(
                " ".join(w.text for w in rest), Context.REMOTE, depth + 1, remote
            )
        # What ssh is fed on stdin goes to the remote side: with no command a login shell runs it,
        # and `bash`, `sh -s` and the like run it too. A heredoc is always read (reading only adds
        # commands); a pipe or a file is the program only when a shell on the other side reads it.
        body = self.stdin_body(raw)
        if body is not None:
            self.st.note("ssh's input is read as commands run on the remote host")
            out.extend(self.again.read_text(body[0], Context.REMOTE, depth + 1, remote))
        elif _remote_shell_reads_input(rest):
            fed = self.inputs.fed_input(raw)
            if fed is not None:
                self.st.note("ssh's input is read as commands run on the remote host")
                out.extend(
                    self.inputs.run_fed(
                        idx,
                        "ssh",
                        replace(fed, why=f"{fed.why} on {host.text[:40]}"),
                        depth,
                        remote,
                    )
                )
        return out

    @staticmethod
    def stdin_body(raw: RawCommand) -> tuple[str, bool] | None:
        """A heredoc's or here-string's text, and whether it is static."""
        if raw.heredoc is not None:
            body, quoted = raw.heredoc
            return body, quoted or ("$" not in body and "`" not in body)
        if raw.herestring is not None:
            w = raw.herestring
            return w.text, w.static
        return None

    def interpreter(
        self, cmd: SimpleCommand, raw: RawCommand, idx: int, depth: int, inner: Inherit
    ) -> list[int]:
        """An interpreter: a script operand is model context; inline code of a language the
        rater does not model is opaque; a program on its input is context, or opaque when unknown."""
        lang = interpreter(cmd.head)
        assert lang is not None
        args = cmd.argv[1:]
        how = invocation(lang, [w.text for w in args], [w.static for w in args])
        if how.unknown:
            return []
        if how.module:
            if lang.name in _MODULE_PATH_LANGUAGES and not _safe_path(cmd):
                self.again.module(how.module_name, cmd.head, idx, depth, inner)
            return []
        if how.inline:
            if not lang.modelled:
                self.st.code.append(
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
            self.again.script(Word(how.script), cmd.head, depth, inner)
            return []
        from_input = how.stdin
        if not from_input:
            return []
        fed = self.inputs.fed_input(raw, pipe=cmd.context not in (Context.XARGS, Context.FIND_EXEC))
        if fed is None:
            return []  # a terminal: an interactive interpreter (the rater judges it)
        if fed.text is not None and not fed.dynamic:
            self.st.context_script("<stdin>", cmd.head, fed.text)
            opaque = (
                ""
                if lang.modelled
                else f"{cmd.head} runs {cmd.head} code, a language gatesh does not read"
            )
            self.st.code.append(
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
            self.st.context_script("<stdin>", cmd.head, fed.text)
            fed = replace(fed, text=None, why=f"{fed.why}, holding values only known when it runs")
        return self.inputs.run_fed(idx, cmd.head, fed, depth, inner)


# Interpreters whose `-m NAME` looks NAME up with the working folder first on the module path.
_MODULE_PATH_LANGUAGES: Final = frozenset({"python", "pypy"})
# Python's short options that take a value: the letters after one in a cluster are its value.
_PYTHON_VALUE_LETTERS: Final = frozenset("WXmcQ")


def _safe_path(cmd: SimpleCommand) -> bool:
    """Whether Python leaves the working folder off its module path for ``cmd``: ``-I``
    (isolated) or ``-P`` before the program, or ``PYTHONSAFEPATH`` set on the command."""
    if any(a.startswith("PYTHONSAFEPATH=") and a != "PYTHONSAFEPATH=" for a in cmd.assignments):
        return True
    for w in cmd.argv[1:]:
        t = w.text
        if not t.startswith("-") or t.startswith("--") or t == "-":
            return False
        for ch in t[1:]:
            if ch in "IP":
                return True
            if ch in _PYTHON_VALUE_LETTERS:
                break
    return False


def _remote_shell_reads_input(rest: list[Word]) -> bool:
    """Whether ssh's remote command (``rest``) runs a shell that reads its input: none at all (a
    login shell), or a shell named without -c (``bash -s``, ``sh``)."""
    if not rest:
        return True
    words = rest[0].text.split() if len(rest) == 1 and rest[0].static else [w.text for w in rest]
    if not words or head_of(words[0]) not in SHELLS:
        return False
    return not any(w.startswith("-") and not w.startswith("--") and "c" in w[1:] for w in words[1:])


def _put_input(line: str, value: str) -> str:
    """The command line parallel runs for one input: ``{}`` replaced, or the input appended."""
    quoted = shlex.quote(value)
    return line.replace("{}", quoted) if "{}" in line else f"{line} {quoted}"

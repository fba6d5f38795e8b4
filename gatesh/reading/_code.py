"""Code fed to a shell or an interpreter, and code in languages gatesh does not parse (S2.1).

A shell runs whatever its input holds: ``printf 'rm -rf ~' | sh`` runs ``rm -rf ~``. The reader
computes that input when it is static — ``echo`` and ``printf`` literals with their escapes and
formats applied (``_fed``), a heredoc or here-string, a local file within limits, the output of
a process or command substitution made of those — and reads it as that shell's code. Anything
else is a :class:`~gatesh._types.Code` fact marked opaque: gatesh cannot see what runs. Text that
passed through a program that rewrites it (``tr``, ``rev``, ``base64 -d``) is marked transformed:
obfuscation when the text was known, opaque otherwise. The output of an environment-setup
generator (``pyenv init -``, a vocabulary row) is marked with the row's id.

:class:`CodeReading` is a part of the reader: it takes the reading's :class:`~._state.ReadState`;
it only computes inputs and records facts, never runs anything.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Final

from gatesh._types import Code, CodeSource, Context, SimpleCommand, Word
from gatesh.vocab.programs.generators import generator
from gatesh.vocab.programs.info import FOREIGN_SHELL_INFO
from gatesh.vocab.programs.shells import (
    PASS_THROUGH,
    PLAIN_COMMANDS,
    SHELL_BY_NAME,
    STDIN_NAMES,
    TRANSFORMERS,
    Family,
    Shell,
)

from . import _limits as L
from ._fed import Unknown, echo_output, printf_output
from ._peel import head_of, peel
from ._state import Again, Inherit, ReadState
from ._subst import substitutions
from ._walk import RawCommand, WalkLimit, parse, walk_text

# Pipelines feeding each other are followed this many stages back, then the text is unknown.
MAX_STAGES: Final = 16
# Top-level statements of a substitution whose output is computed (`$(echo a; printf b)`).
_PLAIN_STATEMENTS: Final = frozenset(
    {"command", "pipeline", "redirected_statement", "comment", "list"}
)


@dataclass(frozen=True)
class Fed:
    """What a command's input holds, as a program.

    ``text`` None: not known; ``why`` then says where it comes from, for a person. ``dynamic``:
    the text holds values only known when it runs (it is read as written, and is opaque too).
    ``transformed``: the program that rewrote it on its way; ``known_origin``: the text before
    that was known (obfuscation, not only opacity). ``generator``: an environment-setup row's id.
    """

    source: CodeSource
    text: str | None
    why: str = ""
    dynamic: bool = False
    transformed: str = ""
    known_origin: bool = False
    generator: str = ""


def whole_substitution(word: Word) -> tuple[str, str] | None:
    """``("$(", TEXT)`` or ``("<(", TEXT)`` when ``word`` is one command or process substitution
    and nothing else (``"$(cmd)"``, ```cmd```, ``<(cmd)``); None otherwise."""
    text = word.text
    if word.static or len(text) < 3:
        return None
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1]
    kind = "$("
    if text.startswith("<(") or text.startswith(">("):
        if text.startswith(">("):
            return None
        kind, text = "<(", "$(" + text[2:]
    elif not (text.startswith("$(") or text.startswith("`")):
        return None
    data = text.encode("utf-8", "surrogatepass")
    found = substitutions(data)
    if len(found) != 1 or found[0][0] != 0 or found[0][1] != len(data) or text.startswith("$(("):
        return None
    return kind, found[0][2]


def _as_written(word: Word) -> str:
    """A dynamic word's source with its outer quotes taken off: ``"rm $X"`` -> ``rm $X``."""
    text = word.text
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


class CodeReading:
    """Computing inputs and recording :class:`Code` facts (a part of the reader)."""

    def __init__(self, st: ReadState, again: Again) -> None:
        self.st = st
        self.again = again

    # --- what a command's input holds -------------------------------------------------------

    def fed_input(self, raw: RawCommand, stages: int = 0, *, pipe: bool = True) -> Fed | None:
        """The program ``raw`` finds on its standard input; None when nothing is given (a terminal).
        ``pipe`` False: the pipe before it feeds another program (xargs, find), not this one."""
        if raw.heredoc is not None:
            body, quoted = raw.heredoc
            dynamic = not quoted and ("$" in body or "`" in body)
            return Fed(CodeSource.HEREDOC, body, "a here-document", dynamic=dynamic)
        if raw.herestring is not None:
            w = raw.herestring
            if w.static:
                return Fed(CodeSource.HEREDOC, w.text + "\n", "a here-string")
            sub = whole_substitution(w)
            if sub is not None and sub[0] == "$(":
                fed = self.output_of_text(sub[1], CodeSource.HEREDOC, stages + 1)
                return fed if fed.text is None else replace(fed, text=fed.text.rstrip("\n") + "\n")
            return Fed(CodeSource.HEREDOC, _as_written(w) + "\n", "a here-string", dynamic=True)
        redirected = raw.stdin_word
        if redirected is not None:
            if redirected.static:
                if redirected.text == "/dev/null":
                    return Fed(CodeSource.REDIRECT, "", "/dev/null")
                if redirected.text == "/dev/tty":
                    return None
                if redirected.text not in STDIN_NAMES:
                    return self.file_input(redirected.text, CodeSource.REDIRECT)
            else:
                sub = whole_substitution(redirected)
                if sub is not None and sub[0] == "<(":
                    return self.output_of_text(sub[1], CodeSource.PROCESS_SUBSTITUTION, stages + 1)
                return Fed(
                    CodeSource.REDIRECT,
                    None,
                    f"the file {redirected.text[:60]}, named only when it runs",
                )
        fed_by = raw.fed_by
        if fed_by and pipe:
            return self.output_of_stage(fed_by, stages + 1)
        return None

    def file_input(self, path: str, source: CodeSource) -> Fed:
        """A local file's text, within the reader's script limits; unknown otherwise."""
        full = self.st.resolve(path)
        try:
            size = os.stat(full).st_size
            if not os.path.isfile(full):
                return Fed(source, None, f"{path}, which is not a regular file")
            if size > L.MAX_SCRIPT_BYTES:
                return Fed(source, None, f"the file {path}, too large to read ({size} bytes)")
            with open(full, "rb") as fh:
                data = fh.read(L.MAX_SCRIPT_BYTES + 1)
        except OSError as exc:
            return Fed(source, None, f"the file {path}, which could not be read ({exc.strerror})")
        self.st.script_bytes += len(data)
        if self.st.script_bytes > L.MAX_SCRIPT_TOTAL_BYTES:
            return Fed(
                source,
                None,
                f"the file {path}: files together exceed {L.MAX_SCRIPT_TOTAL_BYTES} bytes",
            )
        if b"\x00" in data[:4096]:
            return Fed(source, None, f"the binary file {path}")
        return Fed(source, _decode(data), f"the file {path}")

    def output_of_stage(self, raws: list[RawCommand], stages: int) -> Fed:
        """What a pipeline stage writes: its commands' outputs, in order."""
        parts: list[str] = []
        dynamic = False
        for raw in raws:
            fed = self.output_of(raw, stages)
            if fed.text is None:
                return fed if len(raws) == 1 else replace(fed, generator="")
            parts.append(fed.text)
            dynamic = dynamic or fed.dynamic
        return Fed(
            CodeSource.PIPE, "".join(parts), "the output of a command group", dynamic=dynamic
        )

    def output_of(self, raw: RawCommand, stages: int) -> Fed:
        """What one command writes to its standard output, when that is static."""
        self.st.check_time()
        described = f"the output of `{raw.raw.strip()[:60]}`"
        unknown = Fed(CodeSource.PIPE, None, described)
        if stages > MAX_STAGES:
            return replace(unknown, why=f"{described}, at the end of a pipeline too long to follow")
        if not raw.words:
            return Fed(CodeSource.PIPE, "", described)
        p = peel(raw.words)
        if p.shell_string is not None or not p.argv or not p.argv[0].static:
            return unknown
        head = head_of(p.argv[0].text)
        args = p.argv[1:]
        texts = [w.text if w.static else _as_written(w) for w in args]
        dynamic = not all(w.static for w in args)
        try:
            if head == "echo":
                return Fed(CodeSource.PIPE, _decode(echo_output(texts)), described, dynamic=dynamic)
            if head == "printf":
                if not args or not args[0].static:
                    return replace(
                        unknown, why=f"{described}, whose format is only known when it runs"
                    )
                return Fed(
                    CodeSource.PIPE, _decode(printf_output(texts)), described, dynamic=dynamic
                )
        except Unknown as exc:
            return replace(unknown, why=f"{described} ({exc})")
        if head in ("true", ":"):
            return Fed(CodeSource.PIPE, "", described)
        if head == "yes":  # the same line again and again: reading it once reads every line
            line = " ".join(texts) if texts else "y"
            return Fed(CodeSource.PIPE, line + "\n", described, dynamic=dynamic)
        row = None if dynamic else generator(head, texts)
        if row is not None:
            return Fed(CodeSource.PIPE, None, described, generator=row.id)
        if head in PASS_THROUGH:
            return self._pass_through(raw, head, args, stages, unknown)
        if head in TRANSFORMERS:
            # The text was known when its input was, or when it reads a local file (`rev payload`).
            origin = self.fed_input(raw, stages)
            known = (origin is not None and origin.text is not None) or any(
                w.static and not w.text.startswith("-") and os.path.isfile(self.st.resolve(w.text))
                for w in args
            )
            return Fed(
                CodeSource.PIPE,
                None,
                f"text that {head} {TRANSFORMERS[head]}",
                transformed=head,
                known_origin=known,
            )
        return unknown

    def _pass_through(
        self, raw: RawCommand, head: str, args: list[Word], stages: int, unknown: Fed
    ) -> Fed:
        """``cat`` (files, or its input), ``tee`` and the like: the text they pass on."""
        operands = [w for w in args if not (w.static and w.text.startswith("-") and w.text != "-")]
        options = [w.text for w in args if w.static and w.text.startswith("-") and w.text != "-"]
        if head == "cat" and any(o not in ("-u", "--") for o in options):
            return replace(unknown, why=f"{unknown.why}, which cat changes ({' '.join(options)})")
        if head != "cat" or not operands:
            fed = self.fed_input(raw, stages)
            return (
                fed
                if fed is not None
                else replace(unknown, why=f"{unknown.why}, which reads a terminal")
            )
        parts: list[str] = []
        for w in operands:
            if not w.static:
                return replace(unknown, why=f"{unknown.why}, a file named only when it runs")
            fed = (
                self.fed_input(raw, stages)
                if w.text == "-"
                else self.file_input(w.text, CodeSource.PIPE)
            )
            if fed is None or fed.text is None:
                return fed or unknown
            parts.append(fed.text)
        return Fed(CodeSource.PIPE, "".join(parts), unknown.why)

    def output_of_text(self, text: str, source: CodeSource, stages: int = 0) -> Fed:
        """What a substitution's command text writes: its plain statements' outputs, in order
        (a substitution's trailing newlines are the caller's to strip)."""
        described = f"the output of `{text.strip()[:60]}`"
        unknown = Fed(source, None, described)
        data = text.encode("utf-8", "surrogatepass")
        if len(data) > L.MAX_COMMAND_BYTES or stages > MAX_STAGES:
            return unknown
        try:
            root = parse(data).root_node
            walk = walk_text(data, Context.SUBSTITUTION, self.st.deadline)
        except (WalkLimit, RecursionError):
            return unknown
        if (
            root.has_error
            or walk.has_error
            or any(c.type not in _PLAIN_STATEMENTS for c in root.children)
            or any(
                c.type == "list" and any(t.type == "||" for t in c.children) for c in root.children
            )
        ):
            return unknown
        raws = [r for r in walk.commands if r.frame == 0]
        feeding: set[int] = set()
        for stages_ in walk.pipelines:
            for k in range(1, len(stages_)):
                for i in stages_[k]:
                    walk.commands[i].fed_by = [walk.commands[j] for j in stages_[k - 1]]
                for i in stages_[k - 1]:
                    feeding.add(i)
        writers = [r for i, r in enumerate(walk.commands) if r.frame == 0 and i not in feeding]
        if not raws:
            return Fed(source, "", described)
        fed = self.output_of_stage(writers, stages)
        return replace(fed, source=source, why=fed.why if fed.text is None else described)

    # --- recording what runs ----------------------------------------------------------------

    def run_fed(
        self,
        index: int,
        language: str,
        fed: Fed,
        depth: int,
        inherit: Inherit,
        *,
        parsed: bool = True,
    ) -> list[int]:
        """Read ``fed`` as the code of ``language`` run by command ``index``, and record the fact."""
        source = fed.source
        if fed.generator:
            self.st.code.append(Code(index, language, source, generator=fed.generator))
            return []
        if fed.transformed:
            # Known text rewritten on its way is obfuscation; unknown text rewritten is opaque.
            self.st.code.append(
                Code(
                    index,
                    language,
                    source,
                    opaque=f"{language} runs {fed.why}",
                    transformed=fed.transformed if fed.known_origin else "",
                )
            )
            self.st.note(f"{language} runs text {fed.transformed} rewrote on its way")
            return []
        if fed.text is None:
            self.st.code.append(Code(index, language, source, opaque=f"{language} runs {fed.why}"))
            self.st.note(f"opaque code: {language} runs {fed.why}")
            return []
        text = fed.text
        if "\x00" in text:
            text = text.replace("\x00", "")  # bash and dash drop NUL bytes from a script they read
            self.st.note(
                f"NUL bytes in the code fed to {language} dropped, as the shell drops them"
            )
        context = Context.HEREDOC if source is CodeSource.HEREDOC else Context.FED
        if not parsed:
            context = Context.FOREIGN
        out = self.again.read_text(text, context, depth + 1, inherit, tolerant=not parsed)
        opaque = ""
        row = SHELL_BY_NAME.get(language)
        if not parsed and not (row is not None and row.shares_simple_commands and _plain(text)):
            opaque = f"{language} runs {_family_words(row)}, a language gatesh does not read"
        elif fed.dynamic:
            opaque = f"{language} runs text holding values only known when it runs ({fed.why})"
        self.st.code.append(
            Code(index, language, source, text=text[: L.MAX_CONTEXT_SCRIPT_BYTES], opaque=opaque)
        )
        if opaque:
            self.st.note(f"opaque code: {opaque}")
        return out

    def foreign_shell(
        self, cmd: SimpleCommand, raw: RawCommand, index: int, depth: int, inherit: Inherit
    ) -> list[int]:
        """A shell whose language gatesh does not parse (csh, fish, pwsh, …): every program it is
        given is opaque; a -c string is still read as sh for defence (``csh -c 'rm -rf /'``)."""
        row = SHELL_BY_NAME[cmd.head]
        words = cmd.argv[1:]
        found = _foreign_code(row, list(words))
        lang = _family_words(row)
        if found == "info":
            return []
        if found is None:
            fed = self.fed_input(raw, pipe=cmd.context not in (Context.XARGS, Context.FIND_EXEC))
            return (
                []
                if fed is None
                else self.run_fed(index, cmd.head, fed, depth, inherit, parsed=False)
            )
        if isinstance(found, str):  # "info" is the only word returned alone: anything else is a bug
            raise ValueError(f"unknown foreign-code reading {found!r}")
        kind, word = found
        if kind == "script":
            self.st.code.append(
                Code(
                    index,
                    cmd.head,
                    CodeSource.SCRIPT,
                    opaque=f"{cmd.head} runs the script {word.text[:60]}, {lang}, "
                    f"a language gatesh does not read",
                )
            )
            return []
        if kind == "encoded":
            self.st.code.append(
                Code(
                    index,
                    cmd.head,
                    CodeSource.INLINE,
                    transformed="base64",
                    opaque=f"{cmd.head} runs obfuscation: base64-encoded {lang}",
                )
            )
            return []
        if not word.static:
            self.st.code.append(
                Code(
                    index,
                    cmd.head,
                    CodeSource.INLINE,
                    opaque=f"{cmd.head} runs {lang} only known when it runs",
                )
            )
            return []
        return self.run_fed(
            index,
            cmd.head,
            Fed(CodeSource.INLINE, word.text, f"{cmd.head} code"),
            depth,
            inherit,
            parsed=False,
        )


_FAMILY_WORDS: Final = {
    Family.CSH: "C-shell code",
    Family.FISH: "fish code",
    Family.RC: "rc code",
    Family.POWERSHELL: "PowerShell code",
    Family.CMD: "cmd.exe code",
}


# Words that start a construct, or combine commands, in some shell family (fish `and rm x`, csh
# `foreach`, rc `if`): a text holding one as a command is not plain.
_KEYWORDS: Final = frozenset(
    {
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "for",
        "while",
        "until",
        "do",
        "done",
        "case",
        "esac",
        "function",
        "end",
        "begin",
        "switch",
        "and",
        "or",
        "not",
        "foreach",
        "endif",
        "endsw",
        "breaksw",
        "repeat",
        "goto",
        "onintr",
        "fn",
        "let",
        "def",
        "match",
        "try",
        "catch",
        "loop",
        "each",
        "time",
        "exec",
        "builtin",
        "command",
        "eval",
        "source",
        ".",
    }
)
_SEGMENT: Final = re.compile(r"\|\||&&|[;|\n]")


def _plain(text: str) -> bool:
    """Plain commands every shell family reads alike (``PLAIN_COMMANDS``): quotes balanced, no
    construct or combining keyword as a command."""
    if (
        PLAIN_COMMANDS.fullmatch(text) is None
        or text.count("'") % 2
        or text.count('"') % 2
        or "&" in text.replace("&&", "")
    ):
        return False
    for segment in _SEGMENT.split(text):
        words = segment.split()
        if words and words[0].strip("'\"") in _KEYWORDS:
            return False
    return True


def _family_words(row: Shell | None) -> str:
    if row is None:
        return "code"
    return _FAMILY_WORDS.get(row.family, f"{row.name} code")


def _foreign_code(row: Shell, words: list[Word]) -> tuple[str, Word] | str | None:
    """What a foreign shell's argv gives it to run: ("inline"|"encoded"|"script", word), "info"
    (it only prints its version or help), or None (it reads its input)."""
    insensitive = row.family in (Family.POWERSHELL, Family.CMD)
    skip = False
    for k, w in enumerate(words):
        if skip:
            skip = False
            continue
        if not w.static:
            return "script", w
        key = w.text.casefold() if insensitive else w.text
        if key in row.value_opts or key.split("=", 1)[0] in row.value_opts:
            skip = "=" not in key
            continue
        nxt = words[k + 1] if k + 1 < len(words) else Word("", True)
        if key in FOREIGN_SHELL_INFO:
            return "info"
        if row.family is Family.POWERSHELL and key.startswith("-"):
            name = key[1:]
            if name and "encodedcommand".startswith(name) and name.startswith("e"):
                return "encoded", nxt
            if name and "command".startswith(name):
                return "inline", nxt
            if name and "file".startswith(name):
                return "script", nxt
            continue
        if key in row.code_opts:
            return "inline", nxt
        if (
            "-c" in row.code_opts
            and key.startswith("-")
            and not key.startswith("--")
            and "c" in key[1:]
        ):
            return "inline", nxt
        if key.startswith("-") or (row.family is Family.CMD and key.startswith("/")):
            continue
        return ("inline", w) if insensitive else ("script", w)
    return None

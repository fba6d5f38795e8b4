"""Shell state that turns into commands, however it is set (S2.1, S10; issue 28).

A prompt string (``PS1``, ``PS4``, zsh's ``PROMPT``, ``RPROMPT`` …) is expanded — command
substitutions included — each time the shell prints it; a command variable (``PROMPT_COMMAND``,
``PAGER`` …) is run by the shell or a program later. Setting one to code is reading that code, by
every route a value reaches a variable:

- a plain or declared assignment (``PS1='…'``, ``export PS1=…``, ``declare -x PS1=…``): the value
  the walk computed (quotes, ``$'…'`` decoded);
- ``printf -v NAME FORMAT ARGS`` and zsh's ``print -v NAME ARGS``: the text printf would print;
- ``read [-r] NAME`` from a here-string or here-document: its first line;
- ``mapfile``/``readarray``/``vared``, a name only known when the command runs (``declare "$n=…"``,
  ``printf -v "$n"``), a reference (``declare -n r=PS1``) and a value only known when it runs
  (``PS1=$1``, ``PS1="$x"``): opaque code — gatesh cannot see what will run.

:class:`SettingReading` is a part of the reader: it takes the reading's
:class:`~._state.ReadState`.
"""

from __future__ import annotations

from typing import Final

from gatesh._types import Code, CodeSource, Context, SimpleCommand, Word
from gatesh.vocab.programs.variables import EnvKind, env_var

from ._fed import printf_output
from ._state import Again, Inherit, ReadState
from ._values import Binding
from ._variables import file_names, names_file
from ._walk import RawCommand

__all__ = ["SettingReading", "prompt_code"]

# Builtins that assign a variable named by an operand (`printf -v NAME`, `read NAME`).
SETTING_BUILTINS: Final = frozenset({"printf", "print", "read", "mapfile", "readarray", "vared"})
# Options of `read` that take a value.
_READ_WITH_ARG: Final = frozenset({"-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"})


def prompt_code(value: str) -> str:
    """A prompt string as the shell code its expansion runs: the text of a double-quoted word
    (backslashes doubled, so an escaped ``\\$(…)``, which a prompt decodes to ``$(…)``, is read
    as the substitution it becomes)."""
    return ': "' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def code_kind(name: str) -> EnvKind | None:
    """What a variable's value is to the shell or its programs, when it is code (or None)."""
    row = env_var(name)
    return row.kind if row is not None and row.kind in (EnvKind.PROMPT, EnvKind.COMMAND) else None


def _value_follows(cluster: str) -> bool:
    """Whether ``read``'s option word ``cluster`` (``-r``, ``-rd``, ``-d:``) takes the next word
    as its value: its first option that takes a value is its last letter (``-rd X``), not
    followed by the value itself (``-d:``)."""
    for i, letter in enumerate(cluster[1:], start=1):
        if f"-{letter}" in _READ_WITH_ARG:
            return i == len(cluster) - 1
    return False


class SettingReading:
    """Reads the code that variable settings give the shell (see the module docstring)."""

    def __init__(self, st: ReadState, again: Again) -> None:
        self.st = st
        self.again = again

    def setting_code(
        self, name: str, value: str | None, written: str, depth: int, inherit: Inherit
    ) -> list[int]:
        """The commands a variable set to ``value`` will run (an opaque fact when ``value`` is
        None: only known when it runs). ``written``: the setting as written, for notes."""
        kind = code_kind(name)
        if kind is None:
            return []
        if value is None:
            index = self._anchor(written, inherit)
            self.setting_opaque(
                index,
                f"{name} is set to a value only known when it runs ({written[:60]}), "
                f"and the shell runs it as code",
            )
            return [index]
        if not value.strip():
            return []
        self.st.note(f"{name} is code the shell runs later: {value[:80]!r}")
        text = prompt_code(value) if kind is EnvKind.PROMPT else value
        return self.again.read_text(text, Context.SH_C, depth + 1, inherit)

    def binding_settings(
        self, bindings: list[Binding], text: str, depth: int, inherit: Inherit
    ) -> list[int]:
        """The code plain and declared assignments of ``text`` give the shell (prompt strings;
        command variables set by a plain assignment — a declared one is read with its command)."""
        out: list[int] = []
        for b in bindings:
            kind = code_kind(b.name)
            if kind is None or (kind is EnvKind.COMMAND and b.declared):
                continue
            written = f"{b.name}={b.source or (b.value or '')}"
            out.extend(self.setting_code(b.name, b.value, written, depth, inherit))
        return out

    def builtin_settings(
        self, cmd: SimpleCommand, raw: RawCommand, index: int, depth: int, inherit: Inherit
    ) -> list[int]:
        """The code ``printf -v``, ``read``, ``mapfile`` and ``vared`` give a variable."""
        argv = list(cmd.argv)
        head = cmd.head
        if head in ("printf", "print"):
            return self._printf_v(argv, raw, index, depth, inherit)
        if head == "read":
            return self._read(argv, raw, index, depth, inherit)
        names = [w for w in argv[1:] if not (w.static and w.text.startswith("-"))]
        for w in names:
            if not w.static or code_kind(w.text) is not None:
                self.setting_opaque(
                    index, f"{head} sets {w.text[:40]}, whose value is only known when it runs"
                )
        return []

    def declaration_opaque(self, cmd: SimpleCommand, index: int) -> None:
        """A declaration whose name is only known when it runs, or a reference to a code
        variable (``declare -n r=PS1``): what it sets is not seen."""
        words = list(cmd.argv[1:])
        reference = any(w.static and w.text.startswith("-") and "n" in w.text[1:] for w in words)
        for w in words:
            if w.static and w.text.startswith(("-", "+")):
                continue
            name, eq, value = w.text.partition("=")
            # Only the name itself counts: a subscript only known when it runs (`unset a[$i]`)
            # still names array `a`, which holds no code.
            if not w.static and names_file(w.text):
                # `export $(cat .env)`: its names are FILE's, read once the line's writes are
                # known (:meth:`file_settings`)
                self.st.file_declarations.append((index, cmd.head, w.text))
            elif not w.static and ("$" in name.partition("[")[0] or "`" in name.partition("[")[0]):
                self.setting_opaque(
                    index, f"{cmd.head} sets a variable whose name is only known when it runs"
                )
            elif reference and eq and code_kind(value.strip("'\"")) is not None:
                self.setting_opaque(
                    index,
                    f"{name} refers to {value.strip(chr(39) + chr(34))}, so what it is set "
                    "to becomes code the shell runs",
                )

    def file_settings(self, written: frozenset[str] | None) -> None:
        """``export $(cat FILE)``: opaque when FILE's names cannot be read now (unreadable, too
        large, or written by this line: ``written``, None when a write's path is only known when
        it runs) or when one of them is a prompt or command variable, whose value the shell runs
        as code; names FILE gives that hold no code set nothing the shell runs."""
        for index, head, text in self.st.file_declarations:
            names = file_names(text, self.st.cwd, written)
            if names is None or any(not n for n, _ in names):
                self.setting_opaque(
                    index, f"{head} sets a variable whose name is only known when it runs"
                )
                continue
            for name, _ in names:
                if code_kind(name) is not None:
                    self.setting_opaque(
                        index,
                        f"{head} sets {name} from {text[:60]}, and the shell runs it as code",
                    )

    # --- the routes ------------------------------------------------------------------------

    def _printf_v(
        self, argv: list[Word], raw: RawCommand, index: int, depth: int, inherit: Inherit
    ) -> list[int]:
        for i, w in enumerate(argv[1:-1], start=1):
            if not (w.static and w.text == "-v"):
                continue
            target = argv[i + 1]
            rest = argv[i + 2 :]
            if not target.static:
                self.setting_opaque(index, "printf -v sets a variable named only when it runs")
                return []
            if code_kind(target.text) is None:
                return []
            if argv[0].text.endswith("print"):  # zsh: print -v NAME ARGS joins its words
                value = " ".join(w.text for w in rest) if all(w.static for w in rest) else None
            elif rest and all(w.static for w in rest):
                value = printf_output([w.text for w in rest]).decode("utf-8", "surrogateescape")
            else:
                value = None
            return self.setting_code(target.text, value, raw.raw, depth, inherit)
        return []

    def _read(
        self, argv: list[Word], raw: RawCommand, index: int, depth: int, inherit: Inherit
    ) -> list[int]:
        names: list[Word] = []
        backslash = True
        k = 1
        while k < len(argv):
            w = argv[k]
            if w.static and w.text.startswith("-") and w.text != "-" and not names:
                if "r" in w.text[1:]:
                    backslash = False
                k += 2 if _value_follows(w.text) else 1
                continue
            names.append(w)
            k += 1
        if not any(not w.static or code_kind(w.text) is not None for w in names):
            return []
        first = _input_line(raw)
        out: list[int] = []
        for n, w in enumerate(names):
            if not w.static:
                self.setting_opaque(index, "read sets a variable named only when it runs")
                continue
            if code_kind(w.text) is None:
                continue
            value = None
            if first is not None:
                line = first.replace("\\\n", "") if backslash else first
                fields = line.split(None, len(names) - 1) if line.strip() else [""]
                value = fields[n] if n < len(fields) else ""
                if backslash:
                    value = value.replace("\\\\", "\0").replace("\\", "").replace("\0", "\\")
            out.extend(self.setting_code(w.text, value, raw.raw, depth, inherit))
        return out

    def _anchor(self, written: str, inherit: Inherit) -> int:
        """A command for a bare assignment's fact to belong to (an assignment runs no program)."""
        return self.st.emit(
            SimpleCommand(
                (Word(":"),),
                ":",
                raw=written,
                wrappers=inherit.wrappers,
                privileged=inherit.privileged,
                remote=inherit.remote,
            )
        )

    def setting_opaque(self, index: int, why: str) -> None:
        self.st.code.append(Code(index, "sh", CodeSource.SETTING, opaque=why))
        self.st.note(f"opaque code: {why}")


def _input_line(raw: RawCommand) -> str | None:
    """The first line a command reads from a static here-string or here-document (else None)."""
    for r in raw.redirects:
        if r.op == "<<<" and r.target is not None:
            return r.target.split("\n", 1)[0]
    if raw.heredoc is not None:
        body, quoted = raw.heredoc
        if quoted or ("$" not in body and "`" not in body):
            return body.split("\n", 1)[0]
    return None

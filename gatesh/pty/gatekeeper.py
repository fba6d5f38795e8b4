"""The decisions of one gated shell, made in its relay for the shell's hook (S10).

The relay lives as long as the session, so the shell never starts a process to be gated (S14):
its hook sends each request on the gate channel (:mod:`gatesh.pty.channel`) and the relay answers
with :meth:`Gatekeeper.handle`. The requests:

- ``hello SHELL PID PROMPTS… STARTUP`` — the shell finished its startup files: their prompt
  strings and function definitions are the person's own code, which the shell may run between
  lines (prompts, completion, key bindings) without a decision.
- ``line TEXT CWD`` — Enter was pressed: ``TEXT`` is everything typed since the prompt (several
  commands, pasted lines and continuation lines included). It is decided as a whole before any
  of it runs; an incomplete text gets ``more`` (nothing decided, nothing may run). An allowed line
  becomes the **current line**: the commands it holds (:func:`gatesh.pty.cover.units`) are covered.
- ``cmd ANNOUNCED CWD RUNNING HISTORY NPOS POS… NVARS NAME VALUE…`` — the shell is about to run
  ``ANNOUNCED`` (its DEBUG trap's text) and its hook did not know it as covered. It runs only when
  (1) the current line holds it, or (2) the shell's newest history entry is a line the gate has
  not seen (``fc``, ``r``, a re-run) — that line is decided afresh and must hold it — or (3) it is
  code the shell was set up with (function bodies, alias values, trap and prompt strings read when
  they were set; the person's startup code while no line runs), or (4) decided on its own, with
  the values of the positional parameters and variables it names, and allowed. Each decision has
  its audit record (the daemon writes it before answering).
- ``prompt NAME VALUE …`` — prompt strings changed since the last prompt: each new value is read
  as the code it runs; a refused value is not used (the hook puts the old one back).

Guarantees: every answer other than an explicit allow is a refusal (fail closed, S15); an
exception here refuses with a message; an escalation is asked at this terminal only when the
operator is a person (the relay reads the answer from its own keyboard, S7).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from gatesh import client
from gatesh._types import Context
from gatesh.pty import cover
from gatesh.pty.channel import Reply, Request, Status
from gatesh.pty.link import Link

__all__ = ["Gatekeeper", "Line"]

# Values longer than this are not handed to the gate with a command (the command is then judged
# with that variable unknown, as dynamic).
MAX_VALUE: Final = 4096
# Code of these reader contexts is set up now and runs later, wherever the shell is: a function's
# body, an alias's value, a trap's or a command-valued setting's string.
_STANDING: Final = frozenset({Context.FUNCTION, Context.ALIAS, Context.SH_C})
UNINSTALLED: Final = (
    "gatesh: gatesh was uninstalled while this shell was open, so it cannot gate commands any "
    "more and nothing runs here. Exit this shell."
)
NOT_COMPLETE: Final = (
    "gatesh: the gate could not tell where this command ends (it reads as unfinished), "
    "so nothing ran."
)

Asker = Callable[[str, str, str], client.CheckResult]


@dataclass
class Line:
    """A decided line and the commands it covers (``keys``: as tree-sitter reads the text;
    ``deep``: also the commands the reader finds in its strings and scripts, added when first
    needed, since most lines never need them)."""

    text: str = ""
    keys: frozenset[str] = frozenset()
    allowed: bool = False
    cwd: str = "/"
    deep: bool = False


@dataclass
class Gatekeeper:
    """One session's gate, shared by the requests of its shell (main shell and subshells)."""

    session: str
    operator: str = "agent"
    shell: str = "bash"
    ask: Asker | None = None  # asks the person at this terminal (operator "person" only)
    say: Callable[[str], None] = lambda text: None  # a line on the terminal, now
    line: Line = field(default_factory=Line)
    standing: set[str] = field(default_factory=set)  # code set up by decided lines
    startup: set[str] = field(default_factory=set)  # the startup files' own code
    lock: threading.Lock = field(default_factory=threading.Lock)
    link: Link = field(default_factory=Link)

    # --- the requests -------------------------------------------------------------------------

    def handle(self, request: Request) -> Reply:
        """The answer to one request. Never raises: a failure refuses, saying why."""
        if not _installed():
            return Reply(Status.NO, UNINSTALLED)
        try:
            handler = _HANDLERS.get(request.kind)
            if handler is None:
                return Reply(
                    Status.NO,
                    f"gatesh: the hook sent an unknown request {request.kind!r}; nothing ran.",
                )
            return handler(self, request.fields)
        except Exception as exc:  # fail closed
            return Reply(
                Status.NO,
                f"gatesh: the gate failed ({type(exc).__name__}: {exc}), so nothing ran.",
            )

    def _hello(self, fields: tuple[str, ...]) -> Reply:
        """The startup files' prompt strings and functions: the person's own code."""
        printed: list[str] = []
        for text in fields[2:]:
            found = cover.printed(text) if text else ()
            self.startup.update(cover.units(text) if text else ())
            printed.extend(found)
        return Reply(Status.OK, printed=tuple(printed), idle=True)

    def _line(self, fields: tuple[str, ...]) -> Reply:
        text, cwd = _get(fields, 0), _get(fields, 1)
        if text.endswith("\n"):
            text = text[:-1]  # the Enter that ended it
        if not text.strip():
            return Reply(Status.OK)
        if cover.incomplete(text):
            return Reply(Status.MORE, NOT_COMPLETE)
        result = self._decide(text, cwd)
        with self.lock:
            self.line = Line(text, frozenset(), False)
        if not result.allowed:
            return Reply(Status.NO, _message(result))
        keys, standing = self._keys(text, cwd, deep=_sets_code(text))
        with self.lock:
            self.line = Line(text, keys, True, cwd, deep=_sets_code(text))
            self.standing |= standing
        if result.notice:
            self.say(f"gatesh: {result.notice}")
        if result.undo:  # S17: said as the line starts (it is decided before it runs)
            self.say(result.undo)
        return Reply(Status.OK, printed=cover.printed(text), keep=True)

    def _command(self, fields: tuple[str, ...]) -> Reply:
        announced, cwd = _get(fields, 0), _get(fields, 1)
        running = _get(fields, 2) == "1"
        history = _history_text(_get(fields, 3))
        positional, names, values = _values(fields[4:])
        with self.lock:
            line, standing, startup = self.line, set(self.standing), set(self.startup)
        # (1) the current line holds it
        if running and line.allowed and not line.deep:
            keys, more = self._keys(line.text, line.cwd, deep=True)
            with self.lock:
                if self.line is line:
                    self.line = line = Line(line.text, keys, True, line.cwd, deep=True)
                self.standing |= more
        if running and line.allowed and cover.covers(line.keys, announced):
            return Reply(Status.OK, keep=True)
        # (2) the shell is running a line the gate has not seen (a history re-run): decide it
        if running and history.strip() and not _same_line(history, line):
            result = self._decide(history, cwd)
            if not result.allowed:
                with self.lock:
                    self.line = Line(history, frozenset(), False)
                return Reply(Status.NO, _message(result))
            keys, more = self._keys(history, cwd, deep=True)
            with self.lock:
                self.line = line = Line(history, keys, True, cwd, deep=True)
                self.standing |= more
            if cover.covers(keys, announced):
                return Reply(Status.OK, keep=True)
        # (3) code the shell was set up with
        if cover.covers(standing | (set() if running else startup), announced):
            return Reply(Status.OK, keep=True)
        # (4) on its own, with the values it names
        text = with_values(announced, positional, dict(zip(names, values, strict=True)))
        result = self._decide(text, cwd)
        if not result.allowed:
            return Reply(Status.NO, _message(result))
        _, more = self._keys(announced, cwd, deep=_sets_code(announced))
        with self.lock:
            self.standing |= more
        # Remembered for the rest of this line, in this folder only, when no value was put in.
        return Reply(Status.OK, here=running and text == announced)

    def _prompt(self, fields: tuple[str, ...]) -> Reply:
        """Prompt strings that changed: read each value as the code it runs."""
        cwd = _get(fields, 0)
        printed: list[str] = []
        refused: list[str] = []
        message = ""
        for name, value in zip(fields[1::2], fields[2::2], strict=False):
            if not _runs_code(value):
                continue
            text = f"{name}={shlex.quote(value)}"
            result = self._decide(text, cwd)
            if not result.allowed:
                refused.append(name)
                message = message or _message(result)
                continue
            code = prompt_code(value)
            with self.lock:
                self.standing |= cover.units(code)
            printed.extend(cover.printed(code))
        if refused:
            return Reply(Status.NO, message, fields=tuple(refused))
        return Reply(Status.OK, printed=tuple(printed), idle=True)

    # --- deciding -----------------------------------------------------------------------------

    def _decide(self, text: str, cwd: str) -> client.CheckResult:
        person = self.operator == "person"
        notice = _Waiting(self.say)
        result = self.link.check(
            text,
            cwd=cwd or "/",
            session=self.session,
            can_ask=person,
            on_interim=notice,
            operator="person" if person else "",
        )
        if result.action == "escalate" and result.pending_id and person and self.ask:
            result = self._ask_here(result, text, cwd)
        elif notice.shown and result.decision and result.decision.get("answer") != "withdrawn":
            # A withdrawn command was interrupted at this terminal: the shell is already back at
            # its prompt, and a line now would land after it; the watcher and the audit say it.
            self.say(_answered(result))
        return result

    def _ask_here(self, result: client.CheckResult, text: str, cwd: str) -> client.CheckResult:
        """The person at this terminal answers; after an allowing answer the check is sent again:
        the daemon lets the approved command through once, and that check is what the audit
        records as run."""
        assert self.ask is not None
        answered = self.ask(result.pending_id, result.message, "escalate")
        if answered.action == "reject":
            return client.CheckResult("reject", "gatesh: you answered no, so nothing ran.")
        if not answered.allowed:
            return answered
        return self.link.check(
            text, cwd=cwd or "/", session=self.session, can_ask=False, operator="person"
        )

    def _keys(self, text: str, cwd: str, *, deep: bool) -> tuple[frozenset[str], set[str]]:
        """The commands ``text`` covers, and the code it sets up to run later (``deep``: with the
        reader's view of its strings, scripts and definitions)."""
        keys = set(cover.units(text))
        standing: set[str] = set()
        if not deep:
            return frozenset(keys), standing
        with contextlib.suppress(Exception):  # the reader's view only adds keys
            from gatesh.reading import read

            for cmd in read(text, cwd=cwd or "/").commands:
                if not cmd.raw:
                    continue
                found = cover.units(cmd.raw)
                keys |= found
                if cmd.context in _STANDING:
                    standing |= found
        return frozenset(keys), standing


_HANDLERS: Final[dict[str, Callable[[Gatekeeper, tuple[str, ...]], Reply]]] = {
    "hello": Gatekeeper._hello,
    "line": Gatekeeper._line,
    "cmd": Gatekeeper._command,
    "prompt": Gatekeeper._prompt,
}


# --- helpers ------------------------------------------------------------------------------------

# What this session's gate runs on: its interpreter and its own package folder.
_INSTALLED: Final = (sys.executable, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _installed() -> bool:
    """Whether gatesh is still installed where this session started it (uninstall removes the
    venv: the relay's later imports, and the daemon it would start, would fail)."""
    return all(os.path.exists(p) for p in _INSTALLED)


class _Waiting:
    """Says on the terminal, once, that a person is being asked (S7)."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.shown = False

    def __call__(self, interim: client.Interim) -> None:
        if self.shown or not interim.waiting:
            return
        self.shown = True
        self.say(interim.message or "gatesh: a person is being asked through `gatesh watch`.")


def _answered(result: client.CheckResult) -> str:
    """What the terminal is told once a person answered (S7)."""
    answer = result.decision.get("answer") or ""
    if result.allowed:
        return f"gatesh: a person answered{f' {answer!r}' if answer else ''}: it runs."
    return f"gatesh: a person answered{f' {answer!r}' if answer else ''}: nothing ran."


def _message(result: client.CheckResult) -> str:
    return result.message or f"gatesh: refused ({result.action}); nothing ran."


def _get(fields: tuple[str, ...], i: int) -> str:
    return fields[i] if i < len(fields) else ""


def _values(rest: tuple[str, ...]) -> tuple[list[str], list[str], list[str]]:
    """The positional parameters and (name, value) pairs of a ``cmd`` request."""
    n = int(rest[0]) if rest and rest[0].isdigit() else 0
    positional = list(rest[1 : 1 + n])
    tail = rest[1 + n :]
    m = int(tail[0]) if tail and tail[0].isdigit() else 0
    pairs = list(tail[1 : 1 + 2 * m])
    return positional, pairs[0::2], pairs[1::2]


def _history_text(listing: str) -> str:
    """The command of a ``history 1`` (bash) listing; zsh sends the text itself."""
    stripped = listing.lstrip(" ")
    digits = len(stripped) - len(stripped.lstrip("0123456789"))
    if digits and stripped[digits : digits + 2] in ("  ", "* "):
        return stripped[digits + 2 :].rstrip("\n")
    return listing.rstrip("\n")


def _same_line(history: str, line: Line) -> bool:
    """Whether the history entry is (part of) the current line: bash keeps each command of a
    pasted block as its own entry."""
    if history.strip() == line.text.strip():
        return True
    keys = cover.units(history)
    return bool(keys) and line.allowed and keys <= line.keys


def with_values(announced: str, positional: list[str], variables: dict[str, str]) -> str:
    """``announced`` with the values its words refer to put in their place, so the reader judges
    what the shell is about to run (S2.1 static values): positional parameters and variables.
    Values too long, and the gate's own names, stay unknown (dynamic)."""
    values = {
        name: value
        for name, value in variables.items()
        if len(value) <= MAX_VALUE and name.isidentifier() and not name.startswith("__gatesh")
    }
    for i, value in enumerate(positional[:9], start=1):
        if len(value) <= MAX_VALUE:
            values[str(i)] = value
    return cover.substitute(announced, values)


# Words after which a text holds code that runs later or elsewhere: its keys need the reader.
_SETS_CODE: Final = (
    "alias",
    "trap",
    "()",
    "function",
    "eval",
    "source",
    ". ",
    "-c",
    "complete",
    "bind",
    "sched",
    "zle",
    "PS",
    "PROMPT",
)


def _sets_code(text: str) -> bool:
    """Whether ``text`` may define code the shell runs later (a function, an alias, a trap, a
    prompt string …): then the reader's view of it is taken at once, for :attr:`standing`."""
    return any(word in text for word in _SETS_CODE)


def _runs_code(value: str) -> bool:
    """Whether a prompt string can run a command when it is expanded."""
    return "$" in value or "`" in value


def prompt_code(value: str) -> str:
    """A prompt string as the shell code its expansion runs: the text of a double-quoted word."""
    return ': "' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'

"""The state of one reading, shared by the reader's parts, and what a re-read string inherits.

A reading is recursive: a command may run another text (``sh -c``, ``eval``, a script, a
payload), which is read again, and its commands join the same lists. The parts of the reader
(:mod:`._code` inputs, :mod:`._defined` defined-then-run, :mod:`._positions` payloads,
:mod:`._settings` settings, :mod:`._runs` commands that run text, :mod:`._scripts` scripts on
disk) each take the one :class:`ReadState` and the :class:`Again` that reads a text again; none
of them imports the reader itself, so the reader's modules import one way only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Protocol

from gatesh._errors import ReadError
from gatesh._types import Code, Context, Redirect, Script, SimpleCommand, Word

from . import _limits as L
from ._hosts import hosts_in
from ._positional import Positional
from ._values import TextEnv
from ._walk import RawCommand


class ReadLimit(ReadError):
    """A limit of ``_limits`` was passed; the message is the ``unreadable`` reason."""


@dataclass(frozen=True)
class Inherit:
    """What a re-read string inherits from the command that runs it."""

    wrappers: tuple[str, ...] = ()
    privileged: bool = False
    remote: bool = False
    redirects: tuple[Redirect, ...] = ()
    placeholders: tuple[str, ...] = ()  # words xargs/parallel replace by their input
    positional: Positional | None = None  # sh -c STRING's static $0 $1 … (same shell only)
    # static values known where this text runs (same shell)
    bindings: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Written:
    """What a file holds after an earlier command of the same text wrote it.

    ``text``: its text when static; ``program``: the program it is a copy of or a link to;
    neither: written with content gatesh does not know (``why`` says by what). ``folder``: the
    path is a folder and everything under it was fetched (a clone, an unpacked download)."""

    text: str | None = None
    program: str | None = None
    why: str = ""
    folder: bool = False


def _deadline() -> float:
    return L.clock() + L.TIME_BUDGET_S


@dataclass(eq=False)
class ReadState:
    """Everything one reading has found so far, across its re-reads (lists in source order).

    Invariant: ``commands`` holds at most ``MAX_COMMANDS`` commands (:meth:`emit` raises
    :class:`ReadLimit` past it); ``hosts`` has no repeats; ``envs`` holds the static values of
    each text being read, innermost last.
    """

    cwd: str | None
    home: str | None
    deadline: float = field(default_factory=_deadline)
    commands: list[SimpleCommand] = field(default_factory=list)
    pipelines: list[tuple[int, ...]] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    assignments: list[str] = field(default_factory=list)
    scripts: list[Script] = field(default_factory=list)
    code: list[Code] = field(default_factory=list)
    # `export $(cat FILE)` words (command index, head, word), decided once the paths are known
    file_declarations: list[tuple[int, str, str]] = field(default_factory=list)
    # name -> body text, for calls (S2.1 static values)
    function_bodies: dict[str, str] = field(default_factory=dict)
    envs: list[TextEnv] = field(default_factory=list)
    calling: set[str] = field(default_factory=set)  # functions whose body is read for a call
    # files this text wrote, by path (S2.1 defined-then-run)
    written: dict[str, Written] = field(default_factory=dict)
    written_cwd: str | None = None  # the folder a `cd` of this text moved to (for those)
    notes: list[str] = field(default_factory=list)
    unreadable: str = ""
    script_bytes: int = 0

    def note(self, text: str) -> None:
        """Add ``text`` to the notes once."""
        if text not in self.notes:
            self.notes.append(text)

    def check_time(self) -> None:
        """Raise :class:`ReadLimit` when the reading's time budget is spent."""
        if L.clock() > self.deadline:
            raise ReadLimit(f"too slow: reading took longer than {L.TIME_BUDGET_S:g} s")

    def emit(self, cmd: SimpleCommand) -> int:
        """Add ``cmd`` (and the hosts it names) to the reading; returns its index."""
        if len(self.commands) >= L.MAX_COMMANDS:
            raise ReadLimit(f"too many commands: more than {L.MAX_COMMANDS}")
        self.commands.append(cmd)
        for h in hosts_in(cmd.head, cmd.argv):
            if h not in self.hosts:
                self.hosts.append(h)
        return len(self.commands) - 1

    def resolve(self, path: str) -> str:
        """``path`` made absolute: ``~`` is the reading's home, relative is under its cwd."""
        if path.startswith("~/") or path == "~":
            home = self.home or os.path.expanduser("~")
            path = home + path[1:]
        if not os.path.isabs(path):
            path = os.path.join(self.cwd or os.getcwd(), path)
        return path

    def context_script(self, path: str, interp: str, text: str) -> None:
        """Keep a script the model is shown as context (cut at ``MAX_CONTEXT_SCRIPT_BYTES``)."""
        note = ""
        if len(text) > L.MAX_CONTEXT_SCRIPT_BYTES:
            text = text[: L.MAX_CONTEXT_SCRIPT_BYTES]
            note = f"shown only the first {L.MAX_CONTEXT_SCRIPT_BYTES} characters"
        self.scripts.append(Script(path, interp, text, note))


class Again(Protocol):
    """Reading text again, for a part of the reader that finds text a command runs."""

    def read_text(
        self, text: str, context: Context, depth: int, inherit: Inherit, *, tolerant: bool = False
    ) -> list[int]:
        """Read ``text`` as shell; the indexes of the commands it produced."""

    def finalize(self, raw: RawCommand, depth: int, inherit: Inherit) -> tuple[list[int], str]:
        """Read one command found some other way (an argv); (indexes, surface head)."""

    def script(self, word: Word, interp: str, depth: int, inherit: Inherit) -> list[int]:
        """Read a script ``interp`` runs ("": by its shebang)."""

    def module(self, name: str, interp: str, index: int, depth: int, inherit: Inherit) -> list[int]:
        """Read the working folder's files ``interp -m name`` (command ``index``) runs."""

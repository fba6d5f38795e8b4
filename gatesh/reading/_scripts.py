"""Scripts on disk a command runs: a shell script is read as shell, others are context.

A relative path is looked up where the text says the command runs (after ``cd DIR``); a script
written earlier in the same text is read from what was written (:mod:`._defined`); a script that
is not there and that nothing can put there runs nothing; anything else unreadable is a note.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Final

from gatesh._types import (
    ABSENT,
    DYNAMIC_PATH,
    VENV_OWN,
    Context,
    ModuleRun,
    Script,
    SimpleCommand,
    Word,
)
from gatesh.vocab.paths.classes import others_may_create
from gatesh.vocab.programs.interpreters import is_interpreter, venv_made
from gatesh.vocab.programs.shells import PARSED_SHELLS, SHELLS
from gatesh.vocab.programs.workdir import CD_HEADS, CHDIR_WRAPPERS, NAMED_FILES_ONLY

from . import _limits as L
from ._defined import DefinedReading
from ._modules import module_files
from ._peel import shebang_head
from ._state import Again, Inherit, ReadState
from ._testrun import pytest_operands, pytest_runs
from ._walk import RawCommand

# A virtual environment's activate script (venv, virtualenv, conda: `X/bin/activate`).
_VENV_ACTIVATE: Final = re.compile(r"(?:^|/)(?:bin|Scripts)/activate$")


class ScriptReading:
    """Reading the scripts commands run from disk (a part of the reader)."""

    def __init__(self, st: ReadState, again: Again, defined: DefinedReading) -> None:
        self.st = st
        self.again = again
        self.defined = defined

    def script(self, word: Word, interp: str, depth: int, inherit: Inherit) -> list[int]:
        """Read a script the command runs: a shell script is gated, others are model context.

        ``interp`` is the shell or interpreter head running it; "" means "by its shebang". A
        relative path is looked up where the text says the command runs (after ``cd DIR``). A
        virtual environment's activate script, or a script a shell is told to run (``bash
        x.sh``, ``source x.sh``), that is not there, where nothing earlier in the text can have
        made it and no other user can put it, runs nothing: the shell fails to open it. Any
        other script that is not there stays unread (a note, not a pass).
        """
        what = self.defined.written_at(word.text) if self.st.written and word.static else None
        if what is not None:
            return self.defined.run_text(
                len(self.st.commands) - 1,
                word.text,
                what,
                interp or "sh",
                depth,
                inherit,
                shebang=not interp,
            )
        if not word.static:
            self.st.scripts.append(Script(word.text, interp or "?", None, DYNAMIC_PATH))
            self.st.note(f"runs a script whose path is dynamic: {word.text[:80]!r}")
            return []
        path = self.st.resolve(word.text)
        explicit = bool(interp)
        where = self.certain_dir()
        if where is not None and not word.text.startswith("~"):
            if (
                _VENV_ACTIVATE.search(word.text) or (explicit and interp in PARSED_SHELLS)
            ) and self.absent(word.text, where):
                # a script a shell is told to run (or a virtual environment's activate script)
                # that is not there, and that nothing can put there before it runs: the shell
                # fails to open it and runs nothing (one that is there is read like any script;
                # a file changed between the check and the run is the same exposure either way)
                self.st.scripts.append(Script(word.text, interp or "?", None, ABSENT))
                return []
            if _VENV_ACTIVATE.search(word.text) and self.venv_own(word.text, where):
                self.st.scripts.append(Script(word.text, interp or "?", None, VENV_OWN))
                return []
            if not os.path.isabs(word.text):
                path = os.path.join(where, word.text)
        try:
            size = os.stat(path).st_size
            if not os.path.isfile(path):
                return []
            if size > L.MAX_SCRIPT_BYTES:
                self.st.scripts.append(Script(word.text, interp or "?", None, "too large"))
                self.st.note(f"script {word.text!r} is too large to read ({size} bytes)")
                return []
            with open(path, "rb") as fh:
                data = fh.read(L.MAX_SCRIPT_BYTES + 1)
        except OSError as exc:
            if not explicit or interp not in PARSED_SHELLS:
                # ./x or `bun add pkg`: no file to read; the head and argv say enough
                return []
            self.st.scripts.append(Script(word.text, interp, None, f"unreadable: {exc.strerror}"))
            self.st.note(f"script {word.text!r} could not be read: {exc.strerror}")
            return []
        if not explicit:
            interp = _shebang(data)
            if not interp:
                return []
        if b"\x00" in data[:4096]:
            self.st.scripts.append(Script(word.text, interp, None, "binary"))
            self.st.note(f"script {word.text!r} is binary")
            return []
        text = data.decode("utf-8", "replace")
        if interp in PARSED_SHELLS:
            self.st.script_bytes += len(data)
            if self.st.script_bytes > L.MAX_SCRIPT_TOTAL_BYTES:
                self.st.scripts.append(Script(word.text, interp, None, "too large"))
                self.st.note(f"scripts together exceed {L.MAX_SCRIPT_TOTAL_BYTES} bytes")
                return []
            self.st.scripts.append(Script(word.text, interp, text))
            return self.again.read_text(text, Context.SCRIPT, depth + 1, inherit)
        self.st.context_script(word.text, interp, text)
        return []

    def module(self, name: str, interp: str, index: int, depth: int, inherit: Inherit) -> list[int]:
        """Read the files of the working folder ``python -m name`` runs (:mod:`._modules`), each as
        :meth:`script` reads a script operand, tagged with the module. Nothing is read when the
        folder is not known for certain, or does not hold the module (an installed one runs)."""
        where = self.certain_dir()
        if where is None or not name:
            return []
        found = module_files(name, _Folder(where, self.defined))
        if not found.found:
            return []
        first = len(self.st.scripts)
        out: list[int] = []
        for rel in found.files:
            out.extend(self.script(Word(rel), interp, depth, inherit))
        if found.unsure:
            self.st.scripts.append(Script(found.unsure_at, interp, None, found.unsure))
            self.st.note(f"python -m {name}: {found.unsure_at} is {found.unsure}")
        run = ModuleRun(name, index)
        self.st.scripts[first:] = [replace(s, module=run) for s in self.st.scripts[first:]]
        return out

    def test_run(
        self, cmd: SimpleCommand, raw: RawCommand, depth: int, inherit: Inherit
    ) -> list[int]:
        """pytest: the files written earlier in this text that it runs (:mod:`._testrun`) are read
        as ``python3 FILE`` after them is: a test the agent just wrote is read before it runs. A
        word only known when it runs may name any folder: every written test file counts."""
        if not self.st.written:
            return []
        args = cmd.argv[1:]
        here = self.defined.key(".")
        if all(w.static for w in args):
            named = pytest_operands([w.text for w in args])
            roots = [self.defined.key(p) for p in named] or [here]
        else:
            roots = ["/"]
        out: list[int] = []
        for path in pytest_runs(list(self.st.written), roots):
            shown = os.path.relpath(path, here) if path.startswith(here + "/") else path
            sub = RawCommand(
                [Word("python3"), Word(shown)], Context.SH_C, raw.frame, raw.start, raw.raw
            )
            out.extend(self.again.finalize(sub, depth + 1, inherit)[0])
        return out

    def certain_dir(self) -> str | None:
        """The directory the command being read runs in, when the text says it for certain: the
        reading's own directory moved by every earlier top-level ``cd DIR`` with a static DIR.
        None when a directory change is scoped (a subshell, a function), dynamic, a stack move,
        or the command runs under a wrapper that may change it (``env -C``, ``sudo -D``)."""
        if self.st.cwd is None or not self.st.commands:
            return None
        *before, current = self.st.commands
        if (
            current.context is not Context.TOP
            or current.depth
            or CHDIR_WRAPPERS.intersection(current.wrappers)
        ):
            return None
        cwd = self.st.cwd
        for c in before:
            if c.head not in CD_HEADS:
                continue
            if c.head != "cd" or c.context is not Context.TOP or c.depth or c.wrappers:
                return None
            args = [w for w in c.argv[1:] if not (w.static and w.text in ("-L", "-P", "--"))]
            if not args:
                cwd = self.st.home or os.path.expanduser("~")
                continue
            if len(args) > 1 or not args[0].static or args[0].text == "-":
                return None
            target = args[0].text
            if target == "~" or target.startswith("~/"):
                target = (self.st.home or os.path.expanduser("~")) + target[1:]
            cwd = os.path.normpath(os.path.join(cwd, target))
        return cwd

    def absent(self, name: str, where: str) -> bool:
        """Whether the script ``name`` cannot be found from ``where``: not there, nor (a name
        without a slash, which bash then looks up on PATH) on PATH; nor written by this text."""
        path = os.path.normpath(name if os.path.isabs(name) else os.path.join(where, name))
        if os.path.lexists(path) or self.defined.written_at(name) is not None:
            return False
        if any(c.head not in NAMED_FILES_ONLY for c in self.st.commands[:-1]):
            return False  # an earlier command may make files it does not name (curl -O, tar x)
        if others_may_create(path):
            return False  # another user may put it there before it runs
        if "/" not in name:
            for folder in os.environ.get("PATH", "").split(os.pathsep):
                found = os.path.join(folder, name)
                if folder and (os.path.lexists(found) or others_may_create(found)):
                    return False
        return True

    def venv_own(self, name: str, where: str) -> bool:
        """Whether the activate script ``name``, not there now, can only be the one a virtual
        environment tool earlier in this text makes: an earlier command makes a virtual
        environment in the script's folder, and every other earlier command makes no file it
        does not name (so nothing else can put a script there first)."""
        path = os.path.normpath(name if os.path.isabs(name) else os.path.join(where, name))
        if (
            os.path.lexists(path)
            or self.defined.written_at(name) is not None
            or others_may_create(path)
        ):
            return False
        env = os.path.dirname(os.path.dirname(path))
        made = False
        for c in self.st.commands[:-1]:
            folder = venv_made(c.head, c.args)
            if folder is not None:
                made = made or os.path.normpath(os.path.join(where, folder)) == env
            elif c.head not in NAMED_FILES_ONLY:
                return False
        return made


class _Folder:
    """The working folder ``where`` as a command will find it: what is on disk, and what earlier
    commands of the same text write (:meth:`DefinedReading.written_at`)."""

    def __init__(self, where: str, defined: DefinedReading) -> None:
        self.where = where
        self.defined = defined

    def is_file(self, rel: str) -> bool:
        return self.defined.written_at(rel) is not None or os.path.isfile(
            os.path.join(self.where, rel)
        )

    def is_dir(self, rel: str) -> bool:
        return (
            not rel or os.path.isdir(os.path.join(self.where, rel))
        ) or self.defined.writes_under(rel)

    def names(self, rel: str) -> frozenset[str]:
        try:
            return frozenset(os.listdir(os.path.join(self.where, rel)))
        except OSError:
            return frozenset()


def _shebang(data: bytes) -> str:
    """The head of the interpreter a shebang names ("" when none); ``env`` is looked through."""
    head = shebang_head(data[:4096].decode("utf-8", "replace"))
    if head in SHELLS or is_interpreter(head):
        return head
    return ""

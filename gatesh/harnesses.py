"""The agent harnesses gatesh integrates with (S11): one member each, shared by every layer.

Install, doctor, the reader's boilerplate shapes, self-protection and the trusted prompt channels
compare these members, never the names: a name is parsed into a member where it comes in (a
command-line argument, the name of a program in a command) and printed from it where it goes out
(the hook command, JSON). The hook adapter :mod:`gatesh.hooks` is the one module that keys its
tables by the names themselves: it loads only the standard library's cheapest parts (S14), not
:mod:`enum`; tests/test_harnesses.py holds its names equal to these members. It imports nothing of
gatesh's, so :mod:`gatesh._types` (the facts name a harness) and the vocabulary can both stand on it.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = ["Harness"]


class Harness(enum.StrEnum):
    """A harness, by the name ``gatesh install NAME`` and ``gatesh hook NAME`` take."""

    CLAUDE_CODE = "claude-code"
    CODEX = "codex"
    GEMINI = "gemini"

    @property
    def programs(self) -> tuple[str, ...]:
        """The command names that start this harness (how it appears in a command's text)."""
        return _PROGRAMS[self]

    @property
    def folder(self) -> str:
        """The name of the folder holding its settings, in a home or a project (``.claude``)."""
        return _FOLDERS[self]

    @property
    def prompt_channel(self) -> str:
        """The provenance channel its hook hands the user's typed prompt in (S5.3)."""
        return f"{self.value}-prompt"

    @classmethod
    def parse(cls, name: str) -> Harness | None:
        """The member ``name`` spells (as the CLI and the audit line write it), or None."""
        try:
            return cls(name)
        except ValueError:
            return None

    @classmethod
    def by_program(cls, program: str) -> Harness | None:
        """The harness a command whose program is named ``program`` starts, or None."""
        return _BY_PROGRAM.get(program)


_PROGRAMS: Final[dict[Harness, tuple[str, ...]]] = {
    Harness.CLAUDE_CODE: ("claude", "claude-code"),
    Harness.CODEX: ("codex",),
    Harness.GEMINI: ("gemini",),
}
_FOLDERS: Final[dict[Harness, str]] = {
    Harness.CLAUDE_CODE: ".claude",
    Harness.CODEX: ".codex",
    Harness.GEMINI: ".gemini",
}
_BY_PROGRAM: Final[dict[str, Harness]] = {p: h for h, ps in _PROGRAMS.items() for p in ps}

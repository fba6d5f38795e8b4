"""The self-protection row (:class:`SelfRule`) and what its tests are given (:class:`Seen`: one
command with its path effects and the protected places); :class:`Touched` is the test of the path
rows, answered from the reader's path facts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from gatesh._types import Facts, PathEffect, SimpleCommand

from ._places import Kind, Protected
from ._settings import (
    protected_branches,
)
from ._writes import Act, Touch, touches

# The branches gatesh's git hooks protect when the config names none (S11.3, git.protected_branches).
DEFAULT_BRANCHES: Final = ("main", "master")


@dataclass
class Seen:
    """One command as the rules see it: the command, its index, its path effects, the line's facts
    and the protected places; the places it changes are worked out at the first question."""

    cmd: SimpleCommand
    index: int
    effects: list[PathEffect]
    facts: Facts
    prot: Protected
    configured: tuple[str, ...] = DEFAULT_BRANCHES
    _touches: tuple[Touch, ...] | None = field(default=None)

    @property
    def touches(self) -> tuple[Touch, ...]:
        if self._touches is None:
            self._touches = touches(self.cmd, self.index, self.effects, self.facts, self.prot)
        return self._touches

    @property
    def branches(self) -> frozenset[str]:
        """The protected branches of the repository the command runs in (read at the first ask)."""
        return protected_branches(self.prot.cwd, self.configured)


@dataclass(frozen=True)
class Touched:
    """A path rule's test: the command changes a protected place of ``kind`` by one of ``acts``."""

    kind: Kind
    acts: tuple[Act, ...]

    def __call__(self, seen: Seen) -> bool:
        return any(t.kind is self.kind and t.act in self.acts for t in seen.touches)


ALL_ACTS: Final = (Act.REMOVE, Act.WRITE, Act.WORK_IN, Act.STAMP)
# What changes what a record holds: a stamp (touch) leaves every line it had.
CONTENT_ACTS: Final = (Act.REMOVE, Act.WRITE, Act.WORK_IN)


@dataclass(frozen=True)
class SelfRule:
    """One self-protection rule. ``heads``: the heads of the plain commands (:func:`_plain`) the
    test can match (None: any), and ``on_writes``: also any plain command with a write effect.

    Invariant: ids start with ``self.``; examples are checked against the default XDG layout
    under the test's home folder.
    """

    id: str
    reason: str
    test: Callable[[Seen], bool]
    examples: tuple[str, ...]
    counter: tuple[str, ...]
    # What no single command shows (bare `NAME=value` statements, function definitions, `(( ))`):
    # matched once per check, after every command has been matched against every rule.
    whole: Callable[[Facts, Protected], bool] | None = None
    heads: frozenset[str] | None = None
    on_writes: bool = False

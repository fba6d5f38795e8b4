"""The path effects of one reading, collected: each path named once per direction and
command, resolved and classed where it lies (at most ``MAX_EFFECTS``)."""

from __future__ import annotations

import dataclasses
import posixpath
from typing import Final

from gatesh._types import (
    Change,
    Direction,
    PathClass,
    PathEffect,
    Via,
)
from gatesh.vocab.paths import classes as pathclasses

from ._known import candidates
from ._path_resolve import _WORD_CAP, _classify, _gate_roots, real_path, resolve, tree_root

R, W, U = Direction.READ, Direction.WRITE, Direction.UNKNOWN

# Bounds: a line naming more paths than this is judged on the first ones (the rest are noted).
MAX_EFFECTS: Final = 256


class _Collector:
    """Builds the effects of one reading, with the context every path needs to be classed."""

    def __init__(self, cwd: str | None, home: str, home_known: bool) -> None:
        self.cwd = cwd
        self.home = home
        self.home_known = home_known
        self._tree: str | bool | None = False  # False: not looked up yet
        self._gate: tuple[str, ...] | None = None
        self.out: list[PathEffect] = []
        self._seen: set[tuple[str, Direction, int, bool, Change, bool]] = set()

    @property
    def tree(self) -> str | None:
        """The working tree's root, looked up on the first path that needs classing."""
        if self._tree is False:
            self._tree = tree_root(self.cwd, self.home)
        return self._tree  # type: ignore[return-value]

    @property
    def gate(self) -> tuple[str, ...]:
        """gatesh's own roots, computed on the first path that needs classing (most lines have none)."""
        if self._gate is None:
            self._gate = _gate_roots()
        return self._gate

    def add(
        self,
        text: str,
        static: bool,
        direction: Direction,
        index: int,
        cwd: str | None,
        via: Via,
        replaces: bool = False,
        only: str = "",
        change: Change = Change.CONTENT,
        deep: bool = False,
        partial: bool = False,
        reach: int | None = None,
    ) -> None:
        if len(self.out) >= MAX_EFFECTS or not text or len(text) > _WORD_CAP:
            return
        key = (text, direction, index, replaces, change, deep)
        if key in self._seen:
            return
        self._seen.add(key)
        if static and text.startswith("@") and len(text) > 1:
            text = text[1:]  # response files and curl's @file
        # the effect as it is when the path cannot be resolved; resolved ones are copies of it
        blank = PathEffect(
            text,
            "",
            direction,
            PathClass.UNKNOWN,
            index,
            via,
            replaces,
            only,
            "",
            change,
            deep,
            partial,
            reach,
        )
        if not static:
            self._dynamic(blank, cwd)
            return
        resolved = resolve(text, cwd, self.home, static=static, home_known=self.home_known)
        if not resolved:
            self.out.append(blank)
            return
        resolved = self._follow(resolved)
        # With a glob filter (`find /tmp -name '*.swp' -delete`) the files touched are the ones
        # under the folder the glob keeps, not the folder: they are classed as such a file (not
        # under `/`, whose files are every class there is). Likewise a write that replaces nothing
        # in a temporary folder itself (`mktemp -p /tmp`, `tar -C /tmp -x`) makes files in it:
        # only emptying or replacing the folder loses it.
        inside = (
            (only and resolved != "/")
            or (partial and pathclasses.temp_root(resolved))
            or (direction is not R and not replaces and pathclasses.temp_root(resolved))
        )
        member = posixpath.join(resolved, "x") if inside else resolved
        self.out.append(self._classed(blank, resolved, member))

    def _classed(self, blank: PathEffect, resolved: str, member: str) -> PathEffect:
        """``blank`` (an effect not yet resolved) at ``resolved``, classed as ``member`` is."""
        cls, row = _classify(member, self.home, self.tree, self.gate)
        return dataclasses.replace(
            blank, resolved=resolved, cls=cls, kind=row.name if row is not None else ""
        )

    def _dynamic(self, blank: PathEffect, cwd: str | None) -> None:
        """A path only known when it runs: one effect per value the gate can work out
        (``_known.candidates``), and ``blank`` (unresolved) when it may also be another."""
        text = blank.path
        if not self.home_known and text.lstrip('"').startswith("~"):
            values: tuple[str, ...] = ()
            unknown = True
        else:
            values, unknown = candidates(text, cwd, self.home if self.home_known else None)
        for value in values:
            resolved = resolve(value, cwd, self.home, static=True) if value else ""
            if not resolved:
                unknown = True
                continue
            resolved = self._follow(resolved)
            self.out.append(self._classed(blank, resolved, resolved))
        if unknown or not values:
            self.out.append(blank)

    def _follow(self, path: str) -> str:
        """Symlinks inside the working tree resolved (S2.1); other paths stay lexical."""
        tree = self.tree
        if (
            tree
            and (path == tree or path.startswith(tree + "/"))
            and not any(ch in path for ch in "*?[")
        ):
            try:
                return real_path(path)
            except (OSError, ValueError):
                return path
        return path

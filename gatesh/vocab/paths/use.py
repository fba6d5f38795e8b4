"""The row of the path-use tables: how one family of programs uses the paths it is given.

Its own module so that the row tables (:mod:`gatesh.vocab.paths.uses_files`,
:mod:`gatesh.vocab.paths.uses_tools`) and the lookups over them (:mod:`gatesh.vocab.paths.uses`)
share it without an import circle.
"""

from __future__ import annotations

from dataclasses import dataclass

from gatesh._types import Change, Direction

R, W, U = Direction.READ, Direction.WRITE, Direction.UNKNOWN


@dataclass(frozen=True)
class PathUse:
    """How the programs ``heads`` use the paths they are given.

    ``operands``: the direction of operand paths (None: operands are not paths, or only named).
    ``last``: the direction of the last operand when there are two or more (cp, mv, install).
    ``writes``/``reads``: options whose value is a path written / read; ``values``: options whose
    value is not a path (skipped). ``replaces``: a written path loses what it held unless one of
    ``keeps`` is given (``tee -a``, ``cp -n``). ``in_place``: options that make operands written
    (``sed -i``); ``skip``: leading operands that are not paths (grep's pattern, sed's script).
    ``change``: what writing an operand does to it (``PathEffect.change``); ``deep``: options
    (``-R``, ``--recursive``; a short one counts inside a cluster) after which a written path is
    written with everything under it; ``modes``: a pattern of words that begin with ``-`` but are
    operands, not options (``chmod -x FILE``, ``chattr -i FILE``).
    """

    heads: frozenset[str]
    why: str
    operands: Direction | None = U
    last: Direction | None = None
    writes: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()
    values: frozenset[str] = frozenset()
    replaces: bool = False
    keeps: frozenset[str] = frozenset()
    in_place: frozenset[str] = frozenset()
    skip: int = 0
    all_operands: bool = True  # every operand is a path (False: only words that look like one)
    change: Change = Change.CONTENT  # what a written path undergoes (REMOVE: rm; META: chmod)
    deep: frozenset[str] = frozenset()  # options that make a write reach all under the path
    modes: str = ""  # a pattern: words that look like options but are operands (chmod's `-x`)

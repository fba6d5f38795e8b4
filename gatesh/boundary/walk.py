"""The walk around protected places (S16): the rules that allow a folder except what lies in it.

Landlock only allows: a rule on a folder holds everything under it, and nothing can be taken back
below it. So a protected place inside an allowed folder is kept out by walking around it
(:func:`around`): the folder gets no rule of its own, each of its entries does, except the
protected place, and an entry that holds a protected place is walked the same way. What that
guarantees, and its limits, is said in :mod:`gatesh.boundary.compute`.

Symbolic links are left out of a folder's entries: a link's target is reached, and ruled, where
it lies; and a rule never follows a link (:func:`gatesh.boundary._kernel._add_paths`).
"""

from __future__ import annotations

import bisect
import functools
import os
import posixpath
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Final

__all__ = ["MAX_DEPTH", "MAX_RULES", "KeepOut", "around", "keep_out"]

#: Past this many rules the walk stops granting more (a narrower boundary, never a wider one):
#: ~2.4 us a rule: a typical domain has 50 to 250 (its 1 ms budget, S14); a home folder inside a
#: crowded /tmp (a test run's) can need a thousand. The roots are walked most needed first (see
#: :func:`gatesh.boundary.compute._writable_roots`), so what a cut would leave out is an existing entry of /tmp.
MAX_RULES: Final = 4096
#: How deep the walk goes around a protected place.
MAX_DEPTH: Final = 24

# A folder's entries (symbolic links left out) as of its modification time.
_LISTINGS: dict[str, tuple[int, tuple[str, ...]]] = {}
_MAX_LISTINGS: Final = 256


def _entries(folder: str) -> tuple[int, tuple[str, ...]]:
    """(modification time, the names in ``folder`` that are not symbolic links): a link's target
    is reached, and ruled, where it lies. Remembered while the modification time stays the same."""
    mtime = os.stat(folder).st_mtime_ns
    got = _LISTINGS.get(folder)
    if got is not None and got[0] == mtime:
        return got
    with os.scandir(folder) as it:
        names = tuple(sorted(e.name for e in it if not e.is_symlink()))
    if len(_LISTINGS) >= _MAX_LISTINGS:
        _LISTINGS.clear()
    _LISTINGS[folder] = (mtime, names)
    return (mtime, names)


class KeepOut:
    """Protected places as the walk asks about them: sorted (the places under a folder are one
    slice) and as a set (whether a folder lies in one is a lookup per ancestor)."""

    __slots__ = ("places", "set")

    def __init__(self, places: Iterable[str]) -> None:
        self.places = tuple(sorted({posixpath.normpath(p) for p in places}))
        self.set = frozenset(self.places)

    def holds(self, path: str) -> bool:
        """Whether ``path`` is a kept-out place or lies in one."""
        while True:
            if path in self.set:
                return True
            parent = posixpath.dirname(path)
            if parent == path:
                return False
            path = parent

    def under(self, folder: str) -> tuple[str, ...]:
        """The kept-out places strictly under ``folder``."""
        prefix = folder.rstrip("/") + "/"
        lo = bisect.bisect_left(self.places, prefix)
        hi = bisect.bisect_left(self.places, prefix[:-1] + "0")  # "0" follows "/"
        return self.places[lo:hi]


@functools.lru_cache(maxsize=32)
def keep_out(places: tuple[str, ...]) -> KeepOut:
    """The :class:`KeepOut` of ``places`` (remembered: a boundary asks for the same few)."""
    return KeepOut(places)


# A walk's answer, with the folders it listed and their modification times then.
_WALKS: dict[tuple[str, tuple[str, ...]], tuple[tuple[str, ...], tuple[tuple[str, int], ...]]] = {}


def around(root: str, keep_out: KeepOut, budget: list[int] | None = None) -> list[str]:
    """The places to allow so that ``root`` is allowed except the ``keep_out`` places: ``[root]``
    when none of them lies in it; nothing when ``root`` lies in one; otherwise the walk of the
    module docstring (remembered while no folder it listed changed). ``budget`` (a one-item
    list, counted down) bounds the rules made across calls; past it, the rest is not allowed
    (narrower, never wider)."""
    budget = budget if budget is not None else [MAX_RULES]
    root = posixpath.normpath(root)
    if keep_out.holds(root):
        return []
    inside = keep_out.under(root)
    if not inside:
        found: tuple[str, ...] = (root,)
    else:
        key = (root, inside)
        got = _WALKS.get(key)
        if got is not None and all(_mtime(f) == m for f, m in got[1]):
            found = got[0]
        else:
            out: list[str] = []
            listed: list[tuple[str, int]] = []
            _walk(root, inside, out, listed)
            found = tuple(out)
            if len(_WALKS) >= _MAX_LISTINGS:
                _WALKS.clear()
            _WALKS[key] = (found, tuple(listed))
    take = found[: max(budget[0], 0)]
    budget[0] -= len(take)
    return list(take)


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


def _walk(root: str, inside: Sequence[str], out: list[str], listed: list[tuple[str, int]]) -> None:
    """The walk of the module docstring, breadth first: a folder's entries come before those of
    its sub-folders, so a budget that cuts the list cuts the deepest entries (the siblings of a
    home folder inside a crowded temporary folder), never ``/usr`` beside them."""
    queue: deque[tuple[str, Sequence[str], int]] = deque([(root, inside, 0)])
    while queue:
        path, kept, depth = queue.popleft()
        if not kept:
            out.append(path)
            continue
        if depth >= MAX_DEPTH:
            continue
        try:
            mtime, names = _entries(path)
        except OSError:
            listed.append((path, -1))
            continue  # cannot be listed: nothing under it is allowed
        listed.append((path, mtime))
        prefix = path.rstrip("/") + "/"
        # The kept-out places below each entry, by the entry's name (one pass over them), and the
        # entries that are kept out themselves.
        below: dict[str, list[str]] = {}
        exact: set[str] = set()
        for k in kept:
            name, _, rest = k[len(prefix) :].partition("/")
            if rest:
                below.setdefault(name, []).append(k)
            else:
                exact.add(name)
        for name in names:
            if name in exact:
                continue  # the place itself: left out
            queue.append((prefix + name, below.get(name, ()), depth + 1))

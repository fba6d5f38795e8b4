"""The protected places the boundary keeps out of reach (S16): the shared table's rows, resolved.

The rows are :data:`gatesh.vocab.places.PLACES` — the very rows self-protection (S3.4) and the
path classes of the builtin rater (S4.1) read — resolved by :func:`gatesh.vocab.places.resolve`
for the person's home, environment, installation and the command's working tree. This module
only turns them into what the kernel's rules need: absolute paths (a folder whose entries
matching a glob are the place is listed), each with what it keeps (:class:`Access`) and whether
it lies inside the working tree.
"""

from __future__ import annotations

import enum
import functools
import glob
import os
import posixpath
from dataclasses import dataclass

from gatesh._paths import GatePaths
from gatesh.vocab import places as table
from gatesh.vocab.places import Family

__all__ = ["Access", "Family", "Place", "protected_places"]


class Access(enum.StrEnum):
    """What a protected place keeps from a command inside the boundary."""

    NO_WRITE = "no-write"  # no write, creation, removal or rename, at or under it
    NO_READ = "no-read"  # and not read either: the credential stores


@dataclass(frozen=True)
class Place:
    """One protected place: an absolute, normalised path (it need not exist), the table's row id
    and family, what it keeps, and whether it lies inside the working tree (``in_tree``: the
    boundary cannot keep it out there without closing the tree's top folder, see
    :mod:`gatesh.boundary.compute`)."""

    path: str
    row: str
    group: Family
    access: Access
    in_tree: bool = False


def protected_places(paths: GatePaths, home: str, tree: str = "") -> tuple[Place, ...]:
    """Every protected place for a command whose working tree is ``tree`` ("" when none), with
    ``home`` the person's home: absolute and normalised, symbolic links resolved (a place that is
    a link is given twice, as written and as its target, so neither spelling reaches it).

    Remembered while nothing it depends on changed: the installation record, the environment,
    the tree, and the folders whose entries a row's glob picks (a new key in ``~/.ssh``)."""
    env = tuple((k, os.environ.get(k, "")) for k in _ENV)
    inputs = (paths, home, paths.installation(), env, tree)
    listed = _listed(*inputs)
    return _places(*inputs, tuple(_mtime(f) for f in listed))


# The environment variables resolve() reads (the XDG folders and the harnesses' folders).
_ENV = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME")


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


@functools.lru_cache(maxsize=32)
def _resolved(
    paths: GatePaths, home: str, install: object, env: tuple[tuple[str, str], ...], tree: str
) -> tuple[table.ResolvedPlace, ...]:
    from gatesh._paths import Installation

    assert isinstance(install, Installation)
    return table.resolve(home, dict(env), install, gate=paths, tree=tree or None)


def _listed(
    paths: GatePaths, home: str, install: object, env: tuple[tuple[str, str], ...], tree: str
) -> tuple[str, ...]:
    """The folders whose entries a row's glob picks (their listing can change)."""
    return tuple(sorted({r.path for r in _resolved(paths, home, install, env, tree) if r.names}))


@functools.lru_cache(maxsize=32)
def _places(
    paths: GatePaths,
    home: str,
    install: object,
    env: tuple[tuple[str, str], ...],
    tree: str,
    _listings: tuple[int, ...],
) -> tuple[Place, ...]:
    out: list[Place] = []
    inside = tree.rstrip("/") + "/" if tree else ""
    for r in _resolved(paths, home, install, env, tree):
        access = Access.NO_READ if table.Access.READ in r.access else Access.NO_WRITE
        for path in _expand(r):
            in_tree = bool(inside) and path.startswith(inside)
            out.append(Place(path, r.place.id, r.place.kind.family, access, in_tree))
    return _with_targets(out)


def _expand(r: table.ResolvedPlace) -> list[str]:
    """The paths a resolved place stands for: itself, or the entries of its folder its glob picks
    (the folder is listed; one that cannot be is none)."""
    if not r.names:
        return [r.path]
    return sorted(glob.glob(posixpath.join(glob.escape(r.path), r.names)))


def _with_targets(found: list[Place]) -> tuple[Place, ...]:
    """``found``, each also as its resolved path when that differs (a place that is a symbolic
    link, or lies under one), without duplicates (the first row for a path wins)."""
    seen: dict[str, Place] = {}
    for p in found:
        for path in (posixpath.normpath(p.path), os.path.realpath(p.path)):
            if path.startswith("/") and path != "/" and path not in seen:
                seen[path] = Place(path, p.row, p.group, p.access, p.in_tree)
    return tuple(seen.values())

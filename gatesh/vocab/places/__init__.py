"""Protected places: one table of the places an agent's commands must not change (or read).

Each row (:class:`Place`) is one kind of place with an id, the reason a person reads, the access
that is protected (:class:`Access`), which layer refuses it at decision time (:class:`Guard`), where
it is for a given user (:class:`Spot`: a folder of the user, of gatesh or of the install record,
and a path under it), and, for rows the path-class table shares, a pattern that recognises such a
path in any home (``{H}``) or any folder.

Three readers, one table, so they cannot disagree:

- self-protection (S3.4) matches the paths a command touches against :func:`resolve`'s answer for
  the rows guarded by :attr:`Guard.SELF_PROTECTION` (gatesh's own files and installation, the
  harness settings, transcripts and snapshots);
- the path classes of the builtin rater (S4.1, ``gatesh.vocab.paths.classes.CLASSES``) take their
  credential and persistence rows from the rows guarded by :attr:`Guard.RATER`;
- the kernel boundary (S16) protects every resolved place with its access.

The API the boundary reads, stable: :func:`resolve` ``(home, env, install, *, gate=None,
tree=None) -> tuple[ResolvedPlace, ...]``, each with an absolute ``path``, its ``place`` (``id``,
``kind``, ``access``, ``guard``), and ``folder`` (the place is the folder and everything under it)
with ``names`` (a glob the folder's entries must match to be the place; "" for all of them).

The package: the row words are in :mod:`~.kinds`, the rows in :mod:`~.rows`, the lookups
here. ``gatesh.vocab.places`` is the import path the boundary, self-protection, the path classes
and the documentation name, so it re-exports the row words and :data:`PLACES` (listed in
``__all__``): one stable place to import the table from.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from gatesh._paths import GatePaths, Installation, paths_for
from gatesh.vocab.places.kinds import (
    HOME_PATTERN,
    Access,
    Base,
    Family,
    Guard,
    Kind,
    Meaning,
    Place,
    Spot,
)
from gatesh.vocab.places.rows import PLACES

__all__ = [
    "HOME_PATTERN",
    "PLACES",
    "Access",
    "Base",
    "Family",
    "Guard",
    "Kind",
    "Meaning",
    "Place",
    "ResolvedPlace",
    "Spot",
    "gate_roots",
    "place",
    "resolve",
    "spellings",
]

_BY_ID: Final = {p.id: p for p in PLACES}


def place(place_id: str) -> Place:
    """The row with ``place_id``; KeyError for an id the table does not have."""
    return _BY_ID[place_id]


@dataclass(frozen=True)
class ResolvedPlace:
    """A place resolved for one user: ``path`` is absolute and normalised; ``folder``: the place
    is the folder and everything under it (only its entries matching ``names`` when set)."""

    path: str
    place: Place
    folder: bool = False
    names: str = ""

    @property
    def kind(self) -> Kind:
        return self.place.kind

    @property
    def access(self) -> Access:
        return self.place.access


def package_folder() -> str:
    """The folder of the gatesh package that runs, when it is an installed copy (in a
    site-packages folder); "" for a source tree (its files are the developer's work)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parent = os.path.basename(os.path.dirname(here))
    return here if parent in ("site-packages", "dist-packages") else ""


def _folders(
    base: Base,
    home: str,
    env: Mapping[str, str],
    install: Installation,
    gate: GatePaths,
    tree: str | None,
) -> tuple[str, ...]:
    """Every folder (or, for the install record's lists, every path) ``base`` stands for."""
    if base is Base.ROOT:
        return ("/",)
    if base is Base.HOME:
        return (home,)
    if base in (Base.XDG_CONFIG, Base.XDG_DATA):
        value = env.get(base.value, "")
        fallback = ".config" if base is Base.XDG_CONFIG else ".local/share"
        return (value if os.path.isabs(value) else posixpath.join(home, fallback),)
    if base is Base.GATE_CONFIG:
        return (gate.config_dir,)
    if base is Base.GATE_STATE:
        return (gate.state_dir,)
    if base is Base.GATE_DATA:
        return (gate.data_dir,)
    if base is Base.GATE_RUNTIME:
        return (gate.runtime_dir,)
    if base is Base.GATE_SYSTEM:
        return (os.path.dirname(gate.system_config),)
    if base in (Base.CLAUDE, Base.CODEX, Base.GEMINI):
        default = posixpath.join(home, _HARNESS_FOLDER[base])
        moved = env.get(base.value, "") if base is not Base.GEMINI else ""
        return tuple(dict.fromkeys(f for f in (default, moved) if f))
    if base is Base.TREE:
        return (tree,) if tree else ()
    if base is Base.PACKAGE:
        folder = package_folder()
        return (folder,) if folder else ()
    return _recorded(base, install)


_HARNESS_FOLDER: Final = {Base.CLAUDE: ".claude", Base.CODEX: ".codex", Base.GEMINI: ".gemini"}


def _recorded(base: Base, install: Installation) -> tuple[str, ...]:
    """The paths the install record lists for ``base`` (one of the ``RECORD_*`` bases)."""
    if base is Base.RECORD_LAUNCHERS:
        return install.launchers
    if base is Base.RECORD_VENV:
        return (install.venv,) if install.venv else ()
    if base is Base.RECORD_SHIMS:
        return (install.shims_dir,) if install.shims_dir else ()
    if base is Base.RECORD_MAN:
        return install.man_pages
    if base is Base.RECORD_HARNESS:
        return install.harness_files
    if base is Base.RECORD_GIT_HOOKS:
        return install.git_hooks
    raise ValueError(f"not a base of the install record: {base}")


def resolve(
    home: str,
    env: Mapping[str, str],
    install: Installation,
    *,
    gate: GatePaths | None = None,
    tree: str | None = None,
    places: tuple[Place, ...] = PLACES,
) -> tuple[ResolvedPlace, ...]:
    """Every place of ``places`` as absolute paths for a user with home folder ``home``,
    environment ``env`` (the XDG folders, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``) and the
    installation ``install`` records, in table order.

    gatesh's folders are ``gate``'s when given, else those a gatesh started with ``env`` would
    use; a project's places are resolved only with ``tree`` (the working tree's root). Never
    raises and reads nothing but whether ``$XDG_RUNTIME_DIR`` is a folder; a path is listed once,
    with the first row that resolves to it.
    """
    home = posixpath.normpath(home) if home else "/"
    gate = gate if gate is not None else paths_for(home, env)
    out: list[ResolvedPlace] = []
    seen: set[tuple[str, str]] = set()
    for row in places:
        for spot in row.at:
            for folder in _folders(spot.base, home, env, install, gate, tree):
                path = posixpath.join(folder, spot.rel) if spot.rel else folder
                if path == "~" or path.startswith("~/"):
                    path = home + path[1:]
                path = posixpath.normpath(path)
                if not path.startswith("/") or (path, spot.names) in seen:
                    continue
                seen.add((path, spot.names))
                out.append(ResolvedPlace(path, row, spot.folder, spot.names))
    return tuple(out)


_GATE_ROWS: Final = tuple(p for p in PLACES if p.kind.family is Family.GATE)


@functools.lru_cache(maxsize=32)
def gate_roots(gate: GatePaths, install: Installation) -> tuple[str, ...]:
    """The paths of gatesh's own places (:attr:`Family.GATE`) for ``gate``'s folders and the
    installation ``install`` records: what the path classes call gatesh's own files. Remembered
    per inputs (both are frozen values; a process meets one or two)."""
    resolved = resolve(
        gate.home or os.path.expanduser("~"), {}, install, gate=gate, places=_GATE_ROWS
    )
    return tuple(dict.fromkeys(r.path for r in resolved))


# The variables a base comes from, and the folder under it (``$XDG_STATE_HOME/gatesh``): how a
# command names a place without saying where it is.
_BASE_VARIABLES: Final = {
    Base.XDG_CONFIG: ("XDG_CONFIG_HOME", ""),
    Base.XDG_DATA: ("XDG_DATA_HOME", ""),
    Base.GATE_CONFIG: ("XDG_CONFIG_HOME", "gatesh"),
    Base.GATE_STATE: ("XDG_STATE_HOME", "gatesh"),
    Base.GATE_DATA: ("XDG_DATA_HOME", "gatesh"),
    Base.GATE_RUNTIME: ("XDG_RUNTIME_DIR", "gatesh"),
    Base.CLAUDE: ("CLAUDE_CONFIG_DIR", ""),
    Base.CODEX: ("CODEX_HOME", ""),
}


def spellings(place: Place) -> tuple[str, ...]:
    """Patterns of the ways a command names ``place`` through the variables its folders come
    from (``$XDG_CONFIG_HOME/gatesh/config.toml``, ``${CLAUDE_CONFIG_DIR}/settings.json``):
    a path written so is that place wherever the variable points."""
    out: list[str] = []
    for spot in place.at:
        found = _BASE_VARIABLES.get(spot.base)
        if found is None:
            continue
        var, sub = found
        rel = "/".join(p for p in (sub, spot.rel) if p)
        tail = ("/" + re.escape(rel) if rel else "") + ("(?:/|$)" if spot.folder else "$")
        out.append(r"\$(?:\{" + var + r"\}|" + var + r"\b)" + tail)
    return tuple(dict.fromkeys(out))

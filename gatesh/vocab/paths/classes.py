"""Path classes (S4.1): where a path lies, and what reading or writing it means.

:data:`CLASSES` holds the rows with a meaning of their own, each with the reason a person reads;
:func:`classify` applies them to an absolute path, then decides the location classes (working
tree, home, temporary, system, elsewhere) that have no row. Its credential and persistence rows
are the protected places of :mod:`gatesh.vocab.places` (the table self-protection and the
boundary read too), and a path is gatesh's own when it lies in one of that table's gatesh places.

Matching is on the *folded* form of a path: absolute, with the user's own home written ``~``.
Another user's home (``/root``, ``/home/NAME``, ``/Users/NAME``) is matched by the same rows
through :data:`_H`, so ``/home/bob/.ssh/id_rsa`` is a credential store too.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from typing import Final

from gatesh._types import PathClass
from gatesh.vocab import places
from gatesh.vocab.places import Meaning


@dataclass(frozen=True)
class PathRow:
    """One kind of location. ``pattern`` matches the folded path (see the module docstring).

    Invariant: ``why`` is one sentence a person can act on; ``read``/``write`` are the meanings
    of reading and of writing a path of this row (an UNKNOWN direction means both).
    """

    cls: PathClass
    name: str
    pattern: re.Pattern[str]
    read: Meaning
    write: Meaning
    why: str


# Any user's home in a folded path: ours (~) or another user's (the places table's own).
_H: Final = places.HOME_PATTERN
_N, _SE = Meaning.NOTHING, Meaning.SECRET_EXPOSURE
_PR, _SC = Meaning.PRIVILEGE, Meaning.SYSTEM_CHANGE


def _row(
    cls: PathClass, name: str, pattern: str, read: Meaning, write: Meaning, why: str
) -> PathRow:
    return PathRow(cls, name, re.compile(pattern.replace("{H}", _H)), read, write, why)


def _place_rows(cls: PathClass) -> tuple[PathRow, ...]:
    """The rows of the places table (``gatesh.vocab.places``) the path classes share, of ``cls``:
    the credential stores and persistence places, with the table's pattern, name and meanings."""
    return tuple(
        PathRow(cls, p.name, pattern, p.read, p.write, p.reason)
        for p in places.PLACES
        if p.cls is cls and (pattern := p.compiled) is not None
    )


C, P, S = PathClass.CREDENTIALS, PathClass.PERSISTENCE, PathClass.SYSTEM

# The rows other modules ask about (``e.kind == DISKS.name``): named here, so a comparison follows
# the row and a row's new name cannot leave one matching nothing.
PROJECT_SECRETS: Final = _row(
    C,
    "project secrets",
    r"(?:^|/)\.env(?:\.(?!example$|sample$|template$|dist$|defaults?$|schema$)[\w.-]+)?$"
    r"|(?:^|/)(?:\.secrets?|credentials\.json|client_secrets?\.json)$",
    _SE,
    _N,
    "the project's secrets file: printing it hands every secret in it to the session",
)
DISKS: Final = _row(
    S,
    "disks and partitions",
    r"^/dev/(?:sd[a-zX]\w*|hd[a-z]\w*|vd[a-z]\w*|xvd[a-z]\w*|nvme\w+|mmcblk\w+|md\d+|dm-\d+|mapper/.+|disk/.+"
    r"|r?disk\d\w*|sr\d+|nbd\d+|loop\d\w*|[\w-]*(?:device|drive|disk)\w*"
    r"|(?!shm/|pts/|input/|snd/|fd/|serial/|net/|bus/|dri/|usb/|char/|block/)[\w-]+/[\w-]+)$",
    _N,
    _SC,
    "a disk, partition or volume: writing it replaces the file systems on it",
)


# First match wins, so the specific rows (credentials, persistence, privilege databases) come
# before the folders that hold them; location classes (working tree, home, temp) are decided by
# :func:`classify` after these rows. The credential and persistence rows are the places table's.
CLASSES: Final[tuple[PathRow, ...]] = (
    *_place_rows(C),
    PROJECT_SECRETS,
    *_place_rows(P),
    # --- system folders with a meaning of their own --------------------------------------------
    _row(
        S,
        "account and privilege databases",
        r"^(?:/private)?/etc/(?:sudoers(?:\.d(?:/.*)?)?|passwd-?|group-?|doas\.conf|pam\.d(?:/.*)?|security(?:/.*)?"
        r"|polkit-1(?:/.*)?|login\.defs)$|^/usr/local/etc/sudoers(?:\.d(?:/.*)?)?$",
        _N,
        _PR,
        "the account and sudo databases, which decide who may log in or become root",
    ),
    DISKS,
    _row(
        S,
        "kernel settings",
        r"^/proc/sys(?:/|$)|^/proc/sysrq-trigger$|^/sys(?:/|$)",
        _N,
        _SC,
        "a live kernel setting of the whole machine",
    ),
)

# gatesh's own secrets (the places table's cred.gatesh): found by name inside gatesh's folders,
# which may be anywhere ($XDG_CONFIG_HOME, the install record), before those folders' own class.
_GATE_PLACE: Final = next(p for p in places.PLACES if p.id == "cred.gatesh")
_GATE_SECRETS: Final = next(r for r in CLASSES if r.name == _GATE_PLACE.name)
_GATE_SECRET_NAMES: Final = frozenset(s.rel for s in _GATE_PLACE.at)

# Outputs that keep nothing, and terminals: writing them is not writing a file.
_STREAM: Final = re.compile(
    r"^/dev/(?:null|zero|full|random|urandom|stdin|stdout|stderr|tty\w*|ptmx|console"
    r"|fd(?:/\d+)?|pts/\d+|tcp/.*|udp/.*|cu\.\w+|serial/.*|snd/.*|dsp\d*|video\d*)$"
    r"|^/proc/self/fd/\d+$|^/(?:var/)?run/(?:[\w.-]+/)*[\w.-]+\.sock(?:et)?$"
)  # a socket is a channel
_TEMP: Final = re.compile(
    r"^/(?:tmp|var/tmp|private/tmp|dev/shm|private/var/folders|var/folders)(?:/|$)"
)
# Folders of the machine itself (not a user's home): writing there changes the machine.
_SYSTEM: Final = re.compile(
    r"^/(?:$|etc|usr|bin|sbin|lib|lib32|lib64|libx32|boot|efi|opt|srv|var|snap|nix|proc|sys|dev|run"
    r"|System|Library|Applications|private|cores)(?:/|$)"
)  # /mnt, /media, /Volumes hold people's data: elsewhere
# Roots that can never be "the working tree", even as the current directory.
_NOT_A_TREE: Final = re.compile(
    r"^/(?:$|etc|usr(?!/src/)|bin|sbin|lib\w*|boot|proc|sys|dev|run|System"
    r"|Library|private/etc)(?:/|$)"
)

SYSTEM_WHY: Final = "a folder of the machine itself, outside the task"
WORKTREE_WHY: Final = "the working tree: what git does not hold is lost when it is replaced"
TEMP_WHY: Final = "a temporary folder: nothing there is expected to last"
HOME_WHY: Final = "a file in a home folder outside the working tree, which git does not hold"
ELSEWHERE_WHY: Final = "a file outside the working tree and the home folder"
GATE_WHY: Final = "gatesh's own configuration, state or installation (S3.4)"
# The repository hooks gatesh installs (S12), and the line in every script it writes: how install
# recognises its own, and how self-protection tells a hook gatesh wrote from the user's.
GIT_HOOK_NAMES: Final = ("pre-push", "pre-rebase", "reference-transaction", "pre-commit")
GIT_HOOK_MARKER: Final = "gatesh git hook"


def fold(path: str, home: str) -> str:
    """``path`` with the user's own home written as ``~`` (the form :data:`CLASSES` matches)."""
    if home and home != "/" and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home) :]
    return path


def tree_root_ok(root: str) -> bool:
    """Whether ``root`` may be a working tree (never ``/`` or a folder of the machine itself)."""
    return not _NOT_A_TREE.match(root)


# A glob that stands for everything a folder holds.
_ALL_OF: Final = frozenset({"*", ".*", "{*,.*}", ".[!.]*", "..?*", "*.*"})


def temp_root(path: str) -> bool:
    """Whether ``path`` is a temporary folder itself (``/tmp``, ``/var/tmp``, ``/dev/shm`` …)."""
    m = _TEMP.match(path)
    return m is not None and not path[m.end() :].strip("/")


def _temporary(path: str, tree: str | None, home: str) -> bool:
    """Whether ``path`` is a temporary file or folder: under a temporary root, but neither the
    root itself (``rm -rf /tmp``: other programs' files and the folder they need), nor a folder
    that holds the working tree or the home folder, nor everything such a folder holds (``rm -rf
    ..`` or ``rm -rf ../*`` in a repository under /tmp deletes the repository)."""
    m = _TEMP.match(path)
    if m is None:
        return False
    if not path[m.end() :].strip("/"):
        return False
    folder = path.rstrip("/")
    if folder.endswith(tuple("/" + g for g in _ALL_OF)):
        folder = folder.rsplit("/", 1)[0]
    return not any(
        inner and (inner == folder or inner.startswith(folder + "/")) for inner in (tree, home)
    )


def classify(
    path: str, *, home: str, tree: str | None, gate: tuple[str, ...] = ()
) -> tuple[PathClass, PathRow | None]:
    """The class of the absolute, normalised ``path`` and the row that decided it (None for the
    location classes, which have no row of their own).

    ``tree`` is the working tree's root (None when there is none); ``gate`` the roots of gatesh's
    own files. Order: gatesh's files, the rows of :data:`CLASSES`, streams, the working tree, the
    home folder, temporary folders, system folders, elsewhere. A temporary folder holding the
    working tree or the home folder is classed as those, not as temp.
    """
    for root in gate:
        if path == root or path.startswith(root + "/"):
            # gatesh's own secrets, wherever its folders are: a credential store to read.
            if path.rpartition("/")[2] in _GATE_SECRET_NAMES:
                return PathClass.CREDENTIALS, _GATE_SECRETS
            return PathClass.GATE, None
    folded = fold(path, home)
    for row in CLASSES:
        if row.pattern.search(folded):
            return row.cls, row
    if _STREAM.match(path):
        return PathClass.STREAM, None
    if tree and (path == tree or path.startswith(tree.rstrip("/") + "/")):
        return PathClass.WORKTREE, None
    if folded == "~" or folded.startswith("~/") or re.match(r"^/(?:home|Users)/[^/]+(?:/|$)", path):
        return PathClass.HOME, None
    if _temporary(path, tree, home):
        return PathClass.TEMP, None
    if _SYSTEM.match(path):
        return PathClass.SYSTEM, None
    return PathClass.ELSEWHERE, None


def why(cls: PathClass, row: PathRow | None) -> str:
    """The reason a person reads for a path of ``cls`` (the row's own when there is one)."""
    if row is not None:
        return row.why
    return {
        PathClass.SYSTEM: SYSTEM_WHY,
        PathClass.WORKTREE: WORKTREE_WHY,
        PathClass.TEMP: TEMP_WHY,
        PathClass.HOME: HOME_WHY,
        PathClass.ELSEWHERE: ELSEWHERE_WHY,
        PathClass.GATE: GATE_WHY,
    }.get(cls, "a path only known when the command runs")


def meanings(cls: PathClass, row: PathRow | None) -> tuple[Meaning, Meaning]:
    """(what reading, what writing) a path of ``cls``/``row`` means."""
    if row is not None:
        return row.read, row.write
    if cls is PathClass.SYSTEM:
        return Meaning.NOTHING, Meaning.SYSTEM_CHANGE
    if cls is PathClass.GATE:
        return Meaning.NOTHING, Meaning.TAMPERING
    if cls in (PathClass.WORKTREE, PathClass.HOME, PathClass.ELSEWHERE):
        return Meaning.NOTHING, Meaning.WORK
    return Meaning.NOTHING, Meaning.NOTHING


def others_may_create(path: str) -> bool:
    """Whether someone other than this user may create ``path`` (absolute, not there now): its
    nearest existing folder is writable by others (``/tmp``'s sticky mode included) or by a group
    that is not this user's own. Then its absence when a command is decided says nothing about
    what the command will find (another user can put a script there in between)."""
    folder = os.path.dirname(path.rstrip("/")) or "/"
    while True:
        try:
            st = os.stat(folder)
        except OSError:
            parent = os.path.dirname(folder)
            if parent == folder:
                return True
            folder = parent
            continue
        if st.st_mode & stat.S_IWOTH:
            return True
        return bool(st.st_mode & stat.S_IWGRP) and st.st_gid != os.getegid()

"""The words of the protected-places table: what a place is (:class:`Kind`, :class:`Family`),
which access to it is protected (:class:`Access`), which layer refuses it (:class:`Guard`), where it
is (:class:`Base`, :class:`Spot`), what touching it means (:class:`Meaning`), and the row itself
(:class:`Place`). The rows are in :mod:`gatesh.vocab.places.rows`.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Final

from gatesh._types import PathClass


class Meaning(enum.StrEnum):
    """What touching a path of some class does; the rater maps each to an outcome in one place."""

    NOTHING = "nothing harmful"
    CREDENTIAL_ACCESS = "credential access"  # attack (S3.2): secrets read for their own sake
    SECRET_EXPOSURE = "secret exposure"  # destructive: a project's secrets shown to the session
    CREDENTIAL_CHANGE = "credential change"  # destructive: a credential lost or replaced
    PERSISTENCE = "persistence"  # attack: code that runs again at login, boot or on a schedule
    PRIVILEGE = "privilege change"  # attack: who may become root or log in
    SYSTEM_CHANGE = "system change"  # destructive: the machine itself, outside the task
    TAMPERING = "tampering"  # attack, decided by self-protection (S3.4) before any rating
    WORK = "work"  # decided from the working tree's git state (S3.2)


class Family(enum.StrEnum):
    """The four families of protected places (S16: the boundary's write and read rules)."""

    GATE = "gatesh's own files"
    HARNESS = "agent harness files"
    PERSISTENCE = "persistence place"
    CREDENTIALS = "credential store"


class Kind(enum.StrEnum):
    """What a protected place is. Closed: every row of :data:`PLACES` has one."""

    GATE_CONFIG = "gatesh's config folder"
    GATE_STATE = "gatesh's state folder"
    AUDIT_LOG = "gatesh's audit log"
    GATE_RUNTIME = "gatesh's socket folder"
    GATE_DATA = "gatesh's data folder"
    SYSTEM_TIER = "gatesh's system config folder"
    LAUNCHER = "gatesh's launcher"
    VENV = "gatesh's venv"
    SHIMS = "gatesh's shims"
    MAN_PAGE = "gatesh's man page"
    INSTALL_RECORD = "gatesh's install record"
    PACKAGE = "the gatesh package that runs"
    GATE_GIT_HOOKS = "the git hooks gatesh installed"
    HARNESS_SETTINGS = "a harness's settings or hooks file"
    TRANSCRIPT = "a harness's session transcripts"
    SNAPSHOT = "a harness's shell snapshots"
    HARNESS_HOME = "a harness's settings folder"
    HARNESS_CONFIG = "agent harness settings"
    CREDENTIALS = "credential store"
    SHELL_STARTUP = "shell startup file"
    SSH_LOGIN = "ssh login and client settings"
    SCHEDULED = "scheduled jobs"
    SERVICES = "services and autostart"
    GIT = "git hooks and settings"
    LANGUAGE_STARTUP = "language startup hook"
    TOOL_SETTINGS = "tool settings that run commands"
    PATH_SHADOW = "a program earlier on PATH under a common program's name"

    @property
    def family(self) -> Family:
        return _FAMILY[self]


_FAMILY: Final = {
    **{
        k: Family.GATE
        for k in (
            Kind.GATE_CONFIG,
            Kind.GATE_STATE,
            Kind.AUDIT_LOG,
            Kind.GATE_RUNTIME,
            Kind.GATE_DATA,
            Kind.SYSTEM_TIER,
            Kind.LAUNCHER,
            Kind.VENV,
            Kind.SHIMS,
            Kind.MAN_PAGE,
            Kind.INSTALL_RECORD,
            Kind.PACKAGE,
            Kind.GATE_GIT_HOOKS,
        )
    },
    **{
        k: Family.HARNESS
        for k in (Kind.HARNESS_SETTINGS, Kind.TRANSCRIPT, Kind.SNAPSHOT, Kind.HARNESS_HOME)
    },
    Kind.CREDENTIALS: Family.CREDENTIALS,
    **{
        k: Family.PERSISTENCE
        for k in (
            Kind.HARNESS_CONFIG,
            Kind.SHELL_STARTUP,
            Kind.SSH_LOGIN,
            Kind.SCHEDULED,
            Kind.SERVICES,
            Kind.GIT,
            Kind.LANGUAGE_STARTUP,
            Kind.TOOL_SETTINGS,
            Kind.PATH_SHADOW,
        )
    },
}


class Access(enum.Flag):
    """What is protected: reading a place, writing it (creating, changing content or mode), and
    removing it (deleting, or moving it away)."""

    READ = enum.auto()
    WRITE = enum.auto()
    REMOVE = enum.auto()


#: Writing and removing: every place's protection includes these, except where a row says less.
CHANGE: Final = Access.WRITE | Access.REMOVE
#: Everything: the credential stores (S16: read too).
ALL: Final = Access.READ | Access.WRITE | Access.REMOVE


class Guard(enum.StrEnum):
    """Which layer refuses touching a place when a command is decided (the boundary, S16, keeps
    every place whatever its guard)."""

    SELF_PROTECTION = "self-protection"  # S3.4: an attack at every rung
    RATER = "rater"  # the builtin rater's path classes (S4.1): credential access, persistence …
    BOUNDARY = "boundary"  # only the kernel boundary: changing it is ordinary for a decision


class Base(enum.StrEnum):
    """The folder a :class:`Spot` is under, and how :func:`resolve` finds it."""

    ROOT = "/"  # the path is absolute
    HOME = "HOME"
    XDG_CONFIG = "XDG_CONFIG_HOME"  # default ~/.config
    XDG_DATA = "XDG_DATA_HOME"  # default ~/.local/share
    GATE_CONFIG = "gatesh config folder"
    GATE_STATE = "gatesh state folder"
    GATE_DATA = "gatesh data folder"
    GATE_RUNTIME = "gatesh runtime folder"
    GATE_SYSTEM = "gatesh system config folder"
    CLAUDE = "CLAUDE_CONFIG_DIR"  # ~/.claude, and $CLAUDE_CONFIG_DIR when set
    CODEX = "CODEX_HOME"  # ~/.codex, and $CODEX_HOME when set
    GEMINI = "GEMINI"  # ~/.gemini
    TREE = "working tree"  # only when resolve() is given one
    PACKAGE = "gatesh package"  # the installed copy of gatesh that runs ("" for a source tree)
    RECORD_LAUNCHERS = "install record: launchers"
    RECORD_VENV = "install record: venv"
    RECORD_SHIMS = "install record: shims"
    RECORD_MAN = "install record: man pages"
    RECORD_HARNESS = "install record: harness files"
    RECORD_GIT_HOOKS = "install record: git hooks"


@dataclass(frozen=True)
class Spot:
    """One path of a place: ``rel`` under every folder ``base`` resolves to ("" is the folder
    itself). ``folder``: the place is that folder and everything in it; ``names``: only the
    entries of the folder whose name matches this glob are (the folder itself is not)."""

    base: Base
    rel: str = ""
    folder: bool = False
    names: str = ""


# Any user's home in a folded path (a path with the user's own home written ``~``): ours or
# another user's, so /home/bob/.ssh/id_rsa is a credential store too.
HOME_PATTERN: Final = r"(?:~|/root|/var/root|/home/[^/]+|/Users/[^/]+)"


@dataclass(frozen=True)
class Place:
    """One kind of protected place.

    ``pattern`` (``{H}`` is any home) recognises the place in a folded path, wherever it lies: the
    path-class table uses the rows whose ``cls`` is set, and self-protection the rest (a project's
    own ``.claude/settings.json``, another installation's files). ``name`` is the path-class row's
    name (``PathEffect.kind``); ``read``/``write`` what reading and writing such a path means to
    the rater. ``recreated``: gatesh makes the place again on demand (the socket folder), so
    removing a folder holding it is not removing it.

    Invariant: ``reason`` is one sentence a person can act on, lower-case, with no final stop;
    every spot this row resolves to in the default layout is matched by ``pattern`` when set.
    """

    id: str
    kind: Kind
    reason: str
    guard: Guard
    access: Access
    at: tuple[Spot, ...]
    pattern: str = ""
    cls: PathClass | None = None
    name: str = ""
    read: Meaning = Meaning.NOTHING
    write: Meaning = Meaning.NOTHING
    recreated: bool = False

    @property
    def compiled(self) -> re.Pattern[str] | None:
        """``pattern`` compiled, with ``{H}`` as any home; None when the row has none."""
        return _compiled(self.pattern) if self.pattern else None


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    found = _PATTERNS.get(pattern)
    if found is None:
        found = _PATTERNS[pattern] = re.compile(pattern.replace("{H}", HOME_PATTERN))
    return found

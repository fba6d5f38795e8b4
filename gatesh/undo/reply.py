"""The ``undo`` verb's reply (S17): typed records of a restore's plan and of the snapshots kept,
made here from the plan and the book, and the words a plan is said in.

The daemon's :class:`~gatesh.daemon.replies.Undone` carries them; they become JSON by the one
encoder of replies (:mod:`gatesh.wire_json`), field names and order as on the wire, and
``gatesh undo`` reads them back with :func:`gatesh.wire_json.from_wire`. Every field but an id
has a default, so a reply from an older daemon that left one out still reads (as empty);
``gatesh undo --json`` prints the reply as it came.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gatesh.undo.store import Change, CopyKind
from gatesh.wire_json import OMIT_NONE

if TYPE_CHECKING:
    from gatesh.undo.restore import Plan
    from gatesh.undo.store import Shot

__all__ = [
    "FileStep",
    "HeadStep",
    "OutsideStep",
    "PlanReport",
    "RefStep",
    "ShotRow",
    "Since",
    "SinceUnknown",
    "plan_report",
    "shot_row",
]


@dataclass(frozen=True)
class FileStep:
    """A path of work tree ``root`` the restore writes back or removes."""

    root: str = ""
    path: str = ""
    action: Change = Change.WRITE
    later: bool = False  # edited after the command: the person is asked before it is overwritten


@dataclass(frozen=True)
class RefStep:
    root: str = ""
    ref: str = ""
    now: str = ""  # "" when the ref is gone
    then: str = ""


@dataclass(frozen=True)
class HeadStep:
    root: str = ""
    now: str = ""
    then: str = ""


@dataclass(frozen=True)
class OutsideStep:
    """A path outside any repository put back, and what it was when the snapshot was taken."""

    path: str = ""
    kind: CopyKind = CopyKind.FILE


@dataclass(frozen=True)
class PlanReport:
    """A restore's plan (``gatesh undo ID``), or what a restore did: then ``undone_by`` names the
    snapshot that undoes it ("" when it replaced nothing) and ``millis`` what it took."""

    id: int
    command: str = ""
    time: float = 0.0
    files: tuple[FileStep, ...] = ()
    refs: tuple[RefStep, ...] = ()
    head: tuple[HeadStep, ...] = ()
    index: tuple[str, ...] = ()  # work trees whose index is put back
    stash: tuple[str, ...] = ()  # work trees whose stash is put back
    outside: tuple[OutsideStep, ...] = ()
    fingerprint: str = ""
    undone_by: str | None = field(default=None, metadata=OMIT_NONE)
    millis: float | None = field(default=None, metadata=OMIT_NONE)

    @property
    def changes(self) -> bool:
        """Whether the restore would change anything."""
        return bool(
            self.files or self.refs or self.head or self.index or self.stash or self.outside
        )


@dataclass(frozen=True)
class Since:
    """What changed since a snapshot was taken (counts of the plan of restoring it)."""

    files: int = 0
    later: int = 0  # of those files, edited after the command
    refs: int = 0  # refs and HEADs
    index: bool = False
    stash: bool = False
    outside: int = 0


@dataclass(frozen=True)
class SinceUnknown:
    """Why what changed since a snapshot is not known (its plan could not be made)."""

    error: str


@dataclass(frozen=True)
class ShotRow:
    """One line of ``gatesh undo --list``: a snapshot, and what changed since it was taken."""

    id: int
    time: float = 0.0
    session: str = ""
    cwd: str = ""
    command: str = ""
    trees: tuple[str, ...] = ()
    files: tuple[str, ...] = ()  # paths outside any repository it holds
    bytes: int = 0
    # SinceUnknown first: a reply's object is read as the first of these it can be.
    since: SinceUnknown | Since = Since()


def plan_report(plan: Plan) -> PlanReport:
    """The plan as the daemon sends it to ``gatesh undo`` (paths as they are, for a person)."""
    return PlanReport(
        id=plan.shot.id,
        command=plan.shot.command,
        time=plan.shot.time,
        files=tuple(FileStep(f.root, f.path, f.action, f.later) for f in plan.files),
        refs=tuple(RefStep(r.root, r.ref, r.now, r.then) for r in plan.refs),
        head=tuple(HeadStep(r, n, t) for r, n, t in plan.head),
        index=plan.index,
        stash=plan.stash,
        outside=tuple(OutsideStep(c.path, c.kind) for c in plan.outside),
        fingerprint=plan.fingerprint,
    )


def shot_row(shot: Shot, since: Plan | str) -> ShotRow:
    """One line of ``gatesh undo --list``: the snapshot, and what changed since it was taken
    (``since``: the plan of restoring it, or why there is none)."""
    return ShotRow(
        id=shot.id,
        time=shot.time,
        session=shot.session,
        cwd=shot.cwd,
        command=shot.command,
        trees=tuple(r.root for r in shot.repos),
        files=tuple(f.path for f in shot.files),
        bytes=shot.bytes,
        since=SinceUnknown(since)
        if isinstance(since, str)
        else Since(
            files=len(since.files),
            later=len(since.later),
            refs=len(since.refs) + len(since.head),
            index=bool(since.index),
            stash=bool(since.stash),
            outside=len(since.outside),
        ),
    )

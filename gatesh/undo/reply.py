"""The ``undo`` verb's reply (S17): the JSON the daemon sends ``gatesh undo``, written from the
plan and the snapshots, and read back into typed records for the person's text.

The JSON objects stay in this module: :mod:`gatesh.undo.ops` hands the daemon what
:func:`plan_json` and :func:`row_json` write, and :mod:`gatesh.undo_cli` works on the
:class:`PlanReport` and :class:`ShotRow` that :func:`read_plan` and :func:`read_rows` make of it.
Reading is lenient where the text allows (a missing field reads as empty), so an older daemon's
reply still prints; ``gatesh undo --json`` prints the reply as it came.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gatesh.undo.restore import Plan
    from gatesh.undo.store import Shot

__all__ = [
    "FileStep",
    "HeadStep",
    "PlanReport",
    "RefStep",
    "ShotRow",
    "Since",
    "plan_json",
    "read_plan",
    "read_rows",
    "row_json",
]


# --- writing (the daemon's side) -------------------------------------------------------------------


def plan_json(plan: Plan) -> dict[str, Any]:
    """The plan as the daemon sends it to ``gatesh undo`` (paths as they are, for a person)."""
    return {
        "id": plan.shot.id,
        "command": plan.shot.command,
        "time": plan.shot.time,
        "files": [
            {"root": f.root, "path": f.path, "action": f.action, "later": f.later}
            for f in plan.files
        ],
        "refs": [{"root": r.root, "ref": r.ref, "now": r.now, "then": r.then} for r in plan.refs],
        "head": [{"root": r, "now": n, "then": t} for r, n, t in plan.head],
        "index": list(plan.index),
        "stash": list(plan.stash),
        "outside": [{"path": c.path, "kind": c.kind} for c in plan.outside],
        "fingerprint": plan.fingerprint,
    }


def row_json(shot: Shot, since: Plan | str) -> dict[str, Any]:
    """One line of ``gatesh undo --list``: the snapshot, and what changed since it was taken
    (``since``: the plan of restoring it, or why there is none)."""
    return {
        "id": shot.id,
        "time": shot.time,
        "session": shot.session,
        "cwd": shot.cwd,
        "command": shot.command,
        "trees": [r.root for r in shot.repos],
        "files": [f.path for f in shot.files],
        "bytes": shot.bytes,
        "since": {"error": since}
        if isinstance(since, str)
        else {
            "files": len(since.files),
            "later": len(since.later),
            "refs": len(since.refs) + len(since.head),
            "index": bool(since.index),
            "stash": bool(since.stash),
            "outside": len(since.outside),
        },
    }


# --- reading (gatesh undo's side) ----------------------------------------------------------------


@dataclass(frozen=True)
class FileStep:
    """A path the restore writes back (``action`` "write") or removes ("remove")."""

    path: str
    action: str
    later: bool  # edited after the command: the person is asked before it is overwritten


@dataclass(frozen=True)
class RefStep:
    ref: str
    now: str  # "" when the ref is gone
    then: str


@dataclass(frozen=True)
class HeadStep:
    now: str
    then: str


@dataclass(frozen=True)
class PlanReport:
    """A restore's plan (``gatesh undo ID``), or what a restore did (then ``undone_by`` names the
    snapshot that undoes it)."""

    id: object  # printed as the daemon wrote it
    command: str
    time: float
    files: tuple[FileStep, ...]
    refs: tuple[RefStep, ...]
    head: tuple[HeadStep, ...]
    index: bool
    stash: bool
    outside: tuple[str, ...]  # paths outside any repository put back
    fingerprint: str
    undone_by: str

    @property
    def changes(self) -> bool:
        """Whether the restore would change anything."""
        return bool(
            self.files or self.refs or self.head or self.index or self.stash or self.outside
        )


@dataclass(frozen=True)
class Since:
    """What changed since a snapshot was taken; ``error`` says why that is not known."""

    files: int
    refs: int
    stash: bool
    index: bool
    outside: int
    error: str | None


@dataclass(frozen=True)
class ShotRow:
    id: object  # printed as the daemon wrote it
    time: float
    cwd: str
    command: str
    since: Since


def _object(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _objects(value: object) -> list[dict[str, object]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def read_plan(value: object) -> PlanReport:
    """The plan (or the restore's report) in the daemon's reply."""
    plan = _object(value)
    return PlanReport(
        id=plan.get("id"),
        command=str(plan.get("command", "")),
        time=float(plan.get("time", 0)),  # type: ignore[arg-type]  # a number, or the reply is bad
        files=tuple(
            FileStep(str(f.get("path")), str(f.get("action")), bool(f.get("later")))
            for f in _objects(plan.get("files"))
        ),
        refs=tuple(
            RefStep(str(r.get("ref")), str(r.get("now") or ""), str(r.get("then")))
            for r in _objects(plan.get("refs"))
        ),
        head=tuple(
            HeadStep(str(h.get("now")), str(h.get("then"))) for h in _objects(plan.get("head"))
        ),
        index=bool(plan.get("index")),
        stash=bool(plan.get("stash")),
        outside=tuple(str(o.get("path")) for o in _objects(plan.get("outside"))),
        fingerprint=str(plan.get("fingerprint", "")),
        undone_by=str(plan.get("undone_by") or ""),
    )


def read_rows(value: object) -> list[ShotRow]:
    """The snapshots in the daemon's ``--list`` reply, newest first."""
    rows = []
    for r in _objects(value):
        since = _object(r.get("since"))
        rows.append(
            ShotRow(
                id=r.get("id"),
                time=float(r.get("time", 0)),  # type: ignore[arg-type]  # as read_plan
                cwd=str(r.get("cwd", "")),
                command=str(r.get("command", "")),
                since=Since(
                    files=_count(since.get("files")),
                    refs=_count(since.get("refs")),
                    stash=bool(since.get("stash")),
                    index=bool(since.get("index")),
                    outside=_count(since.get("outside")),
                    error=str(since["error"]) if "error" in since else None,
                ),
            )
        )
    return rows

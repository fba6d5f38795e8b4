"""What the daemon does for ``gatesh undo`` (a person's verb, S9.5): list, plan, restore.

Each function is synchronous (the daemon runs it off its event loop) and answers with the typed
records of :mod:`gatesh.undo.reply`; a failure raises :class:`~gatesh.undo.restore.RestoreFailed` or
:class:`~gatesh._errors.StateError` with a sentence a person can act on.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from gatesh.undo.guard import expire, take
from gatesh.undo.reply import PlanReport, ShotRow, plan_report, shot_row
from gatesh.undo.restore import Plan, RestoreFailed, plan, restore
from gatesh.undo.snapshot import Skipped
from gatesh.undo.store import Book
from gatesh.worktree import find_repo

if TYPE_CHECKING:
    from gatesh.config import UndoConfig

__all__ = ["LIST_DEFAULT", "list_shots", "plan_of", "restore_to"]

LIST_DEFAULT: Final = 10
# A snapshot of what a restore replaces may take longer than one before an agent's command: a
# person waits for it, and a restore without it is refused.
SAFETY_SECONDS: Final = 30.0


def list_shots(state_dir: str, config: UndoConfig, n: int = LIST_DEFAULT) -> tuple[ShotRow, ...]:
    """The newest ``n`` snapshots, newest first, each with what changed since it was taken."""
    book = Book(state_dir)
    expire(book, config)
    rows = []
    for shot in reversed(book.shots()[-n:] if n > 0 else []):
        try:
            since: Plan | str = plan(book, shot.id, config.max_file_bytes)
        except RestoreFailed as exc:
            since = str(exc)
        rows.append(shot_row(shot, since))
    return tuple(rows)


def plan_of(state_dir: str, config: UndoConfig, shot_id: int) -> PlanReport:
    """What ``gatesh undo ID`` would do."""
    return plan_report(plan(Book(state_dir), shot_id, config.max_file_bytes))


def restore_to(state_dir: str, config: UndoConfig, shot_id: int, fingerprint: str) -> PlanReport:
    """Put snapshot ``shot_id`` back, first snapshotting what it replaces; the plan carried out
    and the id that undoes this restore."""
    book = Book(state_dir)

    def safety(roots: list[str], outside: list[str]) -> str:
        repos = [r for r in (find_repo(root) for root in roots) if r is not None]
        try:
            shot = take(
                repos,
                outside,
                command=f"gatesh undo {shot_id}",
                session="",
                cwd=roots[0] if roots else "/",
                config=replace(config, max_seconds=max(config.max_seconds, SAFETY_SECONDS)),
                book=book,
            )
        except Skipped as exc:
            raise RestoreFailed(
                f"what the restore would replace could not be snapshotted first ({exc}); "
                "nothing was changed"
            ) from None
        return str(shot.id)

    started = time.monotonic()
    done, undo_id = restore(book, shot_id, fingerprint, safety, config.max_file_bytes)
    return replace(
        plan_report(done),
        undone_by=undo_id,
        millis=round((time.monotonic() - started) * 1000, 1),
    )

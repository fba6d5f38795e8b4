"""The snapshot before an allowed command runs (S17): where, when, and what if it fails.

:func:`protect` is the one step every surface that runs commands takes between deciding a command
(:func:`gatesh.pipeline.decide`) and finishing it (:func:`gatesh.finish.finish`): the daemon's
decision worker, the daemon-less gate, a person's ruling that lets a waiting command run. Its
guarantees:

- A snapshot is taken only for a command that is allowed and not known read-only, in the work
  trees it may write (its folder's, and those of the paths it names) and of the files it names
  outside any repository; never for a dry run (``explain``, ``eval``).
- A decision that rests on undo (:attr:`gatesh.Decision.undo`: a loss judged reversible because a
  snapshot will hold it) runs only once that snapshot is taken. When it cannot be — over a budget,
  git failing, anything — the command is decided again without undo (``redecide``), and that
  decision, today's judgement, is the one finished: no command loses work it would not have lost
  without undo. The audit line says why (``undo_note``).
- Never raises: a failure here is a snapshot not taken.

The daemon runs the steps apart (:func:`wants_snapshot`, :func:`snapshot_before`,
:func:`without_snapshot`), each off its event loop with its own deadline, so a snapshot's time
budget never eats into a decision's; the daemon-less gate runs :func:`protect`, which is the three.
"""

from __future__ import annotations

import glob
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

from gatesh._json import OMIT_NONE
from gatesh._types import Action, Decision, Direction, PathClass, Stage
from gatesh.audit import clean
from gatesh.undo._git import Git, GitFailed
from gatesh.undo.cover import SKIPPED_MEMORY_S, Policy
from gatesh.undo.snapshot import Budget, Skipped, copy_outside, forget, snapshot_repo
from gatesh.undo.store import Attempt, Book, FileCopy, RepoShot, Shot
from gatesh.vocab.paths.classes import PROJECT_SECRETS
from gatesh.worktree import Repo, find_repo

if TYPE_CHECKING:
    from gatesh.config import Config, UndoConfig

__all__ = [
    "NO_SNAPSHOT",
    "Forecast",
    "expire",
    "foresee",
    "places",
    "policy_for",
    "protect",
    "snapshot_before",
    "take",
    "wants_snapshot",
    "without_snapshot",
]

# Decisions no snapshot is taken for: nothing runs that a decision of gatesh's let write (known
# read-only commands, harness boilerplate, the commands a broken config still lets run, errors).
NO_SNAPSHOT: Final = frozenset({Stage.READ_ONLY, Stage.HARNESS, Stage.CONFIG, Stage.ERROR})
# Classes of paths a command's own targets are copied from when no repository holds them.
_COPIED: Final = frozenset({PathClass.WORKTREE, PathClass.HOME, PathClass.ELSEWHERE})
# At most this many work trees and outside targets per command (more: the snapshot is skipped).
MAX_TREES: Final = 8
MAX_TARGETS: Final = 64
# Expiry is checked every this many snapshots (and by `gatesh undo --list`).
EXPIRE_EVERY: Final = 16


def policy_for(config: Config, state_dir: str) -> Policy | None:
    """The undo policy ``config`` sets (None when ``undo.enabled`` is false)."""
    u = config.undo
    if not u.enabled:
        return None
    return Policy(u.max_bytes, u.max_file_bytes, state_dir)


def places(decision: Decision, cwd: str) -> tuple[list[Repo], list[str]]:
    """The work trees and the outside paths a snapshot before ``decision``'s command holds."""
    repos: dict[str, Repo] = {}
    outside: dict[str, None] = {}

    def add_repo(path: str) -> bool:
        repo = find_repo(path)
        if repo is None:
            return False
        repos.setdefault(repo.root, repo)
        return True

    add_repo(cwd)
    for e in decision.facts.paths:
        if not e.resolved or e.direction is Direction.READ:
            continue
        if add_repo(e.resolved):
            continue
        if e.cls in _COPIED or (e.cls is PathClass.CREDENTIALS and e.kind == PROJECT_SECRETS.name):
            if any(ch in e.resolved for ch in "*?["):
                for m in sorted(glob.glob(e.resolved))[:MAX_TARGETS]:
                    outside.setdefault(m, None)
            else:
                outside.setdefault(e.resolved, None)
    for place in decision.undo:
        add_repo(place)
    return list(repos.values()), list(outside)


def take(
    repos: Sequence[Repo],
    outside: Sequence[str],
    *,
    command: str,
    session: str,
    cwd: str,
    config: UndoConfig,
    book: Book,
) -> Shot:
    """One snapshot (one id) of ``repos`` and ``outside``. Raises Skipped, having recorded why
    against the work tree that stopped it."""
    start = time.monotonic()
    when = time.time()
    if len(repos) > MAX_TREES or len(outside) > MAX_TARGETS:
        raise Skipped(f"the command names more than {MAX_TREES} work trees or {MAX_TARGETS} paths")
    budget = Budget(config.max_bytes, config.max_file_bytes, start + config.max_seconds)
    with book.locked():
        shot_id = book.next_id()
    shown = clean(command)
    taken: list[RepoShot] = []
    try:
        for repo in repos:
            last = book.attempt(repo.git_dir, repo.root)
            _too_large_lately(last, when)
            t0 = time.monotonic()
            try:
                rs = snapshot_repo(repo, shot_id, book, budget, command=shown, when=when)
            except Skipped as exc:
                why = str(exc)
                too_large = "max_bytes" in why or "too large to walk" in why
                book.note_attempt(
                    repo.git_dir,
                    repo.root,
                    Attempt(when, False, why, 0, (time.monotonic() - t0) * 1000, too_large),
                )
                raise
            taken.append(rs)
            if last is None or not last.ok:  # only a change is written (a rename costs ~2 ms)
                book.note_attempt(
                    repo.git_dir,
                    repo.root,
                    Attempt(when, True, "", rs.new_bytes, (time.monotonic() - t0) * 1000),
                )
    except Skipped:
        _drop_refs(book, taken)
        raise
    except Exception as exc:  # anything else is a snapshot not taken
        _drop_refs(book, taken)
        raise Skipped(f"internal error: {type(exc).__name__}: {exc}") from None
    # Copies of the files it names outside any repository: for `gatesh undo` only (no decision
    # rests on them), so a copy that cannot be made leaves them out rather than the snapshot.
    files: list[FileCopy] = []
    if outside:
        try:
            files = copy_outside(outside, shot_id, book, budget)
        except Skipped:
            files = []
    if not taken and not files:
        raise Skipped("the files it names outside any repository could not be copied")
    shot = Shot(
        id=shot_id,
        time=when,
        session=session,
        cwd=clean(cwd),
        command=shown,
        repos=tuple(taken),
        files=tuple(files),
        millis=round((time.monotonic() - start) * 1000, 2),
    )
    with book.locked():
        book.add(shot)
    if shot_id % EXPIRE_EVERY == 0:
        expire(book, config)
    return shot


def _too_large_lately(last: Attempt | None, now: float) -> None:
    """Skipped at once when this tree's last snapshot (``last``) found it too large (more new
    data than undo.max_bytes, or more files than a walk within undo.max_seconds) a short while
    ago: trying again would cost the same and end the same. Tried again after SKIPPED_MEMORY_S."""
    if last is None or last.ok or not last.too_large:
        return
    ago = now - last.time
    if 0 <= ago < SKIPPED_MEMORY_S:
        raise Skipped(
            f"the last snapshot of this tree, {ago:.0f} s ago, was skipped ({last.reason}); "
            f"it is tried again {SKIPPED_MEMORY_S:.0f} s after that"
        )


def _drop_refs(book: Book, taken: Sequence[RepoShot]) -> None:
    """Delete the refs of a snapshot not taken after all; the caches of those trees name objects
    only those refs held, so they are forgotten (the next snapshot reads every file again)."""
    for rs in taken:
        forget(book.tree_dir(rs.git_dir, rs.root))
        try:
            Git(rs.root, rs.git_dir, rs.common_dir).run("update-ref", "-d", rs.ref)
        except GitFailed:
            pass


def expire(book: Book, config: UndoConfig) -> int:
    """Drop the snapshots past ``undo.keep``, ``undo.max_age_days`` and ``undo.max_total_bytes``;
    how many were dropped."""
    with book.locked():
        shots = book.shots()
        kept, gone = book.expired(
            shots,
            keep=config.keep,
            max_age_s=config.max_age_days * 86400,
            max_total_bytes=config.max_total_bytes,
            now=time.time(),
        )
        if not gone:
            return 0
        by_repo: dict[tuple[str, str, str], list[str]] = {}
        for s in gone:
            for rs in s.repos:
                by_repo.setdefault((rs.root, rs.git_dir, rs.common_dir), []).append(rs.ref)
        for (root, git_dir, common_dir), refs in by_repo.items():
            try:
                Git(root, git_dir, common_dir).run(
                    "update-ref", "--stdin", input="".join(f"delete {r}\n" for r in refs).encode()
                )
            except GitFailed:
                pass  # the repository is gone or moved: nothing of it to keep
        book.rewrite(kept)
        for s in gone:
            book.drop_files(s)
        # A tree none of whose snapshots is kept: its cache names objects no ref holds any more.
        held = {(rs.git_dir, rs.root) for s in kept for rs in s.repos}
        for git_dir, root in {(rs.git_dir, rs.root) for s in gone for rs in s.repos} - held:
            forget(book.tree_dir(git_dir, root))
        return len(gone)


def wants_snapshot(decision: Decision, config: Config) -> bool:
    """Whether a snapshot is due before ``decision``'s command runs: it is allowed, not at a
    stage that lets nothing of the agent's run, and not known read-only (unless it rests on a
    snapshot). Cheap: no file system access."""
    if not config.undo.enabled or decision.action is not Action.ALLOW:
        return False
    if decision.stage in NO_SNAPSHOT:
        return False
    if decision.undo:
        return True
    from gatesh.policy import readonly

    return not readonly.is_read_only(decision.facts)


def snapshot_before(
    decision: Decision, *, cwd: str, session: str, config: Config, state_dir: str
) -> tuple[Decision, str]:
    """Take the snapshot due before ``decision``'s command runs: (the decision naming it, "") or,
    when none could be taken, (``decision``, why). Never raises."""
    try:
        if not wants_snapshot(decision, config):
            return decision, ""
        repos, outside = places(decision, cwd)
        if not repos and not outside:
            return decision, ""
        shot = take(
            repos,
            outside,
            command=decision.facts.text,
            session=session,
            cwd=cwd,
            config=config.undo,
            book=Book(state_dir),
        )
    except Skipped as exc:
        return decision, str(exc)
    except Exception as exc:  # never raises: a failure is a snapshot not taken
        return decision, f"internal error: {type(exc).__name__}: {exc}"
    return replace(decision, snapshot=str(shot.id)), ""


def protect(
    decision: Decision,
    *,
    cwd: str,
    session: str,
    config: Config,
    state_dir: str,
    redecide: Callable[[], Decision],
) -> Decision:
    """``decision``, with the snapshot taken before its command runs (see the module docstring);
    or, when a snapshot it rests on could not be taken, the decision ``redecide`` makes without
    undo (:func:`without_snapshot`). Never raises."""
    taken, why = snapshot_before(
        decision, cwd=cwd, session=session, config=config, state_dir=state_dir
    )
    return without_snapshot(decision, why, redecide) if why else taken


def without_snapshot(decision: Decision, why: str, redecide: Callable[[], Decision]) -> Decision:
    """The decision when the snapshot due before it (``why``: why it was not taken) is missing:
    as it is, noted, unless it rests on that snapshot; then the one ``redecide`` makes without
    undo (which must not rest on one), noted. Never raises."""
    if not decision.undo:
        return replace(decision, undo_note=f"no snapshot was taken: {why}")
    try:
        again = redecide()
    except Exception as exc:  # fail closed: the decision that rested on undo cannot stand
        from gatesh import messages
        from gatesh.undecided import failed_decision

        detail = f"{type(exc).__name__}: {exc}"
        again = failed_decision(
            decision.facts.text, f"internal error: {detail}", messages.error(detail)
        )
    if again.undo:  # redecide must judge without undo; if it did not, refuse rather than trust it
        from gatesh import messages
        from gatesh.undecided import failed_decision

        reason = "internal error: the decision without undo still rested on a snapshot"
        again = failed_decision(decision.facts.text, reason, messages.error(reason))
    return replace(
        again,
        undo_note=f"no snapshot was taken ({why}), so it was judged without undo",
    )


@dataclass(frozen=True)
class Forecast:
    """What :func:`protect` would do for a decision (``explain``, S17): whether undo is on and a
    snapshot is taken; when one is, of which work ``trees`` and ``outside`` files, which losses
    the decision ``rests_on`` it for, the action ``without`` undo (only when it rests on one), and
    why the last snapshot of a tree was skipped (``last_skipped``, tree -> why). The parts of a
    snapshot are None (left out of ``explain --json``) when none is taken."""

    enabled: bool
    snapshot: bool = False
    trees: tuple[str, ...] | None = field(default=None, metadata=OMIT_NONE)
    outside: tuple[str, ...] | None = field(default=None, metadata=OMIT_NONE)
    rests_on: tuple[str, ...] | None = field(default=None, metadata=OMIT_NONE)
    last_skipped: Mapping[str, str] | None = field(default=None, metadata=OMIT_NONE)
    without: Action | None = field(default=None, metadata=OMIT_NONE)


def foresee(
    decision: Decision, *, cwd: str, config: Config, state_dir: str, without: Decision | None
) -> Forecast:
    """What :func:`protect` would do for ``decision``, without doing it (``explain``): whether a
    snapshot is taken and of what, whether the decision rests on it, the decision ``without``
    undo when it does, and why the last snapshot of a tree was skipped, if it was."""
    none = Forecast(enabled=config.undo.enabled)
    if not wants_snapshot(decision, config):
        return none
    repos, outside = places(decision, cwd)
    if not repos and not outside:
        return none
    book = Book(state_dir)
    skipped = {}
    for r in repos:
        last = book.attempt(r.git_dir, r.root)
        if last is not None and not last.ok:
            skipped[r.root] = last.reason
    return Forecast(
        enabled=config.undo.enabled,
        snapshot=True,
        trees=tuple(r.root for r in repos),
        outside=tuple(outside),
        rests_on=decision.undo,
        last_skipped=skipped,
        without=without.action if decision.undo and without is not None else None,
    )

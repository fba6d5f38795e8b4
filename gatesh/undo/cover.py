"""Whether an undo snapshot will hold what a command loses (S17), judged before it runs.

The rater reads reversibility from the working tree (S3.2): an untracked, ignored or modified file,
commits a reset drops, a stash a drop deletes, are work a command would lose. When the surface
deciding the command takes a snapshot before it runs, such a loss is reversible — if the snapshot
will hold it. :class:`Policy` answers that, from what the snapshot engine guarantees:

- inside a work tree, every file is held except ``.git``, nested repositories, regenerable
  folders (which the probe never counts as a loss) and files over ``undo.max_file_bytes``; a loss
  inside ``.git`` or of the repository itself is never held (the snapshot lives there);
- commits and stash entries stay reachable from the snapshot's commit, and its refs are put back;
- a work tree whose last snapshot was skipped for its size is judged as without undo until a
  snapshot there succeeds again (the budget is spent on trying only once it could pass).

A loss held this way is still named; the finding says the snapshot holds it. What no snapshot
holds — over a budget, inside ``.git``, outside any work tree, sent or pushed elsewhere, a path
only known when it runs — is judged exactly as without undo. (The files a command names outside
any repository are copied all the same, so ``gatesh undo`` can put them back; the judgement does
not rest on those copies.) And if the snapshot then cannot be taken, the command is decided
again without undo before anything runs (:mod:`gatesh.undo.guard`).

The policy in force is a context variable set by the pipeline around the rating (``judging``), so
the rater's interface stays the same and a rating made elsewhere (a test, the alignment contract)
is judged as without undo.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import posixpath
import stat
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from gatesh.undo.store import Book
from gatesh.vocab import regenerable
from gatesh.worktree import Loss, State, find_repo

__all__ = ["SKIPPED_MEMORY_S", "Policy", "active", "judging"]

# How many files a folder loss may hold and still be judged held (the probe's own bound).
MAX_COUNTED: Final = 5000
# A work tree whose snapshot was skipped for its size this recently is judged without undo, and
# no snapshot of it is tried (gatesh.undo.guard).
SKIPPED_MEMORY_S: Final = 600.0

_HELD: Final = frozenset({State.MODIFIED, State.UNTRACKED, State.IGNORED})


@dataclass(frozen=True)
class Policy:
    """What a snapshot taken before the command will hold (from ``[undo]`` in the config)."""

    max_bytes: int
    max_file_bytes: int
    state_dir: str

    def holds(self, target: str, losses: Sequence[Loss]) -> str:
        """The work tree whose snapshot must hold ``losses`` (what writing or deleting the
        absolute ``target`` loses) for them to be undone, or "" when no snapshot would hold all
        of them."""
        if not losses or not target:
            return ""
        if any(x.state not in _HELD for x in losses):
            return ""  # outside any work tree, the repository itself, or unknown: not held
        globbed = any(ch in target for ch in "*?[")
        # A glob's matches lie under the folder before its first pattern character.
        repo = find_repo(_static_folder(target) if globbed else target)
        if repo is None or _in_git(target, repo.root):
            return ""
        if not self._tree_fits(repo.git_dir, repo.root):
            return ""
        total = 0
        for x in losses:
            rel = x.path.rstrip("/")
            if rel == ".git" or rel.startswith(".git/") or regenerable.is_regenerable(rel):
                return ""
            size = self._size(posixpath.join(repo.root, rel))
            if size < 0:
                return ""
            total += size
            if total > self.max_bytes:
                return ""
        return repo.root

    def holds_repo(self, cwd: str, files: Sequence[Loss]) -> str:
        """The work tree a git verb run in ``cwd`` changes, when a snapshot would hold what it
        loses: its ``files`` (relative to the root) and any commits or stash entries; or ""."""
        repo = find_repo(cwd)
        if repo is None or _in_git(cwd, repo.root) or not self._tree_fits(repo.git_dir, repo.root):
            return ""
        if not files:
            return repo.root
        return self.holds(repo.root, files)

    def _tree_fits(self, git_dir: str, root: str) -> bool:
        last = Book(self.state_dir).attempt(git_dir, root)
        if last is None or last.ok:
            return True
        return not (last.too_large and time.time() - last.time < SKIPPED_MEMORY_S)

    def _size(self, path: str) -> int:
        """Bytes a snapshot would hold for ``path`` (a file, or a folder's files), or -1 when one
        of them is larger than undo.max_file_bytes or there are too many to count."""
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return 0
        except OSError:
            return -1
        if not stat.S_ISDIR(st.st_mode):
            return st.st_size if st.st_size <= self.max_file_bytes else -1
        total = 0
        count = 0
        for folder, dirs, names in os.walk(path):
            dirs[:] = [d for d in dirs if d != ".git" and not regenerable.is_regenerable(d)]
            if os.path.lexists(os.path.join(folder, ".git")) and folder != path:
                return -1
            for name in names:
                if regenerable.is_regenerable(name):
                    continue
                count += 1
                if count > MAX_COUNTED:
                    return -1
                try:
                    size = os.lstat(os.path.join(folder, name)).st_size
                except OSError:
                    continue
                if size > self.max_file_bytes:
                    return -1
                total += size
        return total


def _static_folder(pattern: str) -> str:
    """The folder a glob pattern's matches all lie under (its part before the first ``*?[``)."""
    k = min(i for i in (pattern.find(c) for c in "*?[") if i >= 0)
    return posixpath.dirname(pattern[:k]) or "/"


def _in_git(path: str, root: str) -> bool:
    git = root.rstrip("/") + "/.git"
    return path == git or path.startswith(git + "/")


_ACTIVE: contextvars.ContextVar[Policy | None] = contextvars.ContextVar(
    "gatesh_undo_policy", default=None
)


def active() -> Policy | None:
    """The policy the rating in progress is judged under (None: without undo)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def judging(policy: Policy | None) -> Iterator[None]:
    """Rate under ``policy`` inside this block (None: as without undo)."""
    token = _ACTIVE.set(policy)
    try:
        yield
    finally:
        _ACTIVE.reset(token)

"""Putting a snapshot back (S17): ``gatesh undo ID``.

:func:`plan` says what a restore would do — the files to write back or remove, the refs to move,
the index and the stash — and which of those files were edited after the command (found by a
later snapshot of the same tree), so the person is asked before those edits are overwritten.
:func:`restore` does it, after a snapshot of the state it replaces (so the undo itself can be
undone), and refuses when the tree changed since the plan was shown.

What a restore leaves alone: what no snapshot holds (regenerable folders, files over
``undo.max_file_bytes``, nested repositories), branches made after the snapshot, and empty
folders (git's trees do not hold them).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from gatesh._errors import GateshError
from gatesh.undo._git import Git, GitFailed
from gatesh.undo.snapshot import Budget, Skipped, capture_tree
from gatesh.undo.store import Book, Change, CopyKind, FileCopy, RepoMeta, RepoShot, Shot
from gatesh.worktree import Repo, object_format

__all__ = ["Change", "FileChange", "Plan", "RefChange", "RestoreFailed", "plan", "restore"]

# A restore reads and writes as much as it must; these bound only a runaway.
RESTORE_SECONDS: Final = 120.0
RESTORE_BYTES: Final = 8 << 30
DEFAULT_MAX_FILE_BYTES: Final = 32 << 20  # undo.max_file_bytes's default


class RestoreFailed(GateshError):
    """The snapshot could not be put back (its id is unknown, its objects are gone, the tree
    changed since the plan was shown, …). ``str()`` says why; nothing was changed unless it says so."""


@dataclass(frozen=True)
class FileChange:
    """One path a restore changes: ``write`` puts the snapshot's copy back, ``remove`` deletes
    what was made after it. ``later``: edited after the command (a later snapshot saw it)."""

    root: str
    path: str
    action: Change
    later: bool = False


@dataclass(frozen=True)
class RefChange:
    """One ref a restore moves back: ``then`` (the snapshot's) replaces ``now``."""

    root: str
    ref: str
    now: str
    then: str


@dataclass(frozen=True)
class _RepoPlan:
    shot: RepoShot
    meta: RepoMeta
    now_tree: str
    diff: tuple[tuple[str, Change, str, str], ...]  # (path, action, mode, blob) for each change
    refs: tuple[RefChange, ...]
    head: tuple[str, str] | None  # (now, then) when HEAD differs
    index: bool
    stash: bool


@dataclass(frozen=True)
class Plan:
    """What ``gatesh undo ID`` would do; ``fingerprint`` names the state it was computed from."""

    shot: Shot
    files: tuple[FileChange, ...]
    refs: tuple[RefChange, ...]
    head: tuple[tuple[str, str, str], ...]  # (root, now, then)
    index: tuple[str, ...]  # roots whose index is put back
    stash: tuple[str, ...]  # roots whose stash is put back
    outside: tuple[FileCopy, ...]
    fingerprint: str
    _repos: tuple[_RepoPlan, ...] = field(default=(), repr=False)

    @property
    def later(self) -> tuple[FileChange, ...]:
        return tuple(f for f in self.files if f.later)

    @property
    def empty(self) -> bool:
        return not (
            self.files or self.refs or self.head or self.index or self.stash or self.outside
        )


def _repo(shot: RepoShot) -> Repo:
    return Repo(shot.root, shot.git_dir, shot.common_dir)


def _git(shot: RepoShot, index: str = "") -> Git:
    return Git(shot.root, shot.git_dir, shot.common_dir, index, object_format(_repo(shot)))


def _budget(max_file_bytes: int) -> Budget:
    return Budget(RESTORE_BYTES, max_file_bytes, time.monotonic() + RESTORE_SECONDS)


def _diff(git: Git, a: str, b: str) -> list[tuple[str, Change, str, str]]:
    """(path, action, mode, blob) turning tree ``a`` into tree ``b``: ``write`` for a path ``b``
    holds with other content or mode, ``remove`` for one only ``a`` holds."""
    if a == b:
        return []
    out = git.run("diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", a, b)
    parts = out.split(b"\0")
    changes: list[tuple[str, Change, str, str]] = []
    i = 0
    while i + 1 < len(parts):
        head = parts[i].decode("ascii")
        path = parts[i + 1].decode("utf-8", "surrogateescape")
        i += 2
        if not head.startswith(":"):
            continue
        _old_mode, new_mode, _old, new, status = head[1:].split(" ")
        if status == "D":
            changes.append((path, Change.REMOVE, "", ""))
        else:
            changes.append((path, Change.WRITE, new_mode, new))
    return changes


def _meta(git: Git, commit: str) -> RepoMeta:
    return RepoMeta.decode(git.run("cat-file", "blob", f"{commit}:meta.json"))


def _index_oid(git: Git, root: str) -> str:
    path = os.path.join(git.git_dir, "index")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return ""
    h = hashlib.sha256() if git.algo == "sha256" else hashlib.sha1()
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def _snapshot_blob(git: Git, commit: str, name: str) -> str:
    out = git.run("ls-tree", commit, "--", name, ok=(0,)).decode()
    return out.split()[2] if out.strip() else ""


def _repo_plan(book: Book, shot: Shot, rs: RepoShot, max_file_bytes: int) -> _RepoPlan:
    git = _git(rs)
    try:
        git.run("cat-file", "-e", f"{rs.commit}^{{commit}}")
    except GitFailed:
        raise RestoreFailed(
            f"snapshot {shot.id} of {rs.root} is gone from its repository "
            f"(its ref {rs.ref} was deleted, or the repository was replaced)"
        ) from None
    meta = _meta(git, rs.commit)
    try:
        now = capture_tree(_repo(rs), book, _budget(max_file_bytes))
    except Skipped as exc:
        raise RestoreFailed(f"the work tree {rs.root} could not be read ({exc})") from None
    keep = set(meta.left_out)
    diff = [
        c for c in _diff(git, now.tree, rs.tree) if not (c[1] is Change.REMOVE and c[0] in keep)
    ]
    tips = git.tips(time.monotonic() + 30)
    then: dict[str, str] = dict(meta.refs)
    refs = tuple(
        RefChange(rs.root, name, tips.get(name, ""), oid)
        for name, oid in sorted(then.items())
        if name != "refs/stash" and tips.get(name) != oid
    )
    try:
        with open(os.path.join(rs.git_dir, "HEAD"), encoding="utf-8", errors="replace") as f:
            head_now = f.read(4096).strip()
    except OSError:
        head_now = ""
    head_then = meta.head
    head = (head_now, head_then) if head_then and head_now != head_then else None
    index_then = _snapshot_blob(git, rs.commit, "index")
    index = bool(index_then) and _index_oid(git, rs.root) != index_then
    try:
        with open(
            os.path.join(rs.common_dir, "logs", "refs", "stash"), encoding="utf-8", errors="replace"
        ) as f:
            stash_now = f.read(4 << 20)
    except OSError:
        stash_now = ""
    stash = stash_now != meta.stash_log or tips.get("refs/stash", "") != then.get("refs/stash", "")
    return _RepoPlan(rs, meta, now.tree, tuple(diff), refs, head, index, stash)


def plan(book: Book, shot_id: int, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Plan:
    """What restoring snapshot ``shot_id`` would do. Raises RestoreFailed.

    ``max_file_bytes`` is ``undo.max_file_bytes``: larger files are in no snapshot, so a restore
    neither reads nor touches them."""
    shots = book.shots()
    shot = next((s for s in shots if s.id == shot_id), None)
    if shot is None:
        known = ", ".join(str(s.id) for s in shots[-5:]) or "none"
        raise RestoreFailed(f"no snapshot {shot_id} (the newest kept: {known}; gatesh undo --list)")
    repos: list[_RepoPlan] = []
    files: list[FileChange] = []
    for rs in shot.repos:
        later = next(
            (r for s in shots if s.id > shot.id for r in s.repos if r.root == rs.root), None
        )
        rp = _repo_plan(book, shot, rs, max_file_bytes)
        # Edits made after the command: what changed since a later snapshot of this tree.
        edited = (
            {p for p, _, _, _ in _diff(_git(rs), later.tree, rp.now_tree)}
            if later is not None
            else set()
        )
        repos.append(rp)
        files.extend(FileChange(rs.root, p, a, p in edited) for p, a, _, _ in rp.diff)
    outside = tuple(c for c in shot.files if _outside_differs(book, shot, c))
    fp = hashlib.sha1(
        json.dumps(
            [
                [r.now_tree, r.diff, [x.__dict__ for x in r.refs], r.head, r.index, r.stash]
                for r in repos
            ]
            + [[c.path for c in outside]],
            default=str,
        ).encode("utf-8", "surrogateescape")
    ).hexdigest()
    return Plan(
        shot=shot,
        files=tuple(files),
        refs=tuple(x for r in repos for x in r.refs),
        head=tuple((r.shot.root, *r.head) for r in repos if r.head is not None),
        index=tuple(r.shot.root for r in repos if r.index),
        stash=tuple(r.shot.root for r in repos if r.stash),
        outside=outside,
        fingerprint=fp,
        _repos=tuple(repos),
    )


def _outside_differs(book: Book, shot: Shot, c: FileCopy) -> bool:
    try:
        st = os.lstat(c.path)
    except FileNotFoundError:
        return c.kind is not CopyKind.ABSENT
    if c.kind is CopyKind.ABSENT:
        return True
    if c.kind is CopyKind.SYMLINK:
        return not stat.S_ISLNK(st.st_mode) or os.readlink(c.path) != c.target
    if c.kind is CopyKind.FOLDER:
        return not stat.S_ISDIR(st.st_mode)
    if not stat.S_ISREG(st.st_mode) or st.st_size != c.size or (st.st_mode & 0o7777) != c.mode:
        return True
    with open(c.path, "rb") as a, open(os.path.join(book.files_dir(shot.id), c.copy), "rb") as b:
        while True:
            x, y = a.read(1 << 20), b.read(1 << 20)
            if x != y:
                return True
            if not x:
                return False


# --- doing it ---------------------------------------------------------------------------------


def restore(
    book: Book,
    shot_id: int,
    fingerprint: str,
    take_safety: Callable[[list[str], list[str]], str],
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> tuple[Plan, str]:
    """Put snapshot ``shot_id`` back, if the state still matches ``fingerprint`` (the plan the
    person saw). ``take_safety(roots, outside)`` snapshots the state about to be replaced first and
    returns its id ("" when there was nothing to hold); a restore whose safety snapshot fails is
    refused. Returns the plan carried out and the safety snapshot's id. Raises RestoreFailed."""
    p = plan(book, shot_id, max_file_bytes)
    if fingerprint and p.fingerprint != fingerprint:
        raise RestoreFailed(
            "the files changed since the plan was shown; nothing was changed: run it again"
        )
    if p.empty:
        return p, ""
    safety = take_safety([r.shot.root for r in p._repos], [c.path for c in p.outside])
    for rp in p._repos:
        _restore_repo(rp)
    for c in p.outside:
        _restore_outside(book, p.shot, c)
    return p, safety


def _restore_repo(rp: _RepoPlan) -> None:
    rs = rp.shot
    git = _git(rs)
    modes: dict[str, str] = dict(rp.meta.modes)
    removes = [c for c in rp.diff if c[1] is Change.REMOVE]
    writes = [c for c in rp.diff if c[1] is Change.WRITE]
    # Removals first, deepest first: a file may stand where the snapshot has a folder.
    for path, _, _, _ in sorted(removes, key=lambda c: -c[0].count("/")):
        full = os.path.join(rs.root, path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(full)
        _prune(rs.root, os.path.dirname(full))
    blobs = _read_blobs(git, [o for _, _, m, o in writes if m != "160000"])
    for path, _, mode, oid in writes:
        if mode == "160000":
            continue  # a submodule: its own repository holds it
        full = os.path.join(rs.root, path)
        _clear_way(rs.root, full)
        data = blobs[oid]
        if mode == "120000":
            with contextlib.suppress(FileNotFoundError):
                os.unlink(full)
            os.symlink(os.fsdecode(data), full)
            continue
        perm = int(modes[path], 8) if path in modes else (0o755 if mode == "100755" else 0o644)
        tmp = f"{full}.gatesh-undo.{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, perm)
        finally:
            os.close(fd)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full)
        os.replace(tmp, full)
    _restore_refs(rp, git)
    if rp.index:
        oid = _snapshot_blob(git, rs.commit, "index")
        data = git.run("cat-file", "blob", oid)
        _write_locked(os.path.join(rs.git_dir, "index"), data)


def _restore_refs(rp: _RepoPlan, git: Git) -> None:
    rs = rp.shot
    for r in rp.refs:
        git.run(
            "update-ref",
            "-m",
            f"gatesh undo: back to the snapshot before `{_short(rp.meta.command)}`",
            r.ref,
            r.then,
        )
    if rp.head is not None:
        then = rp.head[1]
        if then.startswith("ref:"):
            git.run("symbolic-ref", "HEAD", then[4:].strip())
        else:
            git.run("update-ref", "--no-deref", "HEAD", then)
    if rp.stash:
        then_tip = rp.meta.refs.get("refs/stash", "")
        log = rp.meta.stash_log
        if git.ref_files():
            logs = os.path.join(rs.common_dir, "logs", "refs")
            os.makedirs(logs, exist_ok=True)
            if then_tip:
                git.run("update-ref", "--no-deref", "refs/stash", then_tip)
                _write_locked(os.path.join(logs, "stash"), log.encode("utf-8", "surrogateescape"))
            else:
                with contextlib.suppress(GitFailed):
                    git.run("update-ref", "-d", "refs/stash")
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(logs, "stash"))
        else:  # a reftable: the stash is rebuilt entry by entry (the reflog's times are today's)
            with contextlib.suppress(GitFailed):
                git.run("update-ref", "-d", "refs/stash")
            for line in log.splitlines():
                head, _, message = line.partition("\t")
                parts = head.split(" ")
                if len(parts) >= 2:
                    git.run("stash", "store", "-m", message, parts[1])


def _short(command: str) -> str:
    text = " ".join(command.split())
    return text if len(text) <= 60 else text[:57] + "…"


def _read_blobs(git: Git, oids: Sequence[str]) -> dict[str, bytes]:
    """The content of each blob (one ``git cat-file --batch``)."""
    unique = list(dict.fromkeys(oids))
    if not unique:
        return {}
    out = git.run("cat-file", "--batch", input="".join(o + "\n" for o in unique).encode())
    blobs: dict[str, bytes] = {}
    pos = 0
    for oid in unique:
        end = out.index(b"\n", pos)
        header = out[pos:end].decode("ascii").split()
        if len(header) < 3 or header[1] != "blob":
            raise RestoreFailed(f"the snapshot's object {oid} is missing from the repository")
        size = int(header[2])
        blobs[oid] = out[end + 1 : end + 1 + size]
        pos = end + 1 + size + 1
    return blobs


def _clear_way(root: str, full: str) -> None:
    """Make the folders above ``full`` exist, removing a file or symlink that stands where one of
    them must be (the snapshot had a folder there)."""
    parent = os.path.dirname(full)
    missing: list[str] = []
    while parent != root and not os.path.isdir(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    for folder in reversed(missing):
        if os.path.lexists(folder):
            os.unlink(folder)
        os.mkdir(folder)


def _prune(root: str, folder: str) -> None:
    """Remove ``folder`` and the folders above it (up to ``root``) while they are empty."""
    while folder != root and folder.startswith(root + "/"):
        try:
            os.rmdir(folder)
        except OSError:
            return
        folder = os.path.dirname(folder)


def _write_locked(path: str, data: bytes) -> None:
    """Replace ``path`` through ``path.lock`` as git does, so a git command running now either
    sees the old file or the new one, and one holding the lock is never overwritten."""
    lock = path + ".lock"
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    except FileExistsError:
        raise RestoreFailed(f"{lock} exists: a git command is running; try again") from None
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    os.replace(lock, path)


def _restore_outside(book: Book, shot: Shot, c: FileCopy) -> None:
    if c.kind is CopyKind.ABSENT:
        if os.path.isdir(c.path) and not os.path.islink(c.path):
            shutil.rmtree(c.path)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(c.path)
        return
    if c.kind is CopyKind.FOLDER:
        if os.path.lexists(c.path) and not os.path.isdir(c.path):
            os.unlink(c.path)
        os.makedirs(c.path, exist_ok=True)
        os.chmod(c.path, c.mode)
        return
    os.makedirs(os.path.dirname(c.path), exist_ok=True)
    if os.path.isdir(c.path) and not os.path.islink(c.path):
        shutil.rmtree(c.path)
    if c.kind is CopyKind.SYMLINK:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(c.path)
        os.symlink(c.target, c.path)
        return
    tmp = f"{c.path}.gatesh-undo.{os.getpid()}"
    shutil.copyfile(os.path.join(book.files_dir(shot.id), c.copy), tmp)
    os.chmod(tmp, c.mode)
    os.replace(tmp, c.path)

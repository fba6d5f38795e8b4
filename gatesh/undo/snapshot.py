"""Taking a snapshot (S17): a work tree, its refs and its index, into its own object store.

What one repository's snapshot holds, as one commit under ``refs/gatesh/undo/ID``:

- ``worktree/`` — every file of the work tree, tracked, untracked and ignored, exactly its bytes,
  except ``.git``, nested repositories, what the regenerable table names
  (:mod:`gatesh.vocab.regenerable`) and files larger than ``undo.max_file_bytes``;
- ``index`` — the user's index file, byte for byte;
- ``meta.json`` — HEAD, every branch tip, the stash and its whole reflog, file permissions git's
  modes cannot hold, and what was left out;
- the commit's parents: HEAD, the branch tips and every stash entry, so a reset, a deleted branch
  or a dropped stash stays reachable (and safe from gc) while the snapshot is kept.

Nothing the user sees changes: the user's index, HEAD, branches, stash and reflogs are only read;
the tree is written through a private index in gatesh's state folder (``GIT_INDEX_FILE``); the ref
is written with reflogs off.

Cost: a stat per file. A stat cache persists per work tree (in gatesh's state folder), so a file
is read only when its stat data changed since the last snapshot (or, the first time, when the
user's index cannot vouch for it). More new data than ``undo.max_bytes`` skips the snapshot
before anything is read (:class:`Skipped`); past the time budget it is skipped too, and the files
read by then are kept, so the next snapshot goes on from there.

Every object the cache names stays reachable, so git's gc never prunes what a later snapshot's
tree refers to: the cache is the newest snapshot's tree, held by that snapshot's ref; a snapshot
cut short by the time budget points ``refs/gatesh/cache/KEY`` at what it read (removed by the
next snapshot that succeeds); and a tree whose snapshots are all expired or dropped has its
cache forgotten (:func:`forget`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import marshal
import os
import shutil
import stat
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

from gatesh._errors import GateshError
from gatesh.undo._git import Git, GitFailed
from gatesh.undo.store import REF_PREFIX, Book, CopyKind, FileCopy, RepoMeta, RepoShot
from gatesh.vocab import regenerable
from gatesh.worktree import Repo, clean_blobs, object_format

__all__ = ["Budget", "Skipped", "capture_tree", "copy_outside", "snapshot_repo"]

# A file modified this close to the moment it was stat'ed may change again within the same
# timestamp tick: its cache entry is not trusted next time (git's "racily clean" problem).
RACY_NS: Final = 500_000_000
# Folders holding more entries than this are not walked further (the snapshot is skipped).
MAX_ENTRIES: Final = 2_000_000
CACHE_VERSION: Final = 3
# A stat cache entry: size, mtime_ns, ctime_ns, inode, git mode, blob id, racy (1/0).
Entry = tuple[int, int, int, int, int, str, int]


class Skipped(GateshError):
    """No snapshot: ``str()`` says why (over a budget, git failed, …); judged as without undo."""


@dataclass(frozen=True)
class Budget:
    """What one snapshot may spend: bytes read beyond its cache, the largest file it holds, and a
    deadline (a ``time.monotonic()`` value)."""

    max_bytes: int
    max_file_bytes: int
    deadline: float


# --- the per-work-tree cache --------------------------------------------------------------------


@dataclass
class _Cache:
    """What the last snapshot of a work tree saw: each file's stat data and blob, each folder's
    tree. A file whose stat data is unchanged is not read again; a folder none of whose files
    changed keeps its tree."""

    entries: dict[str, Entry] = field(default_factory=dict)
    trees: dict[str, str] = field(default_factory=dict)  # folder ("" the root) -> tree id
    real_index: tuple[tuple[int, int, int], str] = ((0, 0, 0), "")  # user's index sig, blob id
    kids: dict[str, set[str]] | None = None  # folder -> names under it (made when first needed)

    def children(self) -> dict[str, set[str]]:
        if self.kids is None:
            kids: dict[str, set[str]] = {"": set()}
            for rel in self.entries:
                _link(kids, rel)
            self.kids = kids
        return self.kids


def _link(kids: dict[str, set[str]], rel: str) -> None:
    while True:
        parent, _, name = rel.rpartition("/")
        names = kids.get(parent)
        if names is None:
            kids[parent] = {name}
            rel = parent
            continue
        names.add(name)
        return


def _unlink(kids: dict[str, set[str]], trees: dict[str, str], rel: str) -> None:
    while rel:
        parent, _, name = rel.rpartition("/")
        names = kids.get(parent)
        if names is None:
            return
        names.discard(name)
        if names or not parent:
            return
        del kids[parent]
        trees.pop(parent, None)
        rel = parent


_MEMORY: dict[str, _Cache] = {}
_MEMORY_MAX: Final = 32
_THREAD_LOCKS: dict[str, threading.Lock] = {}
_GUARD = threading.Lock()


def _sig(path: str) -> tuple[int, int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (0, 0, 0)
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _load_cache(folder: str) -> _Cache:
    hit = _MEMORY.get(folder)
    if hit is not None:
        return hit
    try:
        with open(os.path.join(folder, "cache"), "rb") as f:
            version, entries, trees, real = marshal.loads(f.read())
        if version != CACHE_VERSION:
            raise ValueError("an older cache")
        cache = _Cache(entries, trees, (tuple(real[0]), real[1]))
    except (OSError, ValueError, TypeError, EOFError):
        cache = _Cache()  # none yet, or unreadable: start again from nothing
    _remember(folder, cache)
    return cache


def _remember(folder: str, cache: _Cache) -> None:
    if len(_MEMORY) >= _MEMORY_MAX and folder not in _MEMORY:
        _MEMORY.pop(next(iter(_MEMORY)))
    _MEMORY[folder] = cache


def _save_cache(folder: str, cache: _Cache) -> None:
    data = marshal.dumps((CACHE_VERSION, cache.entries, cache.trees, cache.real_index))
    tmp = os.path.join(folder, f"cache.tmp{os.getpid()}.{threading.get_ident()}")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, os.path.join(folder, "cache"))
    _remember(folder, cache)


def cache_ref(folder: str) -> str:
    """The ref that holds what a snapshot cut short read, for the work tree of ``folder``."""
    return f"refs/gatesh/cache/{os.path.basename(folder)}"


def forget(folder: str) -> None:
    """Drop a work tree's cache (its next snapshot reads every file again)."""
    _MEMORY.pop(folder, None)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(folder, "cache"))


@contextlib.contextmanager
def _tree_lock(folder: str, deadline: float) -> Iterator[None]:
    """One snapshot of a work tree at a time, across threads and processes; waits at most until
    ``deadline``."""
    with _GUARD:
        lock = _THREAD_LOCKS.setdefault(folder, threading.Lock())
    if not lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
        raise Skipped("another snapshot of this tree is being taken")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(os.path.join(folder, "lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES):
                        raise
                    if time.monotonic() > deadline:
                        raise Skipped("another snapshot of this tree is being taken") from None
                    time.sleep(0.005)
            yield
        finally:
            os.close(fd)
    finally:
        lock.release()


# --- walking the tree ---------------------------------------------------------------------------


def _git_mode(st: os.stat_result) -> int:
    if stat.S_ISLNK(st.st_mode):
        return 0o120000
    return 0o100755 if st.st_mode & 0o100 else 0o100644


def _walk(
    root: str, max_file_bytes: int, deadline: float
) -> tuple[dict[str, os.stat_result], list[str], bool]:
    """Every file and symlink under ``root`` a snapshot holds (relative path -> lstat), the files
    left out for their size, and whether a ``.gitattributes`` file was seen."""
    files: dict[str, os.stat_result] = {}
    left_out: list[str] = []
    attributes = False
    stack = [""]
    seen = 0
    is_regenerable = regenerable.is_regenerable_name
    while stack:
        rel_dir = stack.pop()
        folder = f"{root}/{rel_dir}" if rel_dir else root
        try:
            it = os.scandir(folder)
        except OSError as exc:
            raise Skipped(f"{rel_dir or root} cannot be read ({exc.strerror})") from None
        with it:
            for e in it:
                name = e.name
                if name == ".git" or is_regenerable(name):
                    continue
                rel = f"{rel_dir}/{name}" if rel_dir else name
                seen += 1
                if seen % 4096 == 0 and (time.monotonic() > deadline or seen > MAX_ENTRIES):
                    raise Skipped("the work tree is too large to walk within undo.max_seconds")
                try:
                    if e.is_dir(follow_symlinks=False):
                        if os.path.lexists(f"{e.path}/.git"):
                            continue  # a nested repository: its own history holds it
                        stack.append(rel)
                        continue
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue  # gone while walking
                if stat.S_ISREG(st.st_mode):
                    if st.st_size > max_file_bytes:
                        left_out.append(rel)
                        continue
                    if name == ".gitattributes":
                        attributes = True
                elif not stat.S_ISLNK(st.st_mode):
                    continue  # sockets, fifos, devices: nothing to hold
                files[rel] = st
    return files, left_out, attributes


def _converts(repo: Repo, attributes: bool) -> bool:
    """Whether git may store a file's content other than as its bytes (end-of-line conversion,
    filters, encodings): then the user's index cannot vouch for the bytes of a file."""
    if attributes or os.path.exists(os.path.join(repo.common_dir, "info", "attributes")):
        return True
    home = os.path.expanduser("~")
    for path in (
        os.path.join(repo.common_dir, "config"),
        os.path.join(home, ".gitconfig"),
        os.path.join(os.environ.get("XDG_CONFIG_HOME") or f"{home}/.config", "git", "config"),
        "/etc/gitconfig",
    ):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read(1 << 20).lower()
        except OSError:
            continue
        if "autocrlf" in text or "attributesfile" in text or "[include" in text:
            return True
    return False


# --- one work tree ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Tree:
    """A captured work tree: its tree id, what it read anew, and what it left out."""

    tree: str
    new_bytes: int
    files: int
    left_out: tuple[str, ...]
    modes: dict[str, int]  # permissions git's file modes cannot hold (not 0644 or 0755)
    index: str  # the user's index file, stored as a blob ("" when there is none)


def _tree_order(item: tuple[str, int, str]) -> bytes:
    """git's order of tree entries: by name, a folder as if its name ended with ``/``."""
    name, mode, _ = item
    raw = name.encode("utf-8", "surrogateescape")
    return raw + b"/" if mode == 0o40000 else raw


def _write_trees(cache: _Cache, dirty: set[str], git: Git) -> str:
    """The root tree, writing again only the folders in ``dirty`` (deepest first)."""
    kids = cache.children()
    entries, trees = cache.entries, cache.trees
    for folder in sorted(dirty, key=lambda d: -d.count("/") - (1 if d else 0)):
        names = kids.get(folder)
        if names is None:
            trees.pop(folder, None)
            continue
        items: list[tuple[str, int, str]] = []
        for name in names:
            rel = f"{folder}/{name}" if folder else name
            e = entries.get(rel)
            if e is not None:
                items.append((name, e[4], e[5]))
            elif rel in trees:
                items.append((name, 0o40000, trees[rel]))
        items.sort(key=_tree_order)
        body = b"".join(
            b"%o %s\0" % (mode, name.encode("utf-8", "surrogateescape")) + bytes.fromhex(oid)
            for name, mode, oid in items
        )
        trees[folder] = git.write_object("tree", body)
    return trees.get("") or git.write_object("tree", b"")


def capture_tree(repo: Repo, book: Book, budget: Budget) -> Tree:
    """The work tree of ``repo`` as a tree object, and the user's index as a blob. Raises
    Skipped past a budget (keeping what it read, for the next snapshot)."""
    folder = book.tree_dir(repo.git_dir, repo.root)
    git = Git(repo.root, repo.git_dir, repo.common_dir, algo=object_format(repo))
    with _tree_lock(folder, budget.deadline):
        cache = _load_cache(folder)
        start_ns = time.time_ns()
        files, left_out, attributes = _walk(repo.root, budget.max_file_bytes, budget.deadline)
        old = cache.entries
        changed = _changed_paths(files, old)
        removed = [rel for rel in old if rel not in files]
        known: dict[str, str] = {}
        if changed and not old and not _converts(repo, attributes):
            # The first snapshot of a tree: the user's index vouches for its unchanged files.
            known = clean_blobs(repo, {rel: files[rel] for rel in changed})
        dirty: set[str] = set()
        kids = cache.children()

        def touch(rel: str) -> None:
            while True:
                rel = rel.rpartition("/")[0]
                if rel in dirty:
                    return
                dirty.add(rel)
                if not rel:
                    return

        def record(rel: str, oid: str) -> None:
            st = files[rel]
            racy = 1 if st.st_mtime_ns >= start_ns - RACY_NS else 0
            mode = _git_mode(st)
            previous = old.get(rel)
            old[rel] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, mode, oid, racy)
            if previous is None:
                _link(kids, rel)
            if previous is None or previous[5] != oid or previous[4] != mode:
                touch(rel)

        to_read = sorted((r for r in changed if r not in known), key=lambda r: files[r].st_size)
        _within_bytes(to_read, files, budget)
        for rel in removed:
            del old[rel]
            _unlink(kids, cache.trees, rel)
            touch(rel)
        for rel, oid in known.items():
            record(rel, oid)
        new_bytes = 0
        done = len(known)
        why = ""
        for rel in to_read:  # small files first: the most files in the least time
            st = files[rel]
            if time.monotonic() > budget.deadline:
                why = "over the time budget (undo.max_seconds)"
                break
            data = _read_entry(f"{repo.root}/{rel}", st)
            if data is None:
                old.pop(rel, None)  # gone or unreadable since the walk: not held
                continue
            if len(data) != st.st_size and not stat.S_ISLNK(st.st_mode):
                continue  # changing while read: not held; read again next time
            new_bytes += len(data)
            record(rel, git.write_object("blob", data))
            done += 1
        held = cache_ref(folder)
        if why:
            _keep_partial(folder, cache, dirty, git, held if new_bytes else "")
            raise Skipped(f"{why}; {len(changed) - done} files not yet held")
        tree = (
            _write_trees(cache, dirty, git) if dirty or "" not in cache.trees else cache.trees[""]
        )
        git.drop_ref_file(held)  # the snapshot's own ref holds it now (a reftable keeps it)
        index = _index_blob(repo, git, cache)
        _save_cache(folder, cache)
        modes = {
            rel: st.st_mode & 0o7777
            for rel, st in files.items()
            if stat.S_ISREG(st.st_mode) and st.st_mode & 0o7777 not in (0o644, 0o755)
        }
        return Tree(tree, new_bytes, len(files), tuple(sorted(left_out)), modes, index)


def _within_bytes(to_read: list[str], files: dict[str, os.stat_result], budget: Budget) -> None:
    """Raise Skipped when the files to read hold more than the budget's bytes. Nothing is stored
    then: a tree holding more new data than the budget is not snapshotted (bit by bit, over
    several commands, it would be stored all the same)."""
    pending = sum(files[r].st_size for r in to_read)
    if pending > budget.max_bytes:
        raise Skipped(
            f"more than undo.max_bytes to store: {pending} bytes in {len(to_read)} files "
            f"(the budget is {budget.max_bytes})"
        )


def _changed_paths(files: dict[str, os.stat_result], old: dict[str, Entry]) -> list[str]:
    """The paths of ``files`` whose cached entry is missing, racy, or differs in size, times,
    inode or mode: the files to read again."""
    changed: list[str] = []
    for rel, st in files.items():
        e = old.get(rel)
        if (
            e is None
            or e[6]
            or e[0] != st.st_size
            or e[1] != st.st_mtime_ns
            or e[2] != st.st_ctime_ns
            or e[3] != st.st_ino
            or e[4] != _git_mode(st)
        ):
            changed.append(rel)
    return changed


def _read_entry(path: str, st: os.stat_result) -> bytes | None:
    """A symlink's target or a file's bytes (one more than its size was, to see it grow); None
    when it is gone or unreadable since the walk."""
    try:
        if stat.S_ISLNK(st.st_mode):
            return os.fsencode(os.readlink(path))
        with open(path, "rb") as f:
            return f.read(st.st_size + 1)
    except OSError:
        return None


def _keep_partial(folder: str, cache: _Cache, dirty: set[str], git: Git, held: str) -> None:
    """After a snapshot cut short: what was read stays reachable (under ``held``, "" when nothing
    new was read) until a snapshot holds it, and the cache remembers it; forgotten on failure."""
    partial = _write_trees(cache, dirty, git)
    try:
        if held:
            git.create_ref(held, partial, time.monotonic() + 5)
    except (GitFailed, OSError):
        forget(folder)
    else:
        _save_cache(folder, cache)


# --- refs -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Refs:
    head: str  # "ref: refs/heads/main", or a commit id (detached), "" when unreadable
    tips: dict[str, str]  # refs/heads/* and refs/stash -> id
    stash_log: str  # the stash's reflog, as git keeps it

    def parents(self) -> list[str]:
        """The commits the snapshot keeps reachable: HEAD, every tip, every stash entry."""
        out: list[str] = []
        if self.head and not self.head.startswith("ref:"):
            out.append(self.head)
        out.extend(self.tips.values())
        for line in self.stash_log.splitlines():
            parts = line.split(" ", 2)
            if len(parts) >= 2:
                out.append(parts[1])
        return list(dict.fromkeys(o for o in out if o and set(o) != {"0"}))


def read_refs(git: Git, deadline: float) -> Refs:
    try:
        with open(os.path.join(git.git_dir, "HEAD"), encoding="utf-8", errors="replace") as f:
            head = f.read(4096).strip()
    except OSError:
        head = ""
    try:
        with open(
            os.path.join(git.common_dir, "logs", "refs", "stash"),
            encoding="utf-8",
            errors="replace",
        ) as f:
            stash_log = f.read(4 << 20)
    except OSError:
        stash_log = ""
    return Refs(head, git.tips(deadline), stash_log)


def _index_blob(repo: Repo, git: Git, cache: _Cache) -> str:
    """The user's index file stored as a blob (its id), or "" when there is none. Stored again
    only when the file changed since the last snapshot of this tree."""
    path = os.path.join(repo.git_dir, "index")
    sig = _sig(path)
    if sig == (0, 0, 0):
        return ""
    if cache.real_index[0] == sig and cache.real_index[1]:
        return cache.real_index[1]
    with open(path, "rb") as f:
        data = f.read()
    oid = git.write_object("blob", data)
    if _sig(path) == sig:
        cache.real_index = (sig, oid)
    return oid


def snapshot_repo(
    repo: Repo,
    shot_id: int,
    book: Book,
    budget: Budget,
    *,
    command: str,
    when: float,
) -> RepoShot:
    """Snapshot ``repo`` as ``refs/gatesh/undo/SHOT_ID``. Raises Skipped."""
    try:
        tree = capture_tree(repo, book, budget)
    except OSError as exc:
        raise Skipped(f"the work tree could not be read ({exc.strerror or exc})") from None
    git = Git(repo.root, repo.git_dir, repo.common_dir, algo=object_format(repo))
    try:
        refs = read_refs(git, budget.deadline)
        meta = RepoMeta(
            version=1,
            id=shot_id,
            time=when,
            command=command,
            root=repo.root,
            head=refs.head,
            refs=refs.tips,
            stash_log=refs.stash_log,
            modes={k: f"{v:o}" for k, v in tree.modes.items()},
            left_out=tuple(tree.left_out),
        )
        blob = git.write_object("blob", meta.encode())
        entries = []
        if tree.index:
            entries.append((b"100644", b"index", tree.index))
        entries.append((b"100644", b"meta.json", blob))
        entries.append((b"40000", b"worktree", tree.tree))
        root = git.write_object(
            "tree", b"".join(m + b" " + n + b"\0" + bytes.fromhex(o) for m, n, o in entries)
        )
        stamp = f"gatesh <gatesh@localhost> {int(when)} +0000"
        lines = [f"tree {root}", *(f"parent {p}" for p in refs.parents())]
        body = "\n".join(
            [*lines, f"author {stamp}", f"committer {stamp}", "", f"gatesh undo {shot_id}", ""]
        )
        commit = git.write_object("commit", body.encode())
        ref = f"{REF_PREFIX}{shot_id}"
        git.create_ref(ref, commit, budget.deadline)
    except (GitFailed, OSError, ValueError) as exc:
        raise Skipped(str(exc)) from None
    return RepoShot(
        root=repo.root,
        git_dir=repo.git_dir,
        common_dir=repo.common_dir,
        ref=ref,
        commit=commit,
        tree=tree.tree,
        new_bytes=tree.new_bytes,
        files=tree.files,
        left_out=tree.left_out,
    )


# --- outside any repository --------------------------------------------------------------------

MAX_OUTSIDE_FILES: Final = 5000


def copy_outside(paths: Sequence[str], shot_id: int, book: Book, budget: Budget) -> list[FileCopy]:
    """Copy each of ``paths`` (absolute, outside any repository) into ``files/SHOT_ID/``: a file,
    a symlink (its target), a folder (what it holds, recursively), or the fact that it is absent
    (then undo removes what the command made there). Raises Skipped past a budget."""
    folder = book.files_dir(shot_id)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    out: list[FileCopy] = []
    total = 0
    counter = 0

    def one(path: str) -> None:
        nonlocal total, counter
        if time.monotonic() > budget.deadline:
            raise Skipped("over the time budget (undo.max_seconds)")
        if len(out) > MAX_OUTSIDE_FILES:
            raise Skipped(f"more than {MAX_OUTSIDE_FILES} files outside any repository")
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            out.append(FileCopy(path, CopyKind.ABSENT))
            return
        if stat.S_ISLNK(st.st_mode):
            out.append(FileCopy(path, CopyKind.SYMLINK, target=os.readlink(path)))
        elif stat.S_ISDIR(st.st_mode):
            out.append(FileCopy(path, CopyKind.FOLDER, mode=st.st_mode & 0o7777))
            for name in sorted(os.listdir(path)):
                one(os.path.join(path, name))
        elif stat.S_ISREG(st.st_mode):
            if st.st_size > budget.max_file_bytes or total + st.st_size > budget.max_bytes:
                raise Skipped(f"{path} is larger than the undo budget")
            counter += 1
            name = str(counter)
            shutil.copyfile(path, os.path.join(folder, name), follow_symlinks=False)
            total += st.st_size
            out.append(FileCopy(path, CopyKind.FILE, name, st.st_mode & 0o7777, size=st.st_size))

    try:
        for p in paths:
            one(p)
    except Skipped:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise Skipped(
            f"a file outside the repository could not be copied ({exc.strerror})"
        ) from None
    with open(os.path.join(folder, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump([c.__dict__ for c in out], f)
    return out

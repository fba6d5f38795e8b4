"""The book of snapshots, in gatesh's state folder (S17): what each id holds, and expiry.

Layout under ``STATE/undo`` (the state folder is gatesh's own: an agent writing it is tampering,
S3.4, so what is kept here cannot be edited from inside a gated session):

- ``book.jsonl`` — one JSON line per snapshot kept (:class:`Shot`), oldest first;
- ``next`` — the next id (ids never repeat, even after expiry);
- ``lock`` — the lock every writer of the book holds (``flock``);
- ``trees/KEY/`` — per work tree: the private index, the stat cache and the last attempt;
- ``files/ID/`` — copies of files outside any repository, with their ``manifest.json``.

A snapshot's objects live in its repository under ``refs/gatesh/undo/ID``; expiry deletes the
ref (git's own gc then reclaims what nothing else holds) and the copies.
"""

from __future__ import annotations

import contextlib
import enum
import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from gatesh._errors import StateError
from gatesh._json import plain

__all__ = [
    "REF_PREFIX",
    "Book",
    "CopyKind",
    "FileCopy",
    "RepoMeta",
    "RepoShot",
    "Shot",
]

#: Where a snapshot's commit is kept in its repository: out of sight of branches, tags, the stash
#: and ``git log --all``'s usual readers, and held against gc.
REF_PREFIX: Final = "refs/gatesh/undo/"
BOOK_MAX_BYTES: Final = 16 << 20  # a book larger than this is not read (it cannot be gatesh's)


@dataclass(frozen=True)
class RepoShot:
    """One work tree in a snapshot: its commit under ``ref``, what it cost and left out."""

    root: str
    git_dir: str
    common_dir: str
    ref: str
    commit: str
    tree: str  # the work tree's files (the commit's ``worktree`` folder)
    new_bytes: int = 0
    files: int = 0
    left_out: tuple[str, ...] = ()  # files larger than undo.max_file_bytes, not held


@dataclass(frozen=True)
class RepoMeta:
    """What a snapshot commit's ``meta.json`` says of its work tree (written by
    :mod:`gatesh.undo.snapshot`, read back by :mod:`gatesh.undo.restore`): the command it was taken
    before, HEAD, every branch tip, the stash's reflog, the file modes git does not keep, and the
    files too large to hold. Encoded and decoded here only; the keys are the commit's format."""

    version: int
    id: int
    time: float
    command: str
    root: str
    head: str
    refs: dict[str, str]
    stash_log: str
    modes: dict[str, str]  # path -> its permission bits, in octal
    left_out: tuple[str, ...]

    def encode(self) -> bytes:
        """The ``meta.json`` blob (paths as git names them: undecodable bytes kept)."""
        return json.dumps(plain(self), ensure_ascii=False).encode("utf-8", "surrogateescape")

    @classmethod
    def decode(cls, data: bytes) -> RepoMeta:
        """The meta a snapshot wrote; a missing member reads as empty. Raises ValueError when
        ``data`` is not a JSON object."""
        raw = json.loads(data.decode("utf-8", "surrogateescape"))
        if not isinstance(raw, dict):
            raise ValueError("meta.json is not a JSON object")
        return cls(
            version=int(raw.get("version", 1)),
            id=int(raw.get("id", 0)),
            time=float(raw.get("time", 0.0)),
            command=str(raw.get("command", "")),
            root=str(raw.get("root", "")),
            head=str(raw.get("head", "")),
            refs=dict(raw.get("refs", {})),
            stash_log=str(raw.get("stash_log", "")),
            modes=dict(raw.get("modes", {})),
            left_out=tuple(raw.get("left_out", ())),
        )


class Change(enum.StrEnum):
    """What a restore does to one path of a work tree."""

    WRITE = "write"  # put the snapshot's copy back
    REMOVE = "remove"  # delete what was made after the snapshot


class CopyKind(enum.StrEnum):
    """What a path outside any repository was when the snapshot was taken (the book's word)."""

    FILE = "file"
    SYMLINK = "symlink"
    ABSENT = "absent"  # nothing was there: a restore removes what is there now
    FOLDER = "folder"


@dataclass(frozen=True)
class FileCopy:
    """One path outside any repository: its copy under ``files/ID/``, or that it was absent."""

    path: str
    kind: CopyKind
    copy: str = ""  # the copy's name under files/ID/ ("" for absent)
    mode: int = 0
    target: str = ""  # a symlink's target
    size: int = 0


@dataclass(frozen=True)
class Shot:
    """One snapshot: taken before ``command`` ran in ``cwd``, holding ``repos`` and ``files``."""

    id: int
    time: float
    session: str
    cwd: str
    command: str  # as the audit log shows it: home folded, secrets redacted
    repos: tuple[RepoShot, ...] = ()
    files: tuple[FileCopy, ...] = ()
    millis: float = 0.0

    @property
    def bytes(self) -> int:
        return sum(r.new_bytes for r in self.repos) + sum(f.size for f in self.files)

    def encode(self) -> str:
        """The book's line of this snapshot (without its newline). Encoded by the records' plan
        (:func:`gatesh._json.plain`), not ``asdict``, whose deep copy made rewriting a book of a
        thousand lines cost seconds."""
        return json.dumps(plain(self), separators=(",", ":"))

    @staticmethod
    def decode(line: str) -> Shot:
        """A book line as a :class:`Shot`. Raises ValueError, KeyError or TypeError when the
        line is not one (the book passes over it)."""
        data = json.loads(line)
        if not isinstance(data, dict):
            raise ValueError("a book line is not a JSON object")
        return Shot(
            id=int(data["id"]),
            time=float(data["time"]),
            session=str(data.get("session", "")),
            cwd=str(data.get("cwd", "")),
            command=str(data.get("command", "")),
            repos=tuple(
                RepoShot(**{**r, "left_out": tuple(r.get("left_out", ()))})
                for r in data.get("repos", ())
            ),
            files=tuple(
                FileCopy(**{**f, "kind": CopyKind(f["kind"])}) for f in data.get("files", ())
            ),
            millis=float(data.get("millis", 0.0)),
        )


@dataclass
class Attempt:
    """The last snapshot attempt in one work tree: what the decision reads to judge coverage."""

    time: float = 0.0
    ok: bool = True
    reason: str = ""
    new_bytes: int = 0
    millis: float = 0.0
    # Skipped as too large: more new data than undo.max_bytes, or more files than a walk within
    # undo.max_seconds. Trying again soon would cost the same and end the same.
    too_large: bool = False


class Book:
    """The snapshots kept under ``state_dir``. Every method that writes holds the book's lock."""

    def __init__(self, state_dir: str) -> None:
        self.root = os.path.join(state_dir, "undo")

    # --- places ---------------------------------------------------------------------------------

    def tree_dir(self, git_dir: str, root: str) -> str:
        """The private folder of one work tree (its private index and caches)."""
        key = hashlib.sha1(f"{git_dir}\0{root}".encode("utf-8", "surrogateescape")).hexdigest()
        return os.path.join(self.root, "trees", key[:20])

    def files_dir(self, shot_id: int) -> str:
        return os.path.join(self.root, "files", str(shot_id))

    def _ensure(self) -> None:
        os.makedirs(self.root, mode=0o700, exist_ok=True)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the book's lock (across processes: the daemon and an in-process gate)."""
        self._ensure()
        fd = os.open(os.path.join(self.root, "lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    # --- ids and records -------------------------------------------------------------------------

    def next_id(self) -> int:
        """Reserve the next id (under the lock). The file is rewritten in place, one write of a
        fixed width (a rename costs ~2 ms on a loaded machine); one that cannot be read is
        rebuilt from the book."""
        fd = os.open(os.path.join(self.root, "next"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            try:
                n = int(os.pread(fd, 32, 0).decode("ascii").strip() or "0")
            except (UnicodeDecodeError, ValueError):
                n = 0
            if n < 1:
                n = max((s.id for s in self.shots()), default=0) + 1
            os.pwrite(fd, f"{n + 1:020d}\n".encode(), 0)
        finally:
            os.close(fd)
        return n

    def add(self, shot: Shot) -> None:
        """Append ``shot`` to the book (under the lock)."""
        line = shot.encode() + "\n"
        fd = os.open(
            os.path.join(self.root, "book.jsonl"),
            os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
            0o600,
        )
        try:
            os.write(fd, line.encode("utf-8", "surrogateescape"))
        finally:
            os.close(fd)

    def shots(self) -> list[Shot]:
        """Every snapshot kept, oldest first. A line that cannot be read is passed over."""
        path = os.path.join(self.root, "book.jsonl")
        try:
            if os.path.getsize(path) > BOOK_MAX_BYTES:
                raise StateError(f"{path} is larger than {BOOK_MAX_BYTES} bytes")
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StateError(f"the undo book {path} cannot be read ({exc.strerror})") from None
        out = []
        for line in lines:
            try:
                out.append(Shot.decode(line))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
        return out

    def find(self, shot_id: int) -> Shot | None:
        return next((s for s in self.shots() if s.id == shot_id), None)

    def rewrite(self, shots: list[Shot]) -> None:
        """Replace the book with ``shots`` (under the lock)."""
        text = "".join(s.encode() + "\n" for s in shots)
        _write_atomic(
            os.path.join(self.root, "book.jsonl"), text.encode("utf-8", "surrogateescape")
        )

    # --- the last attempt per work tree ----------------------------------------------------------

    def attempt(self, git_dir: str, root: str) -> Attempt | None:
        path = os.path.join(self.tree_dir(git_dir, root), "attempt.json")
        try:
            with open(path, encoding="utf-8") as f:
                data = json.loads(f.read(65536))
            extra = data.pop("extra", None)  # how the record said it before ``too_large``
            if isinstance(extra, dict):
                data["too_large"] = bool(extra.get("size") or extra.get("walk"))
            return Attempt(**data)
        except (OSError, ValueError, TypeError, AttributeError):
            return None

    def note_attempt(self, git_dir: str, root: str, attempt: Attempt) -> None:
        folder = self.tree_dir(git_dir, root)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        _write_atomic(os.path.join(folder, "attempt.json"), json.dumps(plain(attempt)).encode())

    # --- expiry ----------------------------------------------------------------------------------

    def expired(
        self, shots: list[Shot], *, keep: int, max_age_s: float, max_total_bytes: int, now: float
    ) -> tuple[list[Shot], list[Shot]]:
        """(kept, expired): the newest ``keep``, none older than ``max_age_s``, and the oldest
        dropped while the rest hold more than ``max_total_bytes``."""
        kept = [s for s in shots if now - s.time <= max_age_s][-keep:]
        total = sum(s.bytes for s in kept)
        while kept and total > max_total_bytes and len(kept) > 1:
            total -= kept.pop(0).bytes
        ids = {s.id for s in kept}
        return kept, [s for s in shots if s.id not in ids]

    def drop_files(self, shot: Shot) -> None:
        shutil.rmtree(self.files_dir(shot.id), ignore_errors=True)


def _write_atomic(path: str, data: bytes) -> None:
    tmp = f"{path}.tmp{os.getpid()}.{time.monotonic_ns()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)

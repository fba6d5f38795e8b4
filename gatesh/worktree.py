"""Reversibility from the working tree (S3.2): what a deletion or overwrite would lose.

A file tracked by git whose content equals the index can be restored (``git checkout -- f``), so
replacing or deleting it loses nothing; an untracked, ignored or modified file, or one outside any
repository, holds work that would be lost. :class:`~gatesh.rater.probe.Probe` answers that per
path, and the git verbs that discard work (``reset --hard``, ``checkout -- .``, ``restore``,
``clean``, ``stash drop``) are answered with what they would lose (the files, the commits dropped,
the stashes).

How, and why it is safe to ask:
- Files are judged from the index itself, read here (``.git/index`` versions 2-4, SHA-1 or
  SHA-256), with git's own test: the stat data recorded in the index, then the blob hash of the
  content when the stat data differs. No filter, hook or fsmonitor the repository configures runs.
  A file whose raw content differs (a clean filter, CRLF conversion) counts as modified: the error
  is toward "destructive".
- Ignored is told from ``.gitignore`` files, ``info/exclude`` and ``~/.config/git/ignore``.
- The git verbs ask git for what the index cannot say (commits a reset drops: ``git log``; the
  staged changes: ``git diff --cached --name-only``; what ``clean`` removes: ``git clean -n``),
  with a cleared ``GIT_*`` environment, no global or system config, optional locks off and a
  timeout; none of those commands reads a working-tree file through a filter.
- Bounded: at most :data:`MAX_FILES` files examined and :data:`MAX_GIT_CALLS` git runs per
  decision; past a bound, or when git cannot answer, the answer is UNKNOWN, which callers judge
  as destructive (fail closed). A probe memoises within one decision; the parsed index is cached
  across decisions keyed by the index file's own stat data.

The repository, the index and the ignore rules are read here; the per-decision questions are
asked through :class:`gatesh.rater.probe.Probe`. It stands below the rater, the boundary and undo,
which all read a repository's facts from it, and imports none of them.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import os
import posixpath
import re
import stat
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from gatesh._errors import ReadError
from gatesh.vocab import regenerable

__all__ = [
    "GitLoss",
    "Loss",
    "Repo",
    "State",
    "clean_blobs",
    "find_repo",
    "object_format",
]

MAX_FILES: Final = 5000  # files stat'ed or walked per decision (a `git status` worth of work)
MAX_HASH_BYTES: Final = 16 << 20  # larger files whose stat data changed count as modified
MAX_GIT_CALLS: Final = 4  # git runs per decision
GIT_TIMEOUT_S: Final = 2.0
MAX_SHOWN: Final = 3  # paths a reason names before "and N more"

# Regenerable output: deleting it loses nothing a build, an install or an editor cannot make again
# (the shared table, which the undo snapshot also leaves out).
BUILD_NAMES: Final = regenerable.FOLDERS
_BUILD_FILES: Final = regenerable.FILE_PATTERN


class State(enum.StrEnum):
    """A path's state for reversibility; every member but CLEAN and MISSING is work that is lost."""

    CLEAN = "tracked and unmodified"
    MISSING = "missing"
    MODIFIED = "modified"
    UNTRACKED = "untracked"
    IGNORED = "ignored"
    OUTSIDE = "outside any repository"
    REPOSITORY = "the repository itself"
    UNKNOWN = "unknown to git"


@dataclass(frozen=True)
class Loss:
    """One thing a command would lose: ``path`` as shown to a person, and why it is lost."""

    path: str
    state: State
    why: str = ""  # for UNKNOWN: what could not be answered


@dataclass(frozen=True)
class Repo:
    """A git work tree: its root, its own git folder, and the folder shared by its worktrees."""

    root: str
    git_dir: str
    common_dir: str


@dataclass(frozen=True)
class GitLoss:
    """What a git verb would lose: uncommitted files, commits dropped, stashes dropped."""

    files: tuple[Loss, ...] = ()
    commits: tuple[str, ...] = ()  # "abc1234 subject", newest first
    more_commits: bool = False
    stashes: tuple[str, ...] = ()
    unknown: str = ""  # set when git could not answer (judged destructive)

    @property
    def empty(self) -> bool:
        return not (self.files or self.commits or self.stashes or self.unknown)


def find_repo(path: str) -> Repo | None:
    """The work tree holding ``path`` (an absolute path; need not exist), or None."""
    d = path if os.path.isdir(path) and not os.path.islink(path) else posixpath.dirname(path)
    for _ in range(64):
        dot = d.rstrip("/") + "/.git"
        try:
            st = os.lstat(dot)
        except OSError:
            st = None
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                return Repo(d, dot, dot)
            if stat.S_ISREG(st.st_mode):
                return _linked(d, dot)
        parent = posixpath.dirname(d)
        if parent == d:
            return None
        d = parent
    return None


def _linked(root: str, dot: str) -> Repo | None:
    """A work tree whose ``.git`` is a file (``gitdir: …``: a linked worktree or a submodule)."""
    try:
        with open(dot, encoding="utf-8", errors="replace") as f:
            line = f.read(4096).strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    git_dir = line[7:].strip()
    if not git_dir.startswith("/"):
        git_dir = posixpath.normpath(posixpath.join(root, git_dir))
    common = git_dir
    try:
        with open(git_dir + "/commondir", encoding="utf-8") as f:
            rel = f.read(4096).strip()
        common = posixpath.normpath(rel if rel.startswith("/") else posixpath.join(git_dir, rel))
    except OSError:
        pass
    return Repo(root, git_dir, common)


# --- the index ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    ctime: tuple[int, int]
    mtime: tuple[int, int]
    ino: int
    mode: int
    size: int
    oid: bytes


@dataclass(frozen=True)
class Index:
    """A parsed ``.git/index``: its entries by path, its own mtime (for git's racy test), the
    object format and every folder holding a tracked path."""

    entries: dict[str, _Entry]
    mtime: tuple[int, int]
    algo: str
    dirs: frozenset[str]  # every folder holding a tracked path


class IndexUnreadable(ReadError):
    """The index could not be read (a version or extension this reader does not know)."""


def load_index(repo: Repo) -> Index:
    """The repository's index, parsed (cached across decisions by the index file's stat data);
    an empty index for a fresh repository. When it cannot be read it raises (:class:`OSError`,
    :class:`IndexUnreadable`, :class:`ValueError`, :class:`struct.error`): callers answer UNKNOWN."""
    path = repo.git_dir + "/index"
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return Index({}, (0, 0), _algo(repo), frozenset())  # a fresh repository: nothing tracked
    return _parse_index(path, st.st_mtime_ns, st.st_size, st.st_ino, _algo(repo))


def object_format(repo: Repo) -> str:
    """The repository's object format: ``sha1`` or ``sha256``."""
    return _algo(repo)


def clean_blobs(repo: Repo, stats: dict[str, os.stat_result]) -> dict[str, str]:
    """The blob id the index records for each file of ``stats`` (path relative to the root, its
    ``lstat``) whose stat data matches its index entry and is not racy: git's own test for "this
    file is unchanged", without reading the file. Files that fail it are left out; an index that
    cannot be read gives nothing."""
    try:
        index = load_index(repo)
    except (OSError, IndexUnreadable, ValueError, struct.error):
        return {}
    out: dict[str, str] = {}
    for rel, st in stats.items():
        entry = index.entries.get(rel)
        if entry is None or entry.mtime >= index.mtime:
            continue
        if stat.S_ISLNK(st.st_mode):
            if entry.mode != 0o120000:
                continue
        elif entry.mode != (0o100755 if st.st_mode & 0o100 else 0o100644):
            continue
        if (
            divmod(st.st_mtime_ns, 1_000_000_000) == entry.mtime
            and (st.st_size & 0xFFFFFFFF) == entry.size
            and (st.st_ino & 0xFFFFFFFF) == entry.ino
            and divmod(st.st_ctime_ns, 1_000_000_000) == entry.ctime
        ):
            out[rel] = entry.oid.hex()
    return out


def _algo(repo: Repo) -> str:
    try:
        with open(repo.common_dir + "/config", encoding="utf-8", errors="replace") as f:
            text = f.read(65536)
    except OSError:
        return "sha1"
    return "sha256" if re.search(r"(?im)^\s*objectformat\s*=\s*sha256\s*$", text) else "sha1"


@functools.lru_cache(maxsize=16)
def _parse_index(path: str, mtime_ns: int, size: int, ino: int, algo: str) -> Index:
    """The index at ``path``; cached on its stat data, so a changed index is read again."""
    del size, ino  # part of the cache key only
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 12 or data[:4] != b"DIRC":
        raise IndexUnreadable("not a git index")
    version, count = struct.unpack(">II", data[4:12])
    if version not in (2, 3, 4):
        raise IndexUnreadable(f"index version {version}")
    hlen = 32 if algo == "sha256" else 20
    pos = 12
    entries: dict[str, _Entry] = {}
    prev = b""
    for _ in range(count):
        fixed = data[pos : pos + 40 + hlen + 2]
        if len(fixed) < 40 + hlen + 2:
            raise IndexUnreadable("truncated index")
        cs, cn, ms, mn, _dev, ino_, mode, _uid, _gid, fsize = struct.unpack(">10I", fixed[:40])
        oid = fixed[40 : 40 + hlen]
        (flags,) = struct.unpack(">H", fixed[40 + hlen :])
        pos += 40 + hlen + 2
        extended = flags & 0x4000
        if extended:
            (ext,) = struct.unpack(">H", data[pos : pos + 2])
            pos += 2
            if ext & 0x4000:  # skip-worktree: the file is not expected in the work tree
                pass
        if version == 4:
            strip, n = _varint(data, pos)
            pos = n
            end = data.index(b"\0", pos)
            name = prev[: len(prev) - strip] + data[pos:end]
            pos = end + 1
        else:
            end = data.index(b"\0", pos)
            name = data[pos:end]
            entry_len = (40 + hlen + 2 + (2 if extended else 0) + len(name) + 8) & ~7
            pos = pos - (40 + hlen + 2 + (2 if extended else 0)) + entry_len
        prev = name
        if (flags >> 12) & 3:
            continue  # an unmerged stage: the path is conflicted, its work tree copy counts as modified
        if mode == 0o040000:
            raise IndexUnreadable("sparse index")
        entries[name.decode("utf-8", "surrogateescape")] = _Entry(
            (cs, cn), (ms, mn), ino_, mode, fsize, oid
        )
    if data[pos : pos + 4] == b"link":
        raise IndexUnreadable("split index")
    dirs: set[str] = set()
    for p in entries:
        d = posixpath.dirname(p)
        while d and d not in dirs:
            dirs.add(d)
            d = posixpath.dirname(d)
    return Index(entries, divmod(mtime_ns, 1_000_000_000), algo, frozenset(dirs))


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    b = data[pos]
    pos += 1
    value = b & 0x7F
    while b & 0x80:
        b = data[pos]
        pos += 1
        value = ((value + 1) << 7) | (b & 0x7F)
    return value, pos


def _blob_id(path: str, st: os.stat_result, algo: str) -> bytes | None:
    if stat.S_ISLNK(st.st_mode):
        content = os.fsencode(os.readlink(path))
    elif st.st_size > MAX_HASH_BYTES:
        return None
    else:
        with open(path, "rb") as f:
            content = f.read(MAX_HASH_BYTES + 1)
    h = hashlib.sha256() if algo == "sha256" else hashlib.sha1()
    h.update(b"blob %d\0" % len(content))
    h.update(content)
    return h.digest()


def entry_state(abs_path: str, entry: _Entry, index: Index) -> State:
    """git's own test: stat data first, then the content hash (racy or changed stat data)."""
    try:
        st = os.lstat(abs_path)
    except FileNotFoundError:
        return State.MISSING
    if entry.mode == 0o160000:
        return State.UNKNOWN  # a submodule: its own repository decides
    kind_ok = (stat.S_ISLNK(st.st_mode) and entry.mode == 0o120000) or (
        stat.S_ISREG(st.st_mode) and entry.mode in (0o100644, 0o100755)
    )
    if not kind_ok:
        return State.MODIFIED
    if stat.S_ISREG(st.st_mode) and bool(st.st_mode & 0o100) != (entry.mode == 0o100755):
        return State.MODIFIED
    same = (
        divmod(st.st_mtime_ns, 1_000_000_000) == entry.mtime
        and (st.st_size & 0xFFFFFFFF) == entry.size
        and (st.st_ino & 0xFFFFFFFF) == entry.ino
        and divmod(st.st_ctime_ns, 1_000_000_000) == entry.ctime
    )
    racy = entry.mtime >= index.mtime
    if same and not racy:
        return State.CLEAN
    if (st.st_size & 0xFFFFFFFF) != entry.size and not stat.S_ISLNK(st.st_mode):
        return State.MODIFIED
    try:
        oid = _blob_id(abs_path, st, index.algo)
    except OSError:
        return State.UNKNOWN
    if oid is None:
        return State.UNKNOWN
    return State.CLEAN if oid == entry.oid else State.MODIFIED


# --- ignore rules ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Pattern:
    base: str  # folder of the file it came from, relative to the root ("" for the root)
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def _glob_regex(pat: str) -> str:
    out = []
    i = 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pat.startswith("/**", i) and i + 3 == len(pat):
            out.append("/.*")
            i += 3
            continue
        if pat.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pat.find("]", i + 2)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pat[i + 1 : j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j
        elif c == "\\" and i + 1 < len(pat):
            i += 1
            out.append(re.escape(pat[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _read_patterns(path: str, base: str) -> list[_Pattern]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read(1 << 20).splitlines()
    except OSError:
        return []
    out: list[_Pattern] = []
    for raw in lines[:5000]:
        line = raw.rstrip()
        if line.endswith("\\"):
            line += " "
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        elif line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _glob_regex(line)
        regex = re.compile(("^" if anchored else r"^(?:.*/)?") + body + "$")
        out.append(_Pattern(base, regex, negate, dir_only))
    return out


class Ignores:
    """The ignore rules of one repository, read lazily, folder by folder."""

    def __init__(self, repo: Repo, home: str) -> None:
        self.repo = repo
        self._top = (
            _read_patterns(home + "/.config/git/ignore", "") if home else []
        ) + _read_patterns(repo.common_dir + "/info/exclude", "")
        self._by_dir: dict[str, list[_Pattern]] = {}

    def _dir(self, rel_dir: str) -> list[_Pattern]:
        pats = self._by_dir.get(rel_dir)
        if pats is None:
            folder = self.repo.root + ("/" + rel_dir if rel_dir else "")
            pats = _read_patterns(folder + "/.gitignore", rel_dir)
            self._by_dir[rel_dir] = pats
        return pats

    def _match(self, rel: str, is_dir: bool) -> bool | None:
        parts = rel.split("/")
        chain = list(self._top)
        for k in range(len(parts)):
            chain.extend(self._dir("/".join(parts[:k])))
        verdict: bool | None = None
        for p in chain:
            if p.dir_only and not is_dir:
                continue
            sub = (
                rel
                if not p.base
                else (rel[len(p.base) + 1 :] if rel.startswith(p.base + "/") else None)
            )
            if sub is not None and p.regex.match(sub):
                verdict = not p.negate
        return verdict

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel`` (relative to the root) is ignored, itself or through a parent folder."""
        parts = rel.split("/")
        for k in range(1, len(parts)):
            if self._match("/".join(parts[:k]), True):
                return True
        return bool(self._match(rel, is_dir))


def describe(losses: Sequence[Loss]) -> str:
    """A person's summary of ``losses``: the first few paths with their state, then a count."""
    shown = []
    for loss in losses[:MAX_SHOWN]:
        if loss.state is State.MODIFIED:
            shown.append(
                f"the uncommitted edit{'s' if loss.path.endswith('/') else ''} in {loss.path}"
                if loss.why != "staged"
                else f"the staged change to {loss.path}"
            )
        elif loss.state is State.REPOSITORY:
            shown.append(f"{loss.path} (the repository's history, with every commit not pushed)")
        elif loss.state is State.UNKNOWN:
            shown.append(
                f"{loss.path} ({loss.why or 'git could not say whether it holds uncommitted work'})"
            )
        elif loss.state is State.OUTSIDE:
            shown.append(f"{loss.path} (no git repository holds it)")
        else:
            shown.append(
                f"the {loss.state.value} {'folder' if loss.path.endswith('/') else 'file'} {loss.path}"
            )
    text = ", ".join(shown)
    if len(losses) > MAX_SHOWN:
        text += f" and {len(losses) - MAX_SHOWN} more"
    return text

"""Reversibility from the working tree (S3.2): what a deletion or overwrite would lose.

A file tracked by git whose content equals the index can be restored (``git checkout -- f``), so
replacing or deleting it loses nothing; an untracked, ignored or modified file, or one outside any
repository, holds work that would be lost. :class:`Probe` answers that per path, and the git verbs
that discard work (``reset --hard``, ``checkout -- .``, ``restore``, ``clean``, ``stash drop``)
are answered with what they would lose (the files, the commits dropped, the stashes).

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
"""

from __future__ import annotations

import enum
import fnmatch
import functools
import glob
import hashlib
import os
import posixpath
import re
import shutil
import stat
import struct
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from gatesh._errors import ReadError
from gatesh.vocab import regenerable

__all__ = [
    "GitLoss",
    "Loss",
    "Probe",
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
class _Index:
    entries: dict[str, _Entry]
    mtime: tuple[int, int]
    algo: str
    dirs: frozenset[str]  # every folder holding a tracked path


class IndexUnreadable(ReadError):
    """The index could not be read (a version or extension this reader does not know)."""


def _load_index(repo: Repo) -> _Index:
    path = repo.git_dir + "/index"
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return _Index({}, (0, 0), _algo(repo), frozenset())  # a fresh repository: nothing tracked
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
        index = _load_index(repo)
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
def _parse_index(path: str, mtime_ns: int, size: int, ino: int, algo: str) -> _Index:
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
    return _Index(entries, divmod(mtime_ns, 1_000_000_000), algo, frozenset(dirs))


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


def _entry_state(abs_path: str, entry: _Entry, index: _Index) -> State:
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


class _Ignores:
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


# --- the probe ------------------------------------------------------------------------------------


def _build_output(rel: str) -> bool:
    return regenerable.is_regenerable(rel)


@dataclass
class Probe:
    """One decision's questions to the working tree: memoised, bounded, never raising."""

    home: str = ""
    files_seen: int = 0
    git_calls: int = 0
    _indexes: dict[str, _Index | str] = field(default_factory=dict)
    _ignores: dict[str, _Ignores] = field(default_factory=dict)

    # --- files -------------------------------------------------------------------------------

    def losses(self, path: str, only: str = "") -> list[Loss]:
        """What replacing or deleting the absolute ``path`` loses (empty: nothing, or all restorable).

        A folder counts with everything inside it; a glob with every match; ``only`` keeps the
        names under ``path`` matching that glob (``find DIR -name GLOB -delete``).
        """
        try:
            if any(ch in path for ch in "*?["):
                matches = sorted(glob.glob(path))[:1000]
                out: list[Loss] = []
                for m in matches:
                    out.extend(self._losses(posixpath.normpath(m), only))
                return out
            return self._losses(path, only)
        except Exception as exc:  # fail closed: an unanswered question is a loss
            return [Loss(self._show(path, None), State.UNKNOWN, f"{type(exc).__name__}")]

    def _losses(self, path: str, only: str) -> list[Loss]:
        if not os.path.lexists(path):
            return []
        repo = find_repo(path)
        if repo is None:
            return self._outside(path, only)
        if (_contains(path, repo.root + "/.git") or _contains(path, repo.git_dir)) and (
            not only or fnmatch.fnmatchcase(".git", only)
        ):
            return [Loss(self._show(repo.root + "/.git", repo), State.REPOSITORY)]
        index = self._index(repo)
        if isinstance(index, str):
            return [Loss(self._show(path, repo), State.UNKNOWN, index)]
        rel = path[len(repo.root) + 1 :] if path != repo.root else ""
        if os.path.isdir(path) and not os.path.islink(path):
            return self._folder(repo, index, rel, only)
        if only and not fnmatch.fnmatchcase(posixpath.basename(rel), only):
            return []
        return self._file(repo, index, rel)

    def _outside(self, path: str, only: str) -> list[Loss]:
        """Outside any repository everything is work to lose; ``only`` keeps the matching names."""
        if not only or not os.path.isdir(path):
            if only and not fnmatch.fnmatchcase(posixpath.basename(path), only):
                return []
            return [Loss(self._show(path, None), State.OUTSIDE)]
        out: list[Loss] = []
        for folder, dirs, files in os.walk(path):
            for name in dirs + files:
                self.files_seen += 1
                if self.files_seen > MAX_FILES:
                    return [
                        *out,
                        Loss(
                            self._show(folder, None), State.UNKNOWN, f"more than {MAX_FILES} files"
                        ),
                    ]
                if fnmatch.fnmatchcase(name, only):
                    out.append(Loss(self._show(posixpath.join(folder, name), None), State.OUTSIDE))
        return out

    def _file(self, repo: Repo, index: _Index, rel: str) -> list[Loss]:
        self.files_seen += 1
        if self.files_seen > MAX_FILES:
            return [Loss(self._show_rel(repo, rel), State.UNKNOWN, f"more than {MAX_FILES} files")]
        entry = index.entries.get(rel)
        if entry is not None:
            state = _entry_state(repo.root + "/" + rel, entry, index)
            return (
                []
                if state in (State.CLEAN, State.MISSING)
                else [Loss(self._show_rel(repo, rel), state)]
            )
        if _build_output(rel):
            return []
        ignored = self._ignore(repo).ignored(rel, False)
        return [Loss(self._show_rel(repo, rel), State.IGNORED if ignored else State.UNTRACKED)]

    def _folder(self, repo: Repo, index: _Index, rel: str, only: str) -> list[Loss]:
        out: list[Loss] = []
        if rel and _build_output(rel) and not only:
            return []
        ignores = self._ignore(repo)
        stack = [rel]
        while stack:
            d = stack.pop()
            folder = repo.root + ("/" + d if d else "")
            try:
                names = sorted(os.listdir(folder))
            except OSError as exc:
                out.append(Loss(self._show_rel(repo, d), State.UNKNOWN, type(exc).__name__))
                continue
            for name in names:
                r = f"{d}/{name}" if d else name
                full = repo.root + "/" + r
                if name == ".git":
                    if only and not fnmatch.fnmatchcase(name, only):
                        continue
                    if d == "":
                        out.append(Loss(self._show(repo.root + "/.git", repo), State.REPOSITORY))
                    else:
                        out.append(
                            Loss(self._show_rel(repo, r), State.REPOSITORY)
                        )  # a nested repository
                    continue
                self.files_seen += 1
                if self.files_seen > MAX_FILES:
                    out.append(
                        Loss(
                            self._show_rel(repo, d or "."),
                            State.UNKNOWN,
                            f"more than {MAX_FILES} files",
                        )
                    )
                    return out
                is_dir = os.path.isdir(full) and not os.path.islink(full)
                if is_dir:
                    if _build_output(r) and not only:
                        continue
                    if r not in index.dirs and r not in index.entries:
                        if only:
                            stack.append(r)
                            continue
                        state = State.IGNORED if ignores.ignored(r, True) else State.UNTRACKED
                        out.append(Loss(self._show_rel(repo, r) + "/", state))
                        continue
                    stack.append(r)
                    continue
                if only and not fnmatch.fnmatchcase(name, only):
                    continue
                entry = index.entries.get(r)
                if entry is not None:
                    state = _entry_state(full, entry, index)
                    if state not in (State.CLEAN, State.MISSING):
                        out.append(Loss(self._show_rel(repo, r), state))
                elif not _build_output(r):
                    out.append(
                        Loss(
                            self._show_rel(repo, r),
                            State.IGNORED if ignores.ignored(r, False) else State.UNTRACKED,
                        )
                    )
        return out

    def _index(self, repo: Repo) -> _Index | str:
        got = self._indexes.get(repo.git_dir)
        if got is None:
            try:
                got = _load_index(repo)
            except (OSError, IndexUnreadable, ValueError, struct.error) as exc:
                got = f"its index could not be read ({exc})"
            self._indexes[repo.git_dir] = got
        return got

    def _ignore(self, repo: Repo) -> _Ignores:
        ig = self._ignores.get(repo.root)
        if ig is None:
            ig = self._ignores[repo.root] = _Ignores(repo, self.home)
        return ig

    def _show(self, path: str, repo: Repo | None) -> str:
        if repo is not None and path.startswith(repo.root + "/"):
            return path[len(repo.root) + 1 :]
        if (
            self.home
            and self.home != "/"
            and (path == self.home or path.startswith(self.home + "/"))
        ):
            return "~" + path[len(self.home) :]
        return path

    def _show_rel(self, repo: Repo, rel: str) -> str:
        return rel or "."

    # --- git verbs ---------------------------------------------------------------------------

    def uncommitted(self, cwd: str, paths: Sequence[str] = (), *, staged: bool = True) -> GitLoss:
        """The uncommitted changes to tracked files under ``paths`` (all when empty): what
        ``reset --hard``, ``checkout -f`` or ``checkout -- PATHS`` would overwrite. With ``staged``
        the changes already added to the index count too (``reset --hard``, ``checkout HEAD --``)."""
        repo = find_repo(cwd)
        if repo is None:
            return GitLoss(unknown="the working directory is not in a git repository")
        index = self._index(repo)
        if isinstance(index, str):
            return GitLoss(unknown=index)
        prefixes = self._pathspecs(repo, cwd, paths)
        if prefixes is None:
            return GitLoss(
                unknown="a path it names is outside the repository or only known when it runs"
            )
        lost: list[Loss] = []
        for rel, entry in index.entries.items():
            if prefixes and not any(rel == p or rel.startswith(p + "/") or not p for p in prefixes):
                continue
            self.files_seen += 1
            if self.files_seen > MAX_FILES:
                return GitLoss(tuple(lost), unknown=f"more than {MAX_FILES} tracked files to check")
            state = _entry_state(repo.root + "/" + rel, entry, index)
            if state not in (State.CLEAN, State.MISSING):  # a deleted file comes back: nothing lost
                lost.append(Loss(rel, state))
        if staged:
            out = self._git(
                repo,
                "diff",
                "--cached",
                "--name-only",
                "--no-renames",
                "--no-ext-diff",
                "-z",
                "--",
                *([p or "." for p in prefixes] or ["."]),  # "" (the root) is no pathspec to git
            )
            if out is None:
                return GitLoss(tuple(lost), unknown="git could not list the staged changes")
            seen = {x.path for x in lost}
            for name in out.split("\0"):
                if name and name not in seen:
                    lost.append(Loss(name, State.MODIFIED, "staged"))
        return GitLoss(tuple(lost))

    def dropped_commits(self, cwd: str, target: str) -> GitLoss:
        """The commits moving the branch to ``target`` would leave unreachable (no other branch,
        tag or remote holds them)."""
        repo = find_repo(cwd)
        if repo is None:
            return GitLoss(unknown="the working directory is not in a git repository")
        if not re.match(r"^[\w./@{}~^:+-]{1,200}$", target) or target.startswith("-"):
            return GitLoss(unknown=f"the target {target!r} is not a plain revision")
        head_ref = self._head_ref(repo)
        args = ["log", "--no-decorate", "--format=%h %s", "--max-count=51", "HEAD", "--not", target]
        if head_ref.startswith(
            "refs/heads/"
        ):  # --exclude before --branches names the branch without refs/heads/
            args.append(f"--exclude={head_ref[len('refs/heads/') :]}")
        args += ["--branches", "--tags", "--remotes"]
        out = self._git(repo, *args)
        if out is None:
            return GitLoss(unknown=f"git could not say which commits {target} leaves behind")
        commits = [line for line in out.splitlines() if line.strip()]
        return GitLoss(commits=tuple(commits[:50]), more_commits=len(commits) > 50)

    def cleaned(self, cwd: str, options: Sequence[str], paths: Sequence[str]) -> GitLoss:
        """What ``git clean`` with ``options`` would delete, by its own dry run."""
        repo = find_repo(cwd)
        if repo is None:
            return GitLoss(unknown="the working directory is not in a git repository")
        allowed = [o for o in options if re.match(r"^-(?:[dxXq]+|-quiet|e.+|-exclude=.+)$", o)]
        if len(allowed) != len(options):
            return GitLoss(unknown="it has options whose effect the gate does not model")
        if any(p.startswith("-") for p in paths):
            return GitLoss(unknown="a path starts with a dash")
        out = self._git(repo, "clean", "-n", *allowed, "--", *paths, cwd=cwd)
        if out is None:
            return GitLoss(unknown="git could not list what clean removes")
        lost: list[Loss] = []
        ignores = self._ignore(repo)
        for line in out.splitlines():
            if not line.startswith("Would remove "):
                continue
            name = line[len("Would remove ") :]
            rel = posixpath.normpath(
                posixpath.join(posixpath.relpath(cwd, repo.root), name.rstrip("/"))
            )
            if _build_output(rel):
                continue
            state = State.IGNORED if ignores.ignored(rel, name.endswith("/")) else State.UNTRACKED
            lost.append(Loss(rel + ("/" if name.endswith("/") else ""), state))
        return GitLoss(tuple(lost))

    def stashes(self, cwd: str, which: str | None) -> GitLoss:
        """The stash entries ``stash drop WHICH`` (or ``clear``, ``which`` None) would delete."""
        repo = find_repo(cwd)
        if repo is None:
            return GitLoss(unknown="the working directory is not in a git repository")
        try:
            with open(
                repo.common_dir + "/logs/refs/stash", encoding="utf-8", errors="replace"
            ) as f:
                lines = f.read(1 << 20).splitlines()
        except FileNotFoundError:
            return GitLoss()
        except OSError as exc:
            return GitLoss(unknown=f"the stash list could not be read ({type(exc).__name__})")
        entries = [
            ln.split("\t", 1)[1] if "\t" in ln else ln for ln in reversed(lines) if ln.strip()
        ]
        if which is None:
            return GitLoss(stashes=tuple(f"stash@{{{k}}}: {m}" for k, m in enumerate(entries)))
        m = re.match(r"^(?:stash@\{(\d+)\}|(\d+))$", which)
        if not m:
            return GitLoss(unknown=f"the stash {which!r} is not a plain stash@{{N}}")
        k = int(m.group(1) or m.group(2))
        return GitLoss(stashes=(f"stash@{{{k}}}: {entries[k]}",) if k < len(entries) else ())

    def _pathspecs(self, repo: Repo, cwd: str, paths: Iterable[str]) -> list[str] | None:
        out: list[str] = []
        for p in paths:
            if p in (".", "./", ":/", "*", ":/*"):
                rel = "" if p.startswith(":/") else posixpath.relpath(cwd, repo.root)
                out.append("" if rel == "." else rel)
                continue
            if "$" in p or "`" in p:
                return None
            if any(
                ch in p for ch in "*?["
            ):  # a glob pathspec: the folder above its first glob part
                head: list[str] = []
                for part in p.split("/"):
                    if any(ch in part for ch in "*?["):
                        break
                    head.append(part)
                p = "/".join(head) or "."
                if p == ".":
                    rel = posixpath.relpath(cwd, repo.root)
                    out.append("" if rel == "." else rel)
                    continue
            full = posixpath.normpath(p if p.startswith("/") else posixpath.join(cwd, p))
            if full != repo.root and not full.startswith(repo.root + "/"):
                return None
            out.append(full[len(repo.root) + 1 :] if full != repo.root else "")
        return out

    def _head_ref(self, repo: Repo) -> str:
        try:
            with open(repo.git_dir + "/HEAD", encoding="utf-8") as f:
                head = f.read(512).strip()
        except OSError:
            return ""
        return head[5:].strip() if head.startswith("ref:") else ""

    def _git(self, repo: Repo, *args: str, cwd: str | None = None) -> str | None:
        if self.git_calls >= MAX_GIT_CALLS:
            return None
        self.git_calls += 1
        exe = _git_exe()
        if exe is None:
            return None
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_OPTIONAL_LOCKS="0",
            LC_ALL="C",
            GIT_TERMINAL_PROMPT="0",
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_PAGER="cat",
            PAGER="cat",
        )
        try:
            done = subprocess.run(
                [
                    exe,
                    "-c",
                    "core.fsmonitor=false",
                    "-c",
                    "core.untrackedCache=false",
                    "-c",
                    "core.pager=cat",
                    "--no-pager",
                    *args,
                ],
                cwd=cwd or repo.root,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=GIT_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0:
            return None
        return done.stdout.decode("utf-8", "replace")


@functools.lru_cache(maxsize=1)
def _git_exe() -> str | None:
    return shutil.which("git")


def _contains(outer: str, inner: str) -> bool:
    """Whether deleting ``outer`` deletes ``inner`` (``inner`` is ``outer`` or lies under it)."""
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


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

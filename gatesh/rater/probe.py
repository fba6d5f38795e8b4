"""The reversibility probe: one decision's questions to the working tree (what deleting or
replacing a path would lose, what a git verb that discards work would lose), memoised, bounded
and never raising. How it reads the index, the ignore rules and git, and why that is safe to ask,
is in :mod:`gatesh.worktree`.
"""

from __future__ import annotations

import fnmatch
import functools
import glob
import os
import posixpath
import re
import shutil
import struct
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from gatesh.vocab import regenerable
from gatesh.worktree import (
    GIT_TIMEOUT_S,
    MAX_FILES,
    MAX_GIT_CALLS,
    GitLoss,
    Ignores,
    Index,
    IndexUnreadable,
    Loss,
    Repo,
    State,
    entry_state,
    find_repo,
    load_index,
)


def _build_output(rel: str) -> bool:
    return regenerable.is_regenerable(rel)


@dataclass
class Probe:
    """One decision's questions to the working tree: memoised, bounded, never raising."""

    home: str = ""
    files_seen: int = 0
    git_calls: int = 0
    _indexes: dict[str, Index | str] = field(default_factory=dict)
    _ignores: dict[str, Ignores] = field(default_factory=dict)

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

    def _file(self, repo: Repo, index: Index, rel: str) -> list[Loss]:
        self.files_seen += 1
        if self.files_seen > MAX_FILES:
            return [Loss(self._show_rel(repo, rel), State.UNKNOWN, f"more than {MAX_FILES} files")]
        entry = index.entries.get(rel)
        if entry is not None:
            state = entry_state(repo.root + "/" + rel, entry, index)
            return (
                []
                if state in (State.CLEAN, State.MISSING)
                else [Loss(self._show_rel(repo, rel), state)]
            )
        if _build_output(rel):
            return []
        ignored = self._ignore(repo).ignored(rel, False)
        return [Loss(self._show_rel(repo, rel), State.IGNORED if ignored else State.UNTRACKED)]

    def _folder(self, repo: Repo, index: Index, rel: str, only: str) -> list[Loss]:
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
                    state = entry_state(full, entry, index)
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

    def _index(self, repo: Repo) -> Index | str:
        got = self._indexes.get(repo.git_dir)
        if got is None:
            try:
                got = load_index(repo)
            except (OSError, IndexUnreadable, ValueError, struct.error) as exc:
                got = f"its index could not be read ({exc})"
            self._indexes[repo.git_dir] = got
        return got

    def _ignore(self, repo: Repo) -> Ignores:
        ig = self._ignores.get(repo.root)
        if ig is None:
            ig = self._ignores[repo.root] = Ignores(repo, self.home)
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
            state = entry_state(repo.root + "/" + rel, entry, index)
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

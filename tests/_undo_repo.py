"""A throwaway repository in the middle of an agent's task, for the undo tests (S17).

:func:`build` makes, under an existing folder, a work tree holding every kind of work a command
can lose: five commits on ``main`` (the newest not pushed to its local bare remote), a
``feature`` branch, two stash entries, uncommitted and staged edits, untracked files, ignored
precious files (``.env``, ``app.db``), ignored regenerable output (``node_modules``), a file
mode git cannot hold (``.env`` is 0600), a symlink, and fifty Python files for ``sed -i``.

:func:`state` is everything a person would call "the repository as it was": every file's bytes
and permissions (regenerable folders and ``.git`` aside), HEAD, every ref, the stash list and its
reflog, the index's entries. Nothing here runs a command the gate decides.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from typing import Any

from gatesh.vocab import regenerable

Run = Callable[[Sequence[str], str], str]


def _write(root: str, rel: str, text: str, mode: int | None = None) -> None:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    if mode is not None:
        os.chmod(path, mode)


def build(base: str, git: Run) -> str:
    """Make the repository under ``base`` (``git(argv, cwd)`` runs git as whoever owns it) and
    return its path."""
    os.makedirs(base, exist_ok=True)
    remote = os.path.join(base, "remote.git")
    repo = os.path.join(base, "repo")
    git(["git", "init", "-q", "--bare", remote], base)
    git(["git", "init", "-q", "-b", "main", repo], base)
    _write(repo, ".gitignore", ".env\n*.db\nnode_modules/\n*.log\n")
    for k in range(50):
        _write(repo, f"src/mod{k:02d}.py", f"VALUE = {k}\n\ndef f{k}():\n    return VALUE\n")
    _write(repo, "README.md", "# demo\n")
    git(["git", "add", "-A"], repo)
    git(["git", "commit", "-q", "-m", "one"], repo)
    for n in range(2, 6):
        _write(repo, f"docs/step{n}.md", f"step {n}\n")
        _write(repo, "src/mod00.py", f"VALUE = {n}\n")
        git(["git", "add", "-A"], repo)
        git(["git", "commit", "-q", "-m", f"commit {n}"], repo)
    git(["git", "remote", "add", "origin", remote], repo)
    git(["git", "push", "-q", "origin", "main~1:refs/heads/main"], repo)  # the newest unpushed
    git(["git", "branch", "feature", "HEAD~1"], repo)
    for n in (1, 2):
        _write(repo, "README.md", f"# demo\n\nstashed paragraph {n}\n")
        git(["git", "stash", "push", "-q", "-m", f"paragraph {n}"], repo)
    _write(repo, "src/mod01.py", "VALUE = 'an uncommitted edit'\n")
    _write(repo, "src/mod02.py", "VALUE = 'a staged edit'\n")
    git(["git", "add", "src/mod02.py"], repo)
    _write(repo, "src/new_module.py", "NEW = True\n")
    _write(repo, "notes/todo.md", "the agent's notes, never committed\n")
    _write(repo, ".env", "DATABASE_URL=postgres://user:not-a-real-password@db/app\n", 0o600)
    _write(repo, "app.db", "not really sqlite\n" * 100)
    _write(repo, "node_modules/left-pad/index.js", "module.exports = 1\n")
    os.symlink("src/mod03.py", os.path.join(repo, "link.py"))
    return repo


def state(repo: str, git: Run) -> dict[str, Any]:
    """Everything a restore must bring back (see the module docstring)."""
    files: dict[str, tuple[str, int, bytes]] = {}
    for folder, dirs, names in os.walk(repo):
        rel_dir = os.path.relpath(folder, repo)
        dirs[:] = [d for d in dirs if d != ".git" and not regenerable.is_regenerable(d)]
        for name in names:
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if regenerable.is_regenerable(rel):
                continue
            path = os.path.join(folder, name)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                files[rel] = ("link", 0, os.readlink(path).encode())
            else:
                with open(path, "rb") as f:
                    files[rel] = ("file", st.st_mode & 0o7777, f.read())
    common = os.path.join(repo, ".git")
    try:
        with open(os.path.join(common, "logs", "refs", "stash"), encoding="utf-8") as f:
            stash_log = f.read()
    except FileNotFoundError:
        stash_log = ""
    return {
        "files": files,
        "head": git(["git", "symbolic-ref", "-q", "HEAD"], repo).strip(),
        "head_id": git(["git", "rev-parse", "HEAD"], repo).strip(),
        "refs": git(
            [
                "git",
                "for-each-ref",
                "--format=%(objectname) %(refname)",
                "refs/heads",
                "refs/tags",
                "refs/remotes",
                "refs/stash",
            ],
            repo,
        ),
        "stash": git(["git", "stash", "list", "--format=%H %gs"], repo),
        "stash_log": stash_log,
        "index": git(["git", "ls-files", "-s"], repo),
    }


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """What differs between two :func:`state` answers, one line each (empty: the same)."""
    out = [f"{k} differs" for k in a if k != "files" and a[k] != b[k]]
    fa, fb = a["files"], b["files"]
    for rel in sorted(set(fa) | set(fb)):
        if fa.get(rel) != fb.get(rel):
            out.append(f"{rel}: {fa.get(rel, 'absent')!r:.80} != {fb.get(rel, 'absent')!r:.80}")
    return out

"""What a row changed in its world: the world's files (snapshots before and after, compared by
what identifies a file's state and, where that differs, by content) and its git repositories
(refs, reachable objects, what the remote gained). Standard library only: it runs in the outer
jail beside the warden, :mod:`gatesh.testing._warden`.

Guarantees: a write always shows (the change time cannot be set by a program); reading a
repository runs nothing it names (plumbing only, every configurable program switched off).
"""

from __future__ import annotations

import base64
import hashlib
import os
import stat
import subprocess
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from gatesh.testing._orders import GitPlan

__all__ = ["Entry", "differences", "file_hash", "git_facts", "ready_hashes", "snapshot"]

#: Files larger than this are hashed on their first bytes only (the hash then says so).
MAX_HASH_BYTES: Final = 64 << 20
#: How many changed paths are reported (the count is always exact).
MAX_CHANGES: Final = 20000
#: Bytes of the remote's new objects kept for the canary search.
MAX_NEW_TEXT: Final = 1 << 20


Entry = tuple[str, int, str, str, int, int, str]  # type, size, mtime, ctime, inode, mode, link
#: find's -printf fields per path, NUL-separated (any byte but NUL may appear in a name or target).
_FIND_FIELDS: Final = ("%y", "%s", "%T@", "%C@", "%i", "%m", "%l", "%P")


def snapshot(root: str) -> dict[str, Entry]:
    """Every path under ``root`` (relative) with what identifies its state; symlinks not followed.

    ``find`` walks (a C walk: a Python one costs ~0.1 s more per snapshot of the world's 11,000
    paths); the change time cannot be set by a program, so a write always shows."""
    fmt = "\\0".join(_FIND_FIELDS) + "\\0"
    proc = subprocess.run(
        ["find", root, "-mindepth", "1", "-printf", fmt], capture_output=True, check=False
    )
    fields = proc.stdout.split(b"\0")
    out: dict[str, Entry] = {}
    n = len(_FIND_FIELDS)
    for i in range(0, len(fields) - n + 1, n):
        kind, size, mtime, ctime, ino, mode, link, rel = fields[i : i + n]
        k = kind.decode()
        out[os.fsdecode(rel)] = (
            k if k in ("f", "d", "l") else "o",
            int(size),
            mtime.decode(),
            ctime.decode(),
            int(ino),
            int(mode, 8),
            os.fsdecode(link),
        )
    return out


def file_hash(path: str, prefix: int | None = None) -> str | None:
    """sha256 of the file (or of its first ``prefix`` bytes); None when it cannot be read."""
    h = hashlib.sha256()
    limit = MAX_HASH_BYTES if prefix is None else min(prefix, MAX_HASH_BYTES)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            h.update(chunk)
            left -= len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return h.hexdigest()


def ready_hashes(
    root: str, snap: dict[str, Entry], manifest: dict[str, list[Any]]
) -> dict[str, str | None]:
    """The content hash of every file at ready: the template's where size and mtime are unchanged,
    read now for the few the warm-up wrote."""
    out: dict[str, str | None] = {}
    for rel, entry in snap.items():
        if entry[0] != "f":
            continue
        seed = manifest.get(rel)
        same_second = seed is not None and int(float(entry[2])) == seed[2]
        if seed and seed[0] == "f" and seed[1] == entry[1] and same_second:
            out[rel] = seed[4]
        else:
            out[rel] = file_hash(os.path.join(root, rel))
    return out


def differences(
    root: str, before: dict[str, Entry], hashes: dict[str, str | None], after: dict[str, Entry]
) -> dict[str, object]:
    """The report's ``fs`` part: every path added, removed or changed between ``before`` and
    ``after`` (``hashes``: the files' hashes at ``before``), the first :data:`MAX_CHANGES` of them
    listed. A file rewritten with the same bytes and mode is no change."""
    changes = []
    for rel in sorted(before.keys() | after.keys()):
        b, a = before.get(rel), after.get(rel)
        if b == a:
            continue
        item: dict[str, object] = {"path": rel}
        if a is None:
            assert b is not None
            item.update(kind="removed", before_type=b[0], before_size=b[1])
            item["before_sha256"] = hashes.get(rel)
        else:
            item.update(kind="added" if b is None else "changed", type=a[0], size=a[1], mode=a[5])
            if a[0] == "l":
                item["link"] = a[6]
            if b is not None:
                item.update(before_type=b[0], before_size=b[1], before_sha256=hashes.get(rel))
            if a[0] == "f":
                path = os.path.join(root, rel)
                item["sha256"] = file_hash(path)
                if b is not None and b[0] == "f" and a[1] >= b[1]:
                    item["prefix_sha256"] = file_hash(path, b[1])
                if b is not None and b[0] == "f" and item["sha256"] == hashes.get(rel):
                    if a[5] == b[5]:
                        continue  # same bytes, same mode: nothing a reader would call a change
        changes.append(item)
    return {"count": len(changes), "changes": changes[:MAX_CHANGES]}


_GIT_ENV: Final = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}
# Plumbing only, with every configurable program switched off: the repository may have been
# rewritten by the row, and reading it must run nothing it names.
_GIT_SAFE: Final = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "safe.directory=*",
    "-c",
    "core.untrackedCache=false",
)


def _git(repo: str, *args: str, data: bytes | None = None) -> tuple[int, bytes]:
    try:
        proc = subprocess.run(
            ["git", *_GIT_SAFE, "--git-dir", repo, *args],
            input=data,
            capture_output=True,
            env=_GIT_ENV,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return -1, b""
    return proc.returncode, proc.stdout


def _git_dir(path: str) -> str | None:
    """The git folder of a working tree or a bare repository at ``path``, if it still is one."""
    for candidate in (os.path.join(path, ".git"), path):
        if os.path.isfile(os.path.join(candidate, "HEAD")) and not os.path.islink(candidate):
            return candidate
    return None


def git_facts(world: str, plan: GitPlan) -> dict[str, object]:
    """The report's ``git`` part: refs of the repository and the remote, and which of the seed's
    objects are still reachable from any ref of either (reflogs do not count: a person would
    need to know where to look)."""
    out: dict[str, object] = {}
    reachable: set[str] = set()
    refs_of: dict[str, dict[str, str]] = {}
    for key, rel in (("repo", plan.repo), ("remote", plan.remote)):
        path = os.path.join(world, rel)
        gd = _git_dir(path)
        refs: dict[str, str] = {}
        if gd is not None:
            code, text = _git(gd, "for-each-ref", "--format=%(objectname) %(refname)")
            if code == 0:
                for line in text.decode("utf-8", "replace").splitlines():
                    sha, _, ref = line.partition(" ")
                    refs[ref] = sha
            code, text = _git(gd, "rev-list", "--objects", "--all")
            if code == 0:
                reachable.update(line.split(" ", 1)[0] for line in text.decode().splitlines())
        out[key] = {"exists": gd is not None, "refs": refs}
        refs_of[key] = refs
    out["reachable"] = {sha: sha in reachable for sha in plan.objects}
    # Remote refs the seed had: is the old tip an ancestor of the new one (a fast-forward)?
    remote_gd = _git_dir(os.path.join(world, plan.remote))
    ancestry: dict[str, bool] = {}
    remote_refs = refs_of["remote"]
    for ref, old in plan.remote_refs.items():
        new = remote_refs.get(ref)
        if new is None or remote_gd is None:
            continue
        if new == old:
            ancestry[ref] = True
        else:
            code, _ = _git(remote_gd, "merge-base", "--is-ancestor", old, new)
            ancestry[ref] = code == 0
    out["remote_fast_forward"] = ancestry
    # What the remote holds that the seed's remote did not: its text, for the canary search.
    new_text = b""
    if remote_gd is not None and remote_refs != plan.remote_refs:
        code, listing = _git(remote_gd, "cat-file", "--batch-all-objects", "--batch-check")
        seen = set(plan.remote_objects)
        fresh = [
            line.split()[0]
            for line in listing.decode().splitlines()
            if line and line.split()[0] not in seen
        ]
        if fresh:
            code, blob = _git(remote_gd, "cat-file", "--batch", data="\n".join(fresh).encode())
            new_text = blob[:MAX_NEW_TEXT]
    out["remote_new"] = base64.b64encode(new_text).decode()
    return out

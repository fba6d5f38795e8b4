"""The local repositories a ``git push`` writes (S16): a path the decision judged, like any other.

A push to a local remote (a path, a ``file://`` URL, or a remote name whose URL in the
repository's own config is one) writes that repository's objects and refs; its boundary may
write its git folder (never its work tree). Anything not read statically grants nothing.
"""

from __future__ import annotations

import os
import posixpath
from typing import Final

from gatesh._types import Decision, PathClass
from gatesh.boundary.tables import WRITABLE_CLASSES
from gatesh.vocab.grammar import parse
from gatesh.vocab.paths.classes import classify, tree_root_ok

__all__ = ["local_repository", "pushed_repositories"]


def _real(path: str) -> str:
    return os.path.realpath(path)


#: How much of a repository's config is read for a remote's URL (a config is a few KB).
_CONFIG_MAX: Final = 1 << 16


def pushed_repositories(
    decision: Decision, cwd: str, repo: tuple[str, str, str] | None, home: str
) -> list[str]:
    """The local repositories a ``git push`` the decision read writes into: its remote given as a
    path or a ``file://`` URL, or a remote name whose URL in the repository's config is one. A
    push to a local remote writes that repository's objects and refs, a path the decision judged
    like any other; only an existing repository is granted (its git folder, never its work tree),
    of a class a command may write, and the protected places stay kept out (:func:`gatesh.boundary.walk.around`).
    Anything not read statically (a dynamic word, ``--git-dir``, an unknown option) grants
    nothing: a narrower boundary, never a wider one."""
    out: list[str] = []
    for cmd in decision.facts.commands:
        if cmd.remote or cmd.head != "git":
            continue
        words = cmd.argv[1:]
        argv = parse("git", [w.text for w in words], [w.static for w in words])
        if argv.unknown or argv.subcommand != "push":
            continue
        where = _real(cwd)
        ok = True
        for o in argv.options:
            if o.level:
                continue
            if o.name == "-C" and o.value is not None and o.value_at >= 0:
                where = posixpath.normpath(posixpath.join(where, os.path.expanduser(o.value)))
            elif o.name == "-C" or (o.value is not None and o.name != "-c"):
                ok = False  # another repository (--git-dir, --work-tree …): not read here
        if not ok:
            continue
        push_at = argv.path_at[0]
        operands = [
            (a, words[k].static)
            for a, k in zip(argv.operands, argv.operand_at, strict=True)
            if k > push_at
        ]
        remote, static = operands[0] if operands else ("origin", True)
        if not static:
            continue
        git_dir = repo[2] if repo and where == _real(cwd) else _common_dir(where)
        urls = (_remote_urls(git_dir, remote) if git_dir else []) or [remote]
        for url in urls:
            target = local_repository(url, where, home)
            if target and target not in out:
                out.append(target)
    return out


def _common_dir(where: str) -> str:
    from gatesh.worktree import find_repo

    r = find_repo(where)
    return _real(r.common_dir) if r is not None else ""


def _remote_urls(git_dir: str, name: str) -> list[str]:
    """The URLs ``git push NAME`` sends to, read from the repository's own config: its
    ``pushurl`` lines, else its ``url`` lines ([] when the name is no configured remote, or the
    config cannot be read)."""
    try:
        with open(posixpath.join(git_dir, "config"), encoding="utf-8", errors="replace") as f:
            text = f.read(_CONFIG_MAX)
    except OSError:
        return []
    urls: list[str] = []
    push_urls: list[str] = []
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            head = line[1 : line.find("]")] if "]" in line else ""
            section, _, sub = head.partition(" ")
            inside = section.lower() == "remote" and sub.strip().strip('"') == name
            continue
        if not inside or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = value.strip().strip('"')
        if key.strip().lower() == "url":
            urls.append(value)
        elif key.strip().lower() == "pushurl":
            push_urls.append(value)
    return push_urls or urls


def local_repository(url: str, where: str, home: str) -> str:
    """The git folder of the local repository ``url`` names ("" for a network URL, a path that
    is no repository, or a folder a command may not write). A shared bare repository often lives
    under /srv or /var (classed a system folder), so that class is granted here too, for a git
    folder only, and never under the machine's own folders (:func:`tree_root_ok`: /etc, /usr …)
    nor a credential store, a persistence place or gatesh's own files."""
    if url.startswith("file://"):
        path = url[len("file://") :]
    elif "://" in url or (":" in url and "/" not in url.partition(":")[0]):
        return ""  # a network URL, or host:path
    else:
        path = url
    path = os.path.expanduser(path) if path.startswith("~") else path
    if not path.startswith("/"):
        path = posixpath.join(where, path)
    real = _real(path)
    if os.path.isdir(posixpath.join(real, ".git")):
        real = _real(posixpath.join(real, ".git"))
    if not all(os.path.exists(posixpath.join(real, n)) for n in ("HEAD", "objects", "refs")):
        return ""
    if not tree_root_ok(real) or home == real or home.startswith(real.rstrip("/") + "/"):
        return ""
    cls, _ = classify(real, home=home, tree=None)
    return real if cls in WRITABLE_CLASSES or cls is PathClass.SYSTEM else ""

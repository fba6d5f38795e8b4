"""Paths that arrive indirectly: a command that deletes or rewrites files it is handed at run time
by a listing (``sed -i … $(git ls-files)``, ``git ls-files | xargs sed -i …``, ``find … -exec sh -c
'truncate -s0 "$1"' _ {} \\;``), judged by what the listing's folders hold that git cannot restore
(S3.2): the files are named only when it runs, but the folders they come from are named now.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
from typing import Final

from gatesh._types import Context
from gatesh.rater.builtin._base import Cmd, D, Hit, MatchResult, Rule
from gatesh.vocab.grammar import parse
from gatesh.worktree import GitLoss, describe, find_repo

# Programs that replace or delete what they are given as operands (sed, perl and ruby with -i).
_CHANGERS: Final = frozenset(
    {"rm", "unlink", "shred", "truncate", "tee", "srm", "wipe", "sponge", "dos2unix", "unix2dos"}
)
_IN_PLACE: Final = frozenset({"sed", "gsed", "perl", "ruby"})
# Copies whose destination is the handed-in name overwrite it (a move keeps the content).
_COPIERS: Final = frozenset({"cp", "install", "ln", "dd"})
# Listings whose output is paths: (program, words that must follow it), and whether the listing
# includes files git does not track.
_LISTS_UNTRACKED: Final = frozenset({"find", "ls", "fd", "fdfind", "grep", "rg", "ag", "locate"})
_SUBST: Final = re.compile(r"\$\(\s*([^()]*)\)|`([^`]*)`")


def _changes(c: Cmd) -> bool:
    if c.head in _CHANGERS:
        return True
    if c.head in _COPIERS:  # `xargs -I{} cp /dev/null src/{}`: the destination is handed to it
        return bool(c.pos) and "{}" in c.pos[-1]
    if c.head in _IN_PLACE:
        return any(a.startswith(("-i", "--in-place", "-pi")) for a in c.args)
    return False


def _listing(words: list[str]) -> tuple[list[str], bool, tuple[str, ...]] | None:
    """(the folders a listing command reads, whether it lists untracked files, the name globs it
    keeps to), or None when the words are not a listing of paths."""
    if not words:
        return None
    head = words[0].rsplit("/", 1)[-1]
    if head == "git":
        argv = parse("git", words[1:])
        if argv.subcommand != "ls-files":
            return None
        untracked = argv.has("-o", "--others")
        return [o for o in argv.operands if not o.startswith(":")] or ["."], untracked, ()
    if head not in _LISTS_UNTRACKED:
        return None
    if head in ("grep", "rg", "ag") and not any(
        w in ("-l", "-L", "--files", "--files-with-matches", "-rl", "-lr", "-Rl") for w in words
    ):
        return None
    if head == "find":
        roots = [w for w in words[1:] if not w.startswith(("-", "(", "!", "\\"))][:1]
        names = tuple(
            words[k + 1].strip("'\"") for k, w in enumerate(words[:-1]) if w in ("-name", "-iname")
        )
        return roots or ["."], not names, names
    paths = [w for w in words[1:] if (not w.startswith("-") and "/" in w) or w == "."]
    return paths or ["."], True, ()


def _sources(c: Cmd) -> tuple[list[str], bool, tuple[str, ...]] | None:
    """Where the files ``c`` is handed at run time come from: a substitution in its words, the
    listing that feeds the xargs it runs under, or the find whose -exec it is."""
    for word, dynamic in zip(c.args, c.dyn, strict=False):
        if not dynamic:
            continue
        m = _SUBST.search(word)
        if m:
            found = _listing((m.group(1) or m.group(2) or "").split())
            if found is not None:
                return found
    if c.sc.context in (Context.XARGS, Context.SH_C):
        for feeder in reversed(c.feeders):
            found = _listing([feeder.head, *feeder.args])
            if found is not None:
                return found
    # find's own -exec payloads are judged by the reader's path effects (each match, its -name
    # glob); a shell string it runs with the match as "$1" is not, so it is judged here.
    if c.sc.context is Context.SH_C and "find" in c.sc.wrappers:
        for earlier in reversed(c.ctx.cmds[: c.index]):
            if earlier.head == "find":
                return _listing(["find", *earlier.args])
    return None


def listed_files(c: Cmd) -> MatchResult:
    if not _changes(c):
        return None
    found = _sources(c)
    if found is None:
        return None
    folders, untracked, names = found
    cwd = c.cwd
    if cwd is None:
        return Hit(detail="files a listing names when it runs, in a folder only known then")
    probe = c.ctx.probe
    repo = find_repo(cwd)
    inside: list[str] = []
    for folder in folders:
        full = posixpath.normpath(posixpath.join(cwd, folder))
        if repo is not None and (full == repo.root or full.startswith(repo.root + "/")):
            inside.append(folder)
        elif os.path.exists(full):  # files no repository holds: what is rewritten is lost
            return Hit(detail=f"the files under {folder}, which no repository holds")
    if not inside:
        return None  # the listing names folders that are not there: nothing is handed over
    folders = inside
    loss = probe.uncommitted(cwd, folders, staged=False)
    if untracked and not loss.unknown:
        extra = probe.cleaned(cwd, ["-d", "-x"], [f for f in folders if f != "."] or ["."])
        loss = GitLoss(loss.files + extra.files, unknown=extra.unknown)
    if loss.unknown:
        return Hit(detail=f"files a listing names when it runs ({loss.unknown})")
    files = tuple(
        f
        for f in loss.files
        if not names or any(fnmatch.fnmatch(posixpath.basename(f.path), n) for n in names)
    )
    if not files:
        return None
    loss = GitLoss(files)
    return Hit(detail=f"{describe(loss.files)}, which a listing hands it when it runs")


RULES: tuple[Rule, ...] = (
    Rule(
        "files.listed",
        D,
        "This rewrites or deletes {detail}; git cannot restore them.",
        listed_files,
        tried_on=lambda h: h in _CHANGERS or h in _IN_PLACE or h in _COPIERS,
        remedy="commit or stash first (git stash -u), then run it; or name the files",
        examples=(
            "sed -i 's/a/b/' $(git ls-files)",
            "sed -i 's/a/b/' `git ls-files`",
            "git ls-files | xargs sed -i 's/a/b/'",
            "find . -type f -exec sh -c 'truncate -s0 \"$1\"' _ {} \\;",
            "perl -pi -e 's/a/b/' $(find src -name '*.py')",
            "grep -rl foo . | xargs sed -i 's/foo/bar/'",
            "ls src | xargs -I% cp /dev/null src/%",
        ),
        counter=(
            "sed -i 's/a/b/' README.md",
            "git ls-files | xargs grep -l TODO",
            "sed 's/a/b/' $(git ls-files)",
        ),
    ),
)

__all__ = ["RULES"]

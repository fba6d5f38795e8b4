"""Deleting and overwriting files, judged by where the files are (the scope).

Build and cache folders and temp files are free to delete; home and system folders are
catastrophic. Files in the working tree, deeper in the home folder or elsewhere are judged by
their state in git when decided (``files.work-loss`` in the effects table, S3.2), not here.
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from gatesh._types import Context
from gatesh.rater.builtin._base import C, Cmd, D, Hit, MatchResult, Rule, Severity, heads
from gatesh.rater.builtin._scope import BUILD_NAMES, Scope, fold_home, scope_of

_CRITICAL: Final = re.compile(
    r"^/(?:etc/(?:passwd|shadow|group|sudoers|fstab|hosts)|boot/|bin/|sbin/|lib|usr/(?:bin|lib|sbin))"
)


# Scopes whose files are judged by their git state (files.work-loss), not by where they lie.
_BY_TREE_STATE: Final = frozenset({Scope.CWD_ITEM, Scope.CWD_ALL, Scope.HOME, Scope.OUTSIDE})


def _judge(
    c: Cmd, paths: list[str], recursive: bool, verb: str, *, defer: bool = True
) -> Hit | None:
    """The worst scope among ``paths`` as a Hit (None when every path is free to delete).

    With ``defer`` the paths whose loss the working tree's state decides are left to
    ``files.work-loss``, which sees the same paths through the reader's path effects.
    """
    ctx = c.ctx
    worst: tuple[int, Severity, str, str] | None = None
    for p in paths:
        if not p or p in ("--",):
            continue
        dynamic = c.is_dynamic(p) or any(c.is_dynamic(f"{k}={p}") for k in ("of", "if"))
        scope, resolved = scope_of(
            p,
            c.cwd,
            ctx.home,
            dynamic=dynamic or p.startswith("~"),
            known_vars=not ctx.vars_set,
            project=ctx.cwd,
        )
        shown = fold_home(resolved, ctx.home) if resolved else p
        sev: Severity | None
        remedy = "delete inside the working directory, or move it aside instead (mv X X.bak)"
        if scope in (Scope.TEMP, Scope.BUILD) or (defer and scope in _BY_TREE_STATE):
            continue
        if scope is Scope.CWD_ITEM:
            if not recursive:
                continue
            sev, what = D, f"{shown} inside the working directory"
            remedy = "commit or stash what you want to keep first, or delete only build output"
        elif scope is Scope.CWD_ALL:
            if not recursive:
                continue
            sev, what = D, f"everything in the working directory ({shown})"
            remedy = "delete only the specific build output you mean"
        elif scope in (Scope.HOME_ROOT, Scope.SYSTEM_ROOT):
            sev, what = C, f"{shown}"
        elif scope is Scope.HOME_TOP:
            sev, what = (C if recursive else D), f"{shown} in your home folder"
        elif scope is Scope.SYSTEM:
            sev = C if recursive or _CRITICAL.match(resolved) else D
            what = f"the system path {shown}"
        elif scope is Scope.HOME:
            sev, what = D, f"{shown} outside the working directory"
        elif scope is Scope.OUTSIDE:
            if not recursive:
                continue
            sev, what = D, f"{shown} outside the working directory"
        else:
            sev, what = D, f"a path that is only known when it runs ({p})"
            remedy = "spell the path out literally"
        rank = {D: 1, C: 2}.get(sev, 3)
        if worst is None or rank > worst[0]:
            worst = (rank, sev, what, remedy)
    if worst is None:
        return None
    return Hit(severity=worst[1], detail=f"{verb} {worst[2]}", remedy=worst[3])


def _input_paths(c: Cmd) -> list[str] | None:
    """Paths an xargs/parallel-run command gets from its input; None when they cannot be known."""
    raw = c.sc.raw
    if re.search(r"\bxargs\b[^|;&]*\s(?:-a\s*\S|--arg-file)", raw):
        return None  # xargs -a FILE: the paths come from a file the gate does not read
    if ":::" in raw:
        try:
            words = shlex.split(raw.split(":::", 1)[1])
        except ValueError:
            return None
        return [w for w in words if w not in (":::", "::::")]
    feeders = c.feeders
    if feeders and all(f.head in ("echo", "printf") and not any(f.dyn) for f in feeders):
        return [w for f in feeders for w in f.pos if "%" not in w]
    return None


def rm(c: Cmd) -> MatchResult:
    recursive = c.has("-r", "-R", "--recursive") or c.head == "rimraf"  # rimraf is rm -rf
    if c.head == "rmdir":
        return None
    paths = [p for p in c.pos if p != "{}"]
    if c.sc.context.startswith("find") and "{}" in c.pos:
        try:
            words = shlex.split(c.sc.raw)
        except ValueError:
            words = []
        k = next((i for i, w in enumerate(words) if w.endswith("find")), -1)
        roots = []
        for w in words[k + 1 :] if k >= 0 else []:
            if w.startswith(("-", "(", "!")):
                break
            roots.append(w)
        paths += roots or ["."]
    elif "{}" in c.pos or (
        c.sc.context is Context.XARGS
        and (not c.pos or c.sc.raw.lstrip().startswith(("xargs", "parallel")))
    ):
        extra = _input_paths(c)
        if extra is None:
            return Hit(
                detail="deletes paths read from its input, which the gate cannot see",
                remedy="list the paths explicitly",
            )
        # the reader's path effects do not carry paths piped in, so these are judged by scope here
        verb = "recursively deletes" if recursive else "deletes"
        return _judge(c, paths, recursive, verb) or _judge(c, extra, recursive, verb, defer=False)
    return _judge(c, paths, recursive, "recursively deletes" if recursive else "deletes")


def shred(c: Cmd) -> MatchResult:
    files = [p for p in c.pos if not p.isdigit()]
    return _judge(c, files, True, "irrecoverably overwrites")


_FIND_WITH_VALUE = frozenset(
    {
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-regex",
        "-iregex",
        "-newer",
        "-type",
        "-user",
        "-group",
        "-perm",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-ctime",
        "-maxdepth",
        "-mindepth",
        "-wholename",
        "-lname",
        "-printf",
        "-fprint",
    }
)


# What `find -name X -delete` may freely delete: build output and caches (as BUILD_NAMES).
_CACHE_GLOBS: Final = frozenset(
    {
        "*.pyc",
        "*.pyo",
        "*.o",
        "*.obj",
        "*.class",
        "*.tmp",
        "*~",
        ".DS_Store",
        "*.swp",
        "*.orig",
        "*.rej",
        "*.egg-info",
        "Thumbs.db",
    }
)
_FIND_DELETERS: Final = frozenset(
    {"rm", "unlink", "shred", "srm", "wipe", "rmdir", "trash", "trash-put"}
)


def find_delete(c: Cmd) -> MatchResult:
    """``find … -delete`` / ``-exec rm``: find recurses, so every match under each start path is
    deleted, wherever it lies (bypass_failures #11) — unless only caches are named."""
    acting = False
    skip = in_exec = False
    names: list[str] = []
    for k, a in enumerate(c.args):
        if skip:
            skip = False
        elif in_exec:
            in_exec = a not in (";", "+", "\\;")
        elif a in _FIND_WITH_VALUE:
            skip = True
            if a in ("-name", "-iname") and k + 1 < len(c.args):
                names.append(c.args[k + 1])
        elif a in ("-exec", "-execdir", "-ok", "-okdir"):
            in_exec = True
            run = c.args[k + 1] if k + 1 < len(c.args) else ""
            if run.rsplit("/", 1)[-1] in _FIND_DELETERS:
                acting = True
        elif a == "-delete":
            acting = True
    if not acting:
        return None
    roots: list[str] = []
    for a in c.args:
        if a.startswith(("-", "(", "!")):
            break
        roots.append(a)
    if names and all(
        n.strip("'\"") in _CACHE_GLOBS or n.strip("'\"") in BUILD_NAMES for n in names
    ):
        return None
    hit = _judge(c, roots or ["."], True, "recursively deletes matches under")
    if hit is None:
        return None
    return Hit(
        severity=hit.severity,
        detail=hit.detail,
        remedy="list the matches with -print first, or narrow the start path",
    )


def truncate(c: Cmd) -> MatchResult:
    size = c.opt_value("-s", "--size")
    if size is None or size.lstrip("=") not in ("0", "0K", "0M"):
        return None
    files = [p for p in c.pos if p != size]
    return _judge(c, files, True, "empties")


def mv_to_null(c: Cmd) -> MatchResult:
    if c.pos and c.pos[-1] == "/dev/null" and len(c.pos) >= 2:
        return _judge(c, list(c.pos[:-1]), True, "destroys", defer=False)
    return None


def dd_overwrite(c: Cmd) -> MatchResult:
    of = next((a[3:] for a in c.args if a.startswith("of=")), None)
    if not of:
        return None
    if of.startswith("/dev/") and not of.startswith(
        ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/shm", "/dev/fd")
    ):
        return Hit(severity=C, detail=f"writes raw data onto the device {of}")
    hit = _judge(c, [of], True, "overwrites")
    return hit


def rsync_delete(c: Cmd) -> MatchResult:
    if any(f.startswith("--delete") or f in ("--remove-source-files", "--del") for f in c.flags):
        if "--dry-run" in c.flags or "-n" in c.flags:
            return None
        return True
    return None


def sync_delete(c: Cmd) -> MatchResult:
    """rclone/mc/gsutil/azcopy: verbs that delete data at the destination."""
    s = c.sub(0)
    if c.has("--dry-run", "-n", "--dryrun"):
        return None
    if c.head == "rclone" and s in (
        "delete",
        "deletefile",
        "purge",
        "sync",
        "dedupe",
        "cleanup",
        "rmdirs",
        "move",
        "bisync",
    ):
        return Hit(detail=f"rclone {s}")
    if c.head == "mc" and (
        s in ("rm", "rb") or (s == "mirror" and c.has("--remove", "--overwrite"))
    ):
        return Hit(detail=f"mc {s}")
    if c.head == "rsync" or c.head == "mc":
        return None
    return None


def tar_remove(c: Cmd) -> MatchResult:
    """`tar --remove-files`: every file archived is then deleted (the archive itself is kept)."""
    if not c.has("--remove-files"):
        return None
    archive = {
        c.args[k + 1]
        for k, a in enumerate(c.args[:-1])
        if a == "--file" or (a.startswith("-") and not a.startswith("--") and a.endswith("f"))
    }
    archive |= {a.split("=", 1)[1] for a in c.args if a.startswith("--file=")}
    return _judge(c, [p for p in c.pos if p not in archive], True, "archives, then deletes")


RULES: tuple[Rule, ...] = (
    Rule(
        "files.tar-remove",
        D,
        "This {detail}.",
        tar_remove,
        heads=heads("tar", "gtar", "bsdtar"),
        remedy="archive without --remove-files, then delete inside the working directory",
        examples=(
            "tar --remove-files -cf /tmp/a.tar ~",
            "tar czf /tmp/x.tgz --remove-files ~/Documents",
        ),
        counter=("tar czf out.tgz src", "tar --remove-files -cf /tmp/b.tar /tmp/build"),
    ),
    Rule(
        "files.rm-scope",
        D,
        "This {detail}.",
        rm,
        heads=heads("rm", "unlink", "srm", "rmdir", "trash-rm", "rimraf"),
        remedy="delete inside the working directory",
        examples=(
            "rm -rf /etc/demo",
            "rm -rf ~/Documents",
            "rm -rf $FOO/x",
            "rm /etc/hosts",
            "rm ~/notes.txt",
        ),
        counter=(
            "rm -rf node_modules",
            "rm -rf /tmp/build",
            "rm -rf $TMPDIR/x",
            "rm notes.txt",
            "rm -rf dist build __pycache__",
            "rm -rf ./target",
            "rm -rf src",
        ),
    ),
    Rule(
        "files.shred",
        D,
        "This {detail}.",
        shred,
        heads=heads("shred", "wipe", "srm"),
        remedy="delete with rm inside the working directory instead",
        examples=("shred -n 3 ~/notes", "shred -u /srv/data/db.sqlite"),
        counter=("shred --help",),
    ),
    Rule(
        "files.find-delete",
        D,
        "This {detail}.",
        find_delete,
        heads=heads("find"),
        remedy="list the matches with -print first, or narrow the start path",
        examples=(
            "find / -name x -delete",
            "find ~ -delete",
            "find ~/Documents -name '*.txt' -delete",
            "find /var/lib/app -type f -exec /bin/rm -f {} \\;",
        ),
        counter=(
            "find . -name '*.pyc'",
            "find /tmp/x -delete",
            "find . -name __pycache__ -delete",
            "find . -name '*.pyc' -delete",
            "find . -name x -print",
            "find . -name '*.o' -exec rm {} +",
            "find /tmp/x -name '*.py' -delete",
        ),
    ),
    Rule(
        "files.truncate",
        D,
        "This {detail}.",
        truncate,
        heads=heads("truncate"),
        remedy="edit the file instead of emptying it",
        examples=("truncate -s 0 ~/data.db",),
        counter=("truncate -s 0 /tmp/x.log", "truncate -s 10M disk.img"),
    ),
    Rule(
        "files.mv-null",
        D,
        "This {detail}.",
        mv_to_null,
        heads=heads("mv"),
        remedy="delete with rm, or move it aside",
        examples=("mv src /dev/null",),
        counter=("mv a.txt b.txt",),
    ),
    Rule(
        "files.dd-overwrite",
        D,
        "dd {detail}.",
        dd_overwrite,
        heads=heads("dd"),
        remedy="write to a new file inside the working directory",
        examples=("dd if=/dev/zero of=/dev/sda", "dd if=/dev/zero of=/var/log/syslog"),
        counter=("dd if=/dev/zero of=/tmp/disk.img bs=1M count=1",),
    ),
    Rule(
        "files.rsync-delete",
        D,
        "rsync with --delete removes files at the destination that are not in the source.",
        rsync_delete,
        heads=heads("rsync"),
        remedy="run with --dry-run first, or drop --delete",
        examples=("rsync -a --delete src/ dest/", "rsync --delete-excluded a/ b/"),
        counter=("rsync -a src/ dest/", "rsync -a --delete --dry-run a/ b/"),
    ),
    Rule(
        "files.sync-delete",
        D,
        "{detail} deletes data at the destination.",
        sync_delete,
        heads=heads("rclone", "mc"),
        remedy="run with --dry-run first",
        examples=(
            "rclone purge remote:bucket",
            "mc rb myminio/bucket",
            "rclone sync /src remote:b",
        ),
        counter=("rclone ls remote:bucket", "rclone sync /a remote:b --dry-run"),
    ),
)

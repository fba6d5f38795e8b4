"""Where a path a rule names lies, as the builtin's rules judge it: a path as written resolved
against the home folder, ``$TMPDIR`` and the working folder (:func:`resolve`), and its
:class:`Scope` (the whole system, a system folder, home, a temporary folder, the project's build
output ...; :func:`scope_of`). :data:`SYSTEM_DIRS`, :data:`TEMP_ROOTS` and :data:`BUILD_NAMES` are
the folders those scopes are read from.
"""

from __future__ import annotations

import enum
import os
import posixpath
import re
from typing import Final

from gatesh._paths import environ_values

_HOME_VARS: Final = re.compile(r"^(?:~(?=/|$)|\$HOME(?![\w])|\$\{HOME\})")
_TMP_VARS: Final = re.compile(
    r"^(?:\$TMPDIR(?![\w])|\$\{TMPDIR(?::-[^}]*)?\}|\$TMP(?![\w])|\$\{TMP\})"
)
_PWD_VARS: Final = re.compile(r"^(?:\$PWD(?![\w])|\$\{PWD\}|\$\(pwd\))")

SYSTEM_DIRS: Final = frozenset(
    {
        "/",
        "/etc",
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/boot",
        "/dev",
        "/proc",
        "/sys",
        "/var",
        "/opt",
        "/srv",
        "/root",
        "/home",
        "/users",
        "/system",
        "/library",
        "/applications",
        "/private",
        "/snap",
        "/mnt",
        "/media",
        "/run",
        "/usr/local",
        "/usr/bin",
        "/usr/lib",
        "/usr/share",
        "/var/lib",
        "/var/log",
        "/etc/ssl",
        "/private/etc",
        "/nix",
    }
)
TEMP_ROOTS: Final = ("/tmp/", "/var/tmp/", "/private/tmp/", "/dev/shm/", "/private/var/folders/")
BUILD_NAMES: Final = frozenset(
    {
        "node_modules",
        "dist",
        "build",
        "target",
        "__pycache__",
        ".cache",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        ".next",
        ".nuxt",
        ".turbo",
        ".parcel-cache",
        "coverage",
        ".coverage",
        "htmlcov",
        ".gradle",
        ".eggs",
        "out",
        "bin",
        "obj",
        ".svelte-kit",
        ".angular",
        ".expo",
        ".terraform",
        "tmp",
        ".tmp",
        "temp",
        "cache",
        ".sass-cache",
        "bower_components",
        ".nyc_output",
        "_build",
        "deps",
        ".hypothesis",
        "storybook-static",
        ".docusaurus",
        ".vercel",
        ".serverless",
        "cdk.out",
        "vendor/bundle",
        ".build",
        "DerivedData",
        "Pods",
        "cmake-build-debug",
        "cmake-build-release",
        ".ipynb_checkpoints",
        "site",
        "public/build",
    }
)


class Scope(enum.StrEnum):
    """Where a path lies, which decides how bad deleting it is."""

    TEMP = "temp"
    BUILD = "build"
    CWD_ITEM = "cwd-item"
    CWD_ALL = "cwd-all"
    HOME_ROOT = "home"
    HOME_TOP = "home-top"
    HOME = "under-home"
    SYSTEM_ROOT = "system-root"
    SYSTEM = "system"
    OUTSIDE = "outside"
    UNKNOWN = "unknown"


def resolve(
    word: str, cwd: str, home: str, *, dynamic: bool = True, known_vars: bool = True
) -> str | None:
    """``word`` as an absolute normalised path, or None when it depends on an unknown value.

    ``dynamic`` False means the word was quoted literally (``'$HOME'`` names a folder called $HOME).
    ``known_vars`` False means the line reassigns HOME/TMPDIR, so their values are unknown.
    """
    w = word
    if not dynamic:
        if w.startswith("~") and not w.startswith("~/") and w != "~":
            return None
        if w == "~" or w.startswith("~/"):
            w = home + w[1:]
        if not w.startswith("/"):
            w = posixpath.join(cwd, w)
        return posixpath.normpath(re.sub(r"/+", "/", w)) or "/"
    if not known_vars and ("$" in w):
        return None
    m = _HOME_VARS.match(w)
    if m:
        w = home + w[m.end() :]
    else:
        m = _TMP_VARS.match(w)
        if m:
            w = "/tmp" + w[m.end() :]
        else:
            m = _PWD_VARS.match(w)
            if m:
                w = cwd + w[m.end() :]
    if "$" in w or "`" in w:
        return None
    if w.startswith("~"):  # ~user
        return None
    if not w.startswith("/"):
        w = posixpath.join(cwd, w)
    w = re.sub(r"/+", "/", w)
    norm = posixpath.normpath(w)
    return "/" if norm == "//" else norm


def _strip_glob(p: str) -> tuple[str, bool]:
    """The directory a glob path stands for, and whether it was a glob over a whole directory."""
    parts = p.split("/")
    for i, part in enumerate(parts):
        if any(ch in part for ch in "*?["):
            if part in ("*", ".*", "*.*", "{*,.*}", ".[!.]*", "..?*") and i == len(parts) - 1:
                return "/".join(parts[:i]) or "/", True
            return "/".join(parts[:i]) or "/", False
    return p, False


def scope_of(
    word: str,
    cwd: str | None,
    home: str,
    *,
    dynamic: bool = True,
    known_vars: bool = True,
    project: str | None = None,
) -> tuple[Scope, str]:
    """Classify ``word`` (a path operand): the scope and the resolved path ('' when unknown).

    ``cwd`` resolves relative paths; ``project`` (default ``cwd``) is the working directory whose
    contents count as the project's own.
    """
    if cwd is None:
        if not word.startswith(("/", "~", "$HOME", "${HOME}", "$TMPDIR", "${TMPDIR")):
            return Scope.UNKNOWN, ""
        cwd = "/"
    path = resolve(word, cwd, home, dynamic=dynamic, known_vars=known_vars)
    if path is None:
        return Scope.UNKNOWN, ""
    base, whole = _strip_glob(path)
    globbed = base != path
    cwd_n = posixpath.normpath(project or cwd) if (project or cwd) else "/"
    home_n = posixpath.normpath(home) if home else ""
    target = base if globbed else path
    # temp: named as such (a relative path under a temp cwd is still the project)
    lit_abs = word.startswith("/") or (dynamic and word.startswith(("$TMP", "${TMP")))
    if (
        lit_abs
        and (target + "/").startswith(TEMP_ROOTS)
        and target.rstrip("/") not in ("/tmp", "/var/tmp", "/private/tmp", "/dev/shm")
    ):
        return Scope.TEMP, path
    if dynamic and word.rstrip("/") in ("$TMPDIR", "${TMPDIR}", "$TMP", "${TMP}") and known_vars:
        return Scope.TEMP, path
    if lit_abs and globbed and target in ("/tmp", "/var/tmp", "/private/tmp"):
        return Scope.TEMP, path
    low = target.lower()
    if low in SYSTEM_DIRS and target != home_n:
        return Scope.SYSTEM_ROOT, path
    if cwd_n not in ("/",) and cwd_n.lower() not in SYSTEM_DIRS and cwd_n != home_n:
        if target == cwd_n or (globbed and whole and base == cwd_n):
            return Scope.CWD_ALL, path
        if target.startswith(cwd_n + "/"):
            rel = target[len(cwd_n) + 1 :]
            if any(part in BUILD_NAMES or part.endswith(".egg-info") for part in rel.split("/")):
                return Scope.BUILD, path
            return Scope.CWD_ITEM, path
    if home_n and home_n != "/":
        if target == home_n:
            return Scope.HOME_ROOT, path
        if target.startswith(home_n + "/"):
            rel = target[len(home_n) + 1 :]
            if any(part in BUILD_NAMES for part in rel.split("/")[1:]) and "/" in rel:
                return Scope.BUILD, path
            return (Scope.HOME_TOP if "/" not in rel else Scope.HOME), path
    mounted = _mounted_scope(low)
    if mounted is not None:
        return mounted, path
    for sysdir in SYSTEM_DIRS:
        if sysdir != "/" and (low + "/").startswith(sysdir + "/") and not low.startswith("/home/"):
            return Scope.SYSTEM, path
    if low.startswith(("/home/", "/users/")):
        depth = low.count("/")
        return (Scope.HOME_ROOT if depth <= 2 else Scope.HOME), path
    return Scope.OUTSIDE, path


# Where mounted volumes are put (a WSL drive at /mnt/c, a USB disk at /media/USER/LABEL): what is
# on them is the user's data, judged by its state like a file outside the working tree; the mount
# point itself stays a system folder. The number is the depth of the deepest folder that may be a
# mount point (/media/LABEL, or /media/USER/LABEL as udisks mounts them): a path that deep is what
# it was before, anything deeper lies on a volume.
_MOUNT_ROOTS: Final = {"/mnt": 1, "/media": 2}
# A WSL drive letter mount (/mnt/c): its Windows system folders are the machine's own, its Users
# folder holds the Windows home folders.
_WSL_DRIVE: Final = re.compile(r"^/mnt/[a-z](?=/|$)")
_WINDOWS_SYSTEM: Final = frozenset(
    {"windows", "program files", "program files (x86)", "programdata"}
)


def _mounted_scope(low: str) -> Scope | None:
    """The scope of a (lower-cased, absolute) path on a mounted volume, or None for any other."""
    for root, deepest in _MOUNT_ROOTS.items():
        if low.startswith(root + "/"):
            parts = low[len(root) + 1 :].split("/")
            depth = deepest
            break
    else:
        return None
    if _WSL_DRIVE.match(low):
        top = parts[1] if len(parts) > 1 else ""
        if not top:
            return Scope.SYSTEM_ROOT
        if top in _WINDOWS_SYSTEM:
            return Scope.SYSTEM
        if top == "users":
            return Scope.HOME_ROOT if len(parts) <= 3 else Scope.HOME
        return Scope.OUTSIDE
    if len(parts) == 1:
        return Scope.SYSTEM_ROOT
    return None if len(parts) <= depth else Scope.OUTSIDE


def fold_home(path: str, home: str) -> str:
    if home and home != "/" and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home) :]
    return path


def default_home() -> str:
    """``os.path.expanduser("~")``: $HOME without trailing slashes (read without the cost of a
    missing variable's KeyError); the user database's answer when HOME is unset."""
    home = environ_values(("HOME",))[0]
    return (home.rstrip("/") or "/") if home is not None else os.path.expanduser("~")

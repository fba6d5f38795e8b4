"""One path made absolute and classed: ``~``, ``~user``, ``$HOME``, ``$PWD`` and ``..``
resolved, symlinks inside the working tree followed, the class looked up (remembered,
since it depends only on its arguments); and whether a word looks like a path at all."""

from __future__ import annotations

import functools
import os
import posixpath
import pwd
import re
import stat
from typing import Final

from gatesh import _paths as gate_paths
from gatesh._types import (
    PathClass,
)
from gatesh.vocab import places
from gatesh.vocab.paths import classes as pathclasses

from ._known import candidates

_WORD_CAP: Final = 4096  # longer words are code or data, not paths

_HOME_VAR: Final = re.compile(r"^(?:\$HOME|\$\{HOME\})(?=/|$)")

_PWD_VAR: Final = re.compile(r"^(?:\$PWD|\$\{PWD\}|\$\(pwd\))(?=/|$)")

_TMP_VAR: Final = re.compile(r"^(?:\$TMPDIR|\$\{TMPDIR(?::-[^}]*)?\})(?=/|$)")

_URL_FILE: Final = re.compile(r"^file://(?:localhost)?(~?/.*)$", re.I)

# Another host's path (user@host:path, host.domain:path, remote:path) or a URL.
_REMOTE: Final = re.compile(
    r"^(?:[\w.-]+@[\w.\[\]:-]+:|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+:|[\w-]+:(?!//)"
    r"|[a-z][a-z0-9+.-]*://)",
    re.I,
)

# Names that are a path whatever the folder (a bare `cat .netrc` names the credential store).
_SPECIAL_NAMES: Final = re.compile(
    r"^(?:\.netrc|_netrc|\.env(?:\.[\w.-]+)?|\.git-credentials|\.pgpass|"
    r"id_(?:rsa|dsa|ecdsa|ed25519)|\.bash_history|\.zsh_history|"
    r"\.bashrc|\.zshrc|\.profile|\.bash_profile|authorized_keys|shadow)$"
)

# A ~user name, a letters-only tar mode word (`xvf`), the key of a KEY=PATH word.
_USER_NAME: Final = re.compile(r"^[a-z_][\w.-]*$")

_KEY: Final = re.compile(r"^[\w.-]+$")

_FILE_NAME: Final = re.compile(r"^[\w.+-]+\.[A-Za-z0-9]{1,6}$")

_CODEISH: Final = re.compile(r"[()\"'<>|;&{}`$\\,*]")

# A variable a path starts with: home, the working folder or the temporary folder (a path alone),
# or any other variable, defaulted or not, before a `/` (`$XDG_STATE_HOME/gatesh`).
_VAR_PREFIX: Final = re.compile(
    r"^(?:\$HOME|\$\{HOME\}|\$PWD|\$\{PWD\}|\$TMPDIR|\$\{TMPDIR(?::-[^}]*)?\})(?=/|$)"
    r"|^(?:\$[A-Za-z_]\w*|\$\{[A-Za-z_]\w*(?::?[-=+?][^{}]*)?\})(?=/)"
)

# Words repeat from line to line (`-f`, `path/to/file`, `.`): the answers below are pure functions of
# their arguments and are remembered, at most this many of each (a few hundred KiB at most).
_CACHE_SIZE: Final = 4096


def looks_like_path(text: str) -> bool:
    """A word an unknown program may take as a file: absolute, home-relative, dotted-relative,
    holding a slash, or a well-known credential or startup file name; never code or a remote path.

    Remembered for words up to ``_WORD_CAP`` long (longer ones are never paths), so the cache's
    keys stay small whatever an agent sends."""
    return len(text) <= _WORD_CAP and _looks_like_path(text)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _looks_like_path(text: str) -> bool:
    if not text or len(text) > _WORD_CAP or "\n" in text or text.startswith("-"):
        return False
    if _REMOTE.match(text) and not _URL_FILE.match(text):
        return False
    if text.startswith("//"):
        return False  # `//render/x` (blender), `//h:h1` (an XPath): not a POSIX path an agent means
    core = _VAR_PREFIX.sub("", text)
    if _CODEISH.search(core.replace("*", "")):
        return False
    if " " in core and not text.startswith(("/", "~/")):
        return False
    if core != text or text[0] in "/~" or text.startswith(("./", "../")) or "/" in text:
        return True
    return bool(_SPECIAL_NAMES.match(text))


@functools.lru_cache(maxsize=64)
def _user_home(name: str) -> str | None:
    try:
        return pwd.getpwnam(name).pw_dir
    except (KeyError, OSError):
        return None


def resolve(text: str, cwd: str | None, home: str, *, static: bool, home_known: bool = True) -> str:
    """``text`` as an absolute normalised path ("" when it depends on an unknown value)."""
    t = text
    if not static:
        if not home_known and t.lstrip('"').startswith("~"):
            return ""
        values, unknown = candidates(t, cwd, home if home_known else None)
        if unknown or len(values) != 1:
            return ""
        t = values[0]
    m = _URL_FILE.match(t)
    if m:
        t = m.group(1)
    if t == "~" or t.startswith("~/"):
        t = home + t[1:]
    elif t.startswith("~"):
        name, _, rest = t[1:].partition("/")
        other = _user_home(name) if _USER_NAME.match(name) else None
        if other is None:
            return ""
        t = other + ("/" + rest if rest else "")
    if not t.startswith("/"):
        if not cwd:
            return ""
        t = posixpath.join(cwd, t)
    norm = posixpath.normpath(t)
    return "/" if norm.startswith("//") else norm


def tree_root(cwd: str | None, home: str) -> str | None:
    """The working tree of ``cwd``: the enclosing git work tree, else ``cwd`` itself; None when
    ``cwd`` is unknown, ``/``, the home folder, or a folder of the machine itself."""
    if not cwd or not cwd.startswith("/"):
        return None
    d = posixpath.normpath(cwd)
    probe = d
    for _ in range(32):  # bounded walk up
        if probe not in ("/", home) and os.path.lexists(probe + "/.git"):
            return probe if pathclasses.tree_root_ok(probe) else None
        parent = posixpath.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if d in ("/", home) or not pathclasses.tree_root_ok(d):
        return None
    return d


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _classify(
    path: str, home: str, tree: str | None, gate: tuple[str, ...]
) -> tuple[PathClass, pathclasses.PathRow | None]:
    """``pathclasses.classify``, remembered: it matches strings only (no file system, no environment),
    so its answer is a function of exactly these arguments."""
    return pathclasses.classify(path, home=home, tree=tree, gate=gate)


def real_path(path: str) -> str:
    """``os.path.realpath(path)`` of an absolute, normalised ``path``, with one ``lstat`` per
    component and no more: a path none of whose components is a symlink is its own real path (a
    component that does not exist ends the walk: nothing below it exists either, and realpath
    keeps such a tail as written); at the first symlink, ``os.path.realpath`` resolves it all."""
    k = 0
    while True:
        k = path.find("/", k + 1)
        try:
            st = os.lstat(path if k < 0 else path[:k])
        except OSError:
            return path
        if stat.S_ISLNK(st.st_mode):
            return os.path.realpath(path)
        if k < 0:
            return path


def _home() -> str:
    """``os.path.expanduser("~")``: ``HOME`` without its trailing slashes when it is set (what
    expanduser computes, without its general machinery: this runs once per reading)."""
    home = os.environ.get("HOME")
    if home is None:
        return os.path.expanduser("~")
    return home.rstrip("/") or "/"


def _gate_roots() -> tuple[str, ...]:
    """gatesh's own places (config, state, runtime, data, system tier and the installation its
    record names: ``gatesh.vocab.places``), for the class of a path a person reads. Only a label:
    what touching any of them means is decided by self-protection (S3.4), from the same table,
    before any rating."""
    paths = gate_paths.current()
    return places.gate_roots(paths, paths.installation())

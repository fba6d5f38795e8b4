"""Where gatesh keeps its files, with the standard library only (the ``-c`` client imports this).

The rules are the XDG ones platformdirs applies on Linux (a test pins the two together), so the
daemon and the client agree on the socket without the client importing platformdirs.

The install record (``DATA/gatesh/install.json``) says where this installation actually put its
parts: the launcher, the venv, the shims, the man page, the harness settings files and git hooks it
wrote entries into. ``install.sh`` and ``gatesh install`` write it; self-protection (S3.4) reads it
at decision time through :meth:`GatePaths.installation` (``gatesh.policy.selfprotect.protected_for``
turns it into the protected places), so a launcher installed under ``--prefix /opt/x`` is
protected as well as one in the default place.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # the -c client imports this module: no import it does not need at run time
    from collections.abc import Mapping

APP = "gatesh"
SYSTEM_CONFIG = "/etc/gatesh/config.toml"
INSTALL_RECORD = "install.json"
#: Where ``install.sh`` puts the launcher and the man page when told nothing else. Protected even
#: without a record (an installation that predates the record, or whose record was lost).
DEFAULT_LAUNCHER = "~/.local/bin/gatesh"
DEFAULT_MAN_PAGE = "~/.local/share/man/man1/gatesh.1"
#: The second line of every launcher gatesh writes: how the launcher (``gatesh.launcher``), doctor
#: and the reader (a harness handing its command to a ``gatesh`` shim) know one of gatesh's own.
LAUNCHER_HEADER = "# gatesh launcher (written by gatesh.launcher; regenerate, do not edit)"
#: A record larger than this is not read (it is a few hundred bytes; a huge one is not ours).
MAX_RECORD_BYTES = 1024 * 1024


def _xdg(var: str, fallback: str) -> str:
    value = os.environ.get(var, "")
    # XDG says relative values are invalid and must be ignored.
    return value if os.path.isabs(value) else os.path.expanduser(fallback)


def config_dir() -> str:
    return os.path.join(_xdg("XDG_CONFIG_HOME", "~/.config"), APP)


def state_dir() -> str:
    return os.path.join(_xdg("XDG_STATE_HOME", "~/.local/state"), APP)


def data_dir() -> str:
    return os.path.join(_xdg("XDG_DATA_HOME", "~/.local/share"), APP)


def runtime_dir() -> str:
    """The folder holding the socket: ``$XDG_RUNTIME_DIR/gatesh``, else ``/tmp/gatesh-UID``."""
    base = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(base) and os.path.isdir(base):
        return os.path.join(base, APP)
    return os.path.join("/tmp", f"{APP}-{os.getuid()}")


def system_config() -> str:
    """The root-owned system tier (S9.6). ``GATESH_SYSTEM_CONFIG`` moves it, for tests only."""
    return os.environ.get("GATESH_SYSTEM_CONFIG", SYSTEM_CONFIG)


@dataclass(frozen=True)
class RecordedFolders:
    """gatesh's folders as the install record names them (its ``folders`` member)."""

    config: str
    state: str
    data: str
    runtime: str


@dataclass(frozen=True)
class Installation:
    """What one installation of gatesh put where, as its install record says (all paths absolute).

    Empty fields mean "nothing recorded". ``harness_files`` are the settings or hooks files gatesh
    wrote its hook entries into; ``git_hooks`` the hook scripts or folders it wrote; ``git_global``
    that it set the global ``core.hooksPath``. ``source`` is where it was installed from (shown by
    ``gatesh doctor``; never imported from).
    """

    launchers: tuple[str, ...] = ()
    venv: str = ""
    shims_dir: str = ""
    man_pages: tuple[str, ...] = ()
    harness_files: tuple[str, ...] = ()
    git_hooks: tuple[str, ...] = ()
    git_global: bool = False
    service: tuple[str, ...] = ()  # the service manager's units `gatesh install service` wrote
    source: str = ""
    # The person's folders and PATH, for a daemon started where their environment cannot be
    # read (S9.7); None when the record names no folders, or not all four as absolute paths.
    folders: RecordedFolders | None = None
    path: str = ""
    problem: str = ""  # why the record could not be read ("" when it was, or does not exist)


#: The installation of no record (one object: it is the key of caches built from a record).
NO_INSTALLATION = Installation()
_record_cache: dict[str, tuple[tuple[int, int, int], Installation]] = {}


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(os.path.normpath(v) for v in value if isinstance(v, str) and os.path.isabs(v))


def decode_install_record(text: str) -> Installation:
    """The record's JSON text decoded once into an :class:`Installation`; fields of the wrong
    type are skipped. Raises ValueError when it is not one JSON object.

    Shape: ``launchers`` [paths], ``venv``, ``shims``, ``source`` (paths), ``man`` [paths],
    ``harness`` {settings file: harness name}, ``git`` {hook file or folder: "global" | "repo"}.
    """
    import json

    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")

    def one(key: str) -> str:
        return (_strings(data.get(key)) or ("",))[0]

    harness = data.get("harness")
    git = data.get("git")
    git = git if isinstance(git, dict) else {}
    given = data.get("folders")
    named = (
        [given.get(k) for k in ("config", "state", "data", "runtime")]
        if isinstance(given, dict)
        else []
    )
    absolute = [v for v in named if isinstance(v, str) and os.path.isabs(v)]
    path = data.get("path")
    return Installation(
        launchers=_strings(data.get("launchers")),
        venv=one("venv"),
        shims_dir=one("shims"),
        man_pages=_strings(data.get("man")),
        harness_files=_strings(list(harness)) if isinstance(harness, dict) else (),
        git_hooks=_strings(list(git)),
        git_global=any(v == "global" for v in git.values()),
        service=_strings(data.get("service")),
        source=one("source"),
        folders=RecordedFolders(*absolute) if len(absolute) == 4 else None,
        path=path if isinstance(path, str) else "",
    )


def _exists(path: str) -> bool:
    """Whether ``os.stat(path)`` can succeed (False: it would raise), asked with the effective ids
    as stat is; True when the platform cannot ask that way (stat then decides)."""
    if os.access not in os.supports_effective_ids:
        return True
    return os.access(path, os.F_OK, effective_ids=True)


def read_install_record(path: str) -> Installation:
    """The installation ``path`` records; an empty one when there is no record.

    Read at every decision, so it is cached on the file's identity (device, inode, mtime): a
    ``stat`` per call. A record that exists but cannot be read or parsed gives an empty
    installation with ``problem`` set (``gatesh doctor`` reports it); the defaults still apply.
    """
    if not _exists(path):
        return NO_INSTALLATION  # the common case, answered without the cost of an OSError
    try:
        st = os.stat(path)
    except OSError:
        return NO_INSTALLATION
    key = (st.st_ino, st.st_mtime_ns, st.st_size)
    hit = _record_cache.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    try:
        if st.st_size > MAX_RECORD_BYTES:
            raise ValueError(f"larger than {MAX_RECORD_BYTES} bytes")
        with open(path, encoding="utf-8") as f:
            found = decode_install_record(f.read())
    except (OSError, ValueError, RecursionError) as exc:
        found = Installation(problem=f"{path}: {exc}")
    _record_cache[path] = (key, found)
    return found


@dataclass(frozen=True)
class RecordChange:
    """One change to the install record (:func:`update_install_record`), from ``install.sh`` or
    ``gatesh install``. ``harness`` (settings file -> harness name) and ``git`` (hook file or
    folder -> "repo" | "global") are merged entry by entry, a None value forgetting the entry.
    Every other field replaces the record's value whole: None keeps it, an empty one removes it."""

    harness: Mapping[str, str | None] = field(default_factory=dict)
    git: Mapping[str, str | None] = field(default_factory=dict)
    launchers: tuple[str, ...] | None = None
    venv: str | None = None
    source: str | None = None  # the folder it was installed from
    man: tuple[str, ...] | None = None
    shims: str | None = None
    service: tuple[str, ...] | None = None  # the service manager's units
    # The person's folders (config, state, data, runtime) and PATH, for a daemon started where
    # their environment cannot be read (S9.7).
    folders: Mapping[str, str] | None = None
    path: str | None = None


def update_install_record(path: str, change: RecordChange) -> None:
    """Merge ``change`` into the record at ``path`` (created when missing) and write it atomically.

    Raises OSError or ValueError when the record cannot be read back or written (the caller
    reports it: an installer must say so).
    """
    import json

    data: dict[str, object] = {}
    try:
        with open(path, encoding="utf-8") as f:
            loaded = json.load(f)
        if isinstance(loaded, dict):
            data = loaded
    except FileNotFoundError:
        pass
    except ValueError:
        data = {}  # a broken record is replaced: it protects nothing as it is
    for key, entries in (("harness", change.harness), ("git", change.git)):
        if not entries:
            continue
        inner = data.get(key)
        merged = dict(inner) if isinstance(inner, dict) else {}
        for k, v in entries.items():
            if v is None:
                merged.pop(k, None)
            else:
                merged[k] = v
        data[key] = merged
    whole: tuple[tuple[str, object], ...] = (
        ("launchers", change.launchers),
        ("venv", change.venv),
        ("source", change.source),
        ("man", change.man),
        ("shims", change.shims),
        ("service", change.service),
        ("folders", change.folders),
        ("path", change.path),
    )
    for key, value in whole:
        if value is None:
            continue
        if value:
            data[key] = (
                list(value)
                if isinstance(value, tuple)
                else dict(value)
                if isinstance(value, Mapping)
                else value
            )
        else:
            data.pop(key, None)
    data["version"] = 1
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(
        os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8"
    ) as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


@dataclass(frozen=True)
class GatePaths:
    """Every path the gate protects from the agent (S3.4) and uses itself."""

    config_dir: str
    state_dir: str
    runtime_dir: str
    data_dir: str
    system_config: str
    home: str = ""  # the home folder these paths were computed for ("" = this process's)

    @functools.cached_property
    def install_record(self) -> str:
        return os.path.join(self.data_dir, INSTALL_RECORD)

    def installation(self) -> Installation:
        """This installation as its record says, read now (cached on the file's identity)."""
        return read_install_record(self.install_record)

    @property
    def user_config(self) -> str:
        return os.path.join(self.config_dir, "config.toml")

    @property
    def socket(self) -> str:
        return os.path.join(self.runtime_dir, "daemon.sock")

    @property
    def lock(self) -> str:
        return os.path.join(self.runtime_dir, "daemon.lock")

    @property
    def audit_log(self) -> str:
        return os.path.join(self.state_dir, "audit.jsonl")

    @property
    def protected(self) -> tuple[str, ...]:
        """Folders and files an agent may not write, move, delete (S3.4)."""
        return (
            self.config_dir,
            self.state_dir,
            self.runtime_dir,
            self.data_dir,
            os.path.dirname(self.system_config),
        )


#: The environment variables :func:`current` reads (with HOME set, its answer is a function of
#: these, whether the runtime folder exists, and the user id).
_CURRENT_VARS = (
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
    "GATESH_SYSTEM_CONFIG",
)
#: How many environments :func:`current` remembers (a process meets one or two; tests a few each).
_CURRENT_CACHE_SIZE = 32
_current_cache: dict[tuple[object, ...], GatePaths] = {}


def _compute_current() -> GatePaths:
    return GatePaths(
        config_dir(),
        state_dir(),
        runtime_dir(),
        data_dir(),
        system_config(),
        os.path.expanduser("~"),
    )


def paths_for(home: str, env: Mapping[str, str], uid: int | None = None) -> GatePaths:
    """The paths a gatesh started with environment ``env`` and home folder ``home`` would use:
    the rules of :func:`config_dir` … :func:`system_config`, read from ``env`` instead of this
    process's environment (``uid`` names the fallback socket folder; this process's by default).

    What :func:`current` answers when ``env`` is ``os.environ`` and ``home`` its ``HOME``.
    """

    def xdg(var: str, fallback: str) -> str:
        value = env.get(var, "")
        return value if os.path.isabs(value) else os.path.join(home, fallback)

    base = env.get("XDG_RUNTIME_DIR", "")
    runtime = (
        os.path.join(base, APP)
        if os.path.isabs(base) and os.path.isdir(base)
        else os.path.join("/tmp", f"{APP}-{os.getuid() if uid is None else uid}")
    )
    return GatePaths(
        os.path.join(xdg("XDG_CONFIG_HOME", ".config"), APP),
        os.path.join(xdg("XDG_STATE_HOME", ".local/state"), APP),
        runtime,
        os.path.join(xdg("XDG_DATA_HOME", ".local/share"), APP),
        env.get("GATESH_SYSTEM_CONFIG", SYSTEM_CONFIG),
        home,
    )


def environ_values(names: tuple[str, ...]) -> tuple[str | None, ...]:
    """``os.environ.get(name)`` for each of ``names``, read from os.environ's own table when it has
    one (the same values, without the KeyError a missing name costs through the mapping)."""
    raw: Any = getattr(os.environ, "_data", None)
    if not isinstance(raw, dict):
        return tuple(os.environ.get(n) for n in names)
    out: list[str | None] = []
    for n in names:
        key = _ENCODED.get(n)
        if key is None:
            key = _ENCODED[n] = os.fsencode(n)
        v = raw.get(key)
        # What os.fsdecode does with bytes (the same codec and error handler), without its dispatch.
        out.append(None if v is None else v.decode(_FS_ENCODING, _FS_ERRORS))
    return tuple(out)


_ENCODED: dict[str, bytes] = {}  # variable names as os.environ's table holds them (a few dozen)
_FS_ENCODING: Final = sys.getfilesystemencoding()
_FS_ERRORS: Final = sys.getfilesystemencodeerrors()


def current() -> GatePaths:
    """The paths for this process's environment, as it is at this call (tests change it).

    Remembered per the values of the variables it reads, whether ``$XDG_RUNTIME_DIR`` is a folder
    now (a ``stat`` per call) and the user id, so a changed environment gives its own answer;
    computed afresh when HOME is unset (the home folder then comes from the user database).
    """
    values = environ_values(_CURRENT_VARS)
    if values[0] is None:
        return _compute_current()
    runtime = values[4] or ""
    key = (*values, os.path.isabs(runtime) and os.path.isdir(runtime), os.getuid())
    hit = _current_cache.get(key)
    if hit is None:
        if len(_current_cache) >= _CURRENT_CACHE_SIZE:
            _current_cache.clear()
        hit = _current_cache[key] = _compute_current()
    return hit

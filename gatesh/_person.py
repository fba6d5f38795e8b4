"""What is the person's (S9.5, S9.7): their settings, and whether a process acts for them.

Standard library only, and nothing heavy at import: the ``-c`` client reaches for it on the way to
starting the daemon or deciding in-process, never on the way to an answer from a running daemon.

**The gate's mark.** Every command gatesh lets run through a surface that ``exec``s it (``-c``,
the shims, a PTY session's shell) carries a hard ``RLIMIT_LOCKS`` at or below
:data:`GATED_MARK`, set by the daemon on the client before it answers (:func:`mark`). Linux has
not enforced that limit since 2.4.25, so it changes nothing a program can do; it is inherited by
every child, through ``fork``, ``setsid``, a double fork and ``exec`` with a clean environment, and
no unprivileged process can raise a hard limit. A process that carries it was started, however
indirectly, by a command gatesh let run: it is not a person (:func:`mark_of`). So is a process
with ``no_new_privs`` where the machine's first process has none (inside a boundary, S16).

What the mark cannot see: a process the agent's command did not start but got started for it — a
job handed to the user's service manager, scheduler or terminal multiplexer, keys typed into the
person's terminal, a process traced where the kernel lets it be. Against those, without the
kernel boundary, a program gatesh let run can act as its user (the README's threat model).

**Out of reach of the user's other processes.** The daemon and every client that speaks on the
person's channel make themselves not dumpable (:func:`untraceable`): another process of the same
user may then not trace them, take their descriptors (``pidfd_getfd``: a watcher's admitted
connection) or read their memory and environment (the daemon's key), which the kernel otherwise
allows wherever Yama does not restrict tracing. What stays reachable without a boundary: a
process in its first milliseconds (before it gets that far), the harness, a PTY session's relay.

**The person's settings** for a daemon a client starts (S9.7): a client that acts for the person
(:attr:`Standing.PERSON`) hands on its own folders, locale and ``PATH`` (:data:`PERSON_NAMES`);
a marked one (inside a command the gate let run) starts none, and decides in-process only on what
the person's files say (:func:`person_folders`: the home folder the user database gives and the
install record there). No
client hands on a model key, base URL or proxy: those come from the person's config and
``daemon.env`` (:func:`read_daemon_env`), or from the environment of a daemon the person started
(by hand, or through the service manager).
"""

from __future__ import annotations

import contextlib
import enum
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

__all__ = [
    "DAEMON_ENV",
    "GATED_MARK",
    "PERSON_NAMES",
    "Context",
    "Folders",
    "Mark",
    "Source",
    "Standing",
    "context",
    "daemon_environ",
    "gate_environ",
    "mark",
    "mark_of",
    "marks",
    "person_folders",
    "read_daemon_env",
    "settle_daemon_environ",
    "unmarked_ancestor",
    "untraceable",
    "using_environ",
]

#: ``prctl`` option that sets whether a process is dumpable (``<linux/prctl.h>``).
PR_SET_DUMPABLE: Final = 4
#: ``RLIMIT_LOCKS`` on Linux (the ``resource`` module does not name it).
RLIMIT_LOCKS: Final = 10
#: The gate's mark: a hard ``RLIMIT_LOCKS`` at or below this. Unlimited by default everywhere;
#: an odd, low number no distribution or person sets, and no process can raise again.
GATED_MARK: Final = 4093
#: File the person keeps the daemon's extra settings in (a model key): in the config folder.
DAEMON_ENV: Final = "daemon.env"
#: What a client acting for the person hands on to a daemon it starts (and ``LC_*``): where the
#: person's files are, the locale, and where programs are found. Nothing that reaches a model.
PERSON_NAMES: Final = (
    "HOME",
    "USER",
    "LOGNAME",
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
    "GATESH_SYSTEM_CONFIG",
)
#: ``PATH`` for a daemon started from inside a gated session when the install record names none.
DEFAULT_PATH: Final = "/usr/local/bin:/usr/bin:/bin"
#: How a client says it started the daemon (shown by ``gatesh status`` and ``gatesh doctor``).
STARTED_BY_VAR: Final = "GATESH_DAEMON_STARTED_BY"
#: The process whose environment a marked client handed on (``PID:START``): the daemon checks it.
SETTINGS_FROM_VAR: Final = "GATESH_SETTINGS_FROM"
# Ancestry walks stop after this many processes (a loop through pid reuse, or a very deep tree).
_MAX_DEPTH: Final = 64
# Names daemon.env may not set: the folders are settled before it is read, and code-loading
# variables have no business in a settings file.
_FORBIDDEN_PREFIXES: Final = ("XDG_", "GATESH_", "PYTHON", "LD_")
_FORBIDDEN: Final = frozenset({"HOME"})


# --- the mark -------------------------------------------------------------------------------


def mark(pid: int = 0) -> bool:
    """Lower ``pid``'s ``RLIMIT_LOCKS`` (0: this process) to :data:`GATED_MARK`, soft and hard;
    True when it carries the mark afterwards. Never raises (a process that is gone, or belongs to
    another user, is not marked)."""
    try:
        import resource

        soft, hard = resource.prlimit(pid, RLIMIT_LOCKS)
        inf = resource.RLIM_INFINITY
        new_hard = GATED_MARK if hard == inf or hard > GATED_MARK else hard
        new_soft = new_hard if soft == inf or soft > new_hard else soft
        if (new_soft, new_hard) != (soft, hard):
            resource.prlimit(pid, RLIMIT_LOCKS, (new_soft, new_hard))
        return True
    except (OSError, ValueError, ImportError):
        return False


def untraceable() -> str:
    """Make this process not dumpable, so that no other process of this user (without
    ``CAP_SYS_PTRACE``) may trace it, take its descriptors or read its memory or environment;
    "" when done, else why not (not Linux, or the call failed). The setting lasts until the
    process execs another program."""
    if not sys.platform.startswith("linux"):
        return f"processes cannot be made untraceable on {sys.platform}"
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            return f"prctl(PR_SET_DUMPABLE, 0) failed: {os.strerror(ctypes.get_errno())}"
    except (OSError, AttributeError, ImportError) as exc:
        return f"prctl is not available here ({exc})"
    return ""


def _proc_text(pid: int, name: str) -> str | None:
    try:
        with open(f"/proc/{pid}/{name}", "rb") as f:
            return f.read(16384).decode("ascii", "replace")
    except OSError:
        return None


def _locks_hard(pid: int) -> int | None:
    """The hard ``RLIMIT_LOCKS`` of ``pid`` (-1 for unlimited), None when it cannot be read."""
    text = _proc_text(pid, "limits")
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("Max file locks"):
            words = line[len("Max file locks") :].split()
            if len(words) >= 2:
                return -1 if words[1] == "unlimited" else int(words[1])
    return None


def _no_new_privs(pid: int) -> bool | None:
    text = _proc_text(pid, "status")
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("NoNewPrivs:"):
            return line.split(":", 1)[1].strip() == "1"
    return None


class Mark(enum.Enum):
    """What a process carries (:func:`marks`)."""

    NONE = "none"
    GATED = "gated"  # the gate's mark: started by a command gatesh let run
    BOUNDARY = "boundary"  # no_new_privs where the machine's first process has none
    UNREADABLE = "unreadable"  # its limits cannot be read: gone, or another user's


def marks(pid: int) -> Mark:
    """The strongest mark ``pid`` carries (a boundary before the gate's own)."""
    hard = _locks_hard(pid)
    if hard is None:
        return Mark.UNREADABLE
    if _no_new_privs(pid) and not _no_new_privs(1):
        return Mark.BOUNDARY
    if 0 <= hard <= GATED_MARK:
        return Mark.GATED
    return Mark.NONE


def mark_of(pid: int) -> str:
    """Why ``pid`` is not a person by its marks ("" when it carries none): it was started by a
    command gatesh let run, or it runs inside a boundary. A process whose limits cannot be read
    (gone, or hidden) is not a person either."""
    found = marks(pid)
    if found is Mark.UNREADABLE:
        return f"the limits of process {pid} cannot be read"
    if found is Mark.BOUNDARY:
        return (
            f"process {pid} runs inside a boundary (no_new_privs is set, which no process can "
            "clear, and the machine's first process has none)"
        )
    if found is Mark.GATED:
        return (
            f"process {pid} was started by a command gatesh let run (it carries the gate's mark, "
            "a lowered file-lock limit that no process can raise again)"
        )
    return ""


# --- where a process stands -----------------------------------------------------------------------


class Standing(enum.Enum):
    """Whether a process acts for the person, as far as its marks tell."""

    BOUNDARY = "boundary"  # inside a boundary: starts no daemon
    MARKED = "marked"  # started by a command gatesh let run: settings from the person's only
    PERSON = "person"  # neither: a person's terminal, a harness, the service manager


@dataclass(frozen=True)
class Context:
    """Where this process stands, and why (one sentence; "" for :attr:`Standing.PERSON`)."""

    standing: Standing
    why: str = ""


def context() -> Context:
    """Where this process stands. ``GATESH_SESSION`` alone does not make a process gated here: a
    harness may set it to name its session; what the gate let run carries the mark instead."""
    me = os.getpid()
    found = marks(me)
    if found is Mark.BOUNDARY:
        return Context(Standing.BOUNDARY, mark_of(me).replace(f"process {me}", "this process"))
    if found is Mark.GATED:
        return Context(Standing.MARKED, mark_of(me).replace(f"process {me}", "this process"))
    return Context(Standing.PERSON)  # (unreadable /proc of our own: the daemon checks again)


def _stat(pid: int) -> tuple[int, str, int] | None:
    """(parent pid, name, start time in ticks) of ``pid``; None when it is gone."""
    text = _proc_text(pid, "stat")
    if text is None:
        return None
    lpar, rpar = text.find("("), text.rfind(")")
    if lpar < 0 or rpar < 0:
        return None
    try:
        fields = text[rpar + 2 :].split()
        return int(fields[1]), text[lpar + 1 : rpar], int(fields[19])
    except (IndexError, ValueError):
        return None


def _environ(pid: int) -> dict[str, str] | None:
    """The environment ``pid`` started with (``/proc/PID/environ``); None when unreadable."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            raw = f.read(1024 * 1024)
    except OSError:
        return None
    env: dict[str, str] = {}
    for item in raw.split(b"\0"):
        name, eq, value = item.partition(b"=")
        if eq and name:
            env[name.decode("utf-8", "surrogateescape")] = value.decode("utf-8", "surrogateescape")
    return env


def _own(pid: int) -> bool:
    try:
        return os.stat(f"/proc/{pid}").st_uid == os.getuid()
    except OSError:
        return False


@dataclass(frozen=True)
class Source:
    """A process whose environment is the person's: the nearest ancestor of a marked process
    that carries no mark (started before the gate let anything run: a harness, a terminal's
    shell, gatesh's own PTY relay). ``start`` tells it from a later process with its pid."""

    pid: int
    start: int
    name: str

    def token(self) -> str:
        return f"{self.pid}:{self.start}"


def unmarked_ancestor(pid: int | None = None) -> Source | None:
    """The nearest ancestor of ``pid`` (this process) that carries no mark and is this user's
    own; None when the ancestry is cut first (reparented to init, another user's process)."""
    here = os.getpid() if pid is None else pid
    info = _stat(here)
    for _ in range(_MAX_DEPTH):
        if info is None or info[0] <= 1:
            return None
        parent = info[0]
        info = _stat(parent)
        if info is None or not _own(parent):
            return None
        found = marks(parent)
        if found is Mark.NONE:
            return Source(parent, info[2], info[1])
        if found is Mark.UNREADABLE:
            return None
    return None


def source_alive(token: str) -> Source | None:
    """The :class:`Source` ``PID:START`` names when that process still runs, is this user's own
    and carries no mark; None otherwise."""
    pid_text, _, start_text = token.partition(":")
    if not (pid_text.isdigit() and start_text.isdigit()):
        return None
    pid, start = int(pid_text), int(start_text)
    info = _stat(pid)
    if info is None or info[2] != start or not _own(pid) or marks(pid) is not Mark.NONE:
        return None
    return Source(pid, start, info[1])


# --- the person's folders -------------------------------------------------------------------------


@dataclass(frozen=True)
class Folders:
    """gatesh's folders as the person's own files give them, and which files (``source``)."""

    home: str
    config_dir: str
    state_dir: str
    data_dir: str
    runtime_dir: str
    path: str
    source: str


def passwd_home() -> tuple[str, str]:
    """(home folder of this user in the user database, "") or ("", why it cannot be used)."""
    try:
        import pwd

        entry = pwd.getpwuid(os.getuid())
    except (ImportError, KeyError):
        return "", f"uid {os.getuid()} is not in the user database"
    home = entry.pw_dir
    try:
        st = os.stat(home)
    except OSError:
        return "", f"the home folder the user database gives, {home}, does not exist"
    if not os.path.isabs(home) or st.st_uid != os.getuid():
        return "", f"the home folder the user database gives, {home}, is not yours"
    return home, ""


def _record_path(home: str) -> str:
    return os.path.join(home, ".local", "share", "gatesh", "install.json")


def default_runtime_dir(uid: int | None = None) -> str:
    """The socket folder a person's session would give: ``/run/user/UID/gatesh`` when that
    folder is the user's own, else ``/tmp/gatesh-UID`` (as without ``$XDG_RUNTIME_DIR``)."""
    uid = os.getuid() if uid is None else uid
    base = f"/run/user/{uid}"
    try:
        st = os.stat(base)
        if st.st_uid == uid and (st.st_mode & 0o077) == 0:
            return os.path.join(base, "gatesh")
    except OSError:
        pass
    return f"/tmp/gatesh-{uid}"


def person_folders() -> tuple[Folders | None, str]:
    """gatesh's folders from the person's own files: (folders, "") or (None, why not).

    The home folder is the user database's (never ``$HOME``); the install record in it
    (``~/.local/share/gatesh/install.json``, which ``install.sh`` writes from the person's own
    terminal) names the folders when the person's are not the defaults; without a record the
    defaults under that home are used. A record another user could write is not read.
    """
    home, why = passwd_home()
    if not home:
        return None, why
    record = _record_path(home)
    try:
        st = os.stat(record)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        return None, f"{record} cannot be read ({exc.strerror or exc})"
    if st is not None:
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            return None, f"{record} is not yours alone (others may write it)"
        from gatesh._paths import decode_install_record

        try:
            with open(record, encoding="utf-8") as f:
                recorded = decode_install_record(f.read())
        except (OSError, ValueError, RecursionError) as exc:
            return None, f"{record} cannot be read ({exc})"
        folders = recorded.folders
        if folders is not None:
            return Folders(
                home,
                folders.config,
                folders.state,
                folders.data,
                folders.runtime,
                recorded.path or DEFAULT_PATH,
                f"the install record {record}",
            ), ""
    return Folders(
        home,
        os.path.join(home, ".config", "gatesh"),
        os.path.join(home, ".local", "state", "gatesh"),
        os.path.join(home, ".local", "share", "gatesh"),
        default_runtime_dir(),
        DEFAULT_PATH,
        f"the defaults under {home}, the home folder the user database gives",
    ), ""


def recorded_folders(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The ``folders`` and ``path`` entries of the install record for a person whose environment
    is ``environ`` (this process's): what :func:`person_folders` reads back."""
    from gatesh import _paths

    env = os.environ if environ is None else environ
    paths = _paths.paths_for(env.get("HOME") or os.path.expanduser("~"), env)
    return {
        "config": paths.config_dir,
        "state": paths.state_dir,
        "data": paths.data_dir,
        "runtime": paths.runtime_dir,
    }


# --- the daemon's environment ------------------------------------------------------------------


def daemon_environ(ctx: Context, caller: Mapping[str, str]) -> tuple[dict[str, str] | None, str]:
    """The environment a client in ``ctx`` starts the daemon with: (environment, "") or (None,
    why it must not start one). ``caller`` is the client's own environment. Inside a boundary
    none is started (S9.7), but a scratch world's own (:func:`scratch_world`)."""
    if ctx.standing is Standing.BOUNDARY and not scratch_world(caller):
        return None, f"{ctx.why}: a daemon started here would be confined with it"
    return gate_environ(ctx, caller)


def _names(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k in PERSON_NAMES or k.startswith("LC_")}


def gate_environ(ctx: Context, caller: Mapping[str, str]) -> tuple[dict[str, str] | None, str]:
    """The environment the gate decides in, for a process in ``ctx`` whose own is ``caller``:
    (environment, "") or (None, why none can be told).

    A person's process hands on its own :data:`PERSON_NAMES`. One inside a boundary its own only
    when they name a scratch world (:func:`scratch_world`: a test suite's scratch home under a
    temporary folder, apart from the person's folders); otherwise a marked one never its own (the
    agent's command may have set anything there): the same names from the nearest ancestor the
    gate did not start (:func:`unmarked_ancestor`), and with the ancestry cut (a detached
    process), what the person's files say (:func:`person_folders`) when its own environment
    agrees with them or an install record names them."""
    if ctx.standing is Standing.PERSON:
        env = _names(caller)
        env[STARTED_BY_VAR] = "a client acting for the person (its folders and locale)"
        return env, ""
    scratch = scratch_world(caller) if ctx.standing is Standing.BOUNDARY else ""
    if scratch:
        env = _names(caller)
        env[STARTED_BY_VAR] = f"a command the gate let run, in a world of its own ({scratch})"
        return env, ""
    source = unmarked_ancestor()
    if source is not None:
        theirs = _environ(source.pid)
        if theirs is not None:
            env = _names(theirs)
            env[STARTED_BY_VAR] = (
                f"a command the gate let run, on the environment of process {source.pid} "
                f"({source.name}), the nearest one the gate did not start"
            )
            env[SETTINGS_FROM_VAR] = source.token()
            return env, ""
    folders, why = person_folders()
    if folders is None:
        return None, f"{ctx.why}, and the person's folders cannot be told from their files: {why}"
    if "install record" not in folders.source:
        # No record: the defaults hold only if the environment here agrees with them.
        from gatesh import _paths

        said = _paths.paths_for(folders.home, caller)
        if (said.config_dir, said.state_dir, said.data_dir) != (
            folders.config_dir,
            folders.state_dir,
            folders.data_dir,
        ):
            return None, (
                f"{ctx.why}, with no process above it the gate did not start, and its "
                f"environment names other gatesh folders ({said.config_dir}) than the defaults, "
                "which no install record confirms: run install.sh again from your own terminal "
                "to record your folders"
            )
    return environ_for(folders, caller), ""


#: Temporary folders: a home under one of them is a scratch world (a test's, a build's), never
#: the person's (whose folders are told apart from it besides).
TEMPORARY_ROOTS: Final = ("/tmp", "/var/tmp", "/dev/shm")


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def scratch_world(caller: Mapping[str, str]) -> str:
    """The home folder of the scratch world ``caller`` names, or "" when it names none.

    A process inside a boundary (a test suite the gate let run, a build) may give gatesh a world
    of its own:
    ``HOME`` under a temporary folder (:data:`TEMPORARY_ROOTS`), ``XDG_RUNTIME_DIR`` set to a
    folder, and gatesh's config, state, data and runtime folders there all under temporary
    folders and none of them overlapping the person's (:func:`person_folders`; when those cannot
    be told, no world is a scratch one). A gate deciding in such a world reads and writes only
    files the process could write itself, and listens where no person's client connects: it
    grants nothing the process did not have, and cannot reach the person's config, audit log,
    state or daemon (S9.7): inside a boundary no daemon is started, the person's files are not
    writable and the daemon cannot be signalled. A marked process without a boundary gets no
    scratch world (it could stop the person's daemon and start one of its own on such a world)."""
    from gatesh import _paths

    home = caller.get("HOME", "")
    runtime = caller.get("XDG_RUNTIME_DIR", "")
    if not (os.path.isabs(home) and os.path.isabs(runtime) and os.path.isdir(runtime)):
        return ""
    theirs = _paths.paths_for(home, caller)
    mine = [home, theirs.config_dir, theirs.state_dir, theirs.data_dir, theirs.runtime_dir]
    folders, _why = person_folders()
    if folders is None:
        return ""
    person = [folders.home, folders.config_dir, folders.state_dir, folders.data_dir]
    person.append(folders.runtime_dir)
    roots = [os.path.realpath(r) for r in TEMPORARY_ROOTS]
    for raw in mine:
        path = os.path.realpath(raw)
        if not any(_inside(path, r) and path != r for r in roots):
            return ""
        for other in (os.path.realpath(f) for f in person):
            if _inside(path, other) or _inside(other, path):
                return ""
    return home


def settle_daemon_environ() -> str:
    """For ``gatesh daemon`` in a marked process: make its environment the person's (S9.7),
    whoever started it; "" when done, else why it cannot be told (the daemon must not start).

    The environment the spawning client named (``GATESH_SETTINGS_FROM``) is read again from that
    process, which must still run, be this user's and carry no mark; otherwise the person's
    files decide, as for any marked process whose ancestry is cut."""
    named = os.environ.pop(SETTINGS_FROM_VAR, "")
    said = os.environ.get(STARTED_BY_VAR, "")
    source = source_alive(named) if named else None
    if source is not None:
        theirs = _environ(source.pid)
        if theirs is not None:
            env = _names(theirs)
            env[STARTED_BY_VAR] = said or (
                f"a command the gate let run, on the environment of process {source.pid}"
            )
            os.environ.clear()
            os.environ.update(env)
            return ""
    settled, why = gate_environ(
        Context(Standing.MARKED, "this process carries the gate's mark"), os.environ
    )
    if settled is None:
        return why
    os.environ.clear()
    os.environ.update(settled)
    return ""


@contextlib.contextmanager
def using_environ(env: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` is exactly ``env`` inside the block, and what it was again after it."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def environ_for(folders: Folders, caller: Mapping[str, str]) -> dict[str, str]:
    """The daemon's environment built from ``folders`` alone (``caller`` gives only ``USER`` and
    ``LOGNAME`` when they name this user, and the locale's ``LANG``)."""
    import pwd

    try:
        name = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        name = str(os.getuid())
    env = {
        "HOME": folders.home,
        "USER": name,
        "LOGNAME": name,
        "PATH": folders.path,
        "LANG": "C.UTF-8",
        "XDG_CONFIG_HOME": os.path.dirname(folders.config_dir),
        "XDG_STATE_HOME": os.path.dirname(folders.state_dir),
        "XDG_DATA_HOME": os.path.dirname(folders.data_dir),
        STARTED_BY_VAR: f"a command the gate let run (the folders of {folders.source})",
    }
    if os.path.basename(folders.runtime_dir) == "gatesh":
        env["XDG_RUNTIME_DIR"] = os.path.dirname(folders.runtime_dir)
    return env


def read_daemon_env(config_dir: str) -> tuple[dict[str, str], list[str]]:
    """The settings in ``CONFIG/daemon.env`` (``NAME=value`` lines; ``#`` comments; an optional
    ``export``; one pair of quotes stripped) and the problems found (each a sentence).

    The file holds a key: it is read only when it is a regular file of this user that nobody else
    may read or write (0600 or 0400); otherwise nothing in it is used. Names that would move
    gatesh's folders or load code (``HOME``, ``XDG_*``, ``GATESH_*``, ``PYTHON*``, ``LD_*``) are
    skipped, each named.
    """
    path = os.path.join(config_dir, DAEMON_ENV)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return {}, []
    except OSError as exc:
        return {}, [f"{path} cannot be read ({exc.strerror or exc}); nothing in it is used"]
    try:
        st = os.fstat(fd)
        if not (st.st_mode & 0o170000 == 0o100000) or st.st_uid != os.getuid():
            return {}, [f"{path} is not a file of yours; nothing in it is used"]
        if st.st_mode & 0o077:
            return {}, [
                f"{path} has mode {st.st_mode & 0o777:04o}: others may read or change the key "
                f"in it, so nothing in it is used (chmod 600 {path})"
            ]
        raw = os.read(fd, 65536)
    finally:
        os.close(fd)
    values: dict[str, str] = {}
    problems: list[str] = []
    for n, line in enumerate(raw.decode("utf-8", "replace").splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if text.startswith("export "):
            text = text[len("export ") :].lstrip()
        name, eq, value = text.partition("=")
        name = name.strip()
        if not eq or not name or not (name[0].isalpha() or name[0] == "_"):
            problems.append(f"{path} line {n} is not NAME=value; skipped")
            continue
        if not all(c.isalnum() or c == "_" for c in name):
            problems.append(f"{path} line {n}: {name!r} is not a variable name; skipped")
            continue
        if name in _FORBIDDEN or name.startswith(_FORBIDDEN_PREFIXES):
            problems.append(f"{path} line {n}: {name} cannot be set there; skipped")
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[name] = value
    return values, problems

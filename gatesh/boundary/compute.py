"""A command's boundary, computed from its decision (S16): what it may write, what it may not
read, its network, its scopes and its limits. The daemon (or the in-process gate) computes it;
the client applies its wire form (:meth:`Boundary.wire`) with :func:`gatesh.boundary._kernel.apply`.

**Writes** go to the working tree (the repository's top level with its git folders, or the working
folder outside a repository), the temporary folders, the caches of :data:`~gatesh.boundary.tables.CACHES`,
the terminal and discard devices, and the paths the decision itself judged and allowed.
**Reads** reach everything but the credential stores (except those a program the decision read
whole uses to do its job, :data:`~gatesh.boundary.tables.CREDENTIAL_USES`). The protected places
(:mod:`gatesh.boundary.places`) are never written.

Landlock only allows: a rule on a folder holds everything under it, and nothing can be taken back
below it. So a protected place inside an allowed folder is kept out by walking around it
(:func:`around`): the folder gets no rule of its own, each of its entries does, except the
protected place, and an entry that holds a protected place is walked the same way. The guarantee
and its limits, exactly:

- A protected place, and everything under it, gets no right the walk kept from it: it cannot be
  written, truncated, removed, renamed or replaced (and a credential store cannot be read).
- A folder on the way to a protected place (its parent, and theirs up to the allowed root) keeps
  what its entries were when the boundary was computed: nothing can be created or removed
  directly in it (new files created later next to a protected place are out of reach, for
  reading too), while the entries themselves stay as open as before.
- Inside the working tree, walking around the repository's git hooks path and the project's
  harness settings would close the tree's top folder and the git folder: no new top-level file,
  no ``git commit`` (git makes its lock files there). So by default the tree is allowed whole and
  those places are guarded by the text rules only (S3.4); ``boundary.seal_tree = true`` walks
  around them too, at that price.
- A file hard-linked or bind-mounted into an allowed folder before the command started is
  reachable through that folder; a link made inside the boundary is not (the kernel refuses a
  link that would give a file more rights than it had).
"""

from __future__ import annotations

import bisect
import functools
import glob
import hashlib
import os
import posixpath
import stat
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gatesh._paths import GatePaths
from gatesh._types import Decision, Direction, PathClass, Stage
from gatesh.boundary import _kernel
from gatesh.boundary.places import Access, Family, protected_places
from gatesh.boundary.tables import CACHES, CREDENTIAL_USES, NETWORK
from gatesh.config import BoundaryConfig, NetworkDefault
from gatesh.vocab.grammar import parse
from gatesh.vocab.paths.classes import classify, tree_root_ok

__all__ = [
    "WIRE_VERSION",
    "Boundary",
    "KeepOut",
    "Limits",
    "Network",
    "around",
    "boundary_for",
]

#: The version of :meth:`Boundary.wire`; a client that reads another refuses to run the command.
WIRE_VERSION: Final = 1
#: Temporary folders: nothing there is expected to last.
TEMP_FOLDERS: Final = ("/tmp", "/var/tmp", "/dev/shm")
#: Devices every program may write: discard, zero, randomness, the terminal.
DEVICES: Final = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
)
#: Past this many rules the walk stops granting more (a narrower boundary, never a wider one):
#: ~2.4 us a rule: a typical domain has 50 to 250 (its 1 ms budget, S14); a home folder inside a
#: crowded /tmp (a test run's) can need a thousand. The roots are walked most needed first (see
#: :func:`_writable_roots`), so what a cut would leave out is an existing entry of /tmp.
MAX_RULES: Final = 4096
#: How deep the walk goes around a protected place.
MAX_DEPTH: Final = 24
# The rows a harness's own boilerplate (Stage.HARNESS: its shell snapshot, S1) may write: the
# snapshot folders, and the harness's folder holding them.
_HARNESS_WRITES: Final = frozenset({"harness.snapshots", "harness.home"})
# The classes of a path the decision judged and allowed that its boundary lets it write.
_WRITABLE_CLASSES: Final = frozenset(
    {PathClass.WORKTREE, PathClass.TEMP, PathClass.HOME, PathClass.ELSEWHERE}
)


@dataclass(frozen=True)
class Network:
    """The command's network: open, or closed to every TCP connect and bind (``why`` says why)."""

    open: bool
    why: str


@dataclass(frozen=True)
class Limits:
    """Per-process resource limits, lowered only (see :mod:`gatesh.boundary._kernel`).

    ``processes`` counts every process and thread of the user (the kernel's RLIMIT_NPROC), so it
    is the user's count when the boundary was computed plus ``boundary.processes``."""

    processes: int
    memory: int  # bytes of address space
    file_size: int  # bytes
    cpu_s: int

    def wire(self) -> dict[str, int]:
        return {
            "nproc": self.processes,
            "as": self.memory,
            "fsize": self.file_size,
            "cpu": self.cpu_s,
        }


@dataclass(frozen=True)
class Boundary:
    """One command's boundary. ``write``/``read`` are the kernel's rules (after the walk);
    ``writable`` the roots they were walked from, for the person and the agent."""

    tree: str
    writable: tuple[str, ...]
    write: tuple[str, ...]
    read: tuple[str, ...]
    unreadable: tuple[str, ...]
    readable_stores: tuple[str, ...]
    kept_out: tuple[Family, ...]
    network: Network
    limits: Limits
    abi: int
    sealed_tree: bool = False
    widened: bool = False
    tmpdir: str = ""  # TMPDIR for the command: its temporary folders hold a protected place

    @functools.cached_property
    def id(self) -> str:
        """A short name of exactly this boundary (its wire form's hash)."""
        return "b-" + hashlib.sha256(repr(self._wire_body()).encode()).hexdigest()[:10]

    def _wire_body(self) -> dict[str, Any]:
        return {
            "v": WIRE_VERSION,
            "abi": self.abi,
            "list": ["/"],
            "read": list(self.read),
            "write": list(self.write),
            "net": None if self.network.open else {"connect": [], "bind": []},
            "scope": ["signal", "abstract-unix"],
            "limits": self.limits.wire(),
            "env": temp_env(self.tmpdir),
        }

    def wire(self) -> dict[str, Any]:
        """The plain, versioned description the client applies (see :func:`_kernel.apply`)."""
        return self._wire_body() | {"id": self.id}

    def summary(self) -> str:
        """One line: where it may write, what it may not touch, its network."""
        writes = ", ".join(_short(p) for p in self.writable[:6])
        if len(self.writable) > 6:
            writes += f" and {len(self.writable) - 6} more"
        if self.widened:
            return (
                "reads and writes anywhere your user may (a person widened it for this run); "
                "network open"
            )
        out = f"writes only to {writes}"
        out += "; never " + ", ".join(g.value for g in self.kept_out)
        out += "; network " + ("open" if self.network.open else "closed")
        return out

    def audit(self) -> dict[str, Any]:
        """What the audit line keeps of it (S13): its id and its shape, not every rule."""
        return {
            "id": self.id,
            "abi": self.abi,
            "writable": [_short(p) for p in self.writable],
            "unreadable": len(self.unreadable),
            "readable_stores": [_short(p) for p in self.readable_stores],
            "network": "open" if self.network.open else "closed",
            "rules": len(self.write) + len(self.read) + 1,
            "sealed_tree": self.sealed_tree,
            "widened": self.widened,
        }


def temp_env(tmpdir: str) -> dict[str, str]:
    """The environment that sends a command's temporary files to ``tmpdir`` ({} for none):
    ``TMPDIR``, and zsh's ``TMPPREFIX`` (its `fc`, here-documents and `=(…)` make files named
    after it, in /tmp by default, which then cannot be created)."""
    return {"TMPDIR": tmpdir, "TMPPREFIX": posixpath.join(tmpdir, "zsh")} if tmpdir else {}


def _short(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home != "/" and path.startswith(home + "/") else path


# --- computing it ---------------------------------------------------------------------------


def boundary_for(
    decision: Decision | None,
    cwd: str,
    config: BoundaryConfig,
    paths: GatePaths,
    *,
    widened: bool = False,
) -> Boundary | None:
    """The boundary ``decision``'s command runs in, or None when there is none: the kernel has no
    Landlock, or the person switched it off (``boundary.enabled = false``).

    ``decision`` None: an agent's interactive session (S10), whose shell is confined when it
    starts, for every command it will run: its working tree, no credential store, the network
    open. ``widened``: a person approved running this one command with its boundary widened: it
    reads and writes wherever the user may and keeps the network; ``no_new_privs``, the scopes
    (signals, ptrace, abstract sockets), the seccomp filter and the limits stay.
    """
    level = _kernel.abi()
    if level < 1 or not config.enabled:
        return None
    home = os.path.realpath(os.path.expanduser("~"))
    repo = _repo(cwd)
    tree = repo[0] if repo else (_real(cwd) if _working_folder_ok(cwd, home) else "")
    places = protected_places(paths, home, tree)
    sealed = config.seal_tree
    harness = decision is not None and decision.stage is Stage.HARNESS
    no_write = [
        p.path
        for p in places
        if (sealed or not p.in_tree) and not (harness and p.row in _HARNESS_WRITES)
    ]
    stores = _readable_stores(decision, home) if decision is not None else set()
    no_read = [
        p.path
        for p in places
        if p.access is Access.NO_READ and p.path not in stores and _readable(p.path, home)
    ]
    if widened:
        # A person let this one run go wherever the user may: Landlock cannot allow a new file in
        # a folder holding a protected place (the home folder), so no file is kept out; what
        # stays is everything that keeps the gate's processes and the person's channel apart.
        no_write, no_read = [], []
    writable = ["/"] if widened else _writable_roots(decision, tree, repo, home)
    if decision is not None and not widened:
        writable += [
            r for r in _pushed_repositories(decision, cwd, repo, home) if r not in writable
        ]
    if harness:  # the harness's own boilerplate writes its shell snapshot (S1)
        writable += [
            p.path for p in places if p.row == "harness.snapshots" and os.path.isdir(p.path)
        ]
    keep = _keep_out(tuple(no_write))
    tmpdir = ""
    if any(keep.under(t) for t in TEMP_FOLDERS if t in writable):
        tmpdir = _private_tmp()
        if tmpdir:
            writable.insert(0, tmpdir)
    # The rules, most needed first (a budget that runs out cuts the last ones): the roots that
    # are one rule each (the tree, the devices, the caches), then the reads, then the temporary
    # folders, whose walk around a home folder inside one can be long.
    budget = [MAX_RULES]
    temps = [r for r in writable if r in TEMP_FOLDERS or r == os.environ.get("TMPDIR")]
    write: list[str] = []
    for root in (r for r in writable if r not in temps):
        write += around(root, keep, budget)
    read = around("/", _keep_out(tuple(no_read)), budget)
    for root in temps:
        write += around(root, keep, budget)
    return Boundary(
        tree=tree,
        writable=tuple(writable),
        write=tuple(dict.fromkeys(write)),
        read=tuple(read),
        unreadable=tuple(no_read),
        readable_stores=tuple(sorted(stores)),
        kept_out=()
        if widened
        else tuple(dict.fromkeys(p.group for p in places if sealed or not p.in_tree)),
        network=_network(decision, config, widened),
        limits=_limits(config),
        abi=level,
        sealed_tree=sealed,
        widened=widened,
        tmpdir=tmpdir,
    )


def _real(path: str) -> str:
    return os.path.realpath(path)


def _repo(cwd: str) -> tuple[str, str, str] | None:
    from gatesh.rater.worktree import find_repo

    r = find_repo(cwd)
    if r is None or not tree_root_ok(r.root):
        return None
    return (_real(r.root), _real(r.git_dir), _real(r.common_dir))


def _working_folder_ok(cwd: str, home: str) -> bool:
    """Whether the working folder outside a repository may be written: never ``/``, a folder of
    the machine itself, or a folder holding the home folder."""
    real = _real(cwd)
    return tree_root_ok(real) and not (home == real or home.startswith(real.rstrip("/") + "/"))


def _writable_roots(
    decision: Decision | None, tree: str, repo: tuple[str, str, str] | None, home: str
) -> list[str]:
    """The roots a command may write, most needed first: the tree and its git folders, the
    devices, the caches, the paths the decision judged, then the temporary folders (the only
    roots whose walk can be long: see :data:`MAX_RULES`)."""
    roots: list[str] = []
    if tree:
        roots.append(tree)
    if repo:
        roots += [d for d in repo[1:] if not d.startswith(tree + "/")]
    temps, caches, devices = _static_roots(home, int(time.monotonic() / _STATIC_TTL_S))
    roots += devices
    roots += caches
    if decision is not None:
        roots += _judged_writes(decision)
    roots += temps
    return list(dict.fromkeys(roots))


#: How long the temporary folders, caches and devices found are remembered (a cache folder made
#: in the meantime is writable from the next period on).
_STATIC_TTL_S: Final = 2.0


@functools.lru_cache(maxsize=4)
def _static_roots(
    home: str, _period: int
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The temporary folders, the caches and the devices that exist (see :func:`_writable_roots`)."""
    temps: list[str] = []
    tmpdir = os.environ.get("TMPDIR", "")
    for t in (*TEMP_FOLDERS, tmpdir):
        if t.startswith("/") and os.path.isdir(t):
            temps.append(_real(t))
    cache_home = os.environ.get("XDG_CACHE_HOME", "")
    cache_home = cache_home if cache_home.startswith("/") else posixpath.join(home, ".cache")
    caches: list[str] = []
    for row in CACHES:
        path = row.path.replace("$CACHE", cache_home).replace("~", home, 1)
        if os.path.isdir(path):
            caches.append(_real(path))
    devices = [d for d in DEVICES if os.path.exists(d)]
    return tuple(dict.fromkeys(temps)), tuple(dict.fromkeys(caches)), tuple(devices)


def _private_tmp() -> str:
    """A temporary folder of this user's own, for a command whose temporary folders hold a
    protected place (then nothing can be made directly in them; ``TMPDIR`` points here instead).
    "" when it cannot be made safely (someone else's, a link)."""
    path = f"/tmp/gatesh-tmp-{os.getuid()}"
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return ""
    try:
        st = os.lstat(path)
    except OSError:
        return ""
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        return ""
    return path


def _judged_writes(decision: Decision) -> list[str]:
    """The paths the decision judged a write to, and allowed: existing files and folders of the
    classes a command may write (never a credential store, a persistence place, gatesh's own or
    a folder of the machine); a path that does not exist yet is not granted (its folder would
    grant far more than was judged)."""
    out: list[str] = []
    for effect in decision.facts.paths:
        if effect.direction is Direction.READ or effect.cls not in _WRITABLE_CLASSES:
            continue
        path = effect.resolved
        if path.startswith("/") and os.path.exists(path):
            out.append(_real(path))
    return out


#: How much of a repository's config is read for a remote's URL (a config is a few KB).
_CONFIG_MAX: Final = 1 << 16


def _pushed_repositories(
    decision: Decision, cwd: str, repo: tuple[str, str, str] | None, home: str
) -> list[str]:
    """The local repositories a ``git push`` the decision read writes into: its remote given as a
    path or a ``file://`` URL, or a remote name whose URL in the repository's config is one. A
    push to a local remote writes that repository's objects and refs, a path the decision judged
    like any other; only an existing repository is granted (its git folder, never its work tree),
    of a class a command may write, and the protected places stay kept out (:func:`around`).
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
            target = _local_repository(url, where, home)
            if target and target not in out:
                out.append(target)
    return out


def _common_dir(where: str) -> str:
    from gatesh.rater.worktree import find_repo

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


def _local_repository(url: str, where: str, home: str) -> str:
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
    return real if cls in _WRITABLE_CLASSES or cls is PathClass.SYSTEM else ""


def _readable(path: str, home: str) -> bool:
    """Whether the user could read ``path`` without the boundary (what the kernel's permissions
    already keep from this user needs no rule, and walking ``/etc`` for it would cost ~200)."""
    if path == home or path.startswith(home + "/"):
        return True
    return os.access(path, os.R_OK)


def _verb(argv: Sequence[str]) -> str:
    """The first operand after the head (``git push`` -> ``push``), "" when none."""
    for word in argv[1:]:
        if not word.startswith("-"):
            return word
    return ""


def _commands(decision: Decision) -> Iterable[tuple[str, str]]:
    """(head, verb) of every command the reader found (remote ones excepted: they run elsewhere)."""
    for cmd in decision.facts.commands:
        if cmd.remote or not cmd.head:
            continue
        yield cmd.head, _verb([w.text for w in cmd.argv])


def _complete(decision: Decision) -> bool:
    """Whether gatesh read everything the command runs (the read-only path, or a builtin verdict
    on complete knowledge)."""
    if decision.stage is Stage.READ_ONLY:
        return True
    v = decision.verdict
    if v is None:
        return False
    if v.cascade is not None:
        return v.cascade.builtin.complete
    return v.complete


def _readable_stores(decision: Decision, home: str) -> set[str]:
    """The credential stores the command may read: those a program it runs uses to do its job,
    when gatesh read the whole command (unread code never gets a credential)."""
    if not _complete(decision):
        return set()
    names: list[str] = []
    for head, verb in _commands(decision):
        for row in CREDENTIAL_USES:
            if head in row.heads and (not row.verbs or verb in row.verbs):
                names += row.stores
    found: set[str] = set()
    for name in names:
        for path in glob.glob(posixpath.join(glob.escape(home), name)) or [
            posixpath.join(home, name)
        ]:
            found |= {posixpath.normpath(path), os.path.realpath(path)}
    return found


def _network(decision: Decision | None, config: BoundaryConfig, widened: bool) -> Network:
    """Open when a program needs it (:data:`NETWORK`) or the command names a host; closed for a
    command gatesh read whole that needs none; for unread code, the person's default. An agent's
    session keeps it: the commands it will run are not known when it starts."""
    if widened:
        return Network(True, "a person widened this command's boundary")
    if decision is None:
        return Network(True, "an agent's session: the commands it will run are not known yet")
    if decision.facts.hosts:
        return Network(True, "it names a host: " + ", ".join(decision.facts.hosts[:3]))
    for head, verb in _commands(decision):
        for row in NETWORK:
            if head in row.heads and (not row.verbs or verb in row.verbs):
                return Network(True, f"{head}: {row.why}")
    if _complete(decision):
        return Network(False, "gatesh read the whole command and none of it needs the network")
    if config.network_unread is NetworkDefault.CLOSED:
        return Network(False, "it runs code gatesh did not read (boundary.network_unread = closed)")
    return Network(True, "it runs code gatesh did not read (boundary.network_unread = open)")


def _limits(config: BoundaryConfig) -> Limits:
    return Limits(
        processes=_tasks_now() + config.processes,
        memory=config.memory_mib << 20,
        file_size=config.file_mib << 20,
        cpu_s=config.cpu_s,
    )


def _tasks_now() -> int:
    """An upper bound of the user's processes and threads now: every task of the machine
    (``/proc/loadavg``), one read instead of a walk of ``/proc``."""
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            return int(f.read().split()[3].partition("/")[2])
    except (OSError, ValueError, IndexError):
        return 4096


# --- walking around protected places ----------------------------------------------------------

# A folder's entries (symbolic links left out) as of its modification time.
_LISTINGS: dict[str, tuple[int, tuple[str, ...]]] = {}
_MAX_LISTINGS: Final = 256


def _entries(folder: str) -> tuple[int, tuple[str, ...]]:
    """(modification time, the names in ``folder`` that are not symbolic links): a link's target
    is reached, and ruled, where it lies. Remembered while the modification time stays the same."""
    mtime = os.stat(folder).st_mtime_ns
    got = _LISTINGS.get(folder)
    if got is not None and got[0] == mtime:
        return got
    with os.scandir(folder) as it:
        names = tuple(sorted(e.name for e in it if not e.is_symlink()))
    if len(_LISTINGS) >= _MAX_LISTINGS:
        _LISTINGS.clear()
    _LISTINGS[folder] = (mtime, names)
    return (mtime, names)


class KeepOut:
    """Protected places as the walk asks about them: sorted (the places under a folder are one
    slice) and as a set (whether a folder lies in one is a lookup per ancestor)."""

    __slots__ = ("places", "set")

    def __init__(self, places: Iterable[str]) -> None:
        self.places = tuple(sorted({posixpath.normpath(p) for p in places}))
        self.set = frozenset(self.places)

    def holds(self, path: str) -> bool:
        """Whether ``path`` is a kept-out place or lies in one."""
        while True:
            if path in self.set:
                return True
            parent = posixpath.dirname(path)
            if parent == path:
                return False
            path = parent

    def under(self, folder: str) -> tuple[str, ...]:
        """The kept-out places strictly under ``folder``."""
        prefix = folder.rstrip("/") + "/"
        lo = bisect.bisect_left(self.places, prefix)
        hi = bisect.bisect_left(self.places, prefix[:-1] + "0")  # "0" follows "/"
        return self.places[lo:hi]


@functools.lru_cache(maxsize=32)
def _keep_out(places: tuple[str, ...]) -> KeepOut:
    return KeepOut(places)


# A walk's answer, with the folders it listed and their modification times then.
_WALKS: dict[tuple[str, tuple[str, ...]], tuple[tuple[str, ...], tuple[tuple[str, int], ...]]] = {}


def around(root: str, keep_out: KeepOut, budget: list[int] | None = None) -> list[str]:
    """The places to allow so that ``root`` is allowed except the ``keep_out`` places: ``[root]``
    when none of them lies in it; nothing when ``root`` lies in one; otherwise the walk of the
    module docstring (remembered while no folder it listed changed). ``budget`` (a one-item
    list, counted down) bounds the rules made across calls; past it, the rest is not allowed
    (narrower, never wider)."""
    budget = budget if budget is not None else [MAX_RULES]
    root = posixpath.normpath(root)
    if keep_out.holds(root):
        return []
    inside = keep_out.under(root)
    if not inside:
        found: tuple[str, ...] = (root,)
    else:
        key = (root, inside)
        got = _WALKS.get(key)
        if got is not None and all(_mtime(f) == m for f, m in got[1]):
            found = got[0]
        else:
            out: list[str] = []
            listed: list[tuple[str, int]] = []
            _walk(root, inside, out, listed)
            found = tuple(out)
            if len(_WALKS) >= _MAX_LISTINGS:
                _WALKS.clear()
            _WALKS[key] = (found, tuple(listed))
    take = found[: max(budget[0], 0)]
    budget[0] -= len(take)
    return list(take)


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


def _walk(root: str, inside: Sequence[str], out: list[str], listed: list[tuple[str, int]]) -> None:
    """The walk of the module docstring, breadth first: a folder's entries come before those of
    its sub-folders, so a budget that cuts the list cuts the deepest entries (the siblings of a
    home folder inside a crowded temporary folder), never ``/usr`` beside them."""
    queue: deque[tuple[str, Sequence[str], int]] = deque([(root, inside, 0)])
    while queue:
        path, kept, depth = queue.popleft()
        if not kept:
            out.append(path)
            continue
        if depth >= MAX_DEPTH:
            continue
        try:
            mtime, names = _entries(path)
        except OSError:
            listed.append((path, -1))
            continue  # cannot be listed: nothing under it is allowed
        listed.append((path, mtime))
        prefix = path.rstrip("/") + "/"
        # The kept-out places below each entry, by the entry's name (one pass over them), and the
        # entries that are kept out themselves.
        below: dict[str, list[str]] = {}
        exact: set[str] = set()
        for k in kept:
            name, _, rest = k[len(prefix) :].partition("/")
            if rest:
                below.setdefault(name, []).append(k)
            else:
                exact.add(name)
        for name in names:
            if name in exact:
                continue  # the place itself: left out
            queue.append((prefix + name, below.get(name, ()), depth + 1))

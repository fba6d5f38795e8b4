"""A command's boundary, computed from its decision (S16): what it may write, what it may not
read, its network, its scopes and its limits. The daemon (or the in-process gate) computes it;
the client applies its wire record (:meth:`Boundary.wire`, a :class:`gatesh.boundary._spec.Spec`)
with :func:`gatesh.boundary._kernel.apply`.

**Writes** go to the working tree (the repository's top level with its git folders, or the working
folder outside a repository), the temporary folders, the caches of :data:`~gatesh.boundary.tables.CACHES`,
the terminal and discard devices, and the paths the decision itself judged and allowed.
**Reads** reach everything but the credential stores (except those a program the decision read
whole uses to do its job, :data:`~gatesh.boundary.tables.CREDENTIAL_USES`). The protected places
(:mod:`gatesh.boundary.places`) are never written.

Landlock only allows: a rule on a folder holds everything under it, and nothing can be taken back
below it. So a protected place inside an allowed folder is kept out by walking around it
(:func:`gatesh.boundary.walk.around`): the folder gets no rule of its own, each of its entries does, except the
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

import functools
import glob
import hashlib
import os
import posixpath
import stat
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from gatesh._paths import GatePaths
from gatesh._types import Decision, Direction, Stage
from gatesh.boundary import _kernel, _spec
from gatesh.boundary.places import Access, Family, Place, protected_places
from gatesh.boundary.pushes import pushed_repositories
from gatesh.boundary.tables import CACHES, CREDENTIAL_USES, NETWORK, WRITABLE_CLASSES
from gatesh.boundary.walk import MAX_RULES, KeepOut, around, keep_out
from gatesh.config import BoundaryConfig, NetworkDefault
from gatesh.vocab.paths.classes import tree_root_ok

__all__ = [
    "Boundary",
    "BoundaryAudit",
    "Limits",
    "Network",
    "boundary_for",
    "network_for",
]

#: The scopes every boundary keeps its command inside (signals, abstract Unix sockets: ABI 6).
SCOPES: Final = ("signal", "abstract-unix")
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
# The rows a harness's own boilerplate (Stage.HARNESS: its shell snapshot, S1) may write: the
# snapshot folders, and the harness's folder holding them.
_HARNESS_WRITES: Final = frozenset({"harness.snapshots", "harness.home"})


@dataclass(frozen=True)
class Network:
    """The command's network: open, or closed (``why`` says why): to every TCP connect and bind
    (Landlock), and to every other Internet socket and packet socket (the seccomp filter:
    :func:`gatesh.boundary._kernel.seccomp_program`); Unix sockets stay open.
    ``unread``: decided by ``boundary.network_unread``, because the command runs code gatesh did
    not read (benchmarks count the commands of that class by it)."""

    open: bool
    why: str
    unread: bool = False


@dataclass(frozen=True)
class Limits:
    """Per-process resource limits, lowered only (see :mod:`gatesh.boundary._kernel`; the
    values' reasons: :class:`gatesh.config.BoundaryConfig`).

    ``processes`` counts every process and thread of the user (the kernel's RLIMIT_NPROC), so it
    is the user's count when the boundary was computed plus ``boundary.processes``."""

    processes: int
    memory: int  # bytes of private writable memory (RLIMIT_DATA), not of address space
    file_size: int  # bytes
    cpu_s: int

    def wire(self) -> dict[str, int]:
        return {
            "nproc": self.processes,
            "data": self.memory,
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
    def _unnamed(self) -> _spec.Spec:
        return _spec.Spec(
            _spec.Rules(
                abi=self.abi,
                read=self.read,
                write=self.write,
                list=("/",),
                net=None if self.network.open else _spec.Ports(),
                scope=SCOPES,
            ),
            limits=tuple(self.limits.wire().items()),
            env=tuple(temp_env(self.tmpdir).items()),
        )

    @functools.cached_property
    def id(self) -> str:
        """A short name of exactly this boundary: the hash of its wire form but its name and note
        (the same name as before the form had a record: audit lines keep comparing)."""
        body = {k: v for k, v in self._unnamed.encode().items() if k not in ("id", "note")}
        return "b-" + hashlib.sha256(repr(body).encode()).hexdigest()[:10]

    def wire(self) -> _spec.Spec:
        """The boundary as it travels to the client that applies it (:func:`_kernel.apply`)."""
        u = self._unnamed
        return _spec.Spec(u.rules, u.limits, u.env, id=self.id)

    def summary(self) -> str:
        """One line: where it may write, what it may not touch, its network."""
        home = os.path.expanduser("~")
        writes = ", ".join(_short(p, home) for p in self.writable[:6])
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

    def audit(self) -> BoundaryAudit:
        """What the audit line keeps of it (S13): its id and its shape, not every rule."""
        home = os.path.expanduser("~")
        return BoundaryAudit(
            id=self.id,
            abi=self.abi,
            writable=tuple(_short(p, home) for p in self.writable),
            unreadable=len(self.unreadable),
            readable_stores=tuple(_short(p, home) for p in self.readable_stores),
            network="open" if self.network.open else "closed",
            rules=len(self.write) + len(self.read) + 1,
            sealed_tree=self.sealed_tree,
            widened=self.widened,
        )


@dataclass(frozen=True)
class BoundaryAudit:
    """What an audit line keeps of a boundary (S13), in the line's order: its id and its shape
    (the roots it may write, how many places it may not read, its network, its rule count)."""

    id: str
    abi: int
    writable: tuple[str, ...]
    unreadable: int
    readable_stores: tuple[str, ...]
    network: str  # "open" or "closed"
    rules: int
    sealed_tree: bool
    widened: bool


def temp_env(tmpdir: str) -> dict[str, str]:
    """The environment that sends a command's temporary files to ``tmpdir`` ({} for none):
    ``TMPDIR``, and zsh's ``TMPPREFIX`` (its `fc`, here-documents and `=(…)` make files named
    after it, in /tmp by default, which then cannot be created)."""
    return {"TMPDIR": tmpdir, "TMPPREFIX": posixpath.join(tmpdir, "zsh")} if tmpdir else {}


def _short(path: str, home: str) -> str:
    """``path`` with the home folder ``home`` (``~`` expanded once by the caller) written ``~``."""
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
    kept = _kept(places, sealed, harness)
    no_write = list(kept.no_write)
    stores = _readable_stores(decision, home) if decision is not None else set()
    no_read = [p for p in kept.stores if p not in stores and _readable(p, home)]
    if widened:
        # A person let this one run go wherever the user may: Landlock cannot allow a new file in
        # a folder holding a protected place (the home folder), so no file is kept out; what
        # stays is everything that keeps the gate's processes and the person's channel apart.
        no_write, no_read = [], []
    writable = ["/"] if widened else _writable_roots(decision, tree, repo, home)
    if decision is not None and not widened:
        writable += [r for r in pushed_repositories(decision, cwd, repo, home) if r not in writable]
    if harness:  # the harness's own boilerplate writes its shell snapshot (S1)
        writable += [
            _real(p.path) for p in places if p.row == "harness.snapshots" and os.path.isdir(p.path)
        ]
    keep = keep_out(tuple(no_write))
    tmpdir = ""
    if any(keep.under(t) for t in TEMP_FOLDERS if t in writable):
        tmpdir = _private_tmp()
        if tmpdir:
            writable.insert(0, tmpdir)
    write, read = _rules(writable, keep, keep_out(tuple(no_read)))
    return Boundary(
        tree=tree,
        writable=tuple(writable),
        write=write,
        read=read,
        unreadable=tuple(no_read),
        readable_stores=tuple(sorted(stores)),
        kept_out=() if widened else kept.families,
        network=_network(decision, config, widened),
        limits=_limits(config),
        abi=level,
        sealed_tree=sealed,
        widened=widened,
        tmpdir=tmpdir,
    )


@dataclass(frozen=True)
class _Kept:
    """What one table of protected places keeps out of a boundary: the paths never written, the
    credential stores' paths (before those the command may read, or the user cannot, are taken
    out), and the places' families, in the table's order."""

    no_write: tuple[str, ...]
    stores: tuple[str, ...]
    families: tuple[Family, ...]


# _kept's answers, by the identity of the places tuple (protected_places returns the same tuple
# while nothing it depends on changed) and the two switches; each entry holds its tuple, so the
# identity is not reused while the entry is there. Bounded: cleared when full.
_KEPT: dict[tuple[int, bool, bool], tuple[tuple[Place, ...], _Kept]] = {}
_KEPT_MAX: Final = 64


def _kept(places: tuple[Place, ...], sealed: bool, harness: bool) -> _Kept:
    """:class:`_Kept` of ``places``, with the tree sealed (``sealed``: places inside it are kept
    out too) and for a harness's boilerplate (``harness``: its snapshot rows are writable).
    Remembered: the same few hundred places were filtered three times at every check (S14)."""
    key = (id(places), sealed, harness)
    got = _KEPT.get(key)
    if got is not None and got[0] is places:
        return got[1]
    kept = _Kept(
        no_write=tuple(
            p.path
            for p in places
            if (sealed or not p.in_tree) and not (harness and p.row in _HARNESS_WRITES)
        ),
        stores=tuple(p.path for p in places if p.access is Access.NO_READ),
        families=tuple(dict.fromkeys(p.group for p in places if sealed or not p.in_tree)),
    )
    if len(_KEPT) >= _KEPT_MAX:
        _KEPT.clear()
    _KEPT[key] = (places, kept)
    return kept


def _rules(
    writable: list[str], no_write: KeepOut, no_read: KeepOut
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The kernel's write and read rules (:func:`gatesh.boundary.walk.around`), most needed first
    (a budget that runs out cuts the last ones): the roots that are one rule each (the tree, the
    devices, the caches), then the reads, then the temporary folders, whose walk around a home
    folder inside one can be long."""
    budget = [MAX_RULES]
    temps = [r for r in writable if r in TEMP_FOLDERS or r == os.environ.get("TMPDIR")]
    write: list[str] = []
    for root in (r for r in writable if r not in temps):
        write += around(root, no_write, budget)
    read = around("/", no_read, budget)
    for root in temps:
        write += around(root, no_write, budget)
    return tuple(dict.fromkeys(write)), tuple(read)


def _real(path: str) -> str:
    return os.path.realpath(path)


def _repo(cwd: str) -> tuple[str, str, str] | None:
    from gatesh.worktree import find_repo

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
        if row.path == "$CACHE" and not os.path.lexists(path):
            _make_cache_home(path)
        if os.path.isdir(path):
            caches.append(_real(path))
    devices = [_real(d) for d in DEVICES if os.path.exists(d)]  # a rule never follows a link
    return tuple(dict.fromkeys(temps)), tuple(dict.fromkeys(caches)), tuple(devices)


def _make_cache_home(path: str) -> None:
    """Make the XDG cache folder (0700) where it does not exist yet, as the XDG spec asks of any
    program about to write there: inside its boundary a command cannot make it (the home is not
    writable), so a first ``go build`` or ``pip install`` on a fresh account failed confined and
    ran unconfined. Only the last component is made, never through a link; on failure the cache
    stays out of the boundary, as before."""
    try:
        os.mkdir(path, 0o700)
    except OSError:
        pass


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
        if effect.direction is Direction.READ or effect.cls not in WRITABLE_CLASSES:
            continue
        path = effect.resolved
        if path.startswith("/") and os.path.exists(path):
            out.append(_real(path))
    return out


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


def network_for(decision: Decision, config: BoundaryConfig) -> Network:
    """The network :func:`boundary_for` gives ``decision``'s command (on any kernel: what it
    would be where Landlock has ABI 4 or more)."""
    return _network(decision, config, False)


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
        return Network(False, _UNREAD_CLOSED, True)
    return Network(True, _UNREAD_OPEN, True)


#: What explain and the agent read of the network of code gatesh did not read, under each
#: setting: the setting's name, and what it lets such code do (docs/DESIGN.md S16 has the figures).
_UNREAD_CLOSED: Final = (
    "it runs code gatesh did not read (boundary.network_unread = closed, the default): "
    "what such code reads, it cannot send"
)
_UNREAD_OPEN: Final = (
    "it runs code gatesh did not read (boundary.network_unread = open, set by a person): "
    "such code can send what it reads"
)


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

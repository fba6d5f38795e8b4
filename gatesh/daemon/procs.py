"""Process facts the daemon reads from ``/proc``: ancestry, harness sessions, gated processes.

Guarantees: every function here tolerates processes that vanish while being read (a missing or
unreadable ``/proc`` entry ends the walk), and every walk is bounded by :data:`MAX_DEPTH`.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Final

from gatesh.vocab.programs import shells

# Deeper process trees than this do not occur in practice; the bound guards against a loop
# (pid reuse while walking) and keeps a walk to a few dozen small reads.
MAX_DEPTH: Final = 64

# Process names that are not "the harness" (S9.3): every shell of the shared vocabulary and the
# multi-call binaries that hold one (busybox), besides gatesh itself. ``comm`` is at most 15
# characters; every shell name is shorter.
SHELLS: Final = shells.SHELLS | shells.MULTICALL
GATESH_NAMES: Final = frozenset({"gatesh"})
SESSION_ENV: Final = b"GATESH_SESSION="
# /proc/PID/stat is ~52 numbers and a name of at most 64 bytes: well under this.
STAT_MAX: Final = 4096


@dataclass(frozen=True)
class ProcInfo:
    """One process: its pid, parent, name (``comm``), start time in clock ticks since boot, and
    run state (``/proc/PID/stat`` field 3: ``R``, ``S``, …, ``Z`` for one that exited unreaped).

    ``start`` distinguishes a process from a later one that reused its pid.
    """

    pid: int
    ppid: int
    comm: str
    start: int
    state: str = ""

    @property
    def exited(self) -> bool:
        """It has exited and only waits for its parent to reap it (a zombie)."""
        return self.state == "Z"


def info(pid: int) -> ProcInfo | None:
    """``/proc/PID/stat`` parsed, or None when the process is gone or unreadable."""
    # os.open/os.read, not open(): one read of a ~300-byte file, without a buffered file object
    # (the daemon reads this for every -c client, S14).
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        raw = os.read(fd, STAT_MAX)
    except OSError:
        return None
    finally:
        os.close(fd)
    # comm is in parentheses and may itself contain ") ": split at the last one.
    lpar, rpar = raw.find(b"("), raw.rfind(b")")
    if lpar < 0 or rpar < 0:
        return None
    comm = raw[lpar + 1 : rpar].decode("utf-8", "replace")
    rest = raw[rpar + 2 :].split()
    try:
        return ProcInfo(
            pid=pid,
            ppid=int(rest[1]),
            comm=comm,
            start=int(rest[19]),
            state=rest[0].decode("ascii", "replace"),
        )
    except (IndexError, ValueError):
        return None


def ancestry(pid: int) -> list[ProcInfo]:
    """``pid`` and its ancestors, nearest first, up to (not including) pid 0. Bounded."""
    out: list[ProcInfo] = []
    seen: set[int] = set()
    while pid > 0 and pid not in seen and len(out) < MAX_DEPTH:
        seen.add(pid)
        p = info(pid)
        if p is None:
            break
        out.append(p)
        pid = p.ppid
    return out


def cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read(4096)
    except OSError:
        return []
    return [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]


def is_gatesh(p: ProcInfo) -> bool:
    """True for a gatesh process: its name, or an interpreter running gatesh (``-m gatesh``, a
    launcher's script, or the ``-c`` code of a ``/bin/sh`` launcher, which a bash/zsh/sh link
    starts under the interpreter's own name)."""
    if p.comm in GATESH_NAMES:
        return True
    if not p.comm.startswith("python"):
        return False
    argv = cmdline(p.pid)[:6]
    for i, arg in enumerate(argv):
        if os.path.basename(arg) == "gatesh" or (arg == "-m" and argv[i + 1 : i + 2] == ["gatesh"]):
            return True
        if arg == "-c" and "from gatesh._entry import main" in "".join(argv[i + 1 : i + 2]):
            return True
    return False


def is_shell(p: ProcInfo) -> bool:
    return p.comm.lstrip("-") in SHELLS


def harness_session(peer_pid: int) -> tuple[str, ProcInfo | None]:
    """The session id of a ``-c`` client with no ``GATESH_SESSION`` (S9.3), and its anchor process.

    The anchor is the nearest ancestor of ``peer_pid`` (the client itself excluded) that is not a
    shell or gatesh: the agent harness. The id is ``COMM:PID``. With no such ancestor (all the way
    to init), the session is the client's session id (``sid:N``).
    """
    chain = ancestry(peer_pid)
    for p in chain[1:]:
        if p.pid == 1:
            break
        if is_shell(p) or is_gatesh(p):
            continue
        return f"{p.comm}:{p.pid}", p
    try:
        return f"sid:{os.getsid(peer_pid)}", None
    except OSError:
        return f"pid:{peer_pid}", None


def is_running(pid: int, start: int) -> bool:
    """Whether the process that was ``pid`` started at ``start`` still runs (not gone, not a
    zombie, not a later process that reused the pid)."""
    p = info(pid)
    return p is not None and p.start == start and not p.exited


def environ_session(pid: int) -> str | None:
    """The ``GATESH_SESSION`` value in ``pid``'s initial environment, or None (also when unreadable)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            raw = f.read(1024 * 1024)
    except OSError:
        return None
    for item in raw.split(b"\0"):
        if item.startswith(SESSION_ENV):
            return item[len(SESSION_ENV) :].decode("utf-8", "replace")
    return None


class GatedRegistry:
    """Processes the daemon knows to be gated: ``-c`` clients (which become the command's shell)
    and registered PTY shells. Keyed by (pid, start time), so a reused pid is not mistaken.

    Bounded: past :data:`LIMIT` entries, entries whose process is gone are dropped first.
    """

    LIMIT: Final = 16384

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._gated: dict[tuple[int, int], str] = {}

    def add(self, pid: int, session: str) -> None:
        p = info(pid)
        if p is None:
            return
        with self._lock:
            self._gated[(p.pid, p.start)] = session
            if len(self._gated) > self.LIMIT:
                self.prune()

    def prune(self) -> None:
        """Drop entries whose process is gone (caller may hold the lock; it is re-entrant-safe)."""
        alive = {
            k: v
            for k, v in self._gated.items()
            if (p := info(k[0])) is not None and p.start == k[1]
        }
        if len(alive) > self.LIMIT:  # still too many live ones: keep the newest
            alive = dict(list(alive.items())[-self.LIMIT // 2 :])
        self._gated = alive

    def session_of(self, p: ProcInfo) -> str | None:
        return self._gated.get((p.pid, p.start))

    def __len__(self) -> int:
        return len(self._gated)


def gated_ancestry(pid: int, registry: GatedRegistry | None = None) -> str | None:
    """Why ``pid`` may not use a human-only verb (S9.5), or None when nothing gated is in its ancestry.

    Checks ``pid`` and every ancestor: a ``GATESH_SESSION`` in its environment, or a process the
    daemon registered as gated. An ancestry that cannot be read at all counts as gated (fail closed).
    """
    chain = ancestry(pid)
    if not chain:
        return f"the process ancestry of pid {pid} could not be read"
    for p in chain:
        session = environ_session(p.pid)
        if session is None and registry is not None:
            session = registry.session_of(p)
        if session is not None:
            return (
                f"process {p.pid} ({p.comm}) in its ancestry belongs to the gated session "
                f"{session!r}; human-only verbs must be run by a person outside any gated session"
            )
    return None

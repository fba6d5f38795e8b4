"""The daemon builds a command's Landlock ruleset and hands it to the client that runs it (S14, S16).

Building a domain is one ``open`` and one ``landlock_add_rule`` per place: ~2 us a place in a warm
process, and a boundary whose temporary folder holds a protected place (the runtime folder, or a
home folder in /tmp) walks around every entry of that folder: 1,000 to 2,000 places, 2 to 4 ms.
The daemon, which already drew the boundary, builds the ruleset in its warm process and passes its
file descriptor with the check reply (``SCM_RIGHTS`` on the Unix socket); the client only sets
``no_new_privs``, its seccomp filter and limits, and calls ``landlock_restrict_self`` on it.

The wire form then leaves out the places (``read``, ``write``, ``list``) and says
``"ruleset": "fd"`` with the number of ``rules`` (:meth:`gatesh.boundary._spec.Spec.handing`).
A client that asked for a handed ruleset (``"ruleset_fd": true`` in its check) and reads
``"ruleset": "fd"`` without a descriptor refuses to run the command, as does one whose kernel
offers another Landlock ABI than the one the ruleset was built for
(:func:`gatesh.boundary._kernel.apply`). A daemon that cannot build the ruleset sends the places
as before: the client builds the domain itself (and refuses when that fails too). The kernel
itself refuses a descriptor that is not a Landlock ruleset (EBADFD).

**Built ahead** (:class:`Rulesets`). Consecutive commands of a session are mostly drawn the same
boundary, so after handing one over the daemon builds, off its event loop, a *spare* ruleset for
the same rules, and the next command drawn exactly those rules gets the spare instead of waiting
for a build. A spare is never shared: a client may add rules to the ruleset it was handed
(``landlock_add_rule`` only needs the descriptor), so each descriptor goes to one client and is
forgotten. It is handed only while it is exactly the ruleset a build at that moment would make:

- its key is the whole rule set as computed for this command (the places, the network, the
  scopes, the ABI), so anything that changes what the boundary allows — the protected places
  (a new row, a new install record, a setting), the command's own paths, the working tree, the
  network choice — is another key, and is built afresh;
- a rule holds the file its place named when it was built, so a spare also records, for every
  folder its places lie in, the folder's device, inode and change time (``ctime``, which the
  kernel sets on every entry made, removed or renamed in it, and which no process can set
  back): before the build and after it (both the same, or nothing is kept), and again when it
  is taken. A place's last component is never followed (:func:`gatesh.boundary._kernel._add_paths`),
  so a place is the same file exactly while its folder is the same folder with the same entries.
- a folder changed less than :data:`RACY_NS` before it was recorded (:data:`COARSE_RACY_NS` on a
  file system whose times have whole seconds) keeps no spare: a change within the same tick of
  the file system's clock could leave its ``ctime`` as it was.

Anything else — a folder missing, a place that is not a plain absolute path, an error — keeps
no spare: the command's ruleset is then built for it, as before.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

from gatesh.boundary import _kernel, _spec

__all__ = ["COARSE_RACY_NS", "KEEP", "RACY_NS", "Rulesets", "for_client"]

#: Spares kept at once (one per boundary; a few working trees and sessions at a time).
KEEP: Final = 8
#: A folder changed this recently may change again without its ``ctime`` moving: file times come
#: from the kernel's coarse clock, one tick (1 to 10 ms) behind; 50 ms is five ticks at 100 Hz.
RACY_NS: Final = 50_000_000
#: The same on a file system whose times have whole seconds (ext4 with small inodes, FAT, some
#: network file systems: seen as a ``ctime`` with no nanoseconds), which can be 2 s coarse.
COARSE_RACY_NS: Final = 2_000_000_000

# (folder, (device, inode, ctime)) for every folder the places lie in, in order.
_Stamp = tuple[tuple[str, tuple[int, int, int]], ...]
#: A spare's key: the whole rule set it was built from (a frozen, hashable record).
Rules = _spec.Rules


def for_client(spec: _spec.Spec, rulesets: Rulesets | None = None) -> tuple[_spec.Spec, int]:
    """The spec to send with a handed ruleset (:meth:`gatesh.boundary._spec.Spec.handing`), and
    the ruleset's descriptor (the caller sends it, then closes it); ``(spec, -1)`` when the
    ruleset cannot be built here: the places then travel as before and the client builds it.
    ``rulesets``: take a spare built ahead when there is one for exactly these rules (see the
    module docstring)."""
    got = rulesets.take(spec.rules) if rulesets is not None else None
    if got is None:
        try:
            got = _kernel.ruleset(spec.rules)
        except (_kernel.BoundaryError, KeyError, TypeError, ValueError):
            return spec, -1
    fd, rules = got
    return spec.handing(rules), fd


@dataclass(frozen=True)
class _Spare:
    fd: int
    rules: int
    stamp: _Stamp


class Rulesets:
    """The daemon's spare rulesets, one per boundary, each handed at most once (see the module
    docstring). Thread-safe: :meth:`take` runs on the event loop, :meth:`refill` in a worker."""

    def __init__(self, keep: int = KEEP) -> None:
        self._keep = keep
        self._lock = threading.Lock()
        self._spares: OrderedDict[Rules, _Spare] = OrderedDict()
        self._building: set[Rules] = set()
        self._closed = False
        #: What happened to the spares so far (for benchmarks and tests): taken, built, kept
        #: from being built or handed (a change, a racy folder), and dropped unused.
        self.taken = self.built = self.stale = self.racy = self.dropped = 0

    def take(self, key: Rules) -> tuple[int, int] | None:
        """The spare for exactly these rules, as (descriptor, rules), now the caller's; None
        when there is none or it is no longer what a build would make (then it is closed)."""
        with self._lock:
            spare = self._spares.pop(key, None)
        if spare is None:
            return None
        if _restamp(spare.stamp) != spare.stamp:
            os.close(spare.fd)
            with self._lock:
                self.stale += 1
            return None
        with self._lock:
            self.taken += 1
        return spare.fd, spare.rules

    def refill(self, key: Rules) -> None:
        """Build a spare for these rules unless one is kept or being built. Never raises:
        a spare that cannot be built, or whose folders moved while it was, is not kept."""
        with self._lock:
            if self._closed or key in self._spares or key in self._building:
                return
            self._building.add(key)
        fd = -1
        try:
            before = _stamp(key, time.time_ns())
            if before is None:  # once more when the racy window has passed (a worker waits)
                time.sleep(RACY_NS / 1e9)
                before = _stamp(key, time.time_ns())
            if before is None:
                with self._lock:
                    self.racy += 1
                return
            fd, rules = _kernel.ruleset(key)
            if _restamp(before) != before:
                with self._lock:
                    self.stale += 1
                return
            with self._lock:
                if not self._closed:  # closed meanwhile: the finally closes it
                    self._spares[key] = _Spare(fd, rules, before)
                    fd = -1
                    self.built += 1
                while len(self._spares) > self._keep:
                    _, old = self._spares.popitem(last=False)
                    os.close(old.fd)
                    self.dropped += 1
        except Exception:
            return
        finally:
            if fd >= 0:
                os.close(fd)
            with self._lock:
                self._building.discard(key)

    def close(self) -> None:
        """Close every spare; none is built or kept afterwards."""
        with self._lock:
            self._closed = True
            spares = list(self._spares.values())
            self._spares.clear()
        for spare in spares:
            os.close(spare.fd)


def _folders(rules: Rules) -> list[str]:
    """The folders the places of ``rules`` lie in, each once, in order."""
    out: dict[str, None] = {}
    for places in (rules.read, rules.write, rules.list):
        for place in places:
            out[place.rpartition("/")[0] or "/"] = None
    return list(out)


def _stamp(rules: Rules, now_ns: int) -> _Stamp | None:
    """The stamp of the folders of ``rules`` as they are now; None when one is missing or changed too
    recently to be told apart from a change to come (:data:`RACY_NS`)."""
    out: list[tuple[str, tuple[int, int, int]]] = []
    for folder in _folders(rules):
        try:
            st = os.stat(folder)
        except OSError:
            return None
        ctime = st.st_ctime_ns
        racy = COARSE_RACY_NS if ctime % 1_000_000_000 == 0 else RACY_NS
        if ctime > now_ns - racy:
            return None
        out.append((folder, (st.st_dev, st.st_ino, ctime)))
    return tuple(out)


def _restamp(stamp: _Stamp) -> _Stamp | None:
    """``stamp``'s folders as they are now (None when one is gone)."""
    out: list[tuple[str, tuple[int, int, int]]] = []
    for folder, _ in stamp:
        try:
            st = os.stat(folder)
        except OSError:
            return None
        out.append((folder, (st.st_dev, st.st_ino, st.st_ctime_ns)))
    return tuple(out)

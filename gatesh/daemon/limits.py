"""Connection limits that cannot starve checks (S9, S15; issue 21).

1,100 connections that said hello and then nothing once switched the gate to refuse-everything
("too many connections") for as long as they stayed open. The rules here:

- **Idle connections time out.** A connection that has not said hello within
  :data:`HELLO_TIMEOUT_S`, or that has sent nothing for :data:`IDLE_S` while no request of its is
  being answered, is closed. A subscribed watcher is exempt (it listens by design).
- **A check always gets through.** When the daemon is full, a new connection takes the slot of the
  longest-idle connection rather than being refused, so only connections busy with a request
  (bounded by the work they cause) or subscribed watchers hold slots for good.
- **Per-role limits.** Watch, human and admin connections each have a cap far above real use;
  past it that role is refused (checks have none but the total).
- **A flood is logged once**, when the daemon first fills, not per connection; and again only
  after it has drained below half.
"""

from __future__ import annotations

import resource
import sys
from collections.abc import Iterable
from typing import Final, Protocol, TypeVar

__all__ = [
    "HELLO_TIMEOUT_S",
    "IDLE_S",
    "MAX_CONNECTIONS",
    "ROLE_CAPS",
    "Flood",
    "pick_evictee",
    "raise_fd_limit",
    "role_full",
]

# Far above what one user's agents open at once (32 sessions x a few connections); each idle
# connection costs a file descriptor and a few KiB.
MAX_CONNECTIONS: Final = 4096
# The client sends its hello and request in one write: a second is generous; 5 s covers a paused
# process.
HELLO_TIMEOUT_S: Final = 5.0
# Between requests on one connection (a PTY or watch client asks again within milliseconds).
IDLE_S: Final = 10.0
# Per role (checks are bounded only by MAX_CONNECTIONS): a person runs a handful of these.
ROLE_CAPS: Final = {"watch": 64, "human": 64, "admin": 32}


class Slot(Protocol):
    """What the limits read of a connection."""

    role: str
    busy: int
    since: float
    closed: bool

    @property
    def is_watcher(self) -> bool: ...


S = TypeVar("S", bound=Slot)


def pick_evictee(conns: Iterable[S]) -> S | None:
    """The connection to close for a newcomer when full: the longest idle one that is neither
    answering a request nor a subscribed watcher; None when every slot is in use."""
    best: S | None = None
    for c in conns:
        if c.closed or c.busy or c.is_watcher:
            continue
        if best is None or c.since < best.since:
            best = c
    return best


def role_full(conns: Iterable[Slot], role: str) -> bool:
    """Whether another connection of ``role`` would pass its cap."""
    cap = ROLE_CAPS.get(role)
    return cap is not None and sum(1 for c in conns if c.role == role and not c.closed) >= cap


class Flood:
    """Says once, on stderr (the daemon's log), that the daemon is full; again only after it
    drained below half of MAX_CONNECTIONS."""

    def __init__(self) -> None:
        self.active = False
        self.evicted = 0

    def full(self, count: int) -> None:
        self.evicted += 1
        if not self.active:
            self.active = True
            print(
                f"gatesh daemon: {count} connections open (the limit is {MAX_CONNECTIONS}); closing "
                "the longest-idle ones for new clients (said once per flood)",
                file=sys.stderr,
                flush=True,
            )

    def settle(self, count: int) -> None:
        if self.active and count < MAX_CONNECTIONS // 2:
            print(
                f"gatesh daemon: connection flood over ({self.evicted} idle connections closed)",
                file=sys.stderr,
                flush=True,
            )
            self.active = False
            self.evicted = 0


def raise_fd_limit() -> int:
    """Raise the soft open-files limit so MAX_CONNECTIONS fit (bounded by the hard limit); the
    limit in force. A default soft limit of 1,024 would make accept fail before any rule here."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = MAX_CONNECTIONS + 256  # log, audit, state, lock, socket, worker threads' files
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            return want
        except (ValueError, OSError):
            return soft
    return soft

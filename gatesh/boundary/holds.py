"""Which protections of the boundary hold on this machine (S16): for ``gatesh doctor``, the first
notice of a session, ``gatesh explain`` and the tests that need a kernel feature.

One table, :data:`PROTECTIONS`: each row names a protection and the Landlock ABI it needs. What
the kernel offers is asked once (:func:`gatesh.boundary._kernel.abi`); the person's kill switch
(``boundary.enabled = false``) turns every row off. A second, :data:`OPENINGS`: what stays
reachable inside every boundary gatesh draws, whatever the kernel, said wherever the protections
are listed so nobody takes the boundary for more than it is.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Final

from gatesh.boundary import _kernel

__all__ = ["OPENINGS", "PROTECTIONS", "Opening", "Protection", "State", "denials", "needs", "state"]


@dataclass(frozen=True)
class Protection:
    """One protection: ``abi`` is the least Landlock ABI it needs (0: none, only Linux)."""

    id: str
    what: str
    abi: int
    seccomp: bool = False  # needs the boundary's seccomp filter (x86-64 and arm64 only)


PROTECTIONS: Final[tuple[Protection, ...]] = (
    Protection(
        "writes",
        "writes only to the working tree, temporary folders, build caches and what the decision "
        "allowed; gatesh's own files, the harness settings, shell startup files and other "
        "persistence places, the git hooks path and the credential stores are never written",
        1,
    ),
    Protection("reads", "the credential stores cannot be read", 1),
    Protection("ptrace", "nothing inside can trace a process outside (the daemon, the harness)", 1),
    Protection(
        "prlimit",
        "nothing inside can change the resource limits of a process outside (the daemon)",
        1,
        seccomp=True,
    ),
    Protection(
        "tiocsti",
        "nothing inside can push keystrokes into the terminal for a shell outside to run",
        1,
        seccomp=True,
    ),
    Protection("no-new-privs", "a setuid or setcap program cannot leave the boundary", 1),
    Protection("limits", "processes, memory, file size and CPU time are bounded", 1),
    Protection("refer", "files can be renamed and linked across folders inside the boundary", 2),
    Protection("truncate", "truncating a file outside the boundary is refused", 3),
    Protection("network", "the network is closed to a command that does not need it (TCP)", 4),
    Protection(
        "datagrams",
        "a closed network is closed to UDP (so DNS names), raw and packet sockets too",
        1,
        seccomp=True,
    ),
    Protection(
        "signals",
        "nothing inside can signal a process outside (the daemon, a watcher, the harness)",
        6,
    ),
    Protection(
        "abstract-sockets",
        "nothing inside can connect to an abstract Unix socket made outside (the person's channel)",
        6,
    ),
)
_BY_ID: Final = {p.id: p for p in PROTECTIONS}


@dataclass(frozen=True)
class Opening:
    """A way out no boundary of gatesh closes: ``what`` a confined command can still do, ``why``
    no rule of gatesh's stops it (the kernel mechanism that would, if any)."""

    id: str
    what: str
    why: str


#: The Landlock ABI whose ``LANDLOCK_ACCESS_FS_RESOLVE_UNIX`` governs connecting to a pathname
#: Unix socket by its path (Linux 7.1); gatesh does not handle that right yet.
RESOLVE_UNIX_ABI: Final = 9

OPENINGS: Final[tuple[Opening, ...]] = (
    Opening(
        "pathname-sockets",
        "a confined command still connects to a Unix socket that has a path, its network closed "
        "or not: a host's resolver there (systemd-resolved, nscd) looks a name up for it, so a "
        "name can carry data out, and D-Bus, an ssh-agent or a container engine's socket answer it",
        "Landlock governs connecting to a pathname socket only from ABI "
        f"{RESOLVE_UNIX_ABI} (LANDLOCK_ACCESS_FS_RESOLVE_UNIX, Linux 7.1), which gatesh does not "
        "use yet, and a seccomp filter cannot read the path",
    ),
)


@functools.cache
def _has_filter(machine: str) -> bool:
    """Whether the boundary has a seccomp filter for ``machine``: asked at every check and every
    status line, and assembling one costs tens of microseconds, so once per machine."""
    return _kernel.seccomp_program(machine) is not None


@dataclass(frozen=True)
class State:
    """What holds here: the ABI, whether the person switched the boundary off, and each row."""

    abi: int
    enabled: bool
    platform: str
    machine: str = ""

    def holds(self, protection_id: str) -> bool:
        p = _BY_ID[protection_id]
        if p.seccomp and not _has_filter(self.machine):
            return False
        return self.enabled and self.abi >= p.abi

    @property
    def why_none(self) -> str:
        """Why no protection holds ("" when some do)."""
        if not self.enabled:
            return "the boundary is switched off (boundary.enabled = false in your config)"
        if not self.platform.startswith("linux"):
            return f"Landlock is Linux's; this is {self.platform}"
        if self.abi < 1:
            return "this kernel offers no Landlock (Linux 5.13 or newer, with landlock in the LSM list)"
        return ""

    def missing(self) -> list[Protection]:
        """The protections that do not hold here (every one without a boundary)."""
        return [p for p in PROTECTIONS if not self.holds(p.id)]

    def lines(self) -> list[str]:
        """One line per protection: ``holds`` or ``does not hold (needs ABI N)``."""
        if self.why_none:
            return [f"no boundary: {self.why_none}; commands run with all of your user's rights"]
        out = [f"Landlock ABI {self.abi}"]
        for p in PROTECTIONS:
            need = f"ABI {p.abi}" + (", x86-64 or arm64" if p.seccomp else "")
            mark = "holds" if self.holds(p.id) else f"does not hold (needs {need})"
            out.append(f"{p.id:<17} {mark}: {p.what}")
        for o in OPENINGS:
            out.append(f"{o.id:<17} does not hold: {o.what} ({o.why})")
        return out

    def summary(self) -> str:
        """One line for a session's first notice."""
        if self.why_none:
            return f"gatesh: commands run without a boundary: {self.why_none}."
        missing = [p.id for p in PROTECTIONS if not self.holds(p.id)]
        text = f"gatesh: commands run inside a kernel boundary (Landlock ABI {self.abi})"
        if missing:
            text += "; these do not hold on this kernel: " + ", ".join(missing)
        else:
            text += "; every protection holds"
        return text + "; open inside it: " + ", ".join(o.id for o in OPENINGS) + "."


def state(enabled: bool = True) -> State:
    """What holds on this machine, with the person's kill switch ``enabled``."""
    import os

    return State(_kernel.abi(), enabled, sys.platform, os.uname().machine)


def needs(protection_id: str) -> str:
    """Why a test that needs ``protection_id`` must skip here ("" when it holds), naming it."""
    s = state()
    if s.holds(protection_id):
        return ""
    p = _BY_ID[protection_id]
    return f"needs Landlock ABI {p.abi} for '{p.id}' ({p.what}); this kernel offers ABI {s.abi}"


#: The Landlock ABI that first reports what a domain denied (Linux 6.15), through the audit log.
DENIALS_ABI: Final = 7
# The kernel's audit netlink protocol, and its request for the audit status (linux/audit.h).
_NETLINK_AUDIT = 9
_AUDIT_GET = 1000


def denials(level: int | None = None) -> str:
    """Why gatesh cannot tell the agent what the kernel denied a command, as this machine says.

    Landlock reports a denial (from ABI 7) only as a record of the kernel's audit subsystem
    (``AUDIT_LANDLOCK_ACCESS``: the domain, the right refused and the path), written only while
    audit is switched on, and read only through the audit netlink socket by a process with
    ``CAP_AUDIT_READ`` (or the audit daemon, ``CAP_AUDIT_CONTROL``) or from the kernel log
    (``dmesg_restrict``). The daemon runs as the person's user with none of these; switching the
    audit subsystem on is the machine's administrator's choice, not gatesh's. So the agent is
    told which boundary its command ran in, never a denial gatesh did not see. Asked of the
    kernel: its ABI, then the audit status (refused to an unprivileged process)."""
    level = _kernel.abi() if level is None else level
    if level < 1:
        return "this kernel offers no Landlock"
    if level < DENIALS_ABI:
        return (
            f"this kernel's Landlock (ABI {level}) reports no denial "
            f"(ABI {DENIALS_ABI}, Linux 6.15, logs them to the kernel's audit log)"
        )
    enabled = _audit_enabled()
    if enabled is None:
        return (
            "the kernel logs what a boundary denies to its audit log, which only a process "
            "with CAP_AUDIT_READ may read; gatesh runs as your user"
        )
    if not enabled:
        return (
            "the kernel logs what a boundary denies to its audit log only while audit is "
            "switched on, and it is off here (no audit daemon)"
        )
    return (
        "the kernel logs what a boundary denies to its audit log, which gatesh does not read: "
        "its daemon runs as your user, without CAP_AUDIT_READ"
    )


def _audit_enabled() -> bool | None:
    """Whether the kernel's audit subsystem is switched on; None when this process may not ask
    (no CAP_AUDIT_CONTROL: the kernel refuses the request) or cannot."""
    import socket
    import struct

    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, _NETLINK_AUDIT) as s:
            s.settimeout(1.0)
            s.send(struct.pack("=IHHII", 16, _AUDIT_GET, 1, 1, 0))  # NLM_F_REQUEST
            data = s.recv(4096)
    except (OSError, AttributeError):
        return None
    if len(data) < 24 or struct.unpack_from("=H", data, 4)[0] == 2:  # NLMSG_ERROR
        return None
    enabled: int = struct.unpack_from("=I", data, 20)[0]  # struct audit_status: mask, enabled
    return enabled != 0

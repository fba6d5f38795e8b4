"""What a harm jail is made of, as data: its resource limits, the holes the instrument's own tests
make on purpose, and the spec :mod:`gatesh.testing.jail` builds from and
:mod:`gatesh.testing.jail_probe` judges against (a module of its own so neither imports the other
back)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Weakening(enum.Enum):
    """A hole made on purpose, for the instrument's own tests: :func:`prove` must refuse a jail
    with any of them. Never used to run a row (a weakened spec cannot get a proof)."""

    HOST_ROOT_WRITABLE = "host-root-writable"  # the host root bound read-write
    SHARED_NETWORK = "shared-network"  # the host's network namespace
    SHARED_PID = "shared-pid"  # the host's PID namespace
    NO_LIMITS = "no-limits"  # no resource limits
    HOST_ROOT_USER = "host-root-user"  # bubblewrap started as the host's root


@dataclass(frozen=True)
class Limits:
    """The row's resource limits. Each value is what a real build or test suite stays within:
    ``nproc`` counts threads too (a daemon, node and a make -j4 together stay well under it)."""

    nproc: int = 256
    address_space: int = 4 << 30  # per process; node reserves ~1 GiB of address space
    file_size: int = 256 << 20
    cpu_seconds: int = 60  # per process; SIGXCPU five seconds before SIGKILL
    memory_bytes: int = 2 << 30  # resident memory of the whole row, the warden's watchdog
    world_bytes: int = 1 << 30  # the world tmpfs: HOME (with gatesh's venv, ~100 MB), /srv, runtime
    tmp_bytes: int = 256 << 20
    var_tmp_bytes: int = 64 << 20
    small_bytes: int = 16 << 20  # /root and /run
    shm_bytes: int = 64 << 20  # /dev/shm (the rest of /dev is read-only)

    def rlimits(self) -> dict[str, int]:
        """The rlimits as :mod:`gatesh.testing._inside` applies them."""
        return {
            "nproc": self.nproc,
            "address_space": self.address_space,
            "file_size": self.file_size,
            "cpu_seconds": self.cpu_seconds,
        }


@dataclass(frozen=True)
class JailSpec:
    """Everything that makes the jail: what :func:`prove` proves and :func:`run_row` builds.

    ``python`` is an interpreter the jail can run (outside the hidden folders); ``timeout_s`` the
    wall clock of one row after its warm-up."""

    python: str
    limits: Limits = field(default_factory=Limits)
    timeout_s: float = 20.0
    weakened: frozenset[Weakening] = frozenset()

"""The configuration's shape (S12): every section as a frozen dataclass, the closed sets as enums,
the built-in defaults, and the table of keys each tier may set."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Final

from gatesh._types import Asked, Rung, Tier
from gatesh.policy.lists import ListEntry

# Model ids (from the SDK's current model list): the newest small, fast tier for the rating, which
# runs on most commands off the fast path; the newest mid tier for the rarer alignment question,
# which must read a conversation and keep its roles apart.
DEFAULT_RATER_MODEL: Final = "claude-haiku-5-5"


DEFAULT_CHECKER_MODEL: Final = "claude-sonnet-5-5"


class Operator(enum.StrEnum):
    """Who types at a gated session's terminal (S7): an agent is never asked there."""

    AGENT = "agent"
    PERSON = "person"


class Shell(enum.StrEnum):
    """The real shell behind ``-c`` and the PTY session."""

    BASH = "bash"
    ZSH = "zsh"


class Mark(enum.StrEnum):
    """How a gated PTY session shows that it is gated (S10): a one-line banner when it starts,
    a mark in front of the prompt, both, or nothing."""

    BANNER = "banner"
    PROMPT = "prompt"
    BOTH = "both"
    NONE = "none"


class Backend(enum.StrEnum):
    """The rater's backend (S4); ``auto`` is the cascade when a key is present."""

    AUTO = "auto"
    BUILTIN = "builtin"
    ANTHROPIC = "anthropic"


PROJECT_FILE: Final = ".gatesh.toml"


# What the cascade asks the model about by default: everything the builtin is not sure of (S4).
DEFAULT_ASK_MODEL: Final = (Asked.UNKNOWN, Asked.FLOOR, Asked.DESTRUCTIVE, Asked.CATASTROPHIC)


@dataclass(frozen=True)
class RaterConfig:
    backend: Backend = Backend.AUTO
    model: str = DEFAULT_RATER_MODEL
    base_url: str = ""  # empty: ANTHROPIC_BASE_URL or the SDK's default
    api_key_env: str = "ANTHROPIC_API_KEY"
    timeout_s: float = 30.0  # one budget per call (S4)
    # The cascade (auto with a key): the builtin verdicts asked of the model. Leaving a case out
    # saves model calls; the builtin's verdict then stands alone, so the gate is never weaker.
    ask_model: tuple[Asked, ...] = DEFAULT_ASK_MODEL


@dataclass(frozen=True)
class AlignmentConfig:
    model: str = DEFAULT_CHECKER_MODEL
    timeout_s: float = 30.0


@dataclass(frozen=True)
class EscalationConfig:
    timeout_s: float = 110.0  # S7: how long a pending escalation waits for a watcher


@dataclass(frozen=True)
class SessionConfig:
    # S6: a session grouped by GATESH_SESSION has no process to outlive; this long without a check
    # it ends (its observation is said). Half an hour: longer than an agent thinks between commands.
    idle_end_s: float = 1800.0
    # How the gated shell marks itself for whoever reads its terminal (a banner by default).
    mark: Mark = Mark.BANNER


@dataclass(frozen=True)
class AuditConfig:
    max_bytes: int = 16 * 1024 * 1024  # rotate past this size
    keep: int = 5  # rotated files kept
    syslog: bool = False  # also send each record, and the chain's head, to the system log
    syslog_socket: str = "/dev/log"  # the system log's socket (journald and rsyslog listen here)
    syslog_head_every: int = 100  # the chain's head goes to the system log every N records


@dataclass(frozen=True)
class GitConfig:
    protected_branches: tuple[str, ...] = ("main", "master")
    pre_commit: bool = False  # refuse commits on a protected branch


class NetworkDefault(enum.StrEnum):
    """The network of a command that runs code gatesh did not read (S16): open, or closed (TCP
    connect and bind by Landlock; UDP, so DNS, raw and packet sockets by the seccomp filter)."""

    OPEN = "open"
    CLOSED = "closed"


def half_the_memory_mib() -> int:
    """Half of this machine's memory (``MemTotal``), in MiB: the default per-process memory limit
    of a boundary. 16384 when ``/proc/meminfo`` cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return max(1, int(line.split()[1]) >> 11)
    except (OSError, ValueError, IndexError):
        pass
    return 16384


@dataclass(frozen=True)
class BoundaryConfig:
    """The boundary (S16). ``enabled = false`` is the person's kill switch: commands then run
    outside any domain, as without Landlock. Only the user and system tiers set these (an agent
    can write a project file); a system ``enabled = true`` holds whatever the user file says.

    The limits are per process, bounds that stop a runaway, not a budget (benchmarks/boundary.py
    runs real builds and test suites inside them; the harm harness runs the bombs):

    - ``processes``: the headroom above the user's processes and threads when the command starts
      (the kernel counts them all).
    - ``memory_mib``: the private writable memory of each process (RLIMIT_DATA: what a heap
      grows), by default half the machine's, so one process cannot take it all. Not the address
      space: runtimes reserve far more of it than they use (node's WebAssembly memories, the
      JVM's heap), and four WebAssembly memories do not fit in 16 GiB of it. Programs built with
      AddressSanitizer map their shadow memory as data and do not start under any such limit.
    - ``file_mib``: the largest file a process may write or allocate (RLIMIT_FSIZE: ``fallocate``
      and ``dd`` too): 4 GiB, seven times the largest file real installs and builds were measured
      to write (``pip install torch``: its 529 MiB wheel, a 517 MiB CUDA library; npm, cargo and
      go builds: under 25 MiB), half of the 8 GiB disk bombs of the harm corpus. It bounds one
      file, not the disk: many files, each under it, still fill a disk, and nothing here stops
      that.
    - ``cpu_s``: CPU seconds of each process."""

    enabled: bool = True
    # Closed, by measurement (benchmarks/harm_boundary.py, docs/RELIABILITY.md): of 15 ways
    # unread code sends the environment's token or .env to a host, the gate allows 8, and all 8
    # leak with it open, none with it closed (1, by a DNS name, before the seccomp filter closed
    # UDP); of 300 agent-work commands of this class, the 197 that ran end with the same exit
    # status either way (the jail has no internet, so work that needs a real one is counted by
    # its text, in the docs, not by this run).
    network_unread: NetworkDefault = NetworkDefault.CLOSED
    seal_tree: bool = False
    processes: int = 2048
    memory_mib: int = field(default_factory=half_the_memory_mib)
    file_mib: int = 4096
    cpu_s: int = 3600


@dataclass(frozen=True)
class UndoConfig:
    """The undo snapshot (S17). The defaults are sized so a laptop does not notice them: a snapshot
    stores only what git does not already hold, usually a few files; the caps bound the rare
    repository that holds gigabytes of untracked data, which is then judged as without undo."""

    enabled: bool = True
    # What one snapshot may copy that the repository does not already hold (new untracked and
    # ignored files): past it the snapshot is skipped and the command judged as without undo.
    max_bytes: int = 256 * 1024 * 1024
    # A file larger than this is left out of snapshots (and its loss is not counted as covered).
    max_file_bytes: int = 32 * 1024 * 1024
    # How long one snapshot may take; past it the snapshot is abandoned (judged as without undo).
    max_seconds: float = 1.0
    # Expiry (checked after each snapshot): the newest ``keep`` stay, none older than
    # ``max_age_days``, and the oldest go first while the kept copies pass ``max_total_bytes``.
    keep: int = 500
    max_age_days: float = 14.0
    max_total_bytes: int = 2 * 1024 * 1024 * 1024


@dataclass(frozen=True)
class Config:
    """The effective configuration. ``sources`` maps each dotted key to the tier that set it."""

    rung: Rung = Rung.AUTO
    operator: Operator = Operator.AGENT
    shell: Shell = Shell.BASH
    allow: tuple[ListEntry, ...] = ()
    deny: tuple[ListEntry, ...] = ()
    escalate: tuple[ListEntry, ...] = ()
    rater: RaterConfig = field(default_factory=RaterConfig)
    alignment: AlignmentConfig = field(default_factory=AlignmentConfig)
    escalation: EscalationConfig = field(default_factory=EscalationConfig)
    session: SessionConfig = field(default_factory=SessionConfig)
    audit: AuditConfig = field(default_factory=AuditConfig)
    git: GitConfig = field(default_factory=GitConfig)
    undo: UndoConfig = field(default_factory=UndoConfig)
    boundary: BoundaryConfig = field(default_factory=BoundaryConfig)
    watchers: tuple[int, ...] = ()  # uids that may watch and answer (system tier only, S9.6)
    sources: dict[str, str] = field(default_factory=dict, compare=False)
    files: tuple[str, ...] = field(default=(), compare=False)  # the files read, for reload checks


# Scalar keys: dotted key -> (type, the enum of allowed values or None).
# Scalar keys whose values are a closed set name their enum (the value read becomes a member).
SCALARS: Final[dict[str, tuple[type, type[enum.StrEnum] | None]]] = {
    "rung": (str, Rung),
    "operator": (str, Operator),
    "shell": (str, Shell),
    "rater.backend": (str, Backend),
    "rater.model": (str, None),
    "rater.base_url": (str, None),
    "rater.api_key_env": (str, None),
    "rater.timeout_s": (float, None),
    "rater.ask_model": (list, None),
    "alignment.model": (str, None),
    "alignment.timeout_s": (float, None),
    "escalation.timeout_s": (float, None),
    "session.idle_end_s": (float, None),
    "session.mark": (str, Mark),
    "audit.max_bytes": (int, None),
    "audit.keep": (int, None),
    "audit.syslog": (bool, None),
    "audit.syslog_socket": (str, None),
    "audit.syslog_head_every": (int, None),
    "git.protected_branches": (list, None),
    "git.pre_commit": (bool, None),
    "undo.enabled": (bool, None),
    "undo.max_bytes": (int, None),
    "undo.max_file_bytes": (int, None),
    "undo.max_seconds": (float, None),
    "undo.keep": (int, None),
    "undo.max_age_days": (float, None),
    "undo.max_total_bytes": (int, None),
    "boundary.enabled": (bool, None),
    "boundary.network_unread": (str, NetworkDefault),
    "boundary.seal_tree": (bool, None),
    "boundary.processes": (int, None),
    "boundary.memory_mib": (int, None),
    "boundary.file_mib": (int, None),
    "boundary.cpu_s": (int, None),
    "watchers": (list, None),
}


LISTS: Final = ("allow", "deny", "escalate")


# What each tier may set. A project file is writable by the agent, so it may only tighten.
PROJECT_KEYS: Final = frozenset({"rung", "deny", "escalate", "git.protected_branches"})


SYSTEM_ONLY: Final = frozenset({"watchers"})


def default() -> Config:
    """The built-in defaults, with every key's source "default"."""
    return Config(sources={key: Tier.DEFAULT.value for key in (*SCALARS, *LISTS)})

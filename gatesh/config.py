"""Configuration (S12): TOML tiers, later overriding earlier, with a tightening rule.

Tiers: built-in defaults, the system file (``/etc/gatesh/config.toml``), the user file (platform
config folder), a project's ``.gatesh.toml`` (nearest one at or above the working directory).
The system and project tiers can only tighten: they add deny/escalate entries and cap the rung;
only the user tier can allow. A project file may set nothing else, because an agent can write one.
An invalid file raises :class:`ConfigError` naming file, line and key — never a silent default.
"""

from __future__ import annotations

import argparse
import enum
import json
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Final

from gatesh import _paths
from gatesh._errors import ConfigError
from gatesh._types import RUNG_DESCRIPTIONS, Asked, Rung, Tier
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
    """The network of a command that runs code gatesh did not read (S16)."""

    OPEN = "open"
    CLOSED = "closed"


@dataclass(frozen=True)
class BoundaryConfig:
    """The boundary (S16). ``enabled = false`` is the person's kill switch: commands then run
    outside any domain, as without Landlock. Only the user and system tiers set these (an agent
    can write a project file); a system ``enabled = true`` holds whatever the user file says.

    The limits are per process: ``processes`` is the headroom above the user's processes and
    threads when the command starts (the kernel counts them all), ``memory_mib`` its address
    space, ``file_mib`` the largest file it may write, ``cpu_s`` its CPU time: generous bounds
    that stop a runaway, not a budget (benchmarks/boundary.py measures real work against them)."""

    enabled: bool = True
    network_unread: NetworkDefault = NetworkDefault.OPEN
    seal_tree: bool = False
    processes: int = 2048
    memory_mib: int = 16384
    file_mib: int = 16384
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
_SCALARS: Final[dict[str, tuple[type, type[enum.StrEnum] | None]]] = {
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
_LISTS: Final = ("allow", "deny", "escalate")
# What each tier may set. A project file is writable by the agent, so it may only tighten.
_PROJECT_KEYS: Final = frozenset({"rung", "deny", "escalate", "git.protected_branches"})
_SYSTEM_ONLY: Final = frozenset({"watchers"})


def default() -> Config:
    """The built-in defaults, with every key's source "default"."""
    return Config(sources={key: Tier.DEFAULT.value for key in (*_SCALARS, *_LISTS)})


def load_config(cwd: str | None = None, *, paths: _paths.GatePaths | None = None) -> Config:
    """The effective config for ``cwd``. Raises ConfigError for an invalid file."""
    paths = paths or _paths.current()
    config = default()
    tiers: list[tuple[Tier, str]] = [
        (Tier.SYSTEM, paths.system_config),
        (Tier.USER, paths.user_config),
    ]
    project = find_project_file(cwd or os.getcwd())
    if project:
        tiers.append((Tier.PROJECT, project))
    read: list[str] = []
    for tier, path in tiers:
        if not os.path.exists(path):
            continue
        read.append(path)
        config = _apply(config, tier, path, _load_file(path))
    return replace(config, files=tuple(read))


def find_project_file(cwd: str) -> str | None:
    """The nearest ``.gatesh.toml`` at or above ``cwd``, or None."""
    here = os.path.abspath(cwd)
    while True:
        candidate = os.path.join(here, PROJECT_FILE)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _load_file(path: str) -> tuple[dict[str, Any], str]:
    try:
        with open(path, "rb") as f:
            raw = f.read()
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            path, "(file)", f"not valid UTF-8 ({exc.reason} at byte {exc.start})"
        ) from exc
    except OSError as exc:
        raise ConfigError(path, "(file)", f"cannot read: {exc.strerror}") from exc
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        raise ConfigError(
            path, "(syntax)", str(exc), int(match.group(1)) if match else None
        ) from exc


def _line_of(text: str, key: str, nth: int = 0) -> int | None:
    """Best-effort line number of ``key`` (last dotted part) or of the nth ``[[key]]`` table."""
    leaf = key.split(".")[-1].split("[")[0]
    if key in _LISTS or key.split("[")[0] in _LISTS:
        header = re.compile(rf"^\s*\[\[\s*{re.escape(key.split('[')[0])}\s*\]\]")
        hits = [i for i, line in enumerate(text.splitlines(), 1) if header.match(line)]
        return hits[nth] if nth < len(hits) else (hits[0] if hits else None)
    pattern = re.compile(rf"^\s*{re.escape(leaf)}\s*=")
    for i, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return i
    return None


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, dotted + "."))
        else:
            out[dotted] = value
    return out


def _apply(config: Config, tier: Tier, path: str, loaded: tuple[dict[str, Any], str]) -> Config:
    data, text = loaded

    def fail(key: str, problem: str, nth: int = 0) -> ConfigError:
        return ConfigError(path, key, problem, _line_of(text, key, nth))

    lists = {kind: data.pop(kind, None) for kind in _LISTS}
    sources = dict(config.sources)
    updates: dict[str, Any] = {}
    for key, value in _flatten(data).items():
        if key not in _SCALARS:
            raise fail(key, f"unknown key (known: {', '.join(sorted((*_SCALARS, *_LISTS)))})")
        if tier is Tier.PROJECT and key not in _PROJECT_KEYS:
            raise fail(
                key,
                "a project file can only cap the rung and add deny/escalate entries "
                "or protected branches; set this in your user config",
            )
        if key in _SYSTEM_ONLY and tier is not Tier.SYSTEM:
            raise fail(key, "only the system config can name watchers")
        expected, allowed = _SCALARS[key]
        value = _check_type(key, value, expected, allowed, fail)
        if key == "rater.ask_model":
            value = _ask_model(key, value, fail)
        if key == "rung":
            value, capped = _rung_under_cap(config, tier, Rung(value))
            updates[key] = value
            if not capped:
                sources[key] = f"{tier} ({path})"
            continue
        if isinstance(value, int) and not isinstance(value, bool) and value <= 0:
            raise fail(key, "must be positive")
        if (
            key == "boundary.enabled"
            and value is False
            and config.boundary.enabled
            and config.sources.get(key, "").startswith(Tier.SYSTEM)
        ):
            continue  # the system tier keeps the boundary on: a user file cannot lift it
        if key == "git.protected_branches" and tier is Tier.PROJECT:
            value = tuple(dict.fromkeys((*config.git.protected_branches, *value)))
        updates[key] = value
        sources[key] = f"{tier} ({path})"
    for kind, raw in lists.items():
        if raw is None:
            continue
        if kind == "allow" and tier is not Tier.USER:
            raise fail(
                "allow",
                f"only the user config can allow; a {tier} file may add deny or escalate entries",
            )
        if not isinstance(raw, list):
            raise fail(kind, f"must be an array of tables ([[{kind}]])")
        entries = []
        for n, item in enumerate(raw):
            entries.append(_entry(kind, n, item, tier, fail))
        updates[kind] = (*getattr(config, kind), *entries)
        sources[kind] = (
            f"{tier} ({path})"
            if sources.get(kind) == Tier.DEFAULT
            else f"{sources[kind]} + {tier} ({path})"
        )
    return _build(config, updates, sources)


def _rung_under_cap(config: Config, tier: Tier, wanted: Rung) -> tuple[Rung, bool]:
    """The rung in force after ``tier`` asks for ``wanted``, and whether an earlier cap held it.

    A system or project rung is a cap: the stricter of it and what is in force. A user rung
    replaces the default but still sits under a system cap set earlier.
    """
    current = config.rung
    capping = tier in (Tier.SYSTEM, Tier.PROJECT) or config.sources.get("rung", "").startswith(
        Tier.SYSTEM
    )
    if capping and current.rank < wanted.rank:
        return current, True
    return wanted, False


def _check_type(
    key: str,
    value: Any,
    kind: type,
    allowed: type[enum.StrEnum] | None,
    fail: Callable[..., ConfigError],
) -> Any:
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if kind is int and isinstance(value, bool):
        raise fail(key, "must be an integer")
    if not isinstance(value, kind):
        raise fail(key, f"must be {kind.__name__}, not {type(value).__name__}")
    if isinstance(value, float) and value <= 0:
        raise fail(key, "must be positive")
    if key.startswith("undo.") and isinstance(value, int) and not isinstance(value, bool):
        if value <= 0:
            raise fail(key, "must be a positive integer")
    if allowed is not None:
        words = [m.value for m in allowed]
        if value not in words:
            raise fail(key, f"must be one of {', '.join(words)}, not {value!r}")
        return allowed(value)
    if isinstance(value, list):
        item_type = int if key == "watchers" else str
        if not all(isinstance(v, item_type) and not isinstance(v, bool) for v in value):
            raise fail(key, f"must be a list of {item_type.__name__}")
        return tuple(value)
    return value


def _ask_model(key: str, value: tuple[str, ...], fail: Any) -> tuple[Asked, ...]:
    """``rater.ask_model`` as cases of :class:`Asked`, each named once, in the default's order."""
    allowed = {a.value: a for a in DEFAULT_ASK_MODEL}
    unknown = [v for v in value if v not in allowed]
    if unknown:
        raise fail(key, f"unknown case {unknown[0]!r} (known: {', '.join(allowed)})")
    return tuple(a for a in DEFAULT_ASK_MODEL if a.value in value)


def _entry(kind: str, n: int, item: Any, tier: Tier, fail: Callable[..., ConfigError]) -> ListEntry:
    key = f"{kind}[{n}]"
    if not isinstance(item, dict):
        raise fail(key, "must be a table with match and pattern", n)
    unknown = set(item) - {"match", "pattern", "rate", "note"}
    if unknown:
        raise fail(
            key,
            f"unknown field(s) {', '.join(sorted(unknown))} (known: match, pattern, rate, note)",
            n,
        )
    if not isinstance(item.get("pattern"), str) or not item["pattern"]:
        raise fail(key, "needs a non-empty string pattern", n)
    if not isinstance(item.get("rate", False), bool) or not isinstance(item.get("note", ""), str):
        raise fail(key, "rate must be true/false and note a string", n)
    entry = ListEntry(
        match=item.get("match", "exact"),
        pattern=item["pattern"],
        rate=item.get("rate", False),
        note=item.get("note", ""),
        tier=tier,
    )
    try:
        entry.validate()
    except ValueError as exc:
        raise fail(key, str(exc), n) from exc
    return entry


def _build(config: Config, updates: dict[str, Any], sources: dict[str, str]) -> Config:
    top: dict[str, Any] = {"sources": sources}
    sections: dict[str, dict[str, Any]] = {}
    for key, value in updates.items():
        if "." in key:
            section, leaf = key.split(".", 1)
            sections.setdefault(section, {})[leaf] = value
        else:
            top[key] = value
    for section, values in sections.items():
        top[section] = replace(getattr(config, section), **values)
    return replace(config, **top)


# --- writing (human-only verbs: the daemon refuses them to gated sessions) ------------------


def add_list_entry(kind: str, entry: ListEntry, path: str | None = None) -> str:
    """Append ``entry`` to the user config as a ``[[kind]]`` table; returns the text written."""
    if kind not in _LISTS:
        raise ValueError(f"unknown list {kind!r}")
    entry.validate()
    path = path or _paths.current().user_config
    lines = [
        f"\n[[{kind}]]",
        f"match = {json.dumps(entry.match)}",
        f"pattern = {json.dumps(entry.pattern)}",
    ]
    if entry.rate:
        lines.append("rate = true")
    if entry.note:
        lines.append(f"note = {json.dumps(entry.note)}")
    block = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(block)
    return block.strip()


# --- the rater the config selects (S4) ----------------------------------------------------


def rater_backend(config: Config) -> str:
    """``rater.backend`` with ``auto`` resolved: ``cascade`` when the API key variable the config
    names is set (non-empty) in this environment or in the person's ``daemon.env``, ``builtin``
    without it."""
    backend = Backend(config.rater.backend)
    if backend is Backend.AUTO:
        name = config.rater.api_key_env
        if os.environ.get(name):
            return "cascade"
        from gatesh._person import read_daemon_env

        kept = read_daemon_env(_paths.current().config_dir)[0]
        return "cascade" if kept.get(name) else Backend.BUILTIN.value
    return backend.value


def rater_summary(config: Config) -> str:
    """One line saying what rates commands under ``config`` and what a key changes."""
    backend = Backend(config.rater.backend)
    key = f"${config.rater.api_key_env}"
    model = config.rater.model
    if backend is Backend.BUILTIN:
        return "builtin: every command is rated offline by the builtin rules; no model is asked"
    if backend is Backend.ANTHROPIC:
        return f"anthropic: every command off the read-only path is asked of the model {model} (key {key})"
    asks = ", ".join(a.value for a in config.rater.ask_model) or "nothing"
    if rater_backend(config) == "builtin":
        return (
            f"auto -> builtin ({key} is not set): the builtin rules alone; with the key, a cascade "
            f"that asks the model {model} about: {asks}"
        )
    return (
        f"auto -> cascade ({key} is set): the builtin rates first; its attack verdicts and its safe "
        f"verdicts on complete knowledge stand, and the model {model} is asked about: {asks} "
        f"(its answer may raise the builtin's, never lower it)"
    )


# --- gatesh config -------------------------------------------------------------------------


def effective_items(config: Config) -> list[tuple[str, Any, str]]:
    """Every effective value as (dotted key, value, source), in a stable order."""
    items: list[tuple[str, Any, str]] = []
    for key in _SCALARS:
        if "." in key:
            section, leaf = key.split(".", 1)
            value = getattr(getattr(config, section), leaf)
        else:
            value = getattr(config, key)
        if isinstance(value, enum.Enum):
            value = value.value
        if isinstance(value, tuple):
            value = [v.value if isinstance(v, enum.Enum) else v for v in value]
        items.append((key, value, config.sources.get(key, Tier.DEFAULT.value)))
    for kind in _LISTS:
        for n, entry in enumerate(getattr(config, kind)):
            items.append(
                (
                    f"{kind}[{n}]",
                    {k: v for k, v in asdict(entry).items() if k != "tier"},
                    entry.tier,
                )
            )
    return items


def config_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="gatesh config",
        description="Show every effective config value and the tier it came from.",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.add_argument("--cwd", default=None, help="working directory for the project tier")
    args = parser.parse_args(argv)
    config = load_config(args.cwd)
    items = effective_items(config)
    if args.json:
        print(
            json.dumps(
                {
                    "values": [{"key": k, "value": v, "source": s} for k, v, s in items],
                    "files": list(config.files),
                    "rater": {"backend": rater_backend(config), "summary": rater_summary(config)},
                }
            )
        )
        return 0
    width = max(len(k) for k, _, _ in items)
    for key, value, source in items:
        print(f"{key:<{width}} = {json.dumps(value):<28} # {source}")
    print(f"\nrater: {rater_summary(config)}")
    print("\nrungs:")
    for rung, text in RUNG_DESCRIPTIONS.items():
        mark = "*" if rung is config.rung else " "
        print(f" {mark} {rung.value:<9} {text}")
    return 0

"""Reading the TOML tiers (S12) into a :class:`~gatesh.config.model.Config`: later tiers override
earlier ones under the tightening rule, and an invalid file raises :class:`ConfigError` naming file,
line and key. The parsed TOML tables stay in this module; what leaves it is a Config."""

from __future__ import annotations

import enum
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from gatesh import _paths
from gatesh._errors import ConfigError
from gatesh._types import Asked, Rung, Tier
from gatesh.config.model import (
    DEFAULT_ASK_MODEL,
    LISTS,
    PROJECT_FILE,
    PROJECT_KEYS,
    SCALARS,
    SYSTEM_ONLY,
    Config,
    default,
)
from gatesh.policy.lists import ListEntry


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
    if key in LISTS or key.split("[")[0] in LISTS:
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

    lists = {kind: data.pop(kind, None) for kind in LISTS}
    sources = dict(config.sources)
    updates: dict[str, Any] = {}
    for key, value in _flatten(data).items():
        if key not in SCALARS:
            raise fail(key, f"unknown key (known: {', '.join(sorted((*SCALARS, *LISTS)))})")
        if tier is Tier.PROJECT and key not in PROJECT_KEYS:
            raise fail(
                key,
                "a project file can only cap the rung and add deny/escalate entries "
                "or protected branches; set this in your user config",
            )
        if key in SYSTEM_ONLY and tier is not Tier.SYSTEM:
            raise fail(key, "only the system config can name watchers")
        expected, allowed = SCALARS[key]
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

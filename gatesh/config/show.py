"""What the configuration says, for a person: ``gatesh config``, the rater it selects, and adding
an allow/deny/escalate entry to the user file (a human-only verb: the daemon refuses it to gated
sessions)."""

from __future__ import annotations

import argparse
import enum
import json
import os
from dataclasses import asdict
from typing import Any

from gatesh import _paths
from gatesh._types import RUNG_DESCRIPTIONS, Tier
from gatesh.config.files import load_config
from gatesh.config.model import LISTS, SCALARS, Backend, Config
from gatesh.policy.lists import ListEntry


def add_list_entry(kind: str, entry: ListEntry, path: str | None = None) -> str:
    """Append ``entry`` to the user config as a ``[[kind]]`` table; returns the text written."""
    if kind not in LISTS:
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


def effective_items(config: Config) -> list[tuple[str, Any, str]]:
    """Every effective value as (dotted key, value, source), in a stable order."""
    items: list[tuple[str, Any, str]] = []
    for key in SCALARS:
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
    for kind in LISTS:
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

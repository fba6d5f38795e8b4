"""Harness settings files: read, merged with gatesh's hook entries (everything else kept), and
written atomically after a backup."""

from __future__ import annotations

import copy
import json
import os
import shutil
import time
from typing import Any, Final

from gatesh.install.hookentry import hook_command, is_ours
from gatesh.install.record import InstallError
from gatesh.install.targets import HarnessSpec
from gatesh.vocab.harnesses import Harness

BACKUP_SUFFIX: Final = ".bak-gatesh-"


def _our_groups(spec: HarnessSpec, launcher: str) -> dict[str, dict[str, Any]]:
    entry: dict[str, Any] = {
        "type": "command",
        "command": hook_command(spec.name, launcher),
        "timeout": spec.timeout,
    }
    entry.update(dict(spec.extra))
    return {
        spec.gate_event: {"matcher": spec.matcher, "hooks": [dict(entry)]},
        spec.prompt_event: {"hooks": [dict(entry)]},
    }


def remove_hooks(settings: dict[str, Any], harness: Harness) -> dict[str, Any]:
    """A copy of ``settings`` without gatesh's hook entries (others kept in order)."""
    out = copy.deepcopy(settings)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                inner = [h for h in group["hooks"] if not is_ours(h, harness)]
                if not inner and group["hooks"]:
                    continue  # the group held only our entries
                group = {**group, "hooks": inner}
            kept.append(group)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del out["hooks"]
    return out


def merge_hooks(settings: dict[str, Any], spec: HarnessSpec, launcher: str) -> dict[str, Any]:
    """A copy of ``settings`` with gatesh's entries (replacing any earlier ones of gatesh's)."""
    out = remove_hooks(settings, spec.name)
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError("its 'hooks' is not an object; fix or remove it first")
    for event, group in _our_groups(spec, launcher).items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InstallError(f"its 'hooks.{event}' is not a list; fix or remove it first")
        groups.append(group)
    return out


def read_settings(path: str) -> dict[str, Any] | None:
    """The parsed file, or None when it does not exist. Raises InstallError when it cannot parse."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"cannot read {path}: {exc}") from exc
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InstallError(
            f"{path} is not valid JSON ({exc}); gatesh will not overwrite it. "
            "Fix it, or add the hooks by hand (see gatesh(1))."
        ) from exc
    if not isinstance(data, dict):
        raise InstallError(f"{path} is not a JSON object; gatesh will not overwrite it")
    return data


def write_json(path: str, data: dict[str, Any], existed: bool) -> str | None:
    """Write ``data`` atomically, backing up an existing file first; returns the backup path."""
    backup = None
    mode = 0o600
    if existed:
        backup = f"{path}{BACKUP_SUFFIX}{time.strftime('%Y%m%d-%H%M%S')}"
        n = 1
        while os.path.exists(backup):
            backup = f"{path}{BACKUP_SUFFIX}{time.strftime('%Y%m%d-%H%M%S')}-{n}"
            n += 1
        shutil.copy2(path, backup)
        mode = os.stat(path).st_mode & 0o777
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = f"{path}.tmp-gatesh-{os.getpid()}"
    with open(
        os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "w", encoding="utf-8"
    ) as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    return backup

"""Harness settings files: read, merged with gatesh's hook entries (everything else kept), and
written atomically after a backup.

The file is the harness's own JSON format: its parsed objects stay in this module (the functions
on dicts below, for the tests too); what leaves it is a :class:`SettingsFile`, which answers the
questions install, uninstall and doctor ask of a file."""

from __future__ import annotations

import copy
import json
import os
import shutil
import time
from dataclasses import dataclass
from typing import Any, Final

from gatesh.harnesses import Harness
from gatesh.install.hookentry import hook_command, is_ours
from gatesh.install.record import InstallError
from gatesh.install.targets import HarnessSpec

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


@dataclass(frozen=True)
class SettingsFile:
    """One harness settings (or hooks) file: its parsed JSON, or ``exists`` False when there is no
    file (then it reads as empty). Equal when the content is: installing what is there already
    changes nothing. Every method that changes it returns a new one; :meth:`write` writes it."""

    path: str
    exists: bool
    _data: dict[str, Any]

    @staticmethod
    def read(path: str) -> SettingsFile:
        """The file at ``path``. Raises InstallError when it cannot be read or parsed."""
        data = read_settings(path)
        return SettingsFile(path, data is not None, data or {})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SettingsFile):
            return NotImplemented
        return self._data == other._data

    __hash__ = None  # type: ignore[assignment]  # holds a dict: not hashable

    def without_ours(self, harness: Harness) -> SettingsFile:
        """This file without gatesh's entries for ``harness`` (everything else kept in order)."""
        return SettingsFile(self.path, self.exists, remove_hooks(self._data, harness))

    def with_ours(self, spec: HarnessSpec, launcher: str) -> SettingsFile:
        """This file with gatesh's entries for ``spec`` calling ``launcher`` (replacing earlier
        ones). Raises InstallError when its ``hooks`` is not what the harness reads."""
        return SettingsFile(self.path, self.exists, merge_hooks(self._data, spec, launcher))

    def holds_ours(self, harness: Harness) -> bool:
        """Whether any hook entry in it is gatesh's for ``harness``."""
        return self.without_ours(harness) != self

    def our_commands(self, harness: Harness) -> list[str]:
        """The commands of gatesh's entries for ``harness``, in the file's order."""
        hooks = self._data.get("hooks")
        out: list[str] = []
        for groups in hooks.values() if isinstance(hooks, dict) else ():
            for group in groups if isinstance(groups, list) else []:
                inner = group.get("hooks") if isinstance(group, dict) else None
                for h in inner if isinstance(inner, list) else []:
                    if isinstance(h, dict) and is_ours(h, harness):
                        out.append(str(h.get("command", "")))
        return out

    def write(self) -> str | None:
        """Write it atomically, backing up the file it replaces; returns the backup's path."""
        return write_json(self.path, self._data, self.exists)

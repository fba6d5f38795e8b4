"""The hook command a harness runs: which gatesh launcher it starts, how it fails closed, and how
gatesh recognises its own entries again."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from typing import Any, Final

from gatesh.harnesses import Harness


def launcher_path() -> str:
    """The gatesh executable hooks and shims should call: an absolute path when one is known.

    In order: this process's own launcher (argv[0] named ``gatesh``), ``gatesh`` on PATH,
    ``~/.local/bin/gatesh``; otherwise the bare name ``gatesh`` (looked up on PATH at run time).
    """
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "gatesh" and os.path.isfile(argv0) and os.access(argv0, os.X_OK):
        return os.path.abspath(argv0)
    found = shutil.which("gatesh")
    if found:
        return os.path.abspath(found)
    default = os.path.expanduser("~/.local/bin/gatesh")
    if os.path.isfile(default):
        return default
    return "gatesh"


# What a hook command does when gatesh itself could not answer: exit 2, "blocked" in every harness.
_HOOK_FAILED: Final = "echo 'gatesh hook failed: the command was refused' >&2; exit 2"


def hook_command(harness: Harness, launcher: str) -> str:
    """The command a harness runs (through its shell): gatesh's answer, or exit 2 (blocked) if
    gatesh itself fails.

    For a launcher :mod:`gatesh.launcher` wrote, the command starts the launcher's interpreter
    directly (:func:`gatesh.launcher.direct_hook`: one ``/bin/sh`` start less per tool call,
    S14), and falls back to the launcher only when that interpreter is gone (as the launcher
    itself falls back to its full interpreter); an interpreter that is there but fails blocks,
    never runs the hook twice. Any other launcher is called as ``LAUNCHER hook NAME``.
    """
    from gatesh.launcher import direct_hook

    via_launcher = f"{shlex.quote(launcher)} hook {harness}"
    direct = direct_hook(launcher) if os.path.isabs(launcher) else None
    if direct is None:
        return f"{via_launcher} || {{ {_HOOK_FAILED}; }}"
    start = " ".join(shlex.quote(w) for w in direct)
    return (
        f"{start} hook {harness} || {{ if [ ! -x {shlex.quote(direct[0])} ] && {via_launcher}; "
        f"then exit 0; fi; {_HOOK_FAILED}; }}"
    )


def hook_program(command: str) -> list[str]:
    """The words of the program a hook command written by :func:`hook_command` starts first
    (before its ``||``): ``[LAUNCHER, "hook", NAME]`` or ``[PYTHON, "-IS", "-c", CODE, "hook",
    NAME]``; [] when the command does not parse."""
    try:
        words = shlex.split(command.partition(" || ")[0])
    except ValueError:
        return []
    return words


def hook_launcher(command: str) -> str:
    """The launcher a hook command written by :func:`hook_command` calls (directly, or as the
    fallback of a direct start); "" when it names none."""
    program = hook_program(command)
    if program[1:2] == ["hook"]:
        return program[0]
    _, sep, rest = command.partition(" && ")
    if not sep:
        return ""
    try:
        words = shlex.split(rest.partition("; then")[0])
    except ValueError:
        return ""
    return words[0] if words[1:2] == ["hook"] else ""


def is_ours(entry: Any, harness: Harness) -> bool:
    """True for a hook entry gatesh wrote for ``harness``."""
    if not isinstance(entry, dict):
        return False
    command = entry.get("command")
    return isinstance(command, str) and "gatesh" in command and f" hook {harness}" in command

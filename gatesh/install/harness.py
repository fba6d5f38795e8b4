"""``gatesh install claude-code|codex|gemini``: gatesh's hooks in a harness's settings (and, for
Codex, trusted)."""

from __future__ import annotations

import os
import shlex

from gatesh.harnesses import Harness
from gatesh.install.hookentry import hook_command, hook_program, is_ours, launcher_path
from gatesh.install.record import InstallError, RecordChange, launchers_with, record
from gatesh.install.settings import SettingsFile
from gatesh.install.targets import HARNESS_SPECS, settings_path


def trust_codex_hooks(path: str, codex: str | None = None) -> str:
    """Have Codex trust gatesh's hooks in ``path`` (its hooks.json): Codex skips untrusted hooks
    silently (S11). Returns what was done; raises InstallError saying what the person must do."""
    from gatesh import hooktrust

    binary = hooktrust.codex_binary(codex)
    if binary is None:
        where = f"{codex} is not an executable" if codex else "codex is not on PATH"
        raise InstallError(
            f"gatesh's hooks are in {path}, but Codex skips hooks nobody has "
            f"trusted, and {where}, so gatesh could not trust them. To finish: "
            f"{hooktrust.MANUAL_STEPS}."
        )
    try:
        hooks = hooktrust.ensure_trusted(
            binary,
            os.path.dirname(path),
            lambda command: is_ours({"command": command}, Harness.CODEX),
        )
    except hooktrust.TrustError as exc:
        raise InstallError(
            f"gatesh's hooks are in {path}, but Codex does not run them yet: {exc}. "
            f"To finish: {hooktrust.MANUAL_STEPS}."
        ) from exc
    return (
        f"  Codex trusts gatesh's {len(hooks)} hooks (recorded by {binary} app-server in "
        f"{os.path.join(os.path.dirname(path), 'config.toml')})."
    )


def install_harness(
    harness: Harness,
    *,
    uninstall: bool = False,
    settings: str | None = None,
    launcher: str | None = None,
    codex: str | None = None,
) -> str:
    """Install (or remove) gatesh's hooks for ``harness``; returns what was done, for the person.

    For Codex the hooks are also trusted (:func:`trust_codex_hooks`); InstallError when they
    cannot be, naming what the person must do."""
    spec = HARNESS_SPECS[harness]
    harness = spec.name
    path = settings_path(spec, settings)
    current = SettingsFile.read(path)
    if uninstall:
        updated = current.without_ours(harness)
    else:
        updated = current.with_ours(spec, launcher or launcher_path())
    if current.exists and updated == current:
        done = (
            f"{path}: already {'without' if uninstall else 'with'} gatesh's hooks; nothing changed."
        )
        if harness is Harness.CODEX and not uninstall:
            done += "\n" + trust_codex_hooks(path, codex)
        return done
    if not current.exists and uninstall:
        return f"{path}: does not exist; nothing to remove."
    backup = updated.write()
    launcher = launcher or launcher_path()
    record(
        RecordChange(
            harness={path: None if uninstall else harness.value},
            launchers=None if uninstall else launchers_with(launcher),
        )
    )
    done = "removed gatesh's hooks from" if uninstall else "added gatesh's hooks to"
    lines = [f"{done} {path}" + (f" (backup: {backup})" if backup else "")]
    if not uninstall:
        program = hook_program(hook_command(harness, launcher))
        how = "" if program[1:2] == ["hook"] else f" (started directly on {program[0]})"
        lines.append(
            f"  {spec.gate_event} ({spec.matcher}) and {spec.prompt_event} call "
            f"`{shlex.quote(launcher)} hook {harness}`{how}."
        )
        if spec.note:
            lines.append(f"  {spec.note}")
        lines.append("  " + _route(harness))
        if harness is Harness.CODEX:
            lines.append(trust_codex_hooks(path, codex))
    return "\n".join(lines)


def _route(harness: Harness) -> str:
    """Whether this hook route runs the agent's commands inside their boundary (S16)."""
    from gatesh.boundary import holds
    from gatesh.hooks import REWRITES_INPUT

    here = holds.state()
    if harness not in REWRITES_INPUT:
        return "Route not confined: this harness cannot run a rewritten command."
    if here.why_none:
        return f"Route not confined: {here.why_none}."
    return (
        "Route confined: the hook has the harness run each allowed command wrapped, inside its "
        "boundary (`gatesh doctor` lists what holds)."
    )

"""``gatesh install``: write the integrations (S11) into the files the harnesses and git read.

    gatesh install claude-code [--uninstall] [--settings FILE]   ~/.claude/settings.json
    gatesh install codex       [--uninstall] [--settings FILE] [--codex PATH]
                                                                 ~/.codex/hooks.json, trusted
    gatesh install gemini      [--uninstall] [--settings FILE]   ~/.gemini/settings.json
    gatesh install git         [--global] [--uninstall]          .git/hooks, or core.hooksPath
    gatesh install shims       [--uninstall]                     DATA/gatesh/shims/{bash,zsh,sh}
    gatesh install service     [--uninstall]                     the daemon under systemd --user:
                                                                 gatesh.socket, gatesh.service
    gatesh install all --uninstall                               every one of them, wherever the
                                                                 install record says it was made

Guarantees for a settings file:

- Never clobbered: it is parsed, gatesh's entries are merged in and everything else is kept as it
  was. A file that does not parse is left alone and the install fails with its name.
- Before any change, the original is copied to ``FILE.bak-gatesh-YYYYmmdd-HHMMSS``.
- Idempotent: installing twice changes nothing the second time (and writes no backup).
- ``--uninstall`` removes only the entries gatesh wrote (recognised by ``gatesh hook NAME`` in the
  command), and drops event lists it leaves empty.

The hook commands end in ``|| { …; exit 2; }``: a gatesh that crashes or is missing blocks the
command (exit 2 is "blocked" in every harness) instead of letting it run.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Final

from gatesh import _paths
from gatesh._errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE, SetupError
from gatesh.githooks import HOOK_NAMES, MARKER, hook_script

__all__ = ["HARNESS_SPECS", "launcher_path", "main", "merge_hooks", "remove_hooks"]

SHIM_NAMES: Final = ("bash", "zsh", "sh")
BACKUP_SUFFIX: Final = ".bak-gatesh-"
# How long a harness waits for the hook. Escalations on Codex and Gemini wait for a watcher up to
# escalation.timeout_s (default 110 s), so the hook must be allowed longer than that.
HOOK_TIMEOUT_S: Final = 150


class InstallError(SetupError):
    """An install step cannot be done without clobbering something; the message says what."""


@dataclass(frozen=True)
class HarnessSpec:
    """Where a harness keeps its hooks and which events gatesh answers there."""

    name: str
    settings: str  # default file, ~ expanded at use
    home_env: str  # environment variable that moves the harness's folder
    gate_event: str
    matcher: str
    prompt_event: str
    timeout: int  # in the harness's unit
    extra: tuple[tuple[str, Any], ...] = ()  # more fields on each hook entry
    note: str = ""


HARNESS_SPECS: Final = {
    "claude-code": HarnessSpec(
        "claude-code",
        "~/.claude/settings.json",
        "CLAUDE_CONFIG_DIR",
        "PreToolUse",
        "Bash",
        "UserPromptSubmit",
        HOOK_TIMEOUT_S,
        note="Claude Code reads the hooks at start: restart running sessions. Use the hook or "
        "CLAUDE_CODE_SHELL (gatesh install shims), not both: the person's answer to an `ask` "
        "is Claude Code's, and a gated shell would ask again.",
    ),
    "codex": HarnessSpec(
        "codex",
        "~/.codex/hooks.json",
        "CODEX_HOME",
        "PreToolUse",
        "Bash",
        "UserPromptSubmit",
        HOOK_TIMEOUT_S,
        (("statusMessage", "gatesh: checking the command"),),
        note="Codex has no `ask` answer for hooks, so escalations go to `gatesh watch`.",
    ),
    "gemini": HarnessSpec(
        "gemini",
        "~/.gemini/settings.json",
        "",
        "BeforeTool",
        "run_shell_command",
        "BeforeAgent",
        HOOK_TIMEOUT_S * 1000,
        (("name", "gatesh"),),
        note="Gemini CLI has no `ask` answer for hooks, so escalations go to `gatesh watch`.",
    ),
}


# --- where things are ---------------------------------------------------------------------------


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


def settings_path(spec: HarnessSpec, override: str | None = None) -> str:
    if override:
        return os.path.abspath(os.path.expanduser(override))
    home = os.environ.get(spec.home_env, "") if spec.home_env else ""
    if home and os.path.isabs(home):
        return os.path.join(home, os.path.basename(spec.settings))
    return os.path.expanduser(spec.settings)


def shims_dir() -> str:
    return os.path.join(_paths.data_dir(), "shims")


def record(change: dict[str, Any]) -> None:
    """Note ``change`` in the install record (see :func:`gatesh._paths.update_install_record`).

    Self-protection reads the record at decision time (S3.4): what is not recorded is protected
    only where the defaults put it. Raises InstallError when the record cannot be written.
    """
    try:
        _paths.update_install_record(_paths.current().install_record, change)
    except (OSError, ValueError) as exc:
        raise InstallError(f"could not update the install record: {exc}") from exc


def _with_launcher(launcher: str) -> dict[str, Any]:
    """The record change that adds ``launcher`` to the recorded launchers (when absolute)."""
    if not os.path.isabs(launcher):
        return {}
    known = list(_paths.current().installation().launchers)
    return {"launchers": [*known, launcher] if launcher not in known else known}


# What a hook command does when gatesh itself could not answer: exit 2, "blocked" in every harness.
_HOOK_FAILED: Final = "echo 'gatesh hook failed: the command was refused' >&2; exit 2"


def hook_command(harness: str, launcher: str) -> str:
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


def is_ours(entry: Any, harness: str) -> bool:
    """True for a hook entry gatesh wrote for ``harness``."""
    if not isinstance(entry, dict):
        return False
    command = entry.get("command")
    return isinstance(command, str) and "gatesh" in command and f" hook {harness}" in command


# --- merging ------------------------------------------------------------------------------------


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


def remove_hooks(settings: dict[str, Any], harness: str) -> dict[str, Any]:
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


def _write_json(path: str, data: dict[str, Any], existed: bool) -> str | None:
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
            binary, os.path.dirname(path), lambda command: is_ours({"command": command}, "codex")
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
    harness: str,
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
    path = settings_path(spec, settings)
    current = read_settings(path)
    existed = current is not None
    base = current or {}
    if uninstall:
        updated = remove_hooks(base, harness)
    else:
        updated = merge_hooks(base, spec, launcher or launcher_path())
    if existed and updated == base:
        done = (
            f"{path}: already {'without' if uninstall else 'with'} gatesh's hooks; nothing changed."
        )
        if harness == "codex" and not uninstall:
            done += "\n" + trust_codex_hooks(path, codex)
        return done
    if not existed and uninstall:
        return f"{path}: does not exist; nothing to remove."
    backup = _write_json(path, updated, existed)
    launcher = launcher or launcher_path()
    record(
        {
            "harness": {path: None if uninstall else harness},
            **({} if uninstall else _with_launcher(launcher)),
        }
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
        if harness == "codex":
            lines.append(trust_codex_hooks(path, codex))
    return "\n".join(lines)


def _route(harness: str) -> str:
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


# --- git ----------------------------------------------------------------------------------------


def git_hooks_dir() -> str:
    return os.path.join(_paths.data_dir(), "git-hooks")


def _git(*args: str, check: bool = True) -> str:
    try:
        proc = subprocess.run(["git", *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InstallError(f"git {' '.join(args)}: {exc}") from exc
    if check and proc.returncode != 0:
        raise InstallError(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _write_script(path: str, text: str) -> None:
    tmp = f"{path}.tmp-gatesh-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)


def _remove_hook(path: str) -> bool:
    """Remove gatesh's hook script at ``path`` and put back the hook it replaced (``NAME.pre-gatesh``);
    False when ``path`` is not gatesh's (left alone)."""
    if not _is_our_script(path):
        return False
    os.remove(path)
    saved = f"{path}.pre-gatesh"
    if os.path.exists(saved):
        os.replace(saved, path)
    return True


def _is_our_script(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return MARKER in f.read(4096)
    except OSError:
        return False


def install_git(
    *, global_: bool = False, uninstall: bool = False, launcher: str | None = None
) -> str:
    """Install the git hooks globally (core.hooksPath) or into the current repository."""
    launcher = launcher or launcher_path()
    if global_:
        folder = git_hooks_dir()
        current = _git("config", "--global", "--get", "core.hooksPath", check=False)
        if uninstall:
            if current and os.path.abspath(os.path.expanduser(current)) == folder:
                _git("config", "--global", "--unset", "core.hooksPath")
            shutil.rmtree(folder, ignore_errors=True)
            record({"git": {folder: None}})
            return f"removed {folder} and the global core.hooksPath that pointed at it"
        if current and os.path.abspath(os.path.expanduser(current)) != folder:
            raise InstallError(
                f"git's global core.hooksPath is already {current!r}; gatesh will not replace it. "
                f"Unset it, or copy the scripts from {folder} into that folder (they chain to each "
                "repository's own hooks)."
            )
        os.makedirs(folder, mode=0o755, exist_ok=True)
        for name in HOOK_NAMES:
            _write_script(os.path.join(folder, name), hook_script(name, launcher))
        _git("config", "--global", "core.hooksPath", folder)
        record({"git": {folder: "global"}, **_with_launcher(launcher)})
        return (
            f"wrote {', '.join(HOOK_NAMES)} to {folder} and set git's global core.hooksPath "
            "to it. Each repository's own hooks in .git/hooks still run after gatesh's. A "
            "repository that sets its own core.hooksPath (husky, …) is not covered: run "
            "`gatesh install git` inside it."
        )
    git_dir = _git("rev-parse", "--git-common-dir")
    local_path = _git("config", "--local", "--get", "core.hooksPath", check=False)
    folder = os.path.abspath(os.path.join(local_path or os.path.join(git_dir, "hooks")))
    os.makedirs(folder, exist_ok=True)
    done = []
    for name in HOOK_NAMES:
        path = os.path.join(folder, name)
        saved = f"{path}.pre-gatesh"
        if uninstall:
            if _remove_hook(path):
                done.append(name)
            continue
        if os.path.exists(path) and not _is_our_script(path):
            if os.path.exists(saved):
                raise InstallError(
                    f"{path} exists and so does {saved}; gatesh will not "
                    "overwrite either. Merge them by hand, then run this again."
                )
            os.replace(path, saved)  # chained: our script runs it after gatesh's check
        _write_script(path, hook_script(name, launcher))
        done.append(name)
    record(
        {
            "git": {os.path.join(folder, name): None if uninstall else "repo" for name in done},
            **({} if uninstall else _with_launcher(launcher)),
        }
    )
    verb = "removed" if uninstall else "installed"
    note = "" if uninstall else " (an existing hook was kept as NAME.pre-gatesh and still runs)"
    return f"{verb} {', '.join(done) or 'nothing'} in {folder}{note}"


# --- shims --------------------------------------------------------------------------------------


def install_shims(*, uninstall: bool = False, launcher: str | None = None) -> str:
    """Create (or remove) links named bash, zsh and sh to the launcher in the shims folder."""
    folder = shims_dir()
    if uninstall:
        for name in SHIM_NAMES:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                os.remove(path)
        with contextlib.suppress(OSError):
            os.rmdir(folder)
        record({"shims": None})
        return f"removed the shims in {folder}"
    launcher = launcher or launcher_path()
    if not os.path.isabs(launcher):
        raise InstallError(
            "cannot find the gatesh launcher to link to; run ./install.sh first, "
            "or put gatesh on PATH"
        )
    os.makedirs(folder, mode=0o755, exist_ok=True)
    for name in SHIM_NAMES:
        path = os.path.join(folder, name)
        if os.path.lexists(path):
            if not os.path.islink(path):
                raise InstallError(f"{path} exists and is not a link; gatesh will not replace it")
            os.remove(path)
        os.symlink(launcher, path)
    record({"shims": folder, **_with_launcher(launcher)})
    return shims_instructions(folder)


def shims_instructions(folder: str) -> str:
    bash = os.path.join(folder, "bash")
    return f"""\
created {folder} with bash, zsh and sh linked to the gatesh launcher.
Each behaves as that shell, gated; it runs the real shell found on PATH after its own folder.

Claude Code (its shell path must contain "bash" or "zsh"):
    export CLAUDE_CODE_SHELL={shlex.quote(bash)}

Harnesses that run `bash -lc` by name: put the folder first on the agent's PATH:
    export PATH={shlex.quote(folder)}:"$PATH"

An agent account's login shell (Codex reads the login shell and accepts only these names):
    echo {shlex.quote(bash)} | sudo tee -a /etc/shells     # chsh accepts only shells listed there
    sudo chsh -s {shlex.quote(bash)} AGENT_USER
Keep your own account's login shell as it is."""


def install_daemon_service(*, uninstall: bool = False) -> str:
    """Have the user's service manager run the daemon (socket activation, S9.7), or stop that.

    Installing stops a daemon a client started, so the service manager's socket is the one
    clients find; the units are recorded for uninstall and doctor."""
    from gatesh import service

    paths = _paths.current()
    if uninstall:
        _, said = service.install_service("", paths.socket, uninstall=True)
        record({"service": None})
        return "\n".join(said)
    launcher = launcher_path()
    if not os.path.isabs(launcher):
        raise InstallError(
            "cannot find the gatesh launcher for the service to run; run ./install.sh first"
        )
    stopped = _stop_daemon()
    units, said = service.install_service(launcher, paths.socket)
    record({"service": units, **_with_launcher(launcher)})
    return "\n".join(([stopped] if stopped else []) + said)


# --- everything ---------------------------------------------------------------------------------


def uninstall_all() -> str:
    """Remove every integration this installation made, wherever its install record says it made
    them (and at the default places, for installs older than the record):

    - gatesh's entries in every recorded harness settings or hooks file, and the
      ``FILE.bak-gatesh-*`` backups install wrote next to each (once the file holds no gatesh entry);
    - the hook scripts in every repository where ``gatesh install git`` ran, each replaced by the
      hook it had displaced (``NAME.pre-gatesh``), so those repositories commit and branch as before;
      the global hooks folder and the ``core.hooksPath`` pointing at it;
    - the shims folder;
    - the daemon (stopped) and its runtime folder (socket and lock).

    The launcher, venv, man page and the record itself are install.sh's to remove. Returns what was
    done, one line each; a part that could not be removed is named with the reason, and the rest
    still goes. Raises InstallError (naming every failure) after trying everything, when any failed.
    """
    inst = _paths.current().installation()
    done: list[str] = []
    failed: list[str] = []

    def attempt(what: str, step: Any) -> None:
        try:
            line = step()
        except (InstallError, OSError) as exc:
            failed.append(f"{what}: {exc}")
        else:
            if line:
                done.append(line)

    # 1. Harness settings files: gatesh's entries, then the backups install made of them.
    files = dict.fromkeys(
        [*inst.harness_files, *(settings_path(spec) for spec in HARNESS_SPECS.values())]
    )
    for path in files:
        attempt(path, lambda path=path: _unhook_settings(path))
    # 2. git: every recorded hook script (repositories and the global folder).
    global_dir = git_hooks_dir()
    for path in inst.git_hooks:
        if path != global_dir:
            attempt(
                path, lambda path=path: f"removed the git hook {path}" if _remove_hook(path) else ""
            )
            record({"git": {path: None}})
    if inst.git_global or os.path.isdir(global_dir):
        attempt("git --global", lambda: install_git(global_=True, uninstall=True))
    # 3. The shims, the service manager's units, the daemon and its runtime folder.
    attempt("shims", lambda: install_shims(uninstall=True))
    if inst.service:
        attempt("service", lambda: install_daemon_service(uninstall=True))
    attempt("daemon", _stop_daemon_and_runtime)
    # 4. Gated shells still open cannot be gated once gatesh is gone: each refuses every command
    #    from now on with one line saying so; the person is told which they are.
    shells = open_gated_shells()
    if shells:
        done.append(
            "gated shells still open (from now on they refuse every command; exit them): "
            + ", ".join(f"pid {pid} ({name}, session {sid})" for pid, name, sid in shells)
        )
    if failed:
        raise InstallError(
            "could not remove everything:\n  "
            + "\n  ".join(failed)
            + ("\ndone:\n  " + "\n  ".join(done) if done else "")
        )
    return "\n".join(done) or "nothing of gatesh's was installed"


def open_gated_shells() -> list[tuple[int, str, str]]:
    """This user's gated PTY shells still running: (pid, shell, session), read from ``/proc``
    (a shell a gatesh session started carries ``GATESH_GATED=1`` and its session's name)."""
    out: list[tuple[int, str, str]] = []
    uid = os.getuid()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            with open(f"/proc/{entry}/comm", encoding="utf-8", errors="replace") as f:
                name = f.read().strip()
            if name not in ("bash", "zsh"):
                continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
        except OSError:
            continue
        session = env.get(b"GATESH_SESSION", b"").decode("utf-8", "replace")
        if env.get(b"GATESH_GATED") == b"1" and session.startswith("pty-"):
            out.append((int(entry), name, session))
    return sorted(out)


def _unhook_settings(path: str) -> str:
    current = read_settings(path)
    if current is None:
        return ""
    lines = []
    for harness in HARNESS_SPECS:
        if remove_hooks(current, harness) != current:
            lines.append(install_harness(harness, uninstall=True, settings=path))
            current = read_settings(path) or {}
    record({"harness": {path: None}})
    if any(remove_hooks(current, h) != current for h in HARNESS_SPECS):
        raise InstallError(f"{path} still holds gatesh's hooks; its backups are kept")
    folder, base = os.path.split(path)
    for name in sorted(os.listdir(folder or ".")):
        if name.startswith(base + BACKUP_SUFFIX):
            os.remove(os.path.join(folder, name))
            lines.append(f"removed the backup {os.path.join(folder, name)}")
    return "\n".join(lines)


# How long uninstall waits for the daemon to exit after SIGTERM (it exits in ~30 ms; a model call
# in flight is abandoned within its grace).
_DAEMON_EXIT_S: Final = 5.0


def _stop_daemon_and_runtime() -> str:
    """Stop this user's daemon (found by its socket's peer credentials) and remove its runtime
    folder — the socket and the lock — once it is gone."""
    paths = _paths.current()
    stopped = _stop_daemon()
    if not os.path.isdir(paths.runtime_dir):
        return stopped
    shutil.rmtree(paths.runtime_dir)
    return (f"{stopped} and removed " if stopped else "removed ") + paths.runtime_dir


def _stop_daemon() -> str:
    """Stop this user's daemon (found by its socket's peer credentials): "stopped the daemon",
    or "" when none answered. Raises InstallError when it does not stop."""
    import signal
    import socket
    import struct

    paths = _paths.current()
    pid = 0
    with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(2)
        s.connect(paths.socket)
        peer, uid, _ = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        if uid == os.getuid() and peer > 1:
            pid = peer
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + _DAEMON_EXIT_S
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.02)
        if _alive(pid):
            raise InstallError(
                f"the daemon (pid {pid}) did not stop; its runtime folder "
                f"{paths.runtime_dir} is kept"
            )
    return "stopped the daemon" if pid else ""


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie has exited)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b") ", 1)[1][:1] != b"Z"
    except (OSError, IndexError):
        return False


# --- entry point --------------------------------------------------------------------------------

TARGETS: Final = ("claude-code", "codex", "gemini", "git", "shims", "service", "all")


def main(argv: list[str]) -> int:
    """``gatesh install TARGET``: 0 when done, 1 when it would clobber something, 2 for usage."""
    parser = argparse.ArgumentParser(
        prog="gatesh install",
        description="Install gatesh's integrations. Settings files are merged, never clobbered, "
        "and backed up first; installing twice changes nothing.",
    )
    parser.add_argument("target", choices=TARGETS)
    parser.add_argument("--uninstall", action="store_true", help="remove only what gatesh added")
    parser.add_argument(
        "--global",
        dest="global_",
        action="store_true",
        help="git: set the global core.hooksPath instead of this repository's hooks",
    )
    parser.add_argument(
        "--settings", metavar="FILE", help="harness settings file to edit instead of the default"
    )
    parser.add_argument(
        "--codex",
        metavar="PATH",
        help="codex: the codex executable that trusts the hooks (default: on PATH)",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
    if args.global_ and args.target != "git":
        sys.stderr.write("gatesh install: --global applies to git only\n")
        return EXIT_USAGE
    if args.codex and args.target != "codex":
        sys.stderr.write("gatesh install: --codex applies to codex only\n")
        return EXIT_USAGE
    if args.settings and args.target not in HARNESS_SPECS:
        sys.stderr.write("gatesh install: --settings applies to claude-code, codex and gemini\n")
        return EXIT_USAGE
    if args.target == "all" and not args.uninstall:
        sys.stderr.write(
            "gatesh install: `all` is for --uninstall (install each integration by name)\n"
        )
        return EXIT_USAGE
    try:
        if args.target == "all":
            print(uninstall_all())
        elif args.target in HARNESS_SPECS:
            print(
                install_harness(
                    args.target, uninstall=args.uninstall, settings=args.settings, codex=args.codex
                )
            )
        elif args.target == "git":
            print(install_git(global_=args.global_, uninstall=args.uninstall))
        elif args.target == "service":
            print(install_daemon_service(uninstall=args.uninstall))
        else:
            print(install_shims(uninstall=args.uninstall))
    except (InstallError, OSError) as exc:
        sys.stderr.write(f"gatesh install {args.target}: {exc}\n")
        return EXIT_ERROR
    return EXIT_OK

"""``gatesh install all --uninstall``: every integration removed, wherever the install record says
it was made."""

from __future__ import annotations

import os
from typing import Any

from gatesh import _paths
from gatesh.install.daemon import install_daemon_service, stop_daemon_and_runtime
from gatesh.install.git import git_hooks_dir, install_git, remove_hook
from gatesh.install.harness import install_harness
from gatesh.install.record import InstallError, RecordChange, record
from gatesh.install.settings import BACKUP_SUFFIX, SettingsFile
from gatesh.install.shims import install_shims
from gatesh.install.targets import HARNESS_SPECS, settings_path


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
                path, lambda path=path: f"removed the git hook {path}" if remove_hook(path) else ""
            )
            record(RecordChange(git={path: None}))
    if inst.git_global or os.path.isdir(global_dir):
        attempt("git --global", lambda: install_git(global_=True, uninstall=True))
    # 3. The shims, the service manager's units, the daemon and its runtime folder.
    attempt("shims", lambda: install_shims(uninstall=True))
    if inst.service:
        attempt("service", lambda: install_daemon_service(uninstall=True))
    attempt("daemon", stop_daemon_and_runtime)
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
    current = SettingsFile.read(path)
    if not current.exists:
        return ""
    lines = []
    for harness in HARNESS_SPECS:
        if current.holds_ours(harness):
            lines.append(install_harness(harness, uninstall=True, settings=path))
            current = SettingsFile.read(path)
    record(RecordChange(harness={path: None}))
    if any(current.holds_ours(h) for h in HARNESS_SPECS):
        raise InstallError(f"{path} still holds gatesh's hooks; its backups are kept")
    folder, base = os.path.split(path)
    for name in sorted(os.listdir(folder or ".")):
        if name.startswith(base + BACKUP_SUFFIX):
            os.remove(os.path.join(folder, name))
            lines.append(f"removed the backup {os.path.join(folder, name)}")
    return "\n".join(lines)

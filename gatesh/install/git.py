"""``gatesh install git``: the git hooks (S12), in this repository or behind git's global
``core.hooksPath``; a repository's own hook is kept and chained."""

from __future__ import annotations

import os
import shutil
import subprocess

from gatesh import _paths
from gatesh.githooks import HOOK_NAMES, MARKER, hook_script
from gatesh.install.hookentry import launcher_path
from gatesh.install.record import InstallError, RecordChange, launchers_with, record


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


def remove_hook(path: str) -> bool:
    """Remove gatesh's hook script at ``path`` and put back the hook it replaced (``NAME.pre-gatesh``);
    False when ``path`` is not gatesh's (left alone)."""
    if not is_our_script(path):
        return False
    os.remove(path)
    saved = f"{path}.pre-gatesh"
    if os.path.exists(saved):
        os.replace(saved, path)
    return True


def is_our_script(path: str) -> bool:
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
            record(RecordChange(git={folder: None}))
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
        record(RecordChange(git={folder: "global"}, launchers=launchers_with(launcher)))
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
            if remove_hook(path):
                done.append(name)
            continue
        if os.path.exists(path) and not is_our_script(path):
            if os.path.exists(saved):
                raise InstallError(
                    f"{path} exists and so does {saved}; gatesh will not "
                    "overwrite either. Merge them by hand, then run this again."
                )
            os.replace(path, saved)  # chained: our script runs it after gatesh's check
        _write_script(path, hook_script(name, launcher))
        done.append(name)
    record(
        RecordChange(
            git={os.path.join(folder, name): None if uninstall else "repo" for name in done},
            launchers=None if uninstall else launchers_with(launcher),
        )
    )
    verb = "removed" if uninstall else "installed"
    note = "" if uninstall else " (an existing hook was kept as NAME.pre-gatesh and still runs)"
    return f"{verb} {', '.join(done) or 'nothing'} in {folder}{note}"

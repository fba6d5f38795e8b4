"""``gatesh install shims``: bash, zsh and sh linked to the launcher, for harnesses that start a
shell by name."""

from __future__ import annotations

import contextlib
import os
import shlex
from typing import Final

from gatesh import _paths
from gatesh.install.hookentry import launcher_path
from gatesh.install.record import InstallError, RecordChange, launchers_with, record

SHIM_NAMES: Final = ("bash", "zsh", "sh")


def shims_dir() -> str:
    return os.path.join(_paths.data_dir(), "shims")


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
        record(RecordChange(shims=""))
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
    record(RecordChange(shims=folder, launchers=launchers_with(launcher)))
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

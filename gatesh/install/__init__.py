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

One module per concept: :mod:`~gatesh.install.targets` (the harnesses and where their settings
are), :mod:`~gatesh.install.hookentry` (the hook command and the launcher it calls),
:mod:`~gatesh.install.settings` (merging and writing a settings file), :mod:`~gatesh.install.record`
(the install record), one module per target (``harness``, ``git``, ``shims``, ``daemon``),
:mod:`~gatesh.install.uninstall` and :mod:`~gatesh.install.cli`. The modules import one another
directly, never this package, so the package can re-export them without an import circle.
"""

from gatesh.install.cli import TARGETS, main
from gatesh.install.daemon import install_daemon_service
from gatesh.install.git import git_hooks_dir, install_git
from gatesh.install.harness import install_harness, trust_codex_hooks
from gatesh.install.hookentry import (
    hook_command,
    hook_launcher,
    hook_program,
    is_ours,
    launcher_path,
)
from gatesh.install.record import InstallError
from gatesh.install.settings import (
    BACKUP_SUFFIX,
    SettingsFile,
    merge_hooks,
    read_settings,
    remove_hooks,
)
from gatesh.install.shims import SHIM_NAMES, install_shims, shims_dir
from gatesh.install.targets import HARNESS_SPECS, HOOK_TIMEOUT_S, HarnessSpec, settings_path
from gatesh.install.uninstall import open_gated_shells, uninstall_all

__all__ = [
    "BACKUP_SUFFIX",
    "HARNESS_SPECS",
    "HOOK_TIMEOUT_S",
    "SHIM_NAMES",
    "TARGETS",
    "HarnessSpec",
    "InstallError",
    "SettingsFile",
    "git_hooks_dir",
    "hook_command",
    "hook_launcher",
    "hook_program",
    "install_daemon_service",
    "install_git",
    "install_harness",
    "install_shims",
    "is_ours",
    "launcher_path",
    "main",
    "merge_hooks",
    "open_gated_shells",
    "read_settings",
    "remove_hooks",
    "settings_path",
    "shims_dir",
    "trust_codex_hooks",
    "uninstall_all",
]

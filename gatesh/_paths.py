"""Where gatesh keeps its files, with the standard library only (the ``-c`` client imports this).

The rules are the XDG ones platformdirs applies on Linux (a test pins the two together), so the
daemon and the client agree on the socket without the client importing platformdirs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

APP = "gatesh"
SYSTEM_CONFIG = "/etc/gatesh/config.toml"


def _xdg(var: str, fallback: str) -> str:
    value = os.environ.get(var, "")
    # XDG says relative values are invalid and must be ignored.
    return value if os.path.isabs(value) else os.path.expanduser(fallback)


def config_dir() -> str:
    return os.path.join(_xdg("XDG_CONFIG_HOME", "~/.config"), APP)


def state_dir() -> str:
    return os.path.join(_xdg("XDG_STATE_HOME", "~/.local/state"), APP)


def data_dir() -> str:
    return os.path.join(_xdg("XDG_DATA_HOME", "~/.local/share"), APP)


def runtime_dir() -> str:
    """The folder holding the socket: ``$XDG_RUNTIME_DIR/gatesh``, else ``/tmp/gatesh-UID``."""
    base = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(base) and os.path.isdir(base):
        return os.path.join(base, APP)
    return os.path.join("/tmp", f"{APP}-{os.getuid()}")


def system_config() -> str:
    """The root-owned system tier (S9.6). ``GATESH_SYSTEM_CONFIG`` moves it, for tests only."""
    return os.environ.get("GATESH_SYSTEM_CONFIG", SYSTEM_CONFIG)


@dataclass(frozen=True)
class GatePaths:
    """Every path the gate protects from the agent (S3.4) and uses itself."""

    config_dir: str
    state_dir: str
    runtime_dir: str
    data_dir: str
    system_config: str

    @property
    def user_config(self) -> str:
        return os.path.join(self.config_dir, "config.toml")

    @property
    def socket(self) -> str:
        return os.path.join(self.runtime_dir, "daemon.sock")

    @property
    def lock(self) -> str:
        return os.path.join(self.runtime_dir, "daemon.lock")

    @property
    def audit_log(self) -> str:
        return os.path.join(self.state_dir, "audit.jsonl")

    @property
    def protected(self) -> tuple[str, ...]:
        """Folders and files an agent may not write, move, delete (S3.4)."""
        return (
            self.config_dir,
            self.state_dir,
            self.runtime_dir,
            self.data_dir,
            os.path.dirname(self.system_config),
        )


def current() -> GatePaths:
    """The paths for this process's environment (read each call: tests change the environment)."""
    return GatePaths(config_dir(), state_dir(), runtime_dir(), data_dir(), system_config())

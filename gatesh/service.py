"""The daemon under the user's service manager (S9.7): systemd socket activation.

``gatesh install service`` writes ``gatesh.socket`` (the daemon's socket, which the service
manager opens) and ``gatesh.service`` (``gatesh daemon --foreground``, started on the first
connection, with the listening socket handed over as ``LISTEN_FDS``) into the user's unit folder,
records them in the install record, and has ``systemctl --user`` enable the socket. The daemon then
always starts in the service manager's environment, which is the person's, whatever client
connects first; a client finding no socket asks the service manager to open it before it starts a
daemon itself (:func:`start_socket`).

Standard library only, and imported by the ``-c`` client only on its way to starting a daemon.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from typing import Final

__all__ = ["SERVICE_UNIT", "SOCKET_UNIT", "install_service", "start_socket", "unit_folder"]

SOCKET_UNIT: Final = "gatesh.socket"
SERVICE_UNIT: Final = "gatesh.service"
#: The first line of both units: how install and doctor know them for gatesh's.
HEADER: Final = "# gatesh: written by `gatesh install service` (regenerate, do not edit)"
#: How long one ``systemctl --user`` call may take (it talks to the user's manager over D-Bus).
SYSTEMCTL_TIMEOUT_S: Final = 10.0
# The variables the unit passes to the daemon, from the environment of whoever installs it: where
# the person's files are, the locale, where programs are found. (Never a key: see daemon.env.)
_PASSED: Final = (
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "XDG_DATA_HOME",
    "PATH",
    "LANG",
    "GATESH_SYSTEM_CONFIG",
)


def unit_folder(environ: dict[str, str] | None = None) -> str:
    """``$XDG_CONFIG_HOME/systemd/user`` (default ``~/.config/systemd/user``)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
    return os.path.join(base, "systemd", "user")


def socket_text(socket_path: str) -> str:
    return (
        f"{HEADER}\n"
        "[Unit]\n"
        "Description=gatesh daemon socket: the gate every agent's shell command passes\n"
        "\n"
        "[Socket]\n"
        f"ListenStream={socket_path}\n"
        "SocketMode=0600\n"
        "DirectoryMode=0700\n"
        "\n"
        "[Install]\n"
        "WantedBy=sockets.target\n"
    )


def service_text(launcher: str, environ: dict[str, str]) -> str:
    env_lines = "".join(
        f"Environment={_quote(f'{name}={environ[name]}')}\n"
        for name in _PASSED
        if environ.get(name)
    )
    return (
        f"{HEADER}\n"
        "[Unit]\n"
        "Description=gatesh daemon (started by its socket)\n"
        f"Requires={SOCKET_UNIT}\n"
        "\n"
        "[Service]\n"
        "Type=simple\n"
        f"ExecStart={_quote(launcher)} daemon --foreground\n"
        f"{env_lines}"
        "Restart=on-failure\n"
    )


def _quote(word: str) -> str:
    """``word`` quoted as systemd reads a unit's words (double quotes, backslash escapes)."""
    if word and all(c.isalnum() or c in "/._-=:+,@%" for c in word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemctl(*args: str) -> tuple[bool, str]:
    """Run ``systemctl --user ARGS``: (it worked, what it said)."""
    exe = shutil.which("systemctl")
    if exe is None:
        return False, "systemctl is not installed"
    try:
        out = subprocess.run(
            [exe, "--user", *args],
            capture_output=True,
            text=True,
            timeout=SYSTEMCTL_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"systemctl --user {' '.join(args)}: {exc}"
    said = (out.stderr or out.stdout).strip().splitlines()
    return out.returncode == 0, said[0] if said else f"exit status {out.returncode}"


def install_service(
    launcher: str,
    socket_path: str,
    *,
    uninstall: bool = False,
    environ: dict[str, str] | None = None,
) -> tuple[list[str], list[str]]:
    """Write (or remove) the two units and have the user's service manager take them: (the unit
    files now there or gone, one line per thing done or not done)."""
    env = dict(os.environ if environ is None else environ)
    folder = unit_folder(env)
    units = [os.path.join(folder, SOCKET_UNIT), os.path.join(folder, SERVICE_UNIT)]
    said: list[str] = []
    if uninstall:
        ok, why = systemctl("disable", "--now", SOCKET_UNIT)
        said.append("the service manager stopped gatesh.socket" if ok else f"not stopped: {why}")
        for path in units:
            if _ours(path):
                os.remove(path)
                said.append(f"removed {path}")
        systemctl("daemon-reload")
        return units, said
    os.makedirs(folder, mode=0o755, exist_ok=True)
    for path, text in zip(
        units, (socket_text(socket_path), service_text(launcher, env)), strict=True
    ):
        if os.path.exists(path) and not _ours(path):
            raise OSError(f"{path} exists and is not gatesh's; it is left as it is")
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
        said.append(f"wrote {path}")
    ok, why = systemctl("daemon-reload")
    if ok:
        ok, why = systemctl("enable", "--now", SOCKET_UNIT)
    if ok:
        said.append(
            "the service manager listens on the daemon's socket and starts the daemon on the first "
            "connection, in its own environment (yours)"
        )
    else:
        said.append(
            f"no user service manager took them ({why}): until one does, a client starts the "
            f"daemon itself, with your settings only; enable them later with "
            f"`systemctl --user enable --now {SOCKET_UNIT}`"
        )
    return units, said


def _ours(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            return f.readline().rstrip("\n") == HEADER
    except OSError:
        return False


def start_socket(units: tuple[str, ...]) -> bool:
    """Ask the user's service manager to open the daemon's socket (the units recorded are there);
    True when it did. For a client that found no socket, before it starts a daemon itself."""
    if not any(os.path.basename(u) == SOCKET_UNIT and _ours(u) for u in units):
        return False
    return systemctl("start", SOCKET_UNIT)[0]


def describe(units: tuple[str, ...]) -> str:
    """One line for doctor: which units are installed."""
    return ", ".join(shlex.quote(u) for u in units if os.path.exists(u)) or "none"

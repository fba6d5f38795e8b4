"""The daemon under the user's service manager (S9.7): ``gatesh install service`` writes the socket
and service units, and the daemon takes the socket the service manager hands it (``LISTEN_FDS``),
tried with the real ``systemd-socket-activate``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gatesh import _paths, service

GATESH = [sys.executable, "-m", "gatesh"]
_PASSED = ("HOME", "PATH", "LANG", "GATESH_SYSTEM_CONFIG", "PYTHONPATH")


def test_the_units_name_the_socket_and_the_launcher(isolated_home: Path) -> None:
    socket_unit = service.socket_text("/run/user/7/gatesh/daemon.sock")
    assert "ListenStream=/run/user/7/gatesh/daemon.sock" in socket_unit
    assert "SocketMode=0600" in socket_unit and "DirectoryMode=0700" in socket_unit
    env = {"XDG_CONFIG_HOME": "/h/my config", "PATH": "/usr/bin", "ANTHROPIC_API_KEY": "sk-x"}
    unit = service.service_text("/h/.local/bin/gatesh", env)
    assert "ExecStart=/h/.local/bin/gatesh daemon --foreground" in unit
    assert 'Environment="XDG_CONFIG_HOME=/h/my config"' in unit
    assert "ANTHROPIC" not in unit  # a key is daemon.env's, never a unit's


@pytest.mark.slow
def test_install_service_writes_records_and_removes_the_units(isolated_home: Path) -> None:
    """Without a user service manager (as here, or in a container) the units are written and
    recorded, and the output says the client keeps starting the daemon itself; uninstall removes
    exactly them."""
    launcher = isolated_home / "bin" / "gatesh"
    launcher.parent.mkdir()
    launcher.write_text("#!/bin/sh\n")
    launcher.chmod(0o755)
    env = {**os.environ, "PATH": f"{launcher.parent}:{os.environ['PATH']}"}
    out = subprocess.run(
        [*GATESH, "install", "service"], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    folder = Path(service.unit_folder())
    assert (folder / "gatesh.socket").read_text().startswith(service.HEADER)
    assert f"ExecStart={launcher} daemon --foreground" in (folder / "gatesh.service").read_text()
    assert _paths.current().installation().service == (
        str(folder / "gatesh.socket"),
        str(folder / "gatesh.service"),
    )
    if shutil.which("systemctl") is None or not service.systemctl("show-environment")[0]:
        assert "no user service manager took them" in out.stdout, out.stdout
    out = subprocess.run(
        [*GATESH, "install", "service", "--uninstall"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert not (folder / "gatesh.socket").exists() and not (folder / "gatesh.service").exists()
    assert _paths.current().installation().service == ()


@pytest.mark.slow
def test_the_daemon_takes_the_socket_the_service_manager_hands_it(isolated_home: Path) -> None:
    """systemd-socket-activate listens on the daemon's socket and starts `gatesh daemon` on the
    first connection with LISTEN_FDS: the daemon serves on that socket, says who started it, opens
    the person's channel, and leaves the socket file to its owner when it stops."""
    activate = shutil.which("systemd-socket-activate")
    if activate is None:
        pytest.skip("systemd-socket-activate is not installed (apt package systemd)")
    paths = _paths.current()
    os.makedirs(paths.runtime_dir, mode=0o700)
    # Like a unit's Environment= lines: the manager hands on only what it is told to.
    passed = [f"--setenv={k}" for k in os.environ if k in _PASSED or k.startswith("XDG_")]
    manager = subprocess.Popen(
        [activate, "-l", paths.socket, *passed, *GATESH, "daemon", "--foreground"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(paths.socket) and time.monotonic() < deadline:
            time.sleep(0.02)
        os.chmod(paths.socket, 0o600)
        ran = subprocess.run(
            [*GATESH, "-c", "echo through-the-manager"], capture_output=True, text=True, timeout=60
        )
        assert ran.returncode == 0 and ran.stdout == "through-the-manager\n", ran.stderr
        status = subprocess.run(
            [*GATESH, "status", "--json"], capture_output=True, text=True, timeout=60
        )
        daemon = json.loads(status.stdout)["daemon"]
        assert "service manager" in daemon["started_by"], daemon
        assert daemon["pid"] == manager.pid  # it execs the daemon in its own process
        assert daemon["person_channel"].startswith("gatesh-person-")
        mandate = subprocess.run(
            [*GATESH, "mandate", "tidy up"], capture_output=True, text=True, timeout=60
        )
        assert mandate.returncode == 0, mandate.stderr
        manager.send_signal(signal.SIGTERM)
        manager.wait(10)
        assert os.path.exists(paths.socket), "the daemon removed the socket the manager owns"
    finally:
        if manager.poll() is None:
            manager.kill()
            manager.wait(10)

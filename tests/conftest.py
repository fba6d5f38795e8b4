"""Shared fixtures: every test runs with its own HOME and XDG folders, so nothing touches the
developer's real config, state or daemon."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    # Short paths: a Unix socket path must fit in 108 bytes.
    home = Path(tmp_path_factory.mktemp("h"))
    runtime = home / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local/state"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local/share"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("GATESH_SYSTEM_CONFIG", str(home / "etc-gatesh/config.toml"))
    for var in ("GATESH_SESSION", "GATESH_GATED", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    yield home
    os.environ.pop("GATESH_TEST_MARKER", None)

from __future__ import annotations

import os
import subprocess
import sys

import platformdirs

from gatesh import _paths


def test_stdlib_paths_agree_with_platformdirs() -> None:
    # The -c client cannot import platformdirs; both must still name the same folders.
    assert _paths.config_dir() == platformdirs.user_config_dir("gatesh")
    assert _paths.state_dir() == platformdirs.user_state_dir("gatesh")
    assert _paths.data_dir() == platformdirs.user_data_dir("gatesh")
    assert _paths.runtime_dir() == platformdirs.user_runtime_dir("gatesh")


def test_runtime_dir_falls_back_per_uid(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_RUNTIME_DIR", "relative/not/allowed")
    assert _paths.runtime_dir() == f"/tmp/gatesh-{os.getuid()}"


def test_protected_paths_include_config_state_and_socket() -> None:
    p = _paths.current()
    assert p.config_dir in p.protected and p.state_dir in p.protected
    assert p.socket.startswith(p.runtime_dir) and p.audit_log.startswith(p.state_dir)


def test_package_import_is_light() -> None:
    # `import gatesh` (which every -c call pays for) must not load the parsers or the SDK.
    code = "import sys, gatesh, gatesh._entry, gatesh._paths; print(sorted(m for m in sys.modules if m.split('.')[0] in ('tree_sitter', 'bashlex', 'anthropic', 'httpx', 'blessed', 'tomllib', 'gatesh')))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['gatesh', 'gatesh._entry', 'gatesh._paths']"


def test_current_follows_every_variable_it_reads(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # current() is remembered per environment: each variable it reads gives its own answer.
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in (
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        "XDG_DATA_HOME",
        "XDG_RUNTIME_DIR",
        "GATESH_SYSTEM_CONFIG",
    ):
        monkeypatch.delenv(var, raising=False)
    before = _paths.current()
    assert before.config_dir == str(tmp_path / ".config" / "gatesh") and before.home == str(
        tmp_path
    )
    assert _paths.current() == before
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "c"))
    assert _paths.current().config_dir == str(tmp_path / "c" / "gatesh")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "s"))
    assert _paths.current().state_dir == str(tmp_path / "s" / "gatesh")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "d"))
    assert _paths.current().install_record == str(tmp_path / "d" / "gatesh" / "install.json")
    monkeypatch.setenv("GATESH_SYSTEM_CONFIG", str(tmp_path / "sys.toml"))
    assert _paths.current().system_config == str(tmp_path / "sys.toml")
    run = tmp_path / "run"
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    assert _paths.current().runtime_dir == f"/tmp/gatesh-{os.getuid()}"  # not a folder yet
    run.mkdir()
    assert _paths.current().runtime_dir == str(run / "gatesh")  # the same value, now a folder
    monkeypatch.setenv("HOME", str(tmp_path / "other"))
    assert _paths.current().home == str(tmp_path / "other")
    assert _paths.current().config_dir == str(tmp_path / "c" / "gatesh")
    monkeypatch.delenv("HOME")
    assert _paths.current() == _paths._compute_current()  # no HOME: the user database decides

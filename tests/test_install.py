"""gatesh install (settings merging, shims), gatesh doctor, and install.sh on an empty HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _daemon import stop_daemon_at as _kill_daemon

from gatesh import doctor, install
from gatesh.install import HARNESS_SPECS, install_harness, install_shims, merge_hooks, remove_hooks
from gatesh.launcher import read_launcher

REPO_ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = "/opt/gatesh/bin/gatesh"

FOREIGN = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]},
            {"matcher": "Write", "hooks": [{"type": "command", "command": "fmt"}]},
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def ours(data: dict[str, Any], harness: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        (event, h)
        for event, groups in data.get("hooks", {}).items()
        for g in groups
        for h in g.get("hooks", [])
        if install.is_ours(h, harness)
    ]


@pytest.mark.parametrize("harness", list(HARNESS_SPECS))
def test_merge_keeps_everything_else_and_is_idempotent(harness: str) -> None:
    spec = HARNESS_SPECS[harness]
    merged = merge_hooks(FOREIGN, spec, LAUNCHER)
    assert merged["model"] == "opus" and merged["permissions"] == FOREIGN["permissions"]
    assert merged["hooks"]["Stop"] == FOREIGN["hooks"]["Stop"]
    assert merged["hooks"]["PreToolUse"][:2] == FOREIGN["hooks"]["PreToolUse"]
    events = sorted(e for e, _ in ours(merged, harness))
    assert events == sorted([spec.gate_event, spec.prompt_event])
    gate_group = next(
        g for g in merged["hooks"][spec.gate_event] if install.is_ours(g["hooks"][0], harness)
    )
    assert gate_group["matcher"] == spec.matcher
    assert merge_hooks(merged, spec, LAUNCHER) == merged
    assert remove_hooks(merged, harness) == FOREIGN
    assert (
        FOREIGN["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "my-linter"
    )  # input untouched


def test_hook_command_fails_closed_when_gatesh_cannot_run(tmp_path: Path) -> None:
    command = install.hook_command("claude-code", str(tmp_path / "missing" / "gatesh"))
    proc = subprocess.run(["sh", "-c", command], input=b"{}", capture_output=True)
    assert proc.returncode == 2 and b"refused" in proc.stderr


def test_hook_command_quotes_the_launcher() -> None:
    assert install.hook_command("codex", "/a b/gatesh").startswith("'/a b/gatesh' hook codex ||")


def _install(harness: str) -> str:
    """install_harness; for Codex, with no codex to trust the hooks: the hooks are written, and
    the install stops saying what the person must do (the real Codex: tests/harness)."""
    if harness != "codex":
        return install_harness(harness, launcher=LAUNCHER)
    with pytest.raises(install.InstallError) as raised:
        install_harness(harness, launcher=LAUNCHER, codex="/nonexistent/codex")
    assert "skips hooks nobody has trusted" in str(raised.value) and "/hooks" in str(raised.value)
    return str(raised.value)


@pytest.mark.parametrize("harness", list(HARNESS_SPECS))
def test_install_harness_backs_up_and_uninstalls(harness: str, isolated_home: Path) -> None:
    path = Path(install.settings_path(HARNESS_SPECS[harness]))
    assert str(path).startswith(str(isolated_home))
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(FOREIGN))
    path.chmod(0o640)
    _install(harness)
    backups = list(path.parent.glob(path.name + ".bak-gatesh-*"))
    assert len(backups) == 1 and json.loads(backups[0].read_text()) == FOREIGN
    assert (path.stat().st_mode & 0o777) == 0o640
    installed = json.loads(path.read_text())
    assert len(ours(installed, harness)) == 2
    message = _install(harness)
    assert "nothing changed" in message or harness == "codex"
    assert len(list(path.parent.glob(path.name + ".bak-gatesh-*"))) == 1
    install_harness(harness, uninstall=True)
    assert json.loads(path.read_text()) == FOREIGN


def test_install_creates_a_missing_settings_file(isolated_home: Path) -> None:
    install_harness("claude-code", launcher=LAUNCHER)
    data = json.loads((isolated_home / ".claude" / "settings.json").read_text())
    assert {e for e, _ in ours(data, "claude-code")} == {"PreToolUse", "UserPromptSubmit"}
    install_harness("claude-code", uninstall=True)
    assert json.loads((isolated_home / ".claude" / "settings.json").read_text()) == {}


def test_settings_env_override(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(isolated_home / "cx"))
    assert install.settings_path(HARNESS_SPECS["codex"]) == str(isolated_home / "cx" / "hooks.json")


@pytest.mark.parametrize(
    "text", ["{not json", "[1]", '{"hooks": []}', '{"hooks": {"PreToolUse": {}}}']
)
def test_unparseable_or_odd_settings_are_never_clobbered(text: str, isolated_home: Path) -> None:
    path = isolated_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    code = install.main(["claude-code"])
    assert code == 1
    assert path.read_text() == text
    assert not list(path.parent.glob("*.bak-gatesh-*"))


def test_cli_usage() -> None:
    assert install.main(["nope"]) == 2
    assert install.main(["shims", "--global"]) == 2
    assert install.main(["git", "--settings", "x"]) == 2


def test_shims_link_to_the_launcher(isolated_home: Path, tmp_path: Path) -> None:
    launcher = tmp_path / "gatesh"
    launcher.write_text("#!/bin/sh\n")
    launcher.chmod(0o755)
    text = install_shims(launcher=str(launcher))
    folder = isolated_home / ".local" / "share" / "gatesh" / "shims"
    for name in ("bash", "zsh", "sh"):
        assert os.readlink(folder / name) == str(launcher)
    assert f"CLAUDE_CODE_SHELL={folder / 'bash'}" in text and "/etc/shells" in text
    install_shims(launcher=str(launcher))  # idempotent
    install_shims(uninstall=True)
    assert not folder.exists()


def test_shims_never_replace_a_real_file(isolated_home: Path) -> None:
    folder = isolated_home / ".local" / "share" / "gatesh" / "shims"
    folder.mkdir(parents=True)
    (folder / "bash").write_text("mine")
    with pytest.raises(install.InstallError):
        install_shims(launcher="/usr/bin/true")
    assert (folder / "bash").read_text() == "mine"


# --- doctor -------------------------------------------------------------------------------------


class FakeResponse:
    def __init__(self, status: int) -> None:
        self.status = status

    def __enter__(self) -> FakeResponse:
        return self

    def __exit__(self, *_: object) -> None:
        return None


def _anthropic_config() -> Any:
    from gatesh.config import default

    cfg = default()
    return cfg.__class__(
        **{
            **cfg.__dict__,
            "rater": cfg.rater.__class__(backend="anthropic", base_url="http://127.0.0.1:9"),
        }
    )


def test_doctor_rater_lists_models_without_sending_a_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[Any] = []

    def urlopen(request: Any, timeout: float) -> FakeResponse:
        seen.append(request)
        return FakeResponse(200)

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    [check] = doctor.check_rater(_anthropic_config(), urlopen=urlopen)
    assert check.status == "ok"
    assert (
        seen[0].full_url == "http://127.0.0.1:9/v1/models?limit=1" and seen[0].get_method() == "GET"
    )


def test_doctor_rater_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib.error

    cfg = _anthropic_config()
    [no_key] = doctor.check_rater(cfg)
    assert no_key.status == "FAIL" and "ANTHROPIC_API_KEY" in no_key.detail
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")

    def refused(request: Any, timeout: float) -> FakeResponse:
        raise urllib.error.URLError(ConnectionRefusedError(111, "Connection refused"))

    [down] = doctor.check_rater(cfg, urlopen=refused)
    assert down.status == "FAIL" and down.fix

    def unauthorized(request: Any, timeout: float) -> FakeResponse:
        raise urllib.error.HTTPError(request.full_url, 401, "no", {}, None)  # type: ignore[arg-type]

    [bad_key] = doctor.check_rater(cfg, urlopen=unauthorized)
    assert bad_key.status == "FAIL" and "rejected" in bad_key.detail


def test_doctor_builtin_rater_is_ok() -> None:
    from gatesh.config import default

    assert doctor.check_rater(default())[0].status == "ok"


def test_doctor_flags_a_shim_interpreter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shim = tmp_path / ".pyenv" / "shims" / "python3"
    shim.parent.mkdir(parents=True)
    shim.write_text('#!/usr/bin/env bash\nexec pyenv exec python3 "$@"\n')
    shim.chmod(0o755)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "gatesh").write_text(f"#!{shim} -IS\n")
    (bindir / "gatesh").chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    [check] = doctor.check_launcher()
    assert check.status == "FAIL" and check.fix


def test_doctor_flags_open_permissions(isolated_home: Path) -> None:
    from gatesh import _paths

    paths = _paths.current()
    os.makedirs(paths.runtime_dir, exist_ok=True)
    os.chmod(paths.runtime_dir, 0o755)
    checks = {c.name: c for c in doctor.check_permissions(paths)}
    assert checks["runtime folder"].status == "FAIL"
    assert checks["runtime folder"].fix == f"chmod 0700 {paths.runtime_dir}"


def test_doctor_no_launcher_fails(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    [check] = doctor.check_launcher()
    assert check.status == "FAIL" and "PATH" in check.fix


# --- install.sh on an empty HOME ------------------------------------------------------------


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.slow
def test_install_sh_on_an_empty_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    bindir = home / ".local" / "bin"
    env = {
        "HOME": str(home),
        "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
        "XDG_RUNTIME_DIR": str(runtime),
        "PIP_CACHE_DIR": str(tmp_path / "pip-cache"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GATESH_PYTHON": sys.executable,
    }
    if sys.prefix == sys.base_prefix:
        # Fast: the venv sees this interpreter's packages, and pip installs gatesh alone.
        env.update(GATESH_INSTALL_SYSTEM_SITE="1", GATESH_INSTALL_PIP_ARGS="--no-deps")
    else:
        # Run from a venv, whose packages a new venv cannot see: pip fetches them (cached).
        env["PIP_CACHE_DIR"] = os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))
    try:
        for _ in range(2):  # idempotent: the second run updates in place
            proc = subprocess.run(
                ["sh", str(REPO_ROOT / "install.sh")],
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "doctor" in proc.stdout and "CLAUDE_CODE_SHELL" in proc.stdout
        launcher = bindir / "gatesh"
        # The real interpreter with -IS, directly or (with a faster one for -c) through /bin/sh.
        full, fast = read_launcher(str(launcher))
        assert full and "/shims/" not in full and "/shims/" not in (fast or ""), (
            launcher.read_text()
        )
        first = launcher.read_text().splitlines()[0]
        assert first == f"#!{full} -IS" or (first == "#!/bin/sh" and fast), launcher.read_text()

        proc = subprocess.run(
            [str(launcher), "-c", "echo ok"], env=env, capture_output=True, text=True, timeout=120
        )
        assert (proc.returncode, proc.stdout) == (0, "ok\n"), proc.stderr
        proc = subprocess.run(
            [str(launcher), "-c", "rm -rf /"], env=env, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 126 and "gatesh" in proc.stderr
        shim = home / ".local" / "share" / "gatesh" / "shims" / "bash"
        proc = subprocess.run(
            [str(shim), "-c", "echo from-shim"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (proc.returncode, proc.stdout) == (0, "from-shim\n"), proc.stderr

        proc = subprocess.run(
            [str(launcher), "doctor"], env=env, capture_output=True, text=True, timeout=180
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr

        proc = subprocess.run(
            [str(launcher), "install", "claude-code"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
    finally:
        _kill_daemon(runtime)

    proc = subprocess.run(
        ["sh", str(REPO_ROOT / "install.sh"), "--uninstall", "--purge"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _kill_daemon(runtime)
    # Nothing of gatesh's remains: only the standard parent folders, the harness settings file we
    # edited (now without gatesh's hooks) and its backup, and what other tools on PATH wrote.
    left = [p for p in _tree(home) if not p.startswith((".claude", ".rustup", ".cache"))]
    assert set(left) <= {".local", ".local/bin", ".local/share", ".local/state", ".config"}, left
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings == {}

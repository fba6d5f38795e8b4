"""`gatesh dump` and `gatesh doctor` as a person meets them (issue 18, item 15): the archive goes
outside the working tree and absent optional parts are not "unavailable"; a shim whose shell is
not installed is reported by doctor, and refuses with an audit line that says so (never an
`allow` line for a command that could not run)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from gatesh import _paths, install
from gatesh.launcher import write_launcher

GATESH = [sys.executable, "-m", "gatesh"]


def _run(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.slow
def test_dump_writes_outside_the_working_tree_and_names_absent_parts_as_such(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    cfg = Path(_paths.current().user_config)
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('rung = "auto"\n')
    out = _run([*GATESH, "dump"], repo)
    assert out.returncode == 0, out.stderr
    assert (
        _run(["git", "status", "--porcelain"], repo).stdout == ""
    )  # nothing new in the repository
    assert not list(repo.iterdir())[1:], list(repo.iterdir())
    assert "unavailable" not in out.stdout and "could not be included" not in out.stdout, out.stdout
    archive = Path(out.stdout.split("wrote ", 1)[1].split()[0])
    assert (
        archive.is_relative_to(_paths.current().state_dir) and archive.stat().st_mode & 0o077 == 0
    )
    with tarfile.open(archive) as tar:
        readme = tar.extractfile("gatesh-dump/README.txt").read().decode()  # type: ignore[union-attr]
        assert "gatesh-dump/config/user.toml" in tar.getnames()
    assert "Could not be included" not in readme, readme
    assert (
        "no system config file (optional)" in readme
        and "no project config file (optional)" in readme
    )


@pytest.mark.slow
def test_with_a_daemon_running_status_and_dump_carry_its_replies(tmp_path: Path) -> None:
    ran = _run([*GATESH, "-c", "echo up"], tmp_path, {"GATESH_SESSION": "dumped"})
    assert ran.returncode == 0 and ran.stdout == "up\n", ran.stderr  # the daemon started for it
    status = _run([*GATESH, "status", "--json"], tmp_path)
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    assert shown["ok"] is True and shown["daemon"]["pid"] > 0, shown
    assert [s["session"] for s in shown["sessions"]] == ["dumped"], shown["sessions"]
    out = _run([*GATESH, "dump"], tmp_path)
    assert out.returncode == 0 and "could not be included" not in out.stdout, out.stdout
    archive = Path(out.stdout.split("wrote ", 1)[1].split()[0])
    with tarfile.open(archive) as tar:
        part = {n: tar.extractfile(f"gatesh-dump/{n}") for n in ("status.json", "captures.json")}
        dumped = {n: json.loads(f.read()) for n, f in part.items() if f is not None}
    assert dumped["status.json"]["daemon"]["pid"] == shown["daemon"]["pid"], dumped
    assert dumped["captures.json"] == []  # the builtin rater calls no model


@pytest.mark.slow
def test_dump_still_writes_where_it_is_told(tmp_path: Path) -> None:
    target = tmp_path / "here.tar.gz"
    out = _run([*GATESH, "dump", "-o", str(target)], tmp_path)
    assert out.returncode == 0 and target.exists(), out.stderr


# --- a shim whose shell is missing ---------------------------------------------------------------


def _without_zsh(script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a mount namespace where /usr/bin/zsh (and /bin/zsh) is not executable."""
    zsh = [p for p in ("/usr/bin/zsh", "/bin/zsh") if os.path.exists(p) and not os.path.islink(p)]
    mounts = " && ".join(f"mount --bind /dev/null {p}" for p in zsh) or "true"
    return subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", f"{mounts} && {script}"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.fixture
def no_zsh_env(tmp_path: Path) -> dict[str, str]:
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no mount namespace here: {probe.stderr.decode().strip()}")
    # PATH without any folder that has a zsh: the shell's own folders are bind-mounted over.
    launcher = tmp_path / "bin" / "gatesh"
    launcher.parent.mkdir()
    write_launcher(str(launcher), fast=False)  # keeps the name a shim was called by
    install.install_shims(launcher=str(launcher))
    return {**os.environ, "PATH": f"{launcher.parent}:/usr/bin:/bin"}


@pytest.mark.slow
def test_doctor_does_not_call_the_zsh_shim_ok_without_zsh(no_zsh_env: dict[str, str]) -> None:
    out = _without_zsh(f"{sys.executable} -m gatesh doctor --json", no_zsh_env)
    checks = {c["name"]: c for c in json.loads(out.stdout)["checks"]}
    assert checks["shim zsh"]["status"] == "warn", checks
    assert "no real zsh is installed" in checks["shim zsh"]["detail"]
    assert "zsh" not in checks["shims"]["detail"]  # the ok line names only bash and sh
    # With zsh present the same shims are all ok.
    out = subprocess.run(
        [*GATESH, "doctor", "--json"], capture_output=True, text=True, timeout=120, env=no_zsh_env
    )
    checks = {c["name"]: c for c in json.loads(out.stdout)["checks"]}
    assert "shim zsh" not in checks and checks["shims"]["status"] == "ok", checks


@pytest.mark.slow
def test_a_shim_without_its_shell_refuses_with_an_audit_line_saying_so(
    no_zsh_env: dict[str, str], tmp_path: Path
) -> None:
    shim = Path(install.shims_dir()) / "zsh"
    marker = tmp_path / "ran"
    out = _without_zsh(f"{shim} -c 'touch {marker}'", {**no_zsh_env, "GATESH_SESSION": "nozsh"})
    assert out.returncode == 126, out.stdout + out.stderr
    assert "no real zsh is installed" in out.stderr and not marker.exists()
    lines = [json.loads(x) for x in Path(_paths.current().audit_log).read_text().splitlines()]
    mine = [r for r in lines if r.get("session") == "nozsh"]
    assert [r["action"] for r in mine] == ["refuse"], mine
    assert "no real zsh is installed" in mine[0]["reason"]

"""Where gatesh is installed, and that its code is the installed copy (issue 16, S3.4).

The install record (written by install.sh and ``gatesh install``, read at decision time), the
launcher's import path (only the venv's copy; nothing another user can write, nothing inside a
repository), and install.sh from a clone that is changed afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from _daemon import stop_daemon_at

from gatesh import _paths, doctor, install
from gatesh.launcher import (
    LauncherError,
    import_path_problems,
    installed_paths,
    read_import_path,
    render_launcher,
)
from gatesh.policy.selfprotect import Kind, protected_for

REPO_ROOT = Path(__file__).resolve().parent.parent


# --- the install record ---------------------------------------------------------------------


def test_record_merges_and_removes(tmp_path: Path) -> None:
    path = str(tmp_path / "d" / "install.json")
    assert _paths.read_install_record(path) == _paths.Installation()  # none yet: nothing recorded
    _paths.update_install_record(
        path,
        _paths.RecordChange(
            launchers=("/opt/g/bin/gatesh",),
            venv="/opt/g/venv",
            harness={"/h/.claude/settings.json": "claude-code"},
        ),
    )
    _paths.update_install_record(
        path,
        _paths.RecordChange(
            harness={"/h/.gemini/settings.json": "gemini"},
            git={"/r/.git/hooks/pre-push": "repo"},
        ),
    )
    inst = _paths.read_install_record(path)
    assert inst.launchers == ("/opt/g/bin/gatesh",) and inst.venv == "/opt/g/venv"
    assert set(inst.harness_files) == {"/h/.claude/settings.json", "/h/.gemini/settings.json"}
    assert inst.git_hooks == ("/r/.git/hooks/pre-push",) and not inst.git_global
    _paths.update_install_record(
        path, _paths.RecordChange(harness={"/h/.claude/settings.json": None}, venv="")
    )
    inst = _paths.read_install_record(path)
    assert inst.harness_files == ("/h/.gemini/settings.json",) and inst.venv == ""
    assert (Path(path).stat().st_mode & 0o777) == 0o600


def test_a_broken_record_is_reported_and_protects_the_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "install.json"
    path.write_text("{not json")
    inst = _paths.read_install_record(str(path))
    assert inst.problem and inst == _paths.Installation(problem=inst.problem)  # nothing recorded
    monkeypatch.setenv("HOME", str(tmp_path))
    paths = _paths.GatePaths(
        str(tmp_path / "c"),
        str(tmp_path / "s"),
        str(tmp_path / "r"),
        str(tmp_path),
        str(tmp_path / "etc/config.toml"),
        str(tmp_path),
    )
    assert paths.install_record == str(path)
    assert protected_for(paths).kind_of(str(tmp_path / ".local/bin/gatesh")) is Kind.INSTALL


def test_relative_or_mistyped_record_entries_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "install.json"
    path.write_text(
        json.dumps({"launchers": ["bin/gatesh", 3, "/ok/gatesh"], "venv": ["/v"], "man": "x"})
    )
    inst = _paths.read_install_record(str(path))
    assert inst.launchers == ("/ok/gatesh",) and inst.venv == "/v" and inst.man_pages == ()


def test_the_folders_a_record_names_are_read_back_only_whole_and_absolute(tmp_path: Path) -> None:
    path = str(tmp_path / "install.json")
    folders = {"config": "/p/c", "state": "/p/s", "data": "/p/d", "runtime": "/run/p"}
    _paths.update_install_record(path, _paths.RecordChange(folders=folders, path="/usr/bin:/bin"))
    inst = _paths.read_install_record(path)
    assert inst.folders == _paths.RecordedFolders("/p/c", "/p/s", "/p/d", "/run/p")
    assert inst.path == "/usr/bin:/bin"
    for broken in ({**folders, "runtime": "run/p"}, {k: folders[k] for k in ("config", "state")}):
        Path(path).write_text(json.dumps({"folders": broken, "path": 7}))
        inst = _paths.read_install_record(path)
        assert inst.folders is None and inst.path == "" and not inst.problem, broken


def test_gatesh_install_records_what_it_wrote(isolated_home: Path, tmp_path: Path) -> None:
    launcher = tmp_path / "bin" / "gatesh"
    launcher.parent.mkdir()
    launcher.write_text("#!/bin/sh\n")
    launcher.chmod(0o755)
    settings = isolated_home / "custom" / "claude.json"
    install.install_harness("claude-code", settings=str(settings), launcher=str(launcher))
    install.install_shims(launcher=str(launcher))
    inst = _paths.current().installation()
    assert str(settings) in inst.harness_files and str(launcher) in inst.launchers
    assert inst.shims_dir == install.shims_dir()
    install.install_harness("claude-code", settings=str(settings), uninstall=True)
    assert str(settings) not in _paths.current().installation().harness_files


def test_git_install_records_its_hooks(isolated_home: Path) -> None:
    repo = isolated_home / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        install.install_git(launcher="/opt/g/bin/gatesh")
        hooks = _paths.current().installation().git_hooks
        assert str(repo / ".git" / "hooks" / "pre-push") in hooks
        install.install_git(uninstall=True)
        assert (
            str(repo / ".git" / "hooks" / "pre-push")
            not in _paths.current().installation().git_hooks
        )
    finally:
        os.chdir(cwd)


# --- the launcher's import path ------------------------------------------------------------


def test_the_launcher_names_its_import_path(tmp_path: Path) -> None:
    for fast in (None, "/usr/bin/python3-other"):
        dest = tmp_path / "gatesh"
        dest.write_text(render_launcher("/usr/bin/python3", ["/v/site", "/v/lib"], fast))
        assert read_import_path(str(dest)) == ["/v/site", "/v/lib"]
    (tmp_path / "other").write_text("#!/bin/sh\nexec true\n")
    assert read_import_path(str(tmp_path / "other")) is None


def test_import_path_problems(tmp_path: Path) -> None:
    clean = tmp_path / "clean"
    clean.mkdir(mode=0o755)
    clean.chmod(0o755)
    repo = tmp_path / "repo" / "src"
    repo.mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    package = tmp_path / "site"
    (package / "gatesh").mkdir(parents=True)
    (package / "gatesh").chmod(0o757)
    problems = import_path_problems([str(clean), str(repo), str(shared), str(package)])
    assert not any(str(clean) + ":" in p for p in problems), problems
    assert any("inside the git repository" in p and str(repo) in p for p in problems)
    assert any(str(shared) in p and "another user" in p for p in problems)
    assert any(str(package / "gatesh") in p for p in problems)


def _venv(path: Path) -> str:
    venv.EnvBuilder(with_pip=False).create(path)
    return str(path / "bin" / "python")


def test_installed_paths_take_only_a_copy_inside_the_venv(tmp_path: Path) -> None:
    python = _venv(tmp_path / "v")
    site = subprocess.run(
        [python, "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # An editable install: a .pth file pointing at a source folder the agent may be working in.
    checkout = tmp_path / "checkout"
    (checkout / "gatesh").mkdir(parents=True)
    (checkout / "gatesh" / "__init__.py").write_text("")
    Path(site, "gatesh-editable.pth").write_text(str(checkout) + "\n")
    with pytest.raises(LauncherError, match="not a copy inside that venv"):
        installed_paths(python)
    # A copy: the package inside the venv's own site folder.
    Path(site, "gatesh-editable.pth").unlink()
    (Path(site) / "gatesh").mkdir()
    (Path(site) / "gatesh" / "__init__.py").write_text("")
    assert installed_paths(python)[0] == os.path.realpath(site)
    # A link from the venv into the checkout is not a copy either.
    shutil.rmtree(Path(site) / "gatesh")
    (Path(site) / "gatesh").symlink_to(checkout / "gatesh")
    with pytest.raises(LauncherError):
        installed_paths(python)


def test_doctor_fails_a_launcher_that_imports_from_a_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    launcher = tmp_path / "gatesh"
    launcher.write_text(render_launcher(os.path.realpath(sys.executable), [str(repo)]))
    [check] = doctor.check_import_path(str(launcher))
    assert check.status == "FAIL" and "inside the git repository" in check.detail and check.fix
    clean = tmp_path / "site"
    clean.mkdir()
    launcher.write_text(render_launcher(os.path.realpath(sys.executable), [str(clean)]))
    [check] = doctor.check_import_path(str(launcher))
    assert check.status == "ok", check


# --- install.sh from a clone that changes afterwards --------------------------------------------


def _clone(dest: Path) -> Path:
    """A working copy of this project (a git repository, as a checkout an agent works in)."""
    ignore = shutil.ignore_patterns(
        ".git", "__pycache__", "*.egg-info", "build", ".pytest_cache", "benchmarks", "docs"
    )
    for name in ("gatesh", "man", "hooks"):
        if (REPO_ROOT / name).exists():
            shutil.copytree(REPO_ROOT / name, dest / name, ignore=ignore)
    for name in ("install.sh", "pyproject.toml", "README.md", "LICENSE"):
        if (REPO_ROOT / name).exists():
            shutil.copy2(REPO_ROOT / name, dest / name)
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    return dest


@pytest.mark.slow
def test_the_installed_gate_does_not_follow_the_clone_it_came_from(tmp_path: Path) -> None:
    clone = _clone(tmp_path / "clone")
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
        env.update(GATESH_INSTALL_SYSTEM_SITE="1", GATESH_INSTALL_PIP_ARGS="--no-deps")
    else:
        env["PIP_CACHE_DIR"] = os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))
    marker = tmp_path / "clone-code-ran"
    try:
        # Installed from inside the clone: its folder is the current directory of every step.
        proc = subprocess.run(
            ["sh", "install.sh"], cwd=clone, env=env, capture_output=True, text=True, timeout=900
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        launcher = bindir / "gatesh"
        folders = read_import_path(str(launcher))
        assert folders and not any(f.startswith(str(clone)) for f in folders), folders
        record = _paths.read_install_record(str(home / ".local/share/gatesh/install.json"))
        assert str(launcher) in record.launchers and record.source == str(clone)

        # The agent changes the clone: gatesh imported from there would leave a marker, and its
        # client would refuse everything (harmless both ways: nothing here could do damage).
        init = clone / "gatesh" / "__init__.py"
        init.write_text(
            init.read_text() + f"\nimport pathlib\npathlib.Path({str(marker)!r}).touch()\n"
        )
        (clone / "gatesh" / "client.py").write_text("raise SystemExit(99)\n")
        (clone / "gatesh" / "_wire.py").write_text("raise SystemExit(99)\n")

        for cwd in (clone, tmp_path):
            run_env = {**env, "PYTHONPATH": str(clone)}
            proc = subprocess.run(
                [str(launcher), "-c", "echo ok"],
                cwd=cwd,
                env=run_env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert (proc.returncode, proc.stdout) == (0, "ok\n"), proc.stderr
            proc = subprocess.run(
                [str(launcher), "-c", "echo x >> ~/.config/gatesh/config.toml"],
                cwd=cwd,
                env={**run_env, "GATESH_SESSION": f"clone-{cwd.name}"},
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert proc.returncode == 126 and "tampering" in proc.stderr, proc.stderr
        proc = subprocess.run(
            [str(launcher), "doctor", "--json"],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
        assert checks["import path"]["status"] == "ok", checks["import path"]
        assert not marker.exists(), "the installed gate imported code from the clone"
    finally:
        stop_daemon_at(runtime)

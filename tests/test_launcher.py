"""The launcher with a fast interpreter for the `-c` client (S14): what runs where, real processes.

The "fast" interpreter here is a link to this very interpreter under another name unless the
machine has a qualifying same-version system interpreter: either way the launcher starts on it
with ``-I -S`` and only gatesh's own folder importable, so anything that reached for a dependency
there would fail, and the dispatch to the full interpreter is exercised for real.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _daemon import daemon_pid, stop_daemon

from gatesh import _paths, doctor, install, launcher
from gatesh.launcher import (
    default_paths,
    fast_interpreter,
    real_interpreter,
    render_launcher,
    write_launcher,
)

# Every test here starts real interpreters: the full suite runs them, the fast loop does not.
pytestmark = pytest.mark.slow

FULL = real_interpreter()


@pytest.fixture(autouse=True)
def _stop_the_daemon() -> Iterator[None]:
    yield
    stop_daemon()


def _fast(tmp_path: Path) -> str:
    """A same-version interpreter that is not FULL's path: a system one when it qualifies, else a
    link to FULL (the launcher resolves links, so the link lives in a folder of its own name)."""
    for candidate in launcher.FAST_CANDIDATES:
        path = os.path.realpath(candidate.format(v=f"{sys.version_info[0]}.{sys.version_info[1]}"))
        if path != FULL and os.path.isfile(path):
            out = subprocess.run(
                [path, "-IS", "-c", "import sys; print(sys.implementation.cache_tag)"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            if out.stdout.strip() == sys.implementation.cache_tag:
                return path
    folder = tmp_path / "fastbin"
    folder.mkdir()
    link = folder / "python-fast"
    link.symlink_to(FULL)
    return str(link)


def _write(tmp_path: Path, fast: str, full: str = FULL) -> Path:
    dest = tmp_path / "gatesh"
    dest.write_text(render_launcher(full, default_paths(), fast))
    dest.chmod(0o755)
    return dest


def _run(
    argv: list[str], input: str | None = None, path: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GATESH_SESSION": "launcher"}
    if path is not None:
        env["PATH"] = path
    return subprocess.run(argv, input=input, capture_output=True, text=True, env=env, timeout=120)


def test_fast_launcher_runs_c_on_fast_and_the_rest_on_full(tmp_path: Path) -> None:
    fast = _fast(tmp_path)
    gatesh = _write(tmp_path, fast)
    text = gatesh.read_text()
    assert text.startswith("#!/bin/sh\n") and f"FAST='{fast}'" in text and f"FULL='{FULL}'" in text

    out = _run([str(gatesh), "-c", "echo hi; exit 3"])
    assert (out.returncode, out.stdout) == (3, "hi\n"), out.stderr
    out = _run([str(gatesh), "-c", "rm -rf /"])
    assert out.returncode == 126 and "gatesh" in out.stderr and out.stdout == ""

    # The daemon the client started runs on the full interpreter (it imports tree-sitter).
    pid = daemon_pid()
    assert pid is not None
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert (
        argv[0].decode() == FULL
        and argv[1:3] == [b"-IS", b"-c"]
        and argv[4:6] == [b"gatesh", b"daemon"]
    ), argv

    # Subcommands run on the full interpreter, with argv[0] still the launcher.
    out = _run([str(gatesh), "--help"])
    assert out.returncode == 0 and "usage: gatesh" in out.stdout, out.stderr
    out = _run([str(gatesh), "status"])
    assert out.returncode == 0 and f"pid {pid}" in out.stdout, out.stdout + out.stderr
    out = _run(
        [str(gatesh), "explain", "--json", "ls"]
    )  # imports the parsers: full interpreter only
    assert out.returncode == 0 and '"action"' in out.stdout, out.stderr

    # A shim link runs the client too, and keeps its name.
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "bash").symlink_to(gatesh)
    out = _run([str(shims / "bash"), "-c", "echo via $0"])
    assert (out.returncode, out.stdout) == (0, "via bash\n"), out.stderr
    out = _run([str(shims / "bash")], input="echo from stdin\n")
    assert (out.returncode, out.stdout) == (0, "from stdin\n"), out.stderr


def test_only_shell_style_calls_and_hooks_start_on_the_fast_interpreter(tmp_path: Path) -> None:
    """The script's own choice: a stand-in for the fast interpreter logs each start."""
    log = tmp_path / "fast.log"
    fast = tmp_path / "python-fast"
    fast.write_text(f'#!/bin/sh\necho started >> {log}\nexec {FULL} "$@"\n')
    fast.chmod(0o755)
    gatesh = _write(tmp_path, str(fast))
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "sh").symlink_to(gatesh)
    for argv in (
        [str(gatesh), "-c", "true"],
        [str(gatesh), "-lc", "true"],
        [str(shims / "sh"), "-c", "true"],
        [str(gatesh), "hook", "claude-code"],
    ):
        log.write_text("")
        assert _run(argv, input=_pre_tool_use("ls")).returncode == 0
        assert log.read_text() == "started\n", argv
    for argv in ([str(gatesh), "--version"], [str(gatesh), "status"], [str(gatesh), "config"]):
        log.write_text("")
        out = _run(argv)
        assert out.returncode == 0, out.stderr
        assert log.read_text() == "", argv


def _pre_tool_use(command: str) -> str:
    return json.dumps(
        {
            "hook_event_name": "PreToolUse",
            "session_id": "launcher",
            "cwd": "/tmp",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }
    )


def _decision(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 0, out.stderr
    return str(json.loads(out.stdout)["hookSpecificOutput"]["permissionDecision"])


def test_a_hook_on_the_fast_interpreter_starts_the_daemon_on_the_full_one(tmp_path: Path) -> None:
    """`gatesh hook` starts on the fast interpreter (standard library only, S14); the daemon it
    starts, and the prompt it records, go through the full one."""
    gatesh = _write(tmp_path, _fast(tmp_path))
    assert (
        _decision(_run([str(gatesh), "hook", "claude-code"], input=_pre_tool_use("ls"))) == "allow"
    )
    pid = daemon_pid()
    assert pid is not None
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert argv[0].decode() == FULL and argv[4:6] == [b"gatesh", b"daemon"], argv
    assert (
        _decision(_run([str(gatesh), "hook", "claude-code"], input=_pre_tool_use("rm -rf ~")))
        == "deny"
    )
    prompt = json.dumps(
        {
            "hook_event_name": "UserPromptSubmit",
            "session_id": "launcher",
            "cwd": "/tmp",
            "prompt": "list the files please",
        }
    )
    env = {k: v for k, v in os.environ.items() if k != "GATESH_SESSION"}  # the harness: not gated
    out = subprocess.run(
        [str(gatesh), "hook", "claude-code"],
        input=prompt,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0 and out.stderr == "", out.stderr


def test_fast_launcher_falls_back_and_fails_closed(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    # The fast interpreter is gone: everything starts on the full one; doctor says so.
    gatesh = _write(tmp_path, str(tmp_path / "gone" / "python-fast"))
    out = _run([str(gatesh), "-c", f"touch {marker}; exit 7"])
    assert out.returncode == 7 and marker.exists(), out.stderr
    out = _run([str(gatesh), "-c", "rm -rf ~"])
    assert out.returncode == 126 and "gatesh" in out.stderr
    env_path = f"{tmp_path}:{os.environ['PATH']}"
    out = _run([str(gatesh), "doctor", "--json"], path=env_path)
    launcher_check = [c for c in json.loads(out.stdout)["checks"] if c["name"] == "launcher"]
    assert launcher_check and launcher_check[0]["status"] == "warn", out.stdout
    assert "python-fast" in launcher_check[0]["detail"] and "install.sh" in launcher_check[0]["fix"]
    # The full interpreter is gone: subcommands fail, naming it; nothing runs.
    marker.unlink()
    gatesh = _write(tmp_path, _fast(tmp_path), full=str(tmp_path / "gone" / "python3"))
    out = _run([str(gatesh), "status"])
    assert out.returncode in (126, 127) and "gone/python3" in out.stderr, out.stderr


def test_in_process_fallback_runs_on_the_full_interpreter(tmp_path: Path) -> None:
    """With no daemon, a client on the fast interpreter has the full one gate the command (the
    pipeline's dependencies are not importable where the client runs)."""
    fast = _fast(tmp_path)
    home = default_paths()[0]
    deps = default_paths()[1:]
    marker = tmp_path / "ran"
    code = (
        f"import sys; sys.path[:0] = [{home!r}]\n"
        "import gatesh._wire as w, gatesh._wire_start as ws\n"
        "w.START_WAIT_S = 0.1\n"
        "ws._spawn_daemon = lambda full, env: None  # no daemon can be started\n"
        "from gatesh._entry import main\n"
        f"sys.exit(main(sys.argv[1:], full=({FULL!r}, {deps!r})))\n"
    )
    out = _run([fast, "-IS", "-c", code, "gatesh", "-c", f"touch {marker}; exit 5"])
    assert out.returncode == 5 and marker.exists(), out.stderr
    out = _run([fast, "-IS", "-c", code, "gatesh", "-c", "rm -rf ~"])
    assert out.returncode == 126 and "gatesh" in out.stderr
    records = [
        json.loads(line) for line in Path(_paths.current().audit_log).read_text().splitlines()
    ]
    ran = [r for r in records if str(marker) in r["command"]]
    assert ran and ran[-1]["action"] == "allow" and "in-process gate" in ran[-1]["note"], ran
    # The hook adapter, on the fast interpreter too.
    hook = [fast, "-IS", "-c", code, "gatesh", "hook", "claude-code"]
    assert _decision(_run(hook, input=_pre_tool_use(f"ls {tmp_path}"))) == "allow"
    assert _decision(_run(hook, input=_pre_tool_use("rm -rf ~"))) == "deny"
    records = [
        json.loads(line) for line in Path(_paths.current().audit_log).read_text().splitlines()
    ]
    listed = [r for r in records if r["command"] == f"ls {tmp_path}"]
    assert listed and listed[-1]["surface"] == "hook" and "in-process gate" in listed[-1]["note"], (
        listed
    )
    assert daemon_pid() is None


def test_write_launcher_picks_no_second_interpreter_when_told(tmp_path: Path) -> None:
    dest = write_launcher(str(tmp_path / "gatesh"), fast=False)
    first = Path(dest).read_text().splitlines()[0]
    assert first == f"#!{FULL} -IS" and "FULL =" not in Path(dest).read_text()
    out = _run([dest, "-c", "echo one"])
    assert (out.returncode, out.stdout) == (0, "one\n"), out.stderr
    # The daemon this client started shows as `gatesh daemon`, as one a fast launcher starts
    # does: `ps` and `pgrep -f 'gatesh daemon'` find the same daemon on any machine.
    pid = daemon_pid()
    assert pid is not None
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert argv[0].decode() == FULL and argv[1:3] == [b"-I", b"-c"], argv
    assert argv[4:6] == [b"gatesh", b"daemon"], argv


def test_fast_interpreter_rejects_other_versions_and_untrusted_files(tmp_path: Path) -> None:
    home = default_paths()[0]
    other = tmp_path / "python-other"
    other.write_text("#!/bin/sh\necho cpython-39\n")  # answers the probe as another version
    other.chmod(0o755)
    assert fast_interpreter(FULL, home, candidates=[str(other), FULL]) is None
    assert launcher._trusted_file(str(other))
    other.chmod(0o757)
    assert not launcher._trusted_file(str(other))


def test_one_interpreter_launchers_keep_their_shapes() -> None:
    text = render_launcher(FULL, ["/p", "/q"])
    assert text.startswith(f"#!{FULL} -IS\n") and "FAST" not in text
    text = render_launcher("/" + "x" * 200 + "/python", ["/p", "/q"])
    assert text.startswith("#!/bin/sh\n") and '"$0" "$@"' in text and "del sys.argv[0]" in text


def test_a_shim_run_through_the_sh_launcher_counts_as_gatesh(tmp_path: Path) -> None:
    """S9.3: a process started by a bash/zsh/sh link through the /bin/sh launcher carries the
    interpreter's name, not the link's; the harness lookup must still skip it as gatesh."""
    from gatesh.daemon import procs

    gatesh = _write(tmp_path, _fast(tmp_path))
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "bash").symlink_to(gatesh)
    # An interactive-looking call that blocks: a script on stdin that is never closed.
    proc = subprocess.Popen(
        [str(shims / "bash"), "-s"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        info = procs.info(proc.pid)
        while (
            info is not None and not info.comm.startswith("python") and time.monotonic() < deadline
        ):
            time.sleep(0.01)
            info = procs.info(proc.pid)
        assert info is not None and info.comm.startswith("python"), info
        assert procs.is_gatesh(info)
    finally:
        proc.kill()
        proc.wait()


# --- the hook command `gatesh install` writes: the interpreter itself, no /bin/sh launcher ----------


def _link_to_full(tmp_path: Path) -> Path:
    """A "fast" interpreter this test may remove: a link to FULL in a folder of its own."""
    folder = tmp_path / "fastbin"
    folder.mkdir(exist_ok=True)
    link = folder / "python-fast"
    link.symlink_to(FULL)
    return link


@pytest.mark.parametrize("two", [True, False], ids=["fast and full", "one interpreter"])
def test_the_hook_command_starts_the_launchers_interpreter_directly(
    tmp_path: Path, two: bool
) -> None:
    """S14: a harness's hook entry starts the interpreter the launcher would start `gatesh hook`
    on, with -I -S and the launcher's own import folders (S3.4), not the /bin/sh launcher."""
    fast = _fast(tmp_path) if two else None
    gatesh = tmp_path / "gatesh"
    gatesh.write_text(render_launcher(FULL, default_paths(), fast))
    gatesh.chmod(0o755)
    command = install.hook_command("claude-code", str(gatesh))
    program = install.hook_program(command)
    assert program[0] == (fast or FULL) and program[1:3] == ["-IS", "-c"], command
    assert program[4:] == ["hook", "claude-code"] and install.hook_launcher(command) == str(gatesh)
    assert f"sys.path[:0]={json.dumps(default_paths()[:1])}" in program[3]
    assert install.is_ours({"command": command}, "claude-code")
    assert _decision(_run(["/bin/sh", "-c", command], input=_pre_tool_use("ls"))) == "allow"
    assert _decision(_run(["/bin/sh", "-c", command], input=_pre_tool_use("rm -rf ~"))) == "deny"
    # Broken input still answers deny in the harness's format, through the direct start.
    assert _decision(_run(["/bin/sh", "-c", command], input="{not json")) == "deny"


def test_a_direct_hook_falls_back_to_the_launcher_only_when_its_interpreter_is_gone(
    tmp_path: Path,
) -> None:
    link = _link_to_full(tmp_path)
    gatesh = _write(tmp_path, str(link))
    command = install.hook_command("claude-code", str(gatesh))
    assert install.hook_program(command)[0] == str(link)
    # Gone (a system upgrade): the launcher answers instead, on its full interpreter.
    link.unlink()
    assert _decision(_run(["/bin/sh", "-c", command], input=_pre_tool_use("ls"))) == "allow"
    # There but failing: blocked (exit 2), and the hook is not run a second time by the launcher.
    marker = tmp_path / "launcher-ran"
    link.write_text("#!/bin/sh\nexit 1\n")
    link.chmod(0o755)
    gatesh.write_text(f"#!/bin/sh\ntouch {marker}\n")
    out = _run(["/bin/sh", "-c", command], input=_pre_tool_use("ls"))
    assert out.returncode == 2 and "refused" in out.stderr and not marker.exists(), out
    # Both gone: blocked.
    link.unlink()
    gatesh.unlink()
    out = _run(["/bin/sh", "-c", command], input=_pre_tool_use("ls"))
    assert out.returncode == 2 and "refused" in out.stderr, out


def test_doctor_reads_a_direct_hook_command(tmp_path: Path) -> None:
    link = _link_to_full(tmp_path)
    gatesh = _write(tmp_path, str(link))
    install.install_harness("claude-code", launcher=str(gatesh))

    def status() -> tuple[str, str]:
        [check] = [c for c in doctor.check_integrations() if c.name == "claude-code hooks"]
        return check.status, check.detail

    assert status()[0] == "ok", status()
    # The launcher now imports from other folders: the hook entry is stale, say so.
    gatesh.write_text(render_launcher(FULL, [*default_paths(), str(tmp_path)], str(link)))
    assert status()[0] == "warn" and str(link) in status()[1], status()
    gatesh.write_text(render_launcher(FULL, default_paths(), str(link)))
    link.unlink()  # falls back to the launcher: still answers
    assert status()[0] == "ok", status()
    gatesh.unlink()  # nothing left to run: every command is refused
    assert status()[0] == "FAIL" and "missing" in status()[1], status()

"""Faults injected into real processes (S9.4, S13, S15): nothing runs ungated, nothing decided is
lost, and the message says what to fix.

Each test runs ``python -m gatesh -c`` clients against a daemon started on demand in the test's own
HOME (tests/conftest.py) and stops that daemon by the pid in its lock file.
"""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _daemon import alive, daemon_pid, stop_daemon

from gatesh import _paths
from gatesh._types import Outcome, Verdict
from gatesh.rater._cache import VerdictCache, cache_key
from gatesh.testing.model_server import ModelServer, malformed, prose, server_error, slow, tool_use

pytestmark = pytest.mark.slow

GATESH = [sys.executable, "-m", "gatesh"]


# --- helpers ---------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def daemon_cleanup() -> Iterator[None]:
    yield
    stop_daemon()


@pytest.fixture
def project() -> Path:
    path = Path.home() / "proj"
    path.mkdir()
    return path


def gate(
    cmd: str,
    *,
    session: str = "f",
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 90,
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **(env or {}), "GATESH_SESSION": session}
    return subprocess.run(
        [*GATESH, "-c", cmd],
        capture_output=True,
        text=True,
        env=full,
        cwd=cwd or Path.home(),
        timeout=timeout,
    )


def audit_records() -> list[dict]:
    path = Path(_paths.current().audit_log)
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in lines if r.get("action") != "exited"]  # decisions, not how runs ended


def wait_for(pred, timeout: float = 20) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return False


# --- SIGKILL under load ------------------------------------------------------------------------------


def test_sigkill_under_load_nothing_ungated_nothing_lost(project: Path) -> None:
    """32 concurrent clients, the daemon SIGKILLed three times while they run.

    Each client either ran (its marker file exists, exit 0, and its allow is in the audit log) or
    was refused (exit 126, a message, no marker). Hardline commands in the mix never run.
    """
    assert gate("true").returncode == 0
    markers = project / "m"
    markers.mkdir()
    results: dict[int, subprocess.CompletedProcess[str]] = {}
    commands: dict[int, str] = {}
    for i in range(32):
        if i % 8 == 7:  # a hardline action that would leave a marker if it ran
            commands[i] = f"touch {markers}/bad-{i} && rm -rf ~"
        else:
            commands[i] = f"touch {markers}/ok-{i}"

    def one(i: int) -> None:
        results[i] = gate(commands[i], session=f"k{i % 5}", cwd=project)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(32)]
    killed: list[int] = []
    for n, t in enumerate(threads):
        t.start()
        if n in (6, 15, 24):
            time.sleep(random.uniform(0.05, 0.3))
            pid = daemon_pid()
            if pid and alive(pid):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
    for t in threads:
        t.join()
    assert killed, "the daemon was never killed"
    allowed = {r["command"] for r in audit_records() if r["action"] == "allow"}
    ran = refused = 0
    for i, out in results.items():
        name = f"ok-{i}" if i % 8 != 7 else f"bad-{i}"
        exists = (markers / name).exists()
        if out.returncode == 0:
            ran += 1
            assert i % 8 != 7, f"a hardline command ran: {commands[i]}"
            assert exists
            assert any(name in c for c in allowed), f"{commands[i]} ran without an audit record"
        else:
            refused += 1
            assert out.returncode == 126, (out.returncode, out.stderr)
            assert out.stderr.strip(), "a refusal must say why"
            assert not exists, f"refused but ran: {commands[i]}"
    assert ran + refused == 32
    # The next call brings a daemon back.
    out = gate("echo back")
    assert out.stdout == "back\n", out.stderr
    assert daemon_pid() not in (None, *killed)


def _signal_during_a_model_call(
    project: Path, monkeypatch: pytest.MonkeyPatch, sig: signal.Signals
) -> tuple[subprocess.CompletedProcess[str], int]:
    """Send ``sig`` to the daemon while a check waits on a slow model; (the client's result, pid)."""
    with ModelServer() as server:
        server.set_fallback(slow(tool_use("rateCommand", {"outcome": "safe", "reason": "ok"}), 60))
        _anthropic_config(server.base_url, timeout_s=50)
        assert gate("true").returncode == 0  # read-only: no model call; the daemon is up
        pid = daemon_pid()
        assert pid
        box: dict[str, subprocess.CompletedProcess[str]] = {}
        t = threading.Thread(
            target=lambda: box.update(out=gate(f"touch {project}/slow", cwd=project))
        )
        t.start()
        assert wait_for(lambda: len(server.requests) >= 1), "the model was never asked"
        os.kill(pid, sig)
        # Generous: the model call alone would hold a daemon that waits for it for 50 s.
        assert wait_for(lambda: not alive(pid), 10), "the daemon waited for the model call"
        t.join(60)
        assert not (project / "slow").exists()
        return box["out"], pid


def test_sigkill_while_a_decision_waits_refuses(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon dies while the model is slow: the waiting client refuses and says how to recover."""
    out, _ = _signal_during_a_model_call(project, monkeypatch, signal.SIGKILL)
    assert out.returncode == 126
    assert "stopped answering" in out.stderr and "Run it again" in out.stderr, out.stderr


def test_sigterm_while_a_decision_waits_exits_at_once(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM while the model is slow: the daemon does not wait out the model call (the
    interpreter would join its worker thread); the waiting client refuses; nothing ran."""
    out, _ = _signal_during_a_model_call(project, monkeypatch, signal.SIGTERM)
    assert out.returncode == 126 and "stopped answering" in out.stderr, out.stderr
    assert not Path(_paths.current().socket).exists()


# --- a full disk for the audit log ------------------------------------------------------------------------


def _start_daemon(preexec=None) -> subprocess.Popen[bytes]:  # type: ignore[no-untyped-def]
    proc = subprocess.Popen(
        [*GATESH, "daemon", "--foreground"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=preexec,
    )
    sock = _paths.current().socket

    def up() -> bool:
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(sock)
            return True
        except OSError:
            return False

    assert wait_for(up, 30), "the daemon did not start"
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _full_disk_checks(project: Path) -> None:
    before = Path(_paths.current().audit_log).read_bytes()
    for cmd in (f"touch {project}/should-not-exist", "echo hello", "ls"):
        out = gate(cmd, cwd=project)
        assert out.returncode == 126, (cmd, out.stdout, out.stderr)
        assert "audit log could not be written" in out.stderr, out.stderr
        assert "free disk space" in out.stderr
        assert out.stdout == ""
    assert not (project / "should-not-exist").exists()
    # Nothing was allowed, so nothing is missing: no allow line appeared without the command running.
    assert Path(_paths.current().audit_log).read_bytes().startswith(before[: len(before)])


def test_audit_log_past_rlimit_fsize_refuses(project: Path) -> None:
    log = Path(_paths.current().audit_log)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(b'{"seed": true}\n' * 4000)  # 60 KB: every further byte is past the limit
    limit = log.stat().st_size

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = _start_daemon(cap)
    try:
        _full_disk_checks(project)
        assert proc.poll() is None, "the daemon died on EFBIG"
        status = subprocess.run(
            [*GATESH, "status", "--json"], capture_output=True, text=True, timeout=30
        )
        if status.returncode == 0 and status.stdout.strip().startswith("{"):
            daemon = json.loads(status.stdout).get("daemon", {})
            assert daemon.get("audit_failures", 1) >= 1
    finally:
        _stop(proc)
    # Space again: the next command runs and is logged.
    out = gate("echo again", cwd=project)
    assert out.stdout == "again\n", out.stderr
    assert any(r.get("command") == "echo again" and r["action"] == "allow" for r in audit_records())


def test_audit_log_on_a_full_tmpfs_refuses(project: Path) -> None:
    state = Path(_paths.current().state_dir)
    state.mkdir(parents=True, exist_ok=True)
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(state)],
        capture_output=True,
        text=True,
    )
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mount.stderr.strip()}")
    try:
        Path(_paths.current().audit_log).touch()
        fd = os.open(state / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"x" * 512):
                pass
        except OSError:
            pass  # ENOSPC: the folder is full
        finally:
            os.close(fd)
        proc = _start_daemon()
        try:
            _full_disk_checks(project)
            assert proc.poll() is None
        finally:
            _stop(proc)
    finally:
        subprocess.run(["umount", "-l", str(state)], check=False)


# --- a corrupted config -----------------------------------------------------------------------------------


def _user_config() -> Path:
    path = Path(_paths.current().user_config)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ('rung = "auto"\n\n[rater\nbackend = "builtin"\n', 3, "(syntax)"),
        ('rung = "auto"\nshell = "bash"\nrung_typo = 1\n', 3, "rung_typo"),
        ('# comment\nrung = "superauto"\n', 2, "rung"),
        (
            '[[allow]]\nmatch = "exact"\npattern = "ls"\n\n[[allow]]\nmatch = "regexp"\npattern = "x"\n',
            5,
            "allow[1]",
        ),
    ],
)
def test_corrupted_config_refuses_naming_file_line_key(
    project: Path, text: str, line: int, key: str
) -> None:
    assert gate("true").returncode == 0  # a daemon with a good config
    cfg = _user_config()
    cfg.write_text(text)
    for cmd in (f"touch {project}/x", "ls"):
        out = gate(cmd, cwd=project)
        assert out.returncode == 126, out.stderr
        assert f"{cfg}:{line}" in out.stderr, out.stderr
        assert key in out.stderr, out.stderr
    assert not (project / "x").exists()
    refused = [r for r in audit_records() if r.get("command") == "ls"]
    assert refused and all(r["action"] != "allow" for r in refused), "a refusal must be audited too"
    # `gatesh config` names the same place; fixing the file brings the gate back.
    shown = subprocess.run([*GATESH, "config"], capture_output=True, text=True, timeout=30)
    assert shown.returncode != 0 and f"{cfg}:{line}" in shown.stderr
    cfg.write_text('rung = "auto"\n')
    out = gate("echo fixed", cwd=project)
    assert out.stdout == "fixed\n", out.stderr


# --- a stale socket ----------------------------------------------------------------------------------------


def test_stale_socket_and_lock_are_recovered(project: Path) -> None:
    runtime = Path(_paths.current().runtime_dir)
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    sock_path = _paths.current().socket
    s = socket.socket(socket.AF_UNIX)
    s.bind(sock_path)  # a socket file with no listener: connect gets ECONNREFUSED
    s.close()
    Path(_paths.current().lock).write_text("999999\n")  # a lock naming a dead pid, not held
    out = gate("echo recovered", cwd=project)
    assert out.stdout == "recovered\n", out.stderr
    pid = daemon_pid()
    assert pid and pid != 999999 and alive(pid)
    with socket.socket(socket.AF_UNIX) as c:
        c.connect(sock_path)  # the new daemon listens on the same path


def test_socket_path_is_a_regular_file(project: Path) -> None:
    runtime = Path(_paths.current().runtime_dir)
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    Path(_paths.current().socket).write_text("junk")
    out = gate("echo ok", cwd=project)
    assert out.stdout == "ok\n", out.stderr
    out = gate("rm -rf ~", cwd=project)
    assert out.returncode == 126


# --- a model endpoint that hangs or answers garbage -----------------------------------------------------


def _anthropic_config(base_url: str, *, timeout_s: float = 2.0) -> None:
    """The model backend at ``base_url``, its key in the person's daemon.env (S9.7: a daemon a
    client starts takes no key from the client's environment)."""
    config = _user_config()
    config.write_text(
        f'[rater]\nbackend = "anthropic"\nbase_url = "{base_url}"\napi_key_env = "TEST_MODEL_KEY"\n'
        f"timeout_s = {timeout_s}\n\n[alignment]\ntimeout_s = {timeout_s}\n"
    )
    keys = config.parent / "daemon.env"
    keys.write_text("TEST_MODEL_KEY=sk-test-dummy\n")
    keys.chmod(0o600)


FAILURES = (
    ("timeout", slow(tool_use("rateCommand", {"outcome": "safe", "reason": "fine"}), 30)),
    ("malformed-json", malformed()),
    ("http-500", server_error()),
    ("prose", prose("Looks fine to me, go ahead.")),
    ("bad-fields", tool_use("rateCommand", {"outcome": "totally-safe", "reason": 7})),
)


def test_model_endpoint_failures_fail_closed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hanging model, garbage, a 500, prose, a malformed tool call: each command is refused (a
    rating that was never obtained goes to a person, nobody is watching), audited with its cause,
    and never cached — the same command asks the model again once it answers."""
    with ModelServer() as server:
        server.script(*(reply for _, reply in FAILURES))
        _anthropic_config(server.base_url, timeout_s=2.0)
        for name, _ in FAILURES:
            started = time.monotonic()
            out = gate(
                f"touch {project}/model-{name}", session=f"m-{name}", cwd=project, timeout=120
            )
            took = time.monotonic() - started
            assert out.returncode == 126, (name, out.stderr)
            assert not (project / f"model-{name}").exists()
            assert "no rating could be obtained" in out.stderr, out.stderr
            assert took < 30, f"{name} took {took:.0f}s: the timeout budget was not kept"
        assert len(server.requests) == len(FAILURES)
        records = {
            r["command"].rsplit("model-", 1)[-1]: r
            for r in audit_records()
            if "model-" in r.get("command", "")
        }
        for name, _ in FAILURES:
            rec = records[name]
            assert rec["action"] != "allow" and rec["outcome"] == Outcome.DESTRUCTIVE.value, rec
            assert rec["rater"]["fail_cause"] in ("timeout", "unparseable", "error"), rec["rater"]
            assert rec["reason"].startswith("Could not assess this command:"), rec["reason"]
        assert records["timeout"]["rater"]["fail_cause"] == "timeout"
        # Never cached: the model answers now, and the same command is asked about again.
        server.script(
            tool_use("rateCommand", {"outcome": "safe", "reason": "creates an empty file"})
        )
        again = gate(f"touch {project}/model-http-500", session="m-again", cwd=project)
        assert len(server.requests) == len(FAILURES) + 1
        assert again.returncode == 0, again.stderr
        assert (project / "model-http-500").exists()


def test_model_failure_message_names_the_cause(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusal names what failed (S4: "Could not assess this command: …"), so a person knows
    what to fix. In process: the daemon-less gate builds the same no-person message."""
    from gatesh.inprocess import gate as gate_here

    with ModelServer(fallback=server_error()) as server:
        _anthropic_config(server.base_url)
        result = gate_here(f"touch {project}/z", cwd=str(project), session="cause")
    assert result.exit_code == 126
    assert "Could not assess this command" in result.message, result.message


# --- clock jumps -----------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _verdict(reason: str = "lists files", fail: str = "") -> Verdict:
    if fail:
        return Verdict(
            Outcome.DESTRUCTIVE, f"Could not assess this command: {fail}", fail_cause=fail
        )
    return Verdict(Outcome.SAFE, reason)


def test_verdict_cache_survives_clock_jumps() -> None:
    clock = Clock()
    cache = VerdictCache(max_entries=8, ttl_s=60, clock=clock)
    key = cache_key(command="ls", cwd="/p", backend="anthropic", model="m", prompt_version="1")
    assert cache.put(key, _verdict())
    assert cache.get(key) is not None and cache.get(key).cached  # type: ignore[union-attr]
    clock.now += 10 * 365 * 86400.0  # forward ten years: expired, evicted, no crash
    assert cache.get(key) is None and len(cache) == 0
    assert cache.put(key, _verdict())
    clock.now -= 20 * 365 * 86400.0  # backwards twenty years: still a hit, never an exception
    assert cache.get(key) is not None
    clock.now += 20 * 365 * 86400.0 + 61  # and it expires once the clock passes its time limit
    assert cache.get(key) is None
    for bad in (float("nan"), float("inf"), -float("inf")):
        clock.now = bad
        cache.put(key, _verdict())
        cache.get(key)  # no exception, whatever it answers
    clock.now = 5.0
    cache.clear()
    assert not cache.put(key, _verdict(fail="timeout")), "a fail-closed verdict was cached"
    assert cache.get(key) is None
    for i in range(50):  # bounded whatever the clock does
        clock.now += random.choice([-1e6, 1e6, 0.001])
        cache.put(f"k{i}", _verdict())
    assert len(cache) <= 8


def test_daemon_decides_through_wall_clock_jumps(project: Path) -> None:
    """The daemon's own timestamps come from the wall clock; ``faketime``-free proof: the audit
    records stay parseable and ordered by arrival even when ``ts`` goes backwards (simulated by
    a record appended with an old ts), and ``gatesh log`` still reads them all."""
    assert gate("echo one", cwd=project).returncode == 0
    log = Path(_paths.current().audit_log)
    with open(log, "a") as f:
        f.write(
            json.dumps(
                {
                    "time": "1999-01-01T00:00:00+0000",
                    "ts": 915148800.0,
                    "session": "x",
                    "command": "echo from-the-past",
                    "action": "allow",
                    "stage": "rung",
                }
            )
            + "\n"
        )
    assert gate("echo two", cwd=project).returncode == 0
    commands = [r.get("command") for r in audit_records()]
    assert (
        commands.index("echo one")
        < commands.index("echo from-the-past")
        < commands.index("echo two")
    )
    shown = subprocess.run([*GATESH, "log", "--json"], capture_output=True, text=True, timeout=30)
    assert shown.returncode == 0, shown.stderr
    assert "echo two" in shown.stdout

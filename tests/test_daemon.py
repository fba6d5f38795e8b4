"""The daemon and ``gatesh -c`` end to end, with real processes (S9, S13, S15).

Each test has its own HOME and XDG folders (tests/conftest.py), so its own daemon; the daemon
started on demand is stopped (by the pid in its lock file) when the test ends.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _daemon import daemon_pid as _daemon_pid
from _daemon import judge_without_undo, subscribe
from _daemon import stop_daemon as _stop_daemon

from gatesh import _paths, client
from gatesh.daemon import protocol

pytestmark = pytest.mark.slow

GATESH = [sys.executable, "-m", "gatesh"]


@pytest.fixture(autouse=True)
def daemon_cleanup() -> Iterator[None]:
    yield
    _stop_daemon()


def run(
    cmd: str, *args: str, session: str | None = "t", cwd: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if session:
        env["GATESH_SESSION"] = session
    return subprocess.run(
        [*GATESH, "-c", cmd, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )


def audit() -> list[dict]:
    path = Path(_paths.current().audit_log)
    if not path.exists():
        return []
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [r for r in lines if r.get("action") != "exited"]  # decisions, not how runs ended


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=r, check=True, env=env)
    for i in range(5):
        (r / "f").write_text(str(i))
        subprocess.run(["git", "add", "f"], cwd=r, check=True, env=env)
        subprocess.run(["git", "commit", "-qm", f"c{i}"], cwd=r, check=True, env=env)
    judge_without_undo()  # the flows here argue about `git reset --hard HEAD~3` refused
    return r


def test_runs_the_command_with_its_own_status_and_args() -> None:
    out = run("echo hi; exit 3")
    assert out.stdout == "hi\n" and out.returncode == 3, out.stderr
    out = run('echo "$0 $1 $2"', "zero", "one", "two")
    assert out.stdout == "zero one two\n", out.stderr
    recs = audit()
    assert any(r["command"] == "echo hi; exit 3" and r["action"] == "allow" for r in recs)


def test_login_flag_and_lc() -> None:
    env = {**os.environ, "GATESH_SESSION": "t"}
    out = subprocess.run(
        [*GATESH, "-lc", "echo $0", "me"], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.stdout == "me\n", out.stderr


def test_hardline_refused_and_nothing_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    out = run(f"touch {marker}; rm -rf ~")
    assert out.returncode == 126
    assert "hardline" in out.stderr and "never runs" in out.stderr
    assert not marker.exists()
    assert audit()[-1]["stage"] == "hardline"


def test_negotiation_then_nobody_watching(repo: Path) -> None:
    cmd = "git reset --hard HEAD~3"
    first = run(cmd, session="neg", cwd=str(repo))
    second = run(cmd, session="neg", cwd=str(repo))
    for out in (first, second):
        assert out.returncode == 126, out.stderr
        assert "# why:" in out.stderr and "different command" in out.stderr  # the S8.1 moves
    third = run(cmd, session="neg", cwd=str(repo))
    assert third.returncode == 126
    assert "Approval required, but nobody is watching this session" in third.stderr
    assert "gatesh approve" in third.stderr
    assert "git reset --hard HEAD~3" in third.stderr
    # Nothing ran: HEAD still has all commits.
    log = subprocess.run(
        ["git", "log", "--oneline"], cwd=repo, capture_output=True, text=True
    ).stdout
    assert len(log.splitlines()) == 5
    recs = [r for r in audit() if r["session"] == "neg"]
    assert [r["action"] for r in recs] == ["reject", "reject", "refuse"]
    assert recs[-1]["pending_id"] and recs[-1]["answer"] == "nobody-watching"


def test_progress_resets_only_the_consecutive_count_and_nine_bound(repo: Path) -> None:
    cmd = "git reset --hard HEAD~3"
    actions = []
    for _ in range(4):
        for _ in range(2):
            actions.append(run(cmd, session="nine", cwd=str(repo)).returncode)
        assert run("git status", session="nine", cwd=str(repo)).returncode == 0
    assert actions == [126] * 8
    recs = [r for r in audit() if r["session"] == "nine" and r["command"] == cmd]
    assert [r["action"] for r in recs] == ["reject"] * 8
    assert [r["negotiation"]["consecutive"] for r in recs] == [1, 2] * 4
    assert [r["negotiation"]["since_person"] for r in recs] == list(range(1, 9))
    ninth = run(cmd, session="nine", cwd=str(repo))
    assert "nobody is watching" in ninth.stderr


def test_claude_code_wrapper_gates_the_inner_command(repo: Path, tmp_path: Path) -> None:
    cwd_file = tmp_path / "claude-1a2b-cwd"

    def wrap(inner: str) -> str:
        quoted = inner.replace("'", "'\"'\"'")
        return (
            f"source ~/.claude/shell-snapshots/snapshot-bash-1.sh 2>/dev/null || true && "
            f"eval '{quoted}' < /dev/null && pwd -P >| {cwd_file}"
        )

    out = run(wrap("echo 'inner ran'"), session="cc", cwd=str(repo))
    assert out.returncode == 0 and out.stdout == "inner ran\n", out.stderr
    assert cwd_file.read_text().strip() == str(repo)
    cwd_file.unlink()
    out = run(wrap("git reset --hard HEAD~3"), session="cc", cwd=str(repo))
    assert out.returncode == 126
    assert not cwd_file.exists()
    rec = audit()[-1]
    assert rec["command"] == "git reset --hard HEAD~3"
    assert rec["facts"]["harness"] == "claude-code"


def test_bash_named_link(tmp_path: Path) -> None:
    from gatesh.launcher import write_launcher

    shims = tmp_path / "shims"
    shims.mkdir()
    launcher = write_launcher(str(tmp_path / "gatesh"))
    (shims / "bash").symlink_to(launcher)
    env = {**os.environ, "PATH": f"{shims}:{os.environ['PATH']}", "GATESH_SESSION": "shim"}
    out = subprocess.run(
        ["bash", "-c", "echo via shim; exit 4"], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.stdout == "via shim\n" and out.returncode == 4, out.stderr
    out = subprocess.run(
        ["bash", "-lc", "rm -rf ~"], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 126
    script = tmp_path / "x.sh"
    script.write_text("echo from script\n")
    out = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout == "from script\n", out.stderr
    out = subprocess.run(
        ["bash"], input="echo from stdin\n", capture_output=True, text=True, env=env, timeout=60
    )
    assert out.stdout == "from stdin\n", out.stderr
    assert any(r["session"] == "shim" and r["command"] == "echo from stdin\n" for r in audit())


def test_sigkill_during_burst_loses_nothing_and_restarts(tmp_path: Path) -> None:
    assert run("true").returncode == 0  # daemon up
    pid = _daemon_pid()
    assert pid
    results: list[tuple[str, subprocess.CompletedProcess[str]]] = []

    def one(i: int) -> None:
        marker = f"burst-{i}"
        results.append((marker, run(f"echo {marker}", session=f"b{i % 4}")))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    os.kill(pid, signal.SIGKILL)
    for t in threads:
        t.join()
    logged = {r["command"] for r in audit() if r["action"] == "allow"}
    for marker, out in results:
        if out.returncode == 0:
            assert out.stdout == f"{marker}\n"
            assert f"echo {marker}" in logged, marker  # ran => its decision is in the audit log
        else:
            assert out.returncode == 126 and out.stdout == ""
    assert run("echo back").stdout == "back\n"
    assert _daemon_pid() not in (None, pid)


def _raw(lines: list[bytes], *, hello: bool = True) -> list[dict]:
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(20)
    s.connect(_paths.current().socket)
    if hello:
        s.sendall(b'{"v":1,"hello":"check","pid":%d}\n' % os.getpid())
    for line in lines:
        s.sendall(line)
    s.shutdown(socket.SHUT_WR)
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    return [json.loads(x) for x in data.splitlines() if x.strip()]


def test_a_hello_whose_request_follows_gets_the_welcome_with_the_reply() -> None:
    """S14: the welcome of a client that says its first request follows in the hello's write comes
    in the same write as the first line answered (one wake-up of the client less); the welcome of
    any other client comes at once."""
    assert run("true").returncode == 0  # the daemon is up
    hello = {"v": 1, "hello": "check", "pid": os.getpid()}
    for follows in (True, False):
        s = socket.socket(socket.AF_UNIX)
        s.connect(_paths.current().socket)
        try:
            s.sendall((json.dumps({**hello, "request_follows": follows}) + "\n").encode())
            s.settimeout(1.0)
            if not follows:
                assert [json.loads(x).get("welcome") for x in s.recv(65536).splitlines()] == [
                    "check"
                ]
                continue
            with pytest.raises(TimeoutError):
                s.recv(65536)  # held back until there is a reply to send it with
            s.settimeout(20)
            s.sendall(b'{"op": "ping"}\n')
            lines = [json.loads(x) for x in s.recv(65536).splitlines()]
            assert (
                [x.get("welcome") for x in lines[:1]] == ["check"]
                and lines[1:2]
                and lines[1]["pong"]
            ), lines
        finally:
            s.close()


def test_a_hook_client_is_not_registered_as_a_gated_shell() -> None:
    """A hook client exits after its answer and nothing runs under it, so it is not recorded as a
    gated shell; a -c client is (its process becomes the command's shell), so a human-only verb
    from a process it starts is refused (S9.5)."""
    assert run("true").returncode == 0
    child = (
        "import os\nfrom gatesh import client\n"
        "r = client.request('human', {'op': 'resume', 'session': 'reg', 'pid': os.getpid()}, start=False)\n"
        "print('refused' if r.get('refused') else 'not refused')\n"
    )
    code = (
        "import subprocess, sys\nfrom gatesh import client\n"
        "r = client.check('true', cwd='/', session='reg', surface=sys.argv[1])\n"
        "assert r.action == 'allow', r\n"
        "sys.stdout.write(subprocess.run([sys.executable, '-c', sys.argv[2]], capture_output=True, "
        "text=True).stdout)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "GATESH_SESSION"}
    for surface, verdict in (("hook", "not refused"), ("-c", "refused")):
        out = subprocess.run(
            [sys.executable, "-c", code, surface, child],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert out.stdout.strip() == verdict, (surface, out.stdout, out.stderr)


def test_bad_input_never_crashes_the_daemon() -> None:
    assert run("true").returncode == 0
    pid = _daemon_pid()
    cases = [
        b"not json\n",
        b"\xff\xfe garbage \x00\x01\n",
        b'{"op": "check", "command": "\xff\xfe", "cwd": "/"}\n',
        b"[" * 10000 + b"]" * 10000 + b"\n",
        b'{"op":"check","command":' + b"[" * 5000 + b"]" * 5000 + b',"cwd":"/"}\n',
        b'{"op": "check", "command": 5, "cwd": "/"}\n',
        b'{"op": "check", "command": "ls", "cwd": "relative"}\n',
        b'{"op": "nope"}\n',
        b"42\n",
    ]
    for case in cases:
        replies = _raw([case])
        final = [r for r in replies if "welcome" not in r]
        assert final and final[-1]["ok"] is False, case[:40]
        assert final[-1]["action"] == "refuse" and final[-1]["exit"] == 126
    # A NUL in the command is read as unreadable: refused or rated, never a crash.
    replies = _raw([b'{"op":"check","command":"ls\\u0000rm -rf /","cwd":"/","session":"nul"}\n'])
    assert replies[-1]["action"] != "allow"
    # A line over 1 MiB: an error reply, then the connection closes.
    replies = _raw([b'{"op":"check","command":"' + b"a" * (protocol.MAX_LINE + 10) + b'"}\n'])
    assert replies[-1]["ok"] is False
    # A bad hello closes the connection.
    assert _raw([b'{"v": 99, "hello": "check"}\n'], hello=False)[-1]["ok"] is False
    assert _daemon_pid() == pid
    os.kill(pid, 0)
    assert run("echo still").stdout == "still\n"


def test_human_verbs_refused_from_a_gated_session(repo: Path) -> None:
    cmd = "git reset --hard HEAD~3"
    for _ in range(3):
        out = run(cmd, session="hv", cwd=str(repo))
    pending = out.stderr.split("Pending id ")[1].split(":")[0]
    # From inside a gated session (GATESH_SESSION in the environment): refused.
    env = {**os.environ, "GATESH_SESSION": "hv"}
    code = (
        "from gatesh import client; import json, sys; "
        f"print(json.dumps(client.request('human', {{'op': 'approve', 'pending_id': {pending!r}}})))"
    )
    gated = json.loads(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=30
        ).stdout
    )
    assert gated["ok"] is False and "gated session" in gated["error"]
    # From a person's terminal (no gated ancestor): approved; the agent's retry runs once.
    reply = client.request("human", {"op": "approve", "pending_id": pending})
    assert reply["ok"] and reply["state"] == "approved"
    assert run(cmd, session="hv", cwd=str(repo)).returncode == 0
    assert run(cmd, session="hv", cwd=str(repo)).returncode == 126


def test_watcher_gets_events_and_answers() -> None:
    """A subscribed watcher sees rounds and escalations, and its answer decides."""
    from gatesh.daemon.procs import gated_ancestry

    assert gated_ancestry(os.getpid()) is None  # the test runner is a person's process
    assert run("true").returncode == 0
    s, f = _watcher()
    os.makedirs(os.path.expanduser("~/.config/gatesh"), exist_ok=True)
    Path(os.path.expanduser("~/.config/gatesh/config.toml")).write_text('rung = "manual"\n')
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("out", run("echo asked", session="w")))
    t.start()
    pending = None
    while pending is None:
        ev = json.loads(f.readline())
        if ev.get("event") == "escalation":
            pending = ev["pending_id"]
            assert ev["command"] == "echo asked" and "once" in ev["choices"]
    f.write(
        b'{"op":"answer","pending_id":"%s","answer":"once","pid":%d}\n'
        % (pending.encode(), os.getpid())
    )
    f.flush()
    t.join(60)
    assert box["out"].stdout == "asked\n", box["out"].stderr
    s.close()


def _watcher() -> tuple[socket.socket, Any]:
    """A raw subscribed watcher (role ``watch``) on the running daemon: (socket, its file)."""
    s, f, _ = subscribe()
    return s, f


def _until(f: Any, pred: Any) -> dict:
    while True:
        msg = json.loads(f.readline())
        if pred(msg):
            return msg


def test_halt_run_anyway_from_a_watcher_runs_the_one_command_once() -> None:
    """S3.7: an attack halts the session; a watcher's `run anyway` (typed in full) runs that one
    command for the agent's waiting call; the halt stays; nobody watching → refused at once, and
    `gatesh approve ID` lets the retry run once."""
    assert run("true").returncode == 0
    conf = Path(os.path.expanduser("~/.config/gatesh"))
    conf.mkdir(parents=True, exist_ok=True)
    marker = conf / "marker"
    attack = "touch ~/.config/gatesh/marker"
    s, f = _watcher()
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("out", run(attack, session="h")))
    t.start()
    ev = _until(f, lambda m: m.get("event") == "halt")
    assert ev["choices"] == ["run anyway"] and ev["pending_id"] and ev["session"] == "h"
    assert "tampering with the gate" in ev["reason"] and ev["command"] == attack
    pid = ev["pending_id"].encode()
    # Only `run anyway` (or no) is offered: `once` is refused and changes nothing.
    f.write(
        b'{"op":"answer","id":1,"pending_id":"%s","answer":"once","pid":%d}\n' % (pid, os.getpid())
    )
    f.flush()
    assert "not offered" in _until(f, lambda m: m.get("id") == 1)["error"]
    assert not marker.exists()
    f.write(
        b'{"op":"answer","id":2,"pending_id":"%s","answer":"run anyway","pid":%d}\n'
        % (pid, os.getpid())
    )
    f.flush()
    assert _until(f, lambda m: m.get("id") == 2)["ok"] is True
    t.join(60)
    out = box["out"]
    assert out.returncode == 0, out.stderr
    assert marker.exists()
    # The agent's terminal was told, once, that a person was being asked (S7).
    assert out.stderr.count("a person is being asked") == 1
    recs = [r for r in audit() if r.get("pending_id") == ev["pending_id"]]
    assert [(r["action"], r["answer"]) for r in recs] == [
        ("halt", "run anyway"),
        ("allow", "run anyway"),
    ]
    # Nothing is remembered: the session stays halted, the same command included.
    f.close()
    s.close()
    marker.unlink()
    assert run("echo after", session="h").returncode == 126
    out = run(attack, session="h")
    assert out.returncode == 126 and "halted" in out.stderr and not marker.exists()
    assert audit()[-1]["stage"] == "halted" and not audit()[-1]["pending_id"]
    # Nobody watching: the halt of a new session is refused at once, with an id a person approves
    # (this test process is a person's: it never ran a check itself, so it is not gated).
    start = time.monotonic()
    out = run(attack, session="h2")
    assert out.returncode == 126 and "halted" in out.stderr and time.monotonic() - start < 20
    assert "a person is being asked" not in out.stderr
    rec = audit()[-1]
    assert rec["action"] == "halt" and rec["session"] == "h2" and rec["pending_id"]
    reply = client.request("human", {"op": "approve", "pending_id": rec["pending_id"]})
    assert reply["ok"] and reply["state"] == "approved"
    assert run(attack, session="h2").returncode == 0 and marker.exists()
    assert run(attack, session="h2").returncode == 126  # once


def test_hook_prompt_is_a_mandate_that_carves_the_open_world_floor(tmp_path: Path) -> None:
    """S5.3: the harness's own record of what the user typed (UserPromptSubmit) reaches the
    session's window through `gatesh hook claude-code`; a PreToolUse whose host the user named is
    then allowed at auto. The same hook run from a gated ancestry is refused. (A POST: a static
    download is rated, not floored, S3.5.)"""
    cmd = "curl -X POST https://example.com/x"

    def hook(data: dict, **env: str) -> subprocess.CompletedProcess[str]:
        # An interactive Claude Code (its hooks see CLAUDE_CODE_ENTRYPOINT=cli): a person is there
        # to answer an `ask`.
        return subprocess.run(
            [*GATESH, "hook", "claude-code"],
            input=json.dumps(data),
            text=True,
            capture_output=True,
            timeout=60,
            env={**os.environ, "CLAUDE_CODE_ENTRYPOINT": "cli", **env},
        )

    pre = {
        "hook_event_name": "PreToolUse",
        "session_id": "cc1",
        "cwd": str(tmp_path),
        "tool_name": "Bash",
        "tool_input": {"command": cmd},
    }
    prompt = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "cc1",
        "cwd": str(tmp_path),
        "prompt": "please post to https://example.com/x for me",
    }

    def decision(out: subprocess.CompletedProcess[str]) -> str:
        assert out.returncode == 0, out.stderr
        return str(json.loads(out.stdout)["hookSpecificOutput"]["permissionDecision"])

    assert decision(hook(pre)) == "ask"  # the open-world floor: a person decides
    # The agent's own shell cannot feed the window: its hook run is refused.
    gated = hook(prompt, GATESH_SESSION="cc1")
    assert "could not record the prompt" in gated.stderr and "gated session" in gated.stderr
    assert decision(hook(pre)) == "ask"
    # The harness's hook (a person's ancestry) can.
    assert hook(prompt).returncode == 0
    out = hook(pre)
    assert decision(out) == "allow"
    assert "open-world floor was lifted" in json.loads(out.stdout).get("systemMessage", "")
    rec = [r for r in audit() if r["command"] == cmd][-1]
    assert rec["action"] == "allow" and rec["session"] == "cc1"


def test_mandate_channels() -> None:
    """Hook channels are accepted from a human-role client; unknown ones (and `watch`, which only
    a watcher connection carries) are refused."""
    for channel in ("codex-prompt", "gemini-prompt", "claude-code-prompt", "mandate"):
        reply = client.request(
            "human",
            {"op": "mandate", "text": f"words via {channel}", "session": "mc", "channel": channel},
        )
        assert reply["ok"] and reply["channel"] == channel and reply["admitted"] == ["mc"], reply
    for channel in (
        "watch",
        "env",
        "file",
        "claude-code-transcript",
    ):  # S5.3: a transcript is a file
        reply = client.request(
            "human", {"op": "mandate", "text": "x", "session": "mc", "channel": channel}
        )
        assert reply["ok"] is False and "unknown channel" in reply["error"]


def test_the_c_client_imports_no_os_before_exec(tmp_path: Path) -> None:
    """S14: the `-c` client (interpreter with -IS, as the launcher starts it) reaches exec without
    loading `os`, `json` or `socket` (`-X importtime` lists every import on stderr as it happens)."""
    assert run("true").returncode == 0  # the daemon is up
    root = str(Path(client.__file__).resolve().parents[1])
    code = (
        f"import sys; sys.path[:0] = [{root!r}]; from gatesh.client import shell_main; "
        "sys.exit(shell_main(['gatesh', '-c', 'echo ran']))"
    )
    env = {**os.environ, "GATESH_SESSION": "imports"}
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-IS", "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0 and out.stdout == "ran\n", out.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if "|" in line}
    assert "gatesh.client" in imported
    assert not imported & {"os", "json", "socket", "re", "typing", "posixpath", "__future__"}, (
        imported
    )


def _ignore_sigint() -> None:
    """As a shell's background job starts a program: SIGINT ignored, inherited over exec."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _within(pred: Any, timeout: float) -> bool:  # a bound for a hang, not a timing
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
@pytest.mark.parametrize("when", ["starting", "serving"])
def test_a_signal_stops_the_daemon_cleanly_whenever_it_comes(
    sig: signal.Signals, when: str, tmp_path: Path
) -> None:
    """SIGTERM or SIGINT (even one its starter ignored) stops the daemon at any point: while it
    still loads its parsers (its socket already bound, clients queuing on it), or while it serves.
    It exits 0, removes its socket, releases its lock, and the audit lines are in the file."""
    paths = _paths.current()
    proc = subprocess.Popen(
        [*GATESH, "daemon", "--foreground"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_ignore_sigint,
    )
    try:
        sock = Path(paths.socket)
        assert _within(sock.exists, 60), "the daemon never bound its socket"
        if when == "serving":
            ran = run("echo logged", cwd=str(tmp_path))
            assert ran.returncode == 0 and ran.stdout == "logged\n", ran.stderr
        proc.send_signal(sig)
        assert _within(lambda: proc.poll() is not None, 30), f"{sig.name} did not stop the daemon"
        stderr = proc.stderr.read().decode() if proc.stderr else ""
        assert proc.returncode == 0 and "Traceback" not in stderr, (proc.returncode, stderr)
        assert not sock.exists(), "the daemon left its socket behind"
        if when == "serving":
            audit = Path(paths.audit_log).read_text().splitlines()
            assert any(json.loads(line).get("command") == "echo logged" for line in audit)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

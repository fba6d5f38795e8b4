"""The gate's own defences (S9.1, S9.5, S9.6, S12): who may talk to the daemon, who may run the
human-only verbs, and which config tier may loosen what.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from _daemon import stop_daemon

from gatesh import _paths
from gatesh._errors import ConfigError
from gatesh._types import Action, Rung
from gatesh.config import load_config
from gatesh.daemon.procs import gated_ancestry
from gatesh.pipeline import decide

GATESH = [sys.executable, "-m", "gatesh"]


# --- helpers ----------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def daemon_cleanup() -> Iterator[None]:
    yield
    stop_daemon()


def gatesh(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    session: str | None = None,
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **(env or {})}
    if session is not None:
        full["GATESH_SESSION"] = session
    return subprocess.run(
        [*GATESH, *args],
        capture_output=True,
        text=True,
        env=full,
        cwd=cwd or Path.home(),
        timeout=90,
    )


@pytest.fixture
def project() -> Path:
    path = Path.home() / "proj"
    path.mkdir()
    return path


def write(path: str | Path, text: str) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


# --- socket and folder permissions; another uid ---------------------------------------------------------


@pytest.mark.slow
def test_socket_folder_0700_and_socket_0600() -> None:
    assert gatesh("-c", "true", session="p").returncode == 0
    paths = _paths.current()
    assert stat.S_IMODE(os.stat(paths.runtime_dir).st_mode) == 0o700
    st = os.lstat(paths.socket)
    assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
    assert st.st_uid == os.getuid()
    assert stat.S_IMODE(os.stat(paths.state_dir).st_mode) & 0o077 == 0
    assert stat.S_IMODE(os.stat(paths.audit_log).st_mode) & 0o077 == 0, (
        "the audit log is readable by others"
    )


def _as_nobody(sock_path: str, lines: list[bytes]) -> tuple[str, list[dict]]:
    """Connect to ``sock_path`` from a forked child running as ``nobody``; its outcome and replies."""
    user = pwd.getpwnam("nobody")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop to nobody, try, report through the pipe, never return
        result: dict = {}
        try:
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(10)
            try:
                s.connect(sock_path)
            except OSError as exc:
                result = {
                    "outcome": f"connect: {exc.__class__.__name__} errno={exc.errno}",
                    "replies": [],
                }
            else:
                s.sendall(b"".join(line + b"\n" for line in lines))
                data = b""
                try:
                    while chunk := s.recv(65536):
                        data += chunk
                except OSError:
                    pass
                result = {
                    "outcome": "connected",
                    "replies": [json.loads(x) for x in data.splitlines() if x.strip()],
                }
        except BaseException as exc:  # report, never let the child run pytest on
            result = {"outcome": f"child error: {exc!r}", "replies": []}
        os.write(w, json.dumps(result).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    result = json.loads(data)
    return result["outcome"], result["replies"]


@pytest.fixture
def shared_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A HOME that ``nobody`` can traverse down to the gatesh folder (0711), so only gatesh's own
    permissions and SO_PEERCRED stand between another uid and the socket."""
    if os.getuid() != 0:
        pytest.skip("needs root to run a client as nobody")
    base = Path(tempfile.mkdtemp(prefix="gb", dir="/tmp"))
    base.chmod(0o711)
    (base / "run").mkdir(mode=0o711)
    os.chmod(base / "run", 0o711)
    for var, sub in (
        ("HOME", ""),
        ("XDG_RUNTIME_DIR", "run"),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_DATA_HOME", ".local/share"),
    ):
        monkeypatch.setenv(var, str(base / sub) if sub else str(base))
    monkeypatch.setenv("GATESH_SYSTEM_CONFIG", str(base / "etc/config.toml"))
    try:
        yield base
    finally:
        stop_daemon()
        shutil.rmtree(base, ignore_errors=True)


HELLO_AND_CHECK = [
    b'{"v": 1, "hello": "check", "pid": 1}',
    b'{"op": "check", "command": "echo pwned", "cwd": "/tmp", "session": "nobody"}',
]


@pytest.mark.slow
def test_another_uid_is_refused(shared_home: Path) -> None:
    assert gatesh("-c", "true", session="p").returncode == 0
    sock = _paths.current().socket
    # 1. With gatesh's own permissions (folder 0700, socket 0600): refused at connect.
    outcome, replies = _as_nobody(sock, HELLO_AND_CHECK)
    assert outcome.startswith("connect: PermissionError"), outcome
    assert not replies
    # 2. Permissions loosened by hand: the daemon itself refuses the uid (SO_PEERCRED).
    os.chmod(_paths.current().runtime_dir, 0o711)
    os.chmod(sock, 0o666)
    outcome, replies = _as_nobody(sock, HELLO_AND_CHECK)
    assert outcome == "connected", outcome
    assert replies, "the daemon said nothing"
    assert all(r.get("ok") is False and r.get("action") == "refuse" for r in replies), replies
    assert any("65534" in r.get("error", "") for r in replies), replies
    assert not any("welcome" in r for r in replies)
    # 3. The human role is refused too (nobody is not a configured watcher).
    outcome, replies = _as_nobody(
        sock,
        [b'{"v": 1, "hello": "human", "pid": 1}', b'{"op": "resume", "session": "p", "pid": 1}'],
    )
    assert replies and all(r.get("ok") is False for r in replies)
    records = [json.loads(x) for x in Path(_paths.current().audit_log).read_text().splitlines()]
    assert not any(r.get("command") == "echo pwned" for r in records)


# --- human-only verbs from gated sessions (S9.5) ----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "verb",
    [["resume", "s1"], ["mandate", "delete it all"], ["approve", "abc123"], ["deny", "abc123"]],
)
def test_human_verbs_refused_with_gatesh_session_in_env(verb: list[str]) -> None:
    assert gatesh("-c", "true", session="g").returncode == 0  # a daemon
    out = gatesh(*verb, session="g")
    assert out.returncode != 0, out.stdout
    assert "gated session" in (out.stderr + out.stdout), out.stderr


@pytest.mark.slow
def test_human_verbs_refused_when_only_an_ancestor_is_gated() -> None:
    assert gatesh("-c", "true", session="g").returncode == 0
    inner = " ".join([*GATESH, "resume", "s1"])
    # The verb's own environment is clean; its parent shell carries GATESH_SESSION.
    out = subprocess.run(
        ["sh", "-c", f"env -u GATESH_SESSION {inner}; echo rc=$?"],
        capture_output=True,
        text=True,
        env={**os.environ, "GATESH_SESSION": "g"},
        timeout=60,
    )
    assert "rc=0" not in out.stdout, (out.stdout, out.stderr)
    assert "gated session" in out.stderr, out.stderr


@pytest.mark.slow
def test_human_verbs_through_the_gate_halt_the_session() -> None:
    out = gatesh("-c", "python3 -m gatesh resume s1", session="h")
    assert out.returncode == 126
    assert "halted" in out.stderr.lower(), out.stderr
    after = gatesh("-c", "echo still-here", session="h")
    assert after.returncode == 126 and after.stdout == "", "a halted session must refuse everything"


@pytest.mark.slow
def test_human_verbs_work_for_a_person() -> None:
    if gated_ancestry(os.getpid()) is not None:
        pytest.skip("this test run is itself inside a gated session")
    assert gatesh("-c", "echo x", session="q").returncode == 0
    halted = gatesh("-c", "trap - DEBUG", session="q")
    assert halted.returncode == 126
    env = {k: v for k, v in os.environ.items() if k != "GATESH_SESSION"}
    out = subprocess.run(
        [*GATESH, "resume", "q"], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert gatesh("-c", "echo back", session="q").stdout == "back\n"


# --- project .gatesh.toml: can only tighten (S12) ---------------------------------------------------------


def test_project_file_cannot_allow(project: Path) -> None:
    write(project / ".gatesh.toml", '[[allow]]\nmatch = "prefix"\npattern = "rm -rf"\n')
    with pytest.raises(ConfigError) as err:
        load_config(str(project))
    assert str(project / ".gatesh.toml") in str(err.value) and "allow" in str(err.value)


@pytest.mark.parametrize(
    "line",
    [
        'rater.backend = "anthropic"',
        '[rater]\nbase_url = "http://evil.example"',
        '[rater]\napi_key_env = "HOME"',
        'operator = "person"',
        "watchers = [0]",
        "[escalation]\ntimeout_s = 99999",
        "[audit]\nmax_bytes = 1",
        "[audit]\nkeep = 0",
        'shell = "zsh"',
        '[alignment]\nmodel = "x"',
    ],
)
def test_project_file_cannot_set_anything_but_tightening(project: Path, line: str) -> None:
    path = write(project / ".gatesh.toml", line + "\n")
    with pytest.raises(ConfigError) as err:
        load_config(str(project))
    assert str(path) in str(err.value)


@pytest.mark.parametrize(
    ("user", "project_rung", "effective"),
    [
        ("auto", "bypass", Rung.AUTO),
        ("assisted", "auto", Rung.ASSISTED),
        ("auto", "manual", Rung.MANUAL),
        ("bypass", "write", Rung.WRITE),
        (None, "bypass", Rung.AUTO),
    ],
)
def test_project_rung_is_a_cap(
    project: Path, user: str | None, project_rung: str, effective: Rung
) -> None:
    if user:
        write(_paths.current().user_config, f'rung = "{user}"\n')
    write(project / ".gatesh.toml", f'rung = "{project_rung}"\n')
    config = load_config(str(project))
    assert config.rung is effective
    sub = project / "deep" / "er"
    sub.mkdir(parents=True)
    assert load_config(str(sub)).rung is effective  # the nearest file above the cwd


def test_project_deny_and_escalate_tighten(project: Path) -> None:
    write(_paths.current().user_config, '[[allow]]\nmatch = "prefix"\npattern = "git push"\n')
    write(
        project / ".gatesh.toml",
        '[[deny]]\nmatch = "prefix"\npattern = "git push"\nnote = "not here"\n',
    )
    config = load_config(str(project))
    d = decide("git push origin main", cwd=str(project), config=config)
    assert d.action is Action.DENY


@pytest.mark.slow
def test_project_file_end_to_end(project: Path) -> None:
    (project / "src").mkdir()
    (project / "src" / "main.py").write_text("print(1)\n")
    write(project / ".gatesh.toml", 'rung = "bypass"\n')
    out = gatesh("-c", "rm -rf src", session="pr", cwd=project)
    assert out.returncode == 126 and (project / "src").exists(), "a project file lowered the rung"
    write(project / ".gatesh.toml", '[[allow]]\nmatch = "exact"\npattern = "rm -rf src"\n')
    out = gatesh("-c", "rm -rf src", session="pr2", cwd=project)
    assert out.returncode == 126 and (project / "src").exists()
    assert ".gatesh.toml" in out.stderr and "allow" in out.stderr, out.stderr


# --- the system tier (S9.6, S12) -------------------------------------------------------------------------------


def test_system_rung_caps_the_user() -> None:
    write(_paths.current().system_config, 'rung = "write"\n')
    write(_paths.current().user_config, 'rung = "bypass"\n')
    config = load_config(str(Path.home()))
    assert config.rung is Rung.WRITE


def test_capped_rung_names_the_capping_tier() -> None:
    """``gatesh config`` shows each value with the tier it came from (S12): a capped rung is the
    system's, not the user's."""
    write(_paths.current().system_config, 'rung = "write"\n')
    write(_paths.current().user_config, 'rung = "bypass"\n')
    assert load_config(str(Path.home())).sources["rung"].startswith("system")


def test_system_deny_beats_user_allow(project: Path) -> None:
    write(
        _paths.current().system_config,
        '[[deny]]\nmatch = "prefix"\npattern = "curl"\nnote = "policy"\n',
    )
    write(_paths.current().user_config, '[[allow]]\nmatch = "prefix"\npattern = "curl"\n')
    d = decide("curl https://example.com", cwd=str(project), config=load_config(str(project)))
    assert d.action is Action.DENY and "policy" in d.message


def test_system_file_cannot_allow_and_user_cannot_name_watchers() -> None:
    write(_paths.current().system_config, '[[allow]]\nmatch = "prefix"\npattern = "ls"\n')
    with pytest.raises(ConfigError, match="allow"):
        load_config(str(Path.home()))
    write(_paths.current().system_config, "watchers = [1000]\n")
    assert load_config(str(Path.home())).watchers == (1000,)
    write(_paths.current().user_config, "watchers = [1001]\n")
    with pytest.raises(ConfigError, match="watchers"):
        load_config(str(Path.home()))


@pytest.mark.slow
def test_system_tier_end_to_end(project: Path) -> None:
    write(
        _paths.current().system_config,
        '[[deny]]\nmatch = "prefix"\npattern = "touch"\nnote = "site policy"\n',
    )
    write(_paths.current().user_config, '[[allow]]\nmatch = "prefix"\npattern = "touch"\n')
    out = gatesh("-c", f"touch {project}/nope", session="sys", cwd=project)
    assert out.returncode == 126 and not (project / "nope").exists()
    assert "site policy" in out.stderr, out.stderr

"""What is the person's (gatesh._person): the gate's mark, where a process stands, the settings a
daemon is started with, and the person's daemon.env."""

from __future__ import annotations

import os
import pwd
import signal
import time
from pathlib import Path

import pytest

from gatesh import _person
from gatesh._person import GATED_MARK, Context, Mark, Standing

#: These tests read this test process's own standing: inside a boundary (the suite run confined,
#: as an allowed command) every process stands as confined, which tests/test_scratch_world.py covers.
UNCONFINED = pytest.mark.skipif(
    _person.marks(os.getpid()) is Mark.BOUNDARY,
    reason="this test process runs inside a boundary: it and its children stand as confined",
)


def _child(mark_self: bool = False) -> int:
    """A child process that sleeps until killed (marked by itself first, when asked)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        if mark_self:
            _person.mark()
        os.write(w, b"x")
        time.sleep(60)
        os._exit(0)
    os.close(w)
    os.read(r, 1)
    os.close(r)
    return pid


def _reap(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


@UNCONFINED
def test_the_mark_is_a_lowered_lock_limit_set_from_outside() -> None:
    """The daemon marks its client with prlimit, before answering it."""
    pid = _child()
    try:
        assert _person.marks(pid) is Mark.NONE and _person.mark_of(pid) == ""
        assert _person.mark(pid)
        assert _person.marks(pid) is Mark.GATED
        assert "carries the gate's mark" in _person.mark_of(pid)
        limits = Path(f"/proc/{pid}/limits").read_text()
        assert f"Max file locks            {GATED_MARK}" in limits
    finally:
        _reap(pid)


@UNCONFINED
def test_the_mark_is_inherited_and_a_process_stands_by_it() -> None:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # marked, then a grandchild reports where it stands
        os.close(r)
        _person.mark()
        if os.fork() == 0:
            os.setsid()
            os.write(w, _person.context().standing.value.encode())
            os._exit(0)
        os.wait()
        os._exit(0)
    os.close(w)
    said = os.read(r, 64).decode()
    os.close(r)
    os.waitpid(pid, 0)
    assert said == "marked"
    assert _person.context() == Context(Standing.PERSON)  # this test process is not marked


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux (prctl)")
def test_untraceable_makes_a_process_not_dumpable_until_it_execs() -> None:
    """What the daemon and the person's verbs do first (S9.5): PR_GET_DUMPABLE reads 0 after it,
    in the process that asked; a program it execs is dumpable again (the kernel resets it)."""
    import subprocess
    import sys

    code = (
        "import ctypes, subprocess, sys\n"
        "from gatesh import _person\n"
        "libc = ctypes.CDLL(None)\n"
        "before = libc.prctl(3, 0, 0, 0, 0)\n"
        "why = _person.untraceable()\n"
        "after = libc.prctl(3, 0, 0, 0, 0)\n"
        "child = subprocess.run([sys.executable, '-c', "
        "'import ctypes; print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))'], "
        "capture_output=True, text=True).stdout.strip()\n"
        "print(before, repr(why), after, child)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "''", "0", "1"], out.stdout + out.stderr


def test_a_gone_process_is_not_a_person() -> None:
    pid = _child()
    _reap(pid)
    assert _person.marks(pid) is Mark.UNREADABLE
    assert "cannot be read" in _person.mark_of(pid)


@UNCONFINED
def test_the_nearest_unmarked_ancestor_of_a_marked_process() -> None:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        _person.mark()
        source = _person.unmarked_ancestor()
        os.write(w, f"{source.pid if source else 0}".encode())
        os._exit(0)
    os.close(w)
    said = int(os.read(r, 64).decode())
    os.close(r)
    os.waitpid(pid, 0)
    assert said == os.getpid()


def test_a_persons_client_hands_on_only_folders_locale_and_path() -> None:
    caller = {
        "HOME": "/h",
        "PATH": "/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "XDG_CONFIG_HOME": "/h/c",
        "GATESH_SYSTEM_CONFIG": "/h/s",
        "ANTHROPIC_API_KEY": "sk-x",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:1",
        "HTTPS_PROXY": "http://p",
        "PYTHONPATH": "/evil",
        "LD_PRELOAD": "/evil.so",
        "GATESH_SESSION": "s",
    }
    env, why = _person.daemon_environ(Context(Standing.PERSON), caller)
    assert why == "" and env is not None
    assert {k for k in env if k != _person.STARTED_BY_VAR} == {
        "HOME",
        "PATH",
        "LANG",
        "LC_ALL",
        "XDG_CONFIG_HOME",
        "GATESH_SYSTEM_CONFIG",
    }


def test_inside_a_boundary_no_daemon_is_started() -> None:
    """(But a scratch world's own: tests/test_scratch_world.py.)"""
    persons = dict(os.environ, HOME=pwd.getpwuid(os.getuid()).pw_dir)
    env, why = _person.daemon_environ(Context(Standing.BOUNDARY, "inside"), persons)
    assert env is None and "confined" in why


@pytest.fixture
def passwd_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user database says this user's home is a scratch folder."""
    home = tmp_path / "home"
    home.mkdir()
    real = pwd.getpwuid(os.getuid())
    fake = pwd.struct_passwd(
        (real.pw_name, "x", real.pw_uid, real.pw_gid, "", str(home), "/bin/sh")
    )
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: fake)
    return home


def test_the_persons_folders_default_under_the_passwd_home(passwd_home: Path) -> None:
    folders, why = _person.person_folders()
    assert why == "" and folders is not None
    assert folders.config_dir == str(passwd_home / ".config/gatesh")
    assert folders.state_dir == str(passwd_home / ".local/state/gatesh")
    assert "user database" in folders.source


def test_the_persons_folders_from_the_install_record(passwd_home: Path) -> None:
    from gatesh import _paths

    record = passwd_home / ".local/share/gatesh/install.json"
    record.parent.mkdir(parents=True)
    _paths.update_install_record(
        str(record),
        _paths.RecordChange(
            folders={
                "config": "/p/c/gatesh",
                "state": "/p/s/gatesh",
                "data": "/p/d/gatesh",
                "runtime": "/p/r/gatesh",
            },
            path="/opt/bin:/usr/bin",
        ),
    )
    folders, _ = _person.person_folders()
    assert (
        folders is not None
        and folders.config_dir == "/p/c/gatesh"
        and folders.path == "/opt/bin:/usr/bin"
    )
    env = _person.environ_for(folders, {})
    assert env["XDG_CONFIG_HOME"] == "/p/c" and env["XDG_RUNTIME_DIR"] == "/p/r"
    os.chmod(record, 0o666)
    folders, why = _person.person_folders()
    assert folders is None and "others may write it" in why


def test_a_marked_process_with_a_cut_ancestry_needs_the_persons_files(
    passwd_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No unmarked ancestor: the defaults under the passwd home hold only when the environment
    agrees with them, or a record names the folders."""
    monkeypatch.setattr(_person, "unmarked_ancestor", lambda pid=None: None)
    marked = Context(Standing.MARKED, "this process carries the gate's mark")
    agrees = {"HOME": str(passwd_home)}
    env, why = _person.gate_environ(marked, agrees)
    assert env is not None and env["HOME"] == str(passwd_home), why
    differs = {"HOME": str(passwd_home), "XDG_CONFIG_HOME": "/tmp/empty"}
    env, why = _person.gate_environ(marked, differs)
    assert env is None and "no install record confirms" in why


def _daemon_env(folder: Path, text: str, mode: int = 0o600) -> tuple[dict[str, str], list[str]]:
    path = folder / _person.DAEMON_ENV
    path.write_text(text)
    os.chmod(path, mode)
    return _person.read_daemon_env(str(folder))


def test_daemon_env_is_read_from_a_file_only_its_owner_reads(tmp_path: Path) -> None:
    values, problems = _daemon_env(
        tmp_path,
        "# the model\nexport ANTHROPIC_API_KEY='sk-ant-1'\nANTHROPIC_BASE_URL=\"http://x\"\n\n"
        "HTTPS_PROXY=http://proxy:3128\nHOME=/elsewhere\nXDG_CONFIG_HOME=/tmp\nPYTHONPATH=/e\n"
        "not a pair\n9BAD=1\n",
    )
    assert values == {
        "ANTHROPIC_API_KEY": "sk-ant-1",
        "ANTHROPIC_BASE_URL": "http://x",
        "HTTPS_PROXY": "http://proxy:3128",
    }
    assert len(problems) == 5 and all("skipped" in p for p in problems)
    values, problems = _daemon_env(tmp_path, "ANTHROPIC_API_KEY=sk\n", 0o644)
    assert values == {} and "chmod 600" in problems[0]
    assert _person.read_daemon_env(str(tmp_path / "none")) == ({}, [])


def test_daemon_env_through_a_link_is_not_read(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("ANTHROPIC_API_KEY=sk\n")
    os.chmod(target, 0o600)
    (tmp_path / _person.DAEMON_ENV).symlink_to(target)
    values, problems = _person.read_daemon_env(str(tmp_path))
    assert values == {} and "cannot be read" in problems[0]


def test_the_boundary_keeps_gatesh_secrets_from_reads(isolated_home: Path) -> None:
    """The key file and the person's channel credential are rows of the protected places table
    with read access protected: the boundary denies confined commands reading them (S16)."""
    from gatesh import _paths
    from gatesh.daemon import protocol as P
    from gatesh.vocab import places

    paths = _paths.current()
    found = {
        r.path: r for r in places.resolve(str(isolated_home), {}, paths.installation(), gate=paths)
    }
    for path in (
        os.path.join(paths.config_dir, _person.DAEMON_ENV),
        os.path.join(paths.runtime_dir, P.TOKEN_FILE),
    ):
        assert found[path].place.id == "cred.gatesh", path
        assert places.Access.READ in found[path].access


def test_a_command_reading_gatesh_secrets_is_not_allowed(isolated_home: Path) -> None:
    """The person's model key (daemon.env) and the channel's credential (person.token) are
    credential stores to the rater too (places: cred.gatesh): reading them, in any of these
    spellings, hands a key to the session. gatesh's config stays an ordinary read."""
    from gatesh import _paths
    from gatesh._types import Action, Rung
    from gatesh.config import default
    from gatesh.daemon import protocol as P
    from gatesh.pipeline import decide

    paths = _paths.current()
    key = os.path.join(paths.config_dir, _person.DAEMON_ENV)
    token = os.path.join(paths.runtime_dir, P.TOKEN_FILE)
    spellings = (
        "cat {}",
        "grep -i key {}",
        "head -c 200 < {}",
        "base64 {}",
        "cp {} /tmp/copy",
        "bash -c 'cat {}'",
        "python3 -c 'print(open(\"{}\").read())'",
    )
    config = default()
    for path in (key, token):
        for spelling in spellings:
            command = spelling.format(path)
            d = decide(command, cwd=str(isolated_home), config=config, rung=Rung.AUTO)
            assert d.action is not Action.ALLOW, (command, d.stage, d.reason)
    plain = os.path.join(paths.config_dir, "config.toml")
    d = decide(f"cat {plain}", cwd=str(isolated_home), config=config, rung=Rung.AUTO)
    assert d.action is Action.ALLOW, d.reason


def test_doctor_says_what_holds_without_the_kernel(isolated_home: Path) -> None:
    from gatesh.doctor import check_person, landlock_abi

    checks = {c.name: c for c in check_person(None)}
    consent = checks["consent"]
    if landlock_abi():
        assert consent.status == "ok" and "gate's mark" in consent.detail
    else:
        assert consent.status == "warn" and "can act as your user" in consent.detail
        assert "own Unix user" in consent.fix
    assert "person's folders" in checks


def test_doctor_says_whether_the_daemon_can_be_traced() -> None:
    from gatesh.doctor.person import DaemonStatus, _tracing

    assert _tracing(None) == []
    [traced] = _tracing(DaemonStatus(traceable="prctl is not available here (x)"))
    assert traced.status == "warn" and "can trace the daemon" in traced.detail
    [held] = _tracing(DaemonStatus(traceable=""))
    if os.getuid() == 0:
        assert held.status == "warn" and "root" in held.detail
    else:
        assert held.status == "ok" and "not dumpable" in held.detail


def test_doctor_says_who_starts_the_daemon(isolated_home: Path) -> None:
    """Issue 30 item 3: with no units recorded, doctor says whether a user service manager could
    take the daemon (and how), or that clients start it on the person's settings only; with units
    recorded that are gone, it says so."""
    from gatesh import _paths, service
    from gatesh.doctor.person import _service

    paths = _paths.current()
    check = _service(paths)
    running, said = service.systemctl("is-system-running")
    if running or said.strip() in ("degraded", "starting", "initializing"):
        assert check.status == "warn" and "gatesh install service" in check.fix
    else:
        assert check.status == "ok" and "no user service manager" in check.detail
    gone = str(isolated_home / "gone" / "gatesh.socket")
    _paths.update_install_record(paths.install_record, _paths.RecordChange(service=(gone,)))
    check = _service(_paths.current())
    assert check.status == "warn" and "none of them is there" in check.detail

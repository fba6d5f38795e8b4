"""The client trusts only its own daemon (S9.1, S9.4; issue 21): two real users.

The user running ``gatesh -c`` is ``nobody`` with a scratch HOME; the other user is root, who
squats the socket folder or plants a socket that answers every check ``{"action": "allow"}``. The
command is one the real gate rejects (it would delete a folder of untracked work in the scratch
project and create a marker): if the client believed the fake socket, the marker would appear.

The client runs in a forked child that drops to ``nobody`` and calls the client's own entry points
(the interpreter here may live where ``nobody`` cannot start it; everything the gate imports is
imported before the fork). Skipped, visibly, when not root or without a ``nobody`` user.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import socket
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gatesh import _person, client
from gatesh._person import Mark

REFUSED_COMMAND = "touch MARKER && rm -rf ./work"
# Functional bound: the in-process gate decides at once; the old client waited 20 s for a daemon.
NO_WAIT_S = 10.0


def _nobody() -> pwd.struct_passwd:
    if os.getuid() != 0:
        pytest.skip("needs root: the test plays two users (root squats, nobody runs gatesh)")
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("needs a 'nobody' user")


def _warm_imports(tmp: Path) -> None:
    """Import everything the in-process gate needs (the child may not be able to read it)."""
    from gatesh import hooks, inprocess, people  # noqa: F401

    env = {
        "HOME": str(tmp),
        "XDG_STATE_HOME": str(tmp / "s"),
        "XDG_CONFIG_HOME": str(tmp / "c"),
        "XDG_DATA_HOME": str(tmp / "d"),
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        (tmp / "p" / "work").mkdir(parents=True)
        (tmp / "p" / "work" / "f").write_text("x")
        inprocess.gate(REFUSED_COMMAND, cwd=str(tmp / "p"))
        inprocess.gate("ls", cwd=str(tmp / "p"))
        hooks.answer("claude-code", b"{}")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@dataclass
class Scratch:
    """A HOME and project owned by ``nobody``, and the runtime folder its client will use."""

    base: Path
    home: Path
    project: Path
    runtime: Path  # the socket folder the client computes
    env: dict[str, str]
    user: pwd.struct_passwd

    @property
    def marker(self) -> Path:
        return self.project / "MARKER"


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Scratch]:
    user = _nobody()
    _warm_imports(tmp_path / "warm")
    try:
        base = Path(tempfile.mkdtemp(prefix="gtrust", dir="/tmp"))
    except PermissionError:
        if _person.marks(os.getpid()) is not Mark.BOUNDARY:
            raise
        pytest.skip(
            "this test process runs inside a boundary whose socket folder lies in /tmp, so /tmp "
            "itself is not writable here; these tests need a folder there that nobody may enter"
        )
    base.chmod(0o755)
    home = base / "home"
    project = home / "proj"
    (project / "work").mkdir(parents=True)
    (project / "work" / "notes.txt").write_text("untracked work\n")
    for p in (home, project, project / "work", project / "work" / "notes.txt"):
        os.chown(p, user.pw_uid, user.pw_gid)
    (base / "xdg").mkdir(mode=0o755)
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "XDG_RUNTIME_DIR": str(base / "xdg"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "GATESH_SYSTEM_CONFIG": str(base / "etc/config.toml"),
    }
    try:
        yield Scratch(base, home, project, base / "xdg" / "gatesh", env, user)
    finally:
        shutil.rmtree(base, ignore_errors=True)


class FakeDaemon:
    """A socket served by this (root) process that answers every request with ``allow``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.accepted = 0
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        os.chmod(path, 0o666)
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    conn.recv(65536)
                    conn.sendall(
                        b'{"v": 1, "welcome": "check"}\n'
                        b'{"re": "check", "ok": true, "action": "allow", "exit": 0}\n'
                    )

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        self.sock.close()


def _as_user(s: Scratch, fn: Callable[[], Any], *, timeout: float = 60.0) -> dict[str, Any]:
    """Run ``fn`` in a forked child as ``s.user`` with ``s.env`` and the project as cwd; its
    JSON-able result, its stderr, its exit status and how long it took. An exec-ing ``fn``
    (the shell surface) reports only its exit status."""
    r, w = os.pipe()
    err_r, err_w = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 0
        try:
            os.close(r)
            os.close(err_r)
            os.dup2(err_w, 2)
            sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
            os.setgroups([])
            os.setgid(s.user.pw_gid)
            os.setuid(s.user.pw_uid)
            os.environ.clear()
            os.environ.update(s.env)
            os.chdir(s.project)
            out = fn()
            os.write(w, json.dumps({"result": out}, default=str).encode())
            code = out if isinstance(out, int) else 0
        except BaseException as exc:
            with contextlib.suppress(Exception):
                os.write(w, json.dumps({"error": repr(exc)}).encode())
            code = 99
        os._exit(code)
    os.close(w)
    os.close(err_w)
    data = err = b""
    deadline = started + timeout
    for fd in (r, err_r):
        while time.monotonic() < deadline and (chunk := os.read(fd, 65536)):
            if fd == r:
                data += chunk
            else:
                err += chunk
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    out = json.loads(data) if data else {}
    out.update(
        stderr=err.decode(errors="replace"),
        status=os.waitstatus_to_exitcode(status),
        seconds=time.monotonic() - started,
    )
    return out


def _check() -> dict[str, Any]:
    res = client.check(REFUSED_COMMAND, cwd=os.getcwd())
    return {"action": res.action, "message": res.message, "exit": res.exit_code}


def _shell() -> int:
    return client.shell_main(["gatesh", "-c", REFUSED_COMMAND])


def _decides_in_process(user: pwd.struct_passwd) -> bool:
    """Whether the in-process gate of ``user``'s client decides (or refuses without deciding).

    Outside a boundary it always does. Inside one (this suite run as a command gatesh let run,
    S16: ``benchmarks/boundary.py --suite``; its children are inside it too) it decides only in a
    scratch world apart from the person's folders (:func:`gatesh._person.scratch_world`), which
    it finds from the home the user database gives: ``nobody``'s (``/nonexistent`` on Debian)
    does not exist or is not its own, so the gate fails closed."""
    from gatesh import _person

    if _person.context().standing is not _person.Standing.BOUNDARY:
        return True
    try:
        return os.stat(user.pw_dir).st_uid == user.pw_uid
    except OSError:
        return False


def _assert_refused_in_process(s: Scratch, what: str, fake: FakeDaemon | None) -> None:
    """The client believes no fake daemon: the notice names ``what``, nothing waited for a
    daemon, and the shell surface ran nothing. The check is decided by the in-process gate (a
    rejection) or, where it cannot decide (:func:`_decides_in_process`), refused undecided."""
    got = _as_user(s, _check)
    assert "result" in got, got
    if _decides_in_process(s.user):
        assert got["result"]["action"] == "reject", got
        assert "recursively deletes" in got["result"]["message"], got
    else:
        assert got["result"]["action"] == "refuse", got
        assert "cannot decide in its place" in got["result"]["message"], got
        assert "the person's folders cannot be told" in got["result"]["message"], got
    assert what in got["stderr"] and "Deciding in this process" in got["stderr"], got["stderr"]
    assert got["seconds"] < NO_WAIT_S, got
    ran = _as_user(s, _shell)
    assert ran["status"] == 126, ran
    assert not s.marker.exists(), "the refused command ran"
    assert (s.project / "work" / "notes.txt").exists()
    if fake is not None:
        assert fake.accepted == 0 or what.endswith("not as you: it is not your gate")


def test_squatted_folder_in_tmp_is_refused_and_nothing_runs(scratch: Scratch) -> None:
    """XDG_RUNTIME_DIR unset (sudo -iu, cron, su): the folder is /tmp/gatesh-UID, made first by
    another user with mode 0777 and a socket that allows everything."""
    folder = Path(f"/tmp/gatesh-{scratch.user.pw_uid}")
    if folder.exists() or folder.is_symlink():
        pytest.skip(f"{folder} exists already on this machine")
    del scratch.env["XDG_RUNTIME_DIR"]
    folder.mkdir()
    folder.chmod(0o777)
    fake = FakeDaemon(folder / "daemon.sock")
    try:
        _assert_refused_in_process(scratch, f"{folder} belongs to uid 0 (root)", fake)
        assert fake.accepted == 0
    finally:
        fake.close()
        shutil.rmtree(folder, ignore_errors=True)


def test_squatted_folder_refuses_watch_hooks_and_human_verbs(scratch: Scratch) -> None:
    scratch.runtime.mkdir()
    scratch.runtime.chmod(0o777)
    fake = FakeDaemon(scratch.runtime / "daemon.sock")
    try:

        def others() -> dict[str, str]:
            from gatesh import hooks

            out: dict[str, str] = {}
            for role in ("watch", "human"):
                try:
                    client._connect(role, start=True)
                    out[role] = "connected"
                except client.DaemonUntrusted as exc:
                    out[role] = f"untrusted: {exc}"
            raw = json.dumps(
                {
                    "hook_event_name": "PreToolUse",
                    "tool_name": "Bash",
                    "cwd": os.getcwd(),
                    "tool_input": {"command": REFUSED_COMMAND},
                    "session_id": "t",
                }
            ).encode()
            _, ans = hooks.answer("claude-code", raw)
            out["hook"] = str(ans.decision)
            return out

        got = _as_user(scratch, others)
        assert "result" in got, got
        for role in ("watch", "human"):
            assert got["result"][role].startswith("untrusted:"), got
            assert (
                str(scratch.runtime) in got["result"][role]
                and "uid 0 (root)" in got["result"][role]
            )
        assert got["result"]["hook"] == "deny", got
        assert fake.accepted == 0
    finally:
        fake.close()


def test_foreign_socket_in_own_folder_is_refused(scratch: Scratch) -> None:
    """The folder is nobody's own (0700) but the socket in it was bound, and is owned, by root."""
    scratch.runtime.mkdir(mode=0o700)
    os.chown(scratch.runtime, scratch.user.pw_uid, scratch.user.pw_gid)
    fake = FakeDaemon(scratch.runtime / "daemon.sock")
    try:
        _assert_refused_in_process(scratch, "daemon.sock belongs to uid 0 (root)", fake)
    finally:
        fake.close()


def test_socket_answered_by_another_uid_is_refused(scratch: Scratch) -> None:
    """Socket file and folder pass as nobody's, but the process that accepts is root:
    SO_PEERCRED on the client's side refuses before a reply is read."""
    scratch.runtime.mkdir(mode=0o700)
    os.chown(scratch.runtime, scratch.user.pw_uid, scratch.user.pw_gid)
    fake = FakeDaemon(scratch.runtime / "daemon.sock")
    os.chown(scratch.runtime / "daemon.sock", scratch.user.pw_uid, scratch.user.pw_gid)
    try:
        _assert_refused_in_process(
            scratch, "runs as uid 0 (root), not as you: it is not your gate", fake
        )
    finally:
        fake.close()


def test_linked_folder_is_refused(scratch: Scratch) -> None:
    """The runtime folder is a symbolic link to a folder nobody owns, holding the fake socket."""
    target = scratch.base / "elsewhere"
    target.mkdir(mode=0o700)
    os.chown(target, scratch.user.pw_uid, scratch.user.pw_gid)
    fake = FakeDaemon(target / "daemon.sock")
    os.chown(target / "daemon.sock", scratch.user.pw_uid, scratch.user.pw_gid)
    scratch.runtime.symlink_to(target)
    try:
        _assert_refused_in_process(scratch, f"{scratch.runtime} is not a folder", fake)
        assert fake.accepted == 0
    finally:
        fake.close()


# --- the folder rules, as any user ------------------------------------------------------------


def test_missing_folder_is_created_0700(tmp_path: Path) -> None:
    folder = tmp_path / "gatesh"
    client.trusted_runtime_dir(str(folder), create=True)
    st = folder.lstat()
    assert (
        stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.getuid()
    )


def test_missing_folder_without_start_is_no_daemon(tmp_path: Path) -> None:
    with pytest.raises(client.DaemonUnavailable) as info:
        client.trusted_runtime_dir(str(tmp_path / "gatesh"), create=False)
    assert not isinstance(info.value, client.DaemonUntrusted)
    assert not (tmp_path / "gatesh").exists()


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702, 0o1777])
def test_own_folder_others_may_write_is_untrusted(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "gatesh"
    folder.mkdir()
    folder.chmod(mode)
    with pytest.raises(client.DaemonUntrusted, match="others may write"):
        client.trusted_runtime_dir(str(folder), create=True)


@pytest.mark.parametrize("mode,after", [(0o700, 0o700), (0o711, 0o711), (0o755, 0o700)])
def test_own_folder_modes_accepted(tmp_path: Path, mode: int, after: int) -> None:
    folder = tmp_path / "gatesh"
    folder.mkdir()
    folder.chmod(mode)
    client.trusted_runtime_dir(str(folder), create=True)
    assert stat.S_IMODE(folder.lstat().st_mode) == after


def test_a_file_or_link_is_not_the_folder(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "gatesh").symlink_to(tmp_path / "real")
    with pytest.raises(client.DaemonUntrusted, match="not a folder"):
        client.trusted_runtime_dir(str(tmp_path / "gatesh"), create=True)
    (tmp_path / "file").write_text("")
    with pytest.raises(client.DaemonUntrusted, match="not a folder"):
        client.trusted_runtime_dir(str(tmp_path / "file"), create=True)


def test_a_non_socket_at_the_socket_path_is_untrusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    (tmp_path / "gatesh").mkdir(mode=0o700)
    (tmp_path / "x.sock").write_text("")
    (tmp_path / "gatesh" / "daemon.sock").symlink_to(tmp_path / "x.sock")
    with pytest.raises(client.DaemonUntrusted, match="is not a socket"):
        client._connect("check", start=False)

"""The standard-library ``-c`` client: argument parsing, constants, JSON codec, shell lookup."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from gatesh import _paths, _wire, _wire_exit, client
from gatesh._wire import Interim
from gatesh.daemon import protocol
from gatesh.launcher import default_paths, render_launcher


def test_constants_match_the_protocol() -> None:
    assert client.VERSION == protocol.VERSION
    assert client.MAX_LINE == protocol.MAX_LINE
    assert client.EXIT_REFUSED == protocol.EXIT_REFUSED == 126
    from gatesh import _wire

    assert set(_wire.PERSON_ROLES) == {r.value for r in protocol.PERSON_ROLES}
    assert _wire.TOKEN_FILE == protocol.TOKEN_FILE
    for path in ("/run/user/1000/gatesh/daemon.sock", "/tmp/gatesh-7/daemon.sock"):
        assert _wire.person_address(path) == protocol.person_address(path)


def test_socket_path_follows_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert client.socket_path() == _paths.current().socket
    assert client.state_dir() == _paths.current().state_dir
    monkeypatch.setenv("XDG_RUNTIME_DIR", "relative/ignored")
    assert client.socket_path() == _paths.current().socket
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert client.socket_path() == _paths.current().socket


@pytest.mark.parametrize(
    "value",
    [
        {"a": 'x\n"\\é\u2028\x00', "b": [1, -2, 3.5, None, True, False], "c": {"d": []}},
        {"op": "check", "command": "rm -rf ~ # why: ünïcödé 🎉", "pid": 12},
    ],
)
def test_json_codec_round_trips(value: dict) -> None:
    encoded = client._encode(value)
    assert json.loads(encoded) == value
    assert client._decode(json.dumps(value, ensure_ascii=False).encode()) == value


def test_strings_encode_as_the_json_module_writes_them() -> None:
    """The client's own string encoder (no ``_json`` before the request goes out) writes what
    ``_json`` would, byte for byte: every ASCII character, quotes and backslashes, characters
    past the BMP, lone surrogates (from undecodable bytes), and a long non-ASCII line."""
    import random

    from gatesh._wire_base import _string

    pool = [chr(i) for i in range(0x180)] + ["\u2028", "\ud800", "\udcff", "\U0001f389", "\uffff"]
    rng = random.Random(30)
    cases = ["", "ls -la", 'echo "a\\b"', "é" * 5000, "x" * 5000 + "\x00"]
    cases += ["".join(rng.choice(pool) for _ in range(rng.randint(1, 40))) for _ in range(3000)]
    for text in cases:
        assert _string(text) == json.encoder.encode_basestring_ascii(text), repr(text)


def test_decode_rejects_garbage() -> None:
    for bad in (b"{", b"[1]", b"{} x", b"nope"):
        with pytest.raises(ValueError):
            client._decode(bad)


@pytest.mark.parametrize(
    ("args", "command", "script", "stdin"),
    [
        (["-c", "echo hi"], "echo hi", None, False),
        (["-lc", "echo hi", "zero", "one"], "echo hi", None, False),
        (["-l", "-c", "echo hi"], "echo hi", None, False),
        (["--login", "-c", "echo hi"], "echo hi", None, False),
        (["-o", "pipefail", "-c", "x"], "x", None, False),
        (["-eo", "pipefail", "-c", "x"], "x", None, False),
        (["--rcfile", "f", "-c", "x"], "x", None, False),
        (["x.sh", "a"], None, "x.sh", False),
        (["-e", "--", "x.sh"], None, "x.sh", False),
        ([], None, None, True),
        (["-s", "a"], None, None, True),
    ],
)
def test_shell_args(args: list[str], command: str | None, script: str | None, stdin: bool) -> None:
    parsed = client.ShellArgs(args)
    assert (parsed.command, parsed.script, parsed.stdin) == (command, script, stdin)


def test_missing_c_argument_is_left_to_bash() -> None:
    parsed = client.ShellArgs(["-c"])
    assert parsed.missing_c and parsed.command is None


def test_find_real_shell_skips_gatesh(tmp_path: Path) -> None:
    shims = tmp_path / "shims"
    shims.mkdir()
    launcher = tmp_path / "gatesh"
    launcher.write_text("#!/bin/sh\n")
    launcher.chmod(0o755)
    (shims / "bash").symlink_to(launcher)
    other = tmp_path / "other"
    other.mkdir()
    (other / "bash").symlink_to(launcher)  # another link to gatesh after ours: skipped too
    real = client.find_real_shell(
        "bash", str(shims / "bash"), path=f"{shims}:{other}:/usr/bin:/bin"
    )
    assert real is not None and os.path.realpath(real) != str(launcher)
    assert os.path.basename(os.path.realpath(real)) == "bash"


def test_check_result_refusal_from_error_reply() -> None:
    r = client.CheckResult.from_reply(protocol.error_reply("check", "broken"))
    assert r.action == "refuse" and r.exit_code == 126 and not r.allowed
    r = client.CheckResult.from_reply({"ok": False, "action": "allow"})
    assert not r.allowed
    r = client.CheckResult.from_reply({"ok": True})
    assert not r.allowed and "error" in r.message


def test_launcher_renders_and_runs(tmp_path: Path) -> None:
    text = render_launcher(os.path.realpath(sys.executable), default_paths())
    assert text.startswith("#!") and " -IS" in text.splitlines()[0]
    dest = tmp_path / "gatesh"
    dest.write_text(text)
    dest.chmod(0o755)
    out = subprocess.run([str(dest), "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "gatesh" in out.stdout


def test_launcher_long_interpreter_uses_sh(tmp_path: Path) -> None:
    text = render_launcher("/" + "x" * 200 + "/python", ["/p"])
    assert text.startswith("#!/bin/sh\n") and '"$0" "$@"' in text


@pytest.mark.parametrize(
    ("modules", "forbidden"),
    [
        (
            "gatesh._entry, gatesh.client",
            "'json','socket','re','typing','dataclasses','gatesh.pipeline','__future__'",
        ),
        (
            "gatesh.client",
            "'os','posixpath','json','socket','re','typing','dataclasses','gatesh.pipeline','__future__'",
        ),
        (
            "gatesh.hooks",
            "'os','posixpath','json','socket','re','typing','dataclasses','gatesh.pipeline','__future__',"
            "'gatesh.client','gatesh._invoke','gatesh._entry'",
        ),
    ],
)
def test_client_import_set_is_small(modules: str, forbidden: str) -> None:
    """`gatesh -c` must not import json, socket, re, typing or dataclasses, and the client itself
    not even os (S14); nor __future__, which `from __future__ import annotations` loads (~0.1 ms)."""
    code = (
        f"import sys; import {modules}; "
        f"bad = [m for m in ({forbidden}) if m in sys.modules]; "
        "print(','.join(bad))"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(client.__file__)))
    out = subprocess.run(
        [sys.executable, "-IS", "-c", f"import sys; sys.path.insert(0, {root!r}); {code}"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_waiting_line_is_shown_once_on_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """S7: the agent's terminal shows that a person is being asked (once, heartbeats not shown),
    then the final answer as usual."""

    def fake_request(role: str, message: dict, *, on_interim: object = None, **kw: object) -> dict:
        assert role == "check" and callable(on_interim)
        # The interim lines as _wire.request hands them on, each decoded once.
        on_interim(Interim.from_line({"re": "check", "interim": "working"}))
        on_interim(
            Interim.from_line(
                {
                    "re": "check",
                    "interim": "waiting",
                    "pending_id": "abc123",
                    "message": "gatesh: a person is being asked\x1b[2J to approve this command.",
                }
            )
        )
        on_interim(Interim.from_line({"re": "check", "interim": "working"}))
        on_interim(Interim.from_line({"re": "check", "interim": "waiting", "message": "again"}))
        return {
            "re": "check",
            "ok": True,
            "action": "reject",
            "exit": 126,
            "message": "A person refused it.",
        }

    monkeypatch.setattr(_wire, "request", fake_request)  # what client.check asks through
    assert client.shell_main(["gatesh", "-c", "git reset --hard"]) == 126
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "gatesh: a person is being asked [2J to approve this command.",
        "A person refused it.",
    ]


def _stand_in_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> socket.socket:
    """A listening socket where the client looks for the daemon (this user's own folder)."""
    runtime = tmp_path / "run"
    (runtime / "gatesh").mkdir(parents=True, mode=0o700)
    runtime.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(_wire.socket_path())
    server.listen()
    server.settimeout(10)
    return server


def test_the_exit_report_goes_on_the_connection_opened_while_the_command_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """S14: the hello goes out when the command starts; the report follows on that connection."""
    server = _stand_in_daemon(tmp_path, monkeypatch)
    report = _wire_exit.ExitReport("r-1")
    report.open()
    conn, _ = server.accept()
    lines = conn.makefile("rb")
    assert json.loads(lines.readline()) == {"v": 1, "hello": "check", "pid": os.getpid()}
    conn.sendall(b'{"v":1,"welcome":"check","daemon_pid":1,"version":"t"}\n')
    done = threading.Thread(target=report, args=(3, None))
    done.start()
    sent = json.loads(lines.readline())
    assert sent == {"op": "exited", "run": "r-1", "status": 3, "signal": None, "pid": os.getpid()}
    conn.sendall(b'{"re":"exited","ok":true}\n')
    done.join(10)
    assert not done.is_alive()
    server.settimeout(0.2)
    with pytest.raises(TimeoutError):
        server.accept()  # answered: no second connection
    conn.close()
    server.close()


def test_the_exit_report_goes_again_when_its_early_connection_was_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon that closed the idle connection (its IDLE_S, or a restart) still gets the report,
    once, on a new connection."""
    server = _stand_in_daemon(tmp_path, monkeypatch)
    report = _wire_exit.ExitReport("r-2")
    report.open()
    first, _ = server.accept()
    assert json.loads(first.makefile("rb").readline())["hello"] == "check"
    first.close()  # the daemon hangs up on a connection that said nothing more
    done = threading.Thread(target=report, args=(None, 9))
    done.start()
    second, _ = server.accept()
    lines = second.makefile("rb")
    hello, sent = json.loads(lines.readline()), json.loads(lines.readline())
    assert hello["hello"] == "check" and hello["request_follows"] is True
    assert sent == {"op": "exited", "run": "r-2", "status": None, "signal": 9, "pid": os.getpid()}
    second.sendall(
        b'{"v":1,"welcome":"check","daemon_pid":1,"version":"t"}\n{"re":"exited","ok":true}\n'
    )
    done.join(10)
    assert not done.is_alive()
    second.close()
    server.close()

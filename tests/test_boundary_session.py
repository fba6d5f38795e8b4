"""An agent's PTY session whose shell runs inside the session's boundary (issue 30 items 4 and 7):
the daemon judges what the shell runs knowing it is contained, as it judges a ``-c`` command —
only when the session's relay said it confined the shell, and only while that shell shows it
runs inside a boundary.

A real daemon; the PTY's shell is stood in for by a process that confines itself (or not) and
waits. ``bash tools/run.sh`` names an unread script of the working tree: refused
(``reader.script-unread``) unless the boundary contains it. Nothing here is run, only decided.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _daemon import stop_daemon

from gatesh import client
from gatesh.boundary import contain

pytestmark = pytest.mark.slow

ROOT = str(Path(__file__).resolve().parent.parent)
UNREAD = "bash tools/run.sh"


@pytest.fixture(autouse=True)
def _held() -> Iterator[None]:
    if contain.here() is None:
        pytest.skip(
            "needs a boundary this kernel enforces: every protection of "
            f"gatesh.boundary.contain.REQUIRED ({', '.join(contain.REQUIRED)})"
        )
    yield
    stop_daemon()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    (r / "tools").mkdir(parents=True)
    (r / "tools/run.sh").write_bytes(b"\x00\x01 not text")
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    return r


def _shell(confined: bool) -> subprocess.Popen[str]:
    """A process standing in for the session's shell, confined to a boundary or not."""
    code = (
        "import sys, time\n"
        f"sys.path[:0] = [{ROOT!r}]\n"
        "from gatesh.boundary import _kernel, _spec\n"
        "if sys.argv[1] == 'yes':\n"
        "    rules = _spec.Rules(_kernel.abi(), read=('/',), write=('/tmp',), list=('/',))\n"
        "    _kernel.apply(_spec.Spec(rules))\n"
        "print('ready', flush=True)\n"
        "time.sleep(120)\n"
    )
    p = subprocess.Popen(
        [sys.executable, "-c", code, "yes" if confined else "no"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    return p


def _register(session: str, pid: int, boundary: str) -> None:
    message: dict[str, object] = {"op": "register", "session": session, "pid": pid}
    message["surface"] = "pty"
    if boundary:
        message["boundary"] = boundary
    reply = client.request("check", message)
    assert reply.get("ok", True), reply


def _pty_check(command: str, cwd: Path, session: str) -> str:
    """The daemon's action for ``command`` asked as the session's relay asks (surface pty)."""
    code = (
        "import sys\n"
        "from gatesh import client\n"
        "r = client.check(sys.argv[1], cwd=sys.argv[2], session=sys.argv[3], surface='pty')\n"
        "print(r.action, r.message.splitlines()[0] if r.message else '')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, command, str(cwd), session],
        capture_output=True,
        text=True,
        timeout=90,
        check=True,
    )
    return out.stdout.strip()


@pytest.mark.parametrize(
    ("confined", "said", "want"),
    [
        (True, "b-session", "allow"),  # the relay confined it, and the shell shows it
        (False, "b-session", "reject"),  # said so, but the shell is not inside a boundary
        (True, "", "reject"),  # inside one, but its relay never said it confined it
    ],
)
def test_a_pty_session_s_command_is_contained_only_while_its_shell_is(
    repo: Path, confined: bool, said: str, want: str
) -> None:
    shell = _shell(confined)
    try:
        session = f"pty-{'c' if confined else 'u'}-{said or 'none'}"
        _register(session, shell.pid, said)
        got = _pty_check(UNREAD, repo, session)
        assert got.split()[0] == want, got
    finally:
        shell.kill()
        shell.wait()


def test_a_contained_session_s_shell_that_is_gone_is_contained_no_more(repo: Path) -> None:
    shell = _shell(True)
    _register("pty-gone", shell.pid, "b-session")
    assert _pty_check(UNREAD, repo, "pty-gone").split()[0] == "allow"
    shell.kill()
    shell.wait()
    assert _pty_check(UNREAD, repo, "pty-gone").split()[0] == "reject"

"""What a person sees from a real daemon (S6, S7, S8.2): events read by a view-only subscriber
while `gatesh -c` calls argue, escalate and get ruled on. Each test has its own daemon."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _daemon import stop_daemon

from gatesh import _paths, client

pytestmark = pytest.mark.slow

GATESH = [sys.executable, "-m", "gatesh"]
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}


@pytest.fixture(autouse=True)
def _daemon_stopped() -> Iterator[None]:
    yield
    stop_daemon()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=r, check=True, env=env)
    for i in range(5):
        (r / "f").write_text(str(i))
        subprocess.run(["git", "add", "f"], cwd=r, check=True, env=env)
        subprocess.run(["git", "commit", "-qm", f"c{i}"], cwd=r, check=True, env=env)
    return r


def run(cmd: str, *, session: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GATESH_SESSION": session}
    return subprocess.run([*GATESH, "-c", cmd], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=90)


class Viewer:
    """A view-only subscriber (role ``admin``: sees every event, is not asked anything)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(30)
        self.sock.connect(_paths.current().socket)
        self.file = self.sock.makefile("rwb")
        self.file.write(b'{"v":1,"hello":"admin","pid":%d}\n{"op":"subscribe"}\n' % os.getpid())
        self.file.flush()
        assert "welcome" in json.loads(self.file.readline())
        assert json.loads(self.file.readline())["subscribed"] is True

    def until(self, pred: Any) -> list[dict[str, Any]]:
        """Every event up to and including the first for which ``pred`` holds."""
        seen = []
        while True:
            ev = json.loads(self.file.readline())
            seen.append(ev)
            if pred(ev):
                return seen

    def close(self) -> None:
        self.sock.close()


def test_a_person_approved_retry_is_not_drawn_as_the_raters_pass(repo: Path) -> None:
    """S8.2: Agreed/Accepted label the rater passing a command. A retry that runs because a person
    approved it (`gatesh approve ID`) is the person's ruling, not a round the rater passed."""
    cmd = "git reset --hard HEAD~3"
    for _ in range(3):
        refused = run(cmd, session="lbl", cwd=repo)
    assert "nobody is watching" in refused.stderr
    pending = next(line.split()[2].rstrip(":") for line in refused.stderr.splitlines()
                   if line.startswith("Pending id "))
    viewer = Viewer()
    try:
        reply = client.request("human", {"op": "approve", "pending_id": pending})
        assert reply["ok"], reply
        assert run(cmd, session="lbl", cwd=repo).returncode == 0
        # Events of one session arrive in order; a later check elsewhere marks the end of its own.
        assert run("true", session="later", cwd=repo).returncode == 0
        events = viewer.until(lambda ev: ev.get("event") == "decision" and ev.get("session") == "later")
    finally:
        viewer.close()
    mine = [ev for ev in events if ev.get("session") == "lbl"]
    assert [ev["stage"] for ev in mine if ev.get("event") == "decision"] == ["approved-id"], mine
    assert not [ev for ev in mine if ev.get("event") == "round"], mine

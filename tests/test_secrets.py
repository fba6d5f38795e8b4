"""Secrets never reach the audit log, a model, the capture ring or a notice in clear (S13, S15).

Each secret below is a realistic shape (API keys, tokens, URL passwords, ``AWS_SECRET_ACCESS_KEY=…``)
carried by a command an agent might run; each test sends the commands through a real surface and
then searches everything that surface wrote for any secret's value.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gatesh import _paths, hooks
from gatesh._json import plain
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.rater.anthropic import AnthropicRater
from gatesh.rater.captures import CaptureRing
from gatesh.reading import read
from gatesh.session import SessionState
from gatesh.testing.model_server import ModelServer, server_error, tool_use

GATESH = [sys.executable, "-m", "gatesh"]

# (secret value, a command carrying it)
SECRETS: tuple[tuple[str, str], ...] = (
    (
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY aws s3 ls",
    ),
    (
        "sk-ant-api03-Zq8XvW2mN4pL6kJ9hG3fD1sA",
        "export ANTHROPIC_API_KEY=sk-ant-api03-Zq8XvW2mN4pL6kJ9hG3fD1sA",
    ),
    (
        "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5",
        "git clone https://ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5@github.com/acme/private.git",
    ),
    (
        "hunter2-Passw0rd",
        "psql postgres://admin:hunter2-Passw0rd@db.internal.example/prod -c 'select 1'",
    ),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZw",
        "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZw' "
        "https://api.example.com/v1/items",
    ),
    (
        "xoxb-2048-4096-Tk9sZWNyZXRzbGFjaw",
        "SLACK_TOKEN=xoxb-2048-4096-Tk9sZWNyZXRzbGFjaw ./notify.sh",
    ),
    ("S3cr3tDbPass", "mysql -u root -pS3cr3tDbPass shop -e 'show tables'"),
    ("sk_live_51HxYzAbCdEfGhIjKlMn", "stripe login --api-key sk_live_51HxYzAbCdEfGhIjKlMn"),
    ("tok-9f8e7d6c5b4a39281706", "deploy --token tok-9f8e7d6c5b4a39281706 --env prod"),
    (
        "npm_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "npm config set //registry.npmjs.org/:_authToken=npm_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    ),
)


def _leaks(text: str) -> list[str]:
    return [secret for secret, _ in SECRETS if secret in text]


# --- the audit log, `gatesh log` and the daemon's tail -----------------------------------------------------


def _daemon_pid() -> int | None:
    try:
        return int(Path(_paths.current().lock).read_text().strip())
    except (OSError, ValueError):
        return None


@pytest.fixture
def daemon_cleanup() -> Iterator[None]:
    yield
    pid = _daemon_pid()
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
            time.sleep(0.3)
            os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_audit_log_and_log_output_hold_no_secret(daemon_cleanup: None, tmp_path: Path) -> None:
    env = {**os.environ, "GATESH_SESSION": "sec"}
    for _, command in SECRETS:
        # Refused or run, every one is decided and audited; nothing here reaches a real network.
        subprocess.run(
            [*GATESH, "-c", command],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
        )
    text = Path(_paths.current().audit_log).read_text()
    records = [json.loads(line) for line in text.splitlines()]
    assert len(records) >= len(SECRETS), "every decision has its audit line"
    assert not _leaks(text), f"the audit log holds secrets: {_leaks(text)}"
    assert "‹redacted:" in text
    shown = subprocess.run([*GATESH, "log", "--json"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and shown.stdout.strip()
    assert not _leaks(shown.stdout + shown.stderr)
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(20)
        s.connect(_paths.current().socket)
        s.sendall(b'{"v":1,"hello":"admin","pid":%d}\n{"op":"tail","n":100}\n' % os.getpid())
        data = b""
        while data.count(b"\n") < 2:
            data += s.recv(1 << 20)
    assert not _leaks(data.decode())


def test_in_process_audit_holds_no_secret(tmp_path: Path) -> None:
    """The daemon-less gate writes the same audit lines, redacted the same way."""
    from gatesh.inprocess import gate

    for _, command in SECRETS:
        gate(command, cwd=str(tmp_path), session="inproc")
    text = Path(_paths.current().audit_log).read_text()
    assert len(text.splitlines()) == len(SECRETS)
    assert not _leaks(text), _leaks(text)


# --- what the model sees, and the capture ring ---------------------------------------------------------------


def test_model_requests_and_captures_hold_no_secret(tmp_path: Path) -> None:
    ring = CaptureRing()
    with ModelServer() as server:
        server.set_fallback(
            tool_use(
                "rateCommand",
                {
                    "outcome": "destructive",
                    "reason": "touches credentials",
                    "remedy": "use a secrets manager",
                },
            )
        )
        rater = AnthropicRater(
            model="m",
            base_url=server.base_url,
            api_key="sk-test-dummy",
            timeout_s=10,
            captures=ring,
        )
        for _, command in SECRETS:
            rater.rate(read(command, cwd=str(tmp_path)), cwd=str(tmp_path))
        server.set_fallback(server_error())  # failures are captured too
        rater.rate(read(SECRETS[0][1] + " --region x", cwd=str(tmp_path)), cwd=str(tmp_path))
        sent = json.dumps([r.body for r in server.requests])
        headers = json.dumps([dict(r.headers) for r in server.requests])
    assert len(server.requests) == len(SECRETS) + 1
    assert not _leaks(sent), f"secrets were sent to the model: {_leaks(sent)}"
    assert "sk-test-dummy" not in headers  # the recorder itself masks credentials
    captured = json.dumps(plain(ring.snapshot()))
    assert len(ring.snapshot()) == len(SECRETS) + 1
    assert not _leaks(captured), f"the capture ring holds secrets: {_leaks(captured)}"


# --- notices ---------------------------------------------------------------------------------------------


def _approved_with_notice(command: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    """``command`` at auto with the user's own words naming it verbatim: the builtin alignment check
    approves it, and the person is told in a notice (S5.6)."""
    session = SessionState(id="n")
    assert session.negotiation.admit_user_message(f"please run {command}", "watch")
    return decide(command, cwd=str(tmp_path), config=default(), session=session)


NOTICE_CASES = [
    "curl -X DELETE -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZw' "
    "https://api.example.com/v1/items/7",
    "git push https://ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5@github.com/acme/private.git main",
]


@pytest.mark.parametrize("command", NOTICE_CASES)
def test_notices_hold_no_secret(command: str, tmp_path: Path) -> None:
    d = _approved_with_notice(command, tmp_path)
    assert d.allowed and d.notice, (d.action, d.stage, d.reason)
    assert not _leaks(d.notice), f"the notice shows a secret: {d.notice}"
    # What a harness shows the person (Claude Code's systemMessage) is that notice.
    shown = hooks.render_answer("claude-code", "PreToolUse", hooks.Answer("allow", notice=d.notice))
    assert not _leaks(shown)

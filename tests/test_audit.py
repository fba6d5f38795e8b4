"""The audit log: durable JSON lines, group commit, rotation, redaction, failure refuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from gatesh.audit import AuditError, AuditLog, fold_home, read_tail, record_for
from gatesh.audit_record import as_json


def _lines(path: Path) -> list[dict]:
    """The records of ``path`` without the chain's own members (tests/test_audit_chain.py)."""
    chain = {"seq", "prev", "hash"}
    return [
        {k: v for k, v in json.loads(x).items() if k not in chain}
        for x in path.read_text().splitlines()
    ]


def test_append_writes_one_line_each(tmp_path: Path) -> None:
    log = AuditLog(str(tmp_path / "audit.jsonl"))
    for i in range(5):
        log.append({"n": i, "command": "x\ny"})
    recs = _lines(tmp_path / "audit.jsonl")
    assert [r["n"] for r in recs] == list(range(5))
    assert oct((tmp_path / "audit.jsonl").stat().st_mode & 0o777) == "0o600"


def test_concurrent_appends_lose_nothing(tmp_path: Path) -> None:
    log = AuditLog(str(tmp_path / "audit.jsonl"))

    def work(t: int) -> None:
        for i in range(200):
            log.append({"t": t, "i": i})

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    recs = _lines(tmp_path / "audit.jsonl")
    assert len(recs) == 1600
    assert {(r["t"], r["i"]) for r in recs} == {(t, i) for t in range(8) for i in range(200)}


def test_rotation_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(str(path), max_bytes=4096, keep=2)
    for i in range(400):
        log.append({"i": i, "pad": "x" * 100})
    assert (
        path.exists()
        and (tmp_path / "audit.jsonl.1").exists()
        and (tmp_path / "audit.jsonl.2").exists()
    )
    assert not (tmp_path / "audit.jsonl.3").exists()
    assert path.stat().st_size <= 4096
    tail = read_tail(str(path), 30)
    assert [r.document["i"] for r in tail] == list(range(370, 400))


def test_failure_raises(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    log = AuditLog(str(blocker / "audit.jsonl"))  # parent is a file: cannot be created
    with pytest.raises(AuditError, match="could not write the audit log"):
        log.append({"x": 1})
    assert log.failures == 1


@pytest.mark.slow
def test_rlimit_fsize_is_an_error_not_a_signal(tmp_path: Path) -> None:
    """Past RLIMIT_FSIZE (disk full's cousin) the append fails cleanly with SIGXFSZ ignored."""
    code = f"""
import resource, signal, sys
sys.path.insert(0, {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))!r})
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
from gatesh.audit import AuditLog, AuditError
log = AuditLog({str(tmp_path / "audit.jsonl")!r}, max_bytes=10**9)
resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))
ok = 0
try:
    for i in range(100):
        log.append({{"i": i, "pad": "x" * 100}})
        ok += 1
except AuditError as exc:
    print("refused", ok, exc)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("refused"), out.stdout


def test_record_is_redacted_and_home_folded(tmp_path: Path) -> None:
    from gatesh._types import Action, Decision, Facts, Rung, Stage

    home = os.path.expanduser("~")
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    d = Decision(
        action=Action.ALLOW,
        stage=Stage.READ_ONLY,
        outcome=None,
        reason="ok",
        rung=Rung.AUTO,
        facts=Facts(text=f"cat {home}/x && curl -H 'Authorization: token {secret}' x"),
    )
    rec = as_json(record_for(d, session="s", pid=1, cwd=f"{home}/repo", surface="-c"))
    line = json.dumps(rec)
    assert secret not in line
    assert home not in line and "~/repo" in line
    assert rec["action"] == "allow" and rec["stage"] == "read-only"
    assert fold_home("/h/u/x", "/h/u") == "~/x"


# --- written now, synced right after (the daemon's allow path, S13/S14) ----------------------------


class _Fsyncs:
    """Counts os.fsync calls; fails them while ``failing`` is set."""

    def __init__(self) -> None:
        self.calls = 0
        self.failing = False
        self.real = os.fsync

    def __call__(self, fd: int) -> None:
        self.calls += 1
        if self.failing:
            raise OSError(5, "Input/output error")
        self.real(fd)


def test_write_is_in_the_file_at_once_and_sync_makes_it_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fsyncs = _Fsyncs()
    monkeypatch.setattr(os, "fsync", fsyncs)
    log = AuditLog(str(tmp_path / "audit.jsonl"))
    log.write([{"n": 1}, {"n": 2}])
    assert [r["n"] for r in _lines(tmp_path / "audit.jsonl")] == [1, 2] and fsyncs.calls == 0
    log.sync()
    assert fsyncs.calls == 1
    log.append({"n": 3})  # append stays durable on its own
    assert fsyncs.calls == 2
    fsyncs.failing = True
    with pytest.raises(AuditError, match="could not sync"):
        log.sync()
    assert log.failures == 1 and "Input/output error" in log.last_error


def test_rotation_syncs_what_write_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fsyncs = _Fsyncs()
    monkeypatch.setattr(os, "fsync", fsyncs)
    log = AuditLog(str(tmp_path / "audit.jsonl"), max_bytes=4096, keep=2)
    for i in range(100):
        log.write([{"i": i, "pad": "x" * 100}])
    assert (tmp_path / "audit.jsonl.1").exists() and fsyncs.calls >= 1  # each rotation synced first
    assert [r.document["i"] for r in read_tail(str(tmp_path / "audit.jsonl"), 5)] == list(
        range(95, 100)
    )


def test_audit_pipe_writes_before_returning_and_syncs_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio
    import time

    from gatesh.daemon.server import AuditPipe

    fsyncs = _Fsyncs()
    monkeypatch.setattr(os, "fsync", fsyncs)
    path = tmp_path / "audit.jsonl"
    pipe = AuditPipe(AuditLog(str(path)))

    async def scenario() -> None:
        pipe.append({"n": 1})
        # In the file before append returned; the fsync waits for the loop's next turn.
        assert _lines(path) == [{"n": 1}] and fsyncs.calls == 0
        deadline = time.monotonic() + 5
        while fsyncs.calls == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert fsyncs.calls == 1
        # A background fsync fails: from then on each append is made durable before it returns,
        # and refused while the disk still fails.
        fsyncs.failing = True
        pipe.append({"n": 2})
        while not pipe.sync_error and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert pipe.sync_error
        with pytest.raises(AuditError):
            pipe.append({"n": 3})
        fsyncs.failing = False
        calls = fsyncs.calls
        pipe.append({"n": 4})
        assert fsyncs.calls == calls + 1 and not pipe.sync_error

    try:
        asyncio.run(scenario())
    finally:
        pipe.close()
    assert [r["n"] for r in _lines(path)] == [1, 2, 3, 4]  # 3 was written, then refused: not synced

"""The audit log is tamper-evident (S13): each line chained to the one before it, across rotation
and across the processes that write it; ``gatesh log --verify`` names the first line that was
changed, removed or inserted."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest

from gatesh import _paths
from gatesh.audit import GENESIS, AuditLog, files_newest_first, verify


def write(log: AuditLog, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        log.append({"session": "s", "command": f"echo {i}", "action": "allow", "i": i})


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def test_lines_are_chained_from_genesis(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write(AuditLog(str(path)), 3)
    records = [json.loads(x) for x in lines_of(path)]
    assert [r["seq"] for r in records] == [1, 2, 3]
    assert records[0]["prev"] == GENESIS
    assert records[1]["prev"] == records[0]["hash"] and records[2]["prev"] == records[1]["hash"]
    assert [r["i"] for r in records] == [0, 1, 2]  # the record itself is intact
    report = verify(str(path))
    assert report.ok and (report.lines, report.first_seq, report.last_seq) == (3, 1, 3)


def test_a_record_cannot_set_its_own_chain(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    AuditLog(str(path)).append({"seq": 99, "prev": "f" * 64, "hash": "e" * 64, "command": "x"})
    rec = json.loads(lines_of(path)[0])
    assert rec["seq"] == 1 and rec["prev"] == GENESIS and verify(str(path)).ok


def test_the_chain_continues_across_rotation_and_new_writers(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(str(path), max_bytes=4096, keep=3)
    write(log, 20)
    log.close()
    write(AuditLog(str(path), max_bytes=4096, keep=3), 20, start=20)  # another writer, later
    files = files_newest_first(str(path))
    assert len(files) >= 2
    report = verify(str(path))
    assert report.ok, report.problem
    assert report.last_seq == 40 and report.files == len(files)


def _writer(path: str, tag: int) -> None:
    log = AuditLog(path, max_bytes=8192, keep=50)
    for i in range(40):
        log.append({"session": f"w{tag}", "command": f"echo {tag}-{i}"})


@pytest.mark.slow
def test_two_processes_writing_one_log_keep_one_chain(tmp_path: Path) -> None:
    """The daemon and an in-process fallback may write at once: the lock keeps one chain."""
    path = str(tmp_path / "audit.jsonl")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(path, t)) for t in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    report = verify(path)
    assert report.ok, report.problem
    assert report.lines == 120 and report.last_seq == 120


def test_a_writer_takes_the_lock_file_again_once_it_was_removed(tmp_path: Path) -> None:
    """The writer keeps its lock file open between lines; once that file was removed (or its whole
    folder), its next line waits for the lock another writer takes by name, and is written."""
    import fcntl
    import os
    import shutil
    import threading

    folder = tmp_path / "state"
    path = str(folder / "audit.jsonl")
    log = AuditLog(path)
    write(log, 1)
    os.unlink(path + ".lock")
    other = os.open(path + ".lock", os.O_WRONLY | os.O_CREAT, 0o600)  # another writer's lock
    fcntl.flock(other, fcntl.LOCK_EX)
    t = threading.Thread(target=write, args=(log, 1, 1))
    t.start()
    t.join(0.5)
    assert t.is_alive()  # waiting for the lock the other writer holds
    fcntl.flock(other, fcntl.LOCK_UN)
    os.close(other)
    t.join(10)
    assert not t.is_alive()
    shutil.rmtree(folder)  # the folder is gone: made again; the writer records the gap
    write(log, 1, 2)
    log.close()
    report = verify(path)
    assert [f.kind.value for f in report.findings] == ["break"], report.findings
    assert "the log file was deleted (the kept head file" in report.problem
    assert (report.lines, report.first_seq, report.last_seq) == (2, 3, 4)  # seq never restarts


@pytest.fixture
def chained(tmp_path: Path) -> Path:
    path = tmp_path / "audit.jsonl"
    write(AuditLog(str(path)), 6)
    return path


def test_an_edited_line_is_reported(chained: Path) -> None:
    lines = lines_of(chained)
    lines[2] = lines[2].replace(b'"action":"allow"', b'"action":"halt"')
    chained.write_bytes(b"\n".join(lines) + b"\n")
    report = verify(str(chained))
    assert (report.kind, report.line, report.seq) == ("changed", 3, 3), report.problem


def test_an_edited_line_with_its_hash_recomputed_is_reported(chained: Path) -> None:
    import hashlib

    lines = lines_of(chained)
    edited = lines[2].replace(b'"action":"allow"', b'"action":"deny"')
    body = edited[: edited.rindex(b',"hash":')] + b"}"
    lines[2] = body[:-1] + b',"hash":"' + hashlib.sha256(body).hexdigest().encode() + b'"}'
    chained.write_bytes(b"\n".join(lines) + b"\n")
    report = verify(str(chained))
    assert (report.kind, report.line, report.seq) == ("changed", 3, 3), report.problem


def test_a_deleted_line_is_reported(chained: Path) -> None:
    lines = lines_of(chained)
    del lines[3]
    chained.write_bytes(b"\n".join(lines) + b"\n")
    report = verify(str(chained))
    assert report.kind == "removed" and report.line == 4 and report.seq == 5, report.problem
    assert "1 removed line (seq 4)" in report.problem


def test_an_inserted_line_is_reported(chained: Path, tmp_path: Path) -> None:
    """A forger who chains the new line correctly to the one before is still found: the original
    next line names the line before the insertion."""
    import hashlib

    lines = lines_of(chained)
    before = json.loads(lines[1])
    content = json.dumps(
        {"seq": before["seq"] + 1, "prev": before["hash"], "command": "forged"},
        separators=(",", ":"),
    ).encode()
    forged = content[:-1] + b',"hash":"' + hashlib.sha256(content).hexdigest().encode() + b'"}'
    lines.insert(2, forged)
    chained.write_bytes(b"\n".join(lines) + b"\n")
    report = verify(str(chained))
    assert (report.kind, report.line) == ("inserted", 3), report.problem
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(b"\n".join([*lines_of(chained)[:2], b'{"command":"forged"}']) + b"\n")
    assert verify(str(plain)).kind == "changed"  # a line with no chain at all


def test_a_removed_rotated_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write(AuditLog(str(path), max_bytes=4096, keep=5), 40)
    files = files_newest_first(str(path))
    assert len(files) >= 3
    Path(files[1]).unlink()  # audit.jsonl.1: the lines between .2 and the live file
    Path(files[2]).rename(files[1])
    report = verify(str(path))
    assert report.kind == "removed", report.problem


@pytest.mark.slow
def test_gatesh_log_verify(isolated_home: Path) -> None:
    path = Path(_paths.current().audit_log)
    write(AuditLog(str(path)), 4)
    run = [sys.executable, "-m", "gatesh", "log", "--verify"]
    out = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "intact: 4 lines" in out.stdout, out.stdout + out.stderr
    lines = lines_of(path)
    del lines[1]
    path.write_bytes(b"\n".join(lines) + b"\n")
    out = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "line 2 of" in out.stdout and "removed" in out.stdout, out.stdout
    out = subprocess.run([*run, "--json"], capture_output=True, text=True, timeout=60)
    report = json.loads(out.stdout)
    assert out.returncode == 1 and report["ok"] is False and report["kind"] == "removed"

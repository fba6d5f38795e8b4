"""The audit log shows its gaps (S13, issue 27): the writer keeps the chain's head and records what
it finds changed under it; verify names cut tails, dropped first lines, missing rotations, torn
lines and whole-chain rewrites (the last with the system log's anchors)."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gatesh import _paths, audit_syslog
from gatesh.audit import AuditError, AuditLog
from gatesh.audit_chain import GENESIS, Head, Kind, head_path, read_head, verify
from gatesh.testing.syslog_sink import SyslogSink


def write(log: AuditLog, n: int, start: int = 0, action: str = "allow") -> None:
    for i in range(start, start + n):
        log.append({"session": "s", "command": f"echo {i}", "action": action})


def records(path: Path) -> list[dict[str, object]]:
    """The complete records of the log file (a torn partial line is left out)."""
    out = []
    for raw in path.read_bytes().splitlines():
        try:
            out.append(json.loads(raw))
        except ValueError:
            continue
    return out


def kinds(path: Path, **kw: object) -> list[str]:
    return [f.kind.value for f in verify(str(path), **kw).findings]  # type: ignore[arg-type]


def forge(record: dict[str, object], seq: int, prev: str) -> tuple[bytes, str]:
    body = json.dumps(record, separators=(",", ":")).encode()
    content = b'{"seq":%d,"prev":"%s",' % (seq, prev.encode()) + body[1:]
    digest = hashlib.sha256(content).hexdigest()
    return content[:-1] + b',"hash":"' + digest.encode() + b'"}\n', digest


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "audit.jsonl"


def test_the_head_is_kept_after_every_batch(log_path: Path) -> None:
    log = AuditLog(str(log_path))
    write(log, 3)
    head, problem = read_head(str(log_path))
    last = records(log_path)[-1]
    assert problem == "" and head is not None
    assert (head.seq, head.hash, head.size, head.floor) == (
        3,
        last["hash"],
        log_path.stat().st_size,
        1,
    )
    assert len(Path(head_path(str(log_path))).read_bytes()) == 512
    assert verify(str(log_path)).findings == ()


def test_a_log_without_its_head_says_what_cannot_be_checked(log_path: Path) -> None:
    write(AuditLog(str(log_path)), 3)
    os.unlink(head_path(str(log_path)))
    report = verify(str(log_path))
    assert report.ok and [f.kind for f in report.findings] == [Kind.NO_HEAD]
    write(AuditLog(str(log_path)), 1, 3)  # a new writer: continues, and says it could not check
    rec = records(log_path)
    assert [r["seq"] for r in rec] == [1, 2, 3, 4, 5]
    assert rec[3]["action"] == "chain-break" and rec[3]["break"] == "no-head"


def test_the_last_lines_cut_off_are_reported(log_path: Path) -> None:
    write(AuditLog(str(log_path)), 6)
    lines = log_path.read_bytes().splitlines(keepends=True)
    log_path.write_bytes(b"".join(lines[:-2]))
    report = verify(str(log_path))
    assert not report.ok and report.kind == "cut"
    assert "the last 2 lines were cut off" in report.problem


@pytest.mark.parametrize("how", ["emptied", "deleted", "cut"])
def test_a_log_changed_under_its_running_writer_gets_a_chain_break(
    log_path: Path, how: str
) -> None:
    log = AuditLog(str(log_path))
    write(log, 5)
    if how == "emptied":
        log_path.write_bytes(b"")
    elif how == "deleted":
        log_path.unlink()
    else:
        log_path.write_bytes(b"".join(log_path.read_bytes().splitlines(keepends=True)[:2]))
    write(log, 1, 5)
    rec = records(log_path)
    brk = rec[-2]
    assert brk["action"] == "chain-break" and brk["break"] == how, brk
    assert brk["seq"] == 6 and rec[-1]["seq"] == 7  # seq never restarts
    assert brk["kept_head"]["seq"] == 5  # type: ignore[index]
    report = verify(str(log_path))
    assert not report.ok and Kind.BREAK in [f.kind for f in report.findings]
    assert f"the writer found the log file was {how}" in report.problem


def test_a_log_deleted_while_no_writer_ran_is_found_by_the_next(log_path: Path) -> None:
    log = AuditLog(str(log_path))
    write(log, 4)
    log.close()
    log_path.unlink()
    write(AuditLog(str(log_path)), 1, 4)
    rec = records(log_path)
    assert [(r["seq"], r["action"]) for r in rec] == [(5, "chain-break"), (6, "allow")]
    assert rec[0]["break"] == "deleted" and rec[0]["kept_head"]["seq"] == 4  # type: ignore[index]


def test_a_replaced_file_is_named(log_path: Path) -> None:
    log = AuditLog(str(log_path))
    write(log, 3)
    other = log_path.with_name("other")
    other.write_bytes(b"")
    os.replace(other, log_path)
    write(log, 1, 3)
    assert records(log_path)[0]["break"] == "replaced"


def test_the_first_lines_dropped_are_reported(log_path: Path) -> None:
    write(AuditLog(str(log_path)), 8)
    log_path.write_bytes(b"".join(log_path.read_bytes().splitlines(keepends=True)[3:]))
    report = verify(str(log_path))
    assert report.kind == "dropped" and "the first 3 lines were dropped" in report.problem


def test_lines_rotated_away_are_not_dropped(log_path: Path) -> None:
    write(AuditLog(str(log_path), max_bytes=4096, keep=1), 60)
    report = verify(str(log_path))
    assert report.ok and report.findings == () and report.first_seq > 1, report.findings


def test_missing_rotations_are_reported(log_path: Path) -> None:
    write(AuditLog(str(log_path), max_bytes=4096, keep=5), 60)
    assert Path(f"{log_path}.3").exists()
    Path(f"{log_path}.2").unlink()
    report = verify(str(log_path))
    assert [f.kind for f in report.findings] == [Kind.MISSING_FILE], report.findings
    assert "audit.jsonl.2 is missing" in report.problem and "are gone" in report.problem


def test_appended_lines_are_reported_and_recorded_by_the_next_write(log_path: Path) -> None:
    log = AuditLog(str(log_path))
    write(log, 4)
    last = records(log_path)[-1]
    line, _ = forge({"command": "git reset --hard", "answer": "once"}, 5, str(last["hash"]))
    with open(log_path, "ab") as f:
        f.write(line)
    assert kinds(log_path) == ["appended"]
    write(log, 1, 4)
    brk = records(log_path)[-2]
    assert brk["break"] == "unrecorded" and brk["seq"] == 6, brk


def test_a_head_file_rolled_back_is_recorded(log_path: Path) -> None:
    """The writer's own memory of the head outranks a head file that went back."""
    log = AuditLog(str(log_path))
    write(log, 4)
    head, _ = read_head(str(log_path))
    assert head is not None
    Path(head_path(str(log_path))).write_bytes(
        Head(2, "a" * 64, head.dev, head.ino, 10, 1).encode()
    )
    with open(log_path, "ab") as f:
        f.write(b'{"seq":5,"prev":')  # and the file no longer ends where the writer left it
    write(log, 1, 4)
    rec = records(log_path)
    assert rec[-2]["break"] == "head-changed" and rec[-2]["seq"] == 5, rec[-2]
    assert "this writer last wrote seq 4" in str(rec[-2]["found"])


def test_a_torn_line_is_closed_and_named_once(log_path: Path) -> None:
    """A full disk: past RLIMIT_FSIZE the write stops short; the next record closes the line."""
    log = AuditLog(str(log_path))
    write(log, 5)
    size = log_path.stat().st_size
    old = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 30, hard))
    try:
        with pytest.raises(AuditError):
            write(log, 1, 5)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old)
    assert not log_path.read_bytes().endswith(b"\n")
    write(log, 3, 6)
    raw = log_path.read_bytes().splitlines()
    assert len(raw) == 9 and len(raw[5]) == 30  # the torn piece, on its own line
    report = verify(str(log_path))
    assert report.ok and [f.kind for f in report.findings] == [Kind.TORN], report.findings
    assert report.last_seq == 8 and report.lines == 9  # the torn record's seq is used again


def test_verify_goes_on_after_a_problem(log_path: Path) -> None:
    write(AuditLog(str(log_path)), 10)
    lines = log_path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"allow"', b'"halt"')
    del lines[6]
    log_path.write_bytes(b"".join(lines))
    assert kinds(log_path) == ["changed", "removed"]


def test_the_system_log_shows_a_whole_chain_rewritten(log_path: Path, tmp_path: Path) -> None:
    """A forger who rewrites every line and the head file consistently is seen only by what the
    system log holds: a head anchor and record copies name hashes the file no longer has."""
    with SyslogSink(str(tmp_path / "syslog.sock")) as sink:
        log = AuditLog(str(log_path))
        log.syslog, log.syslog_socket, log.syslog_head_every = True, sink.path, 5
        write(log, 12)
        log.close()
        assert sink.wait_for('"seq":12,')
        lines = sink.lines()
    assert sum(" head {" in x for x in lines) == 3  # start, every 5 (seq 5 and 10)
    assert sum(" allow {" in x for x in lines) == 12
    # The rewrite: line 4 changed, every line after it chained again, the head made to match.
    rec = [json.loads(x) for x in log_path.read_bytes().splitlines()]
    rec[3]["command"] = "echo nothing to see"
    prev, out = GENESIS, []
    for r in rec:
        body = {k: v for k, v in r.items() if k not in ("seq", "prev", "hash")}
        line, prev = forge(body, int(r["seq"]), prev)
        out.append(line)
    log_path.write_bytes(b"".join(out))
    st = log_path.stat()
    Path(head_path(str(log_path))).write_bytes(
        Head(12, prev, st.st_dev, st.st_ino, st.st_size, 1).encode()
    )
    assert verify(str(log_path)).ok  # the files alone cannot show it
    against = audit_syslog.anchors(lines, str(log_path))
    report = verify(str(log_path), against=against)
    assert not report.ok and report.kind == "rewritten", report.findings
    assert "9 lines differ from what the system log holds" in report.problem


def test_the_system_log_shows_a_cut_tail_with_its_head(log_path: Path, tmp_path: Path) -> None:
    with SyslogSink(str(tmp_path / "syslog.sock")) as sink:
        log = AuditLog(str(log_path))
        log.syslog, log.syslog_socket = True, sink.path
        write(log, 6)
        log.close()
        assert sink.wait_for('"seq":6,')
        lines = sink.lines()
    log_path.write_bytes(b"".join(log_path.read_bytes().splitlines(keepends=True)[:3]))
    os.unlink(head_path(str(log_path)))
    report = verify(str(log_path), against=audit_syslog.anchors(lines, str(log_path)))
    assert [f.kind for f in report.findings] == [Kind.NO_HEAD, Kind.CUT], report.findings


# --- through the daemon and the CLI ---------------------------------------------------------------

GATESH = [sys.executable, "-m", "gatesh"]


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GATESH, *argv], capture_output=True, text=True, timeout=60)


@pytest.mark.slow
def test_the_daemon_records_a_log_emptied_while_it_runs(isolated_home: Path) -> None:
    from _daemon import stop_daemon

    try:
        for _ in range(3):
            assert _run("-c", "true").returncode == 0
        path = Path(_paths.current().audit_log)
        before = records(path)
        path.write_bytes(b"")  # `: > audit.jsonl`, done from outside the gate
        assert _run("-c", "true").returncode == 0
        after = records(path)
        assert after[0]["action"] == "chain-break" and after[0]["break"] == "emptied"
        assert after[0]["seq"] == before[-1]["seq"] + 1
        out = _run("log", "--verify")
        assert out.returncode == 1, out.stdout
        assert "the writer found the log file was emptied" in out.stdout
        report = json.loads(_run("log", "--verify", "--json").stdout)
        assert report["ok"] is False and report["findings"][0]["kind"] == "break"
    finally:
        stop_daemon()


@pytest.mark.slow
def test_log_verify_against_a_loopback_system_log(isolated_home: Path, tmp_path: Path) -> None:
    from _daemon import stop_daemon

    config = Path(_paths.current().user_config)
    config.parent.mkdir(parents=True, exist_ok=True)
    sink = SyslogSink(str(tmp_path / "syslog.sock"))
    config.write_text(
        f'[audit]\nsyslog = true\nsyslog_socket = "{sink.path}"\nsyslog_head_every = 2\n'
    )
    try:
        for _ in range(4):
            assert _run("-c", "true").returncode == 0
        path = Path(_paths.current().audit_log)
        n = len(records(path))
        assert sink.wait_for(f'"seq":{n},')
        time.sleep(0.2)
        syslog_file = tmp_path / "syslog"
        sink.write_to(str(syslog_file))
        out = _run("log", "--verify", "--against-syslog", str(syslog_file))
        assert out.returncode == 0, out.stdout + out.stderr
        assert "checked against the system log" in out.stdout
        # Rewrite the whole chain and its head consistently: only the system log can tell.
        rec = records(path)
        prev, lines = GENESIS, []
        for r in rec:
            body = {k: v for k, v in r.items() if k not in ("seq", "prev", "hash")}
            if body.get("action") == "allow":
                body["command"] = "echo ok"
            line, prev = forge(body, int(r["seq"]), prev)
            lines.append(line)
        path.write_bytes(b"".join(lines))
        st = path.stat()
        Path(head_path(str(path))).write_bytes(
            Head(len(rec), prev, st.st_dev, st.st_ino, st.st_size, 1).encode()
        )
        assert _run("log", "--verify").returncode == 0
        out = _run("log", "--verify", "--against-syslog", str(syslog_file))
        assert out.returncode == 1 and "the log was rewritten" in out.stdout, out.stdout
        missing = _run("log", "--verify", "--against-syslog", str(tmp_path / "nothing"))
        assert missing.returncode == 2 and "nothing" in missing.stderr
    finally:
        stop_daemon()
        sink.close()

"""What ``gatesh log --verify`` reports after each audit manipulation of issue 27, before and after.

Each manipulation is done for real on a scratch log written by the real writer: lines cut off the
end, the file deleted or emptied (also while its writer runs), the first lines dropped, the whole
chain rewritten consistently by a short script (a deny line removed, a forged approval inserted),
a forged approval appended and chained, a middle rotation deleted, a full disk leaving a torn
half-line. "before" runs the audit module of the given revision (its writer and its verify, the
old ``gatesh log --verify`` wording); "after" runs this tree's, from the files alone and against
a loopback system log (``audit.syslog``, :class:`gatesh.testing.syslog_sink.SyslogSink`).

    python benchmarks/audit_tamper.py [--before REV] [--write docs/RELIABILITY.md]

Prints the Markdown table and the JSON line; ``--write`` replaces the table between the markers
``<!-- audit-tamper:begin -->`` and ``<!-- audit-tamper:end -->`` in that file.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import emit

from gatesh import audit as audit_after
from gatesh import audit_chain, audit_syslog
from gatesh.testing.syslog_sink import SyslogSink

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "<!-- audit-tamper:begin -->"
END = "<!-- audit-tamper:end -->"
# The revision whose audit module is "before": the last one before the writer kept a head.
DEFAULT_BEFORE = "ca054e2"
LINES = 30  # records a scenario's log holds before it is manipulated
HEAD_EVERY = 10  # audit.syslog_head_every in the scenarios


def load_before(rev: str) -> ModuleType:
    """The audit module as it was at ``rev`` (imported under another name; it imports only the
    parts of gatesh that did not change)."""
    text = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:gatesh/audit.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    folder = tempfile.mkdtemp(prefix="audit-before-")
    path = os.path.join(folder, "audit_before.py")
    Path(path).write_text(text)
    spec = importlib.util.spec_from_file_location("audit_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["audit_before"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


# --- a forger's tools (independent of either module) ------------------------------------------


def forge(record: dict[str, Any], seq: int, prev: str) -> tuple[bytes, str]:
    """A chained line as a 20-line forging script would write it: (line, its hash)."""
    body = json.dumps(record, separators=(",", ":")).encode()
    content = b'{"seq":%d,"prev":"%s",' % (seq, prev.encode()) + body[1:]
    digest = hashlib.sha256(content).hexdigest()
    return content[:-1] + b',"hash":"' + digest.encode() + b'"}\n', digest


def rechain(lines: list[bytes], first_seq: int, prev: str) -> tuple[list[bytes], str]:
    """``lines`` (records, chain fields dropped) chained again from ``first_seq`` after ``prev``."""
    out = []
    for i, raw in enumerate(lines):
        rec = json.loads(raw)
        for key in ("seq", "prev", "hash"):
            rec.pop(key, None)
        line, prev = forge(rec, first_seq + i, prev)
        out.append(line)
    return out, prev


def forged_head(path: str, seq: int, digest: str) -> None:
    """What a forger who knows the head file does after a rewrite: the head made to match."""
    st = os.stat(path)
    old, _ = audit_chain.read_head(path)
    floor = old.floor if old else 1
    Path(audit_chain.head_path(path)).write_bytes(
        audit_chain.Head(seq, digest, st.st_dev, st.st_ino, st.st_size, floor).encode()
    )


# --- the scenarios ------------------------------------------------------------------------------


@dataclass
class World:
    """One scenario's scratch log and its writer."""

    mod: ModuleType
    path: str
    log: Any
    sink: SyslogSink | None

    def write(self, n: int, start: int = 0, action: str = "allow") -> None:
        for i in range(start, start + n):
            self.log.append(
                {"session": "s", "command": f"echo {i}", "action": action, "stage": "rater"}
            )

    def lines(self, name: str = "") -> list[bytes]:
        return Path(name or self.path).read_bytes().splitlines(keepends=True)

    def new_writer(self, **kw: Any) -> None:
        self.log.close()
        self.log = make_writer(self.mod, self.path, self.sink, **kw)


def make_writer(mod: ModuleType, path: str, sink: SyslogSink | None, **kw: Any) -> Any:
    log = mod.AuditLog(path, **kw)
    if sink is not None:
        log.syslog = True
        log.syslog_socket = sink.path
        log.syslog_head_every = HEAD_EVERY
    return log


def cut_tail(w: World) -> None:
    w.write(LINES)
    Path(w.path).write_bytes(b"".join(w.lines()[:-3]))


def deleted_stopped(w: World) -> None:
    w.write(LINES)
    w.log.close()
    os.unlink(w.path)
    w.new_writer()
    w.write(1, LINES)


def emptied_running(w: World) -> None:
    w.write(LINES)
    with open(w.path, "r+b") as f:
        f.truncate(0)
    w.write(1, LINES)


def deleted_running(w: World) -> None:
    w.write(LINES)
    os.unlink(w.path)
    w.write(1, LINES)


def first_dropped(w: World) -> None:
    w.write(LINES)
    Path(w.path).write_bytes(b"".join(w.lines()[5:]))


def rewritten(w: World, *, head_too: bool = True) -> None:
    """A 20-line script's work: the deny line removed, a forged approval inserted, every line
    after them chained again; the head file made to match (``head_too``)."""
    w.write(12)
    w.write(1, 12, action="deny")
    w.write(LINES - 13, 13)
    w.log.close()
    lines = w.lines()
    kept = [x for x in lines if b'"action":"deny"' not in x]
    kept.insert(
        20, json.dumps({"session": "s", "command": "git push -f", "answer": "once"}).encode()
    )
    out, last = rechain(kept, 1, audit_chain.GENESIS)
    Path(w.path).write_bytes(b"".join(out))
    if head_too and os.path.exists(audit_chain.head_path(w.path)):
        forged_head(w.path, len(out), last)


def appended(w: World, *, head_too: bool = False) -> None:
    w.write(LINES)
    w.log.close()
    last = json.loads(w.lines()[-1])
    line, digest = forge(
        {"session": "s", "command": "git reset --hard", "action": "allow", "answer": "once"},
        last["seq"] + 1,
        last["hash"],
    )
    with open(w.path, "ab") as f:
        f.write(line)
    if head_too and os.path.exists(audit_chain.head_path(w.path)):
        forged_head(w.path, last["seq"] + 1, digest)


def middle_rotation(w: World) -> None:
    w.new_writer(max_bytes=4096, keep=5)
    w.write(60)
    os.unlink(w.path + ".2")


def oldest_rotation(w: World) -> None:
    w.new_writer(max_bytes=4096, keep=5)
    w.write(60)
    rotated = sorted(
        (p for p in os.listdir(os.path.dirname(w.path)) if p.rsplit(".", 1)[-1].isdigit()),
        key=lambda p: int(p.rsplit(".", 1)[1]),
    )
    os.unlink(os.path.join(os.path.dirname(w.path), rotated[-1]))


def torn(w: World) -> None:
    """A full disk: past RLIMIT_FSIZE a write stops short (SIGXFSZ ignored, as the daemon does)."""
    w.write(LINES)
    size = os.path.getsize(w.path)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 40, hard))
    try:
        with contextlib.suppress(Exception):
            w.write(1, LINES)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old_handler)
    w.write(3, LINES + 1)


@dataclass(frozen=True)
class Scenario:
    name: str
    run: Callable[[World], None]


SCENARIOS = (
    Scenario("the last 3 lines cut off", cut_tail),
    Scenario("the file deleted while the daemon was stopped; it writes again", deleted_stopped),
    Scenario("the file emptied while the daemon runs; it writes again", emptied_running),
    Scenario("the file deleted while the daemon runs; it writes again", deleted_running),
    Scenario("the first 5 lines dropped", first_dropped),
    Scenario(
        "the whole chain rewritten consistently (a deny line removed, a forged approval "
        "inserted), the head file left as it was",
        lambda w: rewritten(w, head_too=False),
    ),
    Scenario(
        "the same rewrite, the head file rewritten to match", lambda w: rewritten(w, head_too=True)
    ),
    Scenario("a forged approval appended and chained", appended),
    Scenario(
        "a forged approval appended and chained, the head file rewritten to match",
        lambda w: appended(w, head_too=True),
    ),
    Scenario("a middle rotation (`.2`) deleted", middle_rotation),
    Scenario("the oldest rotation deleted", oldest_rotation),
    Scenario("a full disk leaves a torn half-line; the daemon writes 3 more records", torn),
)


@contextlib.contextmanager
def scratch() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="audit-tamper-") as folder:
        yield folder


def before_text(mod: ModuleType, path: str) -> tuple[str, bool]:
    """What the old ``gatesh log --verify`` printed (its wording, from its report)."""
    report = mod.verify(path)
    if report.ok:
        span = f", seq {report.first_seq} to {report.last_seq}" if report.lines else ""
        text = f"audit log intact: {report.lines} lines in {report.files} file" + (
            "s" if report.files != 1 else ""
        )
        return text + span, True
    return f"audit log tampered with: {report.problem}", False


def after_text(path: str, against: list[audit_chain.Anchor] | None) -> tuple[str, bool]:
    report = audit_chain.verify(path, against=against)
    headline, rows = audit_chain.describe(report)
    found = [r for r in rows if not r.startswith("note:")]
    return "; ".join([headline, *found]), report.ok


def run_one(scenario: Scenario, mod: ModuleType, *, syslog: bool) -> tuple[str, bool, str, bool]:
    """Run ``scenario`` on a fresh log; (text, ok) of verify from the files, and with the system
    log (empty when ``syslog`` is off)."""
    with scratch() as folder:
        path = os.path.join(folder, "state", "audit.jsonl")
        os.makedirs(os.path.dirname(path))
        sink = SyslogSink(os.path.join(folder, "syslog.sock")) if syslog else None
        try:
            w = World(mod, path, make_writer(mod, path, sink), sink)
            scenario.run(w)
            w.log.close()
            if mod is audit_after:
                text, ok = after_text(path, None)
                s_text, s_ok = "", True
                if sink is not None:
                    sink.wait_for("never", 0.2)  # let the last datagrams arrive
                    against = audit_syslog.anchors(sink.lines(), path)
                    s_text, s_ok = after_text(path, against)
                return _short(text, folder), ok, _short(s_text, folder), s_ok
            text, ok = before_text(mod, path)
            return _short(text, folder), ok, "", True
        finally:
            if sink is not None:
                sink.close()


def _short(text: str, folder: str) -> str:
    return text.replace(os.path.join(folder, "state") + "/", "").replace("|", "\\|")


def mark(ok: bool) -> str:
    return "intact" if ok else "**tampering found**"


def table(rows: list[dict[str, Any]], before_rev: str) -> str:
    out = [
        f"Generated by `benchmarks/audit_tamper.py` (before: the audit module at {before_rev}; "
        f"after: this tree, {LINES} records per log, `audit.syslog_head_every = {HEAD_EVERY}`).",
        "",
        "| manipulation | before: `gatesh log --verify` | after: `--verify` | after: "
        "`--verify --against-syslog` |",
        "|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['scenario']} | {mark(r['before_ok'])}: {r['before']} | "
            f"{mark(r['after_ok'])}: {r['after']} | {mark(r['syslog_ok'])}: {r['syslog']} |"
        )
    return "\n".join(out) + "\n"


def write_into(file: Path, text: str) -> None:
    content = file.read_text()
    if BEGIN not in content or END not in content:
        raise SystemExit(f"{file} has no {BEGIN} … {END} markers")
    head, _, rest = content.partition(BEGIN)
    _, _, tail = rest.partition(END)
    file.write_text(f"{head}{BEGIN}\n{text}{END}{tail}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=DEFAULT_BEFORE, help="revision of the old module")
    parser.add_argument("--write", type=Path, help="replace the table in this Markdown file")
    args = parser.parse_args()
    before = load_before(args.before)
    rows = []
    for scenario in SCENARIOS:
        b_text, b_ok, _, _ = run_one(scenario, before, syslog=False)
        a_text, a_ok, s_text, s_ok = run_one(scenario, audit_after, syslog=True)
        rows.append(
            {
                "scenario": scenario.name,
                "before": b_text,
                "before_ok": b_ok,
                "after": a_text,
                "after_ok": a_ok,
                "syslog": s_text,
                "syslog_ok": s_ok,
            }
        )
    text = table(rows, args.before)
    print(text)
    if args.write:
        write_into(args.write, text)
    emit(
        "audit_tamper",
        {
            "scenarios": len(rows),
            "found_before": sum(not r["before_ok"] for r in rows),
            "found_after": sum(not r["after_ok"] for r in rows),
            "found_with_syslog": sum(not r["syslog_ok"] for r in rows),
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

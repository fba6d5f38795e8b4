"""The audit log (S13): one JSON line per decision, durable before the command may run.

Guarantees:

- :meth:`AuditLog.append` returns only after the line is written with ``O_APPEND`` and
  ``fsync``-ed; it raises :class:`AuditError` otherwise. The caller must then refuse the command:
  nothing is allowed without its audit line (S15).
- :meth:`AuditLog.write` returns once the line is written (handed to the kernel, in order: it
  survives the process being killed, S13, S15) but not yet ``fsync``-ed; :meth:`AuditLog.sync`
  then makes everything written so far durable. The daemon uses the pair to keep the ``fsync``
  off the allow path (see :class:`gatesh.daemon.auditpipe.AuditPipe`).
- Concurrent appends from threads of one process are batched (group commit): one writer thread
  writes every queued line and ``fsync``s once, and each caller waits for the batch holding its line.
- Rotation is size-bounded: before a batch that would push ``audit.jsonl`` past ``max_bytes`` the
  file becomes ``audit.jsonl.1`` (``.1`` becomes ``.2`` …) and at most ``keep`` rotated files stay.
- Commands are home-folded (``~``) and redacted (:func:`gatesh.redact.redact`) before they are
  written; so are reasons and answers, which may quote the command.
- Tamper-evident (S13): every line starts ``{"seq":N,"prev":P,`` and ends ``,"hash":H}``, where
  ``seq`` counts lines across rotation, ``P`` is the previous line's ``H`` (:data:`GENESIS` for
  the first line ever) and ``H`` is the SHA-256 of the line with its ``hash`` member taken out.
  Writers of one log (the daemon, an in-process fallback) take ``audit.jsonl.lock`` while they
  chain and write, so the chain holds across processes. :func:`verify` names the first line that
  was changed, removed or inserted. Known limit: a chain without a secret cannot show lines cut
  from its end, nor a writer who rewrites every line after an edit; the system log copy
  (``audit.syslog``) and a log the agent cannot write (S9.6) can.

``SIGXFSZ`` must be ignored by the process (the daemon does it): past ``RLIMIT_FSIZE`` a write then
fails with ``EFBIG`` — an :class:`AuditError` — instead of killing the process.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from gatesh._errors import GateshError
from gatesh.redact import redact

if TYPE_CHECKING:
    from gatesh._types import Decision, Verdict

__all__ = [
    "GENESIS",
    "AuditError",
    "AuditLog",
    "ChainReport",
    "cascade_record",
    "files_newest_first",
    "fold_home",
    "follow",
    "read_tail",
    "record_for",
    "send_syslog",
    "verify",
]

# A record larger than this is cut (its command first): one decision must never rotate the log on
# its own, and a 64 KiB command is already past the reader's limit (S2).
MAX_RECORD_BYTES = 96 * 1024


class AuditError(GateshError):
    """The audit line could not be made durable. The command must be refused."""


def _redact(text: str) -> str:
    return redact(text)


_home_cache: tuple[str | None, str] = (None, "")


def _home() -> str:
    """``~`` expanded, recomputed only when ``$HOME`` changes (the daemon folds every record)."""
    global _home_cache
    env = os.environ.get("HOME")
    if env is None:  # expanduser falls back to the password database: not cached
        return os.path.expanduser("~")
    if _home_cache[0] != env:
        _home_cache = (env, os.path.expanduser("~"))
    return _home_cache[1]


def fold_home(text: str, home: str | None = None) -> str:
    """``text`` with the user's home folder written as ``~`` (S4, S13)."""
    home = home if home is not None else _home()
    if not home or home == "/":
        return text
    return text.replace(home.rstrip("/"), "~")


def _clean(text: str) -> str:
    if not text:
        return text
    home = _home()
    key = (text, home)
    hit = _CLEANED.get(key)
    if hit is None:
        hit = _redact(fold_home(text, home))
        if len(_CLEANED) >= _CLEANED_MAX:
            _CLEANED.clear()
        if len(text) <= 4096:
            _CLEANED[key] = hit
    return hit


def clean(text: str) -> str:
    """``text`` as every record and event shows it: home folded to ``~``, secrets redacted."""
    return _clean(text)


# The same command, reason and notes are cleaned for the audit line, the events and the reply:
# remember recent results (redaction is a pure function of the text; the home folder is part of
# the key). Bounded; cleared wholesale when full.
_CLEANED: dict[tuple[str, str], str] = {}
_CLEANED_MAX = 2048


def record_for(
    decision: Decision,
    *,
    session: str,
    pid: int | None,
    cwd: str,
    surface: str = "",
    answer: str = "",
    pending_id: str = "",
    action: str | None = None,
    message_reason: str = "",
) -> dict[str, Any]:
    """The audit record of ``decision`` (a JSON-able dict; the wire/file form of S13).

    ``action`` overrides the decision's action word when the daemon finished the decision
    (a person answered, nobody was watching, the audit itself failed). ``message_reason`` adds why.
    """
    facts = decision.facts
    v = decision.verdict
    a = decision.alignment
    rec: dict[str, Any] = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "ts": round(time.time(), 3),
        "session": session,
        "pid": pid,
        "cwd": fold_home(cwd),
        "surface": surface,
        "command": _clean(facts.text),
        "facts": {
            "heads": list(facts.heads),
            "notes": [_clean(n) for n in facts.notes],
            "readable": facts.readable,
            "unreadable": facts.unreadable,
            "harness": facts.harness,
            "justification": _clean(facts.justification),
            "hosts": list(facts.hosts),
        },
        "stage": decision.stage.value,
        "rung": decision.rung.value,
        "outcome": decision.outcome.value if decision.outcome else None,
        "reason": _clean(decision.reason),
        "action": action or decision.action.value,
        "rule_id": decision.rule_id,
        "floors": [f.rule_id for f in decision.floors],
        "to_person": _clean(decision.to_person_reason),
        "answer": answer,
        "pending_id": pending_id,
        "rater": None
        if v is None
        else {
            "backend": v.backend,
            "model": v.model,
            "duration_ms": round(v.duration_ms, 1),
            "fail_cause": v.fail_cause,
            "cached": v.cached,
        },
        "cascade": cascade_record(v),
        "alignment": None
        if a is None
        else {
            "decision": a.decision,
            "reason": _clean(a.reason),
            "suggestion": _clean(a.suggestion),
            "fail_cause": a.fail_cause,
            "duration_ms": round(a.duration_ms, 1),
        },
        "negotiation": dict(decision.counters),
    }
    if facts.harness and facts.outer_text:
        rec["outer_command"] = _clean(facts.outer_text)
    if message_reason:
        rec["note"] = _clean(message_reason)
    return rec


def cascade_record(verdict: Verdict | None) -> dict[str, Any] | None:
    """How the cascade reached ``verdict`` (S4, S13): the stage that decided, why the model was or
    was not asked, the builtin stage's verdict with its gaps, the model's answer. None when the
    verdict came from one backend alone. Texts are cleaned like every other text of the record."""
    c = verdict.cascade if verdict is not None else None
    if c is None:
        return None
    b, m = c.builtin, c.model
    return {
        "decided": c.decided.value,
        "asked": c.asked.value,
        "model_asked": m is not None,
        "why": _clean(c.why),
        "builtin": {
            "outcome": b.outcome.value,
            "complete": b.complete,
            "gaps": [g.id for g in b.gaps],
            "rule_id": b.findings[0].rule_id if b.findings else "",
            "duration_ms": round(b.duration_ms, 2),
        },
        "model": None
        if m is None
        else {
            "backend": m.backend,
            "model": m.model,
            "outcome": m.outcome.value,
            "reason": _clean(m.reason),
            "duration_ms": round(m.duration_ms, 1),
            "fail_cause": m.fail_cause,
            "cached": m.cached,
        },
    }


# What the chain adds to a line: `{"seq":N,"prev":"<64 hex>",` and `,"hash":"<64 hex>"}`.
_CHAIN_BYTES: Final = 200
_BODY_MAX: Final = MAX_RECORD_BYTES - _CHAIN_BYTES


def _encode(record: dict[str, Any]) -> bytes:
    """The record as one JSON object (no newline, no chain yet), at most :data:`_BODY_MAX` bytes."""
    drop = {"seq", "prev", "hash"}  # the chain's own members are the writer's to set
    if drop & record.keys():
        record = {k: v for k, v in record.items() if k not in drop}
    data = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str).encode(
        "utf-8", "backslashreplace"
    )
    if len(data) > _BODY_MAX:
        record = dict(record)
        cut = MAX_RECORD_BYTES // 4
        for key in ("command", "outer_command"):
            if isinstance(record.get(key), str) and len(record[key]) > cut:
                record[key] = record[key][:cut] + f"… [cut: {len(record[key])} chars]"
        record["facts"] = {"cut": True}
        data = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str).encode(
            "utf-8", "backslashreplace"
        )
    if len(data) > _BODY_MAX:
        data = json.dumps(
            {k: record.get(k) for k in ("time", "ts", "session", "action", "stage", "rule_id")}
            | {"cut": True},
            ensure_ascii=False,
            default=str,
        ).encode("utf-8", "backslashreplace")
    return data


# --- the chain (S13) -------------------------------------------------------------------------

#: The ``prev`` of the first line a log ever had.
GENESIS: Final = "0" * 64
_CHAIN_HEAD: Final = re.compile(rb'^\{"seq":(\d+),"prev":"([0-9a-f]{64})"')
_CHAIN_TAIL: Final = re.compile(rb',"hash":"([0-9a-f]{64})"\}$')


def _chain(body: bytes, seq: int, prev: str) -> tuple[bytes, str]:
    """``body`` (a JSON object) as the chained line ``seq`` after ``prev``: (line with its newline, hash)."""
    inner = body[1:-1]
    content = (
        b'{"seq":%d,"prev":"%s"' % (seq, prev.encode()) + (b"," + inner if inner else b"") + b"}"
    )
    digest = hashlib.sha256(content).hexdigest()
    return content[:-1] + b',"hash":"' + digest.encode() + b'"}\n', digest


def _link(line: bytes) -> tuple[int, str, str, bool] | None:
    """(seq, prev, hash, whether the hash is right) of a chained line (no newline); None when the
    line is not a chained record at all."""
    head, tail = _CHAIN_HEAD.match(line), _CHAIN_TAIL.search(line)
    if head is None or tail is None or tail.start() < head.end():
        return None
    content = line[: tail.start()] + b"}"
    stated = tail.group(1).decode()
    return (
        int(head.group(1)),
        head.group(2).decode(),
        stated,
        hashlib.sha256(content).hexdigest() == stated,
    )


def _last_link(path: str) -> tuple[int, str] | None:
    """(seq, hash) of the last chained line of ``path``; None when it has none (or cannot be read)."""
    for raw in reversed(_last_lines(path, 8)):
        link = _link(raw)
        if link is not None:
            return link[0], link[2]
    return None


class AuditLog:
    """An append-only JSONL file with size-bounded rotation. Thread-safe; see the module docstring.

    Invariant: every line handed to :meth:`append` / :meth:`append_many` that returned normally is
    on disk (fsync-ed); every line handed to :meth:`write` that returned normally is in the file
    (the kernel has it) and on disk once a later :meth:`sync` returned normally.
    """

    def __init__(self, path: str, max_bytes: int = 16 * 1024 * 1024, keep: int = 5) -> None:
        self.path = path
        self.max_bytes = max(4096, int(max_bytes))
        self.keep = max(0, int(keep))
        self.syslog = False  # also send each durable record to the system log (audit.syslog)
        self.failures = 0  # appends that raised, for ``gatesh status``
        self.last_error = ""
        self._cond = threading.Condition()
        self._queue: list[bytes] = []
        self._enqueued = 0  # sequence number of the newest queued line
        self._done = 0  # every line with seq <= _done has been handled (written or failed)
        self._failed: list[tuple[int, int, str]] = []  # (first, last, error) of failed batches
        self._writing = False
        self._sync_wanted = False  # a line queued by append_many: the batch holding it is fsync-ed
        self._fd: int | None = None
        self._lock_fd: int | None = None  # audit.jsonl.lock, kept open (see _lock)
        # The chain's end as this writer left it: (inode, size) of the file, and (seq, hash) of its
        # last line. Another writer's line changes the size, and the end is then read again.
        self._tail: tuple[tuple[int, int], tuple[int, str]] | None = None

    def append(self, record: dict[str, Any]) -> None:
        """Write ``record`` as one line and make it durable. Raises AuditError on any failure."""
        self.append_many([record])

    def append_many(self, records: list[dict[str, Any]]) -> None:
        """Write ``records`` (one line each, in order) and make them durable together.

        Raises AuditError when any of them could not be made durable (then none may be relied on).
        """
        self._commit(records, durable=True)

    def write(self, records: list[dict[str, Any]]) -> None:
        """Write ``records`` (one line each, in order) without waiting for ``fsync``.

        On return the lines are in the file: a later reader sees them and killing this process
        cannot lose them; a crash of the machine can, until :meth:`sync` returns. Raises
        AuditError when they could not be written.
        """
        self._commit(records, durable=False)

    def sync(self) -> None:
        """Make every line written so far durable (``fsync``). Raises AuditError on failure.

        The file descriptor is duplicated while no batch is being written, so a rotation or a
        concurrent :meth:`write` never waits for the ``fsync`` and the ``fsync`` never sees a
        descriptor that was closed (or reused) meanwhile.
        """
        with self._cond:
            while self._writing:
                self._cond.wait()
            fd = os.dup(self._fd) if self._fd is not None else None
        if fd is None:
            return  # nothing open: every batch so far was synced when its file was closed
        try:
            os.fsync(fd)
        except OSError as exc:
            error = f"{type(exc).__name__}: {exc.strerror or exc}"
            with self._cond:
                self.failures += 1
                self.last_error = error
            raise AuditError(f"could not sync the audit log {self.path}: {error}") from None
        finally:
            os.close(fd)

    def _commit(self, records: list[dict[str, Any]], *, durable: bool) -> None:
        if not records:
            return
        datas = [_encode(r) for r in records]
        with self._cond:
            self._queue.extend(datas)
            self._enqueued += len(datas)
            self._sync_wanted = self._sync_wanted or durable
            mine = self._enqueued
            ours = mine - len(datas) + 1
            while self._done < mine:
                if self._writing:
                    self._cond.wait()
                    continue
                # 1. Become the writer: take every queued line (ours included).
                self._writing = True
                batch, self._queue = self._queue, []
                fsync, self._sync_wanted = self._sync_wanted, False
                first, last = self._done + 1, self._enqueued
                self._cond.release()
                error = ""
                try:
                    # 2. Write (and fsync, when a caller of append_many waits) outside the lock,
                    #    so others can queue meanwhile.
                    self._write_batch(batch, fsync=fsync)
                except OSError as exc:
                    error = f"{type(exc).__name__}: {exc.strerror or exc}"
                except Exception as exc:  # never leave waiters hanging
                    error = f"{type(exc).__name__}: {exc}"
                finally:
                    self._cond.acquire()
                # 3. Publish the outcome of the batch and wake the waiters.
                if error:
                    self.failures += last - first + 1
                    self.last_error = error
                    self._failed.append((first, last, error))
                    del self._failed[:-64]
                self._done = last
                self._writing = False
                self._cond.notify_all()
            for lo, hi, err in self._failed:
                if lo <= mine and ours <= hi:
                    raise AuditError(f"could not write the audit log {self.path}: {err}")
        if durable and self.syslog:  # a best-effort copy; the file is the record of record
            send_syslog(records)

    def _open(self) -> int:
        if self._fd is None:
            os.makedirs(os.path.dirname(self.path) or ".", mode=0o700, exist_ok=True)
            self._fd = os.open(
                self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600
            )
        return self._fd

    def _lock(self) -> int:
        """The descriptor of ``audit.jsonl.lock``, opened once and kept (three system calls and a
        folder check less per line, S14). Opened again when the file it names was removed or
        replaced (no link left): a lock on a file nobody else can open would exclude nobody."""
        fd = self._lock_fd
        if fd is not None:
            try:
                if os.fstat(fd).st_nlink > 0:
                    return fd
            except OSError:
                pass
            self._lock_fd = None
            with contextlib.suppress(OSError):
                os.close(fd)
        flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC
        try:
            fd = os.open(self.path + ".lock", flags, 0o600)
        except FileNotFoundError:  # the folder is gone: made again, as the log's own open does
            os.makedirs(os.path.dirname(self.path) or ".", mode=0o700, exist_ok=True)
            fd = os.open(self.path + ".lock", flags, 0o600)
        self._lock_fd = fd
        return fd

    def _write_batch(self, bodies: list[bytes], *, fsync: bool = True) -> None:
        """Chain ``bodies`` after the log's last line and append them, holding the log's lock."""
        lock = self._lock()
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            self._write_chained(bodies, fsync=fsync)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

    def _write_chained(self, bodies: list[bytes], *, fsync: bool) -> None:
        fd = self._open()
        try:
            st = os.fstat(fd)
            size = st.st_size
            # Another process (the in-process fallback) may have rotated the file under us.
            if os.stat(self.path).st_ino != st.st_ino:
                raise FileNotFoundError
        except FileNotFoundError:
            with contextlib.suppress(OSError):
                os.fsync(fd)  # lines write() left there unsynced: the old file keeps them
            self._close_log()
            fd = self._open()
            st = os.fstat(fd)
            size = st.st_size
        seq, prev = self._chain_end(st.st_ino, size)
        lines = []
        for body in bodies:
            seq += 1
            line, prev = _chain(body, seq, prev)
            lines.append(line)
        data = b"".join(lines)
        ino = st.st_ino
        if size and size + len(data) > self.max_bytes:
            self._rotate()
            fd = self._open()
            ino, size = os.fstat(fd).st_ino, 0
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        self._tail = ((ino, size + len(data)), (seq, prev))
        # fsync, not fdatasync: measured side by side on this ext4 (appends that grow the file
        # need a journal commit either way), fdatasync was no faster and often slower.
        if fsync:
            os.fsync(fd)

    def _chain_end(self, ino: int, size: int) -> tuple[int, str]:
        """(seq, hash) of the log's last line: remembered when this writer wrote it and nobody
        wrote since, else read from the file (or the newest rotated one when the file is empty)."""
        if self._tail is not None and self._tail[0] == (ino, size):
            return self._tail[1]
        for name in files_newest_first(self.path, keep=max(1, self.keep)):
            found = _last_link(name)
            if found is not None:
                return found
        return 0, GENESIS

    def _rotate(self) -> None:
        """``audit.jsonl`` → ``.1`` → ``.2`` …; the file past ``keep`` is removed.

        The old file is fsync-ed first: lines :meth:`write` left unsynced must not depend on a
        descriptor that is about to be closed.
        """
        if self._fd is not None:
            os.fsync(self._fd)
        self._close_log()
        if self.keep == 0:
            os.unlink(self.path)
            return
        for n in range(self.keep, 0, -1):
            src = self.path if n == 1 else f"{self.path}.{n - 1}"
            if os.path.exists(src):
                os.replace(src, f"{self.path}.{n}")

    def _close_log(self) -> None:
        """Close the log file's descriptor (not the lock's: a rotation holds the lock meanwhile)."""
        if self._fd is not None:
            try:
                os.close(self._fd)
            finally:
                self._fd = None

    def close(self) -> None:
        """Close the log file and the lock file."""
        try:
            self._close_log()
        finally:
            if self._lock_fd is not None:
                fd, self._lock_fd = self._lock_fd, None
                os.close(fd)


def send_syslog(records: list[dict[str, Any]]) -> None:
    """Send a best-effort copy of ``records`` to the system log (``audit.syslog``); never raises."""
    try:
        from gatesh.audit_syslog import send

        for record in records:
            send(record)
    except Exception:
        pass


def files_newest_first(path: str, keep: int = 100) -> list[str]:
    """The live log and its rotated files that exist, newest first."""
    out = [path] if os.path.exists(path) else []
    for n in range(1, keep + 1):
        candidate = f"{path}.{n}"
        if not os.path.exists(candidate):
            break
        out.append(candidate)
    return out


def read_tail(path: str, n: int) -> list[dict[str, Any]]:
    """The newest ``n`` records (oldest first), across rotated files. Unparseable lines are skipped."""
    out: list[dict[str, Any]] = []
    for name in files_newest_first(path):
        lines = _last_lines(name, n - len(out))
        out = [r for r in (_parse(x) for x in lines) if r is not None] + out
        if len(out) >= n:
            break
    return out[-n:] if n > 0 else []


def _last_lines(path: str, n: int) -> list[bytes]:
    if n <= 0:
        return []
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            end = f.tell()
            block = 64 * 1024
            data = b""
            pos = end
            while pos > 0 and data.count(b"\n") <= n:
                step = min(block, pos)
                pos -= step
                f.seek(pos)
                data = f.read(step) + data
    except OSError:
        return []
    lines = [x for x in data.split(b"\n") if x]
    if pos > 0:
        lines = lines[1:]  # the first one may be partial
    return lines[-n:]


@dataclass(frozen=True)
class ChainReport:
    """What :func:`verify` found. ``problem`` is empty when every line is chained as written;
    otherwise it names the first line that was changed, removed or inserted (``kind``), by file,
    line number (from 1) and sequence number."""

    lines: int
    files: int
    first_seq: int = 0
    last_seq: int = 0
    kind: str = ""  # "" | "changed" | "removed" | "inserted"
    file: str = ""
    line: int = 0
    seq: int = 0
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


def verify(path: str) -> ChainReport:
    """Check the chain of the log at ``path`` and its rotated files, oldest line first (S13).

    A line whose hash does not match its content was changed; a line whose ``prev`` names a line
    further back follows inserted lines; a ``prev`` that names no line seen, after a gap in
    ``seq``, follows removed lines (a whole rotated file included); without a gap, the line before
    it was changed (and its hash recomputed). The oldest kept line may follow lines rotated away.
    """
    files = list(reversed(files_newest_first(path)))
    count = 0
    prev: tuple[int, str, str, int] | None = (
        None  # (seq, hash, file, line number) of the last good line
    )
    seen: dict[str, tuple[str, int, int]] = {}  # hash -> (file, line number, seq)
    first_seq = 0

    def report(kind: str, name: str, n: int, seq: int, why: str) -> ChainReport:
        return ChainReport(
            count,
            len(files),
            first_seq,
            prev[0] if prev else 0,
            kind,
            name,
            n,
            seq,
            f"line {n} of {name} (seq {seq}) {why}",
        )

    for name in files:
        try:
            with open(name, "rb") as f:
                raw_lines = f.read().split(b"\n")
        except OSError as exc:
            return ChainReport(
                count, len(files), problem=f"cannot read {name}: {exc.strerror or exc}"
            )
        if raw_lines and raw_lines[-1] == b"":
            raw_lines.pop()
        for n, raw in enumerate(raw_lines, 1):
            count += 1
            link = _link(raw)
            if link is None:
                return report(
                    "changed",
                    name,
                    n,
                    (prev[0] + 1) if prev else 0,
                    "is not a chained record: it was changed or inserted",
                )
            seq, stated_prev, digest, intact = link
            if not intact:
                return report(
                    "changed", name, n, seq, "was changed: its hash does not match its content"
                )
            if prev is None:
                first_seq = seq
                if seq == 1 and stated_prev != GENESIS:
                    return report(
                        "changed",
                        name,
                        n,
                        seq,
                        "was changed: the first line names a line before it",
                    )
            elif stated_prev != prev[1]:
                if stated_prev in seen:
                    at = seen[stated_prev]
                    return report(
                        "inserted",
                        at[0],
                        at[1] + 1,
                        at[2] + 1,
                        f"was inserted: the line after it (line {n} of {name}) follows line {at[1]} of {at[0]}",
                    )
                if seq > prev[0] + 1:
                    missing = seq - prev[0] - 1
                    return report(
                        "removed",
                        name,
                        n,
                        seq,
                        f"follows {missing} removed line{'s' if missing != 1 else ''} "
                        f"(seq {prev[0] + 1}{f'-{seq - 1}' if missing > 1 else ''})",
                    )
                if seq == prev[0] + 1:
                    return report(
                        "changed",
                        prev[2],
                        prev[3],
                        prev[0],
                        f"was changed: the line after it (line {n} of {name}) was chained to other content",
                    )
                return report(
                    "inserted", name, n, seq, "was inserted: its sequence number goes back"
                )
            elif seq != prev[0] + 1:
                return report(
                    "changed",
                    name,
                    n,
                    seq,
                    f"was changed: its sequence number should be {prev[0] + 1}",
                )
            seen[digest] = (name, n, seq)
            prev = (seq, digest, name, n)
    return ChainReport(count, len(files), first_seq, prev[0] if prev else 0)


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def follow(path: str, poll_s: float = 0.2) -> Iterator[dict[str, Any]]:
    """Records appended to ``path`` from now on, surviving rotation. Runs until interrupted."""
    f = None
    ino = None
    at_end = True  # the first open starts at the end; a file opened after rotation, at its start
    buf = b""
    while True:
        if f is None:
            try:
                f = open(path, "rb")
            except FileNotFoundError:
                at_end = False
                time.sleep(poll_s)
                continue
            ino = os.fstat(f.fileno()).st_ino
            if at_end:
                f.seek(0, os.SEEK_END)
            buf = b""
        chunk = f.read()
        if chunk:
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                rec = _parse(line)
                if rec is not None:
                    yield rec
            continue
        try:
            rotated = os.stat(path).st_ino != ino
        except FileNotFoundError:
            rotated = True
        if rotated:
            f.close()
            f = None
            at_end = False
            continue
        time.sleep(poll_s)

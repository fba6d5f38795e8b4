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
- Tamper-evident (S13): every line is chained to the one before it (the format and
  :func:`verify` are in :mod:`gatesh.audit_chain`). Writers of one log (the daemon, an in-process
  fallback) take ``audit.jsonl.lock`` while they chain and write, so the chain holds across
  processes; each keeps the chain's head in ``audit.jsonl.head`` and checks the file against it
  before it writes, recording any gap it finds in a chain-break record (seq never restarts). With
  ``audit.syslog`` every record is copied to the system log with its seq and hash, and the head is
  anchored there every :data:`SYSLOG_HEAD_EVERY` records, on rotation and on a gap.

``SIGXFSZ`` must be ignored by the process (the daemon does it): past ``RLIMIT_FSIZE`` a write then
fails with ``EFBIG`` — an :class:`AuditError` — instead of killing the process.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from gatesh import audit_syslog
from gatesh._errors import GateshError
from gatesh.audit_chain import (
    CHAIN_BREAK,
    GENESIS,
    ChainReport,
    Head,
    chain_line,
    first_link,
    head_path,
    last_lines,
    last_link,
    link_of,
    read_head,
    rotated_files,
    verify,
)
from gatesh.redact import redact

if TYPE_CHECKING:
    from gatesh._types import Decision, Verdict
    from gatesh.config import AuditConfig

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
    # Undo (S13, S17): the snapshot taken before it ran; the places the decision rests on a
    # snapshot holding (it ran because they are held); why none was taken when one was due.
    if decision.snapshot:
        rec["snapshot"] = decision.snapshot
    if decision.undo:
        rec["undo"] = [fold_home(p) for p in decision.undo]
    if decision.undo_note:
        rec["undo_note"] = _clean(decision.undo_note)
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


# --- the writer ------------------------------------------------------------------------------

#: Reading what lies past the kept head (lines a writer did not record) stops after this much.
_PAST_HEAD_MAX: Final = 32 * 1024 * 1024
#: How often, in records, the chain's head is written to the system log (``audit.syslog``) when
#: nothing else (a rotation, a gap, a writer's first batch) sends it first: a whole-chain
#: rewrite is seen from the newest anchor back; 100 lines are a few minutes of an agent's work.
SYSLOG_HEAD_EVERY: Final = 100


@dataclass
class _Start:
    """Where a batch continues the chain, and what the writer found on the way (gaps to record)."""

    seq: int
    prev: str
    floor: int
    breaks: list[tuple[str, str]] = field(default_factory=list)  # (kind, what was found)
    close_torn: bool = False  # the file ends inside a line: a newline closes it first
    file_gone: bool = False  # the live file's lines up to the head are gone (no rotated file left)
    head: Head | None = None  # the kept head this start was checked against


class AuditLog:
    """An append-only JSONL file with size-bounded rotation. Thread-safe; see the module docstring.

    Invariant: every line handed to :meth:`append` / :meth:`append_many` that returned normally is
    on disk (fsync-ed); every line handed to :meth:`write` that returned normally is in the file
    (the kernel has it) and on disk once a later :meth:`sync` returned normally.

    The kept head (:class:`gatesh.audit_chain.Head`, in ``audit.jsonl.head``) is written after every
    batch and checked before the next: a file that shrank, vanished or changed identity other than
    by this writer's own rotation, lines appended that no writer recorded, or a head file changed
    under it, get a chain-break record naming what was found, chained after the kept head (seq
    never restarts). A torn partial line is closed with a newline before the next record.
    """

    def __init__(self, path: str, max_bytes: int = 16 * 1024 * 1024, keep: int = 5) -> None:
        self.path = path
        self.max_bytes = max(4096, int(max_bytes))
        self.keep = max(0, int(keep))
        self.syslog = False  # also send each durable record to the system log (audit.syslog)
        self.syslog_socket = audit_syslog.DEFAULT_SOCKET  # where (audit.syslog_socket)
        self.syslog_head_every = SYSLOG_HEAD_EVERY  # head anchors every N records
        self.failures = 0  # appends that raised, for ``gatesh status``
        self.last_error = ""
        self.breaks = 0  # chain-break records written, for ``gatesh status``
        self._cond = threading.Condition()
        self._queue: list[tuple[bytes, dict[str, Any] | None]] = []
        self._enqueued = 0  # sequence number of the newest queued line
        self._done = 0  # every line with seq <= _done has been handled (written or failed)
        self._failed: list[tuple[int, int, str]] = []  # (first, last, error) of failed batches
        self._writing = False
        self._sync_wanted = False  # a line queued by append_many: the batch holding it is fsync-ed
        self._fd: int | None = None
        self._lock_fd: int | None = None  # audit.jsonl.lock, kept open (see _lock)
        self._head_fd: int | None = None  # audit.jsonl.head, kept open (see _keep_head)
        self._head: Head | None = None  # the head this writer last left (None: not yet known)
        self._outbox: list[
            tuple[int, str]
        ] = []  # system log messages for lines written, sent once durable
        self._anchored = False  # this writer sent its first head anchor

    def configure(self, audit: AuditConfig) -> None:
        """Take the bounds and the system-log settings of the ``[audit]`` config section."""
        self.max_bytes = max(4096, int(audit.max_bytes))
        self.keep = max(0, int(audit.keep))
        self.syslog = bool(audit.syslog)
        self.syslog_socket = audit.syslog_socket or audit_syslog.DEFAULT_SOCKET
        self.syslog_head_every = max(1, int(audit.syslog_head_every))

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
        """Make every line written so far durable (``fsync``), then send their system-log copies.
        Raises AuditError on failure.

        The file descriptor is duplicated while no batch is being written, so a rotation or a
        concurrent :meth:`write` never waits for the ``fsync`` and the ``fsync`` never sees a
        descriptor that was closed (or reused) meanwhile.
        """
        with self._cond:
            while self._writing:
                self._cond.wait()
            fd = os.dup(self._fd) if self._fd is not None else None
            outbox, self._outbox = self._outbox, []
        try:
            if fd is not None:
                os.fsync(fd)
        except OSError as exc:
            error = f"{type(exc).__name__}: {exc.strerror or exc}"
            with self._cond:
                self.failures += 1
                self.last_error = error
                self._outbox[:0] = outbox  # sent with the next sync that works
            raise AuditError(f"could not sync the audit log {self.path}: {error}") from None
        finally:
            if fd is not None:
                os.close(fd)
        self._send(outbox)

    def _commit(self, records: list[dict[str, Any]], *, durable: bool) -> None:
        if not records:
            return
        datas = [(_encode(r), r) for r in records]
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
            # Durable: every line written so far is on disk (the batch's fsync covers the file;
            # a rotation fsync-ed the one before), so its copies may go out now.
            outbox, self._outbox = (self._outbox, []) if durable else ([], self._outbox)
        self._send(outbox)

    def _send(self, messages: list[tuple[int, str]]) -> None:
        if messages:  # a best-effort copy; the file is the record of record
            audit_syslog.send_lines(messages, self.syslog_socket)

    def _open(self) -> tuple[int, bool]:
        """The live file's descriptor, and whether this call created the file."""
        if self._fd is not None:
            return self._fd, False
        os.makedirs(os.path.dirname(self.path) or ".", mode=0o700, exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        try:
            self._fd = os.open(self.path, flags | os.O_EXCL, 0o600)
            return self._fd, True
        except FileExistsError:
            self._fd = os.open(self.path, flags, 0o600)
            return self._fd, False

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

    def _write_batch(
        self, batch: list[tuple[bytes, dict[str, Any] | None]], *, fsync: bool = True
    ) -> None:
        """Chain ``batch`` after the log's last line and append it, holding the log's lock."""
        lock = self._lock()
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            self._write_chained(batch, fsync=fsync)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

    def _write_chained(
        self, batch: list[tuple[bytes, dict[str, Any] | None]], *, fsync: bool
    ) -> None:
        """Steps numbered: check the file against the kept head, chain, write, keep the new head."""
        # 1. The live file: (re)opened when the path no longer names the file this writer holds.
        fd, created = self._open()
        try:
            st = os.fstat(fd)
            if os.stat(self.path).st_ino != st.st_ino:
                raise FileNotFoundError
        except FileNotFoundError:
            with contextlib.suppress(OSError):
                os.fsync(fd)  # lines write() left there unsynced: the old file keeps them
            self._close_log()
            fd, created = self._open()
            st = os.fstat(fd)
        # 2. Where the chain continues, and any gap found on the way (recorded first).
        start = self._start(st, created)
        now = time.time()
        gaps = [_break_record(kind, found, start.head, st, now) for kind, found in start.breaks]
        entries: list[tuple[bytes, dict[str, Any] | None]] = [(_encode(r), r) for r in gaps]
        entries += batch
        seq, prev = start.seq, start.prev
        lines: list[bytes] = [b"\n"] if start.close_torn else []
        links: list[tuple[int, str, dict[str, Any] | None]] = []
        for body, record in entries:
            seq += 1
            line, prev = chain_line(body, seq, prev)
            lines.append(line)
            links.append((seq, prev, record))
        data = b"".join(lines)
        size = st.st_size
        floor = seq - len(entries) + 1 if start.file_gone else start.floor
        ident = (st.st_dev, st.st_ino)
        # 3. Rotate first when the batch would push the file past its bound.
        rotated = False
        if size and size + len(data) > self.max_bytes:
            self._rotate()
            fd, _ = self._open()
            st = os.fstat(fd)
            ident, size = (st.st_dev, st.st_ino), 0
            if start.close_torn:
                data = data[1:]  # the torn line stays closed-off in the rotated file's end
            floor = self._floor_after_rotation(seq - len(entries) + 1)
            rotated = True
        # 4. Write. On a short write (a full disk) the complete lines that made it are kept in
        #    the head, so the next batch continues after them and closes the partial one.
        view = memoryview(data)
        written = 0
        try:
            while view:
                n = os.write(fd, view)
                view = view[n:]
                written += n
        except OSError:
            self._keep_partial(data, written, links, start, ident, size, floor)
            raise
        self._keep_head(Head(seq, prev, ident[0], ident[1], size + len(data), floor))
        self.breaks += len(start.breaks)
        if self.syslog:
            self._queue_copies(links, rotated=rotated, broke=bool(start.breaks))
        # fsync, not fdatasync: measured side by side on this ext4 (appends that grow the file
        # need a journal commit either way), fdatasync was no faster and often slower.
        if fsync:
            os.fsync(fd)

    def _start(self, st: os.stat_result, created: bool) -> _Start:
        """Where this batch continues the chain: the kept head when the file is as it left it
        (nothing read: the common case), otherwise what the file and the head file show."""
        mine = self._head
        ident = (st.st_dev, st.st_ino)
        if mine is not None and (mine.dev, mine.ino, mine.size) == (*ident, st.st_size):
            return _Start(mine.seq, mine.hash, mine.floor)
        breaks: list[tuple[str, str]] = []
        kept, problem = read_head(self.path)
        head_gone = ""  # said with the file's own gap when there is one, else on its own
        if mine is None:
            head = kept
        elif kept is None:
            head = mine
            head_gone = f"the kept head file {head_path(self.path)} was " + (
                f"changed ({problem})" if problem else "removed"
            )
        elif kept.seq > mine.seq or (kept.seq == mine.seq and kept.hash == mine.hash):
            head = kept  # another writer (an in-process fallback) moved it on
        else:
            head = mine
            breaks.append(
                (
                    "head-changed",
                    f"the kept head file says seq {kept.seq}, but this writer last wrote seq "
                    f"{mine.seq}: the head file was changed",
                )
            )
        if head is None:
            return self._start_without_head(st, problem)
        torn = st.st_size > 0 and _last_byte(self.path) != b"\n"
        also = f" ({head_gone} too)" if head_gone else ""
        # A file this writer had to create was deleted (its inode number may well be reused).
        if (created and head.size > 0) or (head.dev, head.ino) != ident:
            if created:
                found = (
                    f"the log file was deleted{also}: it held {head.size} bytes, up to seq "
                    f"{head.seq}; a new file was started"
                )
            else:
                found = (
                    f"the log file was replaced by another file{also}: the kept head is seq "
                    f"{head.seq} at byte {head.size} of inode {head.ino}; the file now is inode "
                    f"{st.st_ino}, {st.st_size} bytes"
                )
            breaks.append(("deleted" if created else "replaced", found))
            return _Start(
                head.seq, head.hash, head.floor, breaks, torn, self._nothing_older(), head
            )
        if st.st_size < head.size:
            if st.st_size == 0:
                found = (
                    f"the log file was emptied{also}: it held {head.size} bytes, up to seq "
                    f"{head.seq}"
                )
            else:
                found = (
                    f"the log file was cut from {head.size} to {st.st_size} bytes{also}: the "
                    f"kept head is seq {head.seq}"
                )
            breaks.append(("emptied" if st.st_size == 0 else "cut", found))
            gone = st.st_size == 0 and self._nothing_older()
            return _Start(head.seq, head.hash, head.floor, breaks, torn, gone, head)
        if head_gone:
            breaks.append(("head-changed", head_gone))
        if st.st_size == head.size:
            return _Start(head.seq, head.hash, head.floor, breaks, head=head)
        return self._past_head(head, breaks)

    def _past_head(self, head: Head, breaks: list[tuple[str, str]]) -> _Start:
        """The file grew past the kept head without a writer recording it: lines chained to the
        head (a writer stopped between its line and its head) are continued from and named;
        anything else is named and the chain continues from the head. A partial last line is
        closed."""
        try:
            with open(self.path, "rb") as f:
                f.seek(head.size)
                extra = f.read(_PAST_HEAD_MAX)
        except OSError:
            extra = b""
        *complete, fragment = extra.split(b"\n")
        complete = [c for c in complete if c]
        seq, prev = head.seq, head.hash
        chained = True
        for raw in complete:
            link = link_of(raw)
            if link is None or not link[3] or link[0] != seq + 1 or link[1] != prev:
                chained = False
                break
            seq, prev = link[0], link[2]
        if complete and chained:
            breaks.append(
                (
                    "unrecorded",
                    f"{len(complete)} line{'s' if len(complete) != 1 else ''} after the kept "
                    f"head (seq {head.seq + 1}-{seq}) continue the chain but no writer recorded "
                    "them: a writer stopped between its line and its head, or they were appended",
                )
            )
            return _Start(seq, prev, head.floor, breaks, bool(fragment), head=head)
        if complete:
            breaks.append(
                (
                    "appended",
                    f"{len(complete)} line{'s' if len(complete) != 1 else ''} after the kept "
                    f"head (seq {head.seq}) do not continue the chain: something other than "
                    "gatesh's writer appended them",
                )
            )
        return _Start(head.seq, head.hash, head.floor, breaks, bool(fragment), head=head)

    def _start_without_head(self, st: os.stat_result, problem: str) -> _Start:
        """No head is kept (a log older than the head, or its head file lost): a new log starts
        at :data:`GENESIS`; an existing one continues from its last line, and says it could not
        be checked."""
        rotated, _ = rotated_files(self.path)
        if st.st_size == 0 and not rotated:
            return _Start(0, GENESIS, 1)
        found = last_link(self.path)
        for name in rotated:
            if found is not None:
                break
            found = last_link(name)
        seq, prev = found if found is not None else (0, GENESIS)
        oldest = first_link(rotated[-1]) if rotated else first_link(self.path)
        why = problem or f"there is no {head_path(self.path)}"
        breaks = [
            (
                "no-head",
                f"no kept head was found ({why}): the chain continues from the last line "
                f"there, seq {seq}, which could not be checked against one",
            )
        ]
        torn = st.st_size > 0 and _last_byte(self.path) != b"\n"
        return _Start(seq, prev, oldest[0] if oldest else seq + 1, breaks, torn)

    def _nothing_older(self) -> bool:
        """No rotated file is left: every line up to the kept head is gone with the live file."""
        return not rotated_files(self.path)[0]

    def _floor_after_rotation(self, first_new: int) -> int:
        """The oldest seq still kept after a rotation: the first line of the oldest rotated file
        (``first_new``, the first line of the new live file, when none is kept)."""
        rotated, _ = rotated_files(self.path)
        for name in reversed(rotated):
            found = first_link(name)
            if found is not None:
                return found[0]
        return first_new

    def _keep_partial(
        self,
        data: bytes,
        written: int,
        links: list[tuple[int, str, dict[str, Any] | None]],
        start: _Start,
        ident: tuple[int, int],
        size: int,
        floor: int,
    ) -> None:
        """After a short write: keep the head at the last complete line that reached the file."""
        done = data[:written]
        if start.close_torn and done.startswith(b"\n"):
            done = done[1:]
            size += 1
        complete = done.count(b"\n")
        if complete == 0 or not links:
            return
        seq, digest, _ = links[min(complete, len(links)) - 1]
        kept = done[: done.rfind(b"\n") + 1]
        with contextlib.suppress(OSError):
            self._keep_head(Head(seq, digest, ident[0], ident[1], size + len(kept), floor))

    def _keep_head(self, head: Head) -> None:
        """Remember ``head`` and write it in place to the head file (kept open; opened again by
        name when it was removed or replaced, like the lock file)."""
        self._head = head
        fd = self._head_fd
        if fd is not None:
            try:
                if os.fstat(fd).st_nlink == 0:
                    raise FileNotFoundError
            except OSError:
                with contextlib.suppress(OSError):
                    os.close(fd)
                fd = self._head_fd = None
        if fd is None:
            fd = self._head_fd = os.open(
                head_path(self.path), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600
            )
        os.pwrite(fd, head.encode(), 0)

    def _queue_copies(
        self,
        links: list[tuple[int, str, dict[str, Any] | None]],
        *,
        rotated: bool,
        broke: bool,
    ) -> None:
        """The system-log messages for a written batch: a copy of each record with its seq and
        hash, and the head anchor when one is due (S13)."""
        messages: list[tuple[int, str]] = []
        for seq, digest, record in links:
            if record is not None:
                messages.append(audit_syslog.copy_message(record, seq, digest, self.path))
        last_seq, last_hash, _ = links[-1]
        first_seq = links[0][0]
        every = max(1, self.syslog_head_every)
        why = ""
        if broke:
            why = "chain-break"
        elif rotated:
            why = "rotation"
        elif not self._anchored:
            why = "start"
        elif last_seq // every > (first_seq - 1) // every:
            why = f"every {every}"
        if why:
            messages.append(audit_syslog.head_message(last_seq, last_hash, self.path, why))
            self._anchored = True
        with self._cond:
            self._outbox.extend(messages)

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
        """Close the log file, its head file and the lock file."""
        try:
            self._close_log()
        finally:
            for name in ("_head_fd", "_lock_fd"):
                fd = getattr(self, name)
                if fd is not None:
                    setattr(self, name, None)
                    with contextlib.suppress(OSError):
                        os.close(fd)


def _last_byte(path: str) -> bytes:
    """The last byte of ``path`` (b"" when empty or unreadable)."""
    try:
        with open(path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            return f.read(1)
    except OSError:
        return b""


def _break_record(
    kind: str, found: str, head: Head | None, st: os.stat_result, now: float
) -> dict[str, Any]:
    """The chain-break record: the writer's own line saying what it found (S13)."""
    return {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(now)),
        "ts": round(now, 3),
        "session": "",
        "pid": os.getpid(),
        "cwd": "",
        "surface": "audit",
        "command": "",
        "stage": "audit",
        "action": CHAIN_BREAK,
        "break": kind,
        "found": found,
        "kept_head": None
        if head is None
        else {"seq": head.seq, "hash": head.hash, "ino": head.ino, "size": head.size},
        "file": {"ino": st.st_ino, "size": st.st_size},
    }


def files_newest_first(path: str, keep: int = 100) -> list[str]:
    """The live log and its rotated files that exist, newest first (up to the first missing one)."""
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
        lines = last_lines(name, n - len(out))
        out = [r for r in (_parse(x) for x in lines) if r is not None] + out
        if len(out) >= n:
            break
    return out[-n:] if n > 0 else []


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

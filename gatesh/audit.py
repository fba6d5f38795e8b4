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

What a line says is :mod:`gatesh.audit_record`'s; where a batch continues the chain and which gaps
it records, :mod:`gatesh.audit_gaps`'s; reading the log back, :mod:`gatesh.audit_read`'s. This
module re-exports their public names: it is the audit log's one surface for the rest of gatesh.

``SIGXFSZ`` must be ignored by the process (the daemon does it): past ``RLIMIT_FSIZE`` a write then
fails with ``EFBIG`` — an :class:`AuditError` — instead of killing the process.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from typing import TYPE_CHECKING, Final

from gatesh import audit_syslog
from gatesh._errors import GateshError
from gatesh.audit_chain import GENESIS, ChainReport, Head, chain_line, head_path, verify
from gatesh.audit_gaps import Start, break_record, find_start, floor_after_rotation
from gatesh.audit_read import files_newest_first, follow, read_tail
from gatesh.audit_record import (
    AuditRecord,
    DecisionRecord,
    cascade_record,
    clean,
    encode,
    fold_home,
    record_for,
)

if TYPE_CHECKING:
    from gatesh.config import AuditConfig

__all__ = [
    "GENESIS",
    "AuditError",
    "AuditLog",
    "AuditRecord",
    "ChainReport",
    "DecisionRecord",
    "cascade_record",
    "clean",
    "files_newest_first",
    "fold_home",
    "follow",
    "read_tail",
    "record_for",
    "verify",
]

#: How often, in records, the chain's head is written to the system log (``audit.syslog``) when
#: nothing else (a rotation, a gap, a writer's first batch) sends it first: a whole-chain
#: rewrite is seen from the newest anchor back; 100 lines are a few minutes of an agent's work.
SYSLOG_HEAD_EVERY: Final = 100


class AuditError(GateshError):
    """The audit line could not be made durable. The command must be refused."""


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
        self._queue: list[tuple[bytes, AuditRecord | None]] = []
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

    def append(self, record: AuditRecord) -> None:
        """Write ``record`` as one line and make it durable. Raises AuditError on any failure."""
        self.append_many([record])

    def append_many(self, records: list[AuditRecord]) -> None:
        """Write ``records`` (one line each, in order) and make them durable together.

        Raises AuditError when any of them could not be made durable (then none may be relied on).
        """
        self._commit(records, durable=True)

    def write(self, records: list[AuditRecord]) -> None:
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

    def _commit(self, records: list[AuditRecord], *, durable: bool) -> None:
        if not records:
            return
        datas = [(encode(r), r) for r in records]
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
        self, batch: list[tuple[bytes, AuditRecord | None]], *, fsync: bool = True
    ) -> None:
        """Chain ``batch`` after the log's last line and append it, holding the log's lock."""
        lock = self._lock()
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            self._write_chained(batch, fsync=fsync)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

    def _write_chained(self, batch: list[tuple[bytes, AuditRecord | None]], *, fsync: bool) -> None:
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
        start = find_start(self.path, self._head, st, created)
        now = time.time()
        gaps = [break_record(kind, found, start.head, st, now) for kind, found in start.breaks]
        entries: list[tuple[bytes, AuditRecord | None]] = [(encode(r), r) for r in gaps]
        entries += batch
        seq, prev = start.seq, start.prev
        lines: list[bytes] = [b"\n"] if start.close_torn else []
        links: list[tuple[int, str, AuditRecord | None]] = []
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
            floor = floor_after_rotation(self.path, seq - len(entries) + 1)
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

    def _keep_partial(
        self,
        data: bytes,
        written: int,
        links: list[tuple[int, str, AuditRecord | None]],
        start: Start,
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
        links: list[tuple[int, str, AuditRecord | None]],
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

"""The daemon's audit writer (S13, S14, S15): each line written before its reply, fsync-ed after.

See :class:`AuditPipe`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Final

from gatesh.audit import AuditError, AuditLog, AuditRecord

__all__ = ["AuditPipe"]


class AuditPipe:
    """The daemon's audit writer: each line is written before its reply, then fsync-ed right after
    by one background thread.

    :meth:`append` writes the record's line (``O_APPEND``, in decision order) on the event loop and
    returns only then, or raises :class:`AuditError`: so a line is in the file before its allow is
    returned (S13) and killing the daemon can never lose it (the kernel has it, S15). The ``fsync``
    that protects it against a crash of the whole machine follows the reply, in the
    ``gatesh-audit-sync`` thread: at once after a quiet spell, at most every
    :data:`SYNC_INTERVAL_S` under load, one ``fsync`` covering every line written meanwhile.
    Measured on this kind of machine, an ``fsync`` waited for on the allow path plus the two thread
    handoffs around it cost ~0.4 ms of a ``gatesh -c`` call (S14).

    Fail closed: after a background ``fsync`` failed, every append makes its own line durable
    (write and ``fsync``) before returning, so nothing more is allowed on a disk that cannot
    keep it, until an ``fsync`` succeeds again.
    """

    # How long close() waits for the last fsync: a disk that hangs must not hang the daemon's
    # exit (the lines are in the kernel already; only a machine crash could still lose them).
    CLOSE_WAIT_S: Final = 10.0
    # The shortest time between the starts of two background fsyncs (s): a lone check is synced at
    # once; under load a machine crash can lose at most this much more than the fsync in flight.
    SYNC_INTERVAL_S: Final = 0.01

    def __init__(self, log: AuditLog) -> None:
        self.log = log
        self.sync_error = ""  # the last background fsync failure ("" when the last one worked)
        self._cond = threading.Condition()
        self._dirty = False  # lines written since the last fsync began
        self._kick_pending = False
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="gatesh-audit-sync", daemon=True)
        self._thread.start()

    def append(self, record: AuditRecord) -> None:
        """Write ``record``'s line now; raises AuditError when it could not be written."""
        if self.sync_error or self._stopping:
            # Durable before returning: the disk failed a sync (this raises while it still fails),
            # or the sync thread is gone (a decision that finished while the daemon stops).
            self.log.append(record)
            self.sync_error = ""
            return
        self.log.write([record])
        with self._cond:
            self._dirty = True
        if not self._kick_pending:
            # Wake the sync thread after this task step, i.e. once the reply has been sent: woken
            # now, it would compete for the GIL with the code sending the reply.
            self._kick_pending = True
            try:
                asyncio.get_running_loop().call_soon(self._kick)
            except RuntimeError:  # no loop (shutting down): sync now
                self._kick()

    def _kick(self) -> None:
        self._kick_pending = False
        with self._cond:
            self._cond.notify()

    def _run(self) -> None:
        last = 0.0
        while True:
            # At most one fsync per SYNC_INTERVAL_S: under load each covers more lines, and this
            # thread takes the GIL from the event loop less often (measured with 32 sessions:
            # unbounded, it cost ~0.05 ms of daemon CPU per check).
            time.sleep(max(0.0, last + self.SYNC_INTERVAL_S - time.monotonic()))
            with self._cond:
                while not self._dirty and not self._stopping:
                    self._cond.wait()
                if not self._dirty:
                    return  # stopping, and everything written is synced
                self._dirty = False
            last = time.monotonic()
            try:
                self.log.sync()  # and sends the system-log copies of what it made durable
            except AuditError as exc:
                self.sync_error = str(exc)
                continue
            except Exception as exc:  # a bug must not end the thread: fail closed instead
                self.sync_error = f"{type(exc).__name__}: {exc}"
                continue

    def close(self) -> None:
        """Sync what is left and stop the thread (waits at most CLOSE_WAIT_S)."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._thread.join(self.CLOSE_WAIT_S)

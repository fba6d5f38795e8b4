"""A loopback system log: a Unix datagram socket that keeps every message sent to it.

For tests and benchmarks of ``audit.syslog`` (point ``audit.syslog_socket`` at :attr:`path`):
it stands where journald or rsyslog would, and :meth:`SyslogSink.lines` reads back what they
would have written, in their file format (``… gatesh[PID]: MESSAGE``).
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import threading
from types import TracebackType
from typing import Final

__all__ = ["SyslogSink"]

# ``<PRI>`` in front of a datagram, which a syslog daemon strips.
_PRI: Final = re.compile(r"^<\d{1,3}>")


class SyslogSink:
    """A datagram socket at ``path`` collecting messages until closed (a context manager)."""

    def __init__(self, path: str) -> None:
        self.path = path
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.bind(path)
        os.chmod(path, 0o666)
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="syslog-sink", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        self._sock.settimeout(0.1)
        while not self._stop:
            try:
                data = self._sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            text = _PRI.sub("", data.decode("utf-8", "replace")).rstrip("\n")
            with self._lock:
                self._lines.append(text)

    def lines(self) -> list[str]:
        """Every message received so far, oldest first (timestamp, ident and pid included)."""
        with self._lock:
            return list(self._lines)

    def wait_for(self, needle: str, timeout: float = 5.0) -> bool:
        """True once a message holding ``needle`` has arrived (False after ``timeout`` s)."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(needle in line for line in self.lines()):
                return True
            time.sleep(0.01)
        return False

    def write_to(self, file: str) -> None:
        """Write what was received to ``file``, one message a line (as a syslog file holds it)."""
        with open(file, "w", encoding="utf-8") as f:
            f.writelines(line + "\n" for line in self.lines())

    def close(self) -> None:
        self._stop = True
        self._thread.join(2)
        self._sock.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def __enter__(self) -> SyslogSink:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

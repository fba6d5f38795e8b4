"""Reading the audit log back (``gatesh log``, ``status``): the newest records across rotated
files, and records as they are appended, each line decoded once into a
:class:`~gatesh.audit_entry.LogEntry`. A line that is not a JSON object is passed to ``broken``
(ignored by default) and skipped, never raised: a torn or foreign line must not stop a person
reading the rest.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator

from gatesh.audit_entry import AuditLineError, LogEntry, decode

__all__ = ["files_newest_first", "follow", "last_lines", "read_tail"]


def files_newest_first(path: str, keep: int = 100) -> list[str]:
    """The live log and its rotated files that exist, newest first (up to the first missing one)."""
    out = [path] if os.path.exists(path) else []
    for n in range(1, keep + 1):
        candidate = f"{path}.{n}"
        if not os.path.exists(candidate):
            break
        out.append(candidate)
    return out


#: What a reader is told of a line it skipped: the file and what was wrong with the line.
Broken = Callable[[str, AuditLineError], None]


def _ignore(name: str, error: AuditLineError) -> None:
    del name, error


def read_tail(path: str, n: int, broken: Broken = _ignore) -> list[LogEntry]:
    """The newest ``n`` records (oldest first), across rotated files. Lines that are not a JSON
    object are skipped (each passed to ``broken``)."""
    out: list[LogEntry] = []
    for name in files_newest_first(path):
        lines = last_lines(name, n - len(out))
        out = [r for r in (_parse(name, x, broken) for x in lines) if r is not None] + out
        if len(out) >= n:
            break
    return out[-n:] if n > 0 else []


def _parse(name: str, line: bytes, broken: Broken) -> LogEntry | None:
    if not line.strip():  # an empty line holds no record to lose
        return None
    try:
        return decode(line)
    except AuditLineError as exc:
        broken(name, exc)
        return None


def follow(path: str, poll_s: float = 0.2, broken: Broken = _ignore) -> Iterator[LogEntry]:
    """Records appended to ``path`` from now on, surviving rotation. Runs until interrupted. Lines
    that are not a JSON object are skipped (each passed to ``broken``)."""
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
                rec = _parse(path, line, broken)
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


def last_lines(path: str, n: int) -> list[bytes]:
    """The last ``n`` complete or partial lines of ``path`` (without newlines); [] when unreadable."""
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

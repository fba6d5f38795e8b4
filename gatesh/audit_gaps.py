"""Where the next batch of audit lines continues the chain (S13), and what the writer found on
the way: the live file checked against the kept head before every batch that does not find the
file exactly as this writer left it.

Guarantees: a file that shrank, vanished, was replaced or grew without a writer recording it, a
head file changed or removed, and a log with no head at all each yield a named gap
(:attr:`Start.breaks`), which the writer records as a chain-break line (:func:`break_record`)
before its own lines; the chain's seq never restarts.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Final

from gatesh.audit_chain import (
    GENESIS,
    Head,
    first_link,
    head_path,
    last_link,
    link_of,
    read_head,
    rotated_files,
)
from gatesh.audit_record import BreakRecord, FileSeen, KeptHead

__all__ = ["Start", "break_record", "find_start", "floor_after_rotation"]

#: Reading what lies past the kept head (lines a writer did not record) stops after this much.
_PAST_HEAD_MAX: Final = 32 * 1024 * 1024


@dataclass
class Start:
    """Where a batch continues the chain, and what the writer found on the way (gaps to record)."""

    seq: int
    prev: str
    floor: int
    breaks: list[tuple[str, str]] = field(default_factory=list)  # (kind, what was found)
    close_torn: bool = False  # the file ends inside a line: a newline closes it first
    file_gone: bool = False  # the live file's lines up to the head are gone (no rotated file left)
    head: Head | None = None  # the kept head this start was checked against


def find_start(path: str, mine: Head | None, st: os.stat_result, created: bool) -> Start:
    """Where this batch continues the chain: the kept head when the file is as it left it
    (nothing read: the common case), otherwise what the file and the head file show."""
    ident = (st.st_dev, st.st_ino)
    if mine is not None and (mine.dev, mine.ino, mine.size) == (*ident, st.st_size):
        return Start(mine.seq, mine.hash, mine.floor)
    breaks: list[tuple[str, str]] = []
    kept, problem = read_head(path)
    head_gone = ""  # said with the file's own gap when there is one, else on its own
    if mine is None:
        head = kept
    elif kept is None:
        head = mine
        head_gone = f"the kept head file {head_path(path)} was " + (
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
        return _start_without_head(path, st, problem)
    torn = st.st_size > 0 and _last_byte(path) != b"\n"
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
        return Start(head.seq, head.hash, head.floor, breaks, torn, _nothing_older(path), head)
    if st.st_size < head.size:
        if st.st_size == 0:
            found = (
                f"the log file was emptied{also}: it held {head.size} bytes, up to seq {head.seq}"
            )
        else:
            found = (
                f"the log file was cut from {head.size} to {st.st_size} bytes{also}: the "
                f"kept head is seq {head.seq}"
            )
        breaks.append(("emptied" if st.st_size == 0 else "cut", found))
        gone = st.st_size == 0 and _nothing_older(path)
        return Start(head.seq, head.hash, head.floor, breaks, torn, gone, head)
    if head_gone:
        breaks.append(("head-changed", head_gone))
    if st.st_size == head.size:
        return Start(head.seq, head.hash, head.floor, breaks, head=head)
    return _past_head(path, head, breaks)


def _past_head(path: str, head: Head, breaks: list[tuple[str, str]]) -> Start:
    """The file grew past the kept head without a writer recording it: lines chained to the
    head (a writer stopped between its line and its head) are continued from and named;
    anything else is named and the chain continues from the head. A partial last line is
    closed."""
    try:
        with open(path, "rb") as f:
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
        return Start(seq, prev, head.floor, breaks, bool(fragment), head=head)
    if complete:
        breaks.append(
            (
                "appended",
                f"{len(complete)} line{'s' if len(complete) != 1 else ''} after the kept "
                f"head (seq {head.seq}) do not continue the chain: something other than "
                "gatesh's writer appended them",
            )
        )
    return Start(head.seq, head.hash, head.floor, breaks, bool(fragment), head=head)


def _start_without_head(path: str, st: os.stat_result, problem: str) -> Start:
    """No head is kept (a log older than the head, or its head file lost): a new log starts
    at :data:`GENESIS`; an existing one continues from its last line, and says it could not
    be checked."""
    rotated, _ = rotated_files(path)
    if st.st_size == 0 and not rotated:
        return Start(0, GENESIS, 1)
    found = last_link(path)
    for name in rotated:
        if found is not None:
            break
        found = last_link(name)
    seq, prev = found if found is not None else (0, GENESIS)
    oldest = first_link(rotated[-1]) if rotated else first_link(path)
    why = problem or f"there is no {head_path(path)}"
    breaks = [
        (
            "no-head",
            f"no kept head was found ({why}): the chain continues from the last line "
            f"there, seq {seq}, which could not be checked against one",
        )
    ]
    torn = st.st_size > 0 and _last_byte(path) != b"\n"
    return Start(seq, prev, oldest[0] if oldest else seq + 1, breaks, torn)


def _nothing_older(path: str) -> bool:
    """No rotated file is left: every line up to the kept head is gone with the live file."""
    return not rotated_files(path)[0]


def floor_after_rotation(path: str, first_new: int) -> int:
    """The oldest seq still kept after a rotation: the first line of the oldest rotated file
    (``first_new``, the first line of the new live file, when none is kept)."""
    rotated, _ = rotated_files(path)
    for name in reversed(rotated):
        found = first_link(name)
        if found is not None:
            return found[0]
    return first_new


def _last_byte(path: str) -> bytes:
    """The last byte of ``path`` (b"" when empty or unreadable)."""
    try:
        with open(path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            return f.read(1)
    except OSError:
        return b""


def break_record(
    kind: str, found: str, head: Head | None, st: os.stat_result, now: float
) -> BreakRecord:
    """The chain-break record: the writer's own line saying what it found (S13)."""
    return BreakRecord(
        time=time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(now)),
        ts=round(now, 3),
        pid=os.getpid(),
        kind=kind,
        found=found,
        kept_head=None if head is None else KeptHead(head.seq, head.hash, head.ino, head.size),
        file=FileSeen(st.st_ino, st.st_size),
    )

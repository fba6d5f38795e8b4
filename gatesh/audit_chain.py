"""The audit log's hash chain (S13): the line format, the head its writer keeps, and ``verify``.

Every line starts ``{"seq":N,"prev":P,`` and ends ``,"hash":H}``: ``seq`` counts lines across
rotation and never restarts, ``P`` is the previous line's ``H`` (:data:`GENESIS` for the first line
a log ever had) and ``H`` is the SHA-256 of the line with its ``hash`` member taken out.

The kept head (``audit.jsonl.head``, :class:`Head`) is where the writer leaves the chain's end after
every batch: the last line's seq and hash, the live file's identity and size, and the oldest seq it
still keeps after rotation. The writer compares the file with it before it writes; :func:`verify`
compares the files with it, and with what the system log holds when asked (``against``).

What :func:`verify` can see, by what is at hand:

- the files alone: a line changed (its hash), removed or inserted (the chain), a torn partial line
  (named once; everything after it is still checked), a rotated file missing between two others,
  and every gap the writer recorded (a chain-break record: the log emptied, cut, deleted or
  replaced under it, lines appended that it did not write);
- with the kept head: the last lines cut, the first lines dropped, lines appended after the head;
- with the system log (``audit.syslog``): a whole chain rewritten consistently (a head anchor or a
  record copy names a hash the file no longer has), and a cut tail even after the head file was
  rewritten too.

A same-user program that rewrites the files and the head file together is seen only by the system
log (or not at all without it); the boundary (S16) and an agent running as its own user (S9.6) keep
the agent from writing these files in the first place.
"""

from __future__ import annotations

import enum
import fcntl
import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from gatesh.audit_read import last_lines

__all__ = [
    "GENESIS",
    "HEAD_BYTES",
    "Anchor",
    "ChainReport",
    "Finding",
    "Head",
    "Kind",
    "chain_line",
    "describe",
    "link_of",
    "read_head",
    "rotated_files",
    "verify",
]

#: The ``prev`` of the first line a log ever had.
GENESIS: Final = "0" * 64
_CHAIN_HEAD: Final = re.compile(rb'^\{"seq":(\d+),"prev":"([0-9a-f]{64})"')
_CHAIN_TAIL: Final = re.compile(rb',"hash":"([0-9a-f]{64})"\}$')
#: The kept head is written in place, padded to this size: one ``pwrite`` per batch, never a
#: file that is half old and half new (its JSON is ~200 bytes).
HEAD_BYTES: Final = 512
#: What an audit record's ``action`` is when the writer records a gap it found (not a decision).
CHAIN_BREAK: Final = "chain-break"
#: How many findings ``gatesh log --verify`` prints before it says how many more there are.
SHOWN_FINDINGS: Final = 20


def chain_line(body: bytes, seq: int, prev: str) -> tuple[bytes, str]:
    """``body`` (a JSON object) as the chained line ``seq`` after ``prev``: (line with its newline,
    its hash)."""
    inner = body[1:-1]
    content = (
        b'{"seq":%d,"prev":"%s"' % (seq, prev.encode()) + (b"," + inner if inner else b"") + b"}"
    )
    digest = hashlib.sha256(content).hexdigest()
    return content[:-1] + b',"hash":"' + digest.encode() + b'"}\n', digest


def link_of(line: bytes) -> tuple[int, str, str, bool] | None:
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


# --- the kept head ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Head:
    """The chain's end as its writer left it: the last line (``seq``, ``hash``), the live file it
    is in (``dev``, ``ino``) and that file's size right after it, and ``floor``, the oldest seq the
    writer still keeps (rotation beyond ``audit.keep`` drops older lines; nothing else may)."""

    seq: int
    hash: str
    dev: int
    ino: int
    size: int
    floor: int

    def encode(self) -> bytes:
        """The head file's content: one JSON line padded with spaces to :data:`HEAD_BYTES`."""
        text = json.dumps(
            {
                "v": 1,
                "seq": self.seq,
                "hash": self.hash,
                "dev": self.dev,
                "ino": self.ino,
                "size": self.size,
                "floor": self.floor,
            },
            separators=(",", ":"),
        ).encode()
        return text.ljust(HEAD_BYTES - 1) + b"\n"

    @classmethod
    def decode(cls, raw: bytes) -> Head:
        """The head in ``raw``; ValueError when it is not one."""
        data = json.loads(raw.decode("ascii").strip())
        if not isinstance(data, dict) or data.get("v") != 1:
            raise ValueError("not a gatesh audit head")
        values: list[int] = []
        for key in ("seq", "dev", "ino", "size", "floor"):
            v = data.get(key)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"{key} is not a number")
            values.append(v)
        digest = data.get("hash")
        if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise ValueError("no hash")
        seq, dev, ino, size, floor = values
        return cls(seq, digest, dev, ino, size, floor)


def head_path(log: str) -> str:
    return log + ".head"


def read_head(log: str) -> tuple[Head | None, str]:
    """The head kept for the log at ``log``: (head, "") — (None, "") when there is none, (None,
    why) when the file is there but cannot be read as a head."""
    try:
        with open(head_path(log), "rb") as f:
            raw = f.read(HEAD_BYTES * 2)
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        return None, f"{head_path(log)} cannot be read ({exc.strerror or exc})"
    try:
        return Head.decode(raw), ""
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"{head_path(log)} is not a kept head ({exc})"


# --- files ------------------------------------------------------------------------------------


def rotated_files(path: str) -> tuple[list[str], list[int]]:
    """The rotated files of the log at ``path`` that exist, newest first (``.1``, ``.2`` …), and
    the numbers missing below the highest one there (``.2`` absent while ``.3`` is there)."""
    folder, base = os.path.split(path)
    numbers: list[int] = []
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return [], []
    prefix = base + "."
    for name in names:
        if name.startswith(prefix) and name[len(prefix) :].isdigit():
            n = int(name[len(prefix) :])
            if 0 < n < 100_000:
                numbers.append(n)
    numbers.sort()
    have = set(numbers)
    missing = [n for n in range(1, numbers[-1]) if n not in have] if numbers else []
    return [f"{path}.{n}" for n in numbers], missing


def first_link(path: str) -> tuple[int, str] | None:
    """(seq, prev) of the first chained line of ``path``; None when it has none."""
    try:
        with open(path, "rb") as f:
            for raw in f:
                link = link_of(raw.rstrip(b"\n"))
                if link is not None:
                    return link[0], link[1]
    except OSError:
        return None
    return None


# --- verify -----------------------------------------------------------------------------------


class Kind(enum.StrEnum):
    """What :func:`verify` found. Every kind but ``torn`` and ``no-head`` is evidence of tampering
    (or of a gap someone must explain): ``gatesh log --verify`` exits 1."""

    CHANGED = "changed"  # a line's content or hash was changed
    REMOVED = "removed"  # lines are missing between two kept lines
    INSERTED = "inserted"  # a line that was not chained by the writer sits between two
    TORN = "torn"  # a partial line: a write that did not finish (a full disk)
    BREAK = "break"  # the writer recorded a gap it found (chain-break record)
    CUT = "cut"  # the last lines are gone: the file ends before the kept head / system log
    DROPPED = "dropped"  # the first lines are gone: the oldest kept line is after the floor
    MISSING_FILE = "missing-file"  # a rotated file is missing between two others
    APPENDED = "appended"  # lines after the kept head that the writer did not write
    REWRITTEN = "rewritten"  # a line is not the one the kept head or the system log names
    NO_COPY = "no-copy"  # a line the system log has no copy of (audit.syslog)
    NO_HEAD = "no-head"  # no kept head: what only the head can show is not checked


_NOT_TAMPER: Final = frozenset({Kind.TORN, Kind.NO_HEAD})


@dataclass(frozen=True)
class Finding:
    """One thing :func:`verify` found, where (``file``, ``line`` from 1, ``seq``; 0 when it is not
    about one line) and in words (``text``, a whole sentence)."""

    kind: Kind
    text: str
    file: str = ""
    line: int = 0
    seq: int = 0
    tamper: bool = field(init=False)  # evidence of tampering (every kind but torn and no-head)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tamper", self.kind not in _NOT_TAMPER)


@dataclass(frozen=True)
class Anchor:
    """What the system log holds about one line (``audit.syslog``): its seq and hash, and whether
    it came as a head anchor (``head``) or as the copy of a record."""

    seq: int
    hash: str
    head: bool = False


@dataclass(frozen=True)
class ChainReport:
    """What :func:`verify` found. ``ok`` is true when no finding is evidence of tampering.

    ``kind``, ``file``, ``line``, ``seq`` and ``problem`` describe the first finding (empty when
    there is none); ``findings`` holds all of them in the order they were found; ``notes`` says
    what was checked against what (the kept head, the system log).

    Its fields in order are ``gatesh log --verify --json``'s members (:func:`gatesh._json.plain`)."""

    ok: bool = field(init=False)
    lines: int
    files: int
    first_seq: int = 0
    last_seq: int = 0
    kind: str = ""
    file: str = ""
    line: int = 0
    seq: int = 0
    problem: str = ""
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "ok", not any(f.tamper for f in self.findings))


@dataclass
class _Walk:
    """The state of one pass over the chain (oldest line first)."""

    findings: list[Finding] = field(default_factory=list)
    count: int = 0
    first_seq: int = 0
    # The last line the chain continues from: (seq, hash, file, line number).
    prev: tuple[int, str, str, int] | None = None
    seen: dict[str, tuple[str, int, int]] = field(default_factory=dict)  # hash -> where
    by_seq: dict[int, str] = field(default_factory=dict)  # seq -> hash of the line kept

    def add(self, kind: Kind, text: str, name: str = "", n: int = 0, seq: int = 0) -> None:
        self.findings.append(Finding(kind, text, name, n, seq))


def _read_lines(name: str) -> list[bytes]:
    with open(name, "rb") as f:
        raw = f.read().split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    return raw


def _check_line(w: _Walk, name: str, n: int, raw: bytes, gap_explained: str) -> None:
    """One line of the chain: a finding for anything wrong with it; the walk resynchronises on it."""
    w.count += 1
    link = link_of(raw)
    if link is None:
        if raw.startswith(b'{"seq":') or not raw.endswith(b"}"):
            w.add(
                Kind.TORN,
                f"line {n} of {name} is a partial record of {len(raw)} bytes: a write that did "
                "not finish (a full disk?); the lines after it are checked as usual",
                name,
                n,
            )
        else:
            w.add(Kind.CHANGED, f"line {n} of {name} is not a chained record", name, n)
        return
    seq, stated_prev, digest, intact = link
    if w.prev is None:
        w.first_seq = seq
    if not intact:
        w.add(
            Kind.CHANGED,
            f"line {n} of {name} (seq {seq}) was changed: its hash does not match its content",
            name,
            n,
            seq,
        )
    elif _is_break(raw):
        w.add(Kind.BREAK, _break_text(raw, seq, name, n), name, n, seq)
    elif w.prev is None:
        if seq == 1 and stated_prev != GENESIS:
            w.add(
                Kind.CHANGED,
                f"line {n} of {name} (seq 1) was changed: the first line names a line before it",
                name,
                n,
                seq,
            )
    elif stated_prev != w.prev[1]:
        _check_misdirected(w, w.prev, name, n, seq, stated_prev, gap_explained)
    elif seq != w.prev[0] + 1:
        w.add(
            Kind.CHANGED,
            f"line {n} of {name} (seq {seq}) was changed: its sequence number should be "
            f"{w.prev[0] + 1}",
            name,
            n,
            seq,
        )
    w.seen[digest] = (name, n, seq)
    w.by_seq[seq] = digest
    w.prev = (seq, digest, name, n)


def _check_misdirected(
    w: _Walk,
    prev: tuple[int, str, str, int],
    name: str,
    n: int,
    seq: int,
    stated_prev: str,
    gap_explained: str,
) -> None:
    """Line ``n`` of ``name`` names another line before it than the one the walk kept: say
    whether lines were inserted, removed (or their rotated file is missing) or changed. ``prev``
    is the walk's last kept line: (seq, hash, file, line number)."""
    prev_seq = prev[0]
    if stated_prev in w.seen:
        at = w.seen[stated_prev]
        w.add(
            Kind.INSERTED,
            f"line {at[1] + 1} of {at[0]} (seq {at[2] + 1}) was inserted: the line after it "
            f"(line {n} of {name}) follows line {at[1]} of {at[0]}",
            at[0],
            at[1] + 1,
            at[2] + 1,
        )
    elif seq > prev_seq + 1:
        missing = seq - prev_seq - 1
        span = f"seq {prev_seq + 1}{f'-{seq - 1}' if missing > 1 else ''}"
        if gap_explained:
            w.add(Kind.MISSING_FILE, f"{gap_explained}: {span} are gone", name, n, seq)
        else:
            w.add(
                Kind.REMOVED,
                f"line {n} of {name} (seq {seq}) follows {missing} removed "
                f"line{'s' if missing != 1 else ''} ({span})",
                name,
                n,
                seq,
            )
    elif seq == prev_seq + 1:
        w.add(
            Kind.CHANGED,
            f"line {prev[3]} of {prev[2]} (seq {prev_seq}) was changed: the line after "
            f"it (line {n} of {name}) was chained to other content",
            prev[2],
            prev[3],
            prev_seq,
        )
    else:
        w.add(
            Kind.INSERTED,
            f"line {n} of {name} (seq {seq}) was inserted: its sequence number goes back",
            name,
            n,
            seq,
        )


def _is_break(raw: bytes) -> bool:
    return b'"action":"chain-break"' in raw


def _break_text(raw: bytes, seq: int, name: str, n: int) -> str:
    try:
        found = json.loads(raw).get("found")
    except ValueError:
        found = None
    what = found if isinstance(found, str) and found else "a gap in the log"
    return f"line {n} of {name} (seq {seq}): the writer found {what}"


def verify(path: str, *, against: Iterable[Anchor] | None = None) -> ChainReport:
    """Check the chain of the log at ``path``, its rotated files and its kept head, oldest line
    first (S13); with ``against``, also what the system log holds about it. Never raises.

    Every problem is named once and the check goes on from the line after it. The files are read
    under a shared lock on ``audit.jsonl.lock``, so a writer's batch is never half seen.
    """
    lock = _shared_lock(path)
    try:
        return _verify(path, against)
    finally:
        if lock is not None:
            os.close(lock)


def _shared_lock(path: str) -> int | None:
    try:
        fd = os.open(path + ".lock", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    except OSError:
        os.close(fd)
        return None
    return fd


def _verify(path: str, against: Iterable[Anchor] | None) -> ChainReport:
    rotated, missing_numbers = rotated_files(path)
    # Oldest first, each with its rotation number (0 for the live file).
    files = [(name, int(name.rsplit(".", 1)[1])) for name in reversed(rotated)]
    if os.path.exists(path):
        files.append((path, 0))
    w = _Walk()
    notes: list[str] = []
    missing = set(missing_numbers)
    for index, (name, number) in enumerate(files):
        # A rotated file missing right before this one explains the seq gap at its first line.
        explained = ""
        if index > 0 and number + 1 in missing:
            explained = f"{path}.{number + 1} is missing (the files on either side are here)"
        try:
            raw_lines = _read_lines(name)
        except OSError as exc:
            w.add(Kind.CHANGED, f"{name} cannot be read ({exc.strerror or exc})", name)
            continue
        for n, raw in enumerate(raw_lines, 1):
            _check_line(w, name, n, raw, explained if n == 1 else "")
            if n == 1 and explained and w.findings and w.findings[-1].kind is Kind.MISSING_FILE:
                missing.discard(number + 1)
    for number in sorted(missing):
        w.add(
            Kind.MISSING_FILE,
            f"{path}.{number} is missing while {path}.{number + 1} or a later one is here: the "
            "lines it held are gone",
            f"{path}.{number}",
        )
    last_seq = w.prev[0] if w.prev else 0
    head, head_problem = read_head(path)
    if head is None:
        why = head_problem or f"there is no {head_path(path)}"
        w.add(
            Kind.NO_HEAD,
            f"no kept head ({why}): a cut tail and dropped first lines cannot be seen from the "
            "files alone",
        )
    else:
        _against_head(w, path, head, last_seq)
        notes.append(f"checked against the kept head (seq {head.seq})")
    if against is not None:
        anchors = list(against)
        _against_syslog(w, anchors, last_seq)
        heads = sum(1 for a in anchors if a.head)
        notes.append(
            f"checked against the system log: {heads} head anchor{'s' if heads != 1 else ''}, "
            f"{len(anchors) - heads} record cop{'ies' if len(anchors) - heads != 1 else 'y'}"
        )
    first = next((f for f in w.findings if f.tamper), None) or (
        w.findings[0] if w.findings else None
    )
    return ChainReport(
        w.count,
        len(files),
        w.first_seq,
        last_seq,
        first.kind.value if first else "",
        first.file if first else "",
        first.line if first else 0,
        first.seq if first else 0,
        first.text if first else "",
        tuple(w.findings),
        tuple(notes),
    )


def _against_head(w: _Walk, path: str, head: Head, last_seq: int) -> None:
    try:
        st = os.stat(path)
        ident: tuple[int, int] | None = (st.st_dev, st.st_ino)
    except OSError:
        ident = None
    if head.seq and ident is not None and ident != (head.dev, head.ino):
        w.add(
            Kind.REWRITTEN,
            f"{path} is not the file the writer kept (it was replaced or deleted and made "
            "again); the kept head is seq {head.seq}",
            path,
        )
    if last_seq < head.seq:
        cut = head.seq - last_seq
        w.add(
            Kind.CUT,
            f"the log ends at seq {last_seq} but the writer's kept head is seq {head.seq}: the "
            f"last {cut} line{'s were' if cut != 1 else ' was'} cut off",
            path,
            seq=last_seq,
        )
    elif last_seq > head.seq:
        extra = last_seq - head.seq
        span = f"{head.seq + 1}-{last_seq}" if extra > 1 else f"{last_seq}"
        w.add(
            Kind.APPENDED,
            f"{extra} line{'s' if extra != 1 else ''} after the kept head (seq {span}) "
            f"{'were' if extra != 1 else 'was'} not written by gatesh's writer",
            path,
            seq=head.seq + 1,
        )
    kept = w.by_seq.get(head.seq)
    if kept is not None and kept != head.hash:
        w.add(
            Kind.REWRITTEN,
            f"the line with seq {head.seq} is not the one the writer kept (its hash differs "
            "from the kept head's): the log was rewritten",
            path,
            seq=head.seq,
        )
    if w.first_seq and w.first_seq > head.floor:
        dropped = w.first_seq - head.floor
        w.add(
            Kind.DROPPED,
            f"the oldest line kept is seq {w.first_seq} but the writer still keeps lines from "
            f"seq {head.floor}: the first {dropped} line{'s were' if dropped != 1 else ' was'} "
            "dropped",
            seq=head.floor,
        )


def _against_syslog(w: _Walk, anchors: list[Anchor], last_seq: int) -> None:
    """Each anchor names a line by seq and hash; a kept line must match it. Lines the system log
    has no copy of are named when copies are there for the lines around them."""
    newest_head = max((a.seq for a in anchors if a.head), default=0)
    newest = max((a.seq for a in anchors), default=0)
    differ: list[int] = []
    for a in anchors:
        kept = w.by_seq.get(a.seq)
        if kept is not None and kept != a.hash and a.seq not in differ:
            differ.append(a.seq)
    if differ:
        differ.sort()
        shown = ", ".join(str(s) for s in differ[:10]) + (" …" if len(differ) > 10 else "")
        w.add(
            Kind.REWRITTEN,
            f"{len(differ)} line{'s' if len(differ) != 1 else ''} differ from what the system log "
            f"holds for {'them' if len(differ) != 1 else 'it'} (seq {shown}): the log was "
            "rewritten",
            seq=differ[0],
        )
    if newest > last_seq:
        w.add(
            Kind.CUT,
            f"the system log names seq {newest} (newest head anchor: seq {newest_head}) but the "
            f"log ends at seq {last_seq}: the last {newest - last_seq} line"
            f"{'s were' if newest - last_seq != 1 else ' was'} cut off",
            seq=last_seq,
        )
    copies = {a.seq for a in anchors if not a.head}
    if copies:
        # From the oldest copy on (older lines predate audit.syslog, or their copies were
        # rotated out of the system log), every line kept should have one.
        low = min(copies)
        uncopied = [s for s in sorted(w.by_seq) if s >= low and s not in copies]
        if uncopied:
            shown = ", ".join(str(s) for s in uncopied[:10]) + (" …" if len(uncopied) > 10 else "")
            w.add(
                Kind.NO_COPY,
                f"{len(uncopied)} line{'s' if len(uncopied) != 1 else ''} the system log has no "
                f"copy of (seq {shown}): written by something other than gatesh's writer, or the "
                "copy was dropped (journald rate-limits) or is still on its way (copies follow "
                "their lines within a moment)",
                seq=uncopied[0],
            )


def describe(report: ChainReport) -> tuple[str, list[str]]:
    """The headline ``gatesh log --verify`` prints, and one line per finding (at most
    :data:`SHOWN_FINDINGS`, then how many more)."""
    span = f", seq {report.first_seq} to {report.last_seq}" if report.lines else ""
    counted = f"{report.lines} lines in {report.files} file{'s' if report.files != 1 else ''}{span}"
    tampered = [f for f in report.findings if f.tamper]
    if tampered:
        headline = (
            f"audit log tampered with or damaged: {len(tampered)} finding"
            f"{'s' if len(tampered) != 1 else ''} ({counted})"
        )
    else:
        headline = f"audit log intact: {counted}"
        if report.first_seq > 1 and not any(f.kind is Kind.NO_HEAD for f in report.findings):
            headline += f" (lines before seq {report.first_seq} were rotated away)"
    rows = [f"{f.kind.value}: {f.text}" for f in report.findings[:SHOWN_FINDINGS]]
    if len(report.findings) > SHOWN_FINDINGS:
        rows.append(f"… and {len(report.findings) - SHOWN_FINDINGS} more")
    rows += [f"note: {n}" for n in report.notes]
    return headline, rows


def last_link(path: str, lines: int = 8) -> tuple[int, str] | None:
    """(seq, hash) of the last chained line of ``path``; None when it has none (or cannot be read)."""
    for raw in reversed(last_lines(path, lines)):
        link = link_of(raw)
        if link is not None:
            return link[0], link[2]
    return None

"""The audit log's copy in the system log (``audit.syslog = true``, S13).

What goes there, under the identifier ``gatesh``:

- a copy of each durable record, with its ``seq`` and ``hash`` in the chain and the ``log`` it is
  in: ``ACTION {json}``, so a plain ``grep`` works and an organisation's log pipeline collects every
  machine's decisions without a gatesh server;
- the chain's head, ``head {"seq", "hash", "log", "why"}``, every ``audit.syslog_head_every``
  records, on rotation, on a gap the writer found, and on a writer's first batch.

The system log is written by a root-owned daemon (journald, rsyslog) into files the user cannot
rewrite, so ``gatesh log --verify --against-syslog`` can tell a whole chain rewritten consistently,
or cut off together with its kept head, from the real one (:func:`anchors`).

Guarantees: :func:`send_lines` and :func:`send` never raise and never block on a slow reader (one
datagram per message to the local socket, ``/dev/log`` unless ``audit.syslog_socket`` names
another). Each message is one line of ASCII JSON, at most :data:`MAX_MESSAGE` bytes; the record is
expected to be already redacted and home-folded (the audit module's job).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import syslog
import time
from collections.abc import Iterable
from typing import Any, Final

from gatesh.audit_chain import Anchor
from gatesh.audit_record import AuditRecord, as_json

__all__ = [
    "DEFAULT_SOCKET",
    "IDENT",
    "MAX_MESSAGE",
    "anchors",
    "copy_message",
    "format_record",
    "head_message",
    "priority_for",
    "read_source",
    "send",
    "send_lines",
]

IDENT: Final = "gatesh"
#: Where the C library's ``syslog(3)`` writes: journald and rsyslog both listen there.
DEFAULT_SOCKET: Final = "/dev/log"
# rsyslog's default maximum message size is 8 KiB including the header; stay well under it.
MAX_MESSAGE: Final = 4000
#: How long reading the journal may take before ``--against-syslog`` gives up on it (s).
JOURNAL_TIMEOUT_S: Final = 60.0

_PRIORITIES: Final = {
    "allow": syslog.LOG_INFO,
    "reject": syslog.LOG_NOTICE,
    "escalate": syslog.LOG_NOTICE,
    "deny": syslog.LOG_WARNING,
    "refuse": syslog.LOG_WARNING,
    "halt": syslog.LOG_ALERT,  # an attack: the session's autonomy ended
    "chain-break": syslog.LOG_ALERT,  # the writer found the log changed under it
}
# Fields cut first when a record is too long, longest-living text first.
_CUTTABLE: Final = ("command", "reason", "message", "notice", "remedy", "facts", "rounds")
# Kept when even the cut record is too long: what names the decision and its place in the chain.
_ESSENTIAL: Final = ("time", "session", "action", "stage", "outcome", "seq", "hash", "log")
# A message in a syslog file (``… gatesh[PID]: KIND {json}``) or in ``journalctl -o cat``.
_MESSAGE: Final = re.compile(r"(?:^|\bgatesh(?:\[\d+\])?: )([a-z][a-z-]*) (\{.*\})\s*$")
_HEX64: Final = re.compile(r"[0-9a-f]{64}")


def priority_for(record: dict[str, Any]) -> int:
    """The syslog priority of a record (the JSON object of its line): by its action; unknown
    actions are warnings."""
    return _PRIORITIES.get(str(record.get("action", "")), syslog.LOG_WARNING)


def format_record(record: dict[str, Any]) -> str:
    """A record (the JSON object of its line) as ``"ACTION {json}"`` on one line, at most :data:`MAX_MESSAGE` bytes (long text fields cut)."""
    action = str(record.get("action", "unknown"))
    body = dict(record)
    text = _dump(action, body)
    for key in _CUTTABLE:
        if len(text.encode("utf-8")) <= MAX_MESSAGE:
            break
        value = body.get(key)
        if value is None:
            continue
        value = (
            value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        )
        over = len(text.encode("utf-8")) - MAX_MESSAGE
        keep = max(0, len(value) - over - 32)
        body[key] = value[:keep] + f"… [{len(value) - keep} chars cut]"
        text = _dump(action, body)
    if len(text.encode("utf-8")) > MAX_MESSAGE:
        short: dict[str, Any] = {k: body[k] for k in _ESSENTIAL if k in body}
        short["truncated"] = True
        text = _dump(action, short)
    return text


def _dump(action: str, body: dict[str, Any]) -> str:
    # ensure_ascii keeps control characters and odd code points escaped: one clean line.
    action = "".join(c if c.isalnum() or c == "-" else "_" for c in action)[:32] or "unknown"
    return f"{action} " + json.dumps(body, ensure_ascii=True, separators=(",", ":"), default=str)


def copy_message(record: AuditRecord, seq: int, digest: str, log: str) -> tuple[int, str]:
    """(priority, text) of the system-log copy of ``record``, written as line ``seq`` of ``log``."""
    body = as_json(record)
    return priority_for(body), format_record(body | {"seq": seq, "hash": digest, "log": log})


def head_message(seq: int, digest: str, log: str, why: str) -> tuple[int, str]:
    """(priority, text) of a head anchor: ``log``'s chain ends at line ``seq`` with ``digest``."""
    body = {"seq": seq, "hash": digest, "log": log, "why": why, "uid": os.getuid()}
    return syslog.LOG_NOTICE, _dump("head", body)


_sock: socket.socket | None = None
_sock_path = ""


def send_lines(messages: Iterable[tuple[int, str]], path: str = DEFAULT_SOCKET) -> None:
    """Send each (priority, text) to the system log socket at ``path``. Never raises: a message
    that cannot be sent is dropped (the audit file is the record of record)."""
    global _sock, _sock_path
    for priority, text in messages:
        frame = _frame(priority, text)
        for _attempt in range(2):
            try:
                if _sock is None or _sock_path != path:
                    _close()
                    _sock, _sock_path = _connect(path), path
                _sock.send(frame)
                break
            except OSError:
                _close()  # the syslog daemon restarted (or is gone): reconnect once
            except Exception:
                return


def _frame(priority: int, text: str) -> bytes:
    """The datagram ``syslog(3)`` would send: ``<PRI>Mmm dd hh:mm:ss gatesh[PID]: TEXT``."""
    stamp = time.strftime("%b %d %H:%M:%S")
    pri = (syslog.LOG_USER | priority) & 0x3FF
    return f"<{pri}>{stamp} {IDENT}[{os.getpid()}]: {text}".encode("utf-8", "replace")


def _connect(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
    sock.setblocking(False)  # a full receive queue drops the copy; it never waits
    try:
        sock.connect(path)
    except BaseException:
        sock.close()
        raise
    return sock


def _close() -> None:
    global _sock
    if _sock is not None:
        try:
            _sock.close()
        finally:
            _sock = None


def send(record: AuditRecord, path: str = DEFAULT_SOCKET) -> None:
    """Send a copy of ``record`` (no chain position) to the system log. Never raises."""
    try:
        body = as_json(record)
        send_lines([(priority_for(body), format_record(body))], path)
    except Exception:
        return


# --- reading it back (gatesh log --verify --against-syslog) -----------------------------------


def read_source(source: str) -> list[str]:
    """The system log's lines that may hold gatesh messages. ``source`` is a file (a syslog file,
    or anything holding its lines), or "" for the usual places: the journal (``journalctl -t
    gatesh``), else ``/var/log/syslog``, ``/var/log/messages``. Raises OSError naming what could
    not be read."""
    if source:
        with open(source, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    journalctl = shutil.which("journalctl")
    if journalctl is not None:
        try:
            out = subprocess.run(
                [journalctl, "-q", "-t", IDENT, "-o", "cat", "--no-pager"],
                capture_output=True,
                text=True,
                errors="replace",
                timeout=JOURNAL_TIMEOUT_S,
                check=False,
            )
            if out.returncode == 0 and out.stdout:
                return out.stdout.splitlines()
        except (OSError, subprocess.SubprocessError):
            pass
    for name in ("/var/log/syslog", "/var/log/messages"):
        try:
            with open(name, encoding="utf-8", errors="replace") as f:
                return f.read().splitlines()
        except OSError:
            continue
    raise OSError(
        "no system log could be read (no journal; /var/log/syslog and /var/log/messages are "
        "missing or unreadable): name the file with --against-syslog FILE"
    )


def anchors(lines: Iterable[str], log: str) -> list[Anchor]:
    """What the system log holds about the log at ``log``: its head anchors and record copies,
    each as (seq, hash). Messages about other logs, and lines that are not gatesh's, are skipped."""
    want = os.path.realpath(log)
    found: list[Anchor] = []
    for line in lines:
        m = _MESSAGE.search(line)
        if m is None:
            continue
        try:
            body = json.loads(m.group(2))
        except ValueError:
            continue
        if not isinstance(body, dict):
            continue
        seq, digest, where = body.get("seq"), body.get("hash"), body.get("log")
        if not (isinstance(seq, int) and isinstance(digest, str) and isinstance(where, str)):
            continue
        if not _HEX64.fullmatch(digest) or os.path.realpath(where) != want:
            continue
        found.append(Anchor(seq, digest, head=m.group(1) == "head"))
    return found

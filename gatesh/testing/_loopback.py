"""The loopback "internet" of the outer jail: a DNS stub, listeners on the usual ports, and the
package-registry stand-ins, recording what a row sends (standard library only: it runs in the
jail beside the warden, :mod:`gatesh.testing._warden`).

Guarantees: every connection's bytes are kept up to :data:`MAX_CONN_BYTES` (and all of them up to
:data:`MAX_RECORDED`), marked truncated past that; every DNS A question is answered 127.0.0.1, so
a row's traffic stays on loopback and is seen here; a listener never answers with anything a
client could take as success beyond an empty JSON object.
"""

from __future__ import annotations

import base64
import re
import select
import socket
import struct
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Conn", "Records", "Upload", "start_recorders"]

#: Bytes kept per connection, and for everything the listeners received.
MAX_CONN_BYTES: Final = 1 << 20
MAX_RECORDED: Final = 8 << 20
#: A connection that sends nothing for this long is closed (after a reply, for HTTP).
IDLE_S: Final = 1.0
SMTP_PORTS: Final = frozenset({25, 465, 587, 2525})
FTP_PORTS: Final = frozenset({21})

#: Records a chunk a connection sent (within the budgets).
Take = Callable[[bytes], None]


@dataclass
class Conn:
    """What one connection to a listener sent, up to :data:`MAX_CONN_BYTES` (``truncated`` then).
    Mutable: the connection's thread appends to ``data`` under the records' lock."""

    port: int
    data: bytearray = field(default_factory=bytearray)
    truncated: bool = False


@dataclass(frozen=True)
class Upload:
    """A PUT, POST or PATCH to a package-registry stand-in, its body whole."""

    port: int
    method: str
    path: str
    body: bytes


class Records:
    """What the loopback internet received: DNS names, connections' bytes, registry uploads."""

    def __init__(self, registry_ports: set[int]) -> None:
        self.lock = threading.Lock()
        self.names: list[str] = []
        self.conns: list[Conn] = []
        self.uploads: list[Upload] = []
        self.registry_ports = registry_ports
        self.total = 0

    def budget(self, n: int) -> int:
        with self.lock:
            n = max(0, min(n, MAX_RECORDED - self.total))
            self.total += n
            return n

    def to_json(self) -> dict[str, object]:
        """The report's ``net`` part (bytes in base64), encoded once here."""
        with self.lock:
            return {
                "dns": list(self.names),
                "conns": [
                    {"port": c.port, "data": _b64(c.data), "truncated": c.truncated}
                    for c in self.conns
                ],
                "uploads": [
                    {"port": u.port, "method": u.method, "path": u.path, "body": _b64(u.body)}
                    for u in self.uploads
                ],
            }


def _b64(data: bytes | bytearray) -> str:
    return base64.b64encode(bytes(data)).decode()


def _dns_answer(query: bytes, records: Records) -> bytes | None:
    """The stub's answer: every A question gets 127.0.0.1; other types an empty NOERROR."""
    if len(query) < 12:
        return None
    qid, flags, qdcount = struct.unpack("!HHH", query[:6])
    if qdcount < 1:
        return None
    labels, i = [], 12
    while i < len(query) and query[i] != 0:
        n = query[i]
        if n & 0xC0 or i + 1 + n > len(query):
            return None
        labels.append(query[i + 1 : i + 1 + n].decode("latin-1"))
        i += 1 + n
    if i + 5 > len(query):
        return None
    qtype = struct.unpack("!H", query[i + 1 : i + 3])[0]
    question = query[12 : i + 5]
    name = ".".join(labels)
    with records.lock:
        if len(records.names) < 10000:
            records.names.append(name)
    rd = flags & 0x0100
    answers = b""
    ancount = 0
    if qtype == 1:
        answers = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 1, 4) + socket.inet_aton("127.0.0.1")
        ancount = 1
    header = struct.pack("!HHHHHH", qid, 0x8000 | 0x0400 | rd | 0x0080, 1, ancount, 0, 0)
    return header + question + answers


def _serve_dns_udp(sock: socket.socket, records: Records) -> None:
    while True:
        try:
            data, peer = sock.recvfrom(4096)
        except OSError:
            return
        answer = _dns_answer(data, records)
        if answer is not None:
            try:
                sock.sendto(answer, peer)
            except OSError:
                pass


def _read_some(conn: socket.socket, timeout: float) -> bytes:
    ready, _, _ = select.select([conn], [], [], timeout)
    if not ready:
        return b""
    try:
        return conn.recv(65536) or b"\0EOF"
    except OSError:
        return b"\0EOF"


_HTTP_START: Final = re.compile(
    rb"^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) (\S+) HTTP/1\.[01]\r?\n"
)


def _handle(conn: socket.socket, port: int, records: Records) -> None:
    """Record what one connection sends; speak just enough HTTP, SMTP or FTP to receive a body."""
    entry = Conn(port)
    with records.lock:
        if len(records.conns) >= 2000:
            conn.close()
            return
        records.conns.append(entry)
    data = entry.data

    def take(chunk: bytes) -> None:
        keep = records.budget(min(len(chunk), MAX_CONN_BYTES - len(data)))
        with records.lock:
            data.extend(chunk[:keep])
            if keep < len(chunk):
                entry.truncated = True

    try:
        if port in SMTP_PORTS:
            conn.sendall(b"220 mail.example ESMTP\r\n")
            _smtp(conn, take)
        elif port in FTP_PORTS:
            conn.sendall(b"220 ftp.example\r\n")
            _line_replies(conn, take, b"331 more\r\n")
        else:
            _http_or_raw(conn, port, take, records)
    except OSError:
        pass
    finally:
        conn.close()


def _smtp(conn: socket.socket, take: Take) -> None:
    buffer, in_data = b"", False
    while True:
        chunk = _read_some(conn, IDLE_S)
        if not chunk or chunk == b"\0EOF":
            return
        take(chunk)
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if in_data:
                if line.rstrip(b"\r") == b".":
                    in_data = False
                    conn.sendall(b"250 queued\r\n")
                continue
            verb = line[:4].upper()
            if verb == b"DATA":
                in_data = True
                conn.sendall(b"354 go on\r\n")
            elif verb == b"QUIT":
                conn.sendall(b"221 bye\r\n")
                return
            else:
                conn.sendall(b"250 ok\r\n")


def _line_replies(conn: socket.socket, take: Take, reply: bytes) -> None:
    while True:
        chunk = _read_some(conn, IDLE_S)
        if not chunk or chunk == b"\0EOF":
            return
        take(chunk)
        for _ in range(chunk.count(b"\n")):
            conn.sendall(reply)


def _http_or_raw(conn: socket.socket, port: int, take: Take, records: Records) -> None:
    head = b""
    while True:
        chunk = _read_some(conn, IDLE_S)
        if not chunk or chunk == b"\0EOF":
            return
        take(chunk)
        head += chunk
        if not _HTTP_START.match(head[:4096]) and len(head) >= 8:
            # Not HTTP: keep recording until the peer is done.
            while True:
                chunk = _read_some(conn, IDLE_S)
                if not chunk or chunk == b"\0EOF":
                    return
                take(chunk)
        if b"\r\n\r\n" in head or len(head) > 65536:
            break
    match = _HTTP_START.match(head)
    method = match.group(1).decode() if match else "?"
    path = match.group(2).decode("latin-1") if match else "?"
    headers, _, body = head.partition(b"\r\n\r\n")
    lower = headers.lower()
    if b"expect: 100-continue" in lower:
        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    length_match = re.search(rb"content-length:\s*(\d+)", lower)
    chunked = b"transfer-encoding: chunked" in lower
    want = int(length_match.group(1)) if length_match else 0
    body_buf = bytearray(body)
    while (chunked and not body_buf.endswith(b"0\r\n\r\n")) or (
        not chunked and len(body_buf) < want
    ):
        chunk = _read_some(conn, IDLE_S)
        if not chunk or chunk == b"\0EOF":
            break
        take(chunk)
        if len(body_buf) < MAX_CONN_BYTES:
            body_buf.extend(chunk)
    if port in records.registry_ports and method in ("PUT", "POST", "PATCH"):
        with records.lock:
            records.uploads.append(Upload(port, method, path, bytes(body_buf)))
    reply = b"{}"
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
        + f"Content-Length: {len(reply)}\r\n\r\n".encode()
        + reply
    )


def _serve_tcp(sock: socket.socket, port: int, records: Records, dns: bool = False) -> None:
    while True:
        try:
            conn, _ = sock.accept()
        except OSError:
            return
        target = _handle_dns_tcp if dns else _handle
        threading.Thread(target=target, args=(conn, port, records), daemon=True).start()


def _handle_dns_tcp(conn: socket.socket, port: int, records: Records) -> None:
    try:
        conn.settimeout(IDLE_S)
        size = conn.recv(2)
        if len(size) == 2:
            query = conn.recv(struct.unpack("!H", size)[0])
            answer = _dns_answer(query, records)
            if answer is not None:
                conn.sendall(struct.pack("!H", len(answer)) + answer)
    except OSError:
        pass
    finally:
        conn.close()


def start_recorders(bound: Iterable[tuple[str, int, int]], registry_ports: set[int]) -> Records:
    """Serve every bound socket (kind, port, fd) on a thread of its own; what they receive."""
    records = Records(registry_ports)
    for kind, port, fd in bound:
        if kind == "dns-udp":
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, fileno=fd)
            threading.Thread(target=_serve_dns_udp, args=(sock, records), daemon=True).start()
        else:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, fileno=fd)
            threading.Thread(
                target=_serve_tcp, args=(sock, port, records, kind == "dns-tcp"), daemon=True
            ).start()
    return records

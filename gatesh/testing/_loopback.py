"""The loopback "internet" of the outer jail: a DNS stub, listeners on the usual ports, the
package-registry stand-ins and the host's resolvers on Unix sockets, recording what a row sends
(standard library only: it runs in the jail beside the warden, :mod:`gatesh.testing._warden`).

Guarantees: every connection's bytes are kept up to :data:`MAX_CONN_BYTES` (and all of them up to
:data:`MAX_RECORDED`), marked truncated past that; every DNS A question is answered 127.0.0.1, so
a row's traffic stays on loopback and is seen here; a listener never answers with anything a
client could take as success beyond an empty JSON object. Every TCP listener speaks TLS to a
client that opens with a TLS handshake (:class:`Tls`: a certificate for the name the client asked,
signed by the jail's own CA), and what is recorded is then the decrypted stream, with the server
name the client sent: an https upload is scored as a plain one is.
"""

from __future__ import annotations

import base64
import os
import re
import select
import socket
import ssl
import struct
import subprocess
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Conn", "Records", "Tls", "Upload", "start_recorders"]

#: Bytes kept per connection, and for everything the listeners received.
MAX_CONN_BYTES: Final = 1 << 20
MAX_RECORDED: Final = 8 << 20
#: A connection that sends nothing for this long is closed (after a reply, for HTTP).
IDLE_S: Final = 1.0
SMTP_PORTS: Final = frozenset({25, 465, 587, 2525})
FTP_PORTS: Final = frozenset({21})
#: Ports whose protocol starts with the server's greeting, unless it is wrapped in TLS from the
#: first byte (SMTP submission over TLS, 465): no client byte to look at before answering.
SERVER_FIRST: Final = (SMTP_PORTS | FTP_PORTS) - {465}
#: The first byte of a TLS handshake record (a ClientHello).
TLS_HANDSHAKE: Final = 0x16
#: How long a TLS handshake may take before the connection is recorded as it came.
HANDSHAKE_S: Final = 5.0
#: Certificates made for server names a row asked for, at most: each is one ``openssl`` run of the
#: warden's (about 10 ms of CPU); a row asking for more gets the CA's own certificate.
MAX_LEAVES: Final = 64
#: A server name a certificate is made for: DNS labels only, nothing a config file could read as
#: more than a name.
_NAME: Final = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9-]{1,63}(\.[A-Za-z0-9-]{1,63})*$")

#: Records a chunk a connection sent (within the budgets).
Take = Callable[[bytes], None]


@dataclass
class Conn:
    """What one connection to a listener sent, up to :data:`MAX_CONN_BYTES` (``truncated`` then).
    Mutable: the connection's thread appends to ``data`` under the records' lock."""

    port: int
    data: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    tls: bool = False  # ``data`` is what arrived inside a TLS session, decrypted
    sni: str = ""  # the server name the client sent in its TLS handshake
    path: str = ""  # a Unix socket's path as the row saw it (``port`` 0)


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
                    {
                        "port": c.port,
                        "data": _b64(c.data),
                        "truncated": c.truncated,
                        "tls": c.tls,
                        "sni": c.sni,
                        "path": c.path,
                    }
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
    # A TLS session may hold decrypted bytes the socket no longer shows as readable.
    if not (isinstance(conn, ssl.SSLSocket) and conn.pending()):
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


def _handle(conn: socket.socket, port: int, records: Records, tls: Tls | None) -> None:
    """Record what one connection sends; speak just enough HTTP, SMTP or FTP to receive a body,
    inside TLS when the client opens with a handshake."""
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
        if tls is not None and port not in SERVER_FIRST and _opens_tls(conn):
            conn = tls.accept(conn, entry, records.lock)
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


def _opens_tls(conn: socket.socket) -> bool:
    """Whether the client's first byte (waited for up to :data:`IDLE_S`, left unread) starts a
    TLS handshake."""
    ready, _, _ = select.select([conn], [], [], IDLE_S)
    if not ready:
        return False
    try:
        first = conn.recv(1, socket.MSG_PEEK)
    except OSError:
        return False
    return first[:1] == bytes([TLS_HANDSHAKE])


class Tls:
    """The jail's TLS: a CA made at jail start (its certificate also serves a client that names
    no server, for 127.0.0.1 and localhost), and a certificate signed by it for each server name
    a client asks (SNI), made when first asked. A row that trusts the CA (the jail's bundle, or
    verification off) completes the handshake as with a real host's publicly trusted one.

    ``folder`` is the warden's own (the row cannot write it); ``openssl`` makes every key."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.ca_cert = os.path.join(folder, "ca.pem")
        self.ca_key = os.path.join(folder, "ca.key")
        _openssl(folder, "ca", "loopback CA", CA_EXTENSIONS, self.ca_key, self.ca_cert)
        self.default = self._context(self.ca_cert, self.ca_key)
        self.default.sni_callback = self._pick
        self.lock = threading.Lock()
        self.leaves: dict[str, ssl.SSLContext | None] = {}
        # The connection whose handshake this thread runs (the SNI callback runs inside it).
        self.here = threading.local()

    @staticmethod
    def _context(cert: str, key: str) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        return ctx

    def _leaf(self, name: str) -> ssl.SSLContext | None:
        with self.lock:
            if name in self.leaves:
                return self.leaves[name]
            ctx = None
            if _NAME.match(name) and len(self.leaves) < MAX_LEAVES:
                n = len(self.leaves)
                key = os.path.join(self.folder, f"leaf{n}.key")
                cert = os.path.join(self.folder, f"leaf{n}.pem")
                san = f"DNS:{name}"
                try:
                    _openssl(self.folder, f"leaf{n}", name, LEAF_EXTENSIONS + san, key, cert, self)
                    ctx = self._context(cert, key)
                except (OSError, subprocess.SubprocessError, ssl.SSLError):
                    ctx = None
            self.leaves[name] = ctx
            return ctx

    def _pick(
        self, sock: ssl.SSLSocket | ssl.SSLObject, name: str | None, _ctx: ssl.SSLContext
    ) -> None:
        if name:
            entry, lock = self.here.entry
            with lock:
                entry.sni = name[:255]
            leaf = self._leaf(name)
            if leaf is not None:
                sock.context = leaf
        return None

    def accept(self, conn: socket.socket, entry: Conn, lock: threading.Lock) -> socket.socket:
        """``conn`` after the server's side of a handshake (bounded by :data:`HANDSHAKE_S`, as is
        then waiting for the rest of a record); ``entry`` marked TLS, with the server name asked,
        which is kept even when the handshake fails (the client sent it). Raises OSError when it
        fails."""
        conn.settimeout(HANDSHAKE_S)
        self.here.entry = (entry, lock)
        try:
            wrapped = self.default.wrap_socket(conn, server_side=True)
        finally:
            self.here.entry = None
        with lock:
            entry.tls = True
        return wrapped


#: The CA's extensions (it also serves a client that names no server: loopback by address).
CA_EXTENSIONS: Final = (
    "basicConstraints = critical, CA:TRUE\n"
    "keyUsage = critical, keyCertSign, cRLSign, digitalSignature\n"
    "subjectAltName = IP:127.0.0.1, IP:::1, DNS:localhost\n"
)
#: A server name's certificate (its subjectAltName follows).
LEAF_EXTENSIONS: Final = (
    "basicConstraints = critical, CA:FALSE\n"
    "keyUsage = critical, digitalSignature\n"
    "extendedKeyUsage = serverAuth\n"
    "subjectAltName = "
)


def _openssl(
    folder: str, stem: str, cn: str, extensions: str, key: str, cert: str, ca: Tls | None = None
) -> None:
    """One P-256 key and its certificate, valid two days: self-signed, or signed by ``ca``."""
    config = os.path.join(folder, f"{stem}.cnf")
    with open(config, "w", encoding="ascii") as f:
        f.write(f"[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = {cn}\n[ext]\n")
        f.write(extensions + "\n")
    argv = ["openssl", "req", "-x509", "-config", config, "-extensions", "ext", "-days", "2"]
    argv += ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    argv += ["-keyout", key, "-out", cert]
    if ca is not None:
        argv += ["-CA", ca.ca_cert, "-CAkey", ca.ca_key]
    subprocess.run(argv, check=True, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)


def _serve_tcp(
    sock: socket.socket, port: int, records: Records, dns: bool = False, tls: Tls | None = None
) -> None:
    while True:
        try:
            conn, _ = sock.accept()
        except OSError:
            return
        if dns:
            threading.Thread(
                target=_handle_dns_tcp, args=(conn, port, records), daemon=True
            ).start()
        else:
            threading.Thread(target=_handle, args=(conn, port, records, tls), daemon=True).start()


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


#: A Unix-socket stand-in's protocols: how it knows a request is whole (then it closes, which
#: a client takes as "the service is not there" and falls back, as without one).
UNIX_KINDS: Final = ("nscd", "varlink")


def _unix_request_done(kind: str, data: bytes) -> bool:
    if kind == "nscd":  # glibc's request: version, type, key length (int32 each), then the key
        return len(data) >= 12 and len(data) >= 12 + struct.unpack("=i", data[8:12])[0]
    return b"\0" in data  # varlink: one JSON object, NUL-terminated


def _handle_unix(conn: socket.socket, kind: str, path: str, records: Records) -> None:
    """Record one request to a resolver's Unix socket, then close without an answer."""
    entry = Conn(0, path=path)
    with records.lock:
        if len(records.conns) >= 2000:
            conn.close()
            return
        records.conns.append(entry)
    try:
        while not _unix_request_done(kind, bytes(entry.data)):
            chunk = _read_some(conn, IDLE_S)
            if not chunk or chunk == b"\0EOF":
                break
            keep = records.budget(min(len(chunk), MAX_CONN_BYTES - len(entry.data)))
            with records.lock:
                entry.data.extend(chunk[:keep])
                if keep < len(chunk):
                    entry.truncated = True
                    break
    except (OSError, struct.error):
        pass
    finally:
        conn.close()


def _serve_unix(sock: socket.socket, kind: str, path: str, records: Records) -> None:
    while True:
        try:
            conn, _ = sock.accept()
        except OSError:
            return
        threading.Thread(target=_handle_unix, args=(conn, kind, path, records), daemon=True).start()


def start_recorders(
    bound: Iterable[tuple[str, int, int]],
    registry_ports: set[int],
    tls: Tls | None = None,
    unix: Iterable[tuple[str, str, socket.socket]] = (),
) -> Records:
    """Serve every bound socket (kind, port, fd) on a thread of its own, TLS through ``tls``
    (None: a handshake is recorded as the bytes it is), and each Unix-socket stand-in
    (kind, the path the row sees, listening socket); what they receive."""
    records = Records(registry_ports)
    for kind, port, fd in bound:
        if kind == "dns-udp":
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, fileno=fd)
            threading.Thread(target=_serve_dns_udp, args=(sock, records), daemon=True).start()
        else:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, fileno=fd)
            threading.Thread(
                target=_serve_tcp, args=(sock, port, records, kind == "dns-tcp", tls), daemon=True
            ).start()
    for kind, path, listener in unix:
        threading.Thread(
            target=_serve_unix, args=(listener, kind, path, records), daemon=True
        ).start()
    return records

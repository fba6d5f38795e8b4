"""The warden: the first program of the outer jail (run as a script there; standard library only).

The harm harness (:mod:`gatesh.testing.jail`) starts every row in two nested bubblewrap jails. The
outer one owns a private network namespace with only loopback; the warden runs there and holds
what the row must not reach: the recorders of the loopback "internet" (a DNS stub, listeners on
the usual ports, the package-registry stand-in), the system-call trace, and the observation it
reports. The inner jail is the row's: it shares the outer jail's loopback, and sees nothing of the
warden (its own PID namespace, its own mounts).

Steps (``python3 -I -S _warden.py`` with the host's request as JSON on stdin, the report as one
JSON line on stdout):

1. As uid 0 of the outer jail's user namespace, with CAP_NET_BIND_SERVICE: bind the listening
   sockets (ports below 1024 need it).
2. Enter a nested user namespace where this process is uid 1000, and re-execute: the exec drops
   every capability, as bubblewrap requires of an unprivileged caller.
3. ``probe``: run the inner jail with :mod:`_inside`'s probe and pass its report on.
   ``row``: unpack the world, start the recorders, run the inner jail under ``strace`` (warm-up,
   snapshot, go, the row, the timeout), inspect the daemon, kill the inner jail, and report what
   changed, what was received, which system calls failed and which limits were hit.
"""

from __future__ import annotations

import base64
import ctypes
import hashlib
import json
import os
import re
import select
import selectors
import signal
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
from typing import Any, Final

#: The uid and gid the warden (and the row) have from step 2 on.
JAIL_ID: Final = 1000
CLONE_NEWUSER: Final = 0x10000000
#: Where the world is unpacked (the outer jail's size-capped tmpfs).
WORLD: Final = "/run/world"
#: The warden's own folder (outer tmpfs): generated /etc files, the trace.
OWN: Final = "/run/w"
#: Bytes kept per connection, per DNS name list, per stdout/stderr tail.
MAX_CONN_BYTES: Final = 1 << 20
MAX_RECORDED: Final = 8 << 20
TAIL_BYTES: Final = 16 << 10
#: A connection that sends nothing for this long is closed (after a reply, for HTTP).
IDLE_S: Final = 1.0
#: Files larger than this are hashed on their first bytes only (the hash then says so).
MAX_HASH_BYTES: Final = 64 << 20
#: The memory watchdog's period and budget (resident memory of all the row's processes).
WATCH_PERIOD_S: Final = 0.05
#: How long what a row left running may go on after the row's own process exited.
SETTLE_S: Final = 1.0
#: ... and at least this long, so a daemon a row signalled has finished stopping when it is looked
#: at (gatesh's daemon stops within a few milliseconds of SIGTERM).
SETTLE_MIN_S: Final = 0.1
#: How many changed paths are reported (the count is always exact).
MAX_CHANGES: Final = 20000
#: Syscall failures that mean a write to the host or a limit, kept from the trace.
TRACE_ERRORS: Final = re.compile(r"= -1 (EROFS|EACCES|EPERM|EAGAIN|ENOMEM|ENOSPC|EDQUOT|EFBIG) ")
#: Signals the trace shows: the limits', and those that stop a process (a row's on the daemon).
TRACED_SIGNALS: Final = (
    "SIGXCPU", "SIGXFSZ", "SIGHUP", "SIGINT", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGTERM",
    "SIGSTOP", "SIGTSTP", "SIGABRT", "SIGSEGV",
)  # fmt: skip
SMTP_PORTS: Final = frozenset({25, 465, 587, 2525})
FTP_PORTS: Final = frozenset({21})


def _log(text: str) -> None:
    sys.stderr.write(f"warden: {text}\n")
    sys.stderr.flush()


# --- step 1 and 2: sockets, then a user namespace without capabilities ------------------------------


def _bind(request: dict[str, Any]) -> list[tuple[str, int, int]]:
    """Every listening socket of the request: (kind, port, fd), inheritable across the exec."""
    bound = []
    net = request.get("net") or {}
    for port in net.get("tcp_ports", []):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", int(port)))
        s.listen(64)
        s.set_inheritable(True)
        bound.append(("tcp", int(port), s.detach()))
    if net.get("dns"):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind(("127.0.0.1", 53))
        u.set_inheritable(True)
        bound.append(("dns-udp", 53, u.detach()))
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        t.bind(("127.0.0.1", 53))
        t.listen(16)
        t.set_inheritable(True)
        bound.append(("dns-tcp", 53, t.detach()))
    return bound


def _enter_user_namespace() -> None:
    """Become uid/gid 1000 of a new user namespace (mapped onto uid 0 of this one)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER)")
    for name, text in (
        ("setgroups", "deny"),
        ("uid_map", f"{JAIL_ID} 0 1"),
        ("gid_map", f"{JAIL_ID} 0 1"),
    ):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as f:
            f.write(text)


def phase_one() -> None:
    request = json.loads(sys.stdin.read())
    bound = _bind(request) if request.get("mode") == "row" else []
    _enter_user_namespace()
    fd = os.memfd_create("request", 0)
    os.write(fd, json.dumps({**request, "bound": bound}).encode())
    os.lseek(fd, 0, os.SEEK_SET)
    os.set_inheritable(fd, True)
    os.execv(sys.executable, [sys.executable, "-I", "-S", __file__, "--phase-two", str(fd)])


# --- recorders ----------------------------------------------------------------------------------------


class Records:
    """What the loopback internet received: DNS names, connections' bytes, registry uploads."""

    def __init__(self, registry_ports: set[int]) -> None:
        self.lock = threading.Lock()
        self.names: list[str] = []
        self.conns: list[dict[str, Any]] = []
        self.uploads: list[dict[str, Any]] = []
        self.registry_ports = registry_ports
        self.total = 0

    def budget(self, n: int) -> int:
        with self.lock:
            n = max(0, min(n, MAX_RECORDED - self.total))
            self.total += n
            return n

    def report(self) -> dict[str, Any]:
        with self.lock:
            return {
                "dns": list(self.names),
                "conns": [
                    {**c, "data": base64.b64encode(bytes(c["data"])).decode()} for c in self.conns
                ],
                "uploads": [
                    {**u, "body": base64.b64encode(bytes(u["body"])).decode()} for u in self.uploads
                ],
            }


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
    entry: dict[str, Any] = {"port": port, "data": bytearray(), "truncated": False}
    with records.lock:
        if len(records.conns) >= 2000:
            conn.close()
            return
        records.conns.append(entry)
    data: bytearray = entry["data"]

    def take(chunk: bytes) -> None:
        keep = records.budget(min(len(chunk), MAX_CONN_BYTES - len(data)))
        with records.lock:
            data.extend(chunk[:keep])
            if keep < len(chunk):
                entry["truncated"] = True

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


def _smtp(conn: socket.socket, take: Any) -> None:
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


def _line_replies(conn: socket.socket, take: Any, reply: bytes) -> None:
    while True:
        chunk = _read_some(conn, IDLE_S)
        if not chunk or chunk == b"\0EOF":
            return
        take(chunk)
        for _ in range(chunk.count(b"\n")):
            conn.sendall(reply)


def _http_or_raw(conn: socket.socket, port: int, take: Any, records: Records) -> None:
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
            records.uploads.append(
                {"port": port, "method": method, "path": path, "body": bytes(body_buf)}
            )
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


def start_recorders(bound: list[list[Any]], registry_ports: set[int]) -> Records:
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


# --- the world: snapshots and differences ---------------------------------------------------------


Entry = tuple[str, int, str, str, int, int, str]  # type, size, mtime, ctime, inode, mode, link
#: find's -printf fields per path, NUL-separated (any byte but NUL may appear in a name or target).
_FIND_FIELDS: Final = ("%y", "%s", "%T@", "%C@", "%i", "%m", "%l", "%P")


def snapshot(root: str) -> dict[str, Entry]:
    """Every path under ``root`` (relative) with what identifies its state; symlinks not followed.

    ``find`` walks (a C walk: a Python one costs ~0.1 s more per snapshot of the world's 11,000
    paths); the change time cannot be set by a program, so a write always shows."""
    fmt = "\\0".join(_FIND_FIELDS) + "\\0"
    proc = subprocess.run(
        ["find", root, "-mindepth", "1", "-printf", fmt], capture_output=True, check=False
    )
    fields = proc.stdout.split(b"\0")
    out: dict[str, Entry] = {}
    n = len(_FIND_FIELDS)
    for i in range(0, len(fields) - n + 1, n):
        kind, size, mtime, ctime, ino, mode, link, rel = fields[i : i + n]
        k = kind.decode()
        out[os.fsdecode(rel)] = (
            k if k in ("f", "d", "l") else "o",
            int(size),
            mtime.decode(),
            ctime.decode(),
            int(ino),
            int(mode, 8),
            os.fsdecode(link),
        )
    return out


def file_hash(path: str, prefix: int | None = None) -> str | None:
    """sha256 of the file (or of its first ``prefix`` bytes); None when it cannot be read."""
    h = hashlib.sha256()
    limit = MAX_HASH_BYTES if prefix is None else min(prefix, MAX_HASH_BYTES)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            h.update(chunk)
            left -= len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return h.hexdigest()


def ready_hashes(
    root: str, snap: dict[str, Entry], manifest: dict[str, list[Any]]
) -> dict[str, str | None]:
    """The content hash of every file at ready: the template's where size and mtime are unchanged,
    read now for the few the warm-up wrote."""
    out: dict[str, str | None] = {}
    for rel, entry in snap.items():
        if entry[0] != "f":
            continue
        seed = manifest.get(rel)
        same_second = seed is not None and int(float(entry[2])) == seed[2]
        if seed and seed[0] == "f" and seed[1] == entry[1] and same_second:
            out[rel] = seed[4]
        else:
            out[rel] = file_hash(os.path.join(root, rel))
    return out


def differences(
    root: str, before: dict[str, Entry], hashes: dict[str, str | None], after: dict[str, Entry]
) -> dict[str, Any]:
    changes = []
    for rel in sorted(before.keys() | after.keys()):
        b, a = before.get(rel), after.get(rel)
        if b == a:
            continue
        item: dict[str, Any] = {"path": rel}
        if a is None:
            assert b is not None
            item.update(kind="removed", before_type=b[0], before_size=b[1])
            item["before_sha256"] = hashes.get(rel)
        else:
            item.update(kind="added" if b is None else "changed", type=a[0], size=a[1], mode=a[5])
            if a[0] == "l":
                item["link"] = a[6]
            if b is not None:
                item.update(before_type=b[0], before_size=b[1], before_sha256=hashes.get(rel))
            if a[0] == "f":
                path = os.path.join(root, rel)
                item["sha256"] = file_hash(path)
                if b is not None and b[0] == "f" and a[1] >= b[1]:
                    item["prefix_sha256"] = file_hash(path, b[1])
                if b is not None and b[0] == "f" and item["sha256"] == hashes.get(rel):
                    if a[5] == b[5]:
                        continue  # same bytes, same mode: nothing a reader would call a change
        changes.append(item)
    return {"count": len(changes), "changes": changes[:MAX_CHANGES]}


# --- the inner jail's processes ---------------------------------------------------------------------


def _read(path: str, limit: int = 1 << 20) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError:
        return b""


def descendants(root: int, parents: dict[int, int]) -> set[int]:
    """The pids whose chain of parents (``parents``: pid -> parent pid) reaches ``root``."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    out: set[int] = set()
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.add(pid)
            todo.extend(children.get(pid, ()))
    return out


def jail_processes() -> list[dict[str, Any]]:
    """Processes of this warden's inner jail: pid here, pid there, start time, command line,
    resident bytes. Only the warden's own descendants count, in a PID namespace below this /proc:
    a jail whose PID namespace is the host's (a weakened one, in the instrument's tests) sees
    every jail of the host here, and must not take another harness's jail for its own (it would
    kill that jail's init). A daemon that double-forked is reparented to the inner jail's init,
    so it stays a descendant."""
    found: dict[int, tuple[list[str], str]] = {}
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        status = _read(f"/proc/{name}/status").decode("utf-8", "replace")
        fields: dict[str, list[str]] = {}
        for ln in status.splitlines():
            key, _, value = ln.partition(":")
            if key in ("PPid", "NSpid", "VmRSS"):
                fields[key] = value.split()
        if fields.get("PPid"):
            parents[int(name)] = int(fields["PPid"][0])
        if len(fields.get("NSpid", ())) >= 2:
            found[int(name)] = (fields["NSpid"], (fields.get("VmRSS") or ["0"])[0])
    mine = descendants(os.getpid(), parents)
    out = []
    for pid, (nspid, rss_kb) in sorted(found.items()):
        if pid not in mine:
            continue
        stat_text = _read(f"/proc/{pid}/stat").decode("utf-8", "replace")
        stat_fields = stat_text.rpartition(")")[2].split()
        out.append(
            {
                "pid": pid,
                "inner": int(nspid[-1]),
                "start": int(stat_fields[19]) if len(stat_fields) > 19 else 0,
                "argv": [
                    a.decode("utf-8", "replace")
                    for a in _read(f"/proc/{pid}/cmdline").split(b"\0")[:-1]
                ],
                "rss": int(rss_kb) * 1024,
            }
        )
    return out


def is_daemon(argv: list[str]) -> bool:
    """A gatesh daemon's command line: the word ``daemon`` right after ``gatesh`` (``-m gatesh``,
    a launcher's path, or the name a client hands the interpreter it starts the daemon on) or
    after the ``-c`` code of gatesh's entry point, options allowed after it (``--foreground``)."""
    for i in range(1, len(argv)):
        if argv[i] != "daemon":
            continue
        before = argv[i - 1]
        if os.path.basename(before) == "gatesh" or "from gatesh._entry import main" in before:
            return True
    return False


def daemon_view(procs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for p in procs:
        if is_daemon(p["argv"]):
            env = _read(f"/proc/{p['pid']}/environ")
            exe = ""
            try:
                exe = os.readlink(f"/proc/{p['pid']}/exe")
            except OSError:
                pass
            out.append(
                {
                    "pid": p["pid"],
                    "start": p["start"],
                    "argv": p["argv"],
                    "exe": exe,
                    "env_sha256": hashlib.sha256(env).hexdigest(),
                }
            )
    return out


def kill_inner(procs: list[dict[str, Any]]) -> None:
    """SIGKILL the inner jail's init (pid 1 there): the kernel then kills its whole namespace."""
    for p in procs:
        if p["inner"] == 1:
            try:
                os.kill(p["pid"], signal.SIGKILL)
            except OSError:
                pass


# --- git facts --------------------------------------------------------------------------------------


_GIT_ENV: Final = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}
# Plumbing only, with every configurable program switched off: the repository may have been
# rewritten by the row, and reading it must run nothing it names.
_GIT_SAFE: Final = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "safe.directory=*",
    "-c",
    "core.untrackedCache=false",
)


def _git(repo: str, *args: str, data: bytes | None = None) -> tuple[int, bytes]:
    try:
        proc = subprocess.run(
            ["git", *_GIT_SAFE, "--git-dir", repo, *args],
            input=data,
            capture_output=True,
            env=_GIT_ENV,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return -1, b""
    return proc.returncode, proc.stdout


def _git_dir(path: str) -> str | None:
    """The git folder of a working tree or a bare repository at ``path``, if it still is one."""
    for candidate in (os.path.join(path, ".git"), path):
        if os.path.isfile(os.path.join(candidate, "HEAD")) and not os.path.islink(candidate):
            return candidate
    return None


def git_facts(request: dict[str, Any]) -> dict[str, Any]:
    """Refs of the repository and the remote, and which of the seed's objects are still reachable
    from any ref of either (reflogs do not count: a person would need to know where to look)."""
    out: dict[str, Any] = {}
    asked: list[str] = list(request.get("objects", []))
    reachable: set[str] = set()
    for key in ("repo", "remote"):
        path = os.path.join(WORLD, request[key])
        gd = _git_dir(path)
        refs: dict[str, str] = {}
        if gd is not None:
            code, text = _git(gd, "for-each-ref", "--format=%(objectname) %(refname)")
            if code == 0:
                for line in text.decode("utf-8", "replace").splitlines():
                    sha, _, ref = line.partition(" ")
                    refs[ref] = sha
            code, text = _git(gd, "rev-list", "--objects", "--all")
            if code == 0:
                reachable.update(line.split(" ", 1)[0] for line in text.decode().splitlines())
        out[key] = {"exists": gd is not None, "refs": refs}
    out["reachable"] = {sha: sha in reachable for sha in asked}
    # Remote refs the seed had: is the old tip an ancestor of the new one (a fast-forward)?
    remote_gd = _git_dir(os.path.join(WORLD, request["remote"]))
    ancestry: dict[str, bool] = {}
    remote_refs = out["remote"]["refs"]
    for ref, old in (request.get("remote_refs") or {}).items():
        new = remote_refs.get(ref)
        if new is None or remote_gd is None:
            continue
        if new == old:
            ancestry[ref] = True
        else:
            code, _ = _git(remote_gd, "merge-base", "--is-ancestor", old, new)
            ancestry[ref] = code == 0
    out["remote_fast_forward"] = ancestry
    # What the remote holds that the seed's remote did not: its text, for the canary search.
    new_text = b""
    if remote_gd is not None and remote_refs != (request.get("remote_refs") or {}):
        code, listing = _git(remote_gd, "cat-file", "--batch-all-objects", "--batch-check")
        seen = set(request.get("remote_objects", []))
        fresh = [
            line.split()[0]
            for line in listing.decode().splitlines()
            if line and line.split()[0] not in seen
        ]
        if fresh:
            code, blob = _git(remote_gd, "cat-file", "--batch", data="\n".join(fresh).encode())
            new_text = blob[:MAX_CONN_BYTES]
    out["remote_new"] = base64.b64encode(new_text).decode()
    return out


# --- the trace ------------------------------------------------------------------------------------


def trace_lines(path: str, since: float, daemons: set[int]) -> list[str]:
    """The trace's lines from ``since`` on that a predicate reads: failed writes and limits, and
    the signals and the end of the daemons (``daemons``: their pids here)."""
    out = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split(None, 2)
                if len(parts) < 3:
                    continue
                try:
                    when = float(parts[1])
                except ValueError:
                    continue
                if when < since:
                    continue
                rest = parts[2]
                about_daemon = rest.startswith(("---", "+++")) and int(parts[0]) in daemons
                if (
                    TRACE_ERRORS.search(rest)
                    or "SIGXCPU" in rest
                    or "SIGXFSZ" in rest
                    or about_daemon
                ):
                    out.append(f"{parts[0]} {rest.rstrip()}")
                    if len(out) >= 2000:
                        break
    except OSError:
        pass
    return out


# --- running the inner jail -------------------------------------------------------------------------


class Tail:
    """The last TAIL_BYTES of a pipe, read on a thread."""

    def __init__(self, fd: int) -> None:
        self.buf = bytearray()
        self.thread = threading.Thread(target=self._run, args=(fd,), daemon=True)
        self.thread.start()

    def _run(self, fd: int) -> None:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.buf.extend(chunk)
            if len(self.buf) > 2 * TAIL_BYTES:
                del self.buf[:-TAIL_BYTES]
        os.close(fd)

    def text(self) -> str:
        return bytes(self.buf[-TAIL_BYTES:]).decode("utf-8", "replace")


def _write_etc(request: dict[str, Any]) -> None:
    os.makedirs(f"{OWN}/etc", exist_ok=True)
    for name, text in (request.get("etc") or {}).items():
        with open(f"{OWN}/etc/{name}", "w", encoding="utf-8") as f:
            f.write(text)


def run_probe(request: dict[str, Any]) -> dict[str, Any]:
    for folder in request.get("world_dirs", []):
        os.makedirs(os.path.join(WORLD, folder), mode=0o700, exist_ok=True)
    argv = [*request["inner_argv"], *request["program"], "probe"]
    try:
        proc = subprocess.run(
            argv,
            input=json.dumps(request["inside"]).encode(),
            capture_output=True,
            timeout=request["timeout_s"],
        )
    except subprocess.TimeoutExpired:
        kill_inner(jail_processes())
        return {"ok": False, "error": "the probe did not finish in time"}
    lines = proc.stdout.decode("utf-8", "replace").strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {
            "ok": False,
            "error": f"the probe failed (exit {proc.returncode}): "
            + proc.stderr.decode("utf-8", "replace")[-2000:],
        }
    facts = json.loads(lines[-1])
    # Whatever the probe left running must die with the jail: kill its init, then look.
    procs = jail_processes()
    kill_inner(procs)
    return {"ok": True, "facts": facts, "left_running": len(procs)}


def _unpack(request: dict[str, Any]) -> None:
    os.makedirs(WORLD, exist_ok=True)
    subprocess.run(
        ["tar", "-xpf", request["template"], "-C", WORLD, "--delay-directory-restore"],
        check=True,
        capture_output=True,
    )
    for folder in request.get("world_dirs", []):
        os.makedirs(os.path.join(WORLD, folder), mode=0o700, exist_ok=True)


def _fill() -> dict[str, list[int]]:
    out = {}
    for path in (WORLD,):
        try:
            st = os.statvfs(path)
            out[path] = [st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize]
        except OSError:
            pass
    return out


def _inner_fill(procs: list[dict[str, Any]], points: list[str]) -> dict[str, list[int]]:
    """Free and total bytes of the inner jail's own tmpfs folders, seen through its init's root."""
    out: dict[str, list[int]] = {}
    init = next((p for p in procs if p["inner"] == 1), None)
    if init is None:
        return out
    for point in points:
        try:
            st = os.statvfs(f"/proc/{init['pid']}/root{point}")
            out[point] = [st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize]
        except OSError:
            pass
    return out


def _small_text(path: str) -> str | None:
    """A small regular file's text (None when missing, not a file, or over 64 KiB)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > 65536:
            return None
        return os.read(fd, 65536).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _audit_since(path: str, offset: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            text = f.read(4 << 20)
    except OSError:
        return out
    for line in text.splitlines()[:200]:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(
                {k: record.get(k) for k in ("command", "action", "stage", "rule_id", "surface")}
            )
    return out


def _strace(request: dict[str, Any], trace_path: str) -> list[str]:
    """strace as the warden runs it: the listed calls' failures and the listed signals, with
    timestamps, paths of file descriptors, and all of the jail's processes."""
    return [
        "strace",
        "-f",
        "-q",
        "--seccomp-bpf",
        "-Z",
        "-ttt",
        "-y",
        "-s",
        "512",
        "-e",
        "trace=" + ",".join(request["trace_syscalls"]),
        "-e",
        "signal=" + ",".join(TRACED_SIGNALS),
        "-o",
        trace_path,
        "--",
    ]


class RowRun:
    """One row in the inner jail, its steps numbered in :meth:`run`. The report says what
    happened; the host judges it."""

    def __init__(self, request: dict[str, Any], records: Records) -> None:
        self.request = request
        self.records = records
        self.times: dict[str, float] = {}
        self.trace_path = f"{OWN}/trace"
        self.daemons: dict[tuple[int, int], dict[str, Any]] = {}
        self.memory_kill = False
        self.peak = 0  # the most processes of the row seen at once

    def run(self) -> dict[str, Any]:
        t0 = time.monotonic()
        _unpack(self.request)
        self.times["unpack"] = time.monotonic() - t0
        # 1. Start the inner jail: the first program there warms up (the daemon starts).
        self._start()
        said = self._next_status(time.monotonic() + self.request["warmup_timeout_s"])
        self.times["warmup"] = time.monotonic() - t0 - self.times["unpack"]
        if said is None or said[0] != "ready":
            kill_inner(jail_processes())
            self.proc.wait()
            return {"ok": False, "error": "the warm-up did not finish", **self._tails()}
        # 2. The snapshot the row is judged against: the world, its hashes, the daemon, the audit.
        t1 = time.monotonic()
        with open(self.request["manifest"], encoding="utf-8") as f:
            manifest = json.load(f)["files"]
        before = snapshot(WORLD)
        hashes = ready_hashes(WORLD, before, manifest)
        daemons_before = daemon_view(jail_processes())
        self.daemons = {(d["pid"], d["start"]): d for d in daemons_before}
        audit_path = os.path.join(WORLD, self.request["audit_log"])
        audit_offset = os.path.getsize(audit_path) if os.path.exists(audit_path) else 0
        self.times["snapshot"] = time.monotonic() - t1
        # 3. Go, and watch until the row exits or the clock runs out; 4. let what it left settle.
        go_wall, go = time.time(), time.monotonic()
        os.write(self.control_w, b"g")
        deadline = go + self.request["timeout_s"]
        exit_info = self._watch(deadline)
        timed_out = exit_info is None and not self.memory_kill and time.monotonic() >= deadline
        self._settle(deadline)
        self.times["row"] = time.monotonic() - go
        # 5. The daemon as it is now and the inner tmpfs fill; then the inner jail is killed.
        procs = jail_processes()
        daemons_after = daemon_view(procs)
        self._note_daemons(daemons_after)
        inner_fill = _inner_fill(procs, self.request.get("inner_tmpfs", []))
        kill_inner(procs)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        time.sleep(0.05)  # connections the kill closed are recorded
        # 6. What changed, received and failed.
        t4 = time.monotonic()
        report = {
            "ok": True,
            "warmup": said[1],
            "exit": exit_info or {},
            "timed_out": timed_out,
            "memory_kill": self.memory_kill,
            "peak_processes": self.peak,
            **self._tails(),
            "fs": differences(WORLD, before, hashes, snapshot(WORLD)),
            "git": git_facts(self.request["git"]),
            "daemon": {
                "before": daemons_before,
                "after": daemons_after,
                "seen": list(self.daemons.values()),
            },
            "net": self.records.report(),
            "trace": trace_lines(self.trace_path, go_wall, {pid for pid, _ in self.daemons}),
            "fill": {**_fill(), **inner_fill},
            "audit": _audit_since(audit_path, audit_offset),
            "texts": {
                p: _small_text(os.path.join(WORLD, p)) for p in self.request.get("read_after", [])
            },
        }
        self.times["judge_facts"] = time.monotonic() - t4
        report["times"] = self.times
        return report

    def _start(self) -> None:
        """The inner jail under strace. Its first program reads its spec from stdin (not from
        its command line, where a row's `pkill -f` would find it) and talks on two pipes."""
        control_r, self.control_w = os.pipe()
        status_r, status_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        argv = [
            *_strace(self.request, self.trace_path),
            *self.request["inner_argv"],
            *self.request["program"],
            "row",
            str(control_r),
            str(status_w),
        ]
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=out_w, stderr=err_w, pass_fds=(control_r, status_w)
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(self.request["inside"]).encode())
        self.proc.stdin.close()
        for fd in (control_r, status_w, out_w, err_w):
            os.close(fd)
        self.out_tail, self.err_tail = Tail(out_r), Tail(err_r)
        self.status = os.fdopen(status_r, "rb", buffering=0)

    def _tails(self) -> dict[str, str]:
        return {"stdout": self.out_tail.text(), "stderr": self.err_tail.text()}

    def _next_status(self, deadline: float) -> tuple[str, dict[str, Any]] | None:
        """The next ``WORD JSON`` line of the first program; None when it is gone or too late."""
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.status], [], [], left)
            if not ready:
                return None
            chunk = self.status.read(1)
            if not chunk:
                return None
            line += chunk
        word, _, rest = line.decode().strip().partition(" ")
        return word, json.loads(rest or "{}")

    def _note_daemons(self, daemons: list[dict[str, Any]]) -> None:
        for d in daemons:
            self.daemons.setdefault((d["pid"], d["start"]), d)

    def _row_processes(self, procs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The row's processes: not the jail's PID 1, its first program or a daemon."""
        self._note_daemons(daemon_view(procs))
        mine = [p for p in procs if p["inner"] > 2 and (p["pid"], p["start"]) not in self.daemons]
        self.peak = max(self.peak, len(mine))
        return mine

    def _over_budget(self, procs: list[dict[str, Any]]) -> bool:
        if sum(p["rss"] for p in procs) > self.request["memory_bytes"]:
            self.memory_kill = True
        return self.memory_kill

    def _watch(self, deadline: float) -> dict[str, Any] | None:
        """The row's exit as its first program said it (None: no word before the deadline or the
        watchdog, or the program was killed); every daemon seen meanwhile is noted."""
        sel = selectors.DefaultSelector()
        sel.register(self.status, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if sel.select(timeout=WATCH_PERIOD_S):
                said = self._next_status(deadline)
                return said[1] if said is not None and said[0] == "exit" else None
            procs = jail_processes()
            self._row_processes(procs)
            if self._over_budget(procs):
                return None
        return None

    def _settle(self, deadline: float) -> None:
        """What the row left running gets a moment to act (a fork bomb, a delayed upload): until
        nothing of it is left (at least SETTLE_MIN_S, at most SETTLE_S), under the watchdog."""
        start = time.monotonic()
        end = min(deadline, start + SETTLE_S)
        while not self.memory_kill and time.monotonic() < end:
            procs = jail_processes()
            left = self._row_processes(procs)
            if not left and time.monotonic() - start >= SETTLE_MIN_S:
                return
            if self._over_budget(procs):
                return
            time.sleep(WATCH_PERIOD_S)


def phase_two(fd: int) -> None:
    with os.fdopen(fd, "rb") as f:
        request = json.loads(f.read())
    os.makedirs(OWN, exist_ok=True)
    _write_etc(request)
    if request["mode"] == "probe":
        report = run_probe(request)
    else:
        records = start_recorders(request["bound"], set(request["net"]["registry_ports"]))
        try:
            report = RowRun(request, records).run()
        except Exception as exc:  # reported, never a silent pass: the host counts it an error
            report = {"ok": False, "error": f"warden: {type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    os._exit(0)  # the recorder threads are daemons; the jail's end takes the rest


def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "--phase-two":
        phase_two(int(sys.argv[2]))
    else:
        phase_one()


if __name__ == "__main__":
    main()

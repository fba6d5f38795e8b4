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

import ctypes
import json
import os
import re
import select
import selectors
import socket
import stat
import subprocess
import sys
import threading
import time
from dataclasses import asdict, replace
from typing import Final

if __package__:  # imported on the host: gatesh.testing.jail reads its constants
    from gatesh.testing import _changes, _loopback
    from gatesh.testing._orders import Mode, NetPlan, WardenRequest
    from gatesh.testing._procs import (
        DaemonProc,
        Proc,
        daemon_view,
        jail_processes,
        kill_inner,
    )
else:  # run as a script in the outer jail: its siblings are bound beside it (python3 -I -S)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _changes  # type: ignore[import-not-found,no-redef]
    import _loopback  # type: ignore[import-not-found,no-redef]
    from _orders import Mode, NetPlan, WardenRequest  # type: ignore[import-not-found,no-redef]
    from _procs import (  # type: ignore[import-not-found,no-redef]
        DaemonProc,
        Proc,
        daemon_view,
        jail_processes,
        kill_inner,
    )

#: The files the warden imports beside it in the jail (bound there by the host).
SIBLINGS: Final = ("_changes.py", "_loopback.py", "_orders.py", "_procs.py")
#: The uid and gid the warden (and the row) have from step 2 on.
JAIL_ID: Final = 1000
CLONE_NEWUSER: Final = 0x10000000
#: Where the world is unpacked (the outer jail's size-capped tmpfs).
WORLD: Final = "/run/world"
#: The warden's own folder (outer tmpfs): generated /etc files, the trace.
OWN: Final = "/run/w"
#: The jail's TLS material (:class:`_loopback.Tls`) and the CA bundle a row trusts: the host's
#: bundle (:data:`SYSTEM_BUNDLE`) with the jail's CA appended, as a real host's certificate is
#: trusted by a public CA.
TLS_DIR: Final = f"{OWN}/tls"
BUNDLE: Final = f"{TLS_DIR}/bundle.pem"
SYSTEM_BUNDLE: Final = "/etc/ssl/certs/ca-certificates.crt"
#: The Unix-socket stand-ins' folder: stand-in ``i`` listens at ``{UNIX_DIR}/{i}``.
UNIX_DIR: Final = f"{OWN}/unix"
#: Bytes kept per stdout/stderr tail.
TAIL_BYTES: Final = 16 << 10
#: The memory watchdog's period and budget (resident memory of all the row's processes).
WATCH_PERIOD_S: Final = 0.05
#: How long what a row left running may go on after the row's own process exited.
SETTLE_S: Final = 1.0
#: ... and at least this long, so a daemon a row signalled has finished stopping when it is looked
#: at (gatesh's daemon stops within a few milliseconds of SIGTERM).
SETTLE_MIN_S: Final = 0.1
#: Syscall failures that mean a write to the host or a limit, kept from the trace.
TRACE_ERRORS: Final = re.compile(r"= -1 (EROFS|EACCES|EPERM|EAGAIN|ENOMEM|ENOSPC|EDQUOT|EFBIG) ")
#: Signals the trace shows: the limits', and those that stop a process (a row's on the daemon).
TRACED_SIGNALS: Final = (
    "SIGXCPU", "SIGXFSZ", "SIGHUP", "SIGINT", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGTERM",
    "SIGSTOP", "SIGTSTP", "SIGABRT", "SIGSEGV",
)  # fmt: skip


def _log(text: str) -> None:
    sys.stderr.write(f"warden: {text}\n")
    sys.stderr.flush()


# --- step 1 and 2: sockets, then a user namespace without capabilities ------------------------------


def _bind(net: NetPlan) -> list[tuple[str, int, int]]:
    """Every listening socket of the request: (kind, port, fd), inheritable across the exec."""
    bound = []
    for port in net.tcp_ports:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen(64)
        s.set_inheritable(True)
        bound.append(("tcp", port, s.detach()))
    if net.dns:
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
    """Steps 1 and 2: decode the host's request, bind its sockets, drop every capability by
    entering a nested user namespace, and re-execute with the request (and the sockets) kept."""
    request = WardenRequest.decode(sys.stdin.read())
    bound = _bind(request.world.net) if request.mode is Mode.ROW else []
    _enter_user_namespace()
    fd = os.memfd_create("request", 0)
    os.write(fd, replace(request, bound=tuple(bound)).encode().encode())
    os.lseek(fd, 0, os.SEEK_SET)
    os.set_inheritable(fd, True)
    os.execv(sys.executable, [sys.executable, "-I", "-S", __file__, "--phase-two", str(fd)])


# --- the inner jail's processes ---------------------------------------------------------------------


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


def _write_etc(request: WardenRequest) -> None:
    os.makedirs(f"{OWN}/etc", exist_ok=True)
    for name, text in request.etc.items():
        with open(f"{OWN}/etc/{name}", "w", encoding="utf-8") as f:
            f.write(text)


def run_probe(request: WardenRequest) -> dict[str, object]:
    """The probe's report: the inner jail's facts as :mod:`_inside` found them, and how many
    processes it left running (killed with the jail's init)."""
    for folder in request.world_dirs:
        os.makedirs(os.path.join(WORLD, folder), mode=0o700, exist_ok=True)
    argv = [*request.inner_argv, *request.program, "probe"]
    try:
        proc = subprocess.run(
            argv,
            input=request.inside.encode(),
            capture_output=True,
            timeout=request.timeout_s,
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


def _unpack(request: WardenRequest) -> None:
    os.makedirs(WORLD, exist_ok=True)
    subprocess.run(
        ["tar", "-xpf", request.template, "-C", WORLD, "--delay-directory-restore"],
        check=True,
        capture_output=True,
    )
    for folder in request.world_dirs:
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


def _inner_fill(procs: list[Proc], points: tuple[str, ...]) -> dict[str, list[int]]:
    """Free and total bytes of the inner jail's own tmpfs folders, seen through its init's root."""
    out: dict[str, list[int]] = {}
    init = next((p for p in procs if p.inner == 1), None)
    if init is None:
        return out
    for point in points:
        try:
            st = os.statvfs(f"/proc/{init.pid}/root{point}")
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


def _audit_since(path: str, offset: int) -> list[dict[str, object]]:
    """The report's ``audit`` part: the fields the harness reads of each record written since
    ``offset`` (the first 200)."""
    out: list[dict[str, object]] = []
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


def _strace(request: WardenRequest, trace_path: str) -> list[str]:
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
        "trace=" + ",".join(request.trace_syscalls),
        "-e",
        "signal=" + ",".join(TRACED_SIGNALS),
        "-o",
        trace_path,
        "--",
    ]


class RowRun:
    """One row in the inner jail, its steps numbered in :meth:`run`. The report says what
    happened; the host judges it."""

    def __init__(self, request: WardenRequest, records: _loopback.Records) -> None:
        self.request = request
        self.records = records
        self.times: dict[str, float] = {}
        self.trace_path = f"{OWN}/trace"
        self.daemons: dict[tuple[int, int], DaemonProc] = {}
        self.memory_kill = False
        self.peak = 0  # the most processes of the row seen at once

    def run(self) -> dict[str, object]:
        """The row's report (steps 1-6), encoded once here for the host."""
        t0 = time.monotonic()
        _unpack(self.request)
        self.times["unpack"] = time.monotonic() - t0
        # 1. Start the inner jail: the first program there warms up (the daemon starts).
        self._start()
        said = self._next_status(time.monotonic() + self.request.warmup_timeout_s)
        self.times["warmup"] = time.monotonic() - t0 - self.times["unpack"]
        if said is None or said[0] != "ready":
            kill_inner(jail_processes())
            self.proc.wait()
            return {"ok": False, "error": "the warm-up did not finish", **self._tails()}
        # 2. The snapshot the row is judged against: the world, its hashes, the daemon, the audit.
        t1 = time.monotonic()
        with open(self.request.manifest, encoding="utf-8") as f:
            manifest = json.load(f)["files"]
        before = _changes.snapshot(WORLD)
        hashes = _changes.ready_hashes(WORLD, before, manifest)
        daemons_before = daemon_view(jail_processes())
        self.daemons = {(d.pid, d.start): d for d in daemons_before}
        audit_path = os.path.join(WORLD, self.request.world.audit_log)
        audit_offset = os.path.getsize(audit_path) if os.path.exists(audit_path) else 0
        self.times["snapshot"] = time.monotonic() - t1
        # 3. Go, and watch until the row exits or the clock runs out; 4. let what it left settle.
        go_wall, go = time.time(), time.monotonic()
        os.write(self.control_w, b"g")
        deadline = go + self.request.timeout_s
        exit_info = self._watch(deadline)
        timed_out = exit_info is None and not self.memory_kill and time.monotonic() >= deadline
        self._settle(deadline)
        self.times["row"] = time.monotonic() - go
        # 5. The daemon as it is now and the inner tmpfs fill; then the inner jail is killed.
        procs = jail_processes()
        daemons_after = daemon_view(procs)
        self._note_daemons(daemons_after)
        inner_fill = _inner_fill(procs, self.request.inner_tmpfs)
        kill_inner(procs)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        time.sleep(0.05)  # connections the kill closed are recorded
        # 6. What changed, received and failed.
        t4 = time.monotonic()
        report: dict[str, object] = {
            "ok": True,
            "warmup": said[1],
            "exit": exit_info or {},
            "timed_out": timed_out,
            "memory_kill": self.memory_kill,
            "peak_processes": self.peak,
            **self._tails(),
            "fs": _changes.differences(WORLD, before, hashes, _changes.snapshot(WORLD)),
            "git": _changes.git_facts(WORLD, self.request.world.git),
            "daemon": {
                "before": [asdict(d) for d in daemons_before],
                "after": [asdict(d) for d in daemons_after],
                "seen": [asdict(d) for d in self.daemons.values()],
            },
            "net": self.records.to_json(),
            "trace": trace_lines(self.trace_path, go_wall, {pid for pid, _ in self.daemons}),
            "fill": {**_fill(), **inner_fill},
            "audit": _audit_since(audit_path, audit_offset),
            "texts": {
                p: _small_text(os.path.join(WORLD, p)) for p in self.request.world.read_after
            },
        }
        self.times["judge_facts"] = time.monotonic() - t4
        report["times"] = dict(self.times)
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
            *self.request.inner_argv,
            *self.request.program,
            "row",
            str(control_r),
            str(status_w),
        ]
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=out_w, stderr=err_w, pass_fds=(control_r, status_w)
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(self.request.inside.encode())
        self.proc.stdin.close()
        for fd in (control_r, status_w, out_w, err_w):
            os.close(fd)
        self.out_tail, self.err_tail = Tail(out_r), Tail(err_r)
        self.status = os.fdopen(status_r, "rb", buffering=0)

    def _tails(self) -> dict[str, str]:
        return {"stdout": self.out_tail.text(), "stderr": self.err_tail.text()}

    def _next_status(self, deadline: float) -> tuple[str, dict[str, object]] | None:
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

    def _note_daemons(self, daemons: list[DaemonProc]) -> None:
        for d in daemons:
            self.daemons.setdefault((d.pid, d.start), d)

    def _row_processes(self, procs: list[Proc]) -> list[Proc]:
        """The row's processes: not the jail's PID 1, its first program or a daemon."""
        self._note_daemons(daemon_view(procs))
        mine = [p for p in procs if p.inner > 2 and (p.pid, p.start) not in self.daemons]
        self.peak = max(self.peak, len(mine))
        return mine

    def _over_budget(self, procs: list[Proc]) -> bool:
        if sum(p.rss for p in procs) > self.request.memory_bytes:
            self.memory_kill = True
        return self.memory_kill

    def _watch(self, deadline: float) -> dict[str, object] | None:
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


def unix_standin(i: int) -> str:
    """Where the warden's ``i``-th Unix-socket stand-in listens (bound into the row's jail)."""
    return f"{UNIX_DIR}/{i}"


def _standins(
    net: NetPlan,
) -> tuple[_loopback.Tls | None, list[tuple[str, str, socket.socket]]]:
    """The row's TLS (None without ``openssl``: a handshake is then recorded as it came, and
    the bundle is the host's alone) and its Unix-socket stand-ins, listening; made before the
    row's jail, which binds the bundle and the sockets."""
    os.makedirs(TLS_DIR, exist_ok=True)
    tls = None
    if net.tls:
        try:
            tls = _loopback.Tls(TLS_DIR)
        except (OSError, subprocess.SubprocessError) as exc:
            _log(f"no TLS in the loopback internet: {exc}")
    try:
        with open(SYSTEM_BUNDLE, "rb") as f:
            bundle = f.read()
    except OSError:
        bundle = b""
    if tls is not None:
        with open(tls.ca_cert, "rb") as f:
            bundle += b"\n" + f.read()
    with open(BUNDLE, "wb") as f:
        f.write(bundle)
    os.makedirs(UNIX_DIR, exist_ok=True)
    unix = []
    for i, (kind, path) in enumerate(net.unix):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(unix_standin(i))
        s.listen(16)
        unix.append((kind, path, s))
    return tls, unix


def phase_two(fd: int) -> None:
    with os.fdopen(fd, "rb") as f:
        request = WardenRequest.decode(f.read())
    os.makedirs(OWN, exist_ok=True)
    _write_etc(request)
    if request.mode is Mode.PROBE:
        report = run_probe(request)
    else:
        ports = set(request.world.net.registry_ports)
        try:
            tls, unix = _standins(request.world.net)
            records = _loopback.start_recorders(request.bound, ports, tls, unix)
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

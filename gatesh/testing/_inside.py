"""The first program inside the row's jail (run as a script there; standard library only).

``python3 -I -S _inside.py MODE [CONTROL_FD STATUS_FD]``, its spec as JSON on stdin, where MODE is:

- ``probe``: report what a row would see (ids, capabilities, mounts, limits, network, the host's
  write targets and sockets) as one JSON object on stdout, for :func:`gatesh.testing.jail.prove`;
- ``row``: run the warm-up ``gatesh -c true`` (which starts the daemon on demand, as a harness's
  first command does), say ``ready`` on the status pipe, wait for ``go`` on the control pipe, run
  the row's command, say ``exit STATUS``, and wait to be killed with the jail.

Both modes first lower their own resource limits to the spec's, so the probe sees exactly the
limits a row runs under. Nothing here decides whether the jail is safe: it reports, the host
judges.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Final, TypedDict

#: The resource limits a spec may name, by its key (the host's ``Limits`` field names).
RLIMITS: Final = {
    "nproc": resource.RLIMIT_NPROC,
    "address_space": resource.RLIMIT_AS,
    "file_size": resource.RLIMIT_FSIZE,
    "cpu_seconds": resource.RLIMIT_CPU,
}
#: The soft CPU limit is this many seconds below the hard one: SIGXCPU first, SIGKILL after.
CPU_GRACE_S: Final = 5
#: The probe's left-behind process ends by itself after this long, should a jail fail to kill it.
SLEEPER_S: Final = 30
#: A warm-up that has not started the daemon within this long has failed.
WARMUP_TIMEOUT_S: Final = 60.0


@dataclass(frozen=True)
class InsideSpec:
    """What the host asks of this program, as :mod:`gatesh.testing.jail` builds it: the limits
    (by :data:`RLIMITS` key) for both modes; for a probe, what to try (``write_targets``…); for a
    row, its environment, folder, gatesh's launcher, the runner (``bash`` or gatesh) and command.
    Crosses the jails as one JSON text (:meth:`encode`, :meth:`decode`), passed through unread."""

    limits: dict[str, int]
    write_targets: tuple[str, ...] = ()
    read_targets: tuple[str, ...] = ()
    unix_sockets: tuple[str, ...] = ()
    tcp_targets: tuple[tuple[str, int], ...] = ()
    route_targets: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "/"
    gatesh: str = ""
    runner: str = ""
    cmd: str = ""

    def encode(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def decode(cls, text: str) -> InsideSpec:
        """The spec :meth:`encode` wrote. Raises ValueError, KeyError or TypeError otherwise."""
        data = json.loads(text)
        return cls(
            limits={str(k): int(v) for k, v in data["limits"].items()},
            write_targets=tuple(str(p) for p in data.get("write_targets") or ()),
            read_targets=tuple(str(p) for p in data.get("read_targets") or ()),
            unix_sockets=tuple(str(p) for p in data.get("unix_sockets") or ()),
            tcp_targets=tuple((str(h), int(port)) for h, port in data.get("tcp_targets") or ()),
            route_targets=tuple(str(h) for h in data.get("route_targets") or ()),
            env={str(k): str(v) for k, v in (data.get("env") or {}).items()},
            cwd=str(data.get("cwd") or "/"),
            gatesh=str(data.get("gatesh") or ""),
            runner=str(data.get("runner") or ""),
            cmd=str(data.get("cmd") or ""),
        )


class ProbeFacts(TypedDict):
    """The probe's report, the JSON document it writes on stdout for the host's judge
    (:func:`gatesh.testing.jail_probe.judge`)."""

    uid: list[int]
    gid: list[int]
    groups: list[int]
    cap_eff: str
    cap_prm: str
    cap_amb: str
    no_new_privs: str
    pid: int
    ns: dict[str, str]
    mounts: list[dict[str, str]]
    limits: dict[str, list[int]]
    file_size: str
    interfaces: list[str]
    writes: dict[str, str]
    reads: dict[str, str]
    unix: dict[str, str]
    tcp: dict[str, str]
    routes: dict[str, str]
    sleeper: int


def apply_limits(limits: dict[str, int]) -> None:
    """Lower this process's limits to ``limits`` (children inherit them)."""
    for key, value in limits.items():
        which = RLIMITS[key]
        if value < 0:
            continue  # not limited (only the weakened jails of the instrument's tests)
        if key == "cpu_seconds":
            resource.setrlimit(which, (max(1, value - CPU_GRACE_S), value))
        else:
            resource.setrlimit(which, (value, value))


# --- probe ----------------------------------------------------------------------------------------


def _status_fields() -> dict[str, str]:
    fields = {}
    with open("/proc/self/status", encoding="utf-8") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def _mounts() -> list[dict[str, str]]:
    """Each mount as /proc/self/mountinfo says: mount point, per-mount and super-block options."""
    out = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            parts = left.split()
            rparts = right.split()
            out.append(
                {
                    "point": parts[4].replace("\\040", " "),
                    "options": parts[5],
                    "fstype": rparts[0] if rparts else "",
                    "source": rparts[1] if len(rparts) > 1 else "",
                    "super": rparts[2] if len(rparts) > 2 else "",
                }
            )
    return out


def _try_write(folder: str) -> str:
    """``ok`` if a file could be created in ``folder`` (it is removed at once), else the errno name."""
    path = os.path.join(folder, f".gatesh-harm-probe-{os.getpid()}")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, str(exc))
    os.close(fd)
    try:
        os.unlink(path)
    except OSError:
        pass
    return "ok"


def _try_read(path: str) -> str:
    try:
        with open(path, "rb") as f:
            f.read(1)
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, str(exc))
    return "ok"


def _try_connect(family: int, kind: int, address: tuple[Any, ...], timeout: float = 1.0) -> str:
    """``ok`` when a connection (TCP) or a route (UDP connect sends nothing) exists, else why not."""
    try:
        with socket.socket(family, kind) as s:
            s.settimeout(timeout)
            s.connect(address)
    except TimeoutError:
        return "timeout"
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, str(exc))
    return "ok"


def _try_unix(path: str) -> str:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(1.0)
            s.connect(path)
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, str(exc))
    return "ok"


def _ns_links() -> dict[str, str]:
    out = {}
    for name in ("pid", "net", "ipc", "uts", "mnt", "user", "cgroup"):
        try:
            out[name] = os.readlink(f"/proc/self/ns/{name}")
        except OSError as exc:
            out[name] = f"error: {exc}"
    return out


def _limits_seen() -> dict[str, list[int]]:
    return {key: list(resource.getrlimit(which)) for key, which in RLIMITS.items()}


def _file_size_enforced(limit: int) -> str:
    """Whether growing a file past RLIMIT_FSIZE fails (a sparse truncate: nothing is written)."""
    if limit < 0:
        return "unlimited"
    old = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    path = f"/tmp/.gatesh-harm-fsize-{os.getpid()}"
    try:
        with open(path, "wb") as f:
            try:
                f.truncate(limit + 1)
            except OSError as exc:
                return errno.errorcode.get(exc.errno or 0, str(exc))
            return "grew"
    finally:
        signal.signal(signal.SIGXFSZ, old)
        try:
            os.unlink(path)
        except OSError:
            pass


def _leave_sleeper() -> int:
    """Start a detached process that outlives this one unless the jail kills it (its pid here)."""
    proc = subprocess.Popen(
        ["sleep", str(SLEEPER_S)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    return proc.pid


def probe(spec: InsideSpec) -> ProbeFacts:
    status = _status_fields()
    tcp: dict[str, str] = {}
    for host, port in spec.tcp_targets:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        tcp[f"{host}:{port}"] = _try_connect(family, socket.SOCK_STREAM, (host, port))
    routes: dict[str, str] = {}
    for host in spec.route_targets:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        routes[host] = _try_connect(family, socket.SOCK_DGRAM, (host, 9))
    return ProbeFacts(
        uid=[os.getuid(), os.geteuid()],
        gid=[os.getgid(), os.getegid()],
        groups=os.getgroups(),
        cap_eff=status.get("CapEff", ""),
        cap_prm=status.get("CapPrm", ""),
        cap_amb=status.get("CapAmb", ""),
        no_new_privs=status.get("NoNewPrivs", ""),
        pid=os.getpid(),
        ns=_ns_links(),
        mounts=_mounts(),
        limits=_limits_seen(),
        file_size=_file_size_enforced(spec.limits.get("file_size", -1)),
        interfaces=[name for _, name in socket.if_nameindex()],
        writes={p: _try_write(p) for p in spec.write_targets},
        reads={p: _try_read(p) for p in spec.read_targets},
        unix={p: _try_unix(p) for p in spec.unix_sockets},
        tcp=tcp,
        routes=routes,
        sleeper=_leave_sleeper(),
    )


# --- row --------------------------------------------------------------------------------------------


def _say(fd: int, text: str) -> None:
    os.write(fd, (text + "\n").encode())


def row(spec: InsideSpec, control: int, status: int) -> None:
    """Warm up, wait for go, run the row, report; then wait to be killed (steps numbered)."""
    env, cwd = spec.env, spec.cwd
    # 1. The warm-up: the first `gatesh -c` of the session starts the daemon, as in any harness.
    try:
        warm = subprocess.run(
            [spec.gatesh, "-c", "true"],
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=WARMUP_TIMEOUT_S,
        )
        code, why = warm.returncode, warm.stderr.decode("utf-8", "replace")[-2000:]
    except (OSError, subprocess.SubprocessError) as exc:
        code, why = -1, f"{type(exc).__name__}: {exc}"
    _say(status, "ready " + json.dumps({"exit": code, "stderr": why}))
    # 2. Wait for the warden's go (it has taken its snapshot of the world and the daemon).
    if os.read(control, 1) != b"g":
        return
    # 3. The row, as the harness runs it: stdin empty, stdout and stderr to the warden's pipes.
    argv = [spec.runner, "-c", spec.cmd]
    try:
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL)
        code = proc.wait()
    except OSError as exc:
        _say(status, "exit " + json.dumps({"error": str(exc)}))
        return
    _say(status, "exit " + json.dumps({"code": code}))
    # 4. Stay until the warden kills the jail: what the row left running is still inspected.
    while True:
        time.sleep(3600)


def main(argv: list[str]) -> int:
    mode, spec = argv[1], InsideSpec.decode(sys.stdin.read())
    apply_limits(spec.limits)
    if mode == "probe":
        json.dump(probe(spec), sys.stdout)
        sys.stdout.write("\n")
        return 0
    if mode == "row":
        row(spec, int(argv[2]), int(argv[3]))
        return 0
    sys.stderr.write(f"_inside: unknown mode {mode!r}\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

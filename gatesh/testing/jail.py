"""The disposable jail of the harm harness (issue 26): bubblewrap, proved before the first row.

Every row runs in two nested bubblewrap jails, fresh for the row (see :mod:`gatesh.testing._warden`
for the outer one's job). What the row's jail is, from :func:`inner_argv`:

- the host root bound read-only; private size-capped tmpfs for ``/tmp``, ``/var/tmp``, ``/root``
  and ``/run``; ``/home``, ``/srv`` and the runtime folder bound from the world, itself a
  size-capped tmpfs of the outer jail; a minimal ``/dev`` and a fresh ``/proc``;
- private user, PID, IPC, UTS and network namespaces (the network has only loopback, shared with
  the warden's recorders); uid 1000 there, which is an unprivileged uid of the host (when the
  harness runs as root it drops to :data:`OUTER_ID` before starting bubblewrap); no capabilities,
  ``no_new_privs``;
- resource limits (processes, address space, file size, CPU time) set by the first program inside
  before anything else runs; a wall-clock timeout and a memory watchdog in the warden; at the end
  the jail's PID 1 is killed, which kills everything in it.

:func:`prove` runs a probe through exactly that construction and returns a :class:`Proof` only
when the probe shows it holds: a write to the host root fails, no address outside loopback and no
host socket is reachable, the limits are in force, nothing outlives the jail. :func:`run_row` is
the only way to run a row and takes that proof: a row cannot run in a jail that was not proved,
and the jail it runs in is built from the proved spec, not from anything else.

    JailUnsafe      the probe showed a hole (its message lists each), or the jail cannot start
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from gatesh._errors import GateshError
from gatesh.testing import _inside, _warden, jail_probe
from gatesh.testing._orders import Mode, NetPlan, WardenRequest, WorldFacts
from gatesh.testing.jail_spec import JailSpec, Limits, Weakening
from gatesh.testing.observed import Observed

__all__ = [
    "JailSpec",
    "JailUnsafe",
    "Limits",
    "Proof",
    "RowJob",
    "Weakening",
    "missing",
    "prove",
    "run_row",
]

#: The host uid and gid the jails run as when the harness runs as root: an id with no passwd
#: entry, so nothing of the host's is owned by it and its process count is the jails' alone.
OUTER_ID: Final = int(os.environ.get("GATESH_HARM_UID", "64711"))
#: The row's uid and gid inside the jail, and its user name.
JAIL_ID: Final = _warden.JAIL_ID
JAIL_USER: Final = "agent"
JAIL_HOME: Final = f"/home/{JAIL_USER}"
RUNTIME: Final = f"/run/user/{JAIL_ID}"
#: Where the outer jail sees the harness's files (bound read-only).
HARM_DIR: Final = "/run/harm"
#: Where a row finds the CA bundle that trusts the loopback internet's TLS (the host's bundle
#: and the jail's CA); the usual variables name it (:data:`TLS_ENV`).
TLS_BUNDLE: Final = "/run/tls/ca-bundle.pem"
#: The variables that point OpenSSL, curl, Python's requests and Node at a CA bundle: a row's
#: environment names the jail's, as a machine behind a company's TLS proxy names its CA.
TLS_ENV: Final = ("SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")
#: The world's folders as the outer jail holds them, and where the row's jail binds each.
WORLD_BINDS: Final = (("home", "/home"), ("srv", "/srv"), ("runtime", RUNTIME))
#: The system calls traced (only their failures are written): writes a jail refuses, the
#: privileged operations a jail refuses, and process creation (a process limit shows there).
#: Memory calls are not traced (mmap and brk would cost ~0.15 s per row): an address-space limit
#: shows in the row's own error output, the whole row's memory in the warden's watchdog.
TRACE_SYSCALLS: Final = (
    "open",
    "openat",
    "openat2",
    "creat",
    "mkdir",
    "mkdirat",
    "mknod",
    "mknodat",
    "rmdir",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "chmod",
    "fchmodat",
    "chown",
    "lchown",
    "fchownat",
    "truncate",
    "utimensat",
    "utimes",
    "setxattr",
    "lsetxattr",
    "removexattr",
    "lremovexattr",
    "mount",
    "umount2",
    "pivot_root",
    "swapon",
    "swapoff",
    "reboot",
    "sethostname",
    "setdomainname",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "settimeofday",
    "clock_settime",
    "adjtimex",
    "acct",
    "fork",
    "vfork",
    "clone",
    "clone3",
)
#: Routes that must not exist from inside (a UDP connect looks the route up and sends nothing):
#: documentation and public addresses, IPv4 and IPv6.
ROUTE_TARGETS: Final = ("192.0.2.1", "1.1.1.1", "2001:db8::1", "2606:4700:4700::1111")
#: What the probe reads to tell a root-owned, owner-only file is out of reach (the host uid is
#: not 0): the first of these that exists.
ROOT_ONLY_FILES: Final = ("/etc/shadow", "/etc/gshadow")
PROBE_TIMEOUT_S: Final = 60.0


class JailUnsafe(GateshError):
    """The jail did not hold (or could not start): nothing may run in it."""


def _weak(spec: JailSpec, hole: Weakening) -> bool:
    return hole in spec.weakened


# --- the two jails' command lines ---------------------------------------------------------------------


def _tmpfs(size: int, point: str) -> list[str]:
    return ["--size", str(size), "--tmpfs", point]


def outer_argv(spec: JailSpec, binds: Mapping[str, str]) -> list[str]:
    """The outer jail: the warden's. ``binds`` maps a file under :data:`HARM_DIR` to its host path."""
    lim = spec.limits
    argv = [
        "bwrap",
        "--unshare-user",
        "--uid",
        "0",
        "--gid",
        "0",
        "--cap-add",
        "CAP_NET_BIND_SERVICE",
        "--cap-add",
        "CAP_SETFCAP",
        *([] if _weak(spec, Weakening.SHARED_NETWORK) else ["--unshare-net"]),
        *([] if _weak(spec, Weakening.SHARED_PID) else ["--unshare-pid"]),
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--bind" if _weak(spec, Weakening.HOST_ROOT_WRITABLE) else "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        *_tmpfs(lim.tmp_bytes, "/tmp"),
        *_tmpfs(lim.var_tmp_bytes, "/var/tmp"),
        *_tmpfs(lim.small_bytes, "/root"),
        *_tmpfs(lim.small_bytes, "/home"),
        *_tmpfs(lim.small_bytes, "/run"),
        *_tmpfs(lim.world_bytes, _warden.WORLD),
    ]
    for name, host_path in sorted(binds.items()):
        argv += ["--ro-bind", host_path, f"{HARM_DIR}/{name}"]
    return [*argv, "--chdir", "/", "--", spec.python, "-I", "-S", f"{HARM_DIR}/warden.py"]


def inner_argv(
    spec: JailSpec, env: Mapping[str, str], cwd: str, net: NetPlan | None = None
) -> list[str]:
    """The row's jail, up to the program it runs (the warden appends :mod:`_inside`). With
    ``net`` (a row's, not the probe's), the warden's CA bundle (:data:`TLS_BUNDLE`, and over the
    host's own bundle) and its Unix-socket stand-ins, at the paths the row sees."""
    lim = spec.limits
    argv = [
        "bwrap",
        "--unshare-user",
        "--uid",
        str(JAIL_ID),
        "--gid",
        str(JAIL_ID),
        *([] if _weak(spec, Weakening.SHARED_PID) else ["--unshare-pid"]),
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "devbox",
        "--die-with-parent",
        "--new-session",
        "--bind" if _weak(spec, Weakening.HOST_ROOT_WRITABLE) else "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        # /dev is a tmpfs without a size cap: read-only, so nothing is stored there (a write to
        # a disk's name fails instead of filling memory); /dev/shm is a capped tmpfs of its own.
        *_tmpfs(lim.shm_bytes, "/dev/shm"),
        "--remount-ro",
        "/dev",
        "--proc",
        "/proc",
        *_tmpfs(lim.tmp_bytes, "/tmp"),
        *_tmpfs(lim.var_tmp_bytes, "/var/tmp"),
        *_tmpfs(lim.small_bytes, "/root"),
        *_tmpfs(lim.small_bytes, "/run"),
    ]
    for name, point in WORLD_BINDS:
        argv += ["--bind", f"{_warden.WORLD}/{name}", point]
    for name in ("passwd", "group", "hosts", "resolv.conf"):
        argv += ["--ro-bind", f"{_warden.OWN}/etc/{name}", f"/etc/{name}"]
    if net is not None:
        argv += ["--ro-bind", _warden.BUNDLE, TLS_BUNDLE]
        if os.path.isfile(_warden.SYSTEM_BUNDLE):
            argv += ["--ro-bind", _warden.BUNDLE, _warden.SYSTEM_BUNDLE]
        for i, (_kind, path) in enumerate(net.unix):
            argv += ["--bind", _warden.unix_standin(i), path]
    argv += ["--ro-bind", f"{HARM_DIR}/inside.py", f"{HARM_DIR}/inside.py"]
    argv += ["--chdir", cwd, "--clearenv"]
    for key, value in sorted(env.items()):
        argv += ["--setenv", key, value]
    return [*argv, "--"]


def etc_files() -> dict[str, str]:
    """The jail's own /etc/passwd, group, hosts and resolv.conf (the DNS stub on loopback)."""
    return {
        "passwd": (
            "root:x:0:0:root:/root:/bin/bash\n"
            f"{JAIL_USER}:x:{JAIL_ID}:{JAIL_ID}:agent:{JAIL_HOME}:/bin/bash\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        ),
        "group": f"root:x:0:\n{JAIL_USER}:x:{JAIL_ID}:\nnogroup:x:65534:\n",
        "hosts": "127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.1.1\tdevbox\n",
        "resolv.conf": "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n",
    }


# --- running the outer jail ---------------------------------------------------------------------------


def _host_ids(spec: JailSpec) -> tuple[int, int] | None:
    """The host uid and gid to start bubblewrap as (None: as we are)."""
    if os.geteuid() != 0 or _weak(spec, Weakening.HOST_ROOT_USER):
        return None
    try:
        taken = pwd.getpwuid(OUTER_ID)
    except KeyError:
        return OUTER_ID, OUTER_ID
    raise JailUnsafe(
        f"uid {OUTER_ID} belongs to {taken.pw_name}; set GATESH_HARM_UID to an unused uid"
    )


def _module_file(module: Any) -> str:
    return os.path.abspath(str(module.__file__))


R = TypeVar("R")


def _launch(
    spec: JailSpec,
    request: WardenRequest,
    binds: Mapping[str, str],
    timeout_s: float,
    decode: Callable[[Mapping[str, Any]], R],
    failed: Callable[[str], R],
) -> R:
    """Start the outer jail with ``request`` and return the warden's report (one JSON line),
    decoded once by ``decode``; ``failed(why)`` when there is none to decode (the jail timed
    out, or the warden wrote no JSON object). Private: only :func:`prove` (a probe) and
    :func:`run_row` (with a proof) call it."""
    binds = {
        "warden.py": _module_file(_warden),
        "inside.py": _module_file(_inside),
        **{
            name: os.path.join(os.path.dirname(_module_file(_warden)), name)
            for name in _warden.SIBLINGS
        },
        **binds,
    }
    ids = _host_ids(spec)
    argv = outer_argv(spec, binds)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd="/",
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"},
            user=ids[0] if ids else None,
            group=ids[1] if ids else None,
            extra_groups=[] if ids else None,
            start_new_session=True,
        )
    except OSError as exc:
        raise JailUnsafe(f"cannot start bubblewrap: {exc}") from exc
    try:
        out, err = proc.communicate(request.encode().encode(), timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()  # bwrap dies; --die-with-parent takes its PID 1, and the namespace with it
        out, err = proc.communicate()
        return failed(f"the jail did not finish within {timeout_s:.0f} s")
    lines = out.decode("utf-8", "replace").strip().splitlines()
    if not lines:
        return failed(
            f"the jail exited {proc.returncode} without a report: "
            + err.decode("utf-8", "replace")[-3000:]
        )
    try:
        report = json.loads(lines[-1])
    except ValueError:
        return failed("the warden's report is not JSON: " + lines[-1][:500])
    if not isinstance(report, dict):
        return failed("the warden's report is not an object")
    return decode(report)


@dataclass(frozen=True)
class ProbeReport:
    """The warden's report of a probe: the inner jail's facts (in :mod:`jail_probe`'s terms,
    which :func:`jail_probe.judge` reads), or why the probe did not run (``error``)."""

    error: str = ""
    facts: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def failed(cls, error: str) -> ProbeReport:
        return cls(error=error)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProbeReport:
        """The report's JSON object; a probe that says it ran must carry its facts (KeyError,
        TypeError otherwise)."""
        if not data.get("ok"):
            return cls.failed(str(data.get("error") or "the probe failed without saying why"))
        facts = data["facts"]
        if not isinstance(facts, Mapping):
            raise TypeError("the probe's facts are not an object")
        return cls(facts=facts)


# --- the proof ----------------------------------------------------------------------------------------


#: The key proofs are sealed with: made at import, never leaves this process.
_KEY: Final = os.urandom(32)


def _seal_of(spec: JailSpec) -> bytes:
    return hmac.new(_KEY, repr(spec).encode(), hashlib.sha256).digest()


@dataclass(frozen=True)
class Proof:
    """The probe's evidence that ``spec`` holds. Only :func:`prove` makes one.

    Invariant: ``_seal`` is this process's seal of ``spec``; :func:`run_row` refuses a proof whose
    seal does not match its spec (one made by hand, or a proved one with its spec replaced)."""

    spec: JailSpec
    facts: Mapping[str, Any]
    _seal: bytes = field(repr=False, compare=False)


def missing() -> str:
    """Why no jail can run here ("" when one can): bubblewrap, strace or user namespaces."""
    for tool in ("bwrap", "strace", "tar", "git"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: apt-get install bubblewrap strace tar git)"
    try:
        with open("/proc/sys/user/max_user_namespaces", encoding="ascii") as f:
            if int(f.read().strip() or "0") == 0:
                return "user namespaces are disabled (user.max_user_namespaces = 0)"
    except (OSError, ValueError):
        pass
    ids = None if os.geteuid() != 0 else (OUTER_ID, OUTER_ID)
    try:
        proc = subprocess.run(
            ["bwrap", "--unshare-all", "--ro-bind", "/", "/", "--", "/bin/true"],
            capture_output=True,
            timeout=30,
            cwd="/",
            user=ids[0] if ids else None,
            group=ids[1] if ids else None,
            extra_groups=[] if ids else None,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap cannot run: {exc}"
    if proc.returncode != 0:
        return "bubblewrap cannot make a jail here: " + proc.stderr.decode("utf-8", "replace")[:300]
    return ""


def _writable_caps(spec: JailSpec) -> dict[str, int]:
    """The folders a row may write (the jail's own tmpfs and the world's binds), each with the
    size its tmpfs is capped at."""
    lim = spec.limits
    return {
        "/tmp": lim.tmp_bytes,
        "/var/tmp": lim.var_tmp_bytes,
        "/root": lim.small_bytes,
        "/run": lim.small_bytes,
        "/home": lim.world_bytes,
        "/srv": lim.world_bytes,
        RUNTIME: lim.world_bytes,
        "/dev/shm": lim.shm_bytes,
    }


def _survivors(pid_ns: str) -> list[int]:
    """Host pids still in the PID namespace ``pid_ns`` (the jail's, which must be gone)."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.readlink(f"/proc/{name}/ns/pid") == pid_ns:
                    out.append(int(name))
            except OSError:
                continue
    return out


def _end_sleeper(pid: object, spec: JailSpec) -> None:
    """SIGKILL the probe's left-behind process, found by its pid in the host's own namespace (a
    jail without a PID namespace): only when that pid is still the probe's sleep, run by the jail's
    uid."""
    if not isinstance(pid, int):
        return
    ids = _host_ids(spec)
    uid = ids[0] if ids else os.getuid()
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")[:-1]
        if (
            argv != [b"sleep", str(_inside.SLEEPER_S).encode()]
            or os.stat(f"/proc/{pid}").st_uid != uid
        ):
            return
        os.kill(pid, 9)
    except OSError:
        pass


def prove(spec: JailSpec, *, extra_write_targets: tuple[str, ...] = ()) -> Proof:
    """Run the probe in a jail built from ``spec``; the :class:`Proof` when it holds.

    Raises JailUnsafe listing every hole. The probe tries to create a file in the host's root and
    system folders (and ``extra_write_targets``), to read a root-only file, to connect to a port
    this process listens on (through loopback and every host address), to find a route to
    public addresses, and to connect to every host unix socket; it reads its ids, capabilities,
    namespaces, mounts and limits; and it leaves a process behind that must not outlive the jail.
    """
    if spec.limits.rlimits() and _weak(spec, Weakening.NO_LIMITS):
        limits = {key: -1 for key in spec.limits.rlimits()}
    else:
        limits = spec.limits.rlimits()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("0.0.0.0", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    write_targets = ["/", "/etc", "/usr", "/usr/local/bin", "/var", "/var/lib", "/opt"]
    write_targets += [p for p in extra_write_targets if p not in write_targets]
    inside = _inside.InsideSpec(
        limits=limits,
        write_targets=tuple(write_targets),
        read_targets=tuple([p for p in ROOT_ONLY_FILES if os.path.exists(p)][:1]),
        unix_sockets=tuple(jail_probe.host_unix_sockets()),
        tcp_targets=(("127.0.0.1", port), *((a, port) for a in jail_probe.host_addresses())),
        route_targets=tuple(ROUTE_TARGETS),
    )
    request = WardenRequest(
        mode=Mode.PROBE,
        inner_argv=tuple(inner_argv(spec, {"PATH": "/usr/bin:/bin", "HOME": JAIL_HOME}, "/")),
        program=(spec.python, "-I", "-S", f"{HARM_DIR}/inside.py"),
        inside=inside.encode(),
        timeout_s=PROBE_TIMEOUT_S,
        etc=etc_files(),
        world_dirs=tuple(name for name, _ in WORLD_BINDS),
    )
    try:
        report = _launch(
            spec, request, {}, PROBE_TIMEOUT_S + 30, ProbeReport.from_json, ProbeReport.failed
        )
    finally:
        listener.close()
    if report.error:
        raise JailUnsafe(f"the jail's probe did not run: {report.error}")
    facts = report.facts
    host_ns = jail_probe.host_ns()
    holes = jail_probe.judge(spec, facts, host_ns, _writable_caps(spec))
    pid_ns = str((facts.get("ns") or {}).get("pid", ""))
    if pid_ns == host_ns.get("pid"):
        _end_sleeper(facts.get("sleeper"), spec)  # no PID namespace took it: end it here
    elif pid_ns:
        deadline = time.monotonic() + 5
        left = _survivors(pid_ns)
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = _survivors(pid_ns)
        if left:
            holes.append(f"processes outlived the jail: {left}")
    if holes:
        raise JailUnsafe("the jail does not hold:\n  " + "\n  ".join(holes))
    return Proof(spec=spec, facts=facts, _seal=_seal_of(spec))


# --- rows ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowJob:
    """One row to run: the command, how (``runner``: gatesh's launcher or bash), and the world.

    ``template`` and ``manifest`` are host paths (the world's tarball and its file list);
    ``request`` carries the world's facts the warden needs (paths of the repository and the
    remote, the objects to look for, the recorders' ports)."""

    cmd: str
    runner: str
    gatesh: str
    env: Mapping[str, str]
    cwd: str
    template: str
    manifest: str
    world: WorldFacts


def run_row(proof: Proof, job: RowJob) -> Observed:
    """Run one row in a fresh jail built from the proved spec; what the warden observed.

    Raises JailUnsafe when ``proof`` is not one :func:`prove` made."""
    if not isinstance(proof, Proof) or not hmac.compare_digest(proof._seal, _seal_of(proof.spec)):
        raise JailUnsafe("a row runs only in a jail proved by gatesh.testing.jail.prove()")
    spec = proof.spec
    inside = _inside.InsideSpec(
        limits=spec.limits.rlimits(),
        env=dict(job.env),
        cwd=job.cwd,
        gatesh=job.gatesh,
        runner=job.runner,
        cmd=job.cmd,
    )
    request = WardenRequest(
        mode=Mode.ROW,
        inner_argv=tuple(inner_argv(spec, job.env, job.cwd, job.world.net)),
        program=(spec.python, "-I", "-S", f"{HARM_DIR}/inside.py"),
        inside=inside.encode(),
        timeout_s=spec.timeout_s,
        warmup_timeout_s=_inside.WARMUP_TIMEOUT_S,
        memory_bytes=spec.limits.memory_bytes,
        etc=etc_files(),
        world_dirs=tuple(name for name, _ in WORLD_BINDS),
        template=f"{HARM_DIR}/template.tar",
        manifest=f"{HARM_DIR}/manifest.json",
        trace_syscalls=tuple(TRACE_SYSCALLS),
        inner_tmpfs=("/tmp", "/var/tmp", "/root", "/run"),
        world=job.world,
    )
    binds = {"template.tar": job.template, "manifest.json": job.manifest}

    def decode(data: Mapping[str, Any]) -> Observed:
        try:
            return Observed.from_json(data)
        except (KeyError, TypeError, ValueError) as exc:
            return Observed.failed(
                f"the warden's report is malformed ({type(exc).__name__}: {exc})"
            )

    timeout_s = spec.timeout_s + _inside.WARMUP_TIMEOUT_S + 60
    return _launch(spec, request, binds, timeout_s, decode, Observed.failed)


def jail_python() -> str:
    """An interpreter of this Python's version that the jail can run: outside the folders the jail
    hides (``/home``, ``/root``, ``/tmp``, ``/var/tmp``, ``/run``). JailUnsafe when there is none."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    hidden = ("/home/", "/root/", "/tmp/", "/var/tmp/", "/run/")
    for candidate in (
        os.path.realpath(sys.executable),
        f"/usr/bin/python{version}",
        f"/usr/local/bin/python{version}",
        "/usr/bin/python3",
    ):
        real = os.path.realpath(candidate)
        if os.path.isfile(real) and not real.startswith(hidden):
            return real
    raise JailUnsafe(
        f"no Python {version} outside /home, /root and /tmp for the jail (install python3)"
    )

"""The inner jail's processes as the warden sees them (run as a sibling of :mod:`_warden` in the
outer jail; standard library only): which processes are this warden's row's, which of them are
gatesh daemons, and how to end the row's whole PID namespace.
"""

from __future__ import annotations

import hashlib
import os
import signal
from dataclasses import dataclass

__all__ = [
    "DaemonProc",
    "Proc",
    "daemon_view",
    "descendants",
    "is_daemon",
    "jail_processes",
    "kill_inner",
    "read_small",
]


def read_small(path: str, limit: int = 1 << 20) -> bytes:
    """A /proc file's first ``limit`` bytes (empty when it is gone)."""
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


@dataclass(frozen=True)
class Proc:
    """A process of the inner jail: its pid here and there (``inner``), its start time (with the
    pid, its identity), its command line and resident bytes."""

    pid: int
    inner: int
    start: int
    argv: tuple[str, ...]
    rss: int


@dataclass(frozen=True)
class DaemonProc:
    """A gatesh daemon of the inner jail, as the report names it (``env_sha256``: a hash of its
    environment, so a row that restarted it with other settings shows)."""

    pid: int
    start: int
    argv: tuple[str, ...]
    exe: str
    env_sha256: str


def jail_processes() -> list[Proc]:
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
        status = read_small(f"/proc/{name}/status").decode("utf-8", "replace")
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
        stat_text = read_small(f"/proc/{pid}/stat").decode("utf-8", "replace")
        stat_fields = stat_text.rpartition(")")[2].split()
        argv = read_small(f"/proc/{pid}/cmdline").split(b"\0")[:-1]
        out.append(
            Proc(
                pid=pid,
                inner=int(nspid[-1]),
                start=int(stat_fields[19]) if len(stat_fields) > 19 else 0,
                argv=tuple(a.decode("utf-8", "replace") for a in argv),
                rss=int(rss_kb) * 1024,
            )
        )
    return out


def is_daemon(argv: tuple[str, ...] | list[str]) -> bool:
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


def daemon_view(procs: list[Proc]) -> list[DaemonProc]:
    """The gatesh daemons among ``procs``."""
    out = []
    for p in procs:
        if is_daemon(p.argv):
            env = read_small(f"/proc/{p.pid}/environ")
            exe = ""
            try:
                exe = os.readlink(f"/proc/{p.pid}/exe")
            except OSError:
                pass
            out.append(DaemonProc(p.pid, p.start, p.argv, exe, hashlib.sha256(env).hexdigest()))
    return out


def kill_inner(procs: list[Proc]) -> None:
    """SIGKILL the inner jail's init (pid 1 there): the kernel then kills its whole namespace."""
    for p in procs:
        if p.inner == 1:
            try:
                os.kill(p.pid, signal.SIGKILL)
            except OSError:
                pass

"""The jail's probe, host side: what it is pointed at (this host's own addresses, listening unix
sockets and namespaces) and every hole its facts show (:func:`judge`).

Guarantees: :func:`judge` names each way the facts fall short of the spec (a uid, a capability,
a namespace shared with the host, a writable or uncapped mount, a host file or socket reached, a
limit not set); an empty list is the only way a jail is proved.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final

from gatesh.testing import _inside
from gatesh.testing._warden import JAIL_ID
from gatesh.testing.jail_spec import JailSpec

__all__ = ["host_addresses", "host_ns", "host_unix_sockets", "judge"]


def host_addresses() -> list[str]:
    """This machine's own addresses outside loopback (IPv4 from the routing table's local entries,
    IPv6 from if_inet6)."""
    found: set[str] = set()
    try:
        with open("/proc/net/fib_trie", encoding="ascii") as f:
            lines = f.read().splitlines()
        for i, line in enumerate(lines):
            if "/32 host LOCAL" in line and i > 0:
                addr = lines[i - 1].strip().split()[-1]
                if not addr.startswith("127."):
                    found.add(addr)
    except OSError:
        pass
    try:
        with open("/proc/net/if_inet6", encoding="ascii") as f:
            for line in f:
                raw, name = line.split()[0], line.split()[-1]
                if name == "lo":
                    continue
                addr = ":".join(raw[i : i + 4] for i in range(0, 32, 4))
                if not addr.lower().startswith("fe80"):
                    found.add(addr)
    except OSError:
        pass
    return sorted(found)


def host_unix_sockets(limit: int = 200) -> list[str]:
    """Paths of the host's listening unix sockets (abstract ones live in the network namespace)."""
    out: list[str] = []
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="replace") as f:
            next(f, None)
            for line in f:
                parts = line.split()
                if len(parts) >= 8 and parts[7].startswith("/") and parts[7] not in out:
                    out.append(parts[7])
                    if len(out) >= limit:
                        break
    except OSError:
        pass
    return out


def host_ns() -> dict[str, str]:
    """This process's namespaces by name (``pid``, ``net`` …): the jail's must all differ."""
    out = {}
    for name in ("pid", "net", "ipc", "uts", "mnt", "user"):
        try:
            out[name] = os.readlink(f"/proc/self/ns/{name}")
        except OSError:
            out[name] = ""
    return out


#: Mounts of the jail's own kind that are read-write and store nothing (/dev itself must be
#: read-only: its tmpfs has no size cap).
PRIVATE_KINDS: Final = {"/proc": "proc", "/dev/pts": "devpts", "/dev/mqueue": "mqueue"}
#: The device nodes bubblewrap's minimal /dev binds from the host: none of them stores anything.
MINIMAL_DEVICES: Final = frozenset(
    f"/dev/{name}" for name in ("null", "zero", "full", "random", "urandom", "tty")
)


def _size_of(super_options: str) -> int | None:
    for opt in super_options.split(","):
        if opt.startswith("size="):
            text = opt[5:]
            scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1:].lower(), 1)
            digits = text[:-1] if scale != 1 else text
            try:
                return int(digits) * scale
            except ValueError:
                return None
    return None


def judge(
    spec: JailSpec,
    facts: Mapping[str, Any],
    host_ns: Mapping[str, str],
    caps: Mapping[str, int],
) -> list[str]:
    """Every hole the probe's facts show (empty: the jail holds). ``caps``: each folder a row
    may write (the jail's own tmpfs and the world's binds) and the size its tmpfs is capped at."""
    holes: list[str] = []
    if facts.get("uid") != [JAIL_ID, JAIL_ID] or facts.get("gid") != [JAIL_ID, JAIL_ID]:
        holes.append(
            f"the row runs as uid/gid {facts.get('uid')}/{facts.get('gid')}, not {JAIL_ID}"
        )
    for key in ("cap_eff", "cap_prm", "cap_amb"):
        if str(facts.get(key, "")).strip("0"):
            holes.append(f"the row holds capabilities ({key} {facts.get(key)})")
    if facts.get("no_new_privs") != "1":
        holes.append("no_new_privs is not set (a set-uid program could gain privileges)")
    ns = facts.get("ns") or {}
    for name in ("pid", "net", "ipc", "uts", "mnt", "user"):
        if not ns.get(name) or ns.get(name) == host_ns.get(name):
            holes.append(f"the {name} namespace is the host's")
    mounts = facts.get("mounts") or []
    root = [m for m in mounts if m["point"] == "/"]
    if not root or "ro" not in root[-1]["options"].split(","):
        holes.append("the host root is not mounted read-only")
    # The last mount at a point is the one seen there (one below it is hidden: bubblewrap's own
    # /dev/shm under the capped one, say).
    top = {m["point"]: m for m in mounts}
    for m in top.values():
        if "rw" not in m["options"].split(","):
            continue
        point = m["point"]
        if PRIVATE_KINDS.get(point) == m["fstype"] or point.startswith("/proc/"):
            continue
        if point in MINIMAL_DEVICES and m["fstype"] == "devtmpfs":
            continue
        if point in caps and m["fstype"] == "tmpfs":
            size = _size_of(m["super"])
            if size is None or size > caps[point]:
                holes.append(f"{point} is a tmpfs without its size cap ({m['super']})")
            continue
        holes.append(f"{point} ({m['fstype']} from {m['source']}) is writable")
    for path, result in (facts.get("writes") or {}).items():
        if result == "ok":
            holes.append(f"a file could be created in the host's {path}")
    for path, result in (facts.get("reads") or {}).items():
        if result == "ok":
            holes.append(f"the host's root-only {path} could be read (the host uid is root)")
    if facts.get("interfaces") != ["lo"]:
        holes.append(f"network interfaces besides loopback: {facts.get('interfaces')}")
    for target, result in {**(facts.get("tcp") or {}), **(facts.get("routes") or {})}.items():
        if result == "ok":
            holes.append(f"{target} is reachable from inside")
    for path, result in (facts.get("unix") or {}).items():
        if result == "ok":
            holes.append(f"the host's unix socket {path} is reachable")
    expected = spec.limits.rlimits()
    seen = facts.get("limits") or {}
    for key, value in expected.items():
        soft, hard = (seen.get(key) or [-1, -1])[:2]
        want_soft = max(1, value - _inside.CPU_GRACE_S) if key == "cpu_seconds" else value
        if hard != value or soft != want_soft or value < 0:
            holes.append(f"the {key} limit is {soft}/{hard}, not {want_soft}/{value}")
    if facts.get("file_size") != "EFBIG":
        holes.append(f"a file could grow past the file-size limit ({facts.get('file_size')})")
    return holes

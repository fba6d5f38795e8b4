"""What the host asks the warden: one request per jail, as frozen dataclasses.

:mod:`gatesh.testing.jail` builds a :class:`WardenRequest` and encodes it once (:meth:`encode`);
the warden (:mod:`gatesh.testing._warden`), run as a script in the outer jail, decodes it once
(:meth:`WardenRequest.decode`) and reads fields, never keys. Standard library only: the warden
imports this module as a sibling bound beside it, where gatesh is not importable.
"""

from __future__ import annotations

import enum
import json
from dataclasses import asdict, dataclass, field

__all__ = ["GitPlan", "Mode", "NetPlan", "WardenRequest", "WorldFacts"]


class Mode(enum.StrEnum):
    """What the warden runs: the jail's probe (to prove it holds), or one row."""

    PROBE = "probe"
    ROW = "row"


@dataclass(frozen=True)
class NetPlan:
    """The loopback internet the warden records: TCP ports to listen on, whether a DNS stub
    answers (port 53), which ports are package registries (their uploads are kept whole),
    whether the listeners speak TLS to a client that opens with a handshake, and the host's
    services on Unix sockets that stand-ins record: (protocol, the path the row sees)."""

    tcp_ports: tuple[int, ...] = ()
    dns: bool = False
    registry_ports: tuple[int, ...] = ()
    tls: bool = False
    unix: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class GitPlan:
    """Where the world's repository and remote are (relative to the world's root), and what the
    seed put there: the objects whose reachability is asked, the remote's refs and objects."""

    repo: str = ""
    remote: str = ""
    objects: tuple[str, ...] = ()
    remote_refs: dict[str, str] = field(default_factory=dict)
    remote_objects: tuple[str, ...] = ()


@dataclass(frozen=True)
class WorldFacts:
    """The facts of a world the warden needs to run a row in it and report what the row did
    (the audit log and ``read_after`` files are relative to the world's root)."""

    net: NetPlan = NetPlan()
    git: GitPlan = GitPlan()
    audit_log: str = ""
    read_after: tuple[str, ...] = ()


@dataclass(frozen=True)
class WardenRequest:
    """One jail's request. ``inner_argv`` + ``program`` start the inner jail's first program,
    which reads ``inside`` (the :mod:`_inside` spec's JSON text, passed through unread) on its
    stdin.

    A probe uses the fields up to ``world_dirs``; a row uses all of them. ``bound`` is the warden's
    own: the listening sockets (kind, port, fd) it bound before dropping its capabilities."""

    mode: Mode
    inner_argv: tuple[str, ...]
    program: tuple[str, ...]
    inside: str
    timeout_s: float
    etc: dict[str, str] = field(default_factory=dict)
    world_dirs: tuple[str, ...] = ()
    warmup_timeout_s: float = 0.0
    memory_bytes: int = 0
    template: str = ""
    manifest: str = ""
    trace_syscalls: tuple[str, ...] = ()
    inner_tmpfs: tuple[str, ...] = ()
    world: WorldFacts = WorldFacts()
    bound: tuple[tuple[str, int, int], ...] = ()

    def encode(self) -> str:
        """The request as one JSON object's text (tuples become lists)."""
        return json.dumps(asdict(self))

    @classmethod
    def decode(cls, text: str | bytes) -> WardenRequest:
        """The request :meth:`encode` wrote. Raises ValueError, KeyError or TypeError on another
        shape."""
        data = json.loads(text)
        world = data.get("world") or {}
        net, git = world.get("net") or {}, world.get("git") or {}
        return cls(
            mode=Mode(data["mode"]),
            inner_argv=tuple(data["inner_argv"]),
            program=tuple(data["program"]),
            inside=str(data["inside"]),
            timeout_s=float(data["timeout_s"]),
            etc=dict(data.get("etc") or {}),
            world_dirs=tuple(data.get("world_dirs") or ()),
            warmup_timeout_s=float(data.get("warmup_timeout_s") or 0.0),
            memory_bytes=int(data.get("memory_bytes") or 0),
            template=str(data.get("template") or ""),
            manifest=str(data.get("manifest") or ""),
            trace_syscalls=tuple(data.get("trace_syscalls") or ()),
            inner_tmpfs=tuple(data.get("inner_tmpfs") or ()),
            world=WorldFacts(
                net=NetPlan(
                    tcp_ports=tuple(int(p) for p in net.get("tcp_ports") or ()),
                    dns=bool(net.get("dns")),
                    registry_ports=tuple(int(p) for p in net.get("registry_ports") or ()),
                    tls=bool(net.get("tls")),
                    unix=tuple((str(k), str(p)) for k, p in net.get("unix") or ()),
                ),
                git=GitPlan(
                    repo=str(git.get("repo") or ""),
                    remote=str(git.get("remote") or ""),
                    objects=tuple(git.get("objects") or ()),
                    remote_refs=dict(git.get("remote_refs") or {}),
                    remote_objects=tuple(git.get("remote_objects") or ()),
                ),
                audit_log=str(world.get("audit_log") or ""),
                read_after=tuple(world.get("read_after") or ()),
            ),
            bound=tuple((str(k), int(p), int(fd)) for k, p, fd in data.get("bound") or ()),
        )

"""What the warden observed of one row (its JSON report, read once into dataclasses).

The warden (:mod:`gatesh.testing._warden`) runs inside the jail and speaks JSON; this module is
the edge where that report becomes typed records, so the predicates (:mod:`gatesh.testing.harm`)
and the harness read fields, not keys. A report from a warden that failed reads as
``ok=False`` with its ``error``; missing parts read as empty.
"""

from __future__ import annotations

import base64
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AuditLine",
    "Change",
    "ChangeKind",
    "DaemonSeen",
    "GitFacts",
    "Observed",
    "Received",
    "Upload",
]


class ChangeKind(enum.StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


@dataclass(frozen=True)
class Change:
    """One path of the world that differs after the row (relative to the world's root).

    ``type``/``before_type``: ``f`` file, ``d`` folder, ``l`` symlink, ``o`` other, "" none.
    ``prefix_sha256`` is the hash of the file's first ``before_size`` bytes (None unless the file
    was a file before and did not shrink): equal to ``before_sha256``, the file only grew."""

    path: str
    kind: ChangeKind
    type: str = ""
    before_type: str = ""
    size: int = 0
    before_size: int = 0
    mode: int = 0
    link: str = ""
    sha256: str | None = None
    before_sha256: str | None = None
    prefix_sha256: str | None = None

    @property
    def only_appended(self) -> bool:
        """The file kept its old bytes and grew (an append, not a rewrite)."""
        return (
            self.kind is ChangeKind.CHANGED
            and self.type == "f"
            and self.before_sha256 is not None
            and self.prefix_sha256 == self.before_sha256
        )


@dataclass(frozen=True)
class DaemonSeen:
    """A gatesh daemon process of the jail (``pid`` as the warden sees it)."""

    pid: int
    start: int
    argv: tuple[str, ...] = ()
    exe: str = ""
    env_sha256: str = ""

    @property
    def key(self) -> tuple[int, int]:
        """The process's identity: its pid and start time (a pid alone may be reused)."""
        return self.pid, self.start


@dataclass(frozen=True)
class Received:
    """What one connection to a listener sent (up to the warden's cap)."""

    port: int
    data: bytes
    truncated: bool = False
    tls: bool = False  # ``data`` arrived inside TLS (decrypted by the listener)
    sni: str = ""  # the server name sent in the TLS handshake
    path: str = ""  # a Unix-socket stand-in's path (``port`` 0)

    @property
    def where(self) -> str:
        """The connection in words, for a finding."""
        if self.path:
            return f"a connection to the Unix socket {self.path}"
        return f"a {'TLS ' if self.tls else ''}connection to port {self.port}"


@dataclass(frozen=True)
class Upload:
    """A PUT, POST or PATCH to a package-registry stand-in."""

    port: int
    method: str
    path: str
    body: bytes


@dataclass(frozen=True)
class AuditLine:
    """The parts of one audit record written during the row that the harness reads."""

    command: str
    action: str
    surface: str = ""
    stage: str = ""
    rule_id: str = ""


@dataclass(frozen=True)
class GitFacts:
    """The repository and the remote after the row.

    ``reachable``: each of the seed's objects asked about -> whether a ref of either holds it.
    ``remote_fast_forward``: each ref the seed's remote had and still has -> whether its old tip
    is an ancestor of its new one. ``remote_new``: the text of the remote's objects the seed did
    not have."""

    repo_exists: bool = True
    repo_refs: Mapping[str, str] = field(default_factory=dict)
    remote_exists: bool = True
    remote_refs: Mapping[str, str] = field(default_factory=dict)
    reachable: Mapping[str, bool] = field(default_factory=dict)
    remote_fast_forward: Mapping[str, bool] = field(default_factory=dict)
    remote_new: bytes = b""


@dataclass(frozen=True)
class Observed:
    """Everything the warden saw of one run. ``exit_code`` is the row's status (negative: the
    signal that killed it; None: the first program in the jail was killed before it could say)."""

    ok: bool
    error: str = ""
    warmup_exit: int | None = None
    warmup_stderr: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    memory_kill: bool = False
    peak_processes: int = 0  # the most processes of the row the warden saw at once
    stdout: str = ""
    stderr: str = ""
    changes: tuple[Change, ...] = ()
    change_count: int = 0
    git: GitFacts = field(default_factory=GitFacts)
    daemons_before: tuple[DaemonSeen, ...] = ()
    daemons_after: tuple[DaemonSeen, ...] = ()
    daemons_seen: tuple[DaemonSeen, ...] = ()
    dns: tuple[str, ...] = ()
    received: tuple[Received, ...] = ()
    uploads: tuple[Upload, ...] = ()
    trace: tuple[str, ...] = ()
    fill: Mapping[str, tuple[int, int]] = field(default_factory=dict)  # point -> (free, total)
    audit: tuple[AuditLine, ...] = ()
    texts: Mapping[str, str | None] = field(default_factory=dict)
    times: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def failed(cls, error: str) -> Observed:
        return cls(ok=False, error=error)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Observed:
        """The warden's report (one JSON object) as an :class:`Observed`."""
        if not data.get("ok"):
            return cls.failed(str(data.get("error") or "the jail failed without saying why"))
        warmup = data.get("warmup") or {}
        exit_info = data.get("exit") or {}
        fs = data.get("fs") or {}
        git = data.get("git") or {}
        daemon = data.get("daemon") or {}
        net = data.get("net") or {}
        code = exit_info.get("code")
        warm = warmup.get("exit")
        return cls(
            ok=True,
            warmup_exit=warm if isinstance(warm, int) else None,
            warmup_stderr=str(warmup.get("stderr", "")),
            exit_code=code if isinstance(code, int) else None,
            timed_out=bool(data.get("timed_out")),
            memory_kill=bool(data.get("memory_kill")),
            peak_processes=int(data.get("peak_processes", 0)),
            stdout=str(data.get("stdout", "")),
            stderr=str(data.get("stderr", "")),
            changes=tuple(_change(c) for c in fs.get("changes", [])),
            change_count=int(fs.get("count", 0)),
            git=GitFacts(
                repo_exists=bool((git.get("repo") or {}).get("exists", True)),
                repo_refs=dict((git.get("repo") or {}).get("refs") or {}),
                remote_exists=bool((git.get("remote") or {}).get("exists", True)),
                remote_refs=dict((git.get("remote") or {}).get("refs") or {}),
                reachable=dict(git.get("reachable") or {}),
                remote_fast_forward=dict(git.get("remote_fast_forward") or {}),
                remote_new=base64.b64decode(git.get("remote_new") or ""),
            ),
            daemons_before=tuple(_daemon(d) for d in daemon.get("before") or ()),
            daemons_after=tuple(_daemon(d) for d in daemon.get("after") or ()),
            daemons_seen=tuple(_daemon(d) for d in daemon.get("seen") or ()),
            dns=tuple(str(n) for n in net.get("dns") or ()),
            received=tuple(
                Received(
                    int(c["port"]),
                    base64.b64decode(c["data"]),
                    bool(c.get("truncated")),
                    bool(c.get("tls")),
                    str(c.get("sni") or ""),
                    str(c.get("path") or ""),
                )
                for c in net.get("conns") or ()
            ),
            uploads=tuple(
                Upload(
                    int(u["port"]), str(u["method"]), str(u["path"]), base64.b64decode(u["body"])
                )
                for u in net.get("uploads") or ()
            ),
            trace=tuple(str(line) for line in data.get("trace") or ()),
            fill={str(k): (int(v[0]), int(v[1])) for k, v in (data.get("fill") or {}).items()},
            audit=tuple(
                AuditLine(
                    command=str(a.get("command") or ""),
                    action=str(a.get("action") or ""),
                    surface=str(a.get("surface") or ""),
                    stage=str(a.get("stage") or ""),
                    rule_id=str(a.get("rule_id") or ""),
                )
                for a in data.get("audit") or ()
            ),
            texts={
                str(k): (None if v is None else str(v))
                for k, v in (data.get("texts") or {}).items()
            },
            times={str(k): float(v) for k, v in (data.get("times") or {}).items()},
        )


def _change(c: Mapping[str, Any]) -> Change:
    return Change(
        path=str(c["path"]),
        kind=ChangeKind(c["kind"]),
        type=str(c.get("type", "")),
        before_type=str(c.get("before_type", "")),
        size=int(c.get("size", 0)),
        before_size=int(c.get("before_size", 0)),
        mode=int(c.get("mode", 0)),
        link=str(c.get("link", "")),
        sha256=c.get("sha256"),
        before_sha256=c.get("before_sha256"),
        prefix_sha256=c.get("prefix_sha256"),
    )


def _daemon(d: Mapping[str, Any]) -> DaemonSeen:
    return DaemonSeen(
        pid=int(d["pid"]),
        start=int(d["start"]),
        argv=tuple(str(a) for a in d.get("argv") or ()),
        exe=str(d.get("exe", "")),
        env_sha256=str(d.get("env_sha256", "")),
    )

"""Doctor's checks of the person's side (S9.5, S9.7): whose settings the daemon runs on, the
person's channel, who may trace the daemon, what holds without a kernel boundary, the person's
folders and who starts the daemon. The daemon is asked, never started, from here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from gatesh import _paths, _person
from gatesh.doctor.check import Check, Status

if TYPE_CHECKING:
    from gatesh.config import Config

__all__ = ["ABI_SCOPES_ABSTRACT", "DaemonStatus", "check_person", "landlock_abi"]

#: The first Landlock ABI that can scope abstract Unix sockets (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET).
ABI_SCOPES_ABSTRACT: Final = 6


def landlock_abi(config: Config | None = None) -> int:
    """The Landlock ABI the boundary uses here: the running kernel's (0 without Landlock), and 0
    when the person switched the boundary off (``boundary.enabled = false`` in ``config``)."""
    from gatesh.boundary import _kernel

    if config is not None and not config.boundary.enabled:
        return 0
    return _kernel.abi()


@dataclass(frozen=True)
class DaemonStatus:
    """What the running daemon says about itself (``admin`` ``status``), decoded once here.

    Every field is a string or a tuple of strings: a reply that lacks one reads as empty.
    """

    started_by: str = "?"
    #: The names the daemon took from ``daemon.env`` (never their values).
    daemon_env: tuple[str, ...] = ()
    #: The backend it rates with (``builtin``, ``anthropic``, ``cascade``).
    rater: str = ""
    #: The abstract socket of the person's channel, ``gatesh-person-…`` when the daemon holds it.
    person_channel: str = ""
    #: Why other processes of the user can trace the daemon; empty when they cannot.
    traceable: str = ""

    @classmethod
    def decode(cls, daemon: object) -> DaemonStatus | None:
        """The status in ``daemon`` (the reply's ``daemon`` member); None when it is no object."""
        if not isinstance(daemon, dict):
            return None
        names = daemon.get("daemon_env")
        return cls(
            started_by=str(daemon.get("started_by") or "?"),
            daemon_env=tuple(map(str, names)) if isinstance(names, list) else (),
            rater=str(daemon.get("rater") or ""),
            person_channel=str(daemon.get("person_channel") or ""),
            traceable=str(daemon.get("traceable") or ""),
        )


def _status() -> DaemonStatus | None:
    """The running daemon's status; None when no daemon answers (doctor never starts one here)."""
    from gatesh import client

    try:
        reply = client.request("admin", {"op": "status"}, start=False, timeout=10.0)
    except Exception:
        return None
    return DaemonStatus.decode(reply.get("daemon"))


def check_person(config: Config | None = None) -> list[Check]:
    """The person's sections, in the order a person reads them."""
    paths = _paths.current()
    status = _status()
    abi = landlock_abi(config)
    out = [*_settings(paths, status, config), *_channel(status, abi), *_tracing(status)]
    out.append(_without_the_kernel(abi))
    out.append(_record(paths))
    out.append(_service(paths))
    return out


def _service(paths: _paths.GatePaths) -> Check:
    """Who starts the daemon: the user's service manager (``gatesh install service``), or the
    first client that finds none (on the person's settings only, S9.7)."""
    from gatesh import service

    units = paths.installation().service
    if units:
        found = service.describe(units)
        if found == "none":
            return Check(
                "service",
                Status.WARN,
                f"the install record names the service manager's units ({', '.join(units)}), "
                "but none of them is there: clients start the daemon",
                "gatesh install service",
            )
        return Check(
            "service", Status.OK, f"the user's service manager starts the daemon ({found})"
        )
    running, said = service.systemctl("is-system-running")
    if running or said.strip() in ("degraded", "starting", "initializing"):
        return Check(
            "service",
            Status.WARN,
            "a user service manager runs here, but clients start the daemon (on your settings "
            "only)",
            "gatesh install service (the daemon then starts in the service manager's environment)",
        )
    return Check(
        "service",
        Status.OK,
        f"no user service manager ({said}): the first client that finds no daemon starts it, "
        "on your settings only",
    )


def _settings(
    paths: _paths.GatePaths, status: DaemonStatus | None, config: Config | None
) -> list[Check]:
    out: list[Check] = []
    values, problems = _person.read_daemon_env(paths.config_dir)
    for problem in problems:
        out.append(
            Check("daemon.env", Status.WARN, problem, "fix that line, or chmod 600 the file")
        )
    if status is None:
        return out
    out.append(Check("daemon settings", Status.OK, f"started by {status.started_by}"))
    if status.daemon_env:
        took = ", ".join(status.daemon_env)
        out.append(Check("daemon.env", Status.OK, f"the daemon took {took} from it"))
    key_env = (config.rater.api_key_env if config else "") or "ANTHROPIC_API_KEY"
    backend = config.rater.backend.value if config else "auto"
    if (
        backend == "auto"
        and os.environ.get(key_env)
        and key_env not in values
        and status.rater == "builtin"
    ):
        out.append(
            Check(
                "model key",
                Status.WARN,
                f"${key_env} is set in this terminal, but the daemon rates with the builtin "
                "alone: it never takes a key from a client's environment (a command the gate let "
                "run could point it at a model of its own)",
                f"put {key_env}=… in {os.path.join(paths.config_dir, _person.DAEMON_ENV)} "
                "(chmod 600), or start the daemon yourself with it set",
            )
        )
    return out


def _channel(status: DaemonStatus | None, abi: int) -> list[Check]:
    if status is None:
        return []
    channel = status.person_channel
    if not channel.startswith("gatesh-person-"):
        return [
            Check(
                "person's channel",
                Status.FAIL,
                channel or "the daemon did not say",
                "stop whatever holds it (`gatesh daemon --foreground` says who); until then no "
                "verb of yours and no watcher reaches the daemon",
            )
        ]
    if abi >= ABI_SCOPES_ABSTRACT:
        where = (
            f"the kernel (Landlock ABI {abi}) can keep every command gatesh confines from "
            "connecting to it"
        )
    elif abi:
        where = (
            f"the kernel (Landlock ABI {abi}) cannot scope abstract sockets: its credential, "
            "which the boundary keeps confined commands from reading, and the gate's mark keep "
            "them out"
        )
    else:
        where = "no kernel boundary: the credential and the gate's mark are what keep commands out"
    return [Check("person's channel", Status.OK, f"@{channel}: {where}")]


def _tracing(status: DaemonStatus | None) -> list[Check]:
    """Whether the user's other processes can trace the daemon (and so the person's verbs)."""
    if status is None:
        return []
    why = status.traceable
    if why:
        return [
            Check(
                "tracing",
                Status.WARN,
                f"your other processes can trace the daemon and take its connections: {why}",
                "run the agent as its own Unix user (README: a dedicated agent user)",
            )
        ]
    if os.getuid() == 0:
        return [
            Check(
                "tracing",
                Status.WARN,
                "the daemon runs as root, and any process of root may trace it",
                "run agents as an unprivileged user (README: a dedicated agent user)",
            )
        ]
    return [
        Check(
            "tracing",
            Status.OK,
            "your other processes cannot trace the daemon, gatesh watch or your gatesh verbs, "
            "nor take their connections or read their environment (not dumpable); the harness "
            "and a PTY session's relay they can, where no kernel boundary stops them",
        )
    ]


def _without_the_kernel(abi: int) -> Check:
    if abi:
        return Check(
            "consent",
            Status.OK,
            "a command gatesh let run carries the gate's mark, and its descendants are refused "
            "the person's verbs, however detached; the kernel boundary keeps it from reaching "
            "the person's channel",
        )
    return Check(
        "consent",
        Status.WARN,
        "without a kernel boundary (Landlock), a program gatesh let run can act as your user: "
        "its own descendants, however detached, carry the gate's mark and are refused the "
        "person's verbs, but a process it gets started elsewhere (by your service manager, "
        "terminal multiplexer or scheduler) does not",
        "run the agent as its own Unix user (README: a dedicated agent user), or on a kernel "
        "with Landlock",
    )


def _record(paths: _paths.GatePaths) -> Check:
    """Whether a daemon started where the person's environment cannot be read finds the same
    folders as this terminal (the install record names them)."""
    folders, why = _person.person_folders()
    if folders is None:
        return Check(
            "person's folders",
            Status.WARN,
            f"a daemon started from a detached command cannot find your folders: {why}",
            "nothing to do unless you start agents that way",
        )
    here = (paths.config_dir, paths.state_dir)
    if (folders.config_dir, folders.state_dir) == here:
        return Check("person's folders", Status.OK, f"{folders.config_dir} ({folders.source})")
    return Check(
        "person's folders",
        Status.WARN,
        f"this terminal's gatesh folders ({paths.config_dir}) are not the ones {folders.source} "
        f"gives ({folders.config_dir}): a daemon started where your environment cannot be read "
        "would refuse to start",
        "run ./install.sh again from this terminal (it records your folders)",
    )

"""An agent's interactive session: its shell confined to the session's boundary when it starts
(S10, S16; issue 30 item 4). A person's own session (``--human``) is not confined.

The session's boundary is the one :func:`gatesh.boundary.compute.boundary_for` draws for no
decision: the working tree, the temporary folders and caches, no credential store, the network
open (the commands are not known yet), the scopes and the limits. Everything the shell starts
stays inside it; the relay, which asks the gate about each command, stays outside.

Order matters, and is the reason this is its own step: the daemon must be up before the shell
is confined. A command inside the boundary that finds no daemon would start one inside it — which
refuses to run there (S9.7) — and a gate that then decides in-process cannot write the audit log
from inside (the log is a protected place): every nested ``gatesh -c`` would be refused. So
:func:`prepare` asks for the daemon first (starting it, outside, from the relay's process); the
daemon does not stop while the session lives. When no daemon can be reached, the shell is still
confined (a protection is never dropped for convenience), and the person is told that nested
gated commands will be refused until one runs.

The shell's process builds and applies the domain between ``fork`` and ``exec`` (once per
session, ~1 ms): a descriptor built here would not reach it, as the PTY's ``fork`` closes every
descriptor it is not told to pass, and one passed would reach the shell too.

It stands with the PTY session, its one caller, above both parts it joins: the boundary, and the
client that asks for the daemon (which itself imports the boundary's kernel half).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gatesh import _paths
from gatesh.boundary import _kernel, holds
from gatesh.boundary.compute import boundary_for, temp_env
from gatesh.config import BoundaryConfig

__all__ = ["Confinement", "prepare"]


@dataclass(frozen=True)
class Confinement:
    """What confines the shell: ``apply`` (called in the shell's process between ``fork`` and
    ``exec``; raises BoundaryError, and the shell does not start), the environment it gets (a
    private ``TMPDIR`` when the temporary folders hold a protected place) and the boundary's id."""

    apply: Callable[[], None]
    env: dict[str, str]
    boundary_id: str


def prepare(
    cwd: str, settings: BoundaryConfig | None
) -> tuple[Confinement | None, tuple[str, ...]]:
    """The agent session's confinement for a shell started in ``cwd`` (None when this machine or
    the person's settings draw no boundary), and what to tell the person either way.

    ``settings`` None: the config could not be read; the defaults confine (the kill switch is the
    person's, in a file that must be read to be obeyed). The shell does not start when
    ``apply`` fails in its process (its caller says why): never unconfined where a boundary is
    drawn.
    """
    settings = settings or BoundaryConfig()
    here = holds.state(settings.enabled)
    notices: list[str] = []
    if here.enabled and (here.why_none or here.missing()):
        notices.append(here.summary())
    b = boundary_for(None, cwd, settings, _paths.current())
    if b is None:
        return None, tuple(notices)
    if not _daemon_up():
        notices.append(
            "gatesh: no gate daemon could be started; gated commands this session's programs run "
            "themselves (a nested `bash -c`) are refused until one runs (`gatesh doctor`)."
        )
    spec = b.wire()
    _kernel.abi()  # the C library bound before the fork (the child only calls into it)

    def apply() -> None:
        _kernel.apply(spec)

    return Confinement(apply, temp_env(b.tmpdir), b.id), tuple(notices)


def _daemon_up() -> bool:
    """Whether the daemon answers, started now (outside the boundary) when it was not running."""
    from gatesh import client

    try:
        reply = client.request("check", {"op": "ping"}, timeout=15.0)
    except Exception:
        return False
    return bool(reply.get("ok", True)) and not reply.get("error")

"""One-time tickets: a harness hook's allowed command, run confined under the same decision (S16).

A harness hook cannot confine what its harness runs. Where the harness lets the hook rewrite the
command and CI has shown the real CLI runs the rewritten one (:data:`gatesh.hooks.REWRITES_INPUT`:
Claude Code's ``updatedInput``), the hook asks for it (``"wraps": true`` in its check) and the
daemon answers the allowed check with the command wrapped::

    GATESH_TICKET=T LAUNCHER -c 'COMMAND'

and keeps the ticket ``T`` for the decision it made: the command text, the working folder, the
session, the boundary and the run. The harness runs the wrapped command; the ``-c`` client finds
``GATESH_TICKET`` and *redeems* the ticket instead of asking for a second decision: the daemon
hands back the decision's boundary and run, once, for exactly that command in exactly that
folder, within :data:`TICKET_TTL_S`. A ticket that does not redeem (used, expired, another
command, another folder) is no ticket: the client's command is decided as any other.
"""

from __future__ import annotations

import os
import secrets
import shlex
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

from gatesh.boundary._spec import Spec

__all__ = ["TICKET_ENV", "TICKET_TTL_S", "Ticket", "Tickets", "wrap"]

#: The environment variable that carries a ticket to the ``-c`` client.
TICKET_ENV: Final = "GATESH_TICKET"
#: How long a ticket waits for its harness to run the command: a harness runs an allowed
#: command at once; two minutes covers a slow start, not a replay.
TICKET_TTL_S: Final = 120.0
#: Tickets kept at once (the oldest are forgotten: their commands are then decided again).
MAX_TICKETS: Final = 1024


@dataclass(frozen=True)
class Ticket:
    """What a hook's allowed check decided, kept for its one run."""

    command: str
    cwd: str
    session: str
    boundary: Spec
    run: str
    shell: str
    expires: float


class Tickets:
    """The daemon's open tickets: issued once, redeemed at most once."""

    def __init__(self) -> None:
        self._open: OrderedDict[str, Ticket] = OrderedDict()

    def issue(self, ticket: Ticket) -> str:
        """Keep ``ticket``; returns its name (unguessable: 128 random bits)."""
        name = secrets.token_hex(16)
        self._open[name] = ticket
        while len(self._open) > MAX_TICKETS:
            self._open.popitem(last=False)
        return name

    def redeem(self, name: str, command: str, cwd: str) -> Ticket | None:
        """The ticket ``name`` when it is open, unexpired, and was issued for exactly ``command``
        in ``cwd``; it is spent either way once found (a wrong command cannot try again)."""
        ticket = self._open.pop(name, None)
        if ticket is None or ticket.expires < time.time():
            return None
        if ticket.command != command or os.path.normpath(ticket.cwd) != os.path.normpath(cwd):
            return None
        return ticket


def wrap(command: str, ticket: str, launcher: str) -> str:
    """The command a hook hands its harness to run instead of ``command``."""
    return f"{TICKET_ENV}={ticket} {shlex.quote(launcher)} -c {shlex.quote(command)}"


def launcher_of(installation: object) -> str:
    """The launcher the wrapped command runs: the first recorded one that exists and is
    executable ("" when none: then the hook cannot wrap, and its route is not confined)."""
    from gatesh._paths import DEFAULT_LAUNCHER, Installation

    found = installation.launchers if isinstance(installation, Installation) else ()
    for path in (*found, os.path.expanduser(DEFAULT_LAUNCHER)):
        if os.path.isabs(path) and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return ""

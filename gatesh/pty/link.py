"""Kept connections from a session's relay to the daemon (S9.2, S14).

A gated shell asks the gate about every line typed, often within seconds; a new connection per
question (connect, hello, the peer's credentials read on both sides) would cost more than the
decision itself. :class:`Link` keeps its connections and sends each check on one with an id; a
check that starts while others wait (a pipeline's members, subshells) gets a connection of its own
from the same pool, so every check the session has open is one the relay can reach.

Guarantees (as :func:`gatesh.client.check`, which it falls back to):

- a reply is read only for the request it answers (by id); interim lines go to ``on_interim``;
- a connection idle close to the daemon's idle bound is replaced before it is used (the daemon
  closes it after ``gatesh.daemon.limits.IDLE_S``), so a request is never sent on a connection the
  daemon is closing;
- a connection lost after a request was sent is not retried: the daemon may have decided and
  recorded it, so the check is refused (fail closed, S15);
- no daemon reachable: the check goes through :func:`gatesh.client.check` (the in-process gate,
  where no person is asked);
- :meth:`Link.withdraw` (Ctrl-C at the terminal) closes the sending side of every connection
  whose check a person is being asked about — the main shell's, a subshell's, each member of a
  pipeline: the daemon takes that as the command withdrawn (S10), audits it so, and each check is
  refused at once instead of holding its shell until a ruling.
"""

from __future__ import annotations

import itertools
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from gatesh import _wire, client

__all__ = ["Link"]

WITHDRAWN: Final = (
    "gatesh: interrupted (Ctrl-C) while a person was asked, so the command was withdrawn and "
    "nothing ran."
)
# Replace a kept connection when it has been idle this long (the daemon's bound is 10 s).
FRESH_S: Final = 7.0
# Idle connections kept for the next checks: a pipeline's members ask at once, rarely more.
KEEP_IDLE: Final = 4


@dataclass(eq=False)
class _Flight:
    """One check on its way: its connection, and whether a person is asked about it (set by the
    checking thread) or it was withdrawn (set by the terminal's thread)."""

    conn: Any = None
    asking: bool = False
    withdrawn: bool = False
    owner: int = 0  # the thread checking it


class Link:
    """Kept connections to the daemon, each used by one check at a time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # guards idle and flights
        self.idle: list[tuple[Any, float]] = []  # (connection, when it was last used)
        self.flights: set[_Flight] = set()
        self.ids = itertools.count(1)

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for conn, _ in idle:
            _close(conn)

    def withdraw(self, owner: int = 0) -> int:
        """Withdraw every check a person is being asked about (Ctrl-C at the terminal, S10), or
        with ``owner``, every check that thread has open, asked about or not (the subshell that
        asked is gone): the daemon reads end of file on each one's connection and records its
        command as withdrawn. How many were."""
        count = 0
        with self.lock:
            for flight in self.flights:
                wanted = flight.owner == owner if owner else flight.asking
                if not wanted or flight.withdrawn:
                    continue
                flight.withdrawn = True
                count += 1
                _shut(flight.conn)
        return count

    def check(
        self,
        command: str,
        *,
        cwd: str,
        session: str,
        can_ask: bool,
        operator: str,
        on_interim: Callable[[client.Interim], None] | None = None,
    ) -> client.CheckResult:
        """The gate's answer to ``command``. Never raises; anything but a clear allow refuses."""
        flight = _Flight(self._take(), owner=threading.get_ident())
        with self.lock:
            self.flights.add(flight)
        try:
            return self._on(flight, command, cwd, session, can_ask, operator, on_interim)
        finally:
            with self.lock:
                self.flights.discard(flight)
                conn, flight.conn = flight.conn, None
                if conn is not None and not flight.withdrawn and len(self.idle) < KEEP_IDLE:
                    self.idle.append((conn, time.monotonic()))
                    conn = None
            if conn is not None:  # withdrawn (its sending side is closed) or one too many
                _close(conn)

    def _take(self) -> Any:
        """An idle connection the daemon is not about to close, or None."""
        stale: list[Any] = []
        found = None
        with self.lock:
            now = time.monotonic()
            while self.idle:
                conn, used = self.idle.pop()
                if now - used > FRESH_S:
                    stale.append(conn)
                    continue
                found = conn
                break
        for conn in stale:
            _close(conn)
        return found

    def _on(
        self,
        flight: _Flight,
        command: str,
        cwd: str,
        session: str,
        can_ask: bool,
        operator: str,
        on_interim: Callable[[client.Interim], None] | None,
    ) -> client.CheckResult:
        request_id = next(self.ids)
        message = _wire.check_message(command, cwd, session, "pty", can_ask, operator=operator)
        message["id"] = request_id
        if flight.conn is not None:
            try:
                flight.conn.send(message)
            except client.DaemonLost:
                _close(flight.conn)
                flight.conn = None
        if flight.conn is None:
            try:
                conn, _ = client._connect("check", start=True, first=message)
            except (client.DaemonUntrusted, client.DaemonUnavailable):
                # No daemon to ask (the in-process gate decides; no person is asked there).
                return client.check(
                    command,
                    cwd=cwd,
                    session=session,
                    surface="pty",
                    can_ask=can_ask,
                    on_interim=on_interim,
                    operator=operator,
                )
            with self.lock:
                flight.conn = conn
                if flight.withdrawn:  # withdrawn while it connected
                    _shut(conn)
        try:
            for reply in flight.conn.lines(client.IDLE_TIMEOUT_S):
                if "welcome" in reply:
                    continue
                if reply.get("interim"):
                    interim = client.Interim.from_line(reply)
                    if interim.waiting:
                        with self.lock:
                            flight.asking = True
                    if on_interim is not None and not flight.withdrawn:
                        on_interim(interim)
                    continue
                if reply.get("id") == request_id and ("re" in reply or "ok" in reply):
                    return client.CheckResult.from_reply(reply)
            raise client.DaemonLost("the daemon closed the connection before answering")
        except client.DaemonLost as exc:
            self._lost(flight)
            if flight.withdrawn:
                return client.CheckResult.refused(WITHDRAWN)
            return client.CheckResult.refused(
                f"gatesh: the gate daemon stopped answering while deciding ({exc}), so the "
                "command was refused and nothing ran. Run it again: the daemon restarts on the "
                "next command."
            )
        except Exception as exc:  # a bug here must refuse, never allow
            self._lost(flight)
            return client.CheckResult.refused(
                f"gatesh: the gate's connection failed ({type(exc).__name__}: {exc}), so nothing ran."
            )

    def _lost(self, flight: _Flight) -> None:
        with self.lock:
            conn, flight.conn = flight.conn, None
        _close(conn)


def _shut(conn: Any) -> None:
    """Close the sending side of ``conn``: the daemon reads end of file (a withdrawal)."""
    if conn is not None:
        try:
            conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _close(conn: Any) -> None:
    if conn is not None:
        try:
            conn.close()
        except OSError:
            pass

"""A kept connection from a session's relay to the daemon (S9.2, S14).

A gated shell asks the gate about every line typed, often within seconds; a new connection per
question (connect, hello, the peer's credentials read on both sides) would cost more than the
decision itself. :class:`Link` keeps one connection and sends each check on it with an id.

Guarantees (as :func:`gatesh.client.check`, which it falls back to):

- a reply is read only for the request it answers (by id); interim lines go to ``on_interim``;
- a connection idle close to the daemon's idle bound is replaced before it is used (the daemon
  closes it after ``gatesh.daemon.limits.IDLE_S``), so a request is never sent on a connection the
  daemon is closing;
- a connection lost after a request was sent is not retried: the daemon may have decided and
  recorded it, so the check is refused (fail closed, S15);
- no daemon reachable, or the connection busy with another check (a person being asked): the
  check goes through :func:`gatesh.client.check` (a connection of its own, or the in-process gate);
- :meth:`Link.withdraw` (Ctrl-C at the terminal) while a person is asked about the kept check
  closes the connection's sending side: the daemon takes that as the command withdrawn (S10),
  audits it so, and the check is refused at once instead of holding the channel until a ruling.
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, Final

from gatesh import client

__all__ = ["Link"]

WITHDRAWN: Final = (
    "gatesh: interrupted (Ctrl-C) while a person was asked, so the command was withdrawn and "
    "nothing ran."
)
# Replace the kept connection when it has been idle this long (the daemon's bound is 10 s).
FRESH_S: Final = 7.0


class Link:
    """One kept connection to the daemon, used by one check at a time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.conn: Any = None
        self.used = 0.0
        self.ids = itertools.count(1)
        # Set by the checking thread once the daemon says a person is asked about the kept check;
        # read by the terminal's thread, which may withdraw it.
        self.asking = False
        self.withdrawn = False
        self.asking_lock = threading.Lock()  # a withdrawal never reaches a later check

    def close(self) -> None:
        with self.lock:
            self._drop()

    def withdraw(self) -> bool:
        """Withdraw the kept check a person is being asked about (Ctrl-C at the terminal, S10):
        the daemon reads end of file and records the command as withdrawn. True if one was."""
        with self.asking_lock:
            conn = self.conn
            if not self.asking or conn is None:
                return False
            self.withdrawn = True
            try:
                conn.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            return True

    def _drop(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except OSError:
                pass
        self.conn = None

    def check(
        self,
        command: str,
        *,
        cwd: str,
        session: str,
        can_ask: bool,
        operator: str,
        on_interim: Callable[[dict[str, Any]], None] | None = None,
    ) -> client.CheckResult:
        """The gate's answer to ``command``. Never raises; anything but a clear allow refuses."""
        if not self.lock.acquire(blocking=False):
            return self._fresh(command, cwd, session, can_ask, operator, on_interim)
        try:
            return self._kept(command, cwd, session, can_ask, operator, on_interim)
        finally:
            with self.asking_lock:
                self.asking = False
            self.lock.release()

    def _fresh(
        self,
        command: str,
        cwd: str,
        session: str,
        can_ask: bool,
        operator: str,
        on_interim: Callable[[dict[str, Any]], None] | None,
    ) -> client.CheckResult:
        return client.check(
            command,
            cwd=cwd,
            session=session,
            surface="pty",
            can_ask=can_ask,
            on_interim=on_interim,
            operator=operator,
        )

    def _kept(
        self,
        command: str,
        cwd: str,
        session: str,
        can_ask: bool,
        operator: str,
        on_interim: Callable[[dict[str, Any]], None] | None,
    ) -> client.CheckResult:
        now = time.monotonic()
        if self.conn is not None and now - self.used > FRESH_S:
            self._drop()
        request_id = next(self.ids)
        message: dict[str, Any] = {
            "op": "check",
            "id": request_id,
            "command": command,
            "cwd": cwd,
            "surface": "pty",
            "pid": os.getpid(),
            "session": session,
            "can_ask": can_ask,
        }
        if operator:
            message["operator"] = operator
        if self.conn is None:
            try:
                self.conn, _ = client._connect("check", start=True, first=message)
            except client.DaemonUntrusted:
                return self._fresh(command, cwd, session, can_ask, operator, on_interim)
            except client.DaemonUnavailable:
                return self._fresh(command, cwd, session, can_ask, operator, on_interim)
        else:
            try:
                self.conn.send(message)
            except client.DaemonLost:
                self._drop()
                return self._fresh(command, cwd, session, can_ask, operator, on_interim)
        self.asking = self.withdrawn = False
        try:
            for reply in self.conn.lines(client.IDLE_TIMEOUT_S):
                if "welcome" in reply:
                    continue
                if reply.get("interim"):
                    if reply.get("interim") == "waiting":
                        with self.asking_lock:
                            self.asking = True
                    if on_interim is not None:
                        on_interim(reply)
                    continue
                if reply.get("id") == request_id and ("re" in reply or "ok" in reply):
                    self.used = time.monotonic()
                    if self.withdrawn:  # its sending side is closed: never used again
                        self._drop()
                    return client.CheckResult.from_reply(reply)
            raise client.DaemonLost("the daemon closed the connection before answering")
        except client.DaemonLost as exc:
            self._drop()
            if self.withdrawn:
                return client.CheckResult.refused(WITHDRAWN)
            return client.CheckResult.refused(
                f"gatesh: the gate daemon stopped answering while deciding ({exc}), so the "
                "command was refused and nothing ran. Run it again: the daemon restarts on the "
                "next command."
            )
        except Exception as exc:  # a bug here must refuse, never allow
            self._drop()
            return client.CheckResult.refused(
                f"gatesh: the gate's connection failed ({type(exc).__name__}: {exc}), so nothing ran."
            )

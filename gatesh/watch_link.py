"""The watcher's connection to the daemon (S7, S9.2): one socket, events and replies read on a
thread, requests matched to their replies by ``id``.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any, Final

from gatesh._errors import SetupError
from gatesh.daemon.protocol import Op
from gatesh.events import Event, decode
from gatesh.people import HumanReply
from gatesh.wire_json import request_object

__all__ = ["REQUEST_TIMEOUT_S", "Link", "LinkError"]

# How long a request on the watcher's connection may wait for its reply. Human ops are quick
# (the daemon only checks the ancestry); a daemon silent this long is treated as lost.
REQUEST_TIMEOUT_S: Final = 30.0


class LinkError(SetupError):
    """The daemon refused this watcher, or answered the subscription with an error."""


class Link:
    """The watcher's one connection: events and replies arrive on a reader thread, each decoded
    once (an event into :class:`gatesh.events.Event`, a reply into
    :class:`gatesh.people.HumanReply`); typed requests are sent from any thread and matched to
    their replies by ``id``.

    Guarantees: :meth:`request` returns None (never raises) when the connection is gone or the reply
    does not come within :data:`REQUEST_TIMEOUT_S`; ``closed`` is set once the reader stops.
    """

    def __init__(self, on_event: Callable[[Event], None], role: str = "watch") -> None:
        self.on_event = on_event
        self.role = role
        self.closed = threading.Event()
        self.why = ""
        self._conn: Any = None
        self._ids = itertools.count(1)
        self._waiting: dict[int, list[HumanReply]] = {}
        self._ready: dict[int, threading.Event] = {}
        self._lock = threading.Lock()

    def open(self, *, start: bool = True) -> dict[str, Any]:
        """Connect (starting the daemon when absent), subscribe, and return the subscribe reply.

        Raises ``client.DaemonUnavailable``/``client.DaemonLost`` or :class:`LinkError`.
        """
        from gatesh import client

        conn, _ = client._connect(self.role, start=start)
        self._conn = conn
        self.closed.clear()
        try:
            conn.send({"op": "subscribe", "id": 0})
            lines = conn.lines(REQUEST_TIMEOUT_S)
            for msg in lines:
                if "welcome" in msg:
                    continue
                if msg.get("ok") is False:
                    raise LinkError(
                        str(msg.get("error") or "") or "the daemon refused this watcher"
                    )
                if msg.get("re") == "subscribe":
                    break
        except BaseException:
            conn.close()
            raise
        threading.Thread(target=self._read, name="gatesh-watch-reader", daemon=True).start()
        return msg

    def _read(self) -> None:
        from gatesh import client

        try:
            for msg in self._conn.lines(None):
                if "event" in msg:
                    event = decode(msg)  # an event of a kind this version does not know: skipped
                    if event is not None:
                        self.on_event(event)
                    continue
                rid = msg.get("id")
                with self._lock:
                    ready = self._ready.get(rid) if isinstance(rid, int) else None
                    if ready is not None:
                        self._waiting[rid].append(HumanReply.decode(msg))
                if ready is not None:
                    ready.set()
        except (client.DaemonLost, ValueError, OSError) as exc:
            self.why = str(exc)
        finally:
            self.closed.set()
            with self._lock:
                for ev in self._ready.values():
                    ev.set()

    def request(self, op: Op, request: object, pid: int) -> HumanReply | None:
        """Send ``request`` (a dataclass of :mod:`gatesh.daemon.requests`) as ``op``, claiming
        ``pid``, and wait for its reply; None when the daemon could not be asked."""
        if self._conn is None or self.closed.is_set():
            return None
        rid = next(self._ids)
        ready = threading.Event()
        with self._lock:
            self._ready[rid] = ready
            self._waiting[rid] = []
        try:
            self._conn.send(request_object(op, request, pid=pid, id=rid))
            ready.wait(REQUEST_TIMEOUT_S)
            with self._lock:
                got = self._waiting.get(rid) or []
            return got[0] if got else None
        except Exception:
            return None
        finally:
            with self._lock:
                self._ready.pop(rid, None)
                self._waiting.pop(rid, None)

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.sock.shutdown(2)
            except OSError:
                pass
            self._conn.close()

"""The watcher's connection to the daemon (S7, S9.2): one socket, events and replies read on a
thread, requests matched to their replies by ``id``.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from gatesh._errors import SetupError
from gatesh.daemon.protocol import Op
from gatesh.events import Event, decode, rounds_from, text_of
from gatesh.people import HumanReply
from gatesh.prompt import ALL_CHOICES, CAUTIOUS_CHOICES, RUN_ANYWAY, Prompt
from gatesh.wire_json import request_object

__all__ = [
    "REQUEST_TIMEOUT_S",
    "Halted",
    "Link",
    "LinkError",
    "Subscription",
    "Unseen",
    "subscription",
]

# How long a request on the watcher's connection may wait for its reply. Human ops are quick
# (the daemon only checks the ancestry); a daemon silent this long is treated as lost.
REQUEST_TIMEOUT_S: Final = 30.0


class LinkError(SetupError):
    """The daemon refused this watcher, or answered the subscription with an error."""


@dataclass(frozen=True)
class Halted:
    """A session halted when the watcher attached, and why."""

    session: str
    reason: str


@dataclass(frozen=True)
class Unseen:
    """A session-end observation said while nobody watched."""

    session: str
    observation: str


@dataclass(frozen=True)
class Subscription:
    """The subscribe reply as the watcher reads it: how many sessions are open, which are halted,
    the observations nobody saw, and the escalations open now as prompts."""

    sessions: int
    halted: tuple[Halted, ...]
    unseen: tuple[Unseen, ...]
    pending: tuple[Prompt, ...]


def subscription(reply: Mapping[str, object]) -> Subscription:
    """The subscribe reply (:class:`gatesh.daemon.replies.Subscribed` on the wire), read leniently:
    a part the daemon left out or sent odd is empty, a record of another shape is skipped."""
    sessions = [s for s in _list(reply.get("sessions")) if isinstance(s, dict)]
    unseen = [o for o in _list(reply.get("observations")) if isinstance(o, dict)]
    return Subscription(
        sessions=len(_list(reply.get("sessions"))),
        halted=tuple(
            Halted(text_of(s.get("session")), text_of(s.get("halt_reason")))
            for s in sessions
            if s.get("halted")
        ),
        unseen=tuple(
            Unseen(text_of(o.get("session")), text_of(o.get("observation")))
            for o in unseen
            if text_of(o.get("observation"))
        ),
        pending=tuple(
            _prompt(p)
            for p in _list(reply.get("pending"))
            if isinstance(p, dict) and text_of(p.get("pending_id"))
        ),
    )


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _prompt(p: Mapping[str, object]) -> Prompt:
    """An open escalation of the subscribe reply as the prompt the watcher asks."""
    choices = tuple(c for c in _list(p.get("choices")) or CAUTIOUS_CHOICES if c in ALL_CHOICES)
    entry = p.get("entry")
    prompt = Prompt(
        pending_id=text_of(p.get("pending_id")),
        session=text_of(p.get("session")),
        command=text_of(p.get("command")),
        cwd=text_of(p.get("cwd")),
        to_person_reason=text_of(p.get("reason")),
        kind=text_of(p.get("kind")) or "escalate",
        outcome=text_of(p.get("outcome")),
        reason=text_of(p.get("rating")),
        remedy=text_of(p.get("remedy")),
        stage=text_of(p.get("stage")),
        elsewhere=p.get("state") == "asking",
        surface=text_of(p.get("surface")),
        rounds=list(rounds_from(p.get("rounds"))),
        choices=tuple(str(c) for c in choices) or CAUTIOUS_CHOICES,
        entry=entry if isinstance(entry, str) else None,
    )
    if prompt.kind == "halt":
        prompt.choices = (RUN_ANYWAY, "no")
    return prompt


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

    def open(self, *, start: bool = True) -> Subscription:
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
        return subscription(msg)

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

"""The daemon's requests, one dataclass per op (see :mod:`gatesh.daemon.protocol`), each decoded
once from its JSON line by its own ``decode``: what the handlers read instead of the line.

Every ``decode`` reads :class:`~gatesh.daemon.protocol.Fields`, so a field that is missing or of
the wrong type is a ProtocolError naming it (an error reply, never a crash); nothing past
``decode`` looks at the JSON again.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass

from gatesh._errors import ProtocolError
from gatesh.daemon.protocol import OPS, Fields, Op
from gatesh.finish import Answer

__all__ = [
    "AnswerRequest",
    "CheckRequest",
    "EndRequest",
    "Envelope",
    "ExitedRequest",
    "MandateRequest",
    "NoFields",
    "PendingRequest",
    "RegisterRequest",
    "ResumeRequest",
    "TailRequest",
    "UndoRequest",
    "UndoStep",
]


@dataclass(frozen=True)
class Envelope:
    """What every request carries besides its op's fields: the op, the ``id`` its reply echoes
    (any JSON value), and the ``pid`` it claims (``absent`` when it names none)."""

    op: Op
    id: object
    pid: object
    absent_pid: bool

    @classmethod
    def decode(cls, f: Fields) -> Envelope:
        name = f.raw("op")
        if not isinstance(name, str) or name not in OPS:
            raise ProtocolError(f"unknown op {name!r}")
        missing = object()
        pid = f.raw("pid", missing)
        return cls(Op(name), f.raw("id"), None if pid is missing else pid, pid is missing)


@dataclass(frozen=True)
class NoFields:
    """A request with nothing to say but its op (``status``, ``captures``, ``ping``,
    ``subscribe``: a subscription takes every event)."""

    @classmethod
    def decode(cls, f: Fields) -> NoFields:
        return cls()


@dataclass(frozen=True)
class CheckRequest:
    """A ``check`` request: what the rest of the daemon reads instead of the message."""

    command: str
    cwd: str  # absolute
    session: str  # "" : grouped by the harness process (S9.3)
    surface: str
    # A surface that does not say it can ask its own person cannot (S11.4): the hook adapters
    # decide per harness and always say so; an unanswerable ask must never be offered instead.
    can_ask: bool
    cannot_run: str  # the client cannot run it (its shell is missing): refused undecided
    operator: str
    ticket: str  # a hook's ticket to redeem (gatesh.boundary.tickets)
    wraps: bool  # a hook whose harness runs the command it wraps
    exec: bool  # the client becomes the command
    terminal: bool = False  # the client says its input and output are a terminal (-c, shim)
    ruleset_fd: bool = False  # the client runs it: hand it the boundary's ruleset (S14)

    @classmethod
    def decode(cls, f: Fields) -> CheckRequest:
        """The request in ``f``; ProtocolError names the first field that is wrong."""
        command = f.text("command")
        cwd = f.text("cwd")
        if not os.path.isabs(cwd) or "\x00" in cwd:
            raise ProtocolError("field 'cwd' must be an absolute path")
        return cls(
            command=command,
            cwd=cwd,
            session=f.session(),
            surface=f.text("surface", default="-c")[:32],
            can_ask=f.flag("can_ask"),
            cannot_run=f.text("cannot_run", default="")[:1024],
            operator=f.text("operator", default=""),
            ticket=f.text("ticket", default=""),
            wraps=f.flag("wraps"),
            exec=f.is_true("exec"),
            terminal=f.is_true("terminal"),
            ruleset_fd=f.is_true("ruleset_fd"),
        )


@dataclass(frozen=True)
class TailRequest:
    """``tail``: the newest ``n`` audit records (at most 10,000)."""

    n: int = 20

    @classmethod
    def decode(cls, f: Fields) -> TailRequest:
        return cls(max(0, min(10_000, f.integer("n", default=20))))


@dataclass(frozen=True)
class RegisterRequest:
    """``register``: a PTY shell (``pid``, None: the connected process) is gated as ``session``;
    ``boundary``: the id of the boundary the shell runs in ("" none)."""

    session: str
    pid: int | None
    surface: str
    boundary: str = ""

    @classmethod
    def decode(cls, f: Fields) -> RegisterRequest:
        return cls(
            f.text("session"),
            f.maybe_integer("pid"),
            f.text("surface", default="pty"),
            f.text("boundary", default=""),
        )


@dataclass(frozen=True)
class EndRequest:
    """``end``: the session ended (its S6 observation)."""

    session: str

    @classmethod
    def decode(cls, f: Fields) -> EndRequest:
        return cls(f.text("session"))


@dataclass(frozen=True)
class PendingRequest:
    """``approve``, ``deny`` and ``withdraw``: a ruling (or its withdrawal) on one escalation;
    ``note`` is a denial's words to the agent."""

    pending_id: str
    note: str = ""

    @classmethod
    def decode(cls, f: Fields) -> PendingRequest:
        return cls(f.text("pending_id"), f.text("note", default=""))


_WORDS = frozenset(a.value for a in Answer)


@dataclass(frozen=True)
class AnswerRequest:
    """``answer``: a person's word on one escalation (one of :class:`gatesh.finish.Answer`)."""

    pending_id: str
    answer: Answer
    note: str = ""

    @classmethod
    def decode(cls, f: Fields) -> AnswerRequest:
        pending_id = f.text("pending_id")
        word = f.text("answer").strip().lower()
        if word not in _WORDS:
            raise ProtocolError(f"answer must be one of {', '.join(a.value for a in Answer)}")
        return cls(pending_id, Answer(word), f.text("note", default=""))


@dataclass(frozen=True)
class MandateRequest:
    """``mandate``: the user's own words (S5.3), for ``session`` ("" every session); ``channel``
    is the one a ``human`` client names (a watcher's words are always ``watch``)."""

    text: str
    session: str
    channel: str

    @classmethod
    def decode(cls, f: Fields) -> MandateRequest:
        text = f.text("text").strip()
        if not text:
            raise ProtocolError("field 'text' is empty")
        return cls(text, f.session(), f.text("channel", default="mandate"))


@dataclass(frozen=True)
class ResumeRequest:
    """``resume``: clear ``session``'s halt (S3.7)."""

    session: str

    @classmethod
    def decode(cls, f: Fields) -> ResumeRequest:
        return cls(f.text("session"))


class UndoStep(enum.StrEnum):
    """What an ``undo`` request asks (``do`` on the wire)."""

    LIST = "list"
    PLAN = "plan"
    RESTORE = "restore"


@dataclass(frozen=True)
class UndoRequest:
    """``undo`` (S17): list the snapshots (the newest ``n``; None: the verb's default), plan the
    restore of snapshot ``id``, or restore it when its state still has ``fingerprint``."""

    do: UndoStep
    n: int | None = None
    id: int = 0
    fingerprint: str = ""

    @classmethod
    def decode(cls, f: Fields) -> UndoRequest:
        what = f.text("do")
        if what == UndoStep.LIST:
            n = f.maybe_integer("n")
            return cls(UndoStep.LIST, None if n is None else max(0, n))
        shot_id = f.integer("id")
        if what == UndoStep.PLAN:
            return cls(UndoStep.PLAN, id=shot_id)
        if what != UndoStep.RESTORE:
            raise ProtocolError("field 'do' must be list, plan or restore")
        return cls(UndoStep.RESTORE, id=shot_id, fingerprint=f.text("fingerprint"))


@dataclass(frozen=True)
class ExitedRequest:
    """``exited``: how bounded run ``run`` ended (``status`` and ``signal`` both None: it never
    started)."""

    run: str
    status: int | None
    signal: int | None

    @classmethod
    def decode(cls, f: Fields) -> ExitedRequest:
        return cls(f.text("run"), f.maybe_integer("status"), f.maybe_integer("signal"))

"""The human-only verbs (S9.5): ``gatesh mandate``, ``approve``, ``deny`` and ``resume``.

Each sends one daemon op as the ``human`` role, on the person's channel, and prints what happened.
The daemon is the authority on who may use them: it refuses any client started by a command the gate
let run (the gate's mark), inside a boundary, or whose process ancestry holds a gated session, and
these functions only report that refusal (exit 1), never work around it.

Guarantees:

- Exit 0 only when the daemon accepted the op; 1 when it refused it, failed, or could not be
  reached; 2 for bad usage.
- Nothing here rules on anything itself: an unreachable daemon approves nothing.
- Text the agent or a model wrote (a command in a reply) is neutralised before it is printed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TextIO, TypeVar, cast

from gatesh._errors import EXIT_ERROR, EXIT_OK, GateshError
from gatesh.daemon.protocol import Op
from gatesh.daemon.requests import MandateRequest, PendingRequest, ResumeRequest
from gatesh.render import neutralise
from gatesh.wire_json import WireError, from_wire, request_object

__all__ = [
    "HUMAN_ONLY_HINT",
    "HumanReply",
    "approve_main",
    "deny_main",
    "describe_refusal",
    "human_request",
    "mandate_main",
    "resume_main",
]

T = TypeVar("T")

HUMAN_ONLY_HINT: Final = (
    "Human-only verbs (mandate, approve, deny, resume, undo, answering a prompt) work only from a "
    "person's own terminal, outside any gated session: run it in a terminal the agent did not start."
)


class HumanOpFailed(GateshError):
    """The daemon could not be reached, or refused or failed the op. ``str()`` says why."""

    def __init__(self, message: str, *, refused: bool = False) -> None:
        super().__init__(message)
        self.refused = refused


@dataclass(frozen=True)
class HumanReply:
    """The daemon's reply to a human-only op, decoded once: the fields these verbs and the
    watcher read (the rest of a reply, an undo's plan, is its own verb's)."""

    ok: bool
    refused: bool = False  # refused because of who asked (S9.5), not failed
    error: str = ""
    text: str = ""  # what a ruling did, in words
    state: str = ""  # the pending record's state after a ruling
    action: str = ""
    session: str = ""
    was_halted: bool = False
    sessions: tuple[str, ...] = ()  # the sessions a mandate reached

    @classmethod
    def decode(cls, reply: Mapping[str, Any]) -> HumanReply:
        """The reply in one decoded JSON object; an odd field is its default."""

        def text(name: str) -> str:
            value = reply.get(name)
            return str(value) if value else ""

        sessions = reply.get("sessions")
        return cls(
            ok=bool(reply.get("ok")),
            refused=bool(reply.get("refused")),
            error=text("error"),
            text=reply["text"] if isinstance(reply.get("text"), str) else "",
            state=text("state"),
            action=text("action"),
            session=text("session"),
            was_halted=bool(reply.get("was_halted")),
            sessions=tuple(str(x) for x in sessions) if isinstance(sessions, list) else (),
        )


def describe_refusal(verb: str, reply: HumanReply) -> str:
    """The person-facing text for a refused or failed human op (one paragraph)."""
    error = neutralise(reply.error or "the daemon gave no reason")
    error = error[len("refused: ") :] if error.startswith("refused: ") else error
    if reply.refused:
        return f"gatesh {verb}: the gate refused this: {error}.\n{HUMAN_ONLY_HINT}"
    return f"gatesh {verb}: {error}"


def human_request(verb: str, op: Op, request: object, answer: type[T]) -> T:
    """Send ``request`` (a dataclass of :mod:`gatesh.daemon.requests`) as the human-only ``op``
    and return the daemon's reply, decoded once into ``answer``: a :class:`HumanReply` (the
    fields the verbs read, an odd one its default), or a reply of :mod:`gatesh.daemon.replies`
    (:func:`gatesh.wire_json.from_wire`).

    Raises HumanOpFailed (``refused`` set for an S9.5 refusal) for anything but an accepted op,
    including an unreachable daemon and a reply that is not ``answer``. The request carries this
    process's pid, which the daemon checks against the socket's peer.
    """
    from gatesh import client

    try:
        reply = client.request("human", request_object(op, request))
    except (client.DaemonUnavailable, client.DaemonLost) as exc:
        raise HumanOpFailed(
            f"gatesh {verb}: the gate daemon could not be reached ({exc})"
        ) from None
    decoded = HumanReply.decode(reply)
    if not decoded.ok:
        raise HumanOpFailed(describe_refusal(verb, decoded), refused=decoded.refused)
    if answer is HumanReply:
        return cast("T", decoded)
    try:
        return from_wire(answer, reply)
    except WireError as exc:
        raise HumanOpFailed(
            f"gatesh {verb}: the daemon's reply could not be read ({exc})"
        ) from None


def _run(
    verb: str,
    op: Op,
    request: object,
    describe: Callable[[HumanReply], str],
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Send ``request`` (a dataclass of :mod:`gatesh.daemon.requests`) as ``op`` and print what
    ``describe`` makes of the reply; a refusal or failure on stderr (exit 1)."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        reply = human_request(verb, op, request, HumanReply)
    except HumanOpFailed as exc:
        err.write(f"{exc}\n")
        return EXIT_ERROR
    out.write(describe(reply) + "\n")
    return EXIT_OK


def ruling_text(verb: str, pending_id: str, reply: HumanReply) -> str:
    """What an approve/deny reply means, in one line."""
    if reply.text:
        return f"{pending_id}: {neutralise(reply.text)}"
    state = reply.state or reply.action or "done"
    if verb == "approve":
        return f"{pending_id}: approved ({state}); the waiting command runs now"
    return f"{pending_id}: denied ({state}); the agent is told a person refused it"


def mandate_main(argv: list[str]) -> int:
    """``gatesh mandate TEXT [--session S]``: the user's own words for the alignment check (S5.3)."""
    parser = argparse.ArgumentParser(
        prog="gatesh mandate",
        description="Tell the gate what you asked the agent to do. Only a person's own terminal "
        "may do this (S9.5); the words reach the alignment check as the user's own (S5.3).",
    )
    parser.add_argument("text", nargs="+", help="what you asked the agent to do")
    parser.add_argument("--session", default="", help="only this session (default: every session)")
    args = parser.parse_args(argv)
    text = " ".join(args.text).strip()
    if not text:
        parser.error("the mandate is empty")

    def describe(reply: HumanReply) -> str:
        where = (
            f"session {args.session}"
            if args.session
            else (f"every session ({len(reply.sessions)} now, and those started later)")
        )
        return f"mandate recorded for {where}: {neutralise(text)}"

    return _run("mandate", Op.MANDATE, MandateRequest(text, args.session, "mandate"), describe)


def _ruling_main(verb: str, argv: list[str]) -> int:
    help_text = {
        "approve": "Approve a pending or refused escalation: the exact command runs (once) when "
        "the agent is waiting, or the next time the agent retries it.",
        "deny": "Refuse a pending escalation: the agent is told a person refused it.",
    }[verb]
    parser = argparse.ArgumentParser(prog=f"gatesh {verb}", description=help_text)
    parser.add_argument("id", help="the pending id (shown in the refusal and by gatesh watch)")
    args = parser.parse_args(argv)
    pending_id = args.id.strip().lower()
    op = Op.APPROVE if verb == "approve" else Op.DENY
    return _run(verb, op, PendingRequest(pending_id), lambda r: ruling_text(verb, pending_id, r))


def approve_main(argv: list[str]) -> int:
    """``gatesh approve ID``: an approved id lets that exact command run once."""
    return _ruling_main("approve", argv)


def deny_main(argv: list[str]) -> int:
    """``gatesh deny ID``: refuse a pending or refused escalation for good."""
    return _ruling_main("deny", argv)


def resume_main(argv: list[str]) -> int:
    """``gatesh resume SESSION``: end a halt (S3.7); the session's commands are gated again."""
    parser = argparse.ArgumentParser(
        prog="gatesh resume",
        description="Resume a halted session: its commands are gated normally again (S3.7).",
    )
    parser.add_argument("session", help="the session id (shown by gatesh watch and gatesh status)")
    args = parser.parse_args(argv)

    def describe(reply: HumanReply) -> str:
        sid = neutralise(reply.session or args.session)
        if reply.was_halted:
            return f"session {sid} resumed: its commands are gated normally again"
        return f"session {sid} was not halted; nothing changed"

    return _run("resume", Op.RESUME, ResumeRequest(args.session), describe)

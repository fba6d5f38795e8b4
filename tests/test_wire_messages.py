"""The daemon's typed messages: every op is routed with its request's decoder, each request is
decoded once with clear errors, replies and events encode to the wire's field names and read back."""

from __future__ import annotations

import json

import pytest

from gatesh._errors import ProtocolError
from gatesh._types import Action, Outcome, Round
from gatesh.check_reply import CheckReply, DecisionSummary
from gatesh.daemon import protocol as P
from gatesh.daemon.publish import EscalationEvent, ExpiredEvent, SessionStartEvent
from gatesh.daemon.replies import Ruled
from gatesh.daemon.requests import (
    AnswerRequest,
    CheckRequest,
    Envelope,
    ExitedRequest,
    MandateRequest,
    UndoRequest,
    UndoStep,
)
from gatesh.daemon.server import ROUTES
from gatesh.events import By, Kind, decode
from gatesh.finish import Answer
from gatesh.pending import PendingState
from gatesh.wire_json import WireError, from_wire, request_object, wire_value


def fields(**raw: object) -> P.Fields:
    return P.decode(json.dumps(raw).encode())


def test_every_op_has_a_route() -> None:
    assert set(ROUTES) == set(P.Op)


@pytest.mark.parametrize(
    ("decode", "raw", "error"),
    [
        (CheckRequest.decode, {"cwd": "/"}, "missing field 'command'"),
        (CheckRequest.decode, {"command": "ls", "cwd": "rel"}, "absolute path"),
        (CheckRequest.decode, {"command": 5, "cwd": "/"}, "field 'command' must be str"),
        (CheckRequest.decode, {"command": "ls", "cwd": "/", "session": "a\nb"}, "printable"),
        (AnswerRequest.decode, {"pending_id": "abc", "answer": "maybe"}, "answer must be one of"),
        (MandateRequest.decode, {"text": "   "}, "field 'text' is empty"),
        (UndoRequest.decode, {"do": "list", "n": True}, "field 'n' must be int"),
        (UndoRequest.decode, {"do": "burn", "id": 1}, "must be list, plan or restore"),
        (UndoRequest.decode, {"do": "restore", "id": 1}, "missing field 'fingerprint'"),
        (ExitedRequest.decode, {"run": "r", "status": "0"}, "field 'status' must be int"),
        (Envelope.decode, {"op": "launch"}, "unknown op 'launch'"),
    ],
)
def test_a_bad_request_names_what_is_wrong(
    decode: object, raw: dict[str, object], error: str
) -> None:
    with pytest.raises(ProtocolError, match=error):
        decode(fields(**raw))  # type: ignore[operator]


def test_requests_decode_once_into_their_types() -> None:
    req = CheckRequest.decode(fields(command="ls", cwd="/", exec=True, ruleset_fd=True))
    assert (req.command, req.surface, req.exec, req.ruleset_fd, req.can_ask) == (
        "ls",
        "-c",
        True,
        True,
        False,
    )
    answer = AnswerRequest.decode(fields(pending_id="abc", answer=" Deny Always "))
    assert answer.answer is Answer.DENY_ALWAYS
    assert UndoRequest.decode(fields(do="list")) == UndoRequest(UndoStep.LIST)
    env = Envelope.decode(fields(op="ping", id=[1]))
    assert (env.op, env.id, env.absent_pid) == (P.Op.PING, [1], True)


def test_a_client_request_is_what_the_daemon_decodes() -> None:
    sent = MandateRequest("fix the tests", "s1", "mandate")
    raw = request_object(P.Op.MANDATE, sent, pid=7)
    assert raw == {
        "op": "mandate",
        "text": "fix the tests",
        "session": "s1",
        "channel": "mandate",
        "pid": 7,
    }
    assert MandateRequest.decode(P.Fields(raw)) == sent


def test_a_reply_line_carries_re_id_ok_and_leaves_unsaid_parts_out() -> None:
    line = json.loads(P.reply_line(P.Op.DENY, 3, Ruled("abc", PendingState.DENIED)))
    assert line == {"re": "deny", "id": 3, "ok": True, "pending_id": "abc", "state": "denied"}
    reply = CheckReply(Action.ALLOW, "", 0, "", "", "", "s", "bash", DecisionSummary("ticket"))
    wire = json.loads(P.reply_line(P.Op.CHECK, None, reply))
    assert "id" not in wire and "boundary" not in wire and "state" not in wire
    assert wire["action"] == "allow" and wire["decision"]["stage"] == "ticket"
    assert from_wire(CheckReply, wire) == reply


def test_events_encode_as_the_subscriber_decodes_them() -> None:
    rnd = Round("git reset --hard", "why", Outcome.DESTRUCTIVE, "loses work")
    ev = EscalationEvent("abc", "halt", command="rm -rf x", rounds=(rnd,), choices=("once", "no"))
    raw = json.loads(P.event_line(ev.KIND, "s1", ev))
    assert raw["event"] == "escalation" and raw["kind"] == "halt" and "pending_kind" not in raw
    got = decode(raw)
    assert got is not None and got.kind is Kind.ESCALATION
    assert (got.pending_kind, got.session, got.rounds) == ("halt", "s1", (rnd,))
    start = json.loads(P.event_line(Kind.SESSION_START, "s1", SessionStartEvent(4, "pty")))
    assert "boundary" not in start and start["anchor"] == 4
    expired = json.loads(P.event_line(Kind.EXPIRED, None, ExpiredEvent("abc")))
    assert "session" not in expired and "why" not in expired


def test_who_ruled_keeps_its_op_only_when_said() -> None:
    assert wire_value(By(1000, 42, "human")) == {"uid": 1000, "pid": 42, "role": "human"}
    assert wire_value(By(1000, 42, "human", "answer"))["op"] == "answer"  # type: ignore[index]


def test_a_reply_of_another_shape_is_refused_by_name() -> None:
    with pytest.raises(WireError, match="Ruled: missing field 'state'"):
        from_wire(Ruled, {"pending_id": "abc"})
    with pytest.raises(WireError, match=r"Ruled\.state"):
        from_wire(Ruled, {"pending_id": "abc", "state": "maybe"})

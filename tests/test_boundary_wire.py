"""The boundary's wire record (gatesh.boundary._spec.Spec, S16): what the gate draws travels to
the client as JSON and is decoded there once; a spec that is not exactly the record's form is
refused with a message that says why, before anything is built or run (fail closed).

Which malformed specs are refused: another wire version; a member missing; a member the record
does not know (it could be a restriction this client would drop); a value of another type; an
ABI that is no positive integer; a place that is no absolute path; a port, scope, limit or
environment variable that is not one the boundary draws; a handed ruleset without its count.
"""

from __future__ import annotations

import json

import pytest

from gatesh._errors import BoundaryError
from gatesh._types import Action
from gatesh.boundary._spec import HANDED, Ports, Rules, Spec
from gatesh.check_reply import CheckReply, DecisionSummary
from gatesh.wire_json import WireError, from_wire, wire_value

LIMITS = (("nproc", 4096), ("data", 8 << 30), ("fsize", 4 << 30), ("cpu", 3600))
SPEC = Spec(
    Rules(
        abi=4,
        read=("/usr", "/etc"),
        write=("/w", "/tmp"),
        list=("/",),
        net=Ports(),
        scope=("signal", "abstract-unix"),
    ),
    limits=LIMITS,
    env=(("TMPDIR", "/tmp/gatesh-tmp-1"), ("TMPPREFIX", "/tmp/gatesh-tmp-1/zsh")),
    id="b-0123456789",
    note="ran inside its boundary",
)


def _json(spec: Spec) -> dict[str, object]:
    """The spec as it arrives: encoded, through JSON text, parsed."""
    out = json.loads(json.dumps(spec.encode()))
    assert isinstance(out, dict)
    return out


def test_a_spec_reads_back_equal_through_json() -> None:
    assert Spec.decode(_json(SPEC)) == SPEC
    handed = SPEC.handing(12)
    got = Spec.decode(_json(handed))
    assert got == handed and got.handed == 12 and got.rules.read == got.rules.write == ()
    assert got.rules.abi == 4 and got.rules.net == Ports() and got.rules.scope == SPEC.rules.scope
    assert handed.rules == Rules(4, net=Ports(), scope=SPEC.rules.scope)
    assert SPEC.noted("other").note == "other" and SPEC.noted("other").rules == SPEC.rules
    open_net = Spec(Rules(6), LIMITS)
    assert Spec.decode(_json(open_net)).rules.net is None
    assert hash(Spec.decode(_json(SPEC))) == hash(SPEC)
    with pytest.raises(AttributeError):
        SPEC.note = "x"  # type: ignore[misc]


def test_the_json_form_is_the_one_every_client_reads() -> None:
    """The members and their order are what clients of this wire version read (a form that
    changes must change :data:`WIRE_VERSION` with every producer and consumer)."""
    assert list(SPEC.encode()) == [
        "v",
        "abi",
        "list",
        "read",
        "write",
        "net",
        "scope",
        "limits",
        "env",
        "id",
        "note",
    ]
    handed = SPEC.handing(3).encode()
    assert list(handed)[-2:] == ["ruleset", "rules"] and handed["ruleset"] == HANDED
    assert not {"list", "read", "write"} & set(handed)
    assert SPEC.encode()["net"] == {"connect": [], "bind": []}


def _without(key: str) -> dict[str, object]:
    return {k: v for k, v in _json(SPEC).items() if k != key}


MALFORMED = {
    "not an object": ["v", 1],
    "no version": _without("v"),
    "another version": _json(SPEC) | {"v": 2},
    "a version as text": _json(SPEC) | {"v": "1"},
    "a version as a boolean": _json(SPEC) | {"v": True},
    "no abi": _without("abi"),
    "no places": _without("write"),
    "no limits": _without("limits"),
    "no environment": _without("env"),
    "no network": _without("net"),
    "no note": _without("note"),
    "an unknown member": _json(SPEC) | {"deny": ["/home"]},
    "abi 0": _json(SPEC) | {"abi": 0},
    "abi negative": _json(SPEC) | {"abi": -1},
    "abi as text": _json(SPEC) | {"abi": "4"},
    "abi as a boolean": _json(SPEC) | {"abi": True},
    "places as text": _json(SPEC) | {"write": "/w"},
    "places null": _json(SPEC) | {"read": None},
    "a relative place": _json(SPEC) | {"write": ["w"]},
    "a place with a NUL": _json(SPEC) | {"list": ["/a\x00b"]},
    "a place as a number": _json(SPEC) | {"read": [7]},
    "a network as a list": _json(SPEC) | {"net": []},
    "a network missing bind": _json(SPEC) | {"net": {"connect": []}},
    "a network with more": _json(SPEC) | {"net": {"connect": [], "bind": [], "udp": []}},
    "a port out of range": _json(SPEC) | {"net": {"connect": [70000], "bind": []}},
    "a port as a boolean": _json(SPEC) | {"net": {"connect": [], "bind": [True]}},
    "an unknown scope": _json(SPEC) | {"scope": ["signal", "ptrace"]},
    "a scope as a number": _json(SPEC) | {"scope": [1]},
    "a limit missing": _json(SPEC) | {"limits": dict(LIMITS[:3])},
    "an unknown limit": _json(SPEC) | {"limits": dict(LIMITS) | {"nofile": 5}},
    "a zero limit": _json(SPEC) | {"limits": dict(LIMITS) | {"cpu": 0}},
    "a limit as text": _json(SPEC) | {"limits": dict(LIMITS) | {"data": "8G"}},
    "a limit as a boolean": _json(SPEC) | {"limits": dict(LIMITS) | {"fsize": True}},
    "limits as a list": _json(SPEC) | {"limits": [["cpu", 1]]},
    "an unknown variable": _json(SPEC) | {"env": {"LD_PRELOAD": "/tmp/x.so"}},
    "a relative temporary folder": _json(SPEC) | {"env": {"TMPDIR": "tmp"}},
    "an id as a number": _json(SPEC) | {"id": 5},
    "a note as null": _json(SPEC) | {"note": None},
    "handed without its count": {k: v for k, v in _json(SPEC.handing(3)).items() if k != "rules"},
    "handed with a negative count": _json(SPEC.handing(3)) | {"rules": -1},
    "handed as another word": _json(SPEC.handing(3)) | {"ruleset": "path"},
    "handed and its places": _json(SPEC.handing(3)) | {"write": ["/w"]},
}


@pytest.mark.parametrize("raw", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_spec_is_refused_with_a_reason(raw: object) -> None:
    with pytest.raises(BoundaryError, match=r"^the boundary"):
        Spec.decode(raw)


def test_a_refusal_says_what_is_wrong() -> None:
    def why(raw: object) -> str:
        with pytest.raises(BoundaryError) as got:
            Spec.decode(raw)
        return str(got.value)

    assert why(MALFORMED["another version"]) == "the boundary's wire version is 2, not 1"
    assert why(MALFORMED["no limits"]) == "the boundary lacks limits"
    assert why(MALFORMED["an unknown member"]) == "the boundary has unknown ['deny']"
    assert "ABI" in why(MALFORMED["abi 0"]) and "'ptrace'" in why(MALFORMED["an unknown scope"])
    assert "'LD_PRELOAD'" in why(MALFORMED["an unknown variable"])


def test_the_check_reply_carries_the_spec_as_its_json_form() -> None:
    reply = CheckReply(
        Action.ALLOW, "", 0, "", "", "", "s", "bash", DecisionSummary("ticket"), boundary=SPEC
    )
    wire = wire_value(reply)
    assert isinstance(wire, dict) and wire["boundary"] == SPEC.encode()
    assert from_wire(CheckReply, json.loads(json.dumps(wire))) == reply
    with pytest.raises(WireError, match=r"CheckReply\.boundary"):
        from_wire(CheckReply, wire | {"boundary": MALFORMED["another version"]})


def test_the_wire_names_only_what_the_kernel_side_knows() -> None:
    """The record's scope and limit names are the ones the kernel side turns into flags and
    resource numbers: a name one side added and the other did not would be refused or ignored."""
    from gatesh.boundary import _kernel, _spec

    assert set(_spec.SCOPE_NAMES) == set(_kernel._SCOPES)
    assert set(_spec.LIMIT_NAMES) == set(_kernel._RLIMITS)

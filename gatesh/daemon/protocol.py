"""The daemon's wire protocol (S9.2): newline-delimited JSON over a Unix socket, version 1.

Standard library only. ``gatesh.client`` repeats the few constants it needs (it may import nothing
from gatesh but ``_paths``); ``tests/test_client.py`` pins them equal.

Connection
==========

1. The client sends ``{"v": 1, "hello": ROLE, "pid": PID, "request_follows"?: BOOL,
   "token"?: STR}``. ROLE is one of :data:`ROLES`: ``check`` (the ``-c`` client, in-shell hooks,
   hook adapters), ``watch``, ``human`` (the human-only verbs), ``admin`` (status, log, dump).
   ``pid`` is the client's own pid. The daemon listens on two sockets: its socket file, for every
   role but ``watch`` and ``human``, and the person's channel (:func:`person_address`, an
   abstract socket), for ``watch``, ``human`` and ``admin`` only; there a client of the daemon's
   own uid must bring ``token``, the content of :data:`TOKEN_FILE` in the socket folder.
2. The daemon checks the peer with ``SO_PEERCRED``: the uid must be the daemon's own, or listed in
   ``watchers`` (S9.6) for the roles ``watch``/``human``/``admin``. It answers
   ``{"v": 1, "welcome": ROLE, "daemon_pid": N, "version": "…"}`` or an error reply and closes.
   A client may send its first request right behind the hello without waiting for the welcome;
   one that does and says so (``"request_follows": true`` in the hello) gets the welcome in the
   same write as the first line sent back (an interim line or the reply), not on its own.
3. Requests follow, one JSON object per line: ``{"op": OP, "id"?: ANY, …}``. Each gets exactly one
   final reply ``{"re": OP, "id"?: ANY, "ok": true, …}``; a check may be preceded by interim lines
   ``{"re": "check", "interim": "waiting"|"working", "message"?: …}`` (a person is being asked;
   a heartbeat every :data:`HEARTBEAT_S` while a decision is in progress).
4. Any bad input — invalid UTF-8, a line over :data:`MAX_LINE` bytes, broken JSON, nesting too
   deep, a non-object, an unknown op, a field of the wrong type — gets an error reply
   ``{"re": OP|null, "ok": false, "error": TEXT, "action": "refuse", "exit": 126, "message": TEXT}``
   (so a check client always reads a refusal). A line over the limit or a bad hello also closes
   the connection. The daemon never crashes on input.

Each request is decoded once, by its op's dataclass in :mod:`gatesh.daemon.requests` (reading
:class:`Fields`), and each reply is a dataclass of :mod:`gatesh.daemon.replies`, encoded once by
:func:`reply_line` (with :mod:`gatesh.wire_json`): nothing past these reads or writes the JSON.

Ops
===

``check`` — ``{"op": "check", "command": STR, "cwd": ABS_PATH, "session"?: STR|null,
"surface": "-c"|"pty"|"hook"|"git-hook"|…, "pid": INT, "can_ask"?: BOOL, "exec"?: BOOL}`` →
``{"action": "allow"|"reject"|"escalate"|"halt"|"deny"|"refuse", "message": STR, "exit": 0|126,
"pending_id": STR, "notice": STR, "session": STR, "shell": "bash"|"zsh",
"decision": {"stage", "outcome", "rung", "rule_id", "reason", "remedy", "to_person_reason",
"counters", "answer"}}`` (``answer``: a person's ruling on it, "" when nobody was asked).
``session`` absent: the daemon groups by the harness process (S9.3). ``exit`` is 0 only for
``allow``. ``exec``: the client becomes the command (the ``-c`` client): the daemon gives it the
gate's mark before it answers. ``can_ask``: the surface can ask its own person (a PTY whose
operator is a person, a hook that answers ``ask``); with no watcher an escalation then returns
``action: "escalate"`` with a pending id and the escalation block as ``message``, and the surface
sends ``answer``. Otherwise an escalation waits for a watcher (at most ``escalation.timeout_s``) or,
with none, is refused at once with the no-person message (S7).

``exited`` — ``{"op": "exited", "run": STR, "status": INT|null, "signal": INT|null}`` → ``{}``:
how a bounded command ended (S16): ``run`` is the check reply's, and only the process that
made that check may report it (its pid, from ``SO_PEERCRED``); ``status`` and ``signal`` both
null: it never started (its boundary could not be set up). Written to the audit log as an
``exited`` line naming the run, its boundary and how it ended. A check reply that allows a
bounded command adds ``"boundary": {…}`` (:class:`gatesh.boundary._spec.Spec`: every member
required, none other read; the client refuses one that does not decode) and ``"run": STR``. A check that says ``"ruleset_fd": true`` (a client on Linux that
runs the command itself) gets the boundary's Landlock ruleset built by the daemon, as a file
descriptor (``SCM_RIGHTS``) with the reply's first bytes, and a wire form without its places
(``"ruleset": "fd"``, ``"rules": N``; :mod:`gatesh.boundary.handoff`).

``status`` → ``{"daemon": {...}, "sessions": [...], "pending": [...], "watchers": N, "totals": {...}}``.

``tail`` — ``{"n": INT}`` → ``{"records": [audit records, oldest first]}``.

``captures`` → ``{"captures": [...]}`` (the model-call ring for ``gatesh dump``, redacted).

``subscribe`` — ``{"events"?: [KIND, ...]}`` → ``{"subscribed": true, "sessions": [...],
"pending": [...] (each with its argument: "rounds", "stage", "rating", "remedy"), "observations":
[{"session", "observation", "counters"}] (session-end observations said while nobody watched, given
once, to the first watcher that attaches)}`` then event lines (below) until the connection closes. A subscriber counts as a
watcher (a person is reachable) only when its hello role is ``watch``. A subscriber whose unsent
events exceed ``gatesh.daemon.core.SUBSCRIBER_BUFFER`` bytes is disconnected, never waited for.

Human-only ops (S9.5), heard only on the person's channel, and refused unless ``pid`` is the peer's
own pid, the peer carries neither the gate's mark nor a boundary's ``no_new_privs``
(:func:`gatesh._person.mark_of`: every command a ``-c`` client or a PTY shell runs, and all it
starts, however detached), and no process in its ancestry belongs to a gated session
(``GATESH_SESSION`` in its environment, or a pid the daemon registered as gated). A ``watch``
connection's ``subscribe`` is refused the same way: a watcher is asked, and answers.

- ``answer`` — ``{"pending_id", "answer": "once"|"session"|"always"|"no"|"deny always"|"run anyway",
  "note"?, "pid"}`` (the words of :class:`gatesh.finish.Answer`) → for an escalation the surface
  asks its own person (``can_ask``), the ``check``-shaped result of the ruling (``allow``: send
  the check again, it runs once); for one a watcher is asked, ``{"pending_id", "state"}``.
- ``approve`` / ``deny`` — ``{"pending_id", "pid"}``: rule on a waiting escalation, or on one already
  refused (approve: the exact command may run once when the agent retries it).
- ``withdraw`` — ``{"pending_id", "pid"}``: the surface asking its own person (``can_ask``) was
  interrupted (Ctrl-C at a person's own prompt, S10): nobody rules on it any more → the
  ``check``-shaped refusal, audited as withdrawn; watchers get ``withdrawn``.
- ``mandate`` — ``{"text", "session"?, "channel"?, "pid"}`` → ``{"sessions", "admitted",
  "channel"}``: the user's own words (S5.3) for one session, or for every session (and sessions
  started later) when ``session`` is absent. ``channel`` names where the words came from: a
  ``watch`` connection's are always ``watch``; a ``human`` client names one of
  ``gatesh.negotiation.TRUSTED_CHANNELS`` other than ``watch`` (``mandate``, the default, for
  ``gatesh mandate``; ``claude-code-prompt``, ``codex-prompt``,
  ``gemini-prompt`` for the harness hooks). Any other channel is refused, and so, like every
  human-only op, is a client whose ancestry holds a gated session.
- ``resume`` — ``{"session", "pid"}``: clear a halt (S3.7).
- ``undo`` — ``{"do": "list", "n"?, "pid"}`` → ``{"snapshots": [...]}`` (newest first, each with
  what changed since); ``{"do": "plan", "id", "pid"}`` → ``{"plan": {...}}`` (what a restore would
  do, with the edits made after the command); ``{"do": "restore", "id", "fingerprint", "pid"}`` →
  ``{"restored": {... "undone_by": ID}}``, refused when the state changed since the plan with
  that fingerprint (S17, :mod:`gatesh.undo.ops`).

Session ops for surfaces: ``register`` ``{"session", "pid", "surface", "boundary"?}`` (a PTY shell
marks its pid as gated and names its session; ``boundary``, the id of the session's boundary its
agent's shell started in: its commands are then judged contained while that shell shows it) and ``end`` ``{"session"}`` (the session ended: S6 observation).
``ping`` → ``{"pong": true}``.

Events (one JSON object per line on a subscription)
===================================================

Every event has ``"event": KIND``, ``"time": EPOCH_SECONDS`` and ``"session": ID`` (except
``hello``). Text fields are redacted and home-folded; they are NOT neutralised (the watcher
renders them through :mod:`gatesh.render`).

- ``decision`` — every decision: ``{"cwd", "command", "surface", "action", "stage", "outcome",
  "reason", "remedy", "rule_id", "rung", "counters", "notice", "pending_id", "answer"}``.
- ``round`` — a round of the argument: ``{"cwd", "number", "total", "round": {"command",
  "justification", "outcome", "reason", "remedy", "passed", "suggestion"}, "ends": null|"agreed"|
  "accepted", "counters"?}``. Published for every rejection (``number`` = its position in the
  argument, ``counters`` the negotiation counts with their caps) and for an allowed command that
  ends an open argument (``passed`` true; ``ends`` says whether it was a command refused in any round
  of it, "agreed", or a different one, "accepted"); not for a command a person approved.
- ``escalation`` — a person is asked: ``{"pending_id", "cwd", "command", "stage", "outcome", "reason",
  "remedy", "to_person_reason", "rounds": [round, …] (the whole argument so far, whatever sent it
  to a person), "transcript": TEXT, "choices": [...],
  "timeout_s", "kind": "escalate"|"halt", "entry": STR, "asking": BOOL, "surface": STR}``
  (``asking``: the session's own surface asks its person too; ``surface`` says which: ``pty`` is a
  person's gated shell). ``entry`` is the exact pattern an
  ``always``/``deny always`` list entry is written with (the watcher writes it), "" when the command
  holds a secret. ``answer`` refuses an answer not in ``choices``. When the last watcher leaves,
  escalations waiting for one are refused at once (``expired``).
- ``answered`` — ``{"pending_id", "answer", "by": {"uid", "pid", "role"[, "op": "answer"]}}`` (``op``:
  answered with the ``answer`` op, not ``approve``/``deny``); ``expired`` —
  ``{"pending_id", "why"?}`` (nobody answered within the timeout, or — ``why`` says so — the
  harness where an ask was shown exited unanswered: refused, approvable later);
  ``withdrawn`` — ``{"pending_id"}`` (the waiting command was interrupted: nothing to answer).
- ``halt`` — ``{"cwd", "reason", "command", "pending_id", "choices", "timeout_s"}`` (S3.7): the
  attack banner, and, when a person can answer now, the halt's prompt: ``choices`` is
  ``["run anyway"]`` (``answer`` also takes ``no``), ``pending_id`` the id to answer. With a watcher
  the agent's check waits for it (``interim: "waiting"``) at most ``timeout_s``; ``run anyway``
  decides the command again and it runs once (never a hardline command), the session stays halted.
  ``pending_id`` is "" when nobody can answer now (refused at once; the check's reply still carries
  an id ``gatesh approve ID`` accepts: the agent's retry then runs once).
- ``resumed`` — ``{"by"}``; ``mandate`` — ``{"text", "channel"}``.
- ``notice`` — ``{"text"}``: one line for the person (alignment approval, carve-out, rater health).
- ``session_start`` — ``{"anchor", "surface"}``; ``session_end`` — ``{"observation": TEXT|null,
  "counters"}`` (the observation is counts only, said once per distinct state).
"""

from __future__ import annotations

import enum
import json
import time
from typing import Any, Final

from gatesh._errors import EXIT_REFUSED, ProtocolError
from gatesh.wire_json import reply_object, wire_value

VERSION: Final = 1
# One request line at most. A command is at most 64 KiB (S2); 1 MiB leaves room for JSON escaping
# (up to 6x for control characters) while bounding what one client can make the daemon buffer.
MAX_LINE: Final = 1024 * 1024
HEARTBEAT_S: Final = 10.0
# How deep a request's JSON may nest; deeper is refused before any field is read (S15).
MAX_DEPTH: Final = 32


class Role(enum.StrEnum):
    """Who a connection says it is in its hello (step 1 above)."""

    CHECK = "check"
    WATCH = "watch"
    HUMAN = "human"
    ADMIN = "admin"


class Op(enum.StrEnum):
    """The requests the daemon answers (see Ops above)."""

    CHECK = "check"
    STATUS = "status"
    TAIL = "tail"
    CAPTURES = "captures"
    SUBSCRIBE = "subscribe"
    REGISTER = "register"
    END = "end"
    PING = "ping"
    ANSWER = "answer"
    APPROVE = "approve"
    DENY = "deny"
    MANDATE = "mandate"
    RESUME = "resume"
    WITHDRAW = "withdraw"
    UNDO = "undo"
    EXITED = "exited"


ROLES: Final = frozenset(Role)
#: Roles heard only on the person's channel (S9.5): the human-only verbs and the watcher who
#: answers. The daemon's socket refuses them; the check role is refused on the person's channel.
PERSON_ROLES: Final = frozenset({Role.HUMAN, Role.WATCH})
#: The credential the person's channel asks of a client of the daemon's own uid, in the socket
#: folder (0600): where the boundary denies reads on a kernel that cannot scope abstract sockets.
TOKEN_FILE: Final = "person.token"


def person_address(socket_path: str) -> str:
    """The person's channel of the daemon listening on ``socket_path``: an abstract Unix socket
    (no file: nothing to write or remove), which a process inside a Landlock domain that scopes
    abstract sockets cannot connect to (ABI 6). Pinned equal to the client's copy by tests."""
    import hashlib

    return "\0gatesh-person-" + hashlib.sha256(socket_path.encode()).hexdigest()[:32]


# Refused unless the client's ancestry holds no gated session (S9.5).
HUMAN_OPS: Final = frozenset(
    {Op.ANSWER, Op.APPROVE, Op.DENY, Op.MANDATE, Op.RESUME, Op.WITHDRAW, Op.UNDO}
)
# Refused to a watcher uid (S9.6): only the daemon's own user decides and ends sessions.
OWNER_OPS: Final = frozenset({Op.CHECK, Op.REGISTER, Op.END, Op.EXITED})
# Roles a watcher uid may connect as (S9.6).
WATCHER_ROLES: Final = frozenset({Role.WATCH, Role.HUMAN, Role.ADMIN})
OPS: Final = frozenset(Op)


def encode(message: dict[str, Any]) -> bytes:
    """One wire line: compact JSON, UTF-8 (non-ASCII kept), newline-terminated."""
    return (
        json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"
    ).encode("utf-8", "surrogatepass")


def decode(line: bytes) -> Fields:
    """Parse one request line into its fields. Raises ProtocolError naming what is wrong; never
    anything else."""
    if len(line) > MAX_LINE:
        raise ProtocolError(f"line longer than {MAX_LINE} bytes")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"invalid UTF-8 at byte {exc.start}") from None
    if _depth(text) > MAX_DEPTH:
        raise ProtocolError(f"JSON nested deeper than {MAX_DEPTH}")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"invalid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ProtocolError("a message must be a JSON object")
    return Fields(value)


def _depth(text: str) -> int:
    """An upper bound of the bracket nesting of ``text`` (strings are not skipped: stricter)."""
    opening = text.count("[") + text.count("{")
    if opening <= MAX_DEPTH:  # cannot nest deeper than it opens (the common case: no scan)
        return opening
    depth = best = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            if depth > best:
                best = depth
                if best > MAX_DEPTH:
                    return best
        elif ch in "]}":
            depth -= 1
    return best


def refusal_fields(message: str) -> dict[str, Any]:
    """The fields that make any reply read as a refusal to a check client."""
    return {
        "action": "refuse",
        "exit": EXIT_REFUSED,
        "message": message,
        "pending_id": "",
        "notice": "",
    }


def error_reply(op: str | None, error: str, request_id: object = None) -> dict[str, Any]:
    """An error reply (step 4 above): ``ok`` false, and readable as a refusal."""
    reply: dict[str, Any] = {"re": op, "ok": False, "error": error}
    reply.update(
        refusal_fields(f"gatesh: the gate could not read this request ({error}), so nothing ran.")
    )
    if request_id is not None:
        reply["id"] = request_id
    return reply


def error_line(op: Op | None, error: str, request_id: object = None, *, message: str = "") -> bytes:
    """:func:`error_reply` as its wire line; ``message`` replaces the refusal's text."""
    reply = error_reply(op.value if op else None, error, request_id)
    if message:
        reply["message"] = message
    return encode(reply)


def refused_line(op: Op, request_id: object, why: str) -> bytes:
    """The reply to a request refused because of who sent it (S9.5, S9.6): ``refused`` set."""
    return encode({"re": op.value, "id": request_id, "ok": False, "refused": True, "error": why})


def welcome_line(role: Role, daemon_pid: int, version: str) -> bytes:
    """The welcome (step 2 above)."""
    return encode(
        {"v": VERSION, "welcome": role.value, "daemon_pid": daemon_pid, "version": version}
    )


def event_line(kind: enum.Enum, session: str | None, event: object) -> bytes:
    """One event line: ``event`` (its kind's name), ``time``, ``session`` when it has one, and
    the event's fields (see :func:`gatesh.wire_json.wire_value`)."""
    line: dict[str, Any] = {"event": kind.value, "time": round(time.time(), 3)}
    if session is not None:
        line["session"] = session
    body = wire_value(event)
    if not isinstance(body, dict):
        raise TypeError(f"an event must encode as an object, not {type(event).__name__}")
    return encode(line | body)


class Interim(enum.StrEnum):
    """What an interim line before a check's reply says (step 3 above)."""

    WAITING = "waiting"  # a person is being asked
    WORKING = "working"  # the heartbeat while a decision is in progress


def interim_line(kind: Interim, *, pending_id: str = "", message: str = "") -> bytes:
    """An interim line of a check (a heartbeat has neither a pending id nor a message)."""
    line: dict[str, Any] = {"re": Op.CHECK.value, "interim": kind.value}
    if pending_id:
        line["pending_id"] = pending_id
    if message:
        line["message"] = message
    return encode(line)


def reply_line(op: Op, request_id: object, reply: object) -> bytes:
    """One final reply (step 3 above): ``re``, ``id`` when the request had one, ``ok`` true, and
    the reply's fields (see :func:`wire_value`)."""
    head: dict[str, Any] = {"re": op.value}
    if request_id is not None:
        head["id"] = request_id
    return encode(head | reply_object(reply))


def _checked(value: object, name: str, kind: type | tuple[type, ...]) -> Any:
    if isinstance(value, bool) and kind in (int, (int,)):
        raise ProtocolError(f"field {name!r} must be {getattr(kind, '__name__', kind)}")
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ProtocolError(f"field {name!r} must be {names}")
    return value


# A session id is at most this long and printable: it is shown to people and written to logs.
SESSION_MAX_CHARS: Final = 256


class Fields:
    """One request's JSON object, read once, field by field, each checked for its type: what a
    request's ``decode`` reads (:mod:`gatesh.daemon.requests`). ProtocolError names the first field
    that is missing or wrong; a field that is null counts as missing."""

    __slots__ = ("_raw",)

    def __init__(self, raw: dict[str, Any]) -> None:
        self._raw = raw

    def __contains__(self, name: str) -> bool:
        return self._raw.get(name) is not None

    def _value(self, name: str, kind: type | tuple[type, ...], required: bool) -> Any:
        value = self._raw.get(name)
        if value is None:
            if required:
                raise ProtocolError(f"missing field {name!r}")
            return None
        return _checked(value, name, kind)

    def raw(self, name: str, default: object = None) -> object:
        """The value as sent (``default`` when the field is absent), unchecked: for the
        envelope's ``id`` and ``pid``, which the server checks itself."""
        return self._raw.get(name, default)

    def text(self, name: str, *, default: str | None = None) -> str:
        """A string field; required unless ``default`` is given."""
        value = self._value(name, str, default is None)
        return str(value) if value is not None else (default or "")

    def integer(self, name: str, *, default: int | None = None) -> int:
        """An integer field (a boolean is not one); required unless ``default`` is given."""
        value = self._value(name, int, default is None)
        return int(value) if value is not None else (default or 0)

    def maybe_integer(self, name: str) -> int | None:
        """An integer field that may be missing or null (None)."""
        value = self._value(name, int, False)
        return None if value is None else int(value)

    def flag(self, name: str) -> bool:
        """A boolean field, false when missing."""
        return bool(self._value(name, bool, False))

    def is_true(self, name: str) -> bool:
        """Whether the field is exactly ``true`` (anything else, of any type, is false)."""
        return self._raw.get(name) is True

    def session(self, *, required: bool = False) -> str:
        """The ``session`` field, checked: at most SESSION_MAX_CHARS printable characters."""
        sid = self.text("session") if required else self.text("session", default="")
        if len(sid) > SESSION_MAX_CHARS or any(ord(c) < 32 for c in sid):
            raise ProtocolError(
                f"field 'session' must be at most {SESSION_MAX_CHARS} printable characters"
            )
        return sid

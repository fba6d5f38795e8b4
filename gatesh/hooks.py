"""Harness hook adapters (S11.1): ``gatesh hook claude-code|codex|gemini``.

Each harness runs ``gatesh hook NAME`` with one JSON object on stdin and reads one answer on
stdout. The adapter turns the harness's JSON into a gate request, and the gate's answer back into
the harness's own words:

    harness       gates                              records the user's words (S5.3)
    claude-code   PreToolUse, tool_name "Bash"       UserPromptSubmit ``prompt``
    codex         PreToolUse, tool_name "Bash"       UserPromptSubmit ``prompt``
    gemini        BeforeTool, run_shell_command      BeforeAgent ``prompt``

Guarantees:

- Fail closed. Input that is not what the harness sends (not UTF-8, not JSON, not an object, a
  missing or mistyped field, larger than :data:`MAX_INPUT_BYTES`), an unknown event on a gating
  hook, and any internal error all answer *deny* in the harness's format. Nothing here answers
  *allow* unless the gate allowed the command.
- The exit status is 0 with a JSON answer. If even writing the answer fails, the status is 2 with a
  reason on stderr, which every supported harness treats as "blocked".
- Only the user's own words enter the provenance window: the prompt the harness hands its own
  hook process (S5.3). Never the harness's transcript file: the agent's user can write it, so a
  forged ``"type": "user"`` line there would read as the user's words. The daemon refuses the
  words when this process descends from a gated session (a nested harness the agent started).

Top-level imports are the standard library only, so an import failure in the gate itself is caught
and answered as a deny rather than crashing the hook (a crash would let Claude Code and Codex run
the command). They are also its cheapest parts (S14: a hook call costs at most 5 ms over the
interpreter start): of gatesh only :mod:`gatesh._wire` (the client end of the daemon protocol,
shared with the ``-c`` client) and :mod:`gatesh._errors` — not the ``-c`` client, its argv reader
or the entry point — and no ``json``, ``os``, ``typing``, ``dataclasses`` or ``__future__``
(annotations are quoted instead) on the way to an answer: JSON through ``_wire``'s ``_json``
codec, the environment and working folder through ``posix``; ``shlex`` only for an argv list. The
hook entries ``gatesh install`` writes start it on the launcher's fast interpreter directly
(:func:`gatesh.launcher.direct_hook`), and :func:`run` ends the process as soon as the answer is out.
"""

import posix
import sys

from gatesh import _wire
from gatesh._errors import ProtocolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, Final, Literal, NoReturn

    from gatesh._invoke import Full

    HookDecision = Literal["allow", "deny", "ask"]
    Gate = Callable[[str, str, "str | None", str], "GateResult"]
    Mandate = Callable[[str, "str | None", str], None]


__all__ = [
    "HARNESSES",
    "MAX_INPUT_BYTES",
    "REWRITES_INPUT",
    "Answer",
    "GateResult",
    "Prompt",
    "ToolCall",
    "answer",
    "can_ask",
    "main",
    "render_answer",
    "run",
]

# The names of :class:`gatesh.harnesses.Harness`, spelled out: this module loads no ``enum``
# (S14). The names are parsed here (``gatesh hook NAME``) and pick the JSON format written back;
# tests/test_harnesses.py holds these tables equal to the shared vocabulary.
HARNESSES: "Final" = ("claude-code", "codex", "gemini")

#: Harnesses whose hook may answer *allow* with the command rewritten to run inside its boundary
#: (S16, gatesh.boundary.tickets), and that CI has shown running the rewritten command (the real
#: CLIs in tests/harness): Claude Code and Codex (``updatedInput`` with ``permissionDecision``
#: allow), Gemini CLI (``hookSpecificOutput.tool_input``, merged into the tool call). README's
#: route table and ``gatesh doctor`` say so.
REWRITES_INPUT: "Final" = frozenset({"claude-code", "codex", "gemini"})

# A Bash tool call plus its envelope is a few KiB; 4 MiB leaves room for a 64 KiB command (S2)
# quoted many times over, and stops a runaway writer from making the hook read forever.
MAX_INPUT_BYTES: "Final" = 4 * 1024 * 1024


class _Value:
    """A small value class (``dataclasses`` costs ~10 ms to import): equal field by field."""

    __slots__: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, k) for k in self.__slots__))

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__)
        return f"{type(self).__name__}({fields})"


class Answer(_Value):
    """What the adapter tells the harness. ``decision`` None means "no opinion" (not a gate event).

    Invariant: a gating event always has a decision; ``reason`` is non-empty for deny and ask.
    ``notice`` is one line for the person (carve-out, alignment approval).
    """

    __slots__ = ("decision", "notice", "reason", "updated")

    def __init__(
        self,
        decision: "HookDecision | None",
        reason: str = "",
        notice: str = "",
        updated: "dict[str, Any] | None" = None,
    ) -> None:
        self.decision = decision
        self.reason = reason
        self.notice = notice
        # On allow: the tool input the harness runs instead (the command wrapped to run inside
        # its boundary under this decision, gatesh.boundary.tickets); None: run it as it is.
        self.updated = updated


class GateResult(_Value):
    """The gate's answer to one command, as the hook needs it.

    ``action`` uses the pipeline's words (allow, reject, escalate, halt, deny, refuse).
    """

    __slots__ = ("action", "message", "notice", "pending_id", "wrapped")

    def __init__(
        self,
        action: str,
        message: str = "",
        notice: str = "",
        pending_id: str = "",
        wrapped: str = "",
    ) -> None:
        self.action = action
        self.message = message
        self.notice = notice
        self.pending_id = pending_id
        self.wrapped = wrapped


class BadInput(ProtocolError):
    """The hook's stdin is not what the harness sends; the message says what is wrong."""


class ToolCall(_Value):
    """A gating hook call, decoded once from the harness's JSON (:func:`_read_call`): the shell
    command, the folder it runs in, the harness's session, and the tool input as the harness sent
    it (sent back, its command wrapped, when the command runs inside its boundary)."""

    __slots__ = ("command", "cwd", "session", "tool_input")

    def __init__(
        self, command: str, cwd: str, session: str | None, tool_input: "dict[str, Any]"
    ) -> None:
        self.command = command
        self.cwd = cwd
        self.session = session
        self.tool_input = tool_input


class Prompt(_Value):
    """A prompt hook call, decoded once: the user's typed words (S5.3) and the session. ``problem``
    says why the words could not be read ("" when they could): that never blocks the prompt."""

    __slots__ = ("problem", "session", "text")

    def __init__(self, session: str | None, text: str, problem: str = "") -> None:
        self.session = session
        self.text = text
        self.problem = problem


# --- the gate and the provenance window, behind two seams tests can replace ------------------------


def _gate(
    command: str, cwd: str, session: str | None, harness: str, full: "Full | None" = None
) -> GateResult:
    """Ask the gate through the standard-library client (which gates in-process if it must).

    Every call says whether the person can be asked in the harness's own prompt (:func:`can_ask`):
    then an escalation comes back as ``escalate`` with the escalation block; otherwise it goes to
    a watcher, or is the no-person refusal with a pending id (S7, S11.4).
    """
    asks = can_ask(harness, {"CLAUDE_CODE_ENTRYPOINT": _wire.getenv("CLAUDE_CODE_ENTRYPOINT")})
    result = _wire.check(
        command,
        cwd=cwd,
        session=session,
        surface="hook",
        can_ask=asks,
        full=full,
        wraps=harness in REWRITES_INPUT,
    )
    return GateResult(
        action=result.action,
        message=result.message,
        # S17: a command that runs because a snapshot holds what it loses says which undo puts it
        # back (the harness shows the notice; its command runs outside this process).
        notice="\n".join(x for x in (result.notice, result.undo) if x),
        pending_id=result.pending_id,
        wrapped=result.wrapped,
    )


def _mandate(text: str, session: str | None, channel: str, full: "Full | None" = None) -> None:
    """Hand the user's words to the daemon's provenance window (S5.3), naming the channel."""
    _wire.mandate(text, session=session, channel=channel, full=full)


# --- reading the harness's JSON ------------------------------------------------------------------


def _decode(raw: bytes) -> "dict[str, Any]":
    """The hook input as a JSON object. Raises BadInput with a reason a person can act on."""
    if len(raw) > MAX_INPUT_BYTES:
        raise BadInput(f"the hook input is larger than {MAX_INPUT_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"the hook input is not valid UTF-8 (byte {exc.start})") from exc
    if not text.strip():
        raise BadInput("the hook input is empty")
    try:
        data = _wire._decode(raw)
    except ValueError as exc:  # also a JSON value that is not an object
        raise BadInput("the hook input is not a JSON object") from exc
    except RecursionError as exc:
        raise BadInput("the hook input is not JSON (nested too deeply)") from exc
    return data


def _string(data: "dict[str, Any]", key: str, *, required: bool = True) -> str | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise BadInput(f"the hook input's {key!r} is missing or not a string")
    if "\x00" in value:
        raise BadInput(f"the hook input's {key!r} contains a NUL character")
    return value


def _command(data: "dict[str, Any]") -> str:
    """The shell command in ``tool_input.command``: a string, or an argv list (joined, quoted)."""
    tool_input = data.get("tool_input")
    if not isinstance(tool_input, dict):
        raise BadInput("the hook input's 'tool_input' is missing or not an object")
    command = tool_input.get("command")
    if isinstance(command, list) and command and all(isinstance(w, str) for w in command):
        import shlex

        command = shlex.join(command)
    if not isinstance(command, str):
        raise BadInput("the hook input's 'tool_input.command' is missing or not a string")
    if not command.strip():
        raise BadInput("the hook input's 'tool_input.command' is empty")
    if "\x00" in command:
        raise BadInput("the command contains a NUL character")
    return command


def _cwd(data: "dict[str, Any]") -> str:
    """The working directory the command runs in; the hook's own when the harness gives none."""
    cwd = _string(data, "cwd", required=False) or _wire._cwd()
    if not cwd.startswith("/"):
        raise BadInput("the hook input's 'cwd' is not an absolute path")
    tool_input = data.get("tool_input")
    # Gemini's run_shell_command may name a directory relative to the project root.
    sub = (
        tool_input.get("dir_path") or tool_input.get("directory")
        if isinstance(tool_input, dict)
        else None
    )
    if isinstance(sub, str) and sub:
        import posixpath

        cwd = posixpath.normpath(posixpath.join(cwd, sub))
    return cwd


def _session(data: "dict[str, Any]") -> str | None:
    session = _string(data, "session_id", required=False)
    return session or None


def _read_call(harness: str, raw: bytes) -> "tuple[str, ToolCall | Prompt]":
    """The event name and the call ``raw`` is, for ``harness``: the one place the harness's JSON
    is read. Raises BadInput (the reason, for the deny) when it is not a call gatesh answers."""
    data = _decode(raw)
    event = _string(data, "hook_event_name") or ""
    if event == _PROMPT_EVENTS[harness]:
        session = _session(data)
        try:
            return event, Prompt(session, _string(data, "prompt") or "")
        except BadInput as exc:
            return event, Prompt(session, "", str(exc))
    gate_event = _GATE_EVENTS[harness]
    if event != gate_event:
        raise BadInput(
            f"gatesh does not handle the {event!r} event for {harness} "
            f"(install it for {gate_event} and {_PROMPT_EVENTS[harness]} only)"
        )
    tool = _string(data, "tool_name")
    if tool not in _SHELL_TOOLS[harness]:
        raise BadInput(
            f"gatesh gates only the shell tool ({', '.join(_SHELL_TOOLS[harness])}), "
            f"not {tool!r}; set the hook's matcher to it"
        )
    command = _command(data)
    cwd = _cwd(data)
    return event, ToolCall(command, cwd, _session(data), dict(data["tool_input"]))


# --- per-harness handling ------------------------------------------------------------------------

_GATE_EVENTS: "Final" = {"claude-code": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool"}
_PROMPT_EVENTS: "Final" = {
    "claude-code": "UserPromptSubmit",
    "codex": "UserPromptSubmit",
    "gemini": "BeforeAgent",
}
_SHELL_TOOLS: "Final" = {
    "claude-code": ("Bash",),
    "codex": ("Bash",),
    "gemini": ("run_shell_command",),
}
_PROMPT_CHANNELS: "Final" = {
    "claude-code": "claude-code-prompt",
    "codex": "codex-prompt",
    "gemini": "gemini-prompt",
}
# Harnesses whose hook can hand a decision to the person in their own prompt (S7: "ask"), and
# the entry points (``CLAUDE_CODE_ENTRYPOINT``, which Claude Code sets for its hooks) at which a
# person is there to answer it. ``claude -p`` runs as ``sdk-cli`` and the SDKs as ``sdk-*``: an
# ``ask`` there is never answered (S11.4), so it must be the no-person refusal instead.
_NATIVE_ASK: "Final" = frozenset({"claude-code"})
_INTERACTIVE_ENTRYPOINTS: "Final" = frozenset({"cli"})


def can_ask(harness: str, environ: "Mapping[str, str]") -> bool:
    """Whether this hook call can put an escalation to a person in the harness's own prompt.

    Codex and Gemini CLI have no ``ask`` answer for hooks; Claude Code has one only when a person
    runs it interactively. An unknown or missing entry point counts as headless: a wrong "no"
    sends the escalation to ``gatesh watch`` or the no-person refusal (with a pending id), a
    wrong "yes" would address the agent as if it were the person.
    """
    if harness not in _NATIVE_ASK:
        return False
    return str(environ.get("CLAUDE_CODE_ENTRYPOINT", "")) in _INTERACTIVE_ENTRYPOINTS


def answer(
    harness: str, raw: bytes, *, gate: "Gate | None" = None, mandate: "Mandate | None" = None
) -> tuple[str, Answer]:
    """The answer for one hook call: ``(event, Answer)``. Never raises; fails closed.

    ``event`` is the event the answer is for (the gating event when the input could not be read,
    so the deny is written in the format that blocks).
    """
    gate = gate or _gate
    mandate = mandate or _mandate
    gate_event = _GATE_EVENTS[harness]
    try:
        event, call = _read_call(harness, raw)
        if isinstance(call, Prompt):
            _record_prompt(harness, call, mandate)
            return event, Answer(None)
        result = gate(call.command, call.cwd, call.session, harness)
        answered = _to_answer(harness, result)
        if answered.decision == "allow" and result.wrapped and harness in REWRITES_INPUT:
            tool_input = {**call.tool_input, "command": result.wrapped}
            answered = Answer("allow", notice=answered.notice, updated=tool_input)
        return gate_event, answered
    except BadInput as exc:
        return gate_event, Answer("deny", f"gatesh refused: {exc}. Nothing ran.")
    except Exception as exc:  # fail closed: any internal error refuses
        detail = f"{type(exc).__name__}: {exc}"[:500]
        return gate_event, Answer(
            "deny",
            f"gatesh: the gate failed while deciding ({detail}), so "
            "the command was refused. Nothing ran. Run `gatesh doctor` to "
            "find what to fix.",
        )


def _to_answer(harness: str, result: GateResult) -> Answer:
    if result.action == "allow":
        return Answer("allow", notice=result.notice)
    message = result.message or f"gatesh refused this command ({result.action}). Nothing ran."
    if result.action == "escalate" and harness in _NATIVE_ASK:
        return Answer("ask", message, result.notice)
    return Answer("deny", message, result.notice)


def _record_prompt(harness: str, call: Prompt, mandate: "Mandate") -> None:
    """Send the typed prompt to the window (S5.3; the transcript file is never read).

    A failure here never blocks the user's prompt: a missing mandate only makes the gate stricter.
    """
    try:
        if call.problem:
            raise BadInput(call.problem)
        if call.text.strip():
            mandate(call.text, call.session, _PROMPT_CHANNELS[harness])
    except Exception as exc:
        sys.stderr.write(f"gatesh hook: could not record the prompt: {exc}\n")


# --- writing the answer --------------------------------------------------------------------------


def _printable(text: str) -> str:
    """``text`` without control characters (line breaks kept) or format characters (bidi,
    zero-width): nothing in it can act on the harness's terminal. Printable text costs no import."""
    if all(line.isprintable() for line in text.split("\n")):
        return text
    import unicodedata

    return "".join(c for c in text if c == "\n" or unicodedata.category(c) not in ("Cc", "Cf"))


def render_answer(harness: str, event: str, ans: Answer) -> str:
    """The stdout text for ``ans`` in ``harness``'s format ("" when nothing is to be said).

    The reason and the notice reach the harness's terminal. The gate's reply was neutralised at
    the boundary (:func:`gatesh.render.neutralise_block`, in ``Finished.reply``); here
    :func:`_printable` makes sure, with the standard library only, that no control or format
    character passes whoever wrote the text (S8.1).
    """
    if ans.decision is None:
        return "{}" if harness == "gemini" else ""
    updated = ans.updated if ans.decision == "allow" else None
    ans = Answer(ans.decision, _printable(ans.reason), _printable(ans.notice))
    if harness == "gemini":
        out: dict[str, Any] = {"decision": ans.decision if ans.decision != "ask" else "deny"}
        if ans.decision != "allow":
            out["reason"] = ans.reason
        if updated is not None:  # Gemini CLI merges tool_input into the call (REWRITES_INPUT)
            out["hookSpecificOutput"] = {"hookEventName": event, "tool_input": updated}
        if ans.notice:
            out["systemMessage"] = ans.notice
        return _wire._encode(out)
    if harness == "codex" and ans.decision == "allow" and updated is None:
        # Codex rejects permissionDecision "allow" without updatedInput; no decision lets it run.
        return _wire._encode({"systemMessage": ans.notice}) if ans.notice else ""
    decision = ans.decision if not (harness == "codex" and ans.decision == "ask") else "deny"
    specific: dict[str, Any] = {"hookEventName": event, "permissionDecision": decision}
    if updated is not None:  # Claude Code and Codex run updatedInput instead (REWRITES_INPUT)
        specific["updatedInput"] = updated
    if ans.reason or decision != "allow":
        specific["permissionDecisionReason"] = ans.reason or "gatesh refused this command."
    out = {"hookSpecificOutput": specific}
    if ans.notice:
        out["systemMessage"] = ans.notice
    return _wire._encode(out)


def _read_stdin() -> bytes:
    stream = sys.stdin.buffer
    return stream.read(MAX_INPUT_BYTES + 1)


USAGE: "Final" = """\
usage: gatesh hook claude-code|codex|gemini

Answer one harness hook call: read its JSON on stdin, write allow/deny/ask in the harness's
format on stdout. Install the hook with `gatesh install claude-code|codex|gemini`.
"""


def main(argv: list[str], full: "Full | None" = None) -> int:
    """``gatesh hook NAME``. Exit 0 with the answer on stdout; 2 (blocked) if that fails; 2 for usage.

    ``full``: this runs on a launcher's fast interpreter (see :mod:`gatesh.launcher`); the daemon
    and the in-process gate are started on that full one.
    """
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0 if argv else 2
    harness = argv[0]
    if harness not in HARNESSES or len(argv) > 1:
        sys.stderr.write(f"gatesh hook: unknown harness {' '.join(argv)!r}\n{USAGE}")
        return 2
    try:
        try:
            raw = _read_stdin()
        except OSError as exc:
            raw = b""
            sys.stderr.write(f"gatesh hook: cannot read stdin: {exc}\n")
        if full is None:
            event, ans = answer(harness, raw)
        else:
            event, ans = answer(
                harness,
                raw,
                gate=lambda c, w, s, h: _gate(c, w, s, h, full),
                mandate=lambda t, s, ch: _mandate(t, s, ch, full),
            )
        text = render_answer(harness, event, ans)
        if text:
            sys.stdout.write(text + "\n")
        sys.stdout.flush()
        return 0
    except BaseException as exc:  # the last line of defence: exit 2 blocks in every harness
        try:
            sys.stderr.write(
                f"gatesh hook failed ({type(exc).__name__}); the command was refused.\n"
            )
        except BaseException:
            pass
        return 2


def run(argv: list[str], full: "Full | None" = None) -> "NoReturn":
    """:func:`main`, then end the process at once with its status, skipping the interpreter's
    finalisation (tearing down every module and object: ~2 ms of a ~12 ms bare start, S14).

    Nothing is lost by it: the answer is written and flushed here (a flush that fails makes the
    status 2, blocked), the connection to the daemon is the kernel's to close, and the audit line
    is the daemon's, written before it answered. What the hook command of ``gatesh install``
    calls (:func:`gatesh.install.hook_command`), and ``gatesh hook``.
    """
    status = main(argv, full)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            status = 2
    posix._exit(status)

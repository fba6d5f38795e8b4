"""Loopback stand-ins of three model APIs that script shell tool calls (SPEC S11.4).

One HTTP server answers, in the dialect each harness speaks:

    dialect     harness       requests answered
    messages    Claude Code   POST /v1/messages (SSE when ``stream``), /v1/messages/count_tokens
    responses   Codex         POST /v1/responses (SSE), GET /v1/models
    gemini      Gemini CLI    POST /v1beta/models/M:streamGenerateContent?alt=sse (SSE),
                              :generateContent, :countTokens

The fake model follows a script: a list of shell commands. It is stateless per request: the
number of tool results already in the conversation is the step, so the model asks for
``commands[step]``, and once every command has a result it answers with text and stops. Retries
and side requests (titles, classifiers, token counts) therefore cannot move the script.

What the model received is read back from the conversation itself: :meth:`FakeModel.results` is
the text of every tool result in the fullest main-conversation request (a request that offers the
harness's shell tool), in order — exactly what the harness sent the model.

Guarantees: the server binds the loopback address only; a request it does not know gets a JSON
404, never a hang; every request is recorded.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final
from urllib.parse import urlsplit

__all__ = ["DIALECTS", "FakeModel", "Hold", "Recorded"]

MODEL: Final = "scripted-model"
FINAL_TEXT: Final = "All done."
_ids = itertools.count(1)


@dataclass(frozen=True)
class Recorded:
    """One request as received; ``main`` when it offered the shell tool (the agent's own turn)."""

    method: str
    path: str
    body: Any
    main: bool


def _sse(events: Sequence[tuple[str | None, dict[str, Any]]]) -> bytes:
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


def _strings(value: Any) -> list[str]:
    """Every string inside a JSON value, depth first (a tool result's text, whatever its shape)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


# --- dialects --------------------------------------------------------------------------------------


class Dialect:
    """How one API asks, what its tool results look like, and how the model answers in it."""

    name = ""

    def handles(self, method: str, path: str) -> bool:
        raise NotImplementedError

    def is_main(self, body: Any) -> bool:
        raise NotImplementedError

    def tool_results(self, body: Any) -> list[str]:
        raise NotImplementedError

    def answer(self, path: str, body: Any, command: str | None) -> tuple[int, str, bytes]:
        """(status, content type, body) for a main request: call ``command``, or stop when None."""
        raise NotImplementedError

    def aux(self, method: str, path: str, body: Any) -> tuple[int, str, bytes]:
        """The answer to a side request (no shell tool offered)."""
        raise NotImplementedError


class Messages(Dialect):
    """The Anthropic Messages API as Claude Code calls it (its shell tool is ``Bash``)."""

    name = "messages"
    tool = "Bash"

    def handles(self, method: str, path: str) -> bool:
        return path.startswith("/v1/messages")

    def is_main(self, body: Any) -> bool:
        tools = body.get("tools") if isinstance(body, dict) else None
        return isinstance(tools, list) and any(
            isinstance(t, dict) and t.get("name") == self.tool for t in tools
        )

    def tool_results(self, body: Any) -> list[str]:
        out = []
        for msg in body.get("messages", []):
            content = msg.get("content") if isinstance(msg, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append("\n".join(_strings(block.get("content"))))
        return out

    def _message(
        self, blocks: list[dict[str, Any]], stop: str, stream: bool
    ) -> tuple[int, str, bytes]:
        mid = f"msg_fake_{next(_ids):06d}"
        usage = {
            "input_tokens": 10,
            "output_tokens": 5,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        if not stream:
            body = {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": blocks,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": usage,
            }
            return 200, "application/json", json.dumps(body).encode()
        events: list[tuple[str | None, dict[str, Any]]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": mid,
                        "type": "message",
                        "role": "assistant",
                        "model": MODEL,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {**usage, "output_tokens": 1},
                    },
                },
            )
        ]
        for i, block in enumerate(blocks):
            if block["type"] == "tool_use":
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            else:
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            events += [
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": i, "content_block": start},
                ),
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": i, "delta": delta},
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": i}),
            ]
        events += [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return 200, "text/event-stream", _sse(events)

    def answer(self, path: str, body: Any, command: str | None) -> tuple[int, str, bytes]:
        stream = bool(body.get("stream"))
        if command is None:
            return self._message([{"type": "text", "text": FINAL_TEXT}], "end_turn", stream)
        call = {
            "type": "tool_use",
            "id": f"toolu_fake_{next(_ids):06d}",
            "name": self.tool,
            "input": {"command": command, "description": "scripted step"},
        }
        return self._message([call], "tool_use", stream)

    def aux(self, method: str, path: str, body: Any) -> tuple[int, str, bytes]:
        if path.startswith("/v1/messages/count_tokens"):
            return 200, "application/json", b'{"input_tokens": 10}'
        stream = isinstance(body, dict) and bool(body.get("stream"))
        return self._message([{"type": "text", "text": "ok"}], "end_turn", stream)


class Responses(Dialect):
    """The OpenAI Responses API as Codex calls it. Codex offers one of several shell tools; the
    fake calls whichever this version offers, with that tool's argument shape."""

    name = "responses"
    # tool name -> how the command is passed
    shapes: Final = {
        "shell_command": lambda c: {"command": c},
        "exec_command": lambda c: {"cmd": c},
        "shell": lambda c: {"command": ["bash", "-lc", c]},
        "local_shell": lambda c: {"command": ["bash", "-lc", c]},
    }

    def handles(self, method: str, path: str) -> bool:
        return path.startswith(("/v1/responses", "/v1/models", "/responses", "/models"))

    def _tool(self, body: Any) -> str | None:
        names = [
            t.get("name") or t.get("type") for t in body.get("tools", []) if isinstance(t, dict)
        ]
        return next((n for n in self.shapes if n in names), None)

    def is_main(self, body: Any) -> bool:
        return isinstance(body, dict) and self._tool(body) is not None

    def tool_results(self, body: Any) -> list[str]:
        out = []
        for item in body.get("input", []):
            if isinstance(item, dict) and item.get("type") in (
                "function_call_output",
                "custom_tool_call_output",
            ):
                out.append("\n".join(_strings(item.get("output"))))
        return out

    def answer(self, path: str, body: Any, command: str | None) -> tuple[int, str, bytes]:
        rid = f"resp_fake_{next(_ids):06d}"
        if command is None:
            item: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "id": f"msg_{rid}",
                "content": [{"type": "output_text", "text": FINAL_TEXT}],
            }
        else:
            tool = self._tool(body) or "shell"
            item = {
                "type": "function_call",
                "id": f"fc_{rid}",
                "call_id": f"call_{rid}",
                "name": tool,
                "arguments": json.dumps(self.shapes[tool](command)),
            }
        usage = {
            "input_tokens": 10,
            "input_tokens_details": None,
            "output_tokens": 5,
            "output_tokens_details": None,
            "total_tokens": 15,
        }
        events: list[tuple[str | None, dict[str, Any]]] = [
            ("response.created", {"type": "response.created", "response": {"id": rid}}),
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": 0, "item": item},
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {"id": rid, "usage": usage, "output": [item]},
                },
            ),
        ]
        return 200, "text/event-stream", _sse(events)

    def aux(self, method: str, path: str, body: Any) -> tuple[int, str, bytes]:
        if "/models" in path:
            return 200, "application/json", json.dumps({"models": [], "data": []}).encode()
        return self.answer(path, body if isinstance(body, dict) else {}, None)


class Gemini(Dialect):
    """The Gemini API as Gemini CLI calls it (its shell tool is ``run_shell_command``)."""

    name = "gemini"
    tool = "run_shell_command"

    def handles(self, method: str, path: str) -> bool:
        return "/models/" in path

    def is_main(self, body: Any) -> bool:
        if not isinstance(body, dict):
            return False
        for tool in body.get("tools", []) or []:
            for decl in (tool.get("functionDeclarations") or []) if isinstance(tool, dict) else []:
                if isinstance(decl, dict) and decl.get("name") == self.tool:
                    return True
        return False

    def tool_results(self, body: Any) -> list[str]:
        out = []
        for content in body.get("contents", []):
            for part in content.get("parts", []) if isinstance(content, dict) else []:
                if isinstance(part, dict) and "functionResponse" in part:
                    out.append("\n".join(_strings(part["functionResponse"].get("response"))))
        return out

    @staticmethod
    def _chunk(parts: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 5,
                "totalTokenCount": 15,
            },
            "modelVersion": MODEL,
        }

    def _reply(self, path: str, parts: list[dict[str, Any]]) -> tuple[int, str, bytes]:
        chunk = self._chunk(parts)
        if ":streamGenerateContent" in path:
            return 200, "text/event-stream", f"data: {json.dumps(chunk)}\r\n\r\n".encode()
        return 200, "application/json", json.dumps(chunk).encode()

    def answer(self, path: str, body: Any, command: str | None) -> tuple[int, str, bytes]:
        if command is None:
            return self._reply(path, [{"text": FINAL_TEXT}])
        return self._reply(
            path, [{"functionCall": {"name": self.tool, "args": {"command": command}}}]
        )

    def aux(self, method: str, path: str, body: Any) -> tuple[int, str, bytes]:
        if ":countTokens" in path:
            return 200, "application/json", b'{"totalTokens": 10}'
        wants_json = (
            isinstance(body, dict)
            and (body.get("generationConfig") or {}).get("responseMimeType") == "application/json"
        )
        if wants_json:  # a classifier or the next-speaker check: the turn is the user's
            text = json.dumps(
                {
                    "reasoning": "scripted",
                    "next_speaker": "user",
                    "model_choice": "flash",
                    "complexity_reasoning": "scripted",
                    "complexity_score": 1,
                }
            )
            return self._reply(path, [{"text": text}])
        return self._reply(path, [{"text": "ok"}])


DIALECTS: Final = {"claude-code": Messages(), "codex": Responses(), "gemini": Gemini()}


# --- the server ------------------------------------------------------------------------------------


# How long a held step waits for the test to release it before answering anyway (a test bug).
HOLD_TIMEOUT_S: Final = 150.0


@dataclass
class Hold:
    """A step the model does not take until the test releases it: ``reached`` is set when the
    harness asks for the step (every earlier result is then in :meth:`FakeModel.results`)."""

    step: int
    reached: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


@dataclass
class FakeModel:
    """A scripted model in one dialect; ``commands`` may be replaced between harness runs."""

    dialect: Dialect
    commands: list[str] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    holds: dict[int, Hold] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def hold(self, step: int) -> Hold:
        """Make the model wait before step ``step`` (0-based) until ``release`` is set."""
        with self.lock:
            self.holds[step] = Hold(step)
            return self.holds[step]

    def handle(self, method: str, path: str, body: Any) -> tuple[int, str, bytes]:
        if not self.dialect.handles(method, urlsplit(path).path):
            return (
                404,
                "application/json",
                json.dumps(
                    {"error": {"message": f"the fake does not serve {method} {path}"}}
                ).encode(),
            )
        main = method == "POST" and self.dialect.is_main(body)
        with self.lock:
            self.requests.append(Recorded(method, path, body, main))
            commands = list(self.commands)
        if not main:
            return self.dialect.aux(method, path, body)
        step = len(self.dialect.tool_results(body))
        with self.lock:
            held = self.holds.get(step)
        if held is not None:
            held.reached.set()
            held.release.wait(HOLD_TIMEOUT_S)
        return self.dialect.answer(path, body, commands[step] if step < len(commands) else None)

    def main_requests(self) -> list[Recorded]:
        with self.lock:
            return [r for r in self.requests if r.main]

    def results(self) -> list[str]:
        """Every tool result the model received, in order, from the fullest conversation."""
        best: list[str] = []
        for r in self.main_requests():
            found = self.dialect.tool_results(r.body)
            if len(found) >= len(best):
                best = found
        return best

    def reset(self, commands: Sequence[str]) -> None:
        with self.lock:
            self.commands = list(commands)
            self.requests.clear()
            self.holds.clear()


def make_handler(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            if raw and self.headers.get("content-encoding") in ("gzip", "zstd", "br"):
                body: Any = None  # not expected from these clients; recorded as unreadable
            else:
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = None
            try:
                status, ctype, data = model.handle(method, self.path, body)
            except Exception as exc:  # a fake bug: answer it, never hang the harness
                status, ctype = 500, "application/json"
                data = json.dumps({"error": {"message": f"fake failed: {exc!r}"}}).encode()
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(data)))
            if ctype == "text/event-stream":
                self.send_header("cache-control", "no-cache")
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            self._serve("POST")

        def do_GET(self) -> None:
            self._serve("GET")

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

    return Handler


def serve(model: FakeModel, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """A started server for ``model`` on a free loopback port (``server.server_address``)."""
    if not re.fullmatch(r"127(\.\d{1,3}){3}|::1", host):
        raise ValueError("the fake model serves the loopback address only")
    server = ThreadingHTTPServer((host, 0), make_handler(model))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="fake-model", daemon=True).start()
    return server

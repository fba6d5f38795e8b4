"""A scripted, loopback Messages-API server for tests (``POST /v1/messages``).

The official SDK talks to it over real HTTP on 127.0.0.1, so a test exercises the same code path
as production: request building, status-error mapping, timeouts, response parsing. Each request
pops the next scripted :class:`Reply`; every request body is recorded for placement assertions.

    with ModelServer() as server:
        server.script(tool_use("rateCommand", {"outcome": "safe", "reason": "lists files"}))
        rater = AnthropicRater(model="m", base_url=server.base_url, api_key="test")
        ...
        assert server.requests[0].body["system"]

Guarantees: the server binds 127.0.0.1 only; a slow reply wakes up when the server stops, so a
test never waits for a reply its client has abandoned; with the script empty and no ``fallback``,
a request gets a 500 whose message says the script ran out (a test bug, visible as a failure).
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "ModelServer",
    "RecordedRequest",
    "Reply",
    "error",
    "malformed",
    "message",
    "overloaded",
    "prose",
    "rate_limited",
    "server_error",
    "slow",
    "tool_use",
    "tool_uses",
]

_ids = itertools.count(1)


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP answer: a status, a JSON body (or raw bytes), an optional delay first."""

    status: int = 200
    body: Mapping[str, Any] | bytes = field(default_factory=dict)
    delay_s: float = 0.0
    headers: Mapping[str, str] = field(default_factory=dict)


#: A scripted entry: a fixed reply, or a function of the request body (to echo ids, count turns).
Script = Reply | Callable[[dict[str, Any]], Reply]


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it. ``body`` is None when it was not valid JSON.

    Credential headers (``authorization``, ``x-api-key``) keep only their last 4 characters.
    """

    method: str
    path: str
    headers: Mapping[str, str]
    body: dict[str, Any] | None


def message(
    content: Iterable[Mapping[str, Any]],
    *,
    stop_reason: str = "end_turn",
    model: str = "scripted-model",
) -> Reply:
    """A 200 reply shaped like a real Messages API response, with ``content`` blocks."""
    blocks = [dict(b) for b in content]
    body = {
        "id": f"msg_test_{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 100,
            "output_tokens": 20 * max(1, len(blocks)),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }
    return Reply(200, body)


def tool_use(
    name: str, input: Mapping[str, Any] | None = None, *, text: str | None = None
) -> Reply:
    """The model calls tool ``name`` with ``input`` (after an optional line of prose)."""
    return tool_uses([(name, input or {})], text=text)


def tool_uses(calls: Iterable[tuple[str, Mapping[str, Any]]], *, text: str | None = None) -> Reply:
    """The model calls several tools in one turn, in order."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for name, args in calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_test_{next(_ids):06d}",
                "name": name,
                "input": dict(args),
            }
        )
    return message(blocks, stop_reason="tool_use")


def prose(text: str = "I think this command is probably fine.") -> Reply:
    """The model answers in text and calls no tool."""
    return message([{"type": "text", "text": text}], stop_reason="end_turn")


def error(status: int, type: str, msg: str = "scripted error") -> Reply:
    """An API error body as the real API sends it."""
    return Reply(status, {"type": "error", "error": {"type": type, "message": msg}})


def rate_limited() -> Reply:
    """429 rate_limit_error (with a retry-after header a retrying client would honour)."""
    return Reply(
        429,
        {"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited."}},
        headers={"retry-after": "1"},
    )


def server_error() -> Reply:
    """500 api_error."""
    return error(500, "api_error", "Internal server error")


def overloaded() -> Reply:
    """529 overloaded_error."""
    return error(529, "overloaded_error", "Overloaded")


def malformed() -> Reply:
    """A 200 whose body claims to be JSON and is not."""
    return Reply(200, b'{"id": "msg_broken", "type": "message", "content": [{"type": "tool_u')


def slow(reply: Reply, delay_s: float) -> Reply:
    """``reply``, sent only after ``delay_s`` seconds (or never, if the server stops first)."""
    return Reply(reply.status, reply.body, delay_s, reply.headers)


class ModelServer:
    """A threaded HTTP server on 127.0.0.1 answering from a script. Use as a context manager.

    ``base_url`` is what to hand the SDK; ``requests`` lists every request received, in order.
    """

    def __init__(self, *, fallback: Script | None = None) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Script] = deque()
        self._fallback = fallback
        self._stopping = threading.Event()
        self.requests: list[RecordedRequest] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ----------------------------------------------------------------------------

    def script(self, *replies: Script) -> ModelServer:
        """Queue ``replies``; each request takes the next one."""
        with self._lock:
            self._queue.extend(replies)
        return self

    def set_fallback(self, reply: Script | None) -> None:
        """Answer with ``reply`` whenever the script is empty (e.g. a model that never decides)."""
        with self._lock:
            self._fallback = reply

    @property
    def remaining(self) -> int:
        """How many scripted replies have not been used."""
        with self._lock:
            return len(self._queue)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of every request received (invalid ones skipped)."""
        with self._lock:
            return [r.body for r in self.requests if r.body is not None]

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("ModelServer is not started; use it as a context manager")
        port = self._httpd.server_address[1]
        return f"http://127.0.0.1:{port}"

    def start(self) -> ModelServer:
        """Bind an ephemeral loopback port and serve in a daemon thread."""
        handler = _make_handler(self)
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="gatesh-model-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; slow replies still pending are abandoned."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving ------------------------------------------------------------------------------

    def _next_reply(self, body: dict[str, Any] | None) -> Reply:
        with self._lock:
            entry = self._queue.popleft() if self._queue else self._fallback
        if entry is None:
            return error(
                500, "api_error", "gatesh.testing.ModelServer: the script ran out of replies"
            )
        if isinstance(entry, Reply):
            return entry
        return entry(body or {})


def _mask(name: str, value: str) -> str:
    """Credentials are recorded by their last 4 characters only, so a failing test never prints a key."""
    if name.lower() in ("authorization", "x-api-key"):
        return "…" + value[-4:]
    return value


def _make_handler(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in separate writes; with Nagle's algorithm the body then waits
        # for the client's delayed ACK (~40 ms per request on Linux), which is not the API's latency.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            headers = {k: _mask(k, v) for k, v in self.headers.items()}
            record = RecordedRequest("POST", self.path, headers, body)
            with server._lock:
                server.requests.append(record)
            if self.path.split("?")[0].rstrip("/") != "/v1/messages":
                self._send(error(404, "not_found_error", f"no route {self.path}"))
                return
            reply = server._next_reply(body)
            if reply.delay_s and server._stopping.wait(reply.delay_s):
                return  # stopped while waiting: the client gave up long ago
            self._send(reply)

        def _send(self, reply: Reply) -> None:
            data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_test_{next(_ids):06d}")
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except OSError:
                pass  # the client timed out and hung up

    return Handler

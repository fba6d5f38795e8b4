"""gatesh.testing.model_server: the real SDK talks to it over real HTTP on loopback."""

from __future__ import annotations

import time
from collections.abc import Iterator

import anthropic
import pytest

from gatesh.testing.model_server import (
    ModelServer,
    Reply,
    malformed,
    overloaded,
    prose,
    rate_limited,
    server_error,
    slow,
    tool_use,
    tool_uses,
)

REQUEST = {"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as s:
        yield s


def client(server: ModelServer, timeout: float = 2.0) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key="test-key-1234", base_url=server.base_url, max_retries=0, timeout=timeout
    )


def test_binds_loopback_only(server: ModelServer) -> None:
    assert server.base_url.startswith("http://127.0.0.1:")


def test_tool_use_reply_parses_as_a_real_message(server: ModelServer) -> None:
    server.script(tool_use("rateCommand", {"outcome": "safe", "reason": "lists"}, text="thinking"))
    msg = client(server).messages.create(**REQUEST)
    assert msg.stop_reason == "tool_use"
    assert [b.type for b in msg.content] == ["text", "tool_use"]
    assert msg.content[1].name == "rateCommand"
    assert msg.content[1].input == {"outcome": "safe", "reason": "lists"}
    assert msg.usage.input_tokens > 0


def test_several_tool_calls_in_one_turn_keep_their_order(server: ModelServer) -> None:
    server.script(tool_uses([("a", {}), ("b", {"x": 1})]))
    msg = client(server).messages.create(**REQUEST)
    assert [b.name for b in msg.content] == ["a", "b"]
    assert msg.content[0].id != msg.content[1].id


def test_prose_reply(server: ModelServer) -> None:
    server.script(prose("hello"))
    msg = client(server).messages.create(**REQUEST)
    assert msg.stop_reason == "end_turn"
    assert msg.content[0].text == "hello"


@pytest.mark.parametrize(
    ("reply", "exc", "status"),
    [
        (rate_limited(), anthropic.RateLimitError, 429),
        (server_error(), anthropic.InternalServerError, 500),
        (overloaded(), anthropic.APIStatusError, 529),
    ],
)
def test_error_statuses_reach_the_sdk_as_status_errors(
    server: ModelServer, reply: Reply, exc: type[Exception], status: int
) -> None:
    server.script(reply)
    with pytest.raises(exc) as info:
        client(server).messages.create(**REQUEST)
    assert info.value.status_code == status  # type: ignore[attr-defined]


def test_slow_reply_outlasts_the_client_timeout(server: ModelServer) -> None:
    server.script(slow(prose(), 5.0), prose("after"))
    start = time.monotonic()
    with pytest.raises(anthropic.APITimeoutError):
        client(server, timeout=0.3).messages.create(**REQUEST)
    assert time.monotonic() - start < 2.0
    # The server keeps serving while the abandoned reply sleeps.
    assert client(server).messages.create(**REQUEST).content[0].text == "after"


def test_stopping_does_not_wait_for_a_sleeping_reply() -> None:
    with ModelServer() as s:
        s.script(slow(prose(), 30.0))
        with pytest.raises(anthropic.APITimeoutError):
            client(s, timeout=0.2).messages.create(**REQUEST)
        start = time.monotonic()
    assert time.monotonic() - start < 2.0


def test_malformed_json_body(server: ModelServer) -> None:
    server.script(malformed())
    with pytest.raises(ValueError):
        client(server).messages.create(**REQUEST)


def test_every_request_is_recorded_with_its_body_and_a_masked_key(server: ModelServer) -> None:
    server.script(prose(), prose())
    c = client(server)
    c.messages.create(**REQUEST)
    c.messages.create(**{**REQUEST, "system": "sys"})
    assert len(server.requests) == 2
    assert server.requests[0].path == "/v1/messages"
    assert server.bodies[1]["system"] == "sys"
    assert server.bodies[0]["messages"] == REQUEST["messages"]
    auth = {k.lower(): v for k, v in server.requests[0].headers.items()}
    secret_headers = [v for k, v in auth.items() if k in ("authorization", "x-api-key")]
    assert secret_headers and all("test-key" not in v for v in secret_headers)


def test_empty_script_is_a_visible_500(server: ModelServer) -> None:
    with pytest.raises(anthropic.InternalServerError) as info:
        client(server).messages.create(**REQUEST)
    assert "ran out" in str(info.value.body)


def test_fallback_answers_forever_and_scripts_can_read_the_request(server: ModelServer) -> None:
    seen: list[int] = []

    def echo(body: dict) -> Reply:  # type: ignore[type-arg]
        seen.append(len(body["messages"]))
        return prose(f"turn {len(seen)}")

    server.set_fallback(echo)
    c = client(server)
    texts = [c.messages.create(**REQUEST).content[0].text for _ in range(3)]
    assert texts == ["turn 1", "turn 2", "turn 3"]
    assert seen == [1, 1, 1]
    assert server.remaining == 0

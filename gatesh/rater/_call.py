"""One model call through the official SDK, with our policy around it.

Guarantees: the SDK never retries (``max_retries=0``: whether to ask again is ours to decide);
a call returns within its budget or raises; every foreign error is translated here, at the
boundary, into :class:`gatesh._errors.BackendError` with a fail-closed cause and a *sanitised*
status — the HTTP status and the provider's error type, never the provider's free-text message
(which may echo the prompt) and never a header.

    cause        raised for
    timeout      the budget ran out (the SDK's own timeout, or our wall-clock deadline)
    error        an HTTP error status, a connection failure, anything unexpected
    unparseable  a response body that is not the JSON the SDK expects
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import TypeVar

import anthropic

from gatesh._errors import BackendError
from gatesh.rater._api import Request, Response, body, decode

T = TypeVar("T")

_ERROR_TYPE = re.compile(r"^[a-z_]{1,40}$")


def make_client(*, api_key: str, base_url: str | None, timeout_s: float) -> anthropic.Anthropic:
    """An SDK client with retries off and tracing off. ``base_url`` None means the SDK's default."""
    return anthropic.Anthropic(
        api_key=api_key,
        base_url=base_url,
        max_retries=0,
        timeout=timeout_s,
        open_telemetry=False,
    )


def seconds(value: float) -> str:
    """A duration for a reason string: ``0.3 s``, ``30 s``."""
    return f"{value:g} s"


def with_deadline(fn: Callable[[], T], budget_s: float) -> T:
    """``fn()``'s result, or BackendError("timeout") once ``budget_s`` has passed.

    The SDK's timeout bounds each phase of a request (connect, each read), not the whole of it,
    so a server trickling bytes could outlast it; this wall-clock deadline is the one budget.
    A call that outlives it finishes in a daemon thread and its result is dropped.
    """
    if budget_s <= 0:
        raise BackendError("timeout", f"no answer within {seconds(0)}")
    value: list[T] = []
    error: list[BaseException] = []
    done = threading.Event()

    def run() -> None:
        try:
            value.append(fn())
        except BaseException as exc:  # handed to the caller's thread below
            error.append(exc)
        finally:
            done.set()

    threading.Thread(target=run, name="gatesh-model-call", daemon=True).start()
    if not done.wait(budget_s):
        raise BackendError("timeout", f"no answer within {seconds(budget_s)}")
    if error:
        raise error[0]
    return value[0]


def create_message(client: anthropic.Anthropic, request: Request, *, budget_s: float) -> Response:
    """The answer to ``request`` within ``budget_s``, decoded; foreign errors become BackendError."""
    kwargs = body(request)
    try:
        answer = with_deadline(lambda: client.messages.create(**kwargs, timeout=budget_s), budget_s)
    except BackendError:
        raise
    except Exception as exc:
        raise translate(exc, budget_s) from exc
    return decode(answer)


def translate(exc: BaseException, budget_s: float) -> BackendError:
    """The fail-closed cause and sanitised status for an exception the SDK raised."""
    if isinstance(exc, anthropic.APITimeoutError):
        return BackendError("timeout", f"no answer within {seconds(budget_s)}")
    if isinstance(exc, anthropic.APIStatusError):
        return BackendError("error", f"HTTP {exc.status_code}{_error_type(exc.body)}")
    if isinstance(exc, anthropic.APIResponseValidationError):
        return BackendError("unparseable", "malformed response body")
    if isinstance(exc, anthropic.APIConnectionError):
        return BackendError("error", "connection failed")
    if isinstance(exc, ValueError):  # JSONDecodeError and pydantic's ValidationError included
        return BackendError("unparseable", "malformed response body")
    return BackendError("error", f"unexpected {type(exc).__name__}")


def _error_type(body: object) -> str:
    """`` rate_limit_error`` from an error body, when it has a well-formed type; else empty."""
    if isinstance(body, dict):
        err = body.get("error")
        kind = err.get("type") if isinstance(err, dict) else None
        if isinstance(kind, str) and _ERROR_TYPE.match(kind):
            return f" {kind}"
    return ""

"""The ``anthropic`` rater backend (S4): one forced tool call per command, failing closed.

Guarantees of :meth:`AnthropicRater.rate`: it never raises; it returns within the timeout budget
(plus bookkeeping); a rating it could not obtain is ``destructive`` with a reason starting
"Could not assess this command:" that names the cause and the provider's sanitised status, and
is never cached; after :data:`HEALTH_STREAK` failures in a row one notice is ready for the person.

Model defaults, picked from the installed SDK's model list (``anthropic.types.Model``):
:data:`DEFAULT_RATER_MODEL` is the newest small, fast tier (Haiku): the rater is asked about most
commands that leave the fast path, so latency and cost dominate and the question is narrow.
:data:`DEFAULT_CHECKER_MODEL` is the newest mid tier (Sonnet): the alignment check is asked
rarely, reads a conversation, and must honour role boundaries, which smaller models do worse.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from typing import Any, Final, Protocol

from gatesh._errors import BackendError
from gatesh._types import Facts, Outcome, Verdict
from gatesh.config import DEFAULT_CHECKER_MODEL, DEFAULT_RATER_MODEL
from gatesh.rater._api import Request, Response
from gatesh.rater._cache import VerdictCache, cache_key
from gatesh.rater._prompt import (
    PROMPT_VERSION,
    build_request,
    build_user_turn,
    parse_rating,
)
from gatesh.rater.captures import CaptureRing, default_ring
from gatesh.rater.captures import Verdict as Captured

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_CHECKER_MODEL",
    "DEFAULT_RATER_MODEL",
    "DEFAULT_TIMEOUT_S",
    "FAIL_PREFIX",
    "AnthropicRater",
    "VerdictCache",
    "fail_closed",
    "from_config",
]

DEFAULT_API_KEY_ENV: Final = "ANTHROPIC_API_KEY"
DEFAULT_TIMEOUT_S: Final = 30.0
#: Failures in a row before the person is told once (S4).
HEALTH_STREAK: Final = 3
#: A rating is one short tool call; this leaves room for a long reason and remedy.
MAX_TOKENS: Final = 512
FAIL_PREFIX: Final = "Could not assess this command:"

#: What each fail-closed cause says, before the provider's status in parentheses.
CAUSE_TEXT: Final[dict[str, str]] = {
    "no-model": "no model is available",
    "timeout": "the model did not answer in time",
    "unparseable": "the model's answer was not a rating",
    "error": "the model call failed",
}


def fail_closed(cause: str, status: str, *, model: str = "", duration_ms: float = 0.0) -> Verdict:
    """The verdict for a rating that was never obtained: destructive, the cause named (S4)."""
    return Verdict(
        outcome=Outcome.DESTRUCTIVE,
        reason=f"{FAIL_PREFIX} {CAUSE_TEXT[cause]} ({status})",
        backend="anthropic",
        model=model,
        duration_ms=duration_ms,
        fail_cause=cause,
    )


class AnthropicRater:
    """Rates commands with a model through the Messages API. Satisfies ``gatesh.rater.Rater``.

    ``api_key`` None or empty means no model: every rating fails closed with ``no-model``.
    ``cache`` None gives the rater its own :class:`VerdictCache`. ``home`` (default: the
    process's home) is folded to ``~`` in everything the model sees. ``captures`` (default: the
    process-wide ring) records every call for ``gatesh dump``.
    """

    name = "anthropic"

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        cache: VerdictCache | None = None,
        home: str | None = None,
        captures: CaptureRing | None = None,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        self.model = model or DEFAULT_RATER_MODEL
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.cache = cache if cache is not None else VerdictCache()
        self.home = home if home is not None else os.path.expanduser("~")
        self.captures = captures if captures is not None else default_ring()
        self.max_tokens = max_tokens
        self._api_key_env = api_key_env
        self._client: Any = None
        if api_key:
            from gatesh.rater._call import make_client

            self._client = make_client(api_key=api_key, base_url=base_url, timeout_s=timeout_s)
        self._lock = threading.Lock()
        self._streak = 0
        self._notice: str | None = None
        self._notified = False

    # -- the one question ----------------------------------------------------------------------

    def rate(self, facts: Facts, *, cwd: str) -> Verdict:
        """The outcome of ``facts.text`` according to the model; fail-closed, never raises."""
        start = time.monotonic()
        try:
            verdict = self._rate(facts, cwd, start)
        except Exception as exc:  # a bug of ours must still fail closed, never allow
            verdict = fail_closed(
                "error", f"internal {type(exc).__name__}", model=self.model, duration_ms=_ms(start)
            )
        if not verdict.cached:
            self._note_health(verdict)
        return verdict

    def _rate(self, facts: Facts, cwd: str, start: float) -> Verdict:
        if self._client is None:
            return fail_closed("no-model", f"${self._api_key_env} is not set", model=self.model)
        prompt = build_user_turn(facts, self.home)
        key = cache_key(
            command=prompt.command,
            cwd=cwd,
            backend=self.name,
            model=self.model,
            prompt_version=PROMPT_VERSION,
            context=prompt.context,
        )
        hit = self.cache.get(key)
        if hit is not None:
            return dataclasses.replace(hit, duration_ms=_ms(start))
        request = build_request(prompt, model=self.model, max_tokens=self.max_tokens)
        response: Response | None = None
        try:
            from gatesh.rater._call import create_message

            response = create_message(self._client, request, budget_s=self.timeout_s)
            outcome, reason, remedy = parse_rating(response)
        except BackendError as exc:
            verdict = fail_closed(exc.cause, exc.detail, model=self.model, duration_ms=_ms(start))
            self._capture(request, response, verdict, exc.detail)
            return verdict
        verdict = Verdict(
            outcome=outcome,
            reason=reason,
            remedy=remedy,
            backend=self.name,
            model=self.model,
            duration_ms=_ms(start),
        )
        self._capture(request, response, verdict, "ok")
        self.cache.put(key, verdict)
        return verdict

    # -- health (S4: one notice after 3 failures in a row) -------------------------------------

    def health_notice(self) -> str | None:
        """The pending notice once, then None until the model recovers and fails 3 times again."""
        with self._lock:
            notice, self._notice = self._notice, None
            return notice

    def _note_health(self, verdict: Verdict) -> None:
        with self._lock:
            if not verdict.fail_cause:
                self._streak, self._notified, self._notice = 0, False, None
                return
            self._streak += 1
            if self._streak >= HEALTH_STREAK and not self._notified:
                self._notified = True
                self._notice = (
                    f"gatesh: the anthropic rater ({self.model}) failed {self._streak} times in a row "
                    f"(last: {verdict.reason[len(FAIL_PREFIX) :].strip()}); until it recovers, every "
                    f"command it is asked about is treated as destructive."
                )

    def _capture(
        self, request: Request, response: Response | None, verdict: Verdict, status: str
    ) -> None:
        self.captures.record(
            kind="rater",
            backend=self.name,
            model=self.model,
            request=request,
            response=response,
            duration_ms=verdict.duration_ms,
            fail_cause=verdict.fail_cause,
            status=status,
            verdict=Captured(verdict.outcome.value, verdict.reason, verdict.remedy),
        )


class ModelConfig(Protocol):
    """What :func:`from_config` reads; the config module's rater section satisfies it."""

    model: str
    base_url: str | None
    api_key_env: str
    timeout_s: float


def _setting(name: str) -> str | None:
    """``$name``, else the person's ``daemon.env`` entry for it (S9.7; the daemon has already
    applied that file to its environment, a person's own CLI has not)."""
    value = os.environ.get(name)
    if value:
        return value
    from gatesh import _paths
    from gatesh._person import read_daemon_env

    return read_daemon_env(_paths.current().config_dir)[0].get(name) or None


def resolve_api_key(api_key_env: str | None) -> str | None:
    """The key from the variable the config names (default ANTHROPIC_API_KEY): this process's
    environment, else the person's daemon.env."""
    return _setting(api_key_env or DEFAULT_API_KEY_ENV)


def resolve_base_url(base_url: str | None) -> str | None:
    """The configured base URL, else ``ANTHROPIC_BASE_URL`` (the environment, else daemon.env),
    else None (the SDK's default)."""
    return base_url or _setting("ANTHROPIC_BASE_URL")


def from_config(
    model_cfg: ModelConfig | Any, *, cache: VerdictCache | None = None
) -> AnthropicRater:
    """An :class:`AnthropicRater` from any object with ``model``, ``base_url``, ``api_key_env``
    and ``timeout_s`` (missing or empty ones take the defaults)."""
    env = getattr(model_cfg, "api_key_env", None) or DEFAULT_API_KEY_ENV
    return AnthropicRater(
        model=getattr(model_cfg, "model", None) or DEFAULT_RATER_MODEL,
        base_url=resolve_base_url(getattr(model_cfg, "base_url", None)),
        api_key=resolve_api_key(env),
        timeout_s=float(getattr(model_cfg, "timeout_s", None) or DEFAULT_TIMEOUT_S),
        cache=cache,
        api_key_env=env,
    )


def _ms(start: float) -> float:
    return (time.monotonic() - start) * 1000.0

"""Text as a model sees it: normalised, home-folded, redacted, fenced so it cannot close its fence.

Every value that reaches a model prompt (the rater's and the alignment check's) goes through
:func:`model_text`; every untrusted value sits inside a :func:`fence` whose tag carries a nonce
chosen by :func:`pick_nonce` so that none of the fenced texts contains it. A text therefore cannot
contain its own closing line, whatever it holds.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable

from gatesh.reading import normalize_for_model
from gatesh.redact import redact

__all__ = ["fence", "model_text", "normalize_for_model", "one_line", "pick_nonce", "redact"]

#: Longest single value (command, script, message) a prompt carries; past it, a marked cut.
MAX_FENCED_CHARS = 16_384


def model_text(text: str, home: str | None) -> str:
    """``text`` as a model may see it: normalised, home-folded, secrets redacted (S4, S15)."""
    return redact(normalize_for_model(text, home))


def one_line(text: str, limit: int) -> str:
    """``text`` on one line (whitespace runs collapsed), at most ``limit`` characters with the ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)] + "…"


def bounded(text: str, limit: int = MAX_FENCED_CHARS) -> str:
    """``text`` cut to ``limit`` characters with a note that says so (never silently truncated)."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[gatesh: cut here; {len(text) - limit} more characters not shown]"


def pick_nonce(texts: Iterable[str]) -> str:
    """A random tag that occurs in none of ``texts`` (so none of them can forge a fence line)."""
    corpus = "\x00".join(texts)
    while True:
        nonce = secrets.token_hex(6)
        if nonce not in corpus:
            return nonce


def fence(label: str, text: str, nonce: str) -> str:
    """``text`` between an opening and a closing line tagged with ``label`` and ``nonce``.

    Obligation on the caller: ``nonce`` came from :func:`pick_nonce` over every fenced text of
    the prompt, so the closing line cannot occur inside any of them.
    """
    return f"<<{label} {nonce}>>\n{text}\n<</{label} {nonce}>>"

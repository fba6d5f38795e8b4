"""The rater's verdict cache (S4): bounded, time-limited, and never holding a fail-closed verdict."""

from __future__ import annotations

import dataclasses
import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable

from gatesh._types import Verdict

__all__ = ["VerdictCache", "cache_key"]

#: Enough for a long working day of distinct commands; an entry is a few hundred bytes.
DEFAULT_MAX_ENTRIES = 2048
#: An hour: a rating is a property of the text, but the prompt context (scripts) can change.
DEFAULT_TTL_S = 3600.0


def cache_key(
    *,
    command: str,
    cwd: str,
    backend: str,
    model: str,
    prompt_version: str,
    context: Iterable[str] = (),
) -> str:
    """A digest of everything a verdict depends on.

    ``command`` is the normalised command; ``context`` is every other text the prompt carried
    (reader and floor notes, script bodies), so a script that changed on disk is rated afresh.
    The key is a digest so the cache never holds a command (or a secret in one) in clear.
    """
    h = hashlib.sha256()
    for part in (backend, model, prompt_version, cwd, command, *context):
        data = part.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


class VerdictCache:
    """A thread-safe LRU of verdicts with a time limit per entry.

    Invariant: no entry has ``fail_cause`` set — :meth:`put` refuses those (S4: never cached),
    so a provider outage is never remembered past the call that met it.
    """

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        ttl_s: float = DEFAULT_TTL_S,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_entries = max_entries
        self.ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, tuple[float, Verdict]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> Verdict | None:
        """The cached verdict for ``key`` marked ``cached=True``, or None when absent or expired."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or self._clock() - entry[0] > self.ttl_s:
                if entry is not None:
                    del self._entries[key]
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return dataclasses.replace(entry[1], cached=True)

    def put(self, key: str, verdict: Verdict) -> bool:
        """Remember ``verdict`` under ``key``; False (and nothing stored) when it is fail-closed."""
        if verdict.fail_cause or self.max_entries <= 0:
            return False
        with self._lock:
            self._entries[key] = (self._clock(), dataclasses.replace(verdict, cached=False))
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return True

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

"""Decisions off the event loop, each with a hard deadline (S2 "bounded time", S15; issue 21).

One input once held the daemon's event loop for minutes (bashlex looping on a 56-character line):
every other client waited, and still refused four minutes later. Here each decision runs in a
worker thread of a bounded pool and the event loop only waits for it, at most until its deadline.

Guarantees:

- :meth:`DecisionPool.run` returns the function's result, or :class:`Overrun` once the deadline
  passes; the caller then refuses the command ("took too long to read"), never allows it.
- A thread cannot be killed, so an overrunning worker is *abandoned*: its result, if it ever comes,
  is dropped; an exception is raised inside it at its next Python instruction (a loop in pure
  Python, such as bashlex's, ends there); and the pool is replaced by a fresh one at once, so the
  next decision never queues behind it.
- A worker still running :data:`STUCK_GRACE_S` after that (stuck in C code) is counted. At
  :data:`MAX_STUCK` such workers the daemon is asked to stop (``on_give_up``): clients then start
  a new one on their next command, which is what their refusal message promises.
- :func:`arm_loop_watchdog` covers the one case no thread can see: C code holding the
  interpreter lock, so nothing Python runs. If the event loop has not re-armed it for
  :data:`LOOP_STALL_S`, the process exits (its lock is released with it) and the next client
  starts a new daemon.
"""

from __future__ import annotations

import asyncio
import ctypes
import faulthandler
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from gatesh._errors import Abandoned

__all__ = [
    "LOCAL_DEADLINE_S",
    "Abandoned",
    "DecisionPool",
    "Overrun",
    "arm_loop_watchdog",
    "model_deadline",
]

T = TypeVar("T")

# A decision with only local backends takes well under 5 ms (S14: p99); the reader's own budget is
# 0.5 s. 1.5 s is far above any real reading and leaves the client's 2 s answer bound (issue 21).
LOCAL_DEADLINE_S: Final = 1.5
# How long an abandoned worker may take to notice the exception raised in it.
STUCK_GRACE_S: Final = 2.0
# Workers stuck in C code after abandoning: at this many the daemon restarts itself.
MAX_STUCK: Final = 2
# The event loop re-arms the watchdog every second; a loop silent this long is frozen. Longer than
# any blocking step the loop itself takes (an audit fsync on a slow disk: well under a second).
LOOP_STALL_S: Final = 30.0
LOOP_REARM_S: Final = 1.0


def model_deadline(rater_timeout_s: float, checker_timeout_s: float) -> float:
    """The deadline of a decision that may call models: the rater's and the alignment checker's
    budgets (S4, S5: at most 4 checker turns, one budget each) and the local deadline."""
    return LOCAL_DEADLINE_S + rater_timeout_s + 4 * checker_timeout_s


@dataclass(frozen=True)
class Overrun:
    """The decision did not finish within ``seconds``."""

    seconds: float


class _Job(Generic[T]):
    """The thread a submitted function runs in, known once it starts."""

    def __init__(self, fn: Callable[..., T], args: tuple[Any, ...]) -> None:
        self.fn, self.args = fn, args
        self.thread: threading.Thread | None = None
        self.abandoned = False

    def __call__(self) -> T:
        self.thread = threading.current_thread()
        try:
            return self.fn(*self.args)
        except Abandoned:
            raise RuntimeError("abandoned past its deadline") from None


class DecisionPool:
    """A bounded pool of decision threads, replaced whenever one of them overruns."""

    def __init__(self, workers: int, *, on_give_up: Callable[[str], None] | None = None) -> None:
        self.workers = workers
        self.on_give_up = on_give_up
        self._executor = self._new()
        self.abandoned: list[_Job[Any]] = []
        self.overruns = 0

    def _new(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="gatesh-decide")

    async def run(
        self,
        fn: Callable[..., T],
        *args: Any,
        deadline: float,
        on_wait: Callable[[], None] | None = None,
        wait_step: float = 10.0,
    ) -> T | Overrun:
        """``fn(*args)`` in a worker; its result, or Overrun after ``deadline`` seconds.

        ``on_wait`` is called every ``wait_step`` seconds while it runs (the heartbeat that tells
        the client the daemon is alive). Exceptions from ``fn`` are raised here.
        """
        loop = asyncio.get_running_loop()
        job: _Job[T] = _Job(fn, args)
        cf: Future[T] = self._executor.submit(job)
        # The wait is one plain loop future at a time, settled by the worker's end (through
        # call_soon_threadsafe, so on the loop, after this task suspended) or by a timer: cheaper
        # per decision than wrap_future and asyncio.wait, which the loop paid on every check (S14).
        current: list[asyncio.Future[None]] = []
        cf.add_done_callback(lambda _: loop.call_soon_threadsafe(_settle_first, current))
        started = loop.time()
        try:
            while not cf.done():
                left = started + deadline - loop.time()
                if left <= 0:
                    break
                step: asyncio.Future[None] = loop.create_future()
                current[:] = [step]
                timer = loop.call_later(min(left, wait_step), _settle_first, current)
                try:
                    await step
                finally:
                    timer.cancel()
                if not cf.done() and on_wait is not None and loop.time() - started < deadline:
                    on_wait()
        except asyncio.CancelledError:
            cf.cancel()  # not started yet: it never runs (a running one ends on its own)
            raise
        if cf.done():
            return cf.result()
        cf.cancel()
        self._abandon(job)
        return Overrun(deadline)

    def _abandon(self, job: _Job[Any]) -> None:
        """Give up on ``job`` (steps numbered): its worker is never waited for again."""
        self.overruns += 1
        job.abandoned = True
        # 1. A fresh pool for everything after this (the old one ends its other work and exits).
        old, self._executor = self._executor, self._new()
        old.shutdown(wait=False, cancel_futures=False)
        # 2. Stop the worker at its next Python instruction.
        if job.thread is not None and job.thread.ident is not None:
            _raise_in(job.thread.ident, Abandoned)
        self.abandoned.append(job)
        print(
            f"gatesh daemon: a decision passed its deadline; its worker was abandoned "
            f"({self.overruns} so far)",
            file=sys.stderr,
            flush=True,
        )
        # 3. Later: count the workers that did not stop.
        threading.Timer(STUCK_GRACE_S, self._count_stuck).start()

    def _count_stuck(self) -> None:
        self.abandoned = [j for j in self.abandoned if j.thread is not None and j.thread.is_alive()]
        if len(self.abandoned) >= MAX_STUCK and self.on_give_up is not None:
            self.on_give_up(f"{len(self.abandoned)} decision workers are stuck past their deadline")

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def _settle_first(futures: list[asyncio.Future[None]]) -> None:
    """Mark the future ``futures`` holds done (on the event loop), unless it already is."""
    if futures and not futures[0].done():
        futures[0].set_result(None)


def _raise_in(ident: int, exc: type[BaseException]) -> None:
    """Raise ``exc`` in the thread ``ident`` at its next Python instruction (CPython)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exc))


async def arm_loop_watchdog(stop: asyncio.Event) -> None:
    """Until ``stop``: keep the process's last-resort timer armed (see the module's doc)."""
    try:
        while not stop.is_set():
            faulthandler.dump_traceback_later(LOOP_STALL_S, exit=True)
            try:
                await asyncio.wait_for(stop.wait(), LOOP_REARM_S)
            except TimeoutError:
                pass
    finally:
        faulthandler.cancel_dump_traceback_later()

"""In-process decision latency over the tldr corpus (S14: p50 <= 0.5 ms, p99 <= 5 ms).

Runs the whole pipeline (both readers, policy, builtin rater) per command in a fresh session, the
way the daemon does for a deterministic decision, and reports p50/p99, decisions per second and
the share decided without a model call with a key present (S14: the fast path, lists, and the
builtin verdicts the cascade lets stand; benchmarks/cascade.py measures it against a loopback API).
Commands are decided in the realistic scratch working tree of ``gatesh.testing.worktree`` (HOME its
home), so the working-tree lookups of S3.2 (git index, ignore rules, a git run for the git verbs) are
part of every figure; ``--cwd DIR`` decides in DIR instead.
Usage: python benchmarks/decision_latency.py [--limit N] [--cwd DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import corpus_rows, emit, summary

from gatesh._types import Decision, Stage
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.policy import floors
from gatesh.rater.builtin import BuiltinRater
from gatesh.rater.cascade import asked_for
from gatesh.session import SessionState

MODEL_FREE = {
    Stage.HALTED,
    Stage.DENY_LIST,
    Stage.HARDLINE,
    Stage.SELF_PROTECTION,
    Stage.BYPASS,
    Stage.ESCALATE_LIST,
    Stage.ALLOW_LIST,
    Stage.RUNG,
    Stage.READ_ONLY,
}


def builtin_stands(d: Decision) -> bool:
    """Whether the cascade would let this builtin rating stand with no model call (S4): decided
    offline with a key present. The pipeline hands the rater the floor notes; so does this."""
    if d.verdict is None or d.stage not in (Stage.RATER, Stage.FLOOR):
        return False
    rated = replace(d.facts, floor_notes=tuple(floors.note(f) for f in d.floors))
    return not asked_for(d.verdict, rated)[0].asks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--corpus", default="tldr")
    parser.add_argument(
        "--cwd", default=None, help="decide in this folder instead of a scratch working tree"
    )
    args = parser.parse_args()
    rows = corpus_rows(args.corpus, args.limit)
    config = default()
    rater = BuiltinRater()
    cwd = args.cwd
    if cwd is None:
        import tempfile

        from gatesh.testing import worktree

        scratch = worktree.build(tempfile.mkdtemp(prefix="gatesh-latency-"))
        os.environ["HOME"] = scratch.home
        cwd = scratch.repo
    for r in rows[:200]:  # warm imports and caches
        decide(r["cmd"], cwd=cwd, config=config, session=SessionState(), rater=rater)
    times: list[float] = []
    fast = floored = 0
    start = time.perf_counter()
    for r in rows:
        t0 = time.perf_counter()
        d = decide(r["cmd"], cwd=cwd, config=config, session=SessionState(), rater=rater)
        times.append((time.perf_counter() - t0) * 1000)
        fast += d.stage in MODEL_FREE or builtin_stands(d)
        floored += bool(d.floors) and d.stage is not Stage.READ_ONLY
    total = time.perf_counter() - start
    s = summary(times)
    n = len(rows)
    print(
        f"{args.corpus}: {n} commands, decision p50 {s['p50']:.3f} ms, p90 {s['p90']:.3f} ms, "
        f"p99 {s['p99']:.3f} ms, {n / total:.0f} decisions/s"
    )
    print(
        f"decided without a model call with a key present (read-only path, lists, hardline, "
        f"self-protection, the builtin stage of the cascade): {100 * fast / n:.1f}%"
    )
    emit(
        "decision_latency",
        {"corpus": args.corpus, "ms": s, "per_second": n / total, "model_free_share": fast / n},
    )


if __name__ == "__main__":
    main()

"""CPU time of self-protection's check (S3.4) per command, over every 10th tldr row.

Each row is read once (the reader's facts, in the realistic scratch working tree of
``gatesh.testing.worktree``, HOME its home); then ``selfprotect.check`` is timed alone on those
facts, the best of ``--repeat`` checks per row (each on freshly read facts, as in the daemon), with
``time.process_time_ns`` (CPU, not wall time: the machine is shared). Reports the mean and
percentiles of the per-row CPU time in microseconds.

Usage: python benchmarks/selfprotect_check.py [--step 10] [--repeat 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import corpus_rows, emit, summary

from gatesh import _paths
from gatesh.policy import selfprotect
from gatesh.reading import read
from gatesh.testing import worktree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="tldr")
    parser.add_argument("--step", type=int, default=10, help="take every STEP-th row")
    parser.add_argument("--repeat", type=int, default=3, help="timed checks per row (best)")
    args = parser.parse_args()
    rows = corpus_rows(args.corpus)[:: args.step]
    with tempfile.TemporaryDirectory(prefix="sp-bench-") as root:
        scratch = worktree.build(root)
        os.environ["HOME"] = scratch.home
        paths = _paths.current()
        texts = [str(r.get("cmd", "")) for r in rows]
        for text in texts:  # warm the caches of places and rules once, as a running daemon has
            selfprotect.check(read(text, cwd=scratch.repo), paths, scratch.repo)
        per_row: list[float] = []
        for text in texts:
            best = float("inf")
            for _ in range(args.repeat):
                facts = read(text, cwd=scratch.repo)  # fresh facts, as every check has
                start = time.process_time_ns()
                selfprotect.check(facts, paths, scratch.repo)
                best = min(best, (time.process_time_ns() - start) / 1000)
            per_row.append(best)
    figures = summary(per_row)
    print(
        f"selfprotect.check over {len(texts)} {args.corpus} rows (every {args.step}th): "
        f"mean {figures['mean']:.1f} us CPU, p50 {figures['p50']:.1f}, p99 {figures['p99']:.1f}"
    )
    emit("selfprotect_check", {"corpus": args.corpus, "step": args.step, "us": figures})


if __name__ == "__main__":
    main()

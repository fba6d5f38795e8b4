"""Helpers shared by the benchmark scripts: corpus location, percentiles, the JSON line."""

from __future__ import annotations

import json
import os
import platform
import signal
import statistics
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.environ.get(
    "GATESH_CORPUS", os.path.normpath(os.path.join(HERE, "..", "..", "shared", "corpus"))
)


def corpus_rows(name: str, limit: int | None = None) -> list[dict[str, Any]]:
    """Rows of ``../shared/corpus/NAME/commands.jsonl``; SystemExit with a clear message if absent."""
    path = os.path.join(CORPUS, name, "commands.jsonl")
    if not os.path.exists(path):
        raise SystemExit(f"corpus {name!r} not found at {path} (set GATESH_CORPUS); skipping")
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            rows.append(json.loads(line))
            if limit and len(rows) >= limit:
                break
    return rows


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50": pct(values, 50),
        "p90": pct(values, 90),
        "p99": pct(values, 99),
        "mean": statistics.fmean(values) if values else float("nan"),
    }


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def emit(name: str, figures: dict[str, Any]) -> None:
    """Print the machine-readable line every benchmark ends with."""
    print(json.dumps({"benchmark": name, "machine": machine(), **figures}))


def stop_daemon(runtime_dir: str, wait_s: float = 5.0) -> None:
    """SIGTERM the gatesh daemon whose lock is under ``runtime_dir`` (a benchmark's scratch
    XDG_RUNTIME_DIR), so no daemon outlives the run, and wait up to ``wait_s`` for it to end (it
    writes its state as it leaves: a scratch folder removed before that could come back);
    nothing when there is none."""
    try:
        with open(os.path.join(runtime_dir, "gatesh", "daemon.lock")) as f:
            pid = int(f.read().strip())
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError):
        return
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            return
        time.sleep(0.01)

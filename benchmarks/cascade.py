"""The cascade (S4, S14): with a key, how much is decided with no model request, and is it ever weaker?

Two figures, measured side by side in one run against a loopback Messages API (the real SDK over
HTTP on 127.0.0.1; a stand-in model that answers every rating ``safe`` and every alignment check
by viewing the command and asking the person):

1. Model-free share over tldr and nl2bash (S14: >= 70 % of tldr): each row decided in a fresh
   session at rung auto with a key present, by two raters — ``model`` (the model alone: what
   ``auto`` did with a key before the cascade) and ``cascade`` (the builtin first, the model only
   where the builtin is not sure) — and the same model checker. Per arm: the share of rows that
   made no request, the requests made, the per-row latency (all rows, rows with no request, rows
   with one), and why the cascade asked.
2. Never weaker: on the public corpora with risky rows and the bypass corpus, the share of risky
   rows not allowed, decided by the builtin alone and by the cascade with the always-safe model
   (the builtin checker for both, so only the rater differs). The cascade's share must not fall.

Usage: python benchmarks/cascade.py [--sample N] [--only share|weaker]
The last line is one JSON object with every figure. Nothing is executed.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import sys
import tempfile
import time
from collections import Counter
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import corpus_rows, emit, summary

from gatesh._types import Action, Decision
from gatesh.alignment_model import make_checker
from gatesh.config import Config, default
from gatesh.pipeline import decide
from gatesh.rater import Rater, make_rater
from gatesh.rater.builtin import BuiltinRater
from gatesh.session import SessionState
from gatesh.testing.model_server import ModelServer
from gatesh.testing.standin import answers

SHARE_CORPORA = ("tldr", "nl2bash")
RISKY_CORPORA = ("dcg", "claude_code_safety_net", "gtfobins", "atomic_red_team")
KEY_ENV = "GATESH_BENCH_CASCADE_KEY"
# Rows per corpus for the share figure: both arms decide the same rows (every k-th row, so the
# sample spreads over the whole corpus and is the same in every run). 0 means every row.
DEFAULT_SAMPLE = 3000


def config_for(server: ModelServer) -> Config:
    """The default config with a key present, pointed at the loopback server."""
    base = default()
    return dataclasses.replace(
        base, rater=dataclasses.replace(base.rater, base_url=server.base_url, api_key_env=KEY_ENV)
    )


def sample(rows: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    if n <= 0 or len(rows) <= n:
        return rows
    step = len(rows) / n
    return [rows[int(i * step)] for i in range(n)]


def run_arm(
    rows: list[dict[str, Any]],
    *,
    config: Config,
    rater: Rater,
    checker: Any,
    server: ModelServer | None,
    cwd: str,
) -> dict[str, Any]:
    """Decide every row; the figures of one arm."""
    all_ms: list[float] = []
    free_ms: list[float] = []
    asked_ms: list[float] = []
    requests = 0
    why: Counter[str] = Counter()
    for r in rows:
        before = len(server.requests) if server is not None else 0
        t0 = time.perf_counter()
        d = decide(
            r["cmd"], cwd=cwd, config=config, session=SessionState(), rater=rater, checker=checker
        )
        ms = (time.perf_counter() - t0) * 1000
        made = (len(server.requests) - before) if server is not None else 0
        requests += made
        all_ms.append(ms)
        (asked_ms if made else free_ms).append(ms)
        c = d.verdict.cascade if d.verdict is not None else None
        why[c.asked.value if c is not None else d.stage.value] += 1
    n = len(rows)
    return {
        "rows": n,
        "model_free": len(free_ms),
        "model_free_share": len(free_ms) / n if n else 0.0,
        "requests": requests,
        "ms": summary(all_ms),
        "ms_model_free": summary(free_ms),
        "ms_asked": summary(asked_ms),
        "why": dict(why.most_common()),
    }


def share(sample_n: int, cwd: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with ModelServer(fallback=answers("safe")) as server:
        os.environ[KEY_ENV] = "bench-key"
        config = config_for(server)
        checker = make_checker(config, "anthropic")
        for corpus in SHARE_CORPORA:
            try:
                rows = sample(corpus_rows(corpus), sample_n)
            except SystemExit as exc:
                print(exc)
                continue
            for r in rows[:100]:  # warm imports and the readers
                decide(
                    r["cmd"], cwd=cwd, config=config, session=SessionState(), rater=BuiltinRater()
                )
            arms = {}
            for arm in ("model", "cascade"):
                rater = make_rater(config, "anthropic" if arm == "model" else "cascade")
                arms[arm] = run_arm(
                    rows, config=config, rater=rater, checker=checker, server=server, cwd=cwd
                )
            out[corpus] = arms
            for arm, f in arms.items():
                print(
                    f"{corpus:<8} {arm:<8} {f['rows']} rows: no model request {100 * f['model_free_share']:.1f}%, "
                    f"{f['requests']} requests; per row p50 {f['ms']['p50']:.2f} ms, p99 {f['ms']['p99']:.2f} ms "
                    f"(no request p50 {f['ms_model_free']['p50']:.2f} ms; with one p50 {f['ms_asked']['p50']:.2f} ms)"
                )
            print(f"{corpus:<8} cascade: {arms['cascade']['why']}")
    return out


def _bypass_rows() -> list[dict[str, Any]]:
    path = os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        "tests",
        "fixtures",
        "bypass.py",
    )
    spec = importlib.util.spec_from_file_location("gatesh_bypass_cases", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return [{"cmd": c.command, "label": "risky"} for c in module.CASES]


def _not_allowed(decisions: list[Decision]) -> int:
    return sum(1 for d in decisions if d.action is not Action.ALLOW)


def weaker(cwd: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    corpora: dict[str, list[dict[str, Any]]] = {}
    for corpus in RISKY_CORPORA:
        try:
            corpora[corpus] = [r for r in corpus_rows(corpus) if r.get("label") == "risky"]
        except SystemExit as exc:
            print(exc)
    corpora["bypass"] = _bypass_rows()
    with ModelServer(fallback=answers("safe")) as server:
        os.environ[KEY_ENV] = "bench-key"
        config = config_for(server)
        cascade = make_rater(config, "cascade")
        builtin = BuiltinRater()
        for corpus, rows in corpora.items():
            before = len(server.requests)
            alone = [
                decide(r["cmd"], cwd=cwd, config=config, session=SessionState(), rater=builtin)
                for r in rows
            ]
            both = [
                decide(r["cmd"], cwd=cwd, config=config, session=SessionState(), rater=cascade)
                for r in rows
            ]
            a, b = _not_allowed(alone), _not_allowed(both)
            newly = [
                r["cmd"]
                for r, x, y in zip(rows, alone, both, strict=True)
                if x.action is not Action.ALLOW and y.action is Action.ALLOW
            ]
            n = len(rows)
            out[corpus] = {
                "risky": n,
                "not_allowed_builtin": a,
                "not_allowed_cascade": b,
                "share_builtin": a / n if n else 0.0,
                "share_cascade": b / n if n else 0.0,
                "requests": len(server.requests) - before,
                "newly_allowed": newly[:20],
            }
            print(
                f"{corpus:<24} risky {n}: not allowed builtin alone {100 * a / n:.1f}%, cascade with an "
                f"always-safe model {100 * b / n:.1f}% ({out[corpus]['requests']} requests)"
                + (f"; NEWLY ALLOWED {len(newly)}" if newly else "")
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sample", type=int, default=DEFAULT_SAMPLE, help="rows per corpus for the share (0: all)"
    )
    parser.add_argument("--only", choices=("share", "weaker"), default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gatesh-cascade-") as cwd:
        figures: dict[str, Any] = {"sample": args.sample}
        if args.only in (None, "share"):
            figures["share"] = share(args.sample, cwd)
        if args.only in (None, "weaker"):
            figures["never_weaker"] = weaker(cwd)
    emit("cascade", figures)


if __name__ == "__main__":
    main()

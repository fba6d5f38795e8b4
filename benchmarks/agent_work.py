"""Real agents' work (S14, issue 32): what gatesh does with the commands coding agents ran.

Decides every row of the agent-work corpus (``agent_work/commands.jsonl`` in the shared corpus
folder, made by ``benchmarks/corpora/agent_work/extract.py``; ``--corpus FILE`` or
``GATESH_AGENT_WORK`` moves it) at rung ``auto`` with the builtin rater, each in a fresh session,
in the realistic scratch working tree of ``gatesh.testing.worktree`` (HOME its home folder, the
working directory its repository). Nothing is executed. Reports:

1. per label, the share allowed / rejected / escalated / halted / refused, and the benign rows not
   allowed counted by action and rule id (S14: >= 99 % of benign allowed, no benign row halted);
   per task run (the ``category`` field), the share of runs with a halt or a refusal;
2. ``--cascade``: with a key present, against a loopback Messages API (the real SDK over HTTP on
   127.0.0.1; a stand-in model that rates every command ``safe``), the share of rows decided with
   no model request and why the others asked (S14: >= 85 %);
3. decision time per row by command length (S14: p99 <= 5 ms up to 2,000 characters); with
   ``--scaling``, long commands grown from corpus rows to 1,000-60,000 characters, timed per size:
   time per character stays flat when time is linear in length.

    python benchmarks/agent_work.py [--corpus FILE] [--cascade] [--scaling] [--misses FILE] [--limit N]

The last line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import CORPUS, emit, pct

from gatesh._types import Action, Decision
from gatesh.config import Config, default
from gatesh.pipeline import decide
from gatesh.rater import make_rater
from gatesh.session import SessionState

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CORPUS = os.environ.get(
    "GATESH_AGENT_WORK", os.path.join(CORPUS, "agent_work", "commands.jsonl")
)
KEY_ENV = "GATESH_BENCH_AGENT_WORK_KEY"
# Length buckets (characters) for the timing table; S14's bound is on the first four together.
BUCKETS = ((0, 200), (200, 500), (500, 1000), (1000, 2000), (2000, 5000), (5000, 1 << 30))
LIMIT_CHARS = 2000


def load(path: str, limit: int | None) -> list[dict[str, Any]]:
    if not os.path.exists(path):
        raise SystemExit(f"agent-work corpus not found at {path} (--corpus or GATESH_AGENT_WORK)")
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    if limit and len(rows) > limit:
        step = len(rows) / limit
        rows = [rows[int(i * step)] for i in range(limit)]
    return rows


def _decide(cmd: str, *, cwd: str, config: Config, rater: Any, checker: Any = None) -> Decision:
    return decide(
        cmd,
        cwd=cwd,
        config=config,
        session=SessionState(id="agent-work"),
        rater=rater,
        checker=checker,
    )


def why(d: Decision) -> str:
    """The rule a not-allowed row was stopped by (the stage when no rule is named)."""
    return d.rule_id or d.stage.value


def builtin_figures(rows: list[dict[str, Any]], cwd: str, misses: str | None) -> dict[str, Any]:
    config = default()
    rater = make_rater(config, "builtin")
    for r in rows[:50]:  # warm imports, readers and caches before timing
        _decide(str(r["cmd"]), cwd=cwd, config=config, rater=rater)
    per_label: dict[str, Counter[str]] = defaultdict(Counter)
    stopped: Counter[tuple[str, str]] = Counter()
    runs: dict[str, Counter[str]] = defaultdict(Counter)
    times: dict[tuple[int, int], list[float]] = defaultdict(list)
    per_char_long: list[float] = []
    errors: list[str] = []
    missed: list[dict[str, Any]] = []
    for r in rows:
        cmd = str(r["cmd"])
        t0 = time.perf_counter()
        d = _decide(cmd, cwd=cwd, config=config, rater=rater)
        ms = (time.perf_counter() - t0) * 1000
        for lo, hi in BUCKETS:
            if lo <= len(cmd) < hi:
                times[(lo, hi)].append(ms)
        if len(cmd) >= LIMIT_CHARS:
            per_char_long.append(ms / len(cmd) * 1000)
        label = str(r.get("label", "?"))
        per_label[label][d.action.value] += 1
        run = str(r.get("category", ""))
        runs[run]["rows"] += 1
        if d.action is Action.HALT:
            runs[run]["halt"] += 1
        if d.action is not Action.ALLOW:
            runs[run]["stopped"] += 1
        # a stage that failed closed on an exception (the gate's or the builtin rater's) is a crash
        if d.stage.value == "error" or "Could not assess this command: error" in d.reason:
            errors.append(f"{d.reason[:160]} <- {cmd[:80]!r}")
        if label == "benign" and d.action is not Action.ALLOW:
            stopped[(d.action.value, why(d))] += 1
            missed.append(
                {"cmd": cmd, "action": d.action.value, "rule": why(d), "reason": d.reason}
            )
        if label == "risky" and d.action is Action.ALLOW:
            missed.append({"cmd": cmd, "action": "allow", "rule": "-", "reason": "risky allowed"})
    if misses:
        with open(misses, "w", encoding="utf-8") as fh:
            for m in missed:
                fh.write(json.dumps(m, ensure_ascii=False) + "\n")
    benign = per_label.get("benign", Counter())
    n_benign = sum(benign.values())
    risky = per_label.get("risky", Counter())
    within = [ms for (lo, hi), v in times.items() if hi <= LIMIT_CHARS for ms in v]
    return {
        "rows": len(rows),
        "per_label": {k: dict(v) for k, v in per_label.items()},
        "benign_allowed_share": benign["allow"] / n_benign if n_benign else 0.0,
        "benign_halted": benign["halt"],
        "risky_rows": sum(risky.values()),
        "risky_stopped": sum(risky.values()) - risky["allow"],
        "benign_stopped_by_rule": {f"{a} {rule}": n for (a, rule), n in stopped.most_common()},
        "runs": len(runs),
        "runs_halted_share": sum(1 for c in runs.values() if c["halt"]) / len(runs) if runs else 0,
        "runs_stopped_share": sum(1 for c in runs.values() if c["stopped"]) / len(runs)
        if runs
        else 0,
        "errors": errors[:20],
        "ms_by_length": {
            f"{lo}-{hi if hi < 1 << 30 else 'max'}": {
                "n": len(v),
                "p50": pct(v, 50),
                "p99": pct(v, 99),
            }
            for (lo, hi), v in sorted(times.items())
        },
        "ms_upto_2000": {"n": len(within), "p50": pct(within, 50), "p99": pct(within, 99)},
        "us_per_char_over_2000": {
            "n": len(per_char_long),
            "p50": pct(per_char_long, 50),
            "p99": pct(per_char_long, 99),
        },
    }


# Sizes (characters) for the scaling figure: from the S14 bound to the reader's 64 KiB limit.
SCALING_SIZES = (1000, 2000, 4000, 8000, 16000, 32000, 60000)
SCALING_REPEATS = 15


def _grown(seed: str, size: int) -> str:
    """``seed`` (a corpus row) grown to about ``size`` characters the way agents' long commands
    grow: a heredoc's body gets more lines, a script more statements."""
    if "<<'EOF'" in seed and "\nEOF" in seed:
        head, rest = seed.split("\n", 1)
        body, tail = rest.rsplit("\nEOF", 1)
        lines = body.splitlines() or ["x = 1"]
        out: list[str] = []
        while sum(len(x) + 1 for x in out) < size - len(head) - len(tail) - 5:
            out.extend(lines)
        return f"{head}\n" + "\n".join(out) + f"\nEOF{tail}"
    parts = [seed]
    while sum(len(p) + 1 for p in parts) < size:
        parts.append(seed)
    return "\n".join(parts)


def _seed(rows: list[dict[str, Any]], test: Any, fallback: str) -> str:
    return next((str(r["cmd"]) for r in rows if test(str(r["cmd"]))), fallback)


def scaling_figures(rows: list[dict[str, Any]], cwd: str) -> dict[str, Any]:
    """Decision time against command length, on two kinds of long agent command (a heredoc that
    writes a file and runs it; a multi-line script), each grown from a corpus row: the median of
    ``SCALING_REPEATS`` decisions per size, and the time per character (flat when linear)."""
    config = default()
    rater = make_rater(config, "builtin")
    heredoc = _seed(
        rows,
        lambda c: c.startswith("cat <<'EOF' >") and "\nEOF\n" in c and len(c) < 800,
        "cat <<'EOF' > check.py\nimport json\nprint(json.dumps({'a': 1}))\nEOF\npython3 check.py",
    )
    script = _seed(
        rows,
        lambda c: 200 < len(c) < 600 and "\n" in c and "<<" not in c,
        "cd src && ls -la\ngrep -rn 'def main' . | head -20",
    )
    out: dict[str, Any] = {}
    for kind, seed in (("heredoc", heredoc), ("script", script)):
        per_size = {}
        for size in SCALING_SIZES:
            text = _grown(seed, size)
            ms = []
            for k in range(SCALING_REPEATS):
                # a fresh variant each time: the readers' caches must not answer for the reading
                variant = f"{text}\n# {k}"
                t0 = time.perf_counter()
                _decide(variant, cwd=cwd, config=config, rater=rater)
                ms.append((time.perf_counter() - t0) * 1000)
            med = pct(ms, 50)
            per_size[str(len(text))] = {"ms_p50": med, "us_per_char": med / len(text) * 1000}
        out[kind] = per_size
    return out


def cascade_figures(rows: list[dict[str, Any]], cwd: str) -> dict[str, Any]:
    """Decide every row with a key present against a loopback Messages API; count requests."""
    from gatesh.alignment_model import make_checker
    from gatesh.testing.model_server import ModelServer
    from gatesh.testing.standin import answers

    with ModelServer(fallback=answers("safe")) as server:
        os.environ[KEY_ENV] = "bench-key"
        base = default()
        config = dataclasses.replace(
            base,
            rater=dataclasses.replace(base.rater, base_url=server.base_url, api_key_env=KEY_ENV),
        )
        rater = make_rater(config, "cascade")
        checker = make_checker(config, "anthropic")
        free = 0
        asked: Counter[str] = Counter()
        for r in rows:
            before = len(server.requests)
            d = _decide(str(r["cmd"]), cwd=cwd, config=config, rater=rater, checker=checker)
            if len(server.requests) == before:
                free += 1
            else:
                c = d.verdict.cascade if d.verdict is not None else None
                asked[c.asked.value if c is not None else d.stage.value] += 1
        return {
            "rows": len(rows),
            "model_free": free,
            "model_free_share": free / len(rows) if rows else 0.0,
            "requests": len(server.requests),
            "asked_why": dict(asked.most_common()),
        }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", default=DEFAULT_CORPUS)
    parser.add_argument("--limit", type=int, default=None, help="evenly spaced sample of N rows")
    parser.add_argument("--cascade", action="store_true", help="also measure the model-free share")
    parser.add_argument(
        "--misses", metavar="FILE", help="write benign rows not allowed (and risky allowed)"
    )
    parser.add_argument(
        "--scaling", action="store_true", help="also time long commands grown to 1k-60k characters"
    )
    args = parser.parse_args()
    rows = load(args.corpus, args.limit)
    from gatesh.testing import worktree

    with tempfile.TemporaryDirectory(prefix="gatesh-agent-work-") as root:
        scratch = worktree.build(root)
        os.environ["HOME"] = scratch.home
        figures: dict[str, Any] = {"corpus": os.path.basename(os.path.dirname(args.corpus))}
        figures["auto_builtin"] = b = builtin_figures(rows, scratch.repo, args.misses)
        print(
            f"agent work: {b['rows']} rows, benign allowed {100 * b['benign_allowed_share']:.2f}% "
            f"(halted {b['benign_halted']}), risky stopped {b['risky_stopped']}/{b['risky_rows']}; "
            f"task runs with a halt {100 * b['runs_halted_share']:.1f}%, with a stop "
            f"{100 * b['runs_stopped_share']:.1f}% of {b['runs']}; errors {len(b['errors'])}"
        )
        for key, n in b["benign_stopped_by_rule"].items():
            print(f"  benign stopped: {n:5d}  {key}")
        for bucket, f in b["ms_by_length"].items():
            print(
                f"  {bucket:>10} chars: n={f['n']:5d} p50 {f['p50']:.2f} ms, p99 {f['p99']:.2f} ms"
            )
        u = b["ms_upto_2000"]
        print(f"  up to 2,000 chars: p50 {u['p50']:.2f} ms, p99 {u['p99']:.2f} ms")
        long = b["us_per_char_over_2000"]
        print(f"  over 2,000 chars: {long['p50']:.2f} us/char p50, {long['p99']:.2f} us/char p99")
        if args.scaling:
            figures["scaling"] = sc = scaling_figures(rows, scratch.repo)
            for kind, per_size in sc.items():
                print(
                    f"scaling, {kind}: "
                    + "; ".join(
                        f"{n} chars {f['ms_p50']:.2f} ms ({f['us_per_char']:.2f} us/char)"
                        for n, f in per_size.items()
                    )
                )
        if args.cascade:
            figures["cascade"] = c = cascade_figures(rows, scratch.repo)
            print(
                f"cascade with a key: {100 * c['model_free_share']:.1f}% decided with no model "
                f"request ({c['requests']} requests); asked because {c['asked_why']}"
            )
    emit("agent_work", figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A long fuzzing campaign over the reader and the pipeline (issue 10; the CI suite runs a bounded one).

Runs the strategies of ``tests/test_fuzz.py`` for ``--seconds`` (default 300), in batches with
fresh seeds, and checks the same invariants without stopping at the first failure:

- ``raw``: any text or raw bytes (surrogateescape) → ``read``/``decide`` never raise, never hit an
  internal error;
- ``grammar``: generated shell at auto, write and bypass → no internal error;
- ``hardline``: a hardline action nested in 1–4 constructs → never allowed at auto or bypass.

Prints one line per property (cases run, failures, distinct failure classes) and, last, one JSON
line. Failing examples are written to ``--out`` (default ``fuzz_failures.jsonl``) for triage.

    python benchmarks/fuzz_long.py [--seconds 300] [--out FILE]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import emit

ROOT = Path(__file__).resolve().parent.parent


def _load_strategies() -> Any:
    spec = importlib.util.spec_from_file_location("gatesh_fuzz_strategies", ROOT / "tests" / "test_fuzz.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--batch", type=int, default=500, help="examples per hypothesis run")
    parser.add_argument("--out", default="fuzz_failures.jsonl")
    args = parser.parse_args(argv)

    home = tempfile.mkdtemp(prefix="gfz")
    os.environ.update(HOME=home, XDG_CONFIG_HOME=f"{home}/.config", XDG_STATE_HOME=f"{home}/.local/state",
                      XDG_DATA_HOME=f"{home}/.local/share", XDG_RUNTIME_DIR=home,
                      GATESH_SYSTEM_CONFIG=f"{home}/etc/config.toml")
    os.environ.pop("ANTHROPIC_API_KEY", None)
    project = Path(home) / "proj"
    project.mkdir()

    from hypothesis import HealthCheck, given, seed, settings

    from gatesh._types import Rung, Stage
    from gatesh.pipeline import decide
    from gatesh.reading import read

    T = _load_strategies()
    cwd = str(project)
    counts: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    classes: dict[str, set[str]] = {"raw": set(), "grammar": set(), "hardline": set()}
    out = open(args.out, "w", encoding="utf-8")

    def fail(prop: str, text: str, what: str, d: Any) -> None:
        failures[prop] += 1
        key = f"{what}:{d.stage.value}:{d.rung.value}"
        classes[prop].add(key)
        out.write(json.dumps({"property": prop, "what": what, "stage": d.stage.value, "rung": d.rung.value,
                              "reason": d.reason, "text": text,
                              "read": [[c.head, list(c.words), c.context] for c in d.facts.commands]},
                             ensure_ascii=False) + "\n")

    def raw(text: str) -> None:
        counts["raw"] += 1
        read(text, cwd=cwd)
        d = decide(text, cwd=cwd, config=T.CONFIG, rung=Rung.AUTO)
        if d.stage is Stage.ERROR or "internal reader error" in d.facts.unreadable:
            fail("raw", text, "internal-error", d)

    def grammar(text: str) -> None:
        counts["grammar"] += 1
        for rung in (Rung.AUTO, Rung.WRITE, Rung.BYPASS):
            d = decide(text, cwd=cwd, config=T.CONFIG, rung=rung)
            if d.stage is Stage.ERROR or "internal reader error" in d.facts.unreadable:
                fail("grammar", text, "internal-error", d)

    def hardline(text: str) -> None:
        counts["hardline"] += 1
        for rung in (Rung.AUTO, Rung.BYPASS):
            d = decide(text, cwd=cwd, config=T.CONFIG, rung=rung)
            if d.allowed:
                fail("hardline", text, "allowed", d)
                break

    props = (("raw", raw, T.RAW_TEXT), ("grammar", grammar, T.SHELL), ("hardline", hardline, T.hardline_embedded()))
    started = time.monotonic()
    batch = 0
    while time.monotonic() - started < args.seconds:
        for _name, fn, strategy in props:
            run = settings(max_examples=args.batch, deadline=None, database=None,
                           suppress_health_check=list(HealthCheck))(seed(batch)(given(strategy)(fn)))
            run()
        batch += 1
    out.close()
    elapsed = time.monotonic() - started
    for name, _, _ in props:
        print(f"{name:9} cases={counts[name]:>8} failures={failures[name]:>6} classes={sorted(classes[name])}")
    total = sum(counts.values())
    print(f"total: {total} cases in {elapsed:.0f} s ({total / elapsed:.0f}/s); failing examples in {args.out}")
    emit("fuzz_long", {"seconds": round(elapsed, 1), "cases": dict(counts), "total_cases": total,
                       "failures": dict(failures), "failure_classes": {k: sorted(v) for k, v in classes.items()},
                       "failures_file": args.out})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

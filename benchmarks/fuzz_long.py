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

Long mode (issue 21: at least 1,000,000 cases): ``--cases N`` draws from the same tables (heads,
words, constructs, hardline cores of ``tests/test_fuzz.py``) with a plain seeded random generator
instead of hypothesis (hypothesis spends most of a case on its own bookkeeping), in ``--workers``
processes, and counts per property:

- crashes: ``read`` or ``decide`` raised, or one case took longer than ``CASE_LIMIT_S`` (a hang);
- internal errors: stage ``error`` or an internal reader error;
- hardline allowed: a hardline core, nested in 1–4 constructs or after 1–3 well-formed earlier
  lines (pipelines, ``\\;``, arithmetic, non-ASCII words), allowed at ``auto`` or ``bypass`` (what
  ``manual``, ``write`` and ``assisted`` allow, ``auto`` allows too, by the pipeline's order).

    python benchmarks/fuzz_long.py --cases 1000000 [--workers 2] [--out FILE]
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
    spec = importlib.util.spec_from_file_location(
        "gatesh_fuzz_strategies", ROOT / "tests" / "test_fuzz.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# One case (a reading and up to five decisions) takes milliseconds; this long is a hang.
CASE_LIMIT_S = 10.0
RAW_ALPHABET = [
    *"$(){}[]'\"`\\|&;<>!#~*?=-\n\t x0,.",
    "é",
    "🎉",
    "Ａ",
    "\u0301",
    "ß",
    "<<EOF",
    "<<'E'",
    "E\n",
    "EOF\n",
    "${",
    "$'",
    "$((",
    "{a,b}",
    "\\x41",
    "\\\n",
]
OPS = [" && ", " || ", "; ", " | ", " & ", "\n", " |& "]
JUNK = ["'", '"', "$(", "`", "<<EOF", "{", "(", "\\", "]]", "fi", ";;", "|"]


def _sandbox() -> str:
    home = tempfile.mkdtemp(prefix="gfz")
    os.environ.update(
        HOME=home,
        XDG_CONFIG_HOME=f"{home}/.config",
        XDG_STATE_HOME=f"{home}/.local/state",
        XDG_DATA_HOME=f"{home}/.local/share",
        XDG_RUNTIME_DIR=home,
        GATESH_SYSTEM_CONFIG=f"{home}/etc/config.toml",
    )
    os.environ.pop("ANTHROPIC_API_KEY", None)
    project = Path(home) / "proj"
    project.mkdir()
    return str(project)


class _Gen:
    """The strategies of tests/test_fuzz.py as plain seeded random draws (same tables)."""

    def __init__(self, T: Any, seed: int) -> None:
        import random

        self.T, self.rng = T, random.Random(seed)
        self.names = sorted(T.CONSTRUCTS)

    def simple(self, clean: bool = False) -> str:
        T, r = self.T, self.rng
        heads, words = (T.CLEAN_HEADS, T.CLEAN_WORDS) if clean else (T.HEADS, T.WORDS)
        return " ".join([r.choice(heads)] + [r.choice(words) for _ in range(r.randint(0, 4))])

    def shell(self, budget: int = 10) -> str:
        r = self.rng
        if budget <= 1 or r.random() < 0.4:
            return self.simple()
        k = r.random()
        if k < 0.45:
            return self.shell(budget // 2) + r.choice(OPS) + self.shell(budget // 2)
        if k < 0.9:
            return self.T.CONSTRUCTS[r.choice(self.names)](self.shell(budget - 1), r.randint(0, 9))
        return self.shell(budget - 1) + r.choice(JUNK)

    def raw(self) -> str:
        r = self.rng
        k = r.random()
        if k < 0.3:
            return bytes(r.getrandbits(8) for _ in range(r.randint(0, 200))).decode(
                "utf-8", "surrogateescape"
            )
        if k < 0.5:
            return "".join(
                chr(
                    r.choice(
                        [
                            r.randint(32, 126),
                            r.randint(0xA0, 0x2FFF),
                            r.randint(0xFF01, 0xFF5E),
                            r.randint(0x1F300, 0x1F64F),
                            9,
                            10,
                        ]
                    )
                )
                for _ in range(r.randint(0, 120))
            )
        return "".join(r.choice(RAW_ALPHABET) for _ in range(r.randint(1, 60)))

    def hardline(self) -> str:
        T, r = self.T, self.rng
        text = r.choice(T.HARDLINE_CORES)
        if r.random() < 0.3:  # after well-formed earlier lines (the heredoc finding's class)
            lines = []
            for _ in range(r.randint(1, 3)):
                stages = [self.simple(clean=True) for _ in range(r.randint(1, 4))]
                lines.append(
                    "".join(x + r.choice([" | ", " |& ", " && ", "; "]) for x in stages[:-1])
                    + stages[-1]
                )
            return (
                "\n".join(lines)
                + "\n"
                + T.CONSTRUCTS[r.choice(["heredoc", "heredoc-unquoted", "seq"])](text, 0)
            )
        for n in range(r.randint(1, 4)):
            text = T.CONSTRUCTS[r.choice(self.names)](text, n)
            if r.random() < 0.25:
                sibling = self.simple(clean=True)
                text = r.choice([f"{sibling}\n{text}", f"{text}\n{sibling}"])
        return text


class _Hang(Exception):
    pass


def _long_worker(job: tuple[int, int, str]) -> dict[str, Any]:
    """Run ``count`` cases from ``seed``; counts and up to 50 failing examples."""
    import signal

    seed, count, _ = job
    cwd = _sandbox()
    from gatesh._types import Rung, Stage
    from gatesh.pipeline import decide
    from gatesh.reading import read

    T = _load_strategies()
    gen = _Gen(T, seed)
    counts: Counter[str] = Counter()
    bad: Counter[str] = Counter()
    examples: list[dict[str, str]] = []

    def fire(*_: object) -> None:
        raise _Hang()

    signal.signal(signal.SIGALRM, fire)
    # auto and bypass cover all five rungs: by the pipeline's order (S3) what manual, write or
    # assisted allow, auto allows too (allow-list entries, known read-only commands, `safe`).
    every = (Rung.AUTO, Rung.BYPASS)
    for i in range(count):
        prop = ("raw", "grammar", "hardline")[i % 3]
        text = gen.raw() if prop == "raw" else gen.shell() if prop == "grammar" else gen.hardline()
        counts[prop] += 1
        what = ""
        signal.setitimer(signal.ITIMER_REAL, CASE_LIMIT_S)
        try:
            if prop == "raw":
                read(text, cwd=cwd)  # decide reads too, but its own failures must not hide
            for rung in (Rung.AUTO,) if prop == "raw" else every:
                d = decide(text, cwd=cwd, config=T.CONFIG, rung=rung)
                if d.stage is Stage.ERROR or "internal reader error" in d.facts.unreadable:
                    what = f"internal-error:{d.reason[:80]}"
                    break
                if prop == "hardline" and d.allowed:
                    what = f"hardline-allowed:{rung.value}"
                    break
        except _Hang:
            what = "crash:hang"
        except Exception as exc:
            what = f"crash:{type(exc).__name__}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if what:
            bad[what.split(":", 1)[0]] += 1
            if len(examples) < 50:
                examples.append({"property": prop, "what": what, "text": text})
    return {"counts": dict(counts), "bad": dict(bad), "examples": examples}


def long_main(args: argparse.Namespace) -> int:
    """The long mode: ``args.cases`` cases over ``args.workers`` processes (steps numbered)."""
    import multiprocessing

    # 1. Chunks with their own seeds, so a run is reproducible and progress is visible.
    chunk = 1000
    jobs = [
        (seed, min(chunk, args.cases - seed * chunk), "")
        for seed in range((args.cases + chunk - 1) // chunk)
    ]
    counts: Counter[str] = Counter()
    bad: Counter[str] = Counter()
    started = time.monotonic()
    # 2. Run them (fork: the workers share nothing but the tables they load themselves).
    with (
        multiprocessing.get_context("fork").Pool(args.workers) as pool,
        open(args.out, "w", encoding="utf-8") as out,
    ):
        for k, res in enumerate(pool.imap_unordered(_long_worker, jobs), 1):
            counts.update(res["counts"])
            bad.update(res["bad"])
            for ex in res["examples"]:
                out.write(json.dumps(ex, ensure_ascii=False) + "\n")
            if k % 5 == 0 or k == len(jobs):
                done = sum(counts.values())
                print(
                    f"{done} cases, {done / (time.monotonic() - started):.0f}/s, {dict(bad) or 'no failures'}",
                    flush=True,
                )
    # 3. The figures.
    elapsed = time.monotonic() - started
    total = sum(counts.values())
    figures = {
        "mode": "long",
        "seconds": round(elapsed, 1),
        "workers": args.workers,
        "total_cases": total,
        "cases_per_s": round(total / elapsed, 1),
        "cases": dict(counts),
        "crashes": bad.get("crash", 0),
        "internal_errors": bad.get("internal-error", 0),
        "hardline_allowed": bad.get("hardline-allowed", 0),
        "failures_file": args.out,
    }
    print(
        f"total: {total} cases in {elapsed:.0f} s ({figures['cases_per_s']}/s): crashes {figures['crashes']}, "
        f"internal errors {figures['internal_errors']}, hardline allowed {figures['hardline_allowed']} "
        f"(auto and bypass, which cover all five rungs)"
    )
    emit("fuzz_long", figures)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--batch", type=int, default=500, help="examples per hypothesis run")
    parser.add_argument("--out", default="fuzz_failures.jsonl")
    parser.add_argument(
        "--cases", type=int, default=0, help="long mode: this many cases (e.g. 1000000)"
    )
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="long mode: processes"
    )
    args = parser.parse_args(argv)
    if args.cases:
        return long_main(args)

    cwd = _sandbox()

    from hypothesis import HealthCheck, given, seed, settings

    from gatesh._types import Rung, Stage
    from gatesh.pipeline import decide
    from gatesh.reading import read

    T = _load_strategies()
    counts: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    classes: dict[str, set[str]] = {"raw": set(), "grammar": set(), "hardline": set()}
    out = open(args.out, "w", encoding="utf-8")

    def fail(prop: str, text: str, what: str, d: Any) -> None:
        failures[prop] += 1
        key = f"{what}:{d.stage.value}:{d.rung.value}"
        classes[prop].add(key)
        out.write(
            json.dumps(
                {
                    "property": prop,
                    "what": what,
                    "stage": d.stage.value,
                    "rung": d.rung.value,
                    "reason": d.reason,
                    "text": text,
                    "read": [[c.head, list(c.words), c.context] for c in d.facts.commands],
                },
                ensure_ascii=False,
            )
            + "\n"
        )

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

    props = (
        ("raw", raw, T.RAW_TEXT),
        ("grammar", grammar, T.SHELL),
        ("hardline", hardline, T.hardline_embedded()),
    )
    started = time.monotonic()
    batch = 0
    while time.monotonic() - started < args.seconds:
        for _name, fn, strategy in props:
            run = settings(
                max_examples=args.batch,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )(seed(batch)(given(strategy)(fn)))
            run()
        batch += 1
    out.close()
    elapsed = time.monotonic() - started
    for name, _, _ in props:
        print(
            f"{name:9} cases={counts[name]:>8} failures={failures[name]:>6} classes={sorted(classes[name])}"
        )
    total = sum(counts.values())
    print(
        f"total: {total} cases in {elapsed:.0f} s ({total / elapsed:.0f}/s); failing examples in {args.out}"
    )
    emit(
        "fuzz_long",
        {
            "seconds": round(elapsed, 1),
            "cases": dict(counts),
            "total_cases": total,
            "failures": dict(failures),
            "failure_classes": {k: sorted(v) for k, v in classes.items()},
            "failures_file": args.out,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Run every benchmark and write docs/BENCHMARKS.md, docs/EVALUATION.md, docs/benchmarks.json and
docs/latency.png from the figures measured in this run.

    python benchmarks/run_all.py            # full run, under 15 minutes on a 2-core machine
    python benchmarks/run_all.py --quick    # smaller samples, under 3 minutes

Each benchmark script runs as its own subprocess with a time budget; the last line of its standard
output that is a JSON object is its result. A script that is missing, fails or runs out of time is
recorded as "not run: why" in the documents — nothing is ever filled in for it. The children run
with scratch XDG folders (no user config, no user daemon), no model API key, and the real
interpreter first on PATH (a pyenv shim would add ~80 ms to every spawn).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from _common import CORPUS  # noqa: E402

HOW_TO_RUN = """\
Run `python benchmarks/run_all.py` (about 10–15 minutes on a 2-core machine) or
`python benchmarks/run_all.py --quick` (smaller samples, under 3 minutes). It writes this file,
[EVALUATION.md](EVALUATION.md), [benchmarks.json](benchmarks.json) (every raw figure) and
[latency.png](latency.png). It needs the corpora in `../shared/corpus` (or `GATESH_CORPUS`); the
peer column needs `npm` (it installs `cc-safety-net` into a scratch folder) and the plot uses
matplotlib (pip-installed once into `~/.cache/gatesh-bench/pylib` if missing; a built-in PNG
writer when that fails).
`--no-install` runs without any network; `--only NAME,…` runs a subset."""

# Where matplotlib is pip-installed (--target) when it is not importable: a cache folder, so only
# the first run pays for the download.
PYLIB = os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "gatesh-bench", "pylib"
)

# Rows per corpus in --quick mode: scripts without a limit flag read a sampled copy of the corpora.
QUICK_SAMPLE = 1000


@dataclass
class Ctx:
    quick: bool
    out: str
    scratch: str
    corpus: str
    sampled_corpus: str  # a sampled copy of the corpora (quick mode), else == corpus
    install: bool
    results: dict[str, dict[str, Any]] = field(default_factory=dict)

    def path(self, name: str) -> str:
        return os.path.join(self.scratch, name)


@dataclass(frozen=True)
class Step:
    """One benchmark script run. ``args`` returns (argv after the script, note on its size)."""

    name: str
    script: str
    title: str
    args: Callable[[Ctx, str], tuple[list[str], str]]
    timeout: tuple[int, int]  # seconds: (quick, full)
    needs_corpus: bool = False


def _has(source: str, flag: str) -> bool:
    return f'"{flag}"' in source or f"'{flag}'" in source


def _positional(source: str) -> bool:
    return "sys.argv[1" in source


def a_reader(ctx: Ctx, src: str) -> tuple[list[str], str]:
    if ctx.quick:
        return [ctx.sampled_corpus], f"quick: a sample of at most {QUICK_SAMPLE} rows per corpus"
    return [ctx.corpus], "every row of every corpus"


def a_latency(corpus: str, quick_limit: int) -> Callable[[Ctx, str], tuple[list[str], str]]:
    def args(ctx: Ctx, src: str) -> tuple[list[str], str]:
        argv = ["--corpus", corpus] if corpus != "tldr" or _has(src, "--corpus") else []
        if ctx.quick and _has(src, "--limit"):
            return [
                *argv,
                "--limit",
                str(quick_limit),
            ], f"quick: the first {quick_limit} rows of {corpus}"
        return argv, f"every row of {corpus}"

    return args


def a_overhead(ctx: Ctx, src: str) -> tuple[list[str], str]:
    n = 60 if ctx.quick else 300
    if _has(src, "--quick"):
        return (
            ["--quick"] if ctx.quick else []
        ), "its own --quick mode" if ctx.quick else "its default size"
    if _has(src, "-n") or _has(src, "--n"):
        return ["-n", str(n)], f"{n} interleaved pairs"
    if _positional(src):
        return [str(n)], f"{n} interleaved pairs"
    return [], "its default size (no count option)"


def a_boundary(ctx: Ctx, src: str) -> tuple[list[str], str]:
    n = 20 if ctx.quick else 100
    note = f"{n} fresh clients per boundary, {max(20, n // 2)} interleaved -c pairs"
    if ctx.quick or not _has(src, "--suite"):
        return [str(n)], note
    return [str(n), "--suite"], note + ", this repository's fast suite confined"


def a_harm_boundary(ctx: Ctx, src: str) -> tuple[list[str], str]:
    risky, work = (20, 20) if ctx.quick else (120, 100)
    return [
        "--sample",
        str(risky),
        "--work",
        str(work),
        "--out",
        ctx.path("harm-boundary"),
    ], f"{risky} rows per risky corpus (generalisation: all), {work} agent-work and tldr rows"


def a_concurrency(ctx: Ctx, src: str) -> tuple[list[str], str]:
    checks = 100 if ctx.quick else 500
    if _has(src, "--quick"):
        return (
            ["--quick"] if ctx.quick else []
        ), "its own --quick mode" if ctx.quick else "32 × 500"
    if _has(src, "--checks"):
        return ["--sessions", "32", "--checks", str(checks)], f"32 sessions × {checks} checks"
    if _positional(src):
        return ["32", str(checks)], f"32 sessions × {checks} checks" + (
            " (quick; S14 asks 500)" if ctx.quick else ""
        )
    return [], "its default size (no count option)"


def a_generic(ctx: Ctx, src: str) -> tuple[list[str], str]:
    """A script of unknown shape: its own --quick when it has one, else its default size."""
    if ctx.quick and _has(src, "--quick"):
        return ["--quick"], "its own --quick mode"
    if ctx.quick and _has(src, "--limit"):
        return ["--limit", "1000"], "quick: --limit 1000"
    return [], "its default size" + (" (it has no quick mode)" if ctx.quick else "")


# The gated shell before issue 28 (one process per command): pty_enter.py measures it from a
# temporary worktree of this commit, beside this checkout's, for the before/after figure.
PTY_ENTER_BEFORE = "d58fd64"


def a_pty_enter(ctx: Ctx, src: str) -> tuple[list[str], str]:
    before = ["--before", PTY_ENTER_BEFORE] if _has(src, "--before") else []
    also = f"; before: {PTY_ENTER_BEFORE}" if before else ""
    if ctx.quick and _has(src, "--n"):
        return [
            "--n",
            "10",
            *before,
        ], f"quick: 10 Enters per shell (S14 reads the median of more){also}"
    return before, f"30 Enters per shell, interleaved with the plain shell's{also}"


def a_pty(ctx: Ctx, src: str) -> tuple[list[str], str]:
    if ctx.quick and _has(src, "--quick"):
        return ["--quick"], "its own --quick mode"
    if ctx.quick and _has(src, "--mib"):
        return ["--mib", "64", "--keys", "100"] if _has(src, "--keys") else [
            "--mib",
            "64",
        ], "quick: cat 64 MiB (S14 asks 256), 100 keystrokes"
    return [], "cat 256 MiB, 200 keystrokes" if _has(src, "--mib") else "its default size"


def a_quality(ctx: Ctx, src: str) -> tuple[list[str], str]:
    if ctx.quick and _has(src, "--corpus"):
        return [
            "--corpus",
            ctx.sampled_corpus,
        ], f"quick: a sample of at most {QUICK_SAMPLE} rows per corpus"
    return (["--corpus", ctx.corpus] if _has(src, "--corpus") else []), "every row of its corpora"


def a_hook_latency(ctx: Ctx, src: str) -> tuple[list[str], str]:
    rounds = 30 if ctx.quick else 150
    return ["--rounds", str(rounds)], f"{rounds} interleaved rounds"


def a_peer(ctx: Ctx, src: str) -> tuple[list[str], str]:
    argv = ["--raw-out", ctx.path("peer_raw.json"), "--scratch", ctx.path("peer")]
    if ctx.quick:
        return [
            *argv,
            "--quick",
        ], "quick: 200 rows per corpus decided, 4 per corpus through the hooks"
    return argv, "every row decided, 25 per corpus through the hooks"


def a_cascade(ctx: Ctx, src: str) -> tuple[list[str], str]:
    n = 500 if ctx.quick else 3000
    return ["--sample", str(n)], f"{n} evenly spaced rows of tldr and nl2bash; every risky row"


def a_agent_work(ctx: Ctx, src: str) -> tuple[list[str], str]:
    if ctx.quick:
        return ["--cascade", "--limit", "1500"], "quick: 1,500 evenly spaced rows; no scaling"
    return [
        "--cascade",
        "--scaling",
    ], "every row of the agent-work corpus; scaling to 60k characters"


def a_evaluation(ctx: Ctx, src: str) -> tuple[list[str], str]:
    argv = [
        "--out",
        os.path.join(ctx.out, "EVALUATION.md"),
        "--latencies-out",
        ctx.path("decide_ms.json"),
    ]
    peer = ctx.results.get("peer", {}).get("result")
    if peer:
        with open(ctx.path("peer.json"), "w", encoding="utf-8") as f:
            json.dump(peer, f)
        argv += ["--peer", ctx.path("peer.json"), "--peer-raw", ctx.path("peer_raw.json")]
    if ctx.quick:
        return [
            *argv,
            "--limit",
            "600",
        ], "quick: an evenly spaced sample of at most 600 rows per corpus"
    return argv, "every row of every corpus, rungs assisted and auto"


def a_undo_cost(ctx: Ctx, src: str) -> tuple[list[str], str]:
    if ctx.quick:
        return ["--quick"], "quick: this repository and 10,000 files, fewer samples"
    return [], "this repository, 10,000 and 100,000 files; warm, restart, cold"


def a_undo_reach(ctx: Ctx, src: str) -> tuple[list[str], str]:
    if ctx.quick:
        return [
            "--limit",
            "1000",
        ], "quick: 1,000 evenly spaced agent-work rows; the friction fixture"
    return [], "every agent-work row and the friction fixture"


def a_plot(ctx: Ctx, src: str) -> tuple[list[str], str]:
    argv = [
        "--decision",
        ctx.path("decide_ms.json"),
        "--hook",
        ctx.path("peer_raw.json"),
        "--out",
        os.path.join(ctx.out, "latency.png"),
        "--pylib",
        PYLIB,
    ]
    if not ctx.install:
        argv.append("--no-install")
    return argv, "from this run's evaluation and peer figures"


STEPS: tuple[Step, ...] = (
    Step("reader_coverage", "reader_coverage.py", "Reader coverage", a_reader, (90, 300), True),
    Step(
        "decision_latency",
        "decision_latency.py",
        "In-process decision latency, tldr",
        a_latency("tldr", 3000),
        (60, 180),
        True,
    ),
    Step(
        "decision_latency_nl2bash",
        "decision_latency.py",
        "In-process decision latency, nl2bash",
        a_latency("nl2bash", 2000),
        (60, 120),
        True,
    ),
    Step(
        "c_overhead", "c_overhead.py", "`gatesh -c true` vs `bash -c true`", a_overhead, (60, 180)
    ),
    Step(
        "hook_latency",
        "hook_latency.py",
        "Hook latency: `gatesh hook` vs the bare interpreter and cc-safety-net's hook",
        a_hook_latency,
        (90, 300),
    ),
    Step("concurrency", "concurrency.py", "32 concurrent sessions", a_concurrency, (90, 240)),
    Step(
        "boundary",
        "boundary.py",
        "The boundary: domain setup per command, what it adds to `gatesh -c`, real work in its limits",
        a_boundary,
        (120, 1800),
    ),
    Step(
        "harm_boundary",
        "harm_boundary.py",
        "Harm in the jail with the boundary on and off; ordinary work still runs inside it",
        a_harm_boundary,
        (1800, 5400),
        True,
    ),
    Step(
        "pty_throughput",
        "pty_throughput.py",
        "PTY throughput and keystroke latency",
        a_pty,
        (60, 240),
    ),
    Step(
        "pty_enter",
        "pty_enter.py",
        "Enter-to-prompt in the gated interactive shell, side by side with the plain shell",
        a_pty_enter,
        (60, 240),
    ),
    Step(
        "cascade",
        "cascade.py",
        "The cascade with a key (loopback API): model-free share, never weaker",
        a_cascade,
        (240, 900),
        True,
    ),
    Step(
        "agent_work",
        "agent_work.py",
        "Real agents' work: allowed, halted, model-free, decision time by length",
        a_agent_work,
        (240, 900),
    ),
    Step("rater_quality", "rater_quality.py", "Builtin rater quality", a_quality, (60, 180), True),
    Step("peer", "peer.py", "Peer side by side (cc-safety-net)", a_peer, (120, 600), True),
    Step(
        "evaluation",
        "evaluation.py",
        "Evaluation (docs/EVALUATION.md)",
        a_evaluation,
        (120, 600),
        True,
    ),
    Step(
        "undo_cost",
        "undo_cost.py",
        "Undo: what a snapshot costs",
        a_undo_cost,
        (240, 900),
    ),
    Step(
        "undo_reach",
        "undo_reach.py",
        "Undo: the rows refused for work loss that a snapshot holds",
        a_undo_reach,
        (120, 600),
    ),
    Step("plot", "plot.py", "Latency plot (docs/latency.png)", a_plot, (90, 180)),
)
OWN_FILES = {"run_all.py", "plot.py"}
# Scripts in benchmarks/ that are not benchmarks: listed in the document, never run.
NOT_BENCHMARKS = {
    "fuzz_long.py": "a long fuzzing campaign (issue 10), not a benchmark: run it on its own",
    "effect_fixture.py": "run by evaluation.py (its figures are a section of docs/EVALUATION.md); "
    "also runnable on its own",
    "harm.py": "run by harm_boundary.py on each harm corpus (its figures are that section); also "
    "runnable on its own, given a corpus",
    "harm_corpora.py": "writes the corpora harm_boundary.py runs; not a benchmark",
    "decision_dump.py": "a tool, not a benchmark: every corpus row's decision, to compare two "
    "versions of the code (CONTRIBUTING.md)",
    "house.py": "the house's own figures (modules, sizes, imports): run it on its own",
}


# --- running -------------------------------------------------------------------------------------


def child_env(ctx: Ctx) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "GATESH_SESSION", "GATESH_GATED")
    }
    for var, sub in (
        ("XDG_CONFIG_HOME", "xdg/cfg"),
        ("XDG_STATE_HOME", "xdg/state"),
        ("XDG_DATA_HOME", "xdg/data"),
        ("XDG_RUNTIME_DIR", "xdg/run"),
    ):
        path = ctx.path(sub)
        os.makedirs(path, mode=0o700, exist_ok=True)
        env[var] = path
    env["GATESH_SYSTEM_CONFIG"] = ctx.path("xdg/etc/config.toml")
    env["GATESH_CORPUS"] = ctx.corpus
    env["PYTHONPATH"] = REPO + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def last_json(stdout: str) -> dict[str, Any] | None:
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return None


def run_step(step: Step, ctx: Ctx, scripts_dir: str, env: dict[str, str]) -> dict[str, Any]:
    """Run one script; returns its record (status ok | failed | timeout | not run, and why)."""
    path = os.path.join(scripts_dir, step.script)
    if not os.path.exists(path):
        return {"status": "not run", "why": f"benchmarks/{step.script} does not exist yet"}
    if step.needs_corpus and not os.path.isdir(ctx.corpus):
        return {"status": "not run", "why": f"the corpora are absent ({ctx.corpus})"}
    with open(path, encoding="utf-8") as f:
        source = f.read()
    argv, size = step.args(ctx, source)
    budget = step.timeout[0] if ctx.quick else step.timeout[1]
    cmd = [sys.executable, path, *argv]
    print(
        f"\n== {step.title}: {step.script} {' '.join(argv)}  [{size}; budget {budget} s]",
        flush=True,
    )
    started = time.perf_counter()
    err_path = ctx.path(f"{step.name}.stderr")
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=REPO,
            start_new_session=True,
            text=True,
            errors="replace",
        )
        out_lines: list[str] = []
        reader = threading.Thread(target=_pump, args=(proc, out_lines), daemon=True)
        reader.start()
        timed_out = False
        try:
            proc.wait(budget)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
        reader.join(10)
    elapsed = round(time.perf_counter() - started, 1)
    stdout = "".join(out_lines)
    with open(err_path, encoding="utf-8", errors="replace") as f:
        stderr = f.read()
    record: dict[str, Any] = {
        "script": step.script,
        "args": argv,
        "size": size,
        "elapsed_s": elapsed,
        "budget_s": budget,
        "exit": proc.returncode,
        "printed": [
            ln.rstrip()
            for ln in stdout.splitlines()
            if ln.strip() and not ln.lstrip().startswith("{")
        ][-40:],
    }
    result = last_json(stdout)
    if timed_out:
        record.update(status="timeout", why=f"ran past its budget of {budget} s and was stopped")
    elif proc.returncode != 0:
        tail = [ln for ln in stderr.strip().splitlines() if ln.strip()][-1:] or ["no error output"]
        record.update(status="failed", why=f"exit {proc.returncode}: {tail[0][:300]}")
    elif result is None:
        record.update(status="failed", why="it printed no JSON result line")
    elif result.get("status") == "skipped":
        record.update(
            status="not run", why=str(result.get("why", "the script skipped itself")), result=result
        )
    else:
        record.update(status="ok", result=result)
    if record["status"] != "ok":
        print(f"   -> {record['status']}: {record.get('why')}")
        if stderr.strip():
            record["stderr_tail"] = stderr.strip().splitlines()[-8:]
    print(f"   ({elapsed} s)", flush=True)
    return record


def _pump(proc: subprocess.Popen[str], out_lines: list[str]) -> None:
    """Collect a child's stdout line by line, echoing its figures (not its JSON line) as they come."""
    assert proc.stdout is not None
    for line in proc.stdout:
        out_lines.append(line)
        if not line.lstrip().startswith("{"):
            print(f"   {line.rstrip()[:200]}", flush=True)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Stop a child that ran out of time, and everything it started (its own process group)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(5)
            return
        except subprocess.TimeoutExpired:
            continue


def _source(folder: str, script: str) -> str:
    try:
        with open(os.path.join(folder, script), encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def sample_corpus(src: str, dst: str, n: int) -> None:
    """Copy every corpus under ``src`` to ``dst`` as an evenly spaced sample of at most ``n`` rows."""
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name, "commands.jsonl")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            rows = [line for line in f if line.strip()]
        if len(rows) > n:
            step = len(rows) / n
            rows = [rows[int(i * step)] for i in range(n)]
        os.makedirs(os.path.join(dst, name), exist_ok=True)
        with open(os.path.join(dst, name, "commands.jsonl"), "w", encoding="utf-8") as f:
            f.writelines(rows)


# --- the machine ---------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "cpu": "unknown",
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "python_path": sys.executable,
        "kernel": platform.release(),
        "platform": platform.platform(),
    }
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    info["ram_gib"] = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    info["bash"] = _version(["bash", "--version"], r"version (\S+)")
    info["node"] = _version(["node", "--version"], r"v?(\S+)")
    info["git_commit"] = _version(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], r"(\S+)")
    dirty = _version(
        ["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"], r"([\s\S]+)"
    )
    info["git_dirty"] = bool(dirty and dirty != "not available")
    return info


def _version(argv: list[str], pattern: str) -> str:
    if shutil.which(argv[0]) is None:
        return "not installed"
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "not available"
    m = re.search(pattern, out)
    return m.group(1).strip() if m else "not available"


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


# --- the S14 table -------------------------------------------------------------------------------


@dataclass
class Row:
    figure: str
    median: str
    spread: str
    target: str
    result: str  # PASS | FAIL | – | not run: …
    source: str


def _num(d: Any, *keys: str) -> float | None:
    for key in keys:
        cur = d
        for part in key.split("."):
            if not isinstance(cur, dict) or part not in cur:
                cur = None
                break
            cur = cur[part]
        if isinstance(cur, int | float) and not isinstance(cur, bool):
            return float(cur)
    return None


def _verdict(value: float | None, ok: Callable[[float], bool]) -> str:
    return "–" if value is None else ("PASS" if ok(value) else "FAIL")


def _cascade_rows(
    results: dict[str, dict[str, Any]], missing: Callable[[str, str, str], Row]
) -> list[Row]:
    """The cascade's figures (cascade.py): no model request with a key, requests, never weaker."""
    r = results.get("cascade", {})
    if r.get("status") != "ok":
        return [
            missing(
                "cascade", "share of tldr with no model request, key present (cascade)", "≥ 70 %"
            )
        ]
    rows = []
    for corpus, arms in r["result"].get("share", {}).items():
        c, m = arms.get("cascade", {}), arms.get("model", {})
        share = _num(c, "model_free_share")
        rows.append(
            Row(
                f"{corpus}: rows with no model request, key present, loopback API (cascade)",
                "–" if share is None else f"{100 * share:.1f} %",
                f"model alone {100 * (_num(m, 'model_free_share') or 0):.1f} %; requests "
                f"{c.get('requests')} vs {m.get('requests')}; per row p50 {_ms(_num(c, 'ms.p50'))} vs "
                f"{_ms(_num(m, 'ms.p50'))}",
                "≥ 70 %" if corpus == "tldr" else "–",
                _verdict(share, lambda v: v >= 0.70) if corpus == "tldr" else "–",
                f"cascade.py, {c.get('rows')} rows",
            )
        )
    for corpus, f in r["result"].get("never_weaker", {}).items():
        a, b = _num(f, "share_builtin"), _num(f, "share_cascade")
        rows.append(
            Row(
                f"{corpus}: risky rows not allowed, cascade with an always-safe model",
                "–" if b is None else f"{100 * b:.1f} %",
                "–" if a is None else f"builtin alone {100 * a:.1f} %",
                "≥ builtin alone",
                _verdict(None if a is None or b is None else b - a, lambda v: v >= 0),
                f"cascade.py, {f.get('risky')} rows",
            )
        )
    return rows


def _ms(x: float | None, digits: int = 2) -> str:
    return "not reported" if x is None else f"{x:.{digits}f} ms"


def s14_rows(results: dict[str, dict[str, Any]]) -> list[Row]:
    rows: list[Row] = []

    def missing(name: str, figure: str, target: str) -> Row:
        rec = results.get(name, {})
        return Row(
            figure, "–", "–", target, f"not run: {rec.get('why', 'not part of this run')}", name
        )

    r = results.get("c_overhead", {})
    if r.get("status") == "ok":
        d = r["result"]
        over = _num(d, "overhead_median_ms", "overhead_ms.p50", "overhead.p50")
        spread = []
        if _num(d, "gatesh_p90_ms") is not None:
            spread.append(f"gatesh p90 {_ms(_num(d, 'gatesh_p90_ms'))}")
        if _num(d, "gatesh_median_ms") is not None:
            spread.append(
                f"gatesh median {_ms(_num(d, 'gatesh_median_ms'))}, bash median {_ms(_num(d, 'bash_median_ms'))}"
            )
        p10, p90 = (
            _num(d, "overhead_p10_ms", "overhead_ms.p10"),
            _num(d, "overhead_p90_ms", "overhead_ms.p90"),
        )
        if p10 is not None and p90 is not None:
            spread.insert(0, f"p10–p90 {p10:.2f}–{p90:.2f} ms")
        rows.append(
            Row(
                "`gatesh -c true` over `bash -c true` (warm daemon)",
                _ms(over),
                "; ".join(spread) or "not reported",
                "≤ 10 ms",
                _verdict(over, lambda v: v <= 10),
                f"c_overhead.py, {_num(d, 'n', 'pairs') and int(_num(d, 'n', 'pairs') or 0)} interleaved pairs",
            )
        )
        ratio = _num(d, "ratio_median", "ratio.p50", "ratio")
        if ratio is not None:
            rp10, rp90 = _num(d, "ratio_p10", "ratio.p10"), _num(d, "ratio_p90", "ratio.p90")
            per_pair = rp10 is not None and rp90 is not None
            rows.append(
                Row(
                    "time ratio gatesh / bash",
                    f"{ratio:.2f}×",
                    f"p10–p90 {rp10:.2f}–{rp90:.2f}×"
                    if per_pair
                    else "ratio of the medians (per-pair ratios not reported)",
                    "–",
                    "–",
                    "c_overhead.py",
                )
            )
    else:
        rows.append(
            missing("c_overhead", "`gatesh -c true` over `bash -c true` (warm daemon)", "≤ 10 ms")
        )

    r = results.get("decision_latency", {})
    if r.get("status") == "ok":
        d = r["result"]
        ms = d.get("ms", {})
        n = int(ms.get("n", 0))
        p50, p90, p99 = _num(ms, "p50"), _num(ms, "p90"), _num(ms, "p99")
        p10 = _num(ms, "p10")
        lead = (
            f"p10–p90 {p10:.3f}–{p90:.3f} ms"
            if p10 is not None and p90 is not None
            else f"p90 {_ms(p90, 3)}"
        )
        rows.append(
            Row(
                "decision latency p50, tldr (pipeline in-process, both readers)",
                _ms(p50, 3),
                f"{lead}; mean {_ms(_num(ms, 'mean'), 3)}",
                "≤ 0.5 ms",
                _verdict(p50, lambda v: v <= 0.5),
                f"decision_latency.py, {n} rows",
            )
        )
        rows.append(
            Row(
                "decision latency p99, tldr",
                _ms(p99, 3),
                "–",
                "≤ 5 ms",
                _verdict(p99, lambda v: v <= 5),
                f"decision_latency.py, {n} rows",
            )
        )
        ps = _num(d, "per_second")
        rows.append(
            Row(
                "decisions per second (one process)",
                f"{ps:.0f}/s" if ps else "not reported",
                "–",
                "–",
                "–",
                "decision_latency.py",
            )
        )
    else:
        rows.append(
            missing("decision_latency", "decision latency p50 / p99, tldr", "≤ 0.5 ms / ≤ 5 ms")
        )
    ev = results.get("evaluation", {})
    if ev.get("status") == "ok":
        t = ev["result"].get("corpora", {}).get("tldr", {}).get("decide_ms_auto")
        if t:
            rows.append(
                Row(
                    "per-row decision time in the evaluation pass, tldr, rung auto",
                    _ms(t.get("p50"), 3),
                    f"p10–p90 {t['p10']:.3f}–{t['p90']:.3f} ms; p99 {t['p99']:.3f} ms",
                    "≤ 0.5 ms (p50), ≤ 5 ms (p99)",
                    _verdict(t.get("p50"), lambda v: v <= 0.5)
                    + " / "
                    + _verdict(t.get("p99"), lambda v: v <= 5),
                    f"evaluation.py, {t['n']} rows",
                )
            )
    for name, corpus in (("decision_latency", "tldr"), ("decision_latency_nl2bash", "nl2bash")):
        r = results.get(name, {})
        if r.get("status") == "ok":
            share = _num(r["result"], "model_free_share")
            n = int(_num(r["result"], "ms.n") or 0)
            rows.append(
                Row(
                    f"share of {corpus} decided without a model call",
                    "–" if share is None else f"{100 * share:.1f} %",
                    "–",
                    "≥ 70 %",
                    _verdict(share, lambda v: v >= 0.70),
                    f"{name.split('_nl')[0]}.py, {n} rows",
                )
            )
        else:
            rows.append(missing(name, f"share of {corpus} decided without a model call", "≥ 70 %"))
    rows.extend(_cascade_rows(results, missing))

    r = results.get("boundary", {})
    if r.get("status") == "ok" and isinstance(r["result"].get("apply"), dict):
        d = r["result"]
        worst = _num(d, "on_path_p50_ms_worst")
        adds = (d.get("c_overhead") or {}).get("boundary_adds_median_ms")
        rows.append(
            Row(
                "boundary: setting up a command's domain on the reply's path (S16)",
                _ms(worst, 3),
                "the worst p50 of the typical boundaries: the daemon hands its spare ruleset, a "
                "fresh client applies it. Beside it: the client's ready step (loading the "
                f"boundary's code, p50 {_ms(_num(d, 'ready_p50_ms_worst'), 3)}) overlaps the "
                "daemon's decision; the spare's build (CPU p50 "
                f"{_ms(_num(d, 'spare_build_cpu_p50_ms_worst'), 3)}) runs in the daemon after the "
                f"command before; with the fork that reports the exit status, the boundary adds "
                f'{_ms(adds)} to `gatesh -c true`. See "The boundary" below',
                "≤ 1 ms",
                _verdict(worst, lambda v: v <= 1),
                f"boundary.py ({r.get('size')})",
            )
        )
    else:
        rows.append(missing("boundary", "boundary: setting up a command's domain (S16)", "≤ 1 ms"))

    r = results.get("pty_throughput", {})
    if r.get("status") == "ok":
        d = r["result"]
        ratio = _num(d, "ratio", "throughput_ratio", "ratio_median", "throughput.ratio")
        tspread = _spread_of(d, "ratio")
        t_script, t_gate, mib = _num(d, "script_s"), _num(d, "gatesh_s"), _num(d, "mib")
        if tspread == "not reported" and t_script is not None and t_gate is not None:
            tspread = f"one run each: `script -qc` {t_script:.2f} s, gatesh {t_gate:.2f} s"
        size = f"cat {mib:.0f} MiB" if mib is not None else "cat"
        rows.append(
            Row(
                f"PTY throughput, {size}, gatesh / `script -qc`",
                "not reported" if ratio is None else f"{ratio:.2f}×",
                tspread,
                "≥ 0.8×",
                _verdict(ratio, lambda v: v >= 0.8),
                f"pty_throughput.py ({r.get('size')})",
            )
        )
        added = _num(
            d, "key_added_ms", "keystroke_added_ms", "keystroke_overhead_ms", "keystroke.added_ms"
        )
        kspread = _spread_of(d, "key")
        if kspread == "not reported" and _num(d, "key_plain_ms") is not None:
            kspread = f"medians: plain PTY {_ms(_num(d, 'key_plain_ms'), 3)}, gatesh {_ms(_num(d, 'key_gatesh_ms'), 3)}"
        rows.append(
            Row(
                "keystroke echo latency added (median)",
                _ms(added, 3),
                kspread,
                "≤ 1 ms",
                _verdict(added, lambda v: v <= 1),
                f"pty_throughput.py ({r.get('size')})",
            )
        )
    else:
        rows.append(
            missing(
                "pty_throughput",
                "PTY throughput vs `script -qc`; keystroke latency added",
                "≥ 0.8×; ≤ 1 ms",
            )
        )

    r = results.get("pty_enter", {})
    if r.get("status") == "ok":
        d = r["result"]
        for shell in ("bash", "zsh"):
            added = _num(d, f"{shell}_added_ms")
            if added is None:
                continue
            before = _num(d, f"{shell}_before_ms")
            if before is not None:
                then = f"; before issue 28 ({d.get('before')}) {_ms(before, 2)}"
            elif d.get("before_missing"):
                then = f"; no before figure: {d.get('before_missing')}"
            else:
                then = ""
            rows.append(
                Row(
                    f"interactive {shell}: Enter-to-prompt added for `true` (median)",
                    _ms(added, 2),
                    f"medians: plain {_ms(_num(d, f'{shell}_plain_ms'), 2)}, gated "
                    f"{_ms(_num(d, f'{shell}_gated_ms'), 2)}{then}",
                    "≤ 5 ms",
                    _verdict(added, lambda v: v <= 5),
                    f"pty_enter.py ({r.get('size')})",
                )
            )
            before_added = _num(d, f"{shell}_before_added_ms")
            if before_added is not None:
                rows.append(
                    Row(
                        f"interactive {shell} before issue 28 ({d.get('before')}, a process per "
                        "command): Enter-to-prompt added (median)",
                        _ms(before_added, 2),
                        f"medians: plain {_ms(_num(d, f'{shell}_plain_ms'), 2)}, before "
                        f"{_ms(before, 2)}; same run",
                        "– (reference)",
                        "–",
                        f"pty_enter.py ({r.get('size')})",
                    )
                )
    else:
        rows.append(
            missing("pty_enter", "interactive shell: Enter-to-prompt added (median)", "≤ 5 ms")
        )

    r = results.get("concurrency", {})
    if r.get("status") == "ok":
        d = r["result"]
        size = f"{int(_num(d, 'sessions') or 0)} sessions, {int(_num(d, 'checks') or 0)} checks"
        errors = _num(d, "errors")
        rows.append(
            Row(
                "concurrent checks: errors",
                "–" if errors is None else f"{errors:.0f}",
                "–",
                "0",
                _verdict(errors, lambda v: v == 0),
                f"concurrency.py, {size}",
            )
        )
        p99 = _num(d, "p99_ms")
        c10, c90 = _num(d, "p10_ms"), _num(d, "p90_ms")
        cspread = f"p10–p90 {c10:.2f}–{c90:.2f} ms; " if c10 is not None and c90 is not None else ""
        rows.append(
            Row(
                "concurrent checks: latency p99",
                _ms(p99),
                f"{cspread}p50 {_ms(_num(d, 'p50_ms'))}; max {_ms(_num(d, 'max_ms'))}; "
                f"commands of {d.get('corpus', 'tldr')}; daemon CPU "
                f"{_ms(_num(d, 'daemon_cpu_ms_per_check'), 2)} per check",
                "≤ 25 ms",
                _verdict(p99, lambda v: v <= 25),
                f"concurrency.py, {size}",
            )
        )
        rss = _num(d, "daemon_rss_mib")
        peak = _num(d, "daemon_peak_rss_mib")
        rows.append(
            Row(
                "concurrent checks: daemon RSS",
                "not reported" if rss is None else f"{rss:.0f} MiB",
                "–" if peak is None else f"peak {peak:.0f} MiB",
                "≤ 150 MiB",
                _verdict(peak if peak is not None else rss, lambda v: v <= 150),
                f"concurrency.py, {size}",
            )
        )
    else:
        rows.append(
            missing(
                "concurrency",
                "32 sessions × 500 checks: errors, p99, daemon RSS",
                "0; ≤ 25 ms; ≤ 150 MiB",
            )
        )
    r = results.get("undo_cost", {})
    warm = r.get("result", {}).get("trees", {}).get("self", {}).get("warm") if r else None
    if r.get("status") == "ok" and warm:
        p50, p99 = _num(warm, "p50"), _num(warm, "p99")
        rows.append(
            Row(
                "undo snapshot, this repository, warm: p50 / p99",
                f"{_ms(p50, 1)} / {_ms(p99, 1)}",
                f"p90 {_ms(_num(warm, 'p90'), 1)}; max {_ms(_num(warm, 'max'), 1)}",
                "≤ 20 ms / ≤ 150 ms",
                _verdict(p50, lambda v: v <= 20) + " / " + _verdict(p99, lambda v: v <= 150),
                f"undo_cost.py, {int(_num(warm, 'n') or 0)} snapshots",
            )
        )
    else:
        rows.append(
            missing(
                "undo_cost",
                "undo snapshot, this repository, warm: p50 / p99",
                "≤ 20 ms / ≤ 150 ms",
            )
        )
    return rows


def _spread_of(d: dict[str, Any], stem: str) -> str:
    """A p10–p90 (or IQR) spread for keys containing ``stem``, when the script reported one."""
    flat = _flatten(d)
    pick = {k: v for k, v in flat.items() if stem in k.lower() and isinstance(v, int | float)}
    for lo, hi in (("p10", "p90"), ("p25", "p75"), ("min", "max")):
        a = next(
            (v for k, v in pick.items() if k.lower().endswith(lo) or f"{lo}_" in k.lower()), None
        )
        b = next(
            (v for k, v in pick.items() if k.lower().endswith(hi) or f"{hi}_" in k.lower()), None
        )
        if a is not None and b is not None:
            return f"{lo}–{hi} {a:.3g}–{b:.3g}"
    return "not reported"


def _flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(_flatten(v, f"{prefix}{k}."))
    else:
        out[prefix.rstrip(".")] = d
    return out


# --- the document --------------------------------------------------------------------------------


def render(ctx: Ctx, info: dict[str, Any], elapsed: float, load: tuple[str, str]) -> str:
    res = ctx.results
    mode = "quick (`--quick`: smaller samples)" if ctx.quick else "full"
    lines = [
        "# Benchmarks",
        "",
        "Generated by `python benchmarks/run_all.py`; do not edit by hand. Every figure below was measured "
        "by the run that wrote this file; a benchmark that did not run says why and shows no figure.",
        "",
        "## How to run",
        "",
        HOW_TO_RUN,
        "",
        "## This run",
        "",
        f"- Mode: {mode}; took {elapsed:.0f} s; started {time.strftime('%Y-%m-%d %H:%M:%S %Z', time.localtime(time.time() - elapsed))}.",
        f"- Code: commit `{info.get('git_commit')}`"
        + (" with uncommitted changes" if info.get("git_dirty") else "")
        + ".",
        f"- Corpora: `{ctx.corpus}`"
        + ("" if os.path.isdir(ctx.corpus) else " — **absent**: corpus benchmarks not run")
        + ".",
        "- Children run with scratch XDG folders (no user config, no user daemon), no model API key (the "
        "builtin rater), and the real interpreter first on PATH.",
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        f"| CPU | {info.get('cpu')} |",
        f"| cores | {info.get('cores')} |",
        f"| RAM | {info.get('ram_gib', '?')} GiB |",
        f"| Python | {info.get('python')} (`{info.get('python_path')}`) |",
        f"| bash | {info.get('bash')} |",
        f"| node | {info.get('node')} |",
        f"| kernel | {info.get('kernel')} |",
        f"| load average (1/5/15 min) at start / end | {load[0]} / {load[1]} |",
        "",
        "The load average says whether other work shared the machine during the run; latency figures on a "
        "shared 2-core machine are noisier than on an idle one.",
        "",
        "## S14 targets (docs/DESIGN.md)",
        "",
        "| figure | median | spread | S14 target | result | source |",
        "|---|---:|---|---:|:---:|---|",
    ]
    for row in s14_rows(res):
        lines.append(
            f"| {row.figure} | {row.median} | {row.spread} | {row.target} | {row.result} | {row.source} |"
        )
    lines += [
        "",
        "![Latency distributions](latency.png)"
        if os.path.exists(os.path.join(ctx.out, "latency.png"))
        and res.get("plot", {}).get("status") == "ok"
        else f"No plot: {res.get('plot', {}).get('why', 'the plot step did not run')}.",
        "",
    ]
    lines += agent_work_section(res.get("agent_work", {}))
    lines += _undo_section(res.get("undo_cost", {}), res.get("undo_reach", {}))
    lines += _peer_section(res.get("peer", {}))
    lines += _quality_section(res.get("evaluation", {}), res.get("rater_quality", {}))
    lines += _reader_section(res.get("reader_coverage", {}))
    lines += _boundary_section(res.get("boundary", {}))
    lines += _harm_boundary_section(res.get("harm_boundary", {}))
    lines += [
        "## Every benchmark in this run",
        "",
        "| benchmark | script | size | status | time |",
        "|---|---|---|---|---:|",
    ]
    for name, rec in res.items():
        status = (
            rec["status"] if rec["status"] == "ok" else f"{rec['status']}: {rec.get('why', '')}"
        )
        lines.append(
            f"| {name} | `{rec.get('script', '–')}` | {rec.get('size', '–')} | {_cell(status)} | "
            f"{rec.get('elapsed_s', '–')} s |"
        )
    lines += [
        "",
        "What each script printed (its JSON result line is in [benchmarks.json](benchmarks.json)):",
        "",
    ]
    for name, rec in res.items():
        if rec.get("printed"):
            lines += [
                f"<details><summary>{name}</summary>",
                "",
                "```",
                *rec["printed"],
                "```",
                "",
                "</details>",
                "",
            ]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _undo_section(cost: dict[str, Any], reach: dict[str, Any]) -> list[str]:
    """What an undo snapshot costs (undo_cost.py) and what undo lets run (undo_reach.py)."""
    lines = ["## Undo: what a snapshot costs, and what it lets run", ""]
    if cost.get("status") != "ok":
        lines += [f"Cost not measured: {cost.get('why', 'not part of this run')}.", ""]
    else:
        lines += [
            "The whole snapshot taken before an allowed command that may write (walk, reading what "
            "changed, trees, refs, the book), by `benchmarks/undo_cost.py`. *Warm*: the daemon "
            "snapshotted the tree before, two files edited in between; *restart*: a new daemon, the "
            "cache read back from the state folder; *cold*: the first snapshot of the tree (the "
            "user's index vouches for unchanged tracked files), without a time budget, so the "
            "figure is its cost. The page cache stays warm in every case. "
            f"({cost.get('size', '')})",
            "",
            "| tree | files | warm p50 | warm p99 | warm CPU p50 | restart p50 | restart p99 | cold p50 | cold max | cold within `undo.max_seconds` |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, t in cost["result"].get("trees", {}).items():
            w, r, c = t["warm"], t["restart"], t["cold"]
            label = "this repository" if name == "self" else f"{int(name):,} files (generated)"
            lines.append(
                f"| {label} | {t['files']:,} | {w['p50']:.1f} ms | {w['p99']:.1f} ms | "
                f"{w.get('cpu_p50', float('nan')):.1f} ms | "
                f"{r['p50']:.1f} ms | {r['p99']:.1f} ms | {c['p50']:.0f} ms | {c['max']:.0f} ms | "
                f"{t['cold_within_budget']}/{c['n']} (≤ {t['budget_ms'] / 1000:g} s) |"
            )
        pair = cost["result"].get("trees", {}).get("self", {}).get("side_by_side")
        if pair:
            off, on = pair["undo_off"], pair["undo_on"]
            lines += [
                "",
                f"Side by side on this repository, warm: `{_cell(pair['command'])}` decided as the "
                f"daemon does, undo off p50 {off['p50']:.2f} ms (CPU {off['cpu_p50']:.2f} ms), "
                f"undo on (decision and snapshot) p50 {on['p50']:.2f} ms (CPU "
                f"{on['cpu_p50']:.2f} ms): a snapshot adds {pair['added_p50_ms']:.1f} ms to the "
                "median allowed write.",
            ]
        lines.append("")
    if reach.get("status") != "ok":
        return [*lines, f"Reach not measured: {reach.get('why', 'not part of this run')}.", ""]
    lines += [
        "Rows decided at `auto` with the builtin rater in the scratch working tree, without and "
        "with undo (`benchmarks/undo_reach.py`); nothing is run and no snapshot taken.",
        "",
        "| corpus | label | rows | allowed without undo | allowed with undo | refused for work loss | of which undo lets run |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for corpus in ("agent_work", "friction"):
        r = reach["result"].get(corpus, {})
        for label, c in sorted(r.get("by_label", {}).items()):
            lines.append(
                f"| {corpus} | {label} | {c['rows']} | {c['allowed_before']} | {c['allowed_after']} "
                f"| {c.get('work_loss_before', 0)} | {c.get('lifted', 0)} |"
            )
    for corpus in ("agent_work", "friction"):
        r = reach["result"].get(corpus, {})
        if r.get("tightened_count"):
            lines.append(
                f"\n**{corpus}: {r['tightened_count']} rows allowed without undo are refused with it.**"
            )
        if r.get("examples"):
            shown = "; ".join(f"`{_cell(e['cmd'])}` ({e['was']})" for e in r["examples"][:6])
            lines.append(f"\n{corpus}, rows undo lets run: {shown}.")
    lines.append("")
    return lines


def _peer_section(rec: dict[str, Any]) -> list[str]:
    lines = ["## Hook latency side by side: gatesh and cc-safety-net", ""]
    if rec.get("status") != "ok":
        return [*lines, f"Not run: {rec.get('why', 'not part of this run')}.", ""]
    d = rec["result"]
    hook = d.get("hook", {})
    lines += [
        f"Same harness for both: a fresh process per call with the Claude Code `PreToolUse` JSON on stdin, "
        f"wall time from spawn to exit, the two interleaved row by row; {hook.get('calls')} calls each "
        f"({hook.get('sample_per_corpus')} evenly spaced rows per corpus). gatesh: `{hook.get('gatesh_argv')}` "
        f"({hook.get('gatesh_path')}), and the hook entry `gatesh install` writes (the real interpreter with `-I -S`, started directly). Peer: `cc-safety-net` {d.get('version')}, `{hook.get('peer_argv')}`.",
        "",
        "| guard | median | p10–p90 | p99 |",
        "|---|---:|---:|---:|",
    ]
    for who, key in (
        ("gatesh hook, `python -m gatesh`", "gatesh_ms"),
        ("gatesh hook, as `gatesh install` writes it (`python -I -S`)", "gatesh_launcher_ms"),
        ("cc-safety-net hook", "peer_ms"),
    ):
        s = hook.get(key)
        if s:
            lines.append(
                f"| {who} | {s['p50']:.1f} ms | {s['p10']:.1f}–{s['p90']:.1f} ms | {s['p99']:.1f} ms |"
            )
        else:
            lines.append(f"| {who} | not measured | | |")
    r = hook.get("ratio_gatesh_over_peer")
    if r:
        lines.append(
            f"| ratio `python -m gatesh` / peer, per pair | {r['p50']:.2f}× | {r['p10']:.2f}–{r['p90']:.2f}× | {r['p99']:.2f}× |"
        )
    decided = hook.get("decisions", {})
    if decided:
        lines += [
            "",
            "Answers on those rows: "
            + "; ".join(
                f"{who}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items()))
                for who, c in decided.items()
                if c
            )
            + ".",
        ]
    lines += [
        "",
        f"The peer decided {sum(d.get('decided_rows', {}).values())} corpus rows through its library "
        f"entry point at {d.get('decisions_per_second')} rows/s; its allow/deny per corpus and label is in "
        "[EVALUATION.md](EVALUATION.md).",
        "",
    ]
    return lines


def _quality_section(ev: dict[str, Any], rq: dict[str, Any]) -> list[str]:
    lines = ["## Rater quality (issue-2 targets, rung auto)", ""]
    if ev.get("status") != "ok":
        lines.append(f"Evaluation not run: {ev.get('why', 'not part of this run')}.")
    else:
        d = ev["result"]
        lines += [
            (
                f"On an evenly spaced sample of at most {d.get('limit')} rows per corpus. "
                if d.get("limit")
                else "On every row. "
            )
            + "Details per corpus, label and rung in [EVALUATION.md](EVALUATION.md).",
            "",
            "| target | rows | gatesh | target | result | peer (same rows) |",
            "|---|---:|---:|---:|:---:|---:|",
        ]
        for t in d.get("targets", []):
            share = "–" if t.get("share") is None else f"{100 * t['share']:.1f} %"
            peer = "–" if t.get("peer_share") is None else f"{100 * t['peer_share']:.1f} %"
            result = "not measured" if t.get("pass") is None else ("PASS" if t["pass"] else "FAIL")
            lines.append(
                f"| {t['name']} | {t['rows']} | {share} | ≥ {100 * t['target']:.0f} % | {result} | {peer} |"
            )
    if rq.get("status") == "ok":
        lines += [
            "",
            "`rater_quality.py` (the rater engineer's own measure, same targets): "
            + "; ".join(
                f"{name}: " + ", ".join(f"{k.replace('_', ' ')} {v[k]}%" for k in keys if k in v)
                for name, v in sorted(rq["result"].items())
                if isinstance(v, dict)
                for keys in [_RQ_KEYS.get(name, ("risky_not_allowed",))]
            )
            + ".",
        ]
        for name, v in sorted(rq["result"].items()):
            dm = v.get("default_mode") if isinstance(v, dict) else None
            if dm:
                lines += [
                    "",
                    f"{name} labels each row for one of the peer's modes, and "
                    f"{v.get('commands_labelled_both_ways', 0)} commands carry both labels. "
                    f"On the {dm['risky_rows']} risky and {dm['benign_rows']} benign rows "
                    f"labelled for its default mode: risky not allowed "
                    f"{dm['risky_not_allowed']}%, benign allowed {dm['benign_allowed']}%.",
                ]
    elif rq:
        lines += ["", f"`rater_quality.py`: {rq.get('status')}: {rq.get('why')}."]
    return [*lines, ""]


# The figures rater_quality.py reports that issue 2 sets a target for, per corpus.
_RQ_KEYS = {
    "dcg": ("risky_not_allowed", "benign_allowed"),
    "claude_code_safety_net": ("risky_not_allowed", "benign_allowed"),
    "gtfobins": ("target_not_allowed",),
    "atomic_red_team": ("target_not_allowed",),
}


def agent_work_section(rec: dict[str, Any]) -> list[str]:
    """The section on real agents' work (S14, issue 32) from ``agent_work.py``'s JSON line."""
    lines = ["## Real agents' work (issue 32)", ""]
    if rec.get("status") != "ok":
        return [*lines, f"Not run: {rec.get('why', 'not part of this run')}.", ""]
    d = rec["result"]
    b = d.get("auto_builtin", {})
    benign = b.get("per_label", {}).get("benign", {})
    n = sum(benign.values())
    lines += [
        f"The commands coding agents ran in published trajectories "
        f"(the agent-work corpus, {b.get('rows')} rows), each decided at `auto` with the "
        "builtin rater in the realistic working tree"
        + (f" ({rec['size']})" if rec.get("size") else "")
        + ".",
        "",
        "| figure | value | S14 target |",
        "|---|---:|---:|",
        f"| benign rows allowed | {100 * b.get('benign_allowed_share', 0):.2f} % of {n} | ≥ 99 % |",
        f"| benign rows halted | {b.get('benign_halted')} | 0 |",
        f"| risky rows stopped | {b.get('risky_stopped')} of {b.get('risky_rows')} | all |",
        f"| task runs with a halt / with any stop | {100 * b.get('runs_halted_share', 0):.1f} % / "
        f"{100 * b.get('runs_stopped_share', 0):.1f} % of {b.get('runs')} | – |",
        f"| rows the builtin failed on | {len(b.get('errors', []))} | 0 |",
    ]
    c = d.get("cascade")
    if c:
        lines.append(
            f"| decided with no model request, key present (loopback API) | "
            f"{100 * c['model_free_share']:.1f} % ({c['requests']} requests) | ≥ 85 % |"
        )
    u = b.get("ms_upto_2000", {})
    if u:
        lines.append(
            f"| decision time up to 2,000 characters | p50 {u['p50']:.2f} ms, p99 {u['p99']:.2f} ms"
            " | p99 ≤ 5 ms |"
        )
    lines += ["", "Benign rows not allowed, by action and rule:", ""]
    lines += ["| action and rule | rows |", "|---|---:|"]
    for key, count in b.get("benign_stopped_by_rule", {}).items():
        lines.append(f"| `{key}` | {count} |")
    lines += ["", "Decision time by command length (one decision per row):", ""]
    lines += ["| characters | rows | p50 | p99 |", "|---|---:|---:|---:|"]
    for bucket, f in b.get("ms_by_length", {}).items():
        lines.append(f"| {bucket} | {f['n']} | {f['p50']:.2f} ms | {f['p99']:.2f} ms |")
    sc = d.get("scaling")
    if sc:
        lines += [
            "",
            "Long commands grown from corpus rows (median of 15 decisions per size; time per "
            "character flat when time is linear in length):",
            "",
            "| kind | characters | p50 | µs per character |",
            "|---|---:|---:|---:|",
        ]
        for kind, per_size in sc.items():
            for size, f in per_size.items():
                lines.append(f"| {kind} | {size} | {f['ms_p50']:.2f} ms | {f['us_per_char']:.2f} |")
    lines.append("")
    return lines


def _reader_section(rec: dict[str, Any]) -> list[str]:
    lines = ["## Reader coverage", ""]
    if rec.get("status") != "ok":
        return [*lines, f"Not run: {rec.get('why', 'not part of this run')}.", ""]
    d = rec["result"]
    cov = d.get("readable_pct", d.get("coverage_pct"))
    num = (int, float)
    lines.append(
        f"tldr + nl2bash read by the reader (tree-sitter-bash, with its repairs) without "
        f"error: {'not reported' if cov is None else f'{cov:.2f} %'} (issue-2 target "
        f"≥ 99.5 %: {_verdict(cov, lambda v: v >= 99.5)})"
        + (
            f"; {d['readable_bash_valid_pct']:.3f} % of the {d['bash_valid_lines']} lines "
            f"`bash -n` accepts ({d.get('unreadable_bash_valid')} unreadable)"
            if isinstance(d.get("readable_bash_valid_pct"), num)
            else ""
        )
        + (
            f"; raw tree-sitter {d['coverage_pct']:.2f} %"
            if isinstance(d.get("coverage_pct"), num)
            else ""
        )
        + (
            f". read() over tldr: p50 {d['read_p50_ms']:.3f} ms, p99 {d['read_p99_ms']:.3f} ms."
            if isinstance(d.get("read_p50_ms"), num)
            else "."
        )
    )
    lines += [
        "",
        "| corpus | lines | read() readable | raw tree-sitter clean | crashes |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, v in d.items():
        if isinstance(v, dict) and "lines" in v:
            readable = v.get("readable_pct")
            shown = "–" if readable is None else f"{readable:.2f} %"
            lines.append(
                f"| {name} | {v['lines']} | {shown} | {v.get('ts_clean_pct', 0):.2f} % | "
                f"{v.get('crashes', '–')} |"
            )
    lines.append("")
    if rec.get("size", "").startswith("quick"):
        lines += [f"({rec['size']}.)", ""]
    return lines


def _harm_boundary_section(rec: dict[str, Any]) -> list[str]:
    """Issue 30 item 7: harm with the gate and its boundary on vs off; work that still runs."""
    lines = ["## Harm with the boundary on and off", ""]
    if rec.get("status") != "ok":
        return [*lines, f"Not run: {rec.get('why', 'not part of this run')}.", ""]
    d = rec["result"]
    lines += [
        "Every row runs for real in benchmarks/harm.py's jail. Of the rows that harm with the gate "
        "off, how many still harm with the gate on, with gatesh's boundary on (where the kernel "
        "enforces it, what it contains counts as knowledge) and off (`boundary.enabled = false`):",
        "",
        "| corpus | rows | harm, gate off | gate on, boundary on | boundary off | boundary on: by predicate |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, r in (d.get("harm") or {}).items():
        on, off = r.get("boundary_on") or {}, r.get("boundary_off") or {}
        preds = ", ".join(f"{k} {v}" for k, v in (on.get("by_predicate") or {}).items() if v)
        lines.append(
            f"| {name} | {r.get('rows')} | {r.get('harmed_gate_off')} | {on.get('harmed')} "
            f"({on.get('share')}) | {off.get('harmed')} ({off.get('share')}) | {preds or 'none'} |"
        )
    lines += [
        "",
        f"gate-weakened with the boundary on: {d.get('gate_weakened')}; secret-sent: "
        f"{d.get('secret_sent')}.",
        "",
        "Ordinary work, gate on: of the rows that ran (allowed, exit 0) with the boundary off, the "
        "share that still run with it on:",
        "",
    ]
    for name, r in (d.get("still_runs") or {}).items():
        lines.append(
            f"- {name}: {r.get('still_run_boundary_on')} of {r.get('ran_boundary_off')} "
            f"({r.get('share')})"
        )
    return [*lines, ""]


def _boundary_section(rec: dict[str, Any]) -> list[str]:
    """S16: the domain's cost per command, what it adds to `gatesh -c`, real work in its limits."""
    lines = ["## The boundary", ""]
    if rec.get("status") != "ok":
        return [*lines, f"Not run: {rec.get('why', 'not part of this run')}.", ""]
    d = rec["result"]
    if "skipped" in d:
        return [*lines, f"No boundary on this machine: {d['skipped']}.", ""]
    lines += [
        f"Landlock ABI {d.get('abi')}, run as uid {d.get('uid')} (root's `/etc` holds readable "
        "credential stores, so its domains have more rules than a user's). Each figure is a fresh "
        "interpreter started as the `-c` client starts (`-I -S`) applying one boundary computed "
        "for that command in a scratch home outside the temporary folders: from its ready step "
        "(importing the module and binding the C library, which the client does while the daemon "
        "decides) to the domain in force, and from the reply alone. Handed: the daemon builds the "
        "ruleset and passes its descriptor (what the client does); from the places: the client "
        "builds it (before; still the in-process gate's way).",
        "",
        "| command | rules | handed: with ready p50 | after the reply p50 | p90 | warm | "
        "from the places: with ready p50 | after the reply p50 | p90 | warm |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    before = d.get("apply_from_places") or {}
    for cmd, c in (d.get("apply") or {}).items():
        b = before.get(cmd) or {}
        lines.append(
            f"| `{cmd}` | {c.get('rules')} | {_ms(c.get('with_ready_p50_ms'), 3)} | "
            f"{_ms(c.get('first_p50_ms'), 3)} | {_ms(c.get('first_p90_ms'), 3)} | "
            f"{_ms(c.get('warm_p50_ms'), 3)} | {_ms(b.get('with_ready_p50_ms'), 3)} | "
            f"{_ms(b.get('first_p50_ms'), 3)} | {_ms(b.get('first_p90_ms'), 3)} | "
            f"{_ms(b.get('warm_p50_ms'), 3)} |"
        )
    o = d.get("c_overhead") or {}
    if o:
        lines += [
            "",
            f"`gatesh -c true` with the boundary on: median {_ms(o.get('bounded_median_ms'))} "
            f"(client CPU {_ms(o.get('bounded_cpu_median_ms'))}); off (`boundary.enabled = "
            f"false`, the `exec` path): {_ms(o.get('unbounded_median_ms'))} (CPU "
            f"{_ms(o.get('unbounded_cpu_median_ms'))}); `bash -c true` "
            f"{_ms(o.get('bash_median_ms'))}. The boundary adds "
            f"{_ms(o.get('boundary_adds_median_ms'))} wall (ratio on/off "
            f"{o.get('bounded_over_unbounded')}), {_ms(o.get('boundary_adds_cpu_median_ms'))} "
            f"CPU (median of {o.get('n')} interleaved pairs).",
        ]
    work = d.get("workloads") or {}
    if work:
        lines += [
            "",
            "Real work inside the session boundary with the default limits (peaks read from `/proc`):",
            "",
            "| workload | exit | seconds | peak memory (VmData) | peak address space | peak tasks | fits |",
            "|---|---:|---:|---:|---:|---:|:---:|",
        ]
        for name, w in work.items():
            if "skipped" in w:
                lines.append(f"| {name} | – | – | – | – | – | {w['skipped']} |")
                continue
            lines.append(
                f"| {name} | {w.get('status')} | {w.get('seconds')} | "
                f"{w.get('peak_data_mib')} MiB (limit {w.get('memory_limit_mib')}) | "
                f"{w.get('peak_address_space_mib')} MiB | "
                f"{w.get('peak_tasks')} | {'yes' if w.get('fits') else 'NO'} |"
            )
    stops = d.get("limits_stop") or {}
    if stops:
        lines += [
            "",
            "The limits' own mechanisms, at small scale (1 GiB of memory, 1 MiB per file; "
            f"nothing is used either way): an allocation past the limit {stops.get('allocation')}; "
            f"a sparse write past it {stops.get('file')}; an `fallocate` past it "
            f"{stops.get('fallocate')}. Fork, memory and disk bombs run only in the harm "
            "harness's jail.",
        ]
    return [*lines, ""]


# --- main ----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smaller samples (under 3 minutes)")
    parser.add_argument(
        "--out", default=os.path.join(REPO, "docs"), help="folder for the documents (default docs/)"
    )
    parser.add_argument("--only", help="comma-separated benchmark names to run (default: all)")
    parser.add_argument("--skip", help="comma-separated benchmark names not to run")
    parser.add_argument(
        "--no-install", action="store_true", help="no npm or pip installs (no network)"
    )
    parser.add_argument("--scripts-dir", default=HERE, help=argparse.SUPPRESS)
    parser.add_argument(
        "--keep-scratch", action="store_true", help="keep the scratch folder and print its path"
    )
    args = parser.parse_args(argv)
    wanted = set(args.only.split(",")) if args.only else None
    skipped = set(args.skip.split(",")) if args.skip else set()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="gatesh-bench-")
    started = time.perf_counter()
    load_start = load_average()
    info = machine()
    corpus = os.path.abspath(CORPUS)
    ctx = Ctx(
        quick=args.quick,
        out=out,
        scratch=scratch,
        corpus=corpus,
        sampled_corpus=corpus,
        install=not args.no_install,
    )
    try:
        if args.quick and os.path.isdir(corpus):
            ctx.sampled_corpus = ctx.path("corpus-sample")
            sample_corpus(corpus, ctx.sampled_corpus, QUICK_SAMPLE)
        env = child_env(ctx)
        steps = list(STEPS)
        known = {s.script for s in steps} | OWN_FILES
        for extra in sorted(os.listdir(args.scripts_dir)):
            if extra.endswith(".py") and not extra.startswith("_") and extra not in known:
                steps.append(
                    Step(
                        extra[:-3],
                        extra,
                        f"{extra[:-3]} (not in run_all's plan)",
                        a_generic,
                        (90, 240),
                    )
                )
        for step in steps:
            if (wanted is not None and step.name not in wanted) or step.name in skipped:
                continue
            if step.script in NOT_BENCHMARKS:
                ctx.results[step.name] = {
                    "script": step.script,
                    "status": "not run",
                    "why": NOT_BENCHMARKS[step.script],
                }
                continue
            if (
                step.args is a_generic
                and args.quick
                and not _has(_source(args.scripts_dir, step.script), "--quick")
            ):
                ctx.results[step.name] = {
                    "script": step.script,
                    "status": "not run",
                    "why": "a script run_all does not know, with no --quick mode (runs in the full run)",
                }
                continue
            if step.name == "peer" and args.no_install:
                ctx.results[step.name] = {
                    "script": step.script,
                    "status": "not run",
                    "why": "--no-install: npm install of cc-safety-net not allowed",
                }
                continue
            ctx.results[step.name] = run_step(step, ctx, args.scripts_dir, env)
        elapsed = time.perf_counter() - started
        load = (load_start, load_average())
        with open(os.path.join(out, "benchmarks.json"), "w", encoding="utf-8") as f:
            json.dump(
                {
                    "mode": "quick" if args.quick else "full",
                    "elapsed_s": round(elapsed, 1),
                    "machine": info,
                    "load_average": {"start": load[0], "end": load[1]},
                    "corpus": corpus,
                    "benchmarks": ctx.results,
                },
                f,
                indent=1,
                sort_keys=False,
            )
            f.write("\n")
        with open(os.path.join(out, "BENCHMARKS.md"), "w", encoding="utf-8") as f:
            f.write(render(ctx, info, elapsed, load))
        print(f"\nwrote {out}/BENCHMARKS.md and {out}/benchmarks.json in {elapsed:.0f} s")
        ran = sum(r["status"] == "ok" for r in ctx.results.values())
        print(
            json.dumps(
                {
                    "benchmark": "run_all",
                    "mode": "quick" if args.quick else "full",
                    "elapsed_s": round(elapsed, 1),
                    "ok": ran,
                    "total": len(ctx.results),
                    "not_ok": {
                        k: r["status"] for k, r in ctx.results.items() if r["status"] != "ok"
                    },
                }
            )
        )
        return 0
    finally:
        if args.keep_scratch:
            print(f"scratch kept at {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

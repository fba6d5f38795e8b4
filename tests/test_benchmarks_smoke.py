"""benchmarks/run_all.py and its own pieces, on a tiny fixture corpus (no ../shared, no network).

Checks that the documents are produced and carry the figures, and that a missing or failing
benchmark is reported as "not run" / "failed" instead of breaking the run. No timing is asserted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "benchmarks"
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "bench_corpus"


def _env(corpus: Path) -> dict[str, str]:
    env = dict(os.environ, GATESH_CORPUS=str(corpus))
    env["PYTHONPATH"] = str(REPO) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env.pop("ANTHROPIC_API_KEY", None)
    return env


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, env=env, cwd=cwd, timeout=300
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc


def _last_json(stdout: str) -> dict[str, object]:
    return json.loads([ln for ln in stdout.splitlines() if ln.startswith("{")][-1])


@pytest.mark.slow
def test_evaluation_and_plot_write_their_documents(tmp_path: Path) -> None:
    env = _env(FIXTURE)
    doc, lat, png = tmp_path / "EVALUATION.md", tmp_path / "lat.json", tmp_path / "latency.png"
    proc = _run(
        [str(BENCH / "evaluation.py"), "--out", str(doc), "--latencies-out", str(lat)],
        env,
        tmp_path,
    )
    result = _last_json(proc.stdout)
    assert result["benchmark"] == "evaluation" and result["status"] == "ok"
    text = doc.read_text(encoding="utf-8")
    for needle in (
        "## Quality targets",
        "## Per corpus and label",
        "## Reader coverage",
        "benign row was not allowed",
        "### dcg",
        "### gtfobins",
        "### tldr",
        "| risky | auto |",
        "| benign | assisted |",
        "Peer (`cc-safety-net`): not run",
    ):
        assert needle in text, needle
    targets = {t["name"]: t for t in result["targets"]}  # type: ignore[union-attr]
    assert targets["dcg: risky rows not allowed"]["rows"] == 4
    atomic = next(t for name, t in targets.items() if name.startswith("atomic_red_team"))
    assert (
        atomic["rows"] == 3
    )  # Data Destruction, System Shutdown/Reboot, Scheduled Task/Job; not discovery
    assert all(t["pass"] in (True, False) for t in targets.values())
    assert "PASS" in text or "FAIL" in text
    # the fixture's obvious rows are decided the obvious way
    dcg = result["corpora"]["dcg"]["labels"]  # type: ignore[index]
    assert dcg["risky"]["auto"].get("allow", 0) == 0

    proc = _run(
        [str(BENCH / "plot.py"), "--decision", str(lat), "--out", str(png), "--backend", "png"],
        env,
        tmp_path,
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert _last_json(proc.stdout)["status"] == "ok"


@pytest.mark.slow
def test_evaluation_says_so_when_the_corpora_are_absent(tmp_path: Path) -> None:
    doc = tmp_path / "EVALUATION.md"
    proc = _run(
        [str(BENCH / "evaluation.py"), "--out", str(doc)], _env(tmp_path / "nowhere"), tmp_path
    )
    assert _last_json(proc.stdout)["status"] == "skipped"
    assert "Not run" in doc.read_text(encoding="utf-8")


@pytest.mark.slow
def test_run_all_quick_writes_both_documents_and_reports_what_did_not_run(tmp_path: Path) -> None:
    scripts = tmp_path / "benchmarks"
    shutil.copytree(BENCH, scripts, ignore=shutil.ignore_patterns("__pycache__"))
    (scripts / "pty_throughput.py").unlink(missing_ok=True)  # a benchmark that does not exist yet
    (scripts / "broken_bench.py").write_text(
        "import argparse, sys\np = argparse.ArgumentParser()\np.add_argument('--quick', action='store_true')\n"
        "p.parse_args()\nprint('about to fail')\nsys.exit('it broke')\n"
    )
    (scripts / "slow_bench.py").write_text("raise SystemExit('must not run in --quick')\n")
    out = tmp_path / "docs"
    proc = _run(
        [
            str(scripts / "run_all.py"),
            "--quick",
            "--no-install",
            "--out",
            str(out),
            "--only",
            "decision_latency,pty_throughput,peer,broken_bench,slow_bench,evaluation,plot",
        ],
        _env(FIXTURE),
        tmp_path,
    )
    summary = _last_json(proc.stdout)
    assert summary["benchmark"] == "run_all"

    raw = json.loads((out / "benchmarks.json").read_text(encoding="utf-8"))
    runs = raw["benchmarks"]
    assert runs["decision_latency"]["status"] == "ok"
    assert runs["decision_latency"]["result"]["benchmark"] == "decision_latency"
    assert runs["evaluation"]["status"] == "ok" and runs["plot"]["status"] == "ok"
    assert runs["pty_throughput"]["status"] == "not run"
    assert runs["peer"]["status"] == "not run" and "--no-install" in runs["peer"]["why"]
    assert runs["broken_bench"]["status"] == "failed" and "it broke" in runs["broken_bench"]["why"]
    assert (
        runs["slow_bench"]["status"] == "not run" and "no --quick mode" in runs["slow_bench"]["why"]
    )
    assert raw["machine"]["cores"] and raw["machine"]["python"]

    bench = (out / "BENCHMARKS.md").read_text(encoding="utf-8")
    for needle in (
        "## How to run",
        "python benchmarks/run_all.py",
        "## Machine",
        "| CPU |",
        "| bash |",
        "## S14 targets (docs/DESIGN.md)",
        "decision latency p50, tldr",
        "≤ 0.5 ms",
        "not run: benchmarks/pty_throughput.py does not exist yet",
        "it broke",
        "![Latency distributions](latency.png)",
    ):
        assert needle in bench, needle
    p50 = runs["decision_latency"]["result"]["ms"]["p50"]
    assert f"{p50:.3f} ms" in bench  # the figure in the document is the one measured
    assert (out / "EVALUATION.md").exists()
    assert (out / "latency.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("n", [0, 1, 5])
def test_pure_python_png_writer_draws_any_histogram(tmp_path: Path, n: int) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import plot
    finally:
        sys.path.remove(str(BENCH))
    values = [0.1 * (i + 1) for i in range(n)] or [1.0]
    spec = [
        {
            "title": "t",
            "series": [("s", values, (0, 0, 255))],
            "marks": [("p50", values[0])],
            "targets": [("target", 0.5)],
        }
    ]
    out = tmp_path / "x.png"
    plot.draw_fallback(spec, str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_cascade_benchmark_measures_both_figures_on_the_fixture(tmp_path: Path) -> None:
    """benchmarks/cascade.py against its loopback API: the model-free share of both arms, and the
    never-weaker figure (the cascade with an always-safe model refuses what the builtin refuses)."""
    proc = _run([str(BENCH / "cascade.py"), "--sample", "0"], _env(FIXTURE), tmp_path)
    result = _last_json(proc.stdout)
    assert result["benchmark"] == "cascade"
    tldr = result["share"]["tldr"]  # type: ignore[index]
    assert tldr["cascade"]["rows"] == tldr["model"]["rows"] > 0
    # the model arm asks about every rated row; the cascade only where the builtin is not sure
    assert tldr["cascade"]["model_free"] > tldr["model"]["model_free"]
    assert tldr["model"]["requests"] > 0 and set(tldr["cascade"]["why"]) & {"complete", "attack"}
    weaker = result["never_weaker"]  # type: ignore[index]
    assert {"dcg", "bypass"} <= set(weaker)
    for corpus, f in weaker.items():
        assert f["not_allowed_cascade"] >= f["not_allowed_builtin"] and not f["newly_allowed"], (
            corpus
        )


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_undo_benchmarks_measure_on_this_repository_and_the_fixtures(tmp_path: Path) -> None:
    env = _env(FIXTURE)
    cost = _last_json(
        _run([str(BENCH / "undo_cost.py"), "--quick", "--sizes", "self"], env, tmp_path).stdout
    )
    self_tree = cost["trees"]["self"]  # type: ignore[index]
    assert self_tree["warm"]["n"] > 0 and self_tree["cold"]["n"] > 0
    assert git_refs_untouched()
    sample = Path(__file__).resolve().parent / "fixtures" / "agent_work_sample.jsonl"
    reach = _last_json(
        _run([str(BENCH / "undo_reach.py"), "--corpus", str(sample)], env, tmp_path).stdout
    )
    assert reach["friction"]["tightened_count"] == 0  # type: ignore[index]
    assert reach["agent_work"]["tightened_count"] == 0  # type: ignore[index]


def git_refs_untouched() -> bool:
    """The benchmark snapshots a clone: no ref of this checkout's repository is written."""
    out = subprocess.run(
        ["git", "-C", str(REPO), "for-each-ref", "refs/gatesh"], capture_output=True, text=True
    )
    return out.stdout == ""

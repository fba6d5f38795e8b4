"""benchmarks/harm.py, harm_corpora.py: the summary and the corpus reader on rows written by hand,
and the harness for real on the project's own fixture (tests/fixtures/harm_rows.jsonl).

With the gate off each risky row trips the predicate it was written for and each benign twin
harms nothing; with the gate on every row runs and none errs. No figure of the gate is asserted
(docs/RELIABILITY.md holds those). Every row runs inside the proved jail; the slow tests skip,
saying why, without bubblewrap, strace or user namespaces.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gatesh.testing import jail

REPO = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "harm_rows.jsonl"


def _bench(name: str = "harm") -> Any:
    path = REPO / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{name}_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_summary_classes_and_keys() -> None:
    bench = _bench()
    base = {"action": "run", "exit": 0, "seconds": 1.0}
    lines = [
        {"cmd": "a", "label": "risky", "gate": "on", "action": "allow", "harm": ["work-lost"],
         "seconds": 1.0, "baseline": {**base, "harm": ["work-lost"]}},
        {"cmd": "b", "label": "risky", "gate": "on", "action": "reject", "harm": [],
         "seconds": 1.0, "baseline": {**base, "harm": ["secret-sent"]}},
        {"cmd": "c", "label": "risky", "gate": "on", "action": "allow", "harm": [],
         "seconds": 1.0, "baseline": {**base, "harm": ["shared-state"]}},
        {"cmd": "d", "label": "risky", "gate": "on", "action": "reject", "harm": [],
         "seconds": 1.0, "baseline": {**base, "harm": []}},
        {"cmd": "e", "label": "benign", "gate": "on", "action": "allow", "harm": [],
         "seconds": 1.0, "baseline": {**base, "harm": []}, "same_effects": True},
        {"cmd": "f", "label": "benign", "gate": "on", "action": "escalate", "harm": [],
         "seconds": 1.0, "baseline": {**base, "harm": []}},
        {"cmd": "g", "label": "risky", "gate": "on", "error": "the jail failed", "harm": [],
         "action": "error", "seconds": 0.1},
    ]  # fmt: skip
    summary = bench.summarise(lines, "on")
    assert summary["rows"] == 7 and summary["errors"] == 1
    assert summary["risky"] == {"harmed": 1, "harmless": 1, "refused": 1, "no_harm_possible": 1}
    assert summary["benign"] == {"ran": 1, "refused": 1}
    assert summary["by_predicate"]["work-lost"] == 1
    assert summary["risky_harm_share"] == round(1 / 3, 4)
    assert summary["baseline"]["risky"] == {
        "harmed": 3,
        "harmless": 0,
        "refused": 0,
        "no_harm_possible": 1,
    }
    assert set(summary) >= {"rows", "risky", "benign", "by_predicate"}


def test_corpus_errors_name_the_line(tmp_path: Path) -> None:
    bench = _bench()
    bad = tmp_path / "c.jsonl"
    bad.write_text('{"cmd": "ls", "label": "benign"}\n{"label": "risky"}\n')
    with pytest.raises(bench.CorpusError, match=r"c\.jsonl:2"):
        bench.load(str(bad))
    bad.write_text("not json\n")
    with pytest.raises(bench.CorpusError, match=r":1: not JSON"):
        bench.load(str(bad))


@pytest.fixture(scope="module")
def jail_here() -> None:
    why = jail.missing()
    if why:
        pytest.skip(f"no jail here: {why}")


def _harm(gate: str, tmp_path: Path) -> tuple[list[dict[str, object]], dict[str, object]]:
    out = tmp_path / f"rows-{gate}.jsonl"
    argv = [
        sys.executable,
        str(REPO / "benchmarks" / "harm.py"),
        str(FIXTURE),
        "--gate",
        gate,
        "--jobs",
        "2",
        "--timeout",
        "5",
        "--out",
        str(out),
        "--json",
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=3600, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    return rows, json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_each_predicate_fires_on_its_row_and_not_on_its_twin(
    jail_here: None, tmp_path: Path
) -> None:
    rows, summary = _harm("off", tmp_path)
    fixture = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    assert summary["errors"] == 0 and summary["rows"] == len(fixture)
    wrong = []
    for want, got in zip(fixture, rows, strict=True):
        assert got["cmd"] == want["cmd"] and got["gate"] == "off"
        if want["label"] == "risky" and want["predicate"] not in got["harm"]:
            wrong.append(f"{want['cmd']!r} did not trip {want['predicate']}: {got}")
        if want["label"] == "benign" and got["harm"]:
            wrong.append(f"benign {want['cmd']!r} (twin of {want['twin']}) tripped {got['harm']}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.slow
def test_the_fixture_runs_with_the_gate_on(jail_here: None, tmp_path: Path) -> None:
    rows, summary = _harm("on", tmp_path)
    assert summary["errors"] == 0
    assert set(summary) >= {"rows", "risky", "benign", "by_predicate", "baseline"}
    for row in rows:
        assert set(row) >= {"cmd", "label", "gate", "action", "exit", "harm", "seconds"}
        assert row["gate"] == "on", row
        # The instrument stays quiet on a benign row the gate let run: the gate's own bookkeeping
        # (its audit log, pending book, daemon) is not a harm.
        if row["label"] == "benign" and row["action"] == "allow":
            assert row["harm"] == [], row


def test_the_corpora_export_with_the_labels_their_fixtures_expect(tmp_path: Path) -> None:
    corpora = _bench("harm_corpora")
    counts = corpora.export(str(tmp_path), tldr_rows=0)
    assert {"bypass", "tamper", "generalisation", "friction"} <= set(counts)
    labels: dict[str, set[str]] = {}
    for name in counts:
        rows = [json.loads(line) for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
        assert len(rows) == counts[name] and all(isinstance(r["cmd"], str) for r in rows)
        labels[name] = {r["label"] for r in rows}
    assert labels["bypass"] == labels["generalisation"] == labels["exhaustion"] == {"risky"}
    assert labels["tamper"] == labels["friction"] == {"risky", "benign"}


def test_harm_boundary_resumes_only_a_complete_run_of_the_same_rows(tmp_path: Path) -> None:
    hb = _bench("harm_boundary")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(
        json.dumps({"cmd": "a", "label": "risky"})
        + "\n"
        + json.dumps({"cmd": "b", "label": "risky"})
        + "\n"
    )
    out = tmp_path / "c-off.jsonl"
    line = {"label": "risky", "gate": "off", "action": "run", "exit": 0, "seconds": 1.0, "why": {}}
    out.write_text(json.dumps(line | {"cmd": "a", "harm": ["work-lost"]}) + "\n")
    assert hb._resumed(corpus, out, "off") is None  # a row missing: run again
    with out.open("a") as f:
        f.write(json.dumps(line | {"cmd": "b", "harm": []}) + "\n")
    got = hb._resumed(corpus, out, "off")
    assert got is not None and got["rows"] == 2 and got["risky"]["harmed"] == 1
    assert hb._resumed(corpus, out, "on") is None  # another gate


def test_still_runs_counts_a_program_found_whatever_its_exit_status() -> None:
    hb = _bench("harm_boundary")
    allowed = {"action": "allow", "exit": 2}
    assert hb._started(allowed) and not hb._ran(allowed)
    assert not hb._started({"action": "allow", "exit": 127})  # not installed here
    assert not hb._started({"action": "reject", "exit": 126})
    assert not hb._started({"action": "allow", "exit": 0, "error": "jail"})

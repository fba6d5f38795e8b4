"""The agent-work corpus and its test sample: well-formed rows, each with its source."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "benchmarks" / "corpora" / "agent_work" / "commands.jsonl"
SAMPLE = Path(__file__).resolve().parent / "fixtures" / "agent_work_sample.jsonl"
SOURCE = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}:\S+$")
REGISTRY_HOSTS = re.compile(r"pypi\.org|pythonhosted\.org|npmjs\.(?:org|com)|debian\.org", re.I)


def _rows(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.parametrize("path", [CORPUS, SAMPLE], ids=["corpus", "sample"])
def test_every_row_is_a_labelled_command_with_its_source(path: Path) -> None:
    rows = _rows(path)
    assert rows
    for row in rows:
        assert set(row) == {"cmd", "label", "category", "source"}, row
        assert row["cmd"] and row["cmd"] == row["cmd"].strip()
        assert row["label"] in ("benign", "risky")
        assert row["category"].count(":") >= 2
        assert SOURCE.match(row["source"]), row["source"]
        assert not REGISTRY_HOSTS.search(row["cmd"])
    assert len({r["cmd"] for r in rows}) == len(rows), "rows are distinct"


def test_the_corpus_spans_agent_systems_and_the_sample_is_drawn_from_it() -> None:
    rows = _rows(CORPUS)
    assert len(rows) >= 2000
    assert len({r["category"].split(":", 1)[0] for r in rows}) >= 3
    sample = _rows(SAMPLE)
    assert 150 <= len(sample) <= 250
    assert {r["cmd"] for r in sample} <= {r["cmd"] for r in rows}
    assert {r["cmd"] for r in rows if r["label"] == "risky"} <= {r["cmd"] for r in sample}

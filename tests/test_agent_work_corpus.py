"""The agent-work corpus and the test sample: well-formed rows, each with its source.

The corpus itself is other projects' published data, kept in the shared corpus folder beside the
other corpora (``benchmarks/corpora/agent_work/extract.py`` writes it); its checks skip, saying
so, where that folder is absent. The sample in ``tests/fixtures`` is the project's own rows.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CORPUS = (
    Path(os.environ.get("GATESH_CORPUS", REPO.parent / "shared" / "corpus"))
    / "agent_work"
    / "commands.jsonl"
)
SAMPLE = Path(__file__).resolve().parent / "fixtures" / "agent_work_sample.jsonl"
SOURCE = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}:\S+$")
REGISTRY_HOSTS = re.compile(r"pypi\.org|pythonhosted\.org|npmjs\.(?:org|com)|debian\.org", re.I)
needs_corpus = pytest.mark.skipif(
    not CORPUS.exists(), reason=f"the agent-work corpus is not here ({CORPUS})"
)


def _rows(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _well_formed(rows: list[dict[str, str]]) -> None:
    assert rows
    for row in rows:
        assert set(row) == {"cmd", "label", "category", "source"}, row
        assert row["cmd"] and row["cmd"] == row["cmd"].strip()
        assert row["label"] in ("benign", "risky")
        assert row["category"].count(":") >= 2
        assert not REGISTRY_HOSTS.search(row["cmd"])
    assert len({r["cmd"] for r in rows}) == len(rows), "rows are distinct"


@needs_corpus
def test_every_corpus_row_is_a_labelled_command_with_its_source() -> None:
    rows = _rows(CORPUS)
    _well_formed(rows)
    assert all(SOURCE.match(r["source"]) for r in rows)
    assert len(rows) >= 2000
    assert len({r["category"].split(":", 1)[0] for r in rows}) >= 3


def test_the_sample_is_the_projects_own_rows_of_every_kind_of_work() -> None:
    rows = _rows(SAMPLE)
    _well_formed(rows)
    assert 150 <= len(rows) <= 250
    assert {r["source"] for r in rows} == {"gatesh"}
    kinds = {r["category"].split(":")[1] for r in rows}
    assert {"explore", "edit", "test", "build-deps", "run", "script", "git-write"} <= kinds
    assert any(r["label"] == "risky" for r in rows)

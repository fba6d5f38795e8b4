"""Tests for ``gatesh.reading.read`` driven by ``fixtures/reader_cases.py``."""

from __future__ import annotations

from collections import Counter

import pytest
from _fixtures import load

from gatesh.reading import read

_cases = load("reader_cases")
CASES = _cases.CASES
C = _cases.C


def _by_head(facts, head):
    return [c for c in facts.commands if c.head == head]


@pytest.mark.parametrize("case", CASES, ids=[c.cmd[:60] for c in CASES])
def test_reader_case(case: C) -> None:
    f = read(case.cmd, cwd="/nonexistent-gatesh-cwd", home="/nonexistent-gatesh-home")
    facts = case.facts
    assert Counter(f.heads) == Counter(case.heads), f
    assert f.readable is facts.get("readable", True), f.unreadable
    if "priv" in facts:
        assert {c.head for c in f.commands if c.privileged} == set(facts["priv"])
    if "hosts" in facts:
        assert set(f.hosts) == set(facts["hosts"])
    if "writes" in facts:
        assert {t for c in f.commands for t in c.writes} == set(facts["writes"])
    if facts.get("dyn"):
        assert any(c.dynamic_head for c in f.commands)
    for head, ctx in facts.get("ctx", {}).items():
        assert {c.context for c in _by_head(f, head)} == {ctx}
    for head, wr in facts.get("wrappers", {}).items():
        assert {c.wrappers for c in _by_head(f, head)} == {tuple(wr)}
    if "remote" in facts:
        assert {c.head for c in f.commands if c.remote} == set(facts["remote"])
    for pipe in facts.get("pipes", []):
        assert tuple(pipe) in {tuple(f.commands[i].head for i in p) for p in f.pipelines}
    if "functions" in facts:
        assert f.functions == tuple(facts["functions"])
    for head, assign in facts.get("assign", {}).items():
        assert {c.assignments for c in _by_head(f, head)} == {tuple(assign)}
    for head, argv in facts.get("argv", {}).items():
        assert {c.words for c in _by_head(f, head)} == {tuple(argv)}
    for head in facts.get("dynarg", ()):
        assert any(not w.static for c in _by_head(f, head) for w in c.argv[1:])
    for head, depth in facts.get("depth", {}).items():
        assert {c.depth for c in _by_head(f, head)} == {depth}
    if "bare" in facts:
        assert f.assignments == tuple(facts["bare"])
    for sub in facts.get("notes", []):
        assert any(sub in n for n in f.notes), f.notes


def test_enough_cases() -> None:
    assert len(CASES) >= 150
    assert len({c.cmd for c in CASES}) == len(CASES)

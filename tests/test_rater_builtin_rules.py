"""Validator for the builtin rater's rule tables: ids, reasons, examples, and timing of matching."""

from __future__ import annotations

import re
import time

import pytest

from gatesh._types import Outcome
from gatesh.rater.builtin import ALL_RULES, findings_for
from gatesh.rater.builtin._base import Severity, outcome_of
from gatesh.reading import read
from gatesh.testing import worktree

_ID = re.compile(r"^[a-z]+\.[a-z0-9-]+$")
# Examples are decided in a realistic working tree (S3.2: deleting or overwriting is judged by
# the file's git state), built once for the module: see gatesh.testing.worktree.
_TREE: list[worktree.Scratch] = []


@pytest.fixture(scope="module", autouse=True)
def _scratch(scratch_tree: worktree.Scratch) -> None:
    _TREE.append(scratch_tree)


def ids_for(cmd: str, *, harmful: bool = False) -> set[str]:
    """The ids of the rules that match ``cmd``; with ``harmful`` only those rating it above safe (a
    rule may say why a command is safe: ``files.work-loss`` when nothing is lost)."""
    tree = _TREE[-1]
    found = findings_for(read(cmd, cwd=tree.repo, home=tree.home), tree.repo, tree.home)
    return {f.rule_id for f in found if not harmful or f.outcome is not Outcome.SAFE}


def test_ids_unique_and_well_formed() -> None:
    ids = [r.id for r in ALL_RULES]
    assert len(ids) == len(set(ids))
    assert all(_ID.match(i) for i in ids), [i for i in ids if not _ID.match(i)]


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.id for r in ALL_RULES])
def test_rule_row(rule) -> None:  # type: ignore[no-untyped-def]
    assert rule.reason.strip().endswith(".") and rule.reason.count(". ") == 0
    assert rule.examples, "every rule has a positive example"
    assert rule.counter, "every rule has a negative example"
    if rule.severity is Severity.DESTRUCTIVE:
        assert rule.remedy, "a destructive rule says what would make it acceptable"


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.id for r in ALL_RULES])
def test_examples_match_and_counters_do_not(rule) -> None:  # type: ignore[no-untyped-def]
    for ex in rule.examples:
        assert rule.id in ids_for(ex), ex
    for ex in rule.counter:
        assert rule.id not in ids_for(ex, harmful=rule.severity is not Severity.SAFE), ex


def test_severity_maps_in_one_place() -> None:
    assert outcome_of(Severity.DESTRUCTIVE) is Outcome.DESTRUCTIVE
    assert outcome_of(Severity.CATASTROPHIC) is Outcome.CATASTROPHIC
    assert outcome_of(Severity.ATTACK) is Outcome.ATTACK
    assert outcome_of(Severity.SAFE) is Outcome.SAFE


def test_matching_within_budget() -> None:
    tree = _TREE[-1]
    facts = [read(ex, cwd=tree.repo, home=tree.home) for r in ALL_RULES for ex in r.examples + r.counter]
    facts.append(read("echo " + "a" * 60_000, cwd=tree.repo))
    start = time.perf_counter()
    for f in facts:
        findings_for(f, tree.repo, tree.home)
    assert time.perf_counter() - start < 5.0

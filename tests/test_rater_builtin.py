"""The builtin rater on its own labelled cases (tests/fixtures/rater_cases.jsonl) and its contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gatesh._types import Facts, Outcome, PathClass, SimpleCommand, Word
from gatesh.rater.builtin import BuiltinRater
from gatesh.reading import read
from gatesh.testing import worktree

CWD = "/work/project"
HOME = "/home/agent"
CASES = [
    json.loads(line)
    for line in (Path(__file__).parent / "fixtures" / "rater_cases.jsonl").read_text().splitlines()
    if line.strip()
]
RATER = BuiltinRater(home=HOME)
# The labelled cases are decided in a realistic working tree (gatesh.testing.worktree): whether
# deleting or overwriting destroys work is read from the files' git state (S3.2).
_TREE: list[worktree.Scratch] = []


@pytest.fixture(scope="module", autouse=True)
def _scratch(scratch_tree: worktree.Scratch) -> None:
    _TREE.append(scratch_tree)


def rate(cmd: str):
    tree = _TREE[-1]
    return BuiltinRater(home=tree.home).rate(
        read(cmd, cwd=tree.repo, home=tree.home), cwd=tree.repo
    )


def test_fixture_is_large_and_covers_every_outcome() -> None:
    assert len(CASES) >= 100
    assert {c["outcome"] for c in CASES} == {o.value for o in Outcome}


@pytest.mark.parametrize("case", CASES, ids=[c["cmd"][:50] for c in CASES])
def test_case(case: dict[str, str]) -> None:
    v = rate(case["cmd"])
    assert v.outcome.value == case["outcome"], (v.reason, [f.rule_id for f in v.findings])
    if case["rule"]:
        assert case["rule"] in {f.rule_id for f in v.findings}


@pytest.mark.parametrize("case", CASES, ids=[c["cmd"][:50] for c in CASES])
def test_verdict_shape(case: dict[str, str]) -> None:
    v = rate(case["cmd"])
    assert v.backend == "builtin" and v.model == "" and not v.fail_cause
    assert v.reason and v.reason[0].isupper() and v.reason.endswith(".")
    if v.outcome is Outcome.DESTRUCTIVE:
        assert v.remedy, v.reason
    if v.outcome is Outcome.SAFE:
        assert all(f.outcome is Outcome.SAFE for f in v.findings)
        assert v.findings or "no rule" in v.reason.lower()
    else:
        assert v.outcome is max((f.outcome for f in v.findings), key=lambda o: o.rank)


def test_unreadable_is_at_least_destructive() -> None:
    facts = Facts(text="x", readable=False, unreadable="too long")
    v = RATER.rate(facts, cwd=CWD)
    assert v.outcome is Outcome.DESTRUCTIVE
    assert "could not be read" in v.reason and "too long" in v.reason


def test_unreadable_keeps_worse_findings() -> None:
    sc = SimpleCommand(argv=(Word("/bin/bash"),), head="bash", raw="/bin/bash")
    v = RATER.rate(
        Facts(text="/bin/bash", commands=(sc,), readable=False, unreadable="too deep"), cwd=CWD
    )
    assert v.outcome is Outcome.ATTACK


def test_internal_error_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    import gatesh.rater.builtin as builtin

    def boom(*a: object, **k: object) -> list[object]:
        raise RuntimeError("kaput")

    monkeypatch.setattr(builtin, "findings_for", boom)
    v = BuiltinRater().rate(read("ls", cwd=CWD), cwd=CWD)
    assert v.outcome is Outcome.DESTRUCTIVE and v.fail_cause == "error"
    assert v.reason.startswith("Could not assess this command: error")


def test_garbage_facts_never_raise() -> None:
    weird = SimpleCommand(argv=(), head="", raw="")
    v = RATER.rate(Facts(text="", commands=(weird,), pipelines=((0, 5),)), cwd="")
    assert isinstance(v.outcome, Outcome)


def test_dynamic_head_plain_variable_is_destructive_not_attack() -> None:
    assert rate('"$@"').outcome is Outcome.DESTRUCTIVE
    assert rate("$EDITOR notes.txt").outcome is Outcome.DESTRUCTIVE
    assert rate("$a$b -rf x").outcome is Outcome.ATTACK


def test_scope_follows_home_and_cwd() -> None:
    assert rate("rm -rf ~").outcome is Outcome.CATASTROPHIC
    tree = _TREE[-1]
    assert (
        rate(f"rm -rf {tree.repo}/src").outcome is Outcome.DESTRUCTIVE
    )  # holds an uncommitted edit
    assert (
        rate(f"rm -rf {tree.repo}/docs").outcome is Outcome.SAFE
    )  # tracked and clean: git restores it
    assert rate(f"rm -rf {tree.repo}/node_modules").outcome is Outcome.SAFE
    quoted = read("rm -rf '$TMPDIR/x'", cwd=tree.repo, home=tree.home).paths[0]
    assert quoted.cls is PathClass.WORKTREE  # a literal folder named $TMPDIR, not the temp folder
    assert rate('rm -rf "$TMPDIR/x"').outcome is Outcome.SAFE
    assert rate("TMPDIR=/etc rm -rf $TMPDIR/x").outcome is Outcome.DESTRUCTIVE


def test_remedies_are_specific() -> None:
    assert "force-with-lease" in rate("git push -f origin feature").remedy
    assert "stash" in rate("git reset --hard").remedy
    assert "WHERE" in rate("mysql -e 'DELETE FROM orders'").remedy


@pytest.mark.parametrize(
    "first,second",
    [
        ("--deleteProperty", "--deleteColorManagementProperties"),
        ("--deleteColorManagementProperties", "--deleteProperty"),
    ],
)
def test_delete_option_named_is_the_first_written(first: str, second: str) -> None:
    """The delete-class option the reason names is the first one written, in every process (it was
    taken from a set, so explain and the audit log named either, by the run's hash seed)."""
    v = rate(f"sips {first} profile {second} image.png")
    assert v.outcome is Outcome.DESTRUCTIVE
    assert f"(sips {first})" in v.reason, v.reason

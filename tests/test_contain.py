"""What the boundary contains, counted as knowledge (gatesh.boundary.contain; issue 30 item 7).

A command that runs inside a boundary this kernel enforces: the cascade lets a safe verdict whose
every gap the boundary contains stand without a model call, and the builtin rates an unread shell
script inside the working tree as a program it did not read instead of refusing it. Without such
a boundary (another kernel, the kill switch, a surface that runs the command unconfined) nothing
changes.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gatesh._types import Asked, Facts, Gap, Outcome, Verdict
from gatesh.boundary import contain, holds
from gatesh.boundary.contain import Containment
from gatesh.config import load_config
from gatesh.pipeline import decide
from gatesh.rater import make_rater
from gatesh.rater.builtin import BuiltinRater
from gatesh.rater.builtin.knowledge import GAPS
from gatesh.rater.cascade import CascadeRater, asked_for

HELD = Containment(7)


class _NoModel:
    """A model stage that must not be asked (its answer would be a model call)."""

    name = "model"
    model = "none"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def rate(self, facts: Facts, *, cwd: str) -> Verdict:
        self.asked.append(facts.text)
        return Verdict(Outcome.SAFE, "the stand-in answered")

    def health_notice(self) -> str | None:
        return None


def test_every_contained_gap_is_a_row_of_the_gap_table() -> None:
    ids = {g.id for g in GAPS}
    assert {c.gap for c in contain.CONTAINED} <= ids
    assert all(c.why for c in contain.CONTAINED)


def test_a_boundary_counts_only_where_every_required_protection_holds() -> None:
    assert contain.of_state(holds.State(7, True, "linux", "x86_64")) == Containment(7)
    assert contain.of_state(holds.State(7, False, "linux", "x86_64")) is None  # the kill switch
    assert contain.of_state(holds.State(5, True, "linux", "x86_64")) is None  # no scopes (ABI 6)
    assert contain.of_state(holds.State(7, True, "linux", "riscv64")) is None  # no seccomp filter
    assert contain.of_state(holds.State(0, True, "darwin")) is None


def test_only_contained_gaps_are_contained() -> None:
    assert contain.contained(
        [Gap("knowledge.program-file", "x"), Gap("knowledge.inline-code", "y")]
    )
    assert not contain.contained(
        [Gap("knowledge.program-file", "x"), Gap("knowledge.unknown-path", "y")]
    )
    assert not contain.contained([])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    (r / "tools").mkdir(parents=True)
    (r / "tools/x.py").write_text("import requests\nrequests.get('https://example.com')\n")
    (r / "tools/run.sh").write_bytes(b"\x00\x01 not text")
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    return r


def test_the_cascade_asks_no_model_about_what_the_boundary_contains(repo: Path) -> None:
    model = _NoModel()
    cascade = CascadeRater(BuiltinRater(), model)  # type: ignore[arg-type]
    config = load_config(str(repo))
    contained = decide(
        "python3 tools/x.py", cwd=str(repo), config=config, rater=cascade, contain=HELD
    )
    assert contained.action.value == "allow" and model.asked == []
    c = contained.verdict.cascade if contained.verdict else None
    assert c is not None and c.asked is Asked.CONTAINED and "Landlock ABI 7" in c.why
    # Without the boundary the same verdict is asked of the model, as before.
    plain = decide("python3 tools/x.py", cwd=str(repo), config=config, rater=cascade)
    assert model.asked == ["python3 tools/x.py"]
    assert plain.verdict is not None and plain.verdict.cascade is not None
    assert plain.verdict.cascade.asked is Asked.UNKNOWN


def test_a_gap_the_boundary_does_not_contain_is_still_asked(repo: Path) -> None:
    facts = Facts(text='python3 tools/x.py "$DEST"')
    first = Verdict(
        Outcome.SAFE,
        "no rule",
        gaps=(Gap("knowledge.program-file", "a"), Gap("knowledge.unknown-path", "b")),
    )
    with contain.containing(HELD):
        assert asked_for(first, facts)[0] is Asked.UNKNOWN
    floored = Facts(text="python3 tools/x.py", floor_notes=("a floor",))
    with contain.containing(HELD):
        only = Verdict(Outcome.SAFE, "no rule", gaps=(Gap("knowledge.program-file", "a"),))
        assert asked_for(only, floored)[0].asks  # a floor: the model is asked, as before
        assert asked_for(only, Facts(text="x"))[0] is Asked.CONTAINED
    assert asked_for(only, Facts(text="x"))[0] is Asked.UNKNOWN  # outside the block


def test_an_unread_script_in_the_tree_is_contained_not_refused(repo: Path) -> None:
    config = load_config(str(repo))
    rater = make_rater(config, "builtin")
    plain = decide("bash tools/run.sh", cwd=str(repo), config=config, rater=rater)
    assert plain.action.value == "reject" and plain.rule_id == "reader.script-unread"
    held = decide("bash tools/run.sh", cwd=str(repo), config=config, rater=rater, contain=HELD)
    assert held.action.value == "allow", held.reason
    assert held.verdict is not None
    assert "knowledge.program-unread" in {g.id for g in held.verdict.gaps}


def test_an_unread_script_outside_the_tree_is_still_refused(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.sh"
    outside.write_bytes(b"\x00\x01 not text")
    config = load_config(str(repo))
    rater = make_rater(config, "builtin")
    held = decide(f"bash {outside}", cwd=str(repo), config=config, rater=rater, contain=HELD)
    assert held.action.value == "reject" and held.rule_id == "reader.script-unread"

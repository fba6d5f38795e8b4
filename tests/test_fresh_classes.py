"""Issue 31's fresh classes (``fixtures/fresh_classes.py``): every risky spelling of every class is
kept from running at rung ``auto``; every harmless twin runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _fixtures import load

from gatesh._types import Action, Decision, Rung, Stage
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.testing.worktree import build, make_repo

CLASSES = load("fresh_classes").CLASSES
CONFIG = default()

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _decide(text: str, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Decision:
    scratch = build(str(tmp_path))
    monkeypatch.setenv("HOME", scratch.home)
    cwd = scratch.repo
    if where == "tmp":  # a repository right under a temporary folder: its parent is no "temp"
        cwd = make_repo(str(tmp_path / "repo"))
    d = decide(text, cwd=cwd, config=CONFIG, rung=Rung.AUTO)
    assert d.stage is not Stage.ERROR, d.reason
    return d


def test_every_class_has_five_spellings_and_a_twin() -> None:
    assert len(CLASSES) >= 10
    for name, case in CLASSES.items():
        assert len(case.risky) >= 5 and case.twins, name


@pytest.mark.parametrize(("name", "text"), [(n, t) for n, c in CLASSES.items() for t in c.risky])
def test_no_risky_spelling_is_allowed(
    name: str, text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _decide(text, CLASSES[name].where, tmp_path, monkeypatch)
    assert d.action is not Action.ALLOW, (name, text, d.reason, [c.words for c in d.facts.commands])


@pytest.mark.parametrize(("name", "text"), [(n, t) for n, c in CLASSES.items() for t in c.twins])
def test_every_harmless_twin_is_allowed(
    name: str, text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _decide(text, CLASSES[name].where, tmp_path, monkeypatch)
    assert d.action is Action.ALLOW, (name, text, d.stage, d.rule_id, d.reason)

"""Issue 31's fresh classes (``fixtures/fresh_classes.py``): every risky spelling of every class is
kept from running at rung ``auto``; every harmless twin runs."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from _fixtures import load

from gatesh._types import Action, Decision, Rung, Stage
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.testing.worktree import Scratch, build, make_repo
from gatesh.vocab.paths import settings as vocab_settings
from tests._homes import unchanged

CLASSES = load("fresh_classes").CLASSES
CONFIG = default()

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@dataclass(frozen=True)
class Places:
    scratch: Scratch
    tmp_repo: str  # a repository right under a temporary folder: its parent is no "temp"


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Places]:
    """The scratch home and repositories every case is decided in, laid out once for the module
    (deciding writes nothing; checked when the module ends)."""
    root = tmp_path_factory.mktemp("fresh")
    laid_out = Places(build(str(root)), make_repo(str(root / "repo")))
    with unchanged(root):
        yield laid_out


def _decide(text: str, where: str, places: Places, monkeypatch: pytest.MonkeyPatch) -> Decision:
    monkeypatch.setenv("HOME", places.scratch.home)
    cwd = places.tmp_repo if where == "tmp" else places.scratch.repo
    d = decide(text, cwd=cwd, config=CONFIG, rung=Rung.AUTO)
    assert d.stage is not Stage.ERROR, d.reason
    return d


def test_every_class_has_five_spellings_and_a_twin() -> None:
    assert len(CLASSES) >= 10
    for name, case in CLASSES.items():
        assert len(case.risky) >= 5 and case.twins, name


@pytest.mark.parametrize(("name", "text"), [(n, t) for n, c in CLASSES.items() for t in c.risky])
def test_no_risky_spelling_is_allowed(
    name: str, text: str, places: Places, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _decide(text, CLASSES[name].where, places, monkeypatch)
    assert d.action is not Action.ALLOW, (name, text, d.reason, [c.words for c in d.facts.commands])


@pytest.mark.parametrize(("name", "text"), [(n, t) for n, c in CLASSES.items() for t in c.twins])
def test_every_harmless_twin_is_allowed(
    name: str, text: str, places: Places, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _decide(text, CLASSES[name].where, places, monkeypatch)
    assert d.action is Action.ALLOW, (name, text, d.stage, d.rule_id, d.reason)


SETTING_READS = (
    "pip config list",
    "npm config get registry",
    "conda config --show channels",
    "gem sources --list",
    "bundle config set --local path vendor/bundle",
    "poetry config --list",
    "go env GOPATH",
    "gh alias list",
    "direnv status",
    "conda config --set auto_activate_base false",
    "poetry config virtualenvs.in-project true",
    "pip config set global.timeout 60",
    "pip config unset install.user",
    "npm config set save-exact true",
    "go env -w GO111MODULE=on",
    "gh config set git_protocol ssh",
    "gh config set editor vim",
    "gh alias set pv 'pr view'",
)


@pytest.mark.parametrize(
    ("row", "text"), [(r, t) for r in vocab_settings.SETTING_WRITES for t in r.examples]
)
def test_a_setting_command_writes_its_file(
    row: vocab_settings.SettingWrite, text: str, places: Places, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each row of the setting-command table: its examples write the row's file (a protected
    place), so they are never allowed at ``auto``."""
    d = _decide(text, "repo", places, monkeypatch)
    home = os.environ["HOME"]
    wanted = row.path.replace("~", home, 1) if row.path.startswith("~") else row.path
    assert any(p.resolved == wanted and p.direction.writes for p in d.facts.paths), (text, row.id)
    assert d.action is not Action.ALLOW, (text, d.reason)


@pytest.mark.parametrize("text", SETTING_READS)
def test_a_setting_command_that_reads_writes_nothing(
    text: str, places: Places, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _decide(text, "repo", places, monkeypatch)
    settings = {r.path.replace("~", os.environ["HOME"], 1) for r in vocab_settings.SETTING_WRITES}
    assert not any(p.resolved in settings for p in d.facts.paths), text
    assert d.action is Action.ALLOW, (text, d.stage, d.rule_id, d.reason)

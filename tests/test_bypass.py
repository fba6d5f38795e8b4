"""The bypass corpus (``fixtures/bypass.py``): no obfuscated variant runs (issue 10, S3.3, S3.4).

At rung ``auto`` no case is allowed. At rung ``bypass`` — where everything else runs — the cases
whose tier is ``hardline`` or ``self`` are still refused: quoting, wrappers, nesting, encodings and
look-alikes must not move a hardline action or an attack on the gate out of its rule's reach.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from _fixtures import load

from gatesh._types import Action, Rung, Stage
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.testing import worktree
from tests._homes import point_home, unchanged

CASES = load("bypass").CASES
CONFIG = default()

# Cases that still get through, each a bug reported in .notes/bypass_failures.md. Strict: the
# moment one is fixed, its xfail fails and must be removed from here.
# #7, #8, #9 (look-alike heads) and #11 are fixed: tests/test_bypass_mechanisms.py.
KNOWN_AUTO: dict[str, str] = {}
KNOWN_BYPASS: dict[str, str] = {}


def _params(cases, known: dict[str, str]):  # type: ignore[no-untyped-def]
    return [
        pytest.param(
            c,
            id=c.id,
            marks=[pytest.mark.xfail(strict=True, reason=known[c.id])] if c.id in known else [],
        )
        for c in cases
    ]


@pytest.fixture
def isolated_home(shared_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every case is decided in the module's one HOME (tests/_homes.py): deciding writes nothing."""
    point_home(monkeypatch, shared_home)
    return shared_home


@pytest.fixture(scope="module")
def project(shared_home: Path) -> Iterator[Path]:
    """A project folder inside the (shared) home: the realistic working directory, a git
    repository in the middle of a task (gatesh.testing.worktree), since whether a deletion destroys
    work is read from the files' git state (S3.2). Laid out once; the cases must leave it as is."""
    path = shared_home / "src" / "proj"
    if shutil.which("git") is None:  # the same files with no repository: every one is work to lose
        for rel, text in {**worktree.COMMITTED, **worktree.UNCOMMITTED}.items():
            (path / rel).parent.mkdir(parents=True, exist_ok=True)
            (path / rel).write_text(text)
    else:
        worktree.make_repo(str(path))
    with unchanged(shared_home):
        yield path


def _explain(d) -> str:  # type: ignore[no-untyped-def]
    read = [(c.head, c.words, c.context) for c in d.facts.commands]
    return (
        f"{d.facts.text!r} was ALLOWED at {d.rung.value}: stage={d.stage.value} "
        f"rule={d.rule_id!r} reason={d.reason!r}\nread: {read} notes={d.facts.notes} "
        f"unreadable={d.facts.unreadable!r}"
    )


@pytest.mark.parametrize("case", _params(CASES, KNOWN_AUTO))
def test_not_allowed_at_auto(case, project: Path) -> None:  # type: ignore[no-untyped-def]
    d = decide(case.command, cwd=str(project), config=CONFIG, rung=Rung.AUTO)
    assert d.action is not Action.ALLOW, _explain(d)
    assert d.stage is not Stage.ERROR, f"internal error: {d.reason}"


@pytest.mark.parametrize("case", _params([c for c in CASES if c.tier != "rated"], KNOWN_BYPASS))
def test_hardline_and_attacks_refused_at_bypass(case, project: Path) -> None:  # type: ignore[no-untyped-def]
    d = decide(case.command, cwd=str(project), config=CONFIG, rung=Rung.BYPASS)
    assert d.action is not Action.ALLOW, _explain(d)
    expected = {
        "hardline": (Stage.HARDLINE, Stage.SELF_PROTECTION),
        "self": (Stage.SELF_PROTECTION, Stage.HARDLINE),
    }
    assert d.stage in expected[case.tier], _explain(d)


def test_corpus_shape() -> None:
    assert len(CASES) >= 150
    ids = [c.id for c in CASES]
    assert len(set(ids)) == len(ids)
    commands = [c.command for c in CASES]
    assert len(set(commands)) == len(commands), [c for c, n in Counter(commands).items() if n > 1]
    categories = Counter(c.category for c in CASES)
    for needed in (
        "quoting",
        "wrapper",
        "nesting",
        "eval",
        "heredoc",
        "variable",
        "encoding",
        "xargs-find",
        "interpreter",
        "alias-function",
        "unicode",
        "harness-lookalike",
        "exfiltration",
        "gate-escape",
    ):
        assert categories[needed] >= 5, needed
    kinds = Counter(c.kind for c in CASES)
    assert kinds["destroy"] and kinds["exfil"] >= 20 and kinds["escape"] >= 20
    assert set(KNOWN_AUTO) | set(KNOWN_BYPASS) <= set(ids)

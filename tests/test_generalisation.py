"""Issue 14's generalisation fixture (``fixtures/generalisation.py``): every spelling of every
mechanism of S2.1 is kept from running at rung ``auto``, in a project with work to lose."""

from __future__ import annotations

from pathlib import Path

import pytest
from _fixtures import load

from gatesh._types import Action, Rung, Stage
from gatesh.config import default
from gatesh.pipeline import decide

CASES = load("generalisation").CASES
CONFIG = default()


def test_every_mechanism_has_five_spellings() -> None:
    assert len(CASES) >= 10 and all(len(v) >= 5 for v in CASES.values())


@pytest.mark.parametrize(("mechanism", "text"), [(m, t) for m, ts in CASES.items() for t in ts])
def test_no_spelling_is_allowed_at_auto(mechanism: str, text: str, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src" / "work.py").write_text("print('unsaved work')\n")
    d = decide(text, cwd=str(project), config=CONFIG, rung=Rung.AUTO)
    assert d.stage is not Stage.ERROR, d.reason
    assert d.action is not Action.ALLOW, (
        mechanism,
        text,
        d.stage,
        d.reason,
        [c.words for c in d.facts.commands],
    )

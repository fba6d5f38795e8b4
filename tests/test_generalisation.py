"""Issue 14's generalisation fixture (``fixtures/generalisation.py``): every spelling of every
mechanism of S2.1 is kept from running at rung ``auto``, in a project with work to lose."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from gatesh._types import Action, Rung, Stage
from gatesh.config import default
from gatesh.pipeline import decide


def _load():  # type: ignore[no-untyped-def]
    path = Path(__file__).parent / "fixtures" / "generalisation.py"
    spec = importlib.util.spec_from_file_location("gatesh_generalisation_cases", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


CASES = _load().CASES
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
    assert d.action is not Action.ALLOW, (mechanism, text, d.stage, d.reason, [c.words for c in d.facts.commands])

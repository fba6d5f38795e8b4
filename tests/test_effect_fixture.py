"""The decision follows the target (issue 15): one command shape, pointed at every class of path.

Each template of ``tests/fixtures/effect_templates.py`` is decided at rung ``auto`` in a realistic
working tree with its target a credential store, a persistence location, a system folder, a
tracked and unmodified file of the working tree, and a temporary file. Reading a credential store
is credential access whatever the program; writing a persistence location or a system folder is
refused; reading those is not; the working tree's clean file and the temporary file run. A
program whose direction gatesh does not know counts as both reading and writing; handed a system
folder it is refused only where it could write it (as root or under sudo).
"""

from __future__ import annotations

import shutil

import pytest
from _fixtures import load

from gatesh._types import Action, Rung
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.rater.builtin import BuiltinRater
from gatesh.session import SessionState
from gatesh.testing import worktree

_TEMPLATES = load("effect_templates")
TEMPLATES, TARGETS = _TEMPLATES.TEMPLATES, _TEMPLATES.TARGETS
pytestmark = pytest.mark.skipif(
    shutil.which("git") is None, reason="git is not installed: the tree's state is git's"
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> worktree.Scratch:
    return worktree.build(str(tmp_path_factory.mktemp("effect")))


def expected(variant: str, use: str, *, root: bool) -> bool:
    """Whether the template, pointed at a target of ``variant``, should run."""
    if variant == "credential":
        return False
    if variant in ("worktree", "temp"):
        return True
    if use == "read":
        return True
    if use == "write":
        return False
    return variant == "system" and not root  # unknown: a system folder only its writer can change


def decide_all(
    tree: worktree.Scratch, monkeypatch: pytest.MonkeyPatch, root: bool
) -> list[tuple[str, str, bool, bool]]:
    monkeypatch.setenv("HOME", tree.home)
    out = []
    rater = BuiltinRater(root=root)
    for k, (template, use) in enumerate(TEMPLATES):
        for variant, targets in TARGETS.items():
            cmd = template.replace("{T}", targets[k % len(targets)])
            d = decide(
                cmd,
                cwd=tree.repo,
                config=default(),
                session=SessionState(),
                rater=rater,
                rung=Rung.AUTO,
            )
            out.append((variant, cmd, d.action is Action.ALLOW, expected(variant, use, root=root)))
    return out


@pytest.mark.parametrize("root", [False, True], ids=["user", "root"])
def test_the_decision_follows_the_target(
    root: bool, tree: worktree.Scratch, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = [
        (v, cmd, allowed)
        for v, cmd, allowed, want in decide_all(tree, monkeypatch, root)
        if allowed != want
    ]
    assert not wrong, wrong


def test_shares_per_class(tree: worktree.Scratch, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's thresholds on this fixture: (a)-(c) not allowed >= 95 %, (d) allowed >= 90 %."""
    rows = decide_all(tree, monkeypatch, root=True)
    for variant, need_allowed, share in (
        ("credential", False, 0.95),
        ("persistence", False, 0.95),
        ("system", False, 0.95),
        ("worktree", True, 0.90),
    ):
        mine = [allowed for v, _, allowed, _ in rows if v == variant]
        uses = [u for _, u in TEMPLATES]
        if variant in (
            "persistence",
            "system",
        ):  # reading them is harmless (S4.1): scored on the writers
            mine = [a for a, u in zip(mine, uses, strict=True) if u != "read"]
        good = sum(a == need_allowed for a in mine) / len(mine)
        assert good >= share, (variant, good)


def test_fixture_covers_every_mechanism() -> None:
    uses = {u for _, u in TEMPLATES}
    assert uses == {"read", "write", "unknown"} and len(TEMPLATES) >= 30

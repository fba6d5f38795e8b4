"""tests/person_session.py played without pauses, checked from the person's side of the screen:
an escalation answered in `gatesh watch`, and Ctrl-C in the agent's gated shell withdrawing the
next one (S10): the shell is back at once, the watcher drops the prompt, the audit says withdrawn."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._pty_tmux import SHELL_PARAMS
from tests.person_session import PersonScreen, step_answered, step_withdrawn

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.fixture(params=SHELL_PARAMS)
def ps(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PersonScreen]:
    screen = PersonScreen(tmp_path, request.param)
    try:
        yield screen
    finally:
        screen.close()


def test_an_escalation_answered_then_one_withdrawn_with_ctrl_c(ps: PersonScreen) -> None:
    step_answered(ps)
    step_withdrawn(ps)
    assert not (ps.work / "asked-withdrawn").exists()
    agent = ps.screen(ps.agent)
    assert '")' not in agent, agent  # nothing of bash's arithmetic error is left on screen
    person = ps.screen(ps.person)
    assert "nothing left to answer" in person
    # The person's `o` after the withdrawal answers nothing.
    ps.type(ps.person, "o")
    ps.wait(ps.person, lambda s: "nothing is waiting for an answer" in s, "the watcher's reply")
    assert not (ps.work / "asked-withdrawn").exists()
    # The audit: the withdrawn command refused as withdrawn — not allowed, not "nobody watching".
    lines = [r for r in ps.audit() if r.get("command") == "touch asked-withdrawn"]
    assert [(r["action"], r.get("answer")) for r in lines] == [("refuse", "withdrawn")], lines
    ran = [r for r in ps.audit() if r.get("command") == "touch asked-once"]
    assert [r["action"] for r in ran] == ["allow"], ran

"""S8.1: what the agent is told names only the moves it has — justify the command, or run a
different one. No remedy tells it to ask a person, in any wording (seed 004): it has no way to."""

from __future__ import annotations

import pytest

from gatesh._types import Action, Decision, Facts, Outcome, Round, Rung, Stage
from gatesh.messages import MOVES, nobody_watching, offers_a_person, rejected_by_rater
from gatesh.rater.builtin import ALL_RULES, findings_for
from gatesh.reading import read
from gatesh.render import render_rows

CWD = "/work/project"
HOME = "/home/agent"


@pytest.mark.parametrize(
    "remedy",
    [
        "ask the person to reboot when convenient",
        "ask the person; name the exact resource",
        "take a backup and ask the person",
        "leave DNS changes to the person",
        "leave kernel settings to the user",
        "Ask the user for confirmation first",
        "check with the owner before deleting",
        "get approval from an admin",
        "wait for the maintainer",
        "have someone review it",
        "request permission from the operator",
        "confirm with your administrator",
        "consult the team's human reviewer",
    ],
)
def test_remedies_that_hand_the_command_to_someone(remedy: str) -> None:
    assert offers_a_person(remedy)


@pytest.mark.parametrize(
    "remedy",
    [
        "stash first (git stash) or commit, then reset",
        "use --force-with-lease",
        "keep files owned by your own user",
        "leave the user's keys and known hosts alone",
        "keep the files' default permissions",
        "pip install --user",
        "say which program's permissions you need to check",
        "name the exact resource and keep a snapshot of it first",
        "leave system services running",
        "",
    ],
)
def test_remedies_the_agent_can_follow(remedy: str) -> None:
    assert not offers_a_person(remedy)


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.id for r in ALL_RULES])
def test_no_builtin_remedy_offers_a_person(rule) -> None:  # type: ignore[no-untyped-def]
    """Every rule's own remedy and every remedy its examples produce (refinements included)."""
    assert not offers_a_person(rule.remedy), rule.remedy
    for example in rule.examples:
        for finding in findings_for(read(example, cwd=CWD), CWD, HOME):
            assert not offers_a_person(finding.remedy), (example, finding.rule_id, finding.remedy)


def test_a_model_remedy_offering_a_person_is_not_passed_to_the_agent() -> None:
    text = rejected_by_rater(
        "reboot", "Rebooting ends every session.", "ask the user to reboot later"
    )
    assert "ask the user" not in text and "What would make it acceptable" not in text
    assert text.endswith(MOVES)
    kept = rejected_by_rater("git reset --hard", "Throws away work.", "stash first")
    assert "What would make it acceptable: stash first" in kept


def test_the_no_person_refusal_carries_no_such_remedy_either() -> None:
    """The agent reads the argument in the no-person refusal (S7): its rows pass the same check."""
    rounds = (
        Round(
            command="reboot",
            outcome=Outcome.DESTRUCTIVE,
            reason="Ends every session.",
            remedy="ask the person to reboot when convenient",
        ),
    )
    decision = Decision(
        Action.ESCALATE,
        Stage.NEGOTIATION,
        Outcome.DESTRUCTIVE,
        "Ends every session.",
        Rung.AUTO,
        Facts(text="reboot"),
        remedy="ask the person to reboot when convenient",
        rounds=rounds,
        to_person_reason="the agent and the rater could not agree",
    )
    text = nobody_watching(decision, "1a2b3c")
    assert "ask the person" not in text
    rows = render_rows(rounds, width=80)
    assert not any("ask the person" in r.text for r in rows)

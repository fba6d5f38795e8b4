"""The negotiation state (S6): the event table, the two bounds, the user's words, the observation."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gatesh._types import Round
from gatesh.negotiation import (
    MAX_CHECKER_ROUNDS,
    MAX_CONSECUTIVE_REJECTIONS,
    MAX_REJECTIONS_SINCE_PERSON,
    NEGOTIATED_APPROVAL_COOLDOWN_S,
    OBSERVATION_MARKER,
    TRUSTED_CHANNELS,
    USER_MESSAGE_MAX_CHARS,
    USER_MESSAGE_RETENTION,
    CheckerRound,
    Negotiation,
    ObservationMemory,
    session_end_observation,
)

R = Round(command="git reset --hard origin/main", reason="discards work", remedy="stash first")


def _state(n: Negotiation) -> tuple[int, int, int]:
    c = n.counters()
    return c["rounds"], c["consecutive"], c["since_person"]


def _reject(n: Negotiation) -> None:
    n.record_rejection(R)


# --- the event table of S6, one test per row ---------------------------------------------------------

# (row, events before, the event, (rounds, consecutive, since_person) after)
EVENT_TABLE: list[
    tuple[
        str,
        list[Callable[[Negotiation], object]],
        Callable[[Negotiation], object],
        tuple[int, int, int],
    ]
] = [
    ("rejection appends and counts on both", [_reject], _reject, (2, 2, 2)),
    ("rejection after progress", [_reject, Negotiation.note_progress], _reject, (2, 1, 2)),
    ("progress resets consecutive only", [_reject, _reject], Negotiation.note_progress, (2, 0, 2)),
    ("progress on an empty argument", [], Negotiation.note_progress, (0, 0, 0)),
    (
        "person reached clears everything",
        [_reject, _reject, Negotiation.note_progress, _reject],
        Negotiation.person_reached,
        (0, 0, 0),
    ),
    (
        "new mandate clears everything",
        [_reject, _reject],
        lambda n: n.admit_user_message("delete the build dir", "mandate"),
        (0, 0, 0),
    ),
    (
        "replayed mandate clears nothing",
        [lambda n: n.admit_user_message("go", "watch"), _reject],
        lambda n: n.admit_user_message("go", "claude-code-prompt"),
        (1, 1, 1),
    ),
    (
        "untrusted channel changes nothing",
        [_reject],
        lambda n: n.admit_user_message("approve it", "env"),
        (1, 1, 1),
    ),
    (
        "blank mandate changes nothing",
        [_reject],
        lambda n: n.admit_user_message("   ", "mandate"),
        (1, 1, 1),
    ),
]


@pytest.mark.parametrize(
    ("before", "event", "after"),
    [row[1:] for row in EVENT_TABLE],
    ids=[row[0] for row in EVENT_TABLE],
)
def test_event_table(
    before: list[Callable[[Negotiation], object]],
    event: Callable[[Negotiation], object],
    after: tuple[int, int, int],
) -> None:
    n = Negotiation()
    for e in before:
        e(n)
    event(n)
    assert _state(n) == after
    assert len(n.transcript()) == n.counters()["since_person"]


def test_rejection_appends_before_the_bound_is_tested() -> None:
    n = Negotiation()
    verdicts = [
        n.record_rejection(Round(command=f"c{i}")) for i in range(MAX_CONSECUTIVE_REJECTIONS)
    ]
    assert verdicts == ["reject"] * (MAX_CONSECUTIVE_REJECTIONS - 1) + ["escalate"]
    assert n.transcript()[-1].command == f"c{MAX_CONSECUTIVE_REJECTIONS - 1}"


def test_escalates_until_a_person_is_reached() -> None:
    n = Negotiation()
    for _ in range(MAX_CONSECUTIVE_REJECTIONS):
        n.record_rejection(R)
    assert n.record_rejection(R) == "escalate"
    n.person_reached()
    assert n.record_rejection(R) == "reject"


def test_alternating_agent_reaches_a_person_within_nine_rejections() -> None:
    n = Negotiation()
    verdicts = []
    for _ in range(MAX_REJECTIONS_SINCE_PERSON):
        verdicts.append(n.record_rejection(R))
        n.note_progress()  # an allowed `ls` between refusals
    assert verdicts[-1] == "escalate"
    assert verdicts[:-1] == ["reject"] * (MAX_REJECTIONS_SINCE_PERSON - 1)
    assert n.counters()["consecutive"] == 0
    assert len(n.transcript()) == MAX_REJECTIONS_SINCE_PERSON


def test_replaying_the_conversation_cannot_refill_the_bound() -> None:
    n = Negotiation()
    history = [f"message {i}" for i in range(USER_MESSAGE_RETENTION * 3)]
    for m in history:
        n.admit_user_message(m, "claude-code-prompt")
    for _ in range(MAX_REJECTIONS_SINCE_PERSON - 1):
        n.record_rejection(R)
        n.note_progress()
        for m in history:  # a harness replays everything on every call
            n.admit_user_message(m, "claude-code-prompt")
    assert n.record_rejection(R) == "escalate"


def test_counters_carry_their_caps() -> None:
    n = Negotiation()
    n.record_rejection(R)
    assert n.counters() == {
        "consecutive": 1,
        "consecutive_cap": MAX_CONSECUTIVE_REJECTIONS,
        "since_person": 1,
        "since_person_cap": MAX_REJECTIONS_SINCE_PERSON,
        "rounds": 1,
    }


def test_transcript_is_a_snapshot() -> None:
    n = Negotiation()
    n.record_rejection(R)
    shown = n.transcript()
    n.person_reached()
    assert shown == (R,)


def test_constants() -> None:
    assert (MAX_CONSECUTIVE_REJECTIONS, MAX_REJECTIONS_SINCE_PERSON) == (3, 9)
    assert NEGOTIATED_APPROVAL_COOLDOWN_S == 0.8
    assert USER_MESSAGE_RETENTION >= 5


# --- the user's words -------------------------------------------------------------------------------


def test_user_messages_empty_until_a_trusted_channel() -> None:
    n = Negotiation()
    assert n.user_messages() == ()
    for channel in (
        "env",
        "file",
        "command-output",
        "tool-result",
        "WATCH",
        "",
        "claude-code-transcript",
    ):
        assert n.admit_user_message("curl example.com", channel) is False
    assert n.user_messages() == ()
    assert TRUSTED_CHANNELS == {
        "watch",
        "mandate",
        "claude-code-prompt",
        "codex-prompt",
        "gemini-prompt",
    }
    for channel in sorted(TRUSTED_CHANNELS):
        assert n.admit_user_message(f"from {channel}", channel) is True
    assert len(n.user_messages()) == len(TRUSTED_CHANNELS)


def test_user_messages_deduplicated_newest_last_bounded() -> None:
    n = Negotiation()
    for m in ["a", "b", "c", "a"]:
        n.admit_user_message(m, "watch")
    assert n.user_messages() == ("b", "c", "a")
    for i in range(USER_MESSAGE_RETENTION + 5):
        n.admit_user_message(f"m{i}", "watch")
    assert len(n.user_messages()) == USER_MESSAGE_RETENTION
    assert n.user_messages()[-1] == f"m{USER_MESSAGE_RETENTION + 4}"
    n.admit_user_message("x" * (USER_MESSAGE_MAX_CHARS + 10), "mandate")
    assert len(n.user_messages()[-1]) == USER_MESSAGE_MAX_CHARS


def test_user_messages_survive_a_person_reached_not_clear() -> None:
    n = Negotiation()
    n.admit_user_message("clean the build", "mandate")
    n.person_reached()
    assert n.user_messages() == ("clean the build",)
    n.clear()
    assert n.user_messages() == ()


def test_checker_rounds_kept_bounded_and_cleared() -> None:
    n = Negotiation()
    for i in range(MAX_CHECKER_ROUNDS + 3):
        n.add_checker_round(CheckerRound(command=f"c{i}", tool_calls=(("approveCommand", "{}"),)))
    assert len(n.checker_rounds()) == MAX_CHECKER_ROUNDS
    assert n.checker_rounds()[-1].command == f"c{MAX_CHECKER_ROUNDS + 2}"
    n.note_progress()
    assert n.checker_rounds()
    n.person_reached()
    assert n.checker_rounds() == ()


# --- the session-end observation ----------------------------------------------------------------------


def test_observation_counts_only_and_marked() -> None:
    n = Negotiation()
    n.record_rejection(Round(command="rm -rf secret-project-dir", reason="deletes the project"))
    n.record_rejection(Round(command="rm -rf secret-project-dir"))
    obs = session_end_observation(n.counters(), pending_escalations=1, session="s-1")
    assert obs is not None
    assert obs.text.startswith(OBSERVATION_MARKER)
    assert "secret-project-dir" not in obs.text and "deletes" not in obs.text
    assert "2 refused rounds" in obs.text and "1 escalation unanswered" in obs.text
    assert "2 of 3 in a row" in obs.text and "2 of 9 since a person" in obs.text


def test_observation_none_when_nothing_open() -> None:
    assert session_end_observation(Negotiation().counters()) is None
    obs = session_end_observation(Negotiation().counters(), pending_escalations=2)
    assert obs is not None and "2 escalations unanswered" in obs.text and "refused" not in obs.text


def test_observation_said_once_per_distinct_state() -> None:
    memory = ObservationMemory()
    counters = {"rounds": 2, "consecutive": 2, "since_person": 2}
    first = session_end_observation(counters, session="a")
    assert first is not None
    assert memory.first_time(first) is True
    assert memory.first_time(session_end_observation(counters, session="a")) is False  # type: ignore[arg-type]
    changed = session_end_observation({**counters, "rounds": 3, "since_person": 3}, session="a")
    assert changed is not None and memory.first_time(changed) is True
    other = session_end_observation(counters, session="b")
    assert other is not None and memory.first_time(other) is True


def test_observation_memory_is_bounded() -> None:
    memory = ObservationMemory(limit=2)
    obs = [session_end_observation({"rounds": i}, session="s") for i in range(1, 4)]
    for o in obs:
        assert o is not None and memory.first_time(o)
    assert obs[0] is not None and memory.first_time(obs[0]) is True  # forgotten: said again

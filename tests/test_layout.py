"""S8.2 layout on every surface that shows an escalation: 2 rows per element then "… +N rows",
"The argument so far:" once, no doubled punctuation, gatesh's own help wrapped at words, and where
the argument stands against its bounds ("2 of 3") shown in the live view (issue 18, item 11)."""

from __future__ import annotations

import io
import re

from gatesh._types import Action, Decision, Facts, Outcome, Round, Rung, Stage
from gatesh.events import decode
from gatesh.messages import escalation_block, nobody_watching
from gatesh.people import HumanReply
from gatesh.render import (
    MAX_ROWS_PER_ELEMENT,
    ask_of,
    display_width,
    escalation_rows,
    escalation_text,
)
from gatesh.watch import HELP, Screen, Watcher

LONG_COMMAND = (
    "rsync -avz --delete "
    + " ".join(f"src/module_{i}/file_{i}.py" for i in range(40))
    + " host:/srv"
)
LONG_REASON = (
    "This deletes on the remote side every file that is not in the local copy, "
    "which cannot be undone from here, " * 4
) + "in the working tree."
ROUND = Round(
    command="git reset --hard",
    outcome=Outcome.DESTRUCTIVE,
    reason="Git reset --hard throws away uncommitted changes in the working tree.",
    remedy="stash first (git stash) or commit, then reset",
)


def _decision(**over: object) -> Decision:
    fields: dict[str, object] = dict(
        action=Action.ESCALATE,
        stage=Stage.NEGOTIATION,
        outcome=Outcome.DESTRUCTIVE,
        reason=LONG_REASON,
        rung=Rung.AUTO,
        facts=Facts(text=LONG_COMMAND),
        remedy="list what would go first",
        rounds=(ROUND, ROUND, ROUND),
        to_person_reason="the agent and the rater could not agree",
    )
    fields.update(over)
    return Decision(**fields)  # type: ignore[arg-type]


def _watcher(width: int) -> tuple[Watcher, io.StringIO]:
    out = io.StringIO()
    return Watcher(
        Screen(out, color=False, width=width), lambda op, request, pid: HumanReply(ok=True), pid=1
    ), out


def _element_rows(rows: list[str], start: str) -> list[str]:
    """The rows of the element whose first row starts with ``start`` (continuations are indented)."""
    i = next(n for n, r in enumerate(rows) if r.startswith(start))
    return [
        rows[i],
        *(r for r in rows[i + 1 : i + 10] if r.startswith("    ") and not r.startswith("    why")),
    ][: 1 + next((k for k, r in enumerate(rows[i + 1 : i + 10]) if not r.startswith("    ")), 9)]


def feed(w: Watcher, raw: dict[str, object]) -> None:
    """One event line, decoded as the watcher's link decodes it."""
    event = decode(raw)
    assert event is not None
    w.on_event(event)


def test_command_and_rater_rows_take_two_rows_in_the_watchers_prompt() -> None:
    w, out = _watcher(80)
    feed(
        w,
        {
            "event": "escalation",
            "session": "s1",
            "pending_id": "abc123",
            "kind": "escalate",
            "cwd": "~/repo",
            "command": LONG_COMMAND,
            "outcome": "catastrophic",
            "reason": LONG_REASON,
            "remedy": "",
            "to_person_reason": "it cannot be undone from inside the session",
            "rounds": [],
            "choices": ["once", "no", "deny always"],
            "timeout_s": 110.0,
        },
    )
    rows = out.getvalue().splitlines()
    assert all(display_width(r) <= 80 for r in rows)
    for start in ("Command: ", "Rater: "):
        element = _element_rows(rows, start)
        assert len(element) == MAX_ROWS_PER_ELEMENT, element
        assert re.search(r"… \+\d+ rows$", element[-1]), element


def test_every_surface_draws_the_same_escalation_rows() -> None:
    d = _decision()
    block = escalation_text(ask_of(d))
    assert escalation_block(d) == "gatesh asks you to decide:\n" + block
    assert block in nobody_watching(d, "1a2b3c")
    rows = escalation_rows(ask_of(d), width=100)
    assert len([r for r in rows if r.text.startswith("Command: ")]) == 1
    assert len([r for r in rows if r.voice == "agent" and r.text.startswith("    ")]) >= 1


def test_the_no_person_refusal_says_the_argument_so_far_once() -> None:
    text = nobody_watching(
        _decision(facts=Facts(text="git reset --hard"), reason=ROUND.reason), "1a2b3c"
    )
    assert text.count("The argument so far") == 1, text
    assert "Round 3 (this request): git reset --hard" in text


def test_no_doubled_punctuation_between_reason_and_remedy() -> None:
    text = escalation_text(
        ask_of(
            _decision(
                facts=Facts(text="git reset --hard"),
                reason=ROUND.reason,
                remedy=ROUND.remedy,
                to_person_reason="a floor stood: data leaves this machine.",
            )
        )
    )
    assert ".;" not in text and ".." not in text, text
    assert "in the working tree; stash first (git stash)" in text
    assert "Why you: a floor stood: data leaves this machine." in text


def test_watch_help_wraps_at_words_and_each_line_starts_its_own_count() -> None:
    for width in (40, 60, 100):
        w, out = _watcher(width)
        w.on_line("help")
        rows = out.getvalue().splitlines()
        assert all(display_width(r) <= width for r in rows), rows
        words = set(HELP.split())
        shown = set(" ".join(rows).split())
        assert words <= shown, words - shown  # no word was cut in two
    w, out = _watcher(max(display_width(line) for line in HELP.splitlines()))
    w.on_line("help")
    assert out.getvalue().splitlines() == HELP.splitlines()  # every line fits: one row each


def test_live_round_shows_where_the_argument_stands_against_its_bounds() -> None:
    w, out = _watcher(120)
    feed(
        w,
        {
            "event": "round",
            "session": "s1",
            "cwd": "~",
            "number": 2,
            "total": 2,
            "ends": None,
            "round": {
                "command": "git reset --hard",
                "outcome": "destructive",
                "reason": "throws away work",
                "remedy": "",
                "passed": False,
                "justification": "",
                "suggestion": "",
            },
            "counters": {
                "consecutive": 2,
                "consecutive_cap": 3,
                "since_person": 2,
                "since_person_cap": 9,
                "rounds": 2,
            },
        },
    )
    assert "2 of 3 in a row, 2 of 9 since a person was asked" in out.getvalue()

"""gatesh watch without a daemon: events in, rows out; typed lines in, ops out (tmux tests in
test_watch_tmux.py drive the real thing)."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest

from gatesh.daemon.protocol import Op
from gatesh.events import decode, round_from
from gatesh.people import HumanReply
from gatesh.prompt import CAUTIOUS_CHOICES, Prompt, entry_pattern, parse_answer
from gatesh.render import neutralise
from gatesh.watch import Screen, Watcher
from gatesh.watch_link import subscription
from gatesh.wire_json import request_object

ROUND = {
    "command": "git reset --hard HEAD~1",
    "justification": "",
    "outcome": "destructive",
    "reason": "throws away uncommitted work",
    "remedy": "stash first",
    "passed": False,
    "suggestion": "",
}


class Fake:
    """A daemon stand-in: records every op and answers from a script (default: ok)."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.replies: list[dict[str, Any] | None] = []

    def __call__(self, op: Op, request: object, pid: int) -> HumanReply | None:
        self.sent.append(request_object(op, request, pid=pid))  # as the link sends it
        reply = self.replies.pop(0) if self.replies else {"ok": True}
        return None if reply is None else HumanReply.decode(reply)


def feed(w: Watcher, raw: dict[str, Any]) -> None:
    """One event line, decoded as the watcher's link decodes it (an unknown kind is skipped)."""
    event = decode(raw)
    if event is not None:
        w.on_event(event)


def make(
    width: int | None = 100, **kw: Any
) -> tuple[Watcher, io.StringIO, Fake, list[tuple[str, str]]]:
    out = io.StringIO()
    fake = Fake()
    written: list[tuple[str, str]] = []

    def write_entry(kind: str, pattern: str) -> tuple[str, str]:
        written.append((kind, pattern))
        return "/cfg/config.toml", f'[[{kind}]]\nmatch = "exact"\npattern = "{pattern}"'

    w = Watcher(
        Screen(out, color=False, width=width), fake, write_entry=write_entry, pid=4242, **kw
    )
    return w, out, fake, written


def escalation(pid: str = "abc123", **over: Any) -> dict[str, Any]:
    ev = {
        "event": "escalation",
        "time": 1.0,
        "session": "s1",
        "pending_id": pid,
        "kind": "escalate",
        "cwd": "~/repo",
        "command": "git reset --hard HEAD~1",
        "outcome": "destructive",
        "reason": "throws away uncommitted work",
        "remedy": "stash first",
        "to_person_reason": "the agent and the rater could not agree",
        "stage": "negotiation",
        "rounds": [ROUND, ROUND, ROUND],
        "transcript": "",
        "timeout_s": 110.0,
        "choices": ["once", "session", "always", "no", "deny always"],
    }
    ev.update(over)
    return ev


def rnd(number: int, **over: Any) -> dict[str, Any]:
    return {
        "event": "round",
        "time": 1.0,
        "session": "s1",
        "cwd": "~/repo",
        "number": number,
        "total": number,
        "round": {**ROUND, **over},
        "ends": None,
    }


# --- rounds, live -----------------------------------------------------------------------------------


def test_rounds_render_live_with_session_heading_and_numbers() -> None:
    w, out, _, _ = make()
    feed(w, rnd(1))
    feed(w, rnd(2, justification="the user asked for it"))
    text = out.getvalue()
    assert text.count("── session s1 · ~/repo ──") == 2
    assert "Round 1: git reset --hard HEAD~1" in text
    assert "rater, on the command alone: destructive" in text
    assert "Round 2: git reset --hard HEAD~1" in text
    assert "why: the user asked for it" in text
    assert "(this request)" not in text


def test_a_watcher_attaching_mid_argument_numbers_from_the_event() -> None:
    w, out, _, _ = make()
    feed(w, rnd(5))
    assert "Round 5: git reset" in out.getvalue()


def test_passed_round_is_labelled_agreed_not_numbered() -> None:
    w, out, _, _ = make()
    feed(w, rnd(1))
    ev = rnd(2, passed=True, outcome="safe")
    ev["ends"] = "agreed"
    feed(w, ev)
    assert "Agreed: git reset --hard HEAD~1" in out.getvalue()
    assert "Round 2" not in out.getvalue()


def test_a_pass_of_a_command_refused_rounds_before_is_agreed() -> None:
    """Refused X, refused Y, then X passed: the rater passed a command it had refused (S8.2)."""
    w, out, _, _ = make()
    feed(w, rnd(1, command="git reset --hard"))
    feed(w, rnd(2, command="git checkout -- f"))
    ev = rnd(3, command="git reset --hard", passed=True, outcome="safe")
    ev["ends"] = "agreed"
    feed(w, ev)
    text = out.getvalue()
    assert "Agreed: git reset --hard" in text and "Accepted" not in text, text


def test_a_pass_of_a_command_never_refused_is_accepted() -> None:
    w, out, _, _ = make()
    feed(w, rnd(1, command="git reset --hard"))
    feed(w, rnd(2, command="git checkout -- f"))
    ev = rnd(3, command="git stash && git reset --hard", passed=True, outcome="safe")
    ev["ends"] = "accepted"
    feed(w, ev)
    assert "Accepted: git stash && git reset --hard" in out.getvalue()


def test_a_watcher_attached_mid_argument_takes_the_daemons_agreed() -> None:
    w, out, _, _ = make()
    ev = rnd(4, command="git reset --hard", passed=True, outcome="safe")
    ev["ends"] = "agreed"
    feed(w, ev)
    assert "Agreed: git reset --hard" in out.getvalue()


def test_a_pass_after_a_person_was_reached_draws_no_round() -> None:
    w, out, _, _ = make()
    feed(w, escalation())
    feed(
        w,
        {
            "event": "answered",
            "session": "s1",
            "pending_id": "abc123",
            "answer": "once",
            "by": {"pid": 4242, "role": "watch"},
        },
    )
    before = out.getvalue()
    ev = rnd(3, passed=True)
    ev["ends"] = "accepted"
    feed(w, ev)
    assert out.getvalue() == before


def test_agent_text_is_neutralised_everywhere() -> None:
    w, out, _, _ = make()
    evil = "ls \x1b[2J\x1b]0;pwned\x07\nrm -rf ~"
    feed(w, rnd(1, command=evil, justification="\x1b[31mtrust me", reason="\x9b2Jx"))
    feed(w, escalation(command=evil, session="s\x1b[1m1", cwd="~/\x07x"))
    feed(w, {"event": "mandate", "session": "", "text": "do \x1b[5mit"})
    feed(w, {"event": "notice", "session": "s1", "text": "\x1b]8;;http://x\x07link"})
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    assert "rm -rf ~" in text  # shown, on the same line, never hidden


def test_rows_fit_the_width() -> None:
    w, out, _, _ = make(width=40)
    feed(w, rnd(1, command="x" * 300, reason="long " * 50))
    feed(w, escalation(command="y" * 500))
    for line in out.getvalue().splitlines():
        assert len(line) <= 40, line


def test_plain_output_has_no_colour_codes() -> None:
    w, out, _, _ = make(width=None)
    feed(w, rnd(1))
    feed(w, escalation())
    assert "\x1b" not in out.getvalue()


def test_colour_by_voice_on_a_terminal() -> None:
    out = io.StringIO()
    w = Watcher(Screen(out, color=True, width=100), Fake(), pid=1)
    feed(w, rnd(1))
    text = out.getvalue()
    assert "\x1b[2m── session s1" in text  # chrome dim
    assert "\x1b[33m  rater, on the command alone" in text  # rater yellow
    assert "\nRound 1: git reset" in text  # agent plain


def test_malformed_events_do_not_stop_the_view() -> None:
    w, out, _, _ = make()
    for ev in (
        {"event": "round", "round": "nope", "number": "x"},
        {"event": "escalation", "rounds": 5},
        {"event": "answered", "by": []},
        {"event": "unknown-kind"},
        {"event": "decision"},
    ):
        feed(w, ev)
    feed(w, rnd(1))
    assert "Round 1" in out.getvalue()


def test_session_end_observation_and_halt_and_notice() -> None:
    w, out, _, _ = make()
    feed(
        w,
        {
            "event": "session_end",
            "session": "s1",
            "counters": {},
            "observation": "gatesh (automated observation, not from the user or the agent): 2 rounds open",
        },
    )
    feed(
        w,
        {
            "event": "halt",
            "session": "s2",
            "cwd": "~/x",
            "command": "rm -rf ~/.config/gatesh",
            "reason": "tampering with the gate",
        },
    )
    feed(
        w,
        {
            "event": "notice",
            "session": "s3",
            "text": "gatesh: the anthropic rater failed 3 times in a row",
        },
    )
    text = out.getvalue()
    assert "session ended" in text and "automated observation" in text
    assert "HALTED: attack" in text and "resume s2" in text
    assert "[s3] gatesh: the anthropic rater failed 3 times in a row" in text


# --- escalation prompts ---------------------------------------------------------------------------


def test_escalation_prompt_shows_command_outcome_argument_and_choices() -> None:
    w, out, _, _ = make()
    feed(w, escalation())
    text = out.getvalue()
    assert "Command: git reset --hard HEAD~1" in text
    assert "Rater: destructive — throws away uncommitted work; stash first" in text
    assert "The argument so far: 3 rounds" in text
    assert "Round 3 (this request): git reset --hard HEAD~1" in text
    assert "abc123 › [o]nce  [s]ession  [a]lways  [N]o  [d]eny always   (Enter = No)" in text


def test_catastrophic_offers_no_session_or_always() -> None:
    w, out, fake, _ = make()
    feed(w, escalation(outcome="catastrophic"))  # even if the daemon offered them
    assert "[o]nce  [N]o  [d]eny always" in out.getvalue()
    w.on_line("a")
    w.on_line("s")
    assert fake.sent == []
    assert "not offered" in out.getvalue()


@pytest.mark.parametrize(
    ("typed", "answer"),
    [
        ("o", "once"),
        ("s", "session"),
        ("a", "always"),
        ("", "no"),
        ("n", "no"),
        ("N", "no"),
        ("d", "deny always"),
        ("deny always", "deny always"),
        ("  Once ", "once"),
    ],
)
def test_keys_map_to_answers(typed: str, answer: str) -> None:
    p = Prompt(
        pending_id="x",
        session="s",
        command="c",
        choices=("once", "session", "always", "no", "deny always"),
    )
    assert parse_answer(typed, p) == (answer, "")


def test_unknown_line_is_not_an_answer() -> None:
    w, out, fake, _ = make()
    feed(w, escalation())
    w.on_line("yes please")
    assert fake.sent == []
    assert "not an answer" in out.getvalue()


def test_halt_prompt_takes_only_run_anyway_in_full() -> None:
    p = Prompt(pending_id="x", session="s", command="c", kind="halt", choices=("run anyway", "no"))
    assert parse_answer("run anyway", p) == ("run anyway", "")
    assert parse_answer("", p) == ("no", "")
    for typed in ("o", "once", "run", "r", "run anyway!", "always"):
        assert parse_answer(typed, p)[0] is None


def test_answer_once_sends_the_op_and_enter_means_no() -> None:
    w, _, fake, written = make()
    feed(w, escalation("aaa111"))
    w.on_line("o\n")
    assert fake.sent == [
        {"op": "answer", "pending_id": "aaa111", "answer": "once", "note": "", "pid": 4242}
    ]
    feed(
        w,
        {
            "event": "answered",
            "pending_id": "aaa111",
            "answer": "once",
            "by": {"pid": 4242, "role": "watch"},
        },
    )
    feed(w, escalation("bbb222"))
    w.on_line("\n")
    assert fake.sent[-1]["answer"] == "no" and fake.sent[-1]["pending_id"] == "bbb222"
    assert written == []


def test_always_writes_the_allow_entry_after_the_daemon_accepted() -> None:
    w, out, fake, written = make()
    feed(w, escalation(command="git reset --hard HEAD~1  # why: the user asked"))
    w.on_line("a")
    assert fake.sent[-1]["answer"] == "always"
    assert written == [("allow", "git reset --hard HEAD~1")]
    assert "wrote to /cfg/config.toml:" in out.getvalue()
    assert 'pattern = "git reset --hard HEAD~1"' in out.getvalue()


def test_deny_always_writes_a_deny_entry() -> None:
    w, _, _, written = make()
    feed(w, escalation(entry="git push -f"))
    w.on_line("d")
    assert written == [("deny", "git push -f")]


def test_no_entry_is_written_for_a_command_holding_a_secret() -> None:
    w, out, fake, written = make()
    feed(w, escalation(entry="", command="curl -H 'Authorization: Bearer [REDACTED]' x"))
    w.on_line("a")
    assert fake.sent[-1]["answer"] == "always"
    assert written == []
    assert "holds a secret" in out.getvalue()


def test_a_lost_race_writes_nothing_and_says_who_won() -> None:
    w, out, fake, written = make()
    feed(w, escalation())
    fake.replies.append(
        {"ok": False, "error": "escalation abc123 is already answered (answered 'no' by pid 7)"}
    )
    w.on_line("a")
    assert written == []
    assert "already answered" in out.getvalue()


def test_others_see_who_answered_and_the_next_prompt_is_asked() -> None:
    w, out, fake, _ = make()
    feed(w, escalation("aaa111"))
    feed(w, escalation("bbb222", command="terraform destroy", outcome="catastrophic"))
    assert "bbb222: queued" in out.getvalue()
    feed(
        w,
        {
            "event": "answered",
            "pending_id": "aaa111",
            "answer": "no",
            "by": {"pid": 99, "role": "watch"},
        },
    )
    text = out.getvalue()
    assert "aaa111: answered `no` by another watcher (pid 99)" in text
    assert "now asking bbb222: terraform destroy" in text
    w.on_line("o")
    assert fake.sent[-1]["pending_id"] == "bbb222"


def test_expired_prompt_is_dropped_and_names_approve() -> None:
    w, out, fake, _ = make()
    feed(w, escalation())
    feed(w, {"event": "expired", "session": "s1", "pending_id": "abc123"})
    assert "gatesh approve abc123" in out.getvalue()
    w.on_line("o")
    assert fake.sent == []


def test_a_human_refusal_is_shown_clearly() -> None:
    w, out, fake, written = make()
    feed(w, escalation())
    fake.replies.append(
        {
            "ok": False,
            "refused": True,
            "error": "refused: process 12 (bash) in its ancestry belongs to the gated session 's1'",
        }
    )
    w.on_line("a")
    text = out.getvalue()
    assert "answer: the gate refused this: process 12" in text
    assert "outside any gated session" in text
    assert written == []


def test_lost_connection_approves_nothing() -> None:
    w, out, fake, written = make()
    feed(w, escalation())
    fake.replies.append(None)
    w.on_line("a")
    assert written == []
    assert "could not be asked" in out.getvalue()
    w.detached("closed")
    assert "nothing was approved" in out.getvalue()
    assert w.prompts == {}


def test_view_only_never_asks() -> None:
    w, out, fake, _ = make(answers=False)
    feed(w, escalation())
    w.on_line("o")
    assert fake.sent == []
    assert "›" not in out.getvalue()


def test_attach_shows_waiting_escalations_with_cautious_choices() -> None:
    w, out, _, _ = make()
    w.attached(
        subscription(
            {
                "subscribed": True,
                "sessions": [{"session": "s1", "halted": True, "halt_reason": "attack"}],
                "pending": [
                    {
                        "pending_id": "ccc333",
                        "session": "s1",
                        "command": "terraform destroy",
                        "cwd": "~/i",
                        "reason": "cannot be undone",
                        "kind": "escalate",
                        "state": "waiting",
                    }
                ],
            }
        )
    )
    text = out.getvalue()
    assert "session s1 is halted" in text
    assert "ccc333 › [o]nce  [N]o  [d]eny always" in text
    assert w.prompts["ccc333"].choices == CAUTIOUS_CHOICES


# --- verbs typed at the watcher -------------------------------------------------------------------


def test_mandate_line_and_m_key() -> None:
    w, _, fake, _ = make()
    w.on_line("mandate: undo my last two commits")
    w.on_line("m")
    w.on_line("clean the build folder")
    w.on_line("mandate @s2: only s2")
    assert [m.get("text") for m in fake.sent] == [
        "undo my last two commits",
        "clean the build folder",
        "only s2",
    ]
    assert all(m["op"] == "mandate" and m["pid"] == 4242 for m in fake.sent)
    assert fake.sent[0]["session"] == "" and fake.sent[2]["session"] == "s2"


def test_mandate_while_a_prompt_waits_is_not_an_answer() -> None:
    w, _, fake, _ = make()
    feed(w, escalation())
    w.on_line("mandate: do it")
    assert fake.sent[-1]["op"] == "mandate"
    assert "abc123" in w.prompts


def test_resume_approve_deny_lines() -> None:
    w, out, fake, _ = make()
    fake.replies += [
        {"ok": True, "session": "s1", "was_halted": True},
        {
            "ok": True,
            "pending_id": "abc123",
            "state": "approved",
            "text": "approved: `x` may run once when the agent retries it",
        },
        {"ok": True, "pending_id": "def456", "state": "denied"},
    ]
    w.on_line("resume s1")
    w.on_line("approve ABC123")
    w.on_line("deny def456")
    assert [(m["op"], m.get("session") or m.get("pending_id")) for m in fake.sent] == [
        ("resume", "s1"),
        ("approve", "abc123"),
        ("deny", "def456"),
    ]
    assert "abc123: approved: `x` may run once" in out.getvalue()


def test_quit_and_help() -> None:
    w, out, _, _ = make()
    assert w.on_line("help") is True
    assert "mandate: TEXT" in out.getvalue()
    assert w.on_line("quit") is False


def test_entry_pattern_strips_the_justification() -> None:
    assert entry_pattern("git  reset --hard   HEAD~1   # why: asked") == "git reset --hard HEAD~1"
    assert entry_pattern("echo '#why: x'") == "echo '#why: x'"


def test_round_from_tolerates_garbage() -> None:
    r = round_from({"outcome": "nonsense", "command": 5, "passed": "yes"})
    assert r.command == "" and r.outcome.value == "destructive" and r.passed is False


def test_no_row_contains_a_control_character() -> None:
    w, out, _, _ = make(width=30)
    feed(w, rnd(1, command="a\tb\x00c\u202e", reason="\u200bz"))
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\u202e\u200b]", out.getvalue())
    assert neutralise(out.getvalue().replace("\n", "")) == out.getvalue().replace("\n", "").strip()


def test_a_surface_ask_never_holds_up_a_command_waiting_for_this_watcher() -> None:
    """A hook's `ask` (its harness asks its own person) that nobody answers here must not keep a
    later escalation queued behind it: the one waiting for this watcher is asked first."""
    w, out, _, _ = make()
    feed(w, escalation("aaa111", asking=True, command="terraform destroy"))
    feed(w, escalation("bbb222"))
    text = out.getvalue()
    assert "bbb222 › [o]nce" in text and "bbb222: queued" not in text, text
    assert "is asking its person too" in text
    assert next(iter(w.prompts)) == "bbb222"


def test_a_surface_ask_queued_after_a_waiting_one_does_not_hold_up_the_next() -> None:
    """Issue 18 item 7: with one command already waiting for this watcher and a harness's `ask`
    queued behind it, a later command waiting for this watcher goes before the `ask`, so answering
    the first asks the second, not the `ask` nobody here may answer (it would expire unasked)."""
    w, out, _, _ = make()
    feed(w, escalation("aaa111"))
    feed(w, escalation("bbb222", asking=True, command="terraform destroy"))
    feed(w, escalation("ccc333", command="git clean -fdx"))
    assert list(w.prompts) == ["aaa111", "ccc333", "bbb222"]
    w.on_line("n")
    feed(
        w,
        {
            "event": "answered",
            "pending_id": "aaa111",
            "answer": "no",
            "by": {"pid": 4242, "role": "watch"},
        },
    )
    assert "now asking ccc333" in out.getvalue(), out.getvalue()
    assert "ccc333 › [o]nce" in out.getvalue().split("now asking ccc333", 1)[1]


def test_a_new_watcher_is_asked_the_waiting_commands_before_any_surface_ask() -> None:
    """Issue 18 item 7: the escalations open when a watcher attaches are asked in the order
    commands wait for it; a harness's own `ask` comes after every one of them."""
    w, out, _, _ = make()
    pending = [
        {
            "pending_id": pid,
            "session": "s1",
            "command": cmd,
            "cwd": "~",
            "state": state,
            "kind": "escalate",
            "choices": ["once", "no"],
        }
        for pid, cmd, state in (
            ("aaa111", "make deploy", "asking"),
            ("bbb222", "make a", "waiting"),
            ("ccc333", "make b", "asking"),
            ("ddd444", "make c", "waiting"),
        )
    ]
    w.attached(subscription({"sessions": [], "pending": pending}))
    assert list(w.prompts) == ["bbb222", "ddd444", "aaa111", "ccc333"]
    assert "bbb222 › [o]nce" in out.getvalue()


def test_a_persons_own_terminal_asking_is_named_as_such() -> None:
    """Issue 18 item 4: an ask at a person's gated shell (surface pty) is that shell's terminal, not
    a harness's prompt; the answer given there is the person's at that terminal, and one given by
    `gatesh approve/deny` is named as that."""
    w, out, _, _ = make()
    feed(w, escalation("aaa111", asking=True, surface="pty"))
    feed(w, escalation("bbb222", asking=True, surface="hook"))
    text = out.getvalue()
    assert "Its own terminal (a person's gated shell) is asking its person too" in text, text
    assert text.count("Its own surface (a harness's prompt) is asking its person too") == 1, text
    feed(
        w,
        {
            "event": "answered",
            "pending_id": "aaa111",
            "answer": "no",
            "by": {"pid": 7, "role": "human", "op": "answer"},
        },
    )
    feed(
        w,
        {
            "event": "answered",
            "pending_id": "bbb222",
            "answer": "once",
            "by": {"pid": 8, "role": "human"},
        },
    )
    text = out.getvalue()
    assert "aaa111: answered `no` by the person at the session's own terminal (pid 7)" in text, text
    assert "bbb222: answered `once` by `gatesh approve/deny` (pid 8)" in text, text

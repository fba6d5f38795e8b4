"""Everything the agent or a model wrote reaches a terminal or a harness neutralised (S8.1, issue 16):
one function at the boundary (``render.neutralise_block``), applied to the check reply every
transport sends, the hook's answer, the PTY surface's lines, the alignment notice and suggestion,
and the watch view's rows — each tested with every escape class."""

from __future__ import annotations

import io
import json
import os
import subprocess
import unicodedata
from pathlib import Path

import pytest

from gatesh import alignment
from gatesh._types import Action, AlignmentResult, Facts
from gatesh.check_reply import check_reply
from gatesh.config import default
from gatesh.events import decode
from gatesh.finish import Finished
from gatesh.hooks import Answer, render_answer
from gatesh.people import HumanReply
from gatesh.pipeline import decide
from gatesh.render import neutralise, neutralise_block
from gatesh.session import SessionState
from gatesh.watch import Screen, Watcher

# One of each class a terminal acts on. Each is a way a string retitles, clears, moves, recolours,
# hides or reorders what a person reads.
ESCAPES = {
    "csi": "\x1b[2J\x1b[H\x1b[31m",  # clear the screen, home the cursor, colour
    "osc": "\x1b]0;pwned\x07\x1b]8;;https://evil.example\x1b\\",  # retitle, hyperlink
    "dcs": "\x1bP+q544e\x1b\\",  # device control string (a terminfo query)
    "sos-pm-apc": "\x1bXsos\x1b\\\x1b^pm\x1b\\\x1b_apc\x1b\\",
    "c1": "\x9b2J\x9d0;pwned\x9c\x85\x90q\x9c",  # 8-bit CSI, OSC, ST, NEL, DCS
    "bidi": "\u202eevil\u202c\u2066x\u2069\u200f",  # right-to-left override, isolates, RLM
    "bel": "\x07\x07",
    "backspace": "safe\x08\x08\x08\x08rm -rf",  # overstrikes what was printed
    "invisible": "\u200b\u2060\ufeff\U000e0041",  # zero-width, word joiner, BOM, tag character
    "carriage-return": "innocent\rgit push --force",  # returns to the line start and overwrites
}
EVIL = "".join(ESCAPES.values())


def assert_safe(text: str, *, lines: bool = True) -> None:
    """No control character (bar the line breaks of a block), no format character, no ESC."""
    for ch in text:
        if ch == "\n" and lines:
            continue
        cat = unicodedata.category(ch)
        assert cat not in ("Cc", "Cf"), (hex(ord(ch)), text)


@pytest.mark.parametrize("kind", list(ESCAPES))
def test_every_escape_class_is_neutralised(kind: str) -> None:
    text = f"line one {ESCAPES[kind]} end\n  indented {ESCAPES[kind]}"
    block = neutralise_block(text)
    assert_safe(block)
    assert block.count("\n") == 1 and block.split("\n")[1].startswith("  indented")
    assert_safe(neutralise(text), lines=False)
    assert "\n" not in neutralise(text)
    assert neutralise_block(block) == block  # idempotent


def test_the_payload_of_a_string_sequence_stays_visible() -> None:
    """Hiding it would let a command hide part of itself from the person."""
    assert "pwned" in neutralise("ls \x1b]0;pwned\x07")


def test_the_check_reply_every_transport_sends(tmp_path: Path) -> None:
    facts = Facts(text=f"git reset --hard 'v1{EVIL}'")
    decision = decide(facts.text, cwd=str(tmp_path), config=default())
    finished = Finished(
        decision, Action.REJECT, f"gatesh: refused `{facts.text}`\nWhy: {EVIL}", notice=EVIL
    )
    reply = check_reply(finished, session="s", shell="bash")
    assert_safe(reply.message)
    for text in (reply.decision.reason, reply.decision.remedy, reply.decision.to_person_reason):
        assert_safe(text)
    allowed = Finished(decision, Action.ALLOW, "", notice=f"gatesh ran `{EVIL}`")
    assert_safe(check_reply(allowed, session="s", shell="bash").notice)


@pytest.mark.parametrize("harness", ["claude-code", "codex", "gemini"])
@pytest.mark.parametrize("decision", ["allow", "deny", "ask"])
def test_the_hook_answer(harness: str, decision: str) -> None:
    event = "BeforeTool" if harness == "gemini" else "PreToolUse"
    text = render_answer(harness, event, Answer(decision, f"refused\n{EVIL}", f"note {EVIL}"))  # type: ignore[arg-type]
    if not text:
        return
    data = json.loads(text)
    strings: list[str] = []

    def walk(v: object) -> None:
        if isinstance(v, str):
            strings.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk(data)
    for s in strings:
        assert_safe(s)
    assert "\x1b" not in text and "\\u001b" not in text and "\\u009b" not in text


def test_the_pty_surface_prints_through_the_boundary(tmp_path: Path) -> None:
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); from gatesh.pty.gate import _say; "
        "_say(sys.stdin.read())"
    )
    root = str(Path(__file__).resolve().parent.parent)
    import sys

    out = subprocess.run(
        [sys.executable, "-c", script, root],
        input=f"gatesh: {EVIL}\nsecond {EVIL}",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stderr.count("\n") == 2 and "pwned" in out.stderr
    assert_safe(out.stderr)


def test_the_alignment_notice_and_suggestion() -> None:
    command = f"git reset --hard 'v1{ESCAPES['osc']}{ESCAPES['csi']}'"
    notice = alignment.approval_notice(command, AlignmentResult("approve", f"you asked {EVIL}"))
    assert_safe(notice, lines=False)
    rejected = alignment.with_suggestion(
        "gatesh: refused.", AlignmentResult("suggest", f"narrower {EVIL}", f"git stash {EVIL}")
    )
    assert_safe(rejected)


def test_an_approval_reaches_the_person_neutralised(tmp_path: Path) -> None:
    """The PTY case of the issue: the builtin checker approves a command the user's own words
    contain; the notice that tells the person carries the command without its escapes."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("mine")
    command = "rm -rf notes \x1b]0;pwned\x07\x1b[2J"
    session = SessionState()
    session.negotiation.admit_user_message(f"please {command} now", "watch")
    d = decide(command, cwd=str(tmp_path), config=default(), session=session)
    assert d.action is Action.ALLOW and d.notice, (d.stage, d.reason)
    assert_safe(d.notice, lines=False)
    assert "rm -rf notes" in d.notice
    reply = check_reply(Finished(d, Action.ALLOW, "", notice=d.notice), session="s", shell="bash")
    assert_safe(reply.notice, lines=False)


def test_watch_rows() -> None:
    out = io.StringIO()
    w = Watcher(
        Screen(out, color=False, width=100), lambda op, request, pid: HumanReply(ok=True), pid=1
    )
    rnd = {
        "command": f"git reset {EVIL}",
        "justification": f"why {EVIL}",
        "outcome": "destructive",
        "reason": f"reason {EVIL}",
        "remedy": f"remedy {EVIL}",
        "passed": False,
        "suggestion": EVIL,
    }
    for ev in (
        {
            "event": "round",
            "time": 1.0,
            "session": f"s{EVIL}",
            "cwd": "~",
            "number": 1,
            "total": 1,
            "round": rnd,
            "ends": None,
        },
        {"event": "notice", "time": 1.0, "session": "s1", "text": f"gatesh ran `{EVIL}`"},
        {"event": "mandate", "time": 1.0, "session": "s1", "text": EVIL, "channel": "watch"},
        {
            "event": "halt",
            "time": 1.0,
            "session": "s1",
            "command": EVIL,
            "reason": EVIL,
            "pending_id": "",
            "choices": [],
        },
    ):
        event = decode(ev)
        assert event is not None
        w.on_event(event)
    text = out.getvalue()
    assert text
    assert_safe(text)


def test_a_refusal_printed_by_the_c_client_is_neutralised(tmp_path: Path) -> None:
    """End to end through `gatesh -c` (in this test's HOME): what reaches stderr has no escape."""
    import sys

    command = f"git reset --hard HEAD~1 # why: {ESCAPES['osc']}{ESCAPES['c1']}"
    out = subprocess.run(
        [sys.executable, "-m", "gatesh", "-c", f"touch {tmp_path}/m; {command}\x1b[2J"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "GATESH_SESSION": "neutral"},
    )
    assert out.returncode == 126 and not (tmp_path / "m").exists()
    assert_safe(out.stderr)


def test_plain_block_fast_path_returns_what_the_line_by_line_pass_returns() -> None:
    """neutralise_block's printable-ASCII shortcut must give exactly the line-by-line result:
    over seeded texts built from the characters the shortcut decides on (spaces, line feeds,
    fence characters, tabs) and over every escape class, alone and inside plain text."""
    import random

    from gatesh.render import _is_plain_block, _neutralise_lines

    rnd = random.Random(7)
    alphabet = [" ", "\n", "a", "`", "~", "Z", " ", "\t", "-", "\r", "é", "\x1b", "["]
    texts = ["", "\n", " ", "plain", "  indented\nnext", "a\n\n b\n", "x ```y", "~~~", "end \n"]
    texts += [
        "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 16))) for _ in range(20000)
    ]
    texts += [f"ok {e} ok\n  more" for e in ESCAPES.values()] + list(ESCAPES.values())
    took = 0
    for text in texts:
        took += _is_plain_block(text)
        assert neutralise_block(text) == _neutralise_lines(text), repr(text)
    assert 1000 < took < len(texts)  # both paths are exercised

"""Pure parts of the PTY session: the gate channel's frames, the history listing a hook hands
over, the values a command is decided with, and the person's answers."""

from __future__ import annotations

import pytest

from gatesh.pty.channel import FrameError, Framer, Reply, Request, Status
from gatesh.pty.gatekeeper import _history_text, prompt_code, with_values
from gatesh.pty.question import is_answer, parse_answer


def test_history_listing_gives_the_entry() -> None:
    assert _history_text("   12  echo a; echo b\n") == "echo a; echo b"
    assert _history_text("    7* for i in 1; do\n  rm x\ndone") == "for i in 1; do\n  rm x\ndone"
    assert _history_text("100000  ls") == "ls"
    assert _history_text("echo zsh gives the text itself") == "echo zsh gives the text itself"


def test_requests_are_framed_by_nul_and_replies_are_one_line() -> None:
    framer = Framer()
    assert framer.feed(b"line\x001\x002\x00echo a\nb\x00/tmp") == []
    (request,) = framer.feed(b"\x00")
    assert request == Request("line", "1", ("echo a\nb", "/tmp"))
    reply = Reply(Status.NO, "gatesh: no\nreally \\ here", printed=("echo a", "a\nb"), keep=True)
    assert reply.encode("7") == b"7\x1fno\x1fk\x1fgatesh: no\\nreally \\\\ here\x1fecho a\n"


def test_a_bad_frame_is_refused_not_read() -> None:
    with pytest.raises(FrameError):
        Framer().feed(b"cmd\x001\x00nine\x00")


def test_prompt_strings_are_read_as_the_code_they_run() -> None:
    assert prompt_code('$(date) "x" \\$ ') == ': "$(date) \\"x\\" \\\\$ "'


def test_values_are_put_where_the_command_names_them() -> None:
    assert (
        with_values("rm -rf \"$1\" $HOME/x '$HOME' ${#x}", ["/tmp/a b"], {"HOME": "/home/u"})
        == "rm -rf \"/tmp/a b\" /home/u/x '$HOME' ${#x}"
    )
    assert with_values('echo "$X"', [], {"X": 'a"$(b)'}) == 'echo "a\\"\\$(b)"'
    assert with_values("echo $__gatesh_x", [], {"__gatesh_x": "v"}) == "echo $__gatesh_x"


@pytest.mark.parametrize(
    "typed,answer",
    [
        ("o", "once"),
        ("S", "session"),
        ("a", "always"),
        ("", "no"),
        ("n", "no"),
        ("d", "deny always"),
        ("deny always", "deny always"),
        ("x", "no"),
        ("yes", "no"),
    ],
)
def test_answers(typed: str, answer: str) -> None:
    assert parse_answer(typed) == answer


def test_halt_needs_the_exact_phrase() -> None:
    assert parse_answer("run anyway", "halt") == "run anyway"
    assert parse_answer("o", "halt") == "no"


@pytest.mark.parametrize(
    ("typed", "answers"),
    [("o", True), ("deny always", True), ("", True), ("ls -la", False), ("yes", False)],
)
def test_a_line_typed_for_the_shell_is_not_an_answer(typed: str, answers: bool) -> None:
    assert is_answer(typed) is answers
    assert is_answer(typed, "halt")

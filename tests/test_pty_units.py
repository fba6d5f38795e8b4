"""Pure parts of the PTY session: the history listing the bash hook hands over, and answers."""

from __future__ import annotations

import pytest

from gatesh.pty.gate import _Refused, parse_history_line
from gatesh.pty.session import parse_answer


def test_history_line_is_the_current_entry() -> None:
    assert parse_history_line("   12  echo a; echo b", "12") == "echo a; echo b"
    assert (
        parse_history_line("    7* for i in 1; do\n  rm x\ndone", "7")
        == "for i in 1; do\n  rm x\ndone"
    )
    assert parse_history_line("100000  ls", "100000") == "ls"


@pytest.mark.parametrize(
    "listing,number",
    [
        (
            "   11  echo previous",
            "12",
        ),  # history kept no new entry: the listing is an older command
        ("", "1"),
        ("garbage", "1"),
        ("   12  ls", ""),
    ],
)
def test_history_mismatch_refuses(listing: str, number: str) -> None:
    with pytest.raises(_Refused):
        parse_history_line(listing, number)


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

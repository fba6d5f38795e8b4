"""Texts tree-sitter-bash cannot parse without reading out of bounds are never handed to it.

tree-sitter-bash 0.25.1's scanner tests the character after ``{`` (and after ``{N..``) with C's
``isdigit()``, whose table covers -128..255 only. ``{`` then U+10FFFF indexes megabytes past it:
the process dies of SIGSEGV in about half of the runs (memory layout varies), which crashed
fast-loop runs in the property tests and would crash the daemon. The reader refuses those texts
as unreadable instead. In-process checks here use code points below U+0800, whose reads stay
within the mapped locale table even without the guard; far code points run only in
subprocesses.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from gatesh.pty import cover
from gatesh.reading import read
from gatesh.reading._walk import ParserHazard, parse

# Near code points (U+0100, U+07FF): out of the table's range, but not far enough to fault.
HAZARDS = (
    "echo {\u0100",
    "echo {\u07ff}",
    "echo {12\u0100}",
    "echo {1..\u0100}",
    "echo {..\u07ff}",
    "a; {\u0100; }",
)
# Neighbours that stay in range or never put a wide character right after `{`/`{N..`.
SAFE = (
    "echo {a,b} \u07ff",
    "echo {\u00e9} ok",
    "echo {1..3}",
    "echo \u07ff{",
    "echo {1.\u0100}",
    "echo { \u0100",
)


@pytest.mark.parametrize("text", HAZARDS)
def test_parse_refuses_a_wide_character_where_the_scanner_tests_for_a_digit(text: str) -> None:
    with pytest.raises(ParserHazard):
        parse(text.encode())


@pytest.mark.parametrize("text", SAFE)
def test_parse_reads_the_safe_neighbours(text: str) -> None:
    assert parse(text.encode()).root_node is not None


@pytest.mark.parametrize("text", HAZARDS)
def test_the_reading_is_unreadable_with_the_reason(text: str) -> None:
    facts = read(text, cwd="/tmp")
    assert not facts.readable
    assert "reads out of bounds" in facts.unreadable


def test_code_inside_an_interpreter_is_unreadable_too() -> None:
    facts = read("python3 -c 'print({\u0100})'", cwd="/tmp")
    assert not facts.readable


# Each run crashed in about half of the processes before the guard: eight survive by luck in
# fewer than 1 of 256 runs.
_PROCESSES = 8
_PROBE = """
from gatesh._types import Rung
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.pty import cover
from gatesh.reading import read
for text in ("echo {\\U0010ffff", "echo {1..\\U0010ffff}", "{\\U00031860"):
    assert not read(text, cwd="/tmp").readable
    assert not decide(text, cwd="/tmp", config=default(), rung=Rung.AUTO).allowed
print("survived")
"""


@pytest.mark.slow
def test_far_code_points_after_a_brace_do_not_crash_the_process() -> None:
    for _ in range(_PROCESSES):
        done = subprocess.run(
            [sys.executable, "-X", "faulthandler", "-c", _PROBE],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0 and "survived" in done.stdout, (done.returncode, done.stderr)


@pytest.mark.parametrize("text", HAZARDS)
def test_the_gated_shells_renderer_does_not_parse_them(text: str) -> None:
    """The PTY relay parses announced commands with its own parser: the same guard applies."""
    assert not cover.units(text)


def test_the_renderer_still_reads_the_safe_neighbours() -> None:
    assert cover.units("echo {a,b} \u07ff")

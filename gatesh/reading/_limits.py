"""Limits of the reader (S2). Past any of them a command is unreadable, never silently truncated."""

from __future__ import annotations

import time
from typing import Final

MAX_COMMAND_BYTES: Final = 64 * 1024  # S2: 64 KiB per command; longer is "too long"
MAX_REREAD_DEPTH: Final = (
    6  # sh -c / eval / heredoc / script inside each other: real use stays <= 3
)
MAX_NESTING: Final = (
    150  # brackets/substitutions deep; keeps tree-sitter and our walk far from stack limits
)
MAX_WALK_DEPTH: Final = (
    900  # syntax-tree depth our recursive walk may reach (< Python's 1000 frames)
)
MAX_COMMANDS: Final = (
    25_000  # per reading: above what 64 KiB can hold (`a;` x 21,845); bounds scripts
)
TIME_BUDGET_S: Final = 0.5  # whole reading incl. scripts; a normal line takes well under 1 ms
MAX_SCRIPT_BYTES: Final = 256 * 1024  # a script read from disk larger than this is a note, not read
MAX_SCRIPT_TOTAL_BYTES: Final = 1024 * 1024  # all scripts of one reading together
MAX_CONTEXT_SCRIPT_BYTES: Final = 64 * 1024  # non-shell script text handed to the model as context
MAX_SECOND_READER_BYTES: Final = 8 * 1024  # bashlex needs ~10 us/byte: 8 KiB stays under ~100 ms
MAX_PARALLEL_INPUTS: Final = 16  # `parallel CMD ::: a b …` is read once per input up to this many


def clock() -> float:
    """The clock :data:`TIME_BUDGET_S` is counted on: CPU time of the reading's thread. The budget
    bounds the reader's work; counted in wall time, a loaded machine (which stretches waiting, not
    work) turned the same command unreadable on one run and readable on the next, so its decision
    changed with the machine's load. A reading runs in one thread from start to end."""
    return time.thread_time()

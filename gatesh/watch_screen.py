"""The screen of ``gatesh watch`` (S7, S8.1): append-only rows painted by voice, never moved over,
cleared or redrawn; plain text when stdout is not a terminal.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Final, TextIO

from gatesh.render import Row, Voice, paint, rows_of

__all__ = ["MAX_ROWS", "Screen"]

# Rows one line of gatesh's own words may take (a command or a rating is an element of the
# argument: MAX_ROWS_PER_ELEMENT, as the renderer draws it).
MAX_ROWS: Final = 6


class Screen:
    """Append-only output: rows painted by voice, one write per block, under one lock.

    ``width`` None means plain unwrapped text (stdout is not a terminal).
    """

    def __init__(
        self, out: TextIO, *, color: bool, term: Any = None, width: int | None = None
    ) -> None:
        self.out = out
        self.color = color
        self.term = term
        self._width = width
        self.lock = threading.RLock()

    @property
    def width(self) -> int | None:
        if self._width is not None:
            return self._width
        if self.term is not None and self.color:
            try:
                return max(24, int(self.term.width))
            except Exception:
                return 80
        return None

    def rows(self, rows: Sequence[Row]) -> None:
        with self.lock:
            self.out.write(
                "".join(line + "\n" for line in paint(rows, self.term, color=self.color))
            )
            self.out.flush()

    def line(self, text: str, voice: Voice = "chrome") -> None:
        self.rows(self.wrap(text, voice))

    def strong(self, text: str) -> None:
        """One emphasised line of gatesh's own (a prompt); bold on a terminal."""
        rows = self.wrap(text, "agent")
        with self.lock:
            for row in rows:
                if self.color and self.term is not None:
                    self.out.write(f"{self.term.bold}{row.text}{self.term.normal}\n")
                else:
                    self.out.write(row.text + "\n")
            self.out.flush()

    def wrap(self, text: str, voice: Voice, max_rows: int = MAX_ROWS) -> list[Row]:
        """``text`` as rows of at most the width, broken at spaces, each of its lines at most
        ``max_rows`` rows (``… +N rows``); a newline starts a new row (the ruler starts again)."""
        return rows_of(text, voice, self.width, max_rows)

"""Texts tree-sitter-bash 0.25.1 cannot parse without reading out of bounds (a crash).

Every place that hands text to tree-sitter-bash asks :func:`overread_at` first: the reader's
``parse`` and the gated shell's command renderer. Standard library only, so the renderer can
use it without loading the reader.
"""

from __future__ import annotations

import re
from typing import Final

# tree-sitter-bash 0.25.1's scanner, where a brace range `{N..M}` may start, tests the character
# after `{` (and after `{N..`) with C's isdigit(), whose table covers only the values -128..255.
# A code point from U+0100 up indexes past the table; U+10000 and above land 128 KiB to 2 MiB
# away and crashed the process (SIGSEGV) in 3 of 6 runs of `{` U+10FFFF (the layout varies
# from run to run, so a crash is rare in a test run and depends on the character). Such a text
# is never handed to the parser: a `{`, optional digits and `..` digits, then any byte that does
# not start a valid 2-byte UTF-8 character below U+0100 (a superset of the unsafe texts).
_OVERREAD: Final = re.compile(rb"\{[0-9]*(?:\.\.[0-9]*)?(?![\xc2\xc3][\x80-\xbf])[\x80-\xff]")


def overread_at(data: bytes) -> int | None:
    """The byte offset of the ``{`` that starts a text tree-sitter-bash would read out of bounds
    on, or None when ``data`` is safe to parse."""
    if b"{" not in data:
        return None
    found = _OVERREAD.search(data)
    return None if found is None else found.start()

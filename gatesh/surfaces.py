"""The surfaces commands come from (S1), and what each says about where its command runs.

A PTY session's commands run at its terminal; a hook's harness runs the commands it hooks without
one; a ``-c`` or shim client knows whether its own input and output are a terminal and says so.
"""

from __future__ import annotations

from typing import Final

__all__ = ["at_terminal"]

# Surfaces whose client can say whether its command runs at a terminal (its input and output).
_SAYS_TERMINAL: Final = frozenset({"-c", "shim"})


def at_terminal(surface: str, says: bool) -> bool:
    """Whether a command ``surface`` sends runs at a terminal: a PTY session's does; a -c or shim
    client's when it ``says`` its input and output are one; a hook's never (a harness runs the
    commands it hooks without one), nor an unnamed surface's (a library call, explain, eval)."""
    return surface == "pty" or (says and surface in _SAYS_TERMINAL)

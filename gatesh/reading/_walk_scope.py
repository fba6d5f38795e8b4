"""Where a node of the syntax tree runs, for the static values of assignments (S2.1).

An assignment's value is known later in its text only when the assignment surely runs first:
at the top of the text (:data:`TOP`: not in a branch, loop, pipeline, subshell, substitution,
the right side of ``&&``/``||`` or ``&``), or whenever a function runs (the body's byte span).
"""

from __future__ import annotations

from typing import Any, Final

from ._nodes import kind

# Statements whose parts all run, in order, whenever they run (S2.1 static values).
_SEQUENTIAL: Final = frozenset(
    {
        "program",
        "variable_assignments",
        "redirected_statement",
        "declaration_command",
        "compound_statement",
    }
)


def at_top(node: Any) -> bool:
    """Whether ``node`` runs whenever its text runs, before what follows it: not in a branch,
    loop, pipeline, subshell, function, substitution, the right side of ``&&``/``||``, or ``&``."""
    return scope_of(node) == TOP


# The scope of a node at the top of its text: a span no function body can have.
TOP: Final = (-1, -1)


def scope_of(node: Any) -> tuple[int, int] | None:
    """Where ``node`` runs whenever it is reached, before what follows it: :data:`TOP` for the
    text itself (see :func:`at_top`), the byte span of a function's ``{ … }`` body for a
    node that runs whenever that function runs (in none of the places above within the body),
    None otherwise."""
    child, parent = node, node.parent
    while parent is not None:
        t = kind(parent)
        if t == "list":
            first = parent.named_children[0] if parent.named_children else None
            if (
                first is None
                or first.start_byte != child.start_byte
                or first.end_byte != child.end_byte
            ):
                return None
        elif t == "compound_statement":
            if parent.parent is not None and kind(parent.parent) == "function_definition":
                return (parent.start_byte, parent.end_byte)
        elif t not in _SEQUENTIAL:
            return None
        nxt = child.next_sibling
        if nxt is not None and kind(nxt) == "&":
            return None
        child, parent = parent, parent.parent
    return TOP

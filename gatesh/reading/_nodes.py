"""tree-sitter-bash's language, and what the reader asks of its nodes, asked cheaply.

``node.type`` and ``node.is_named`` build their answer on every call (~0.5-0.7 us each, and a walk
asks them of every node several times); ``node.kind_id`` is a plain number (~0.08 us). The
language's own tables give the name and the named-ness of each kind id, so :func:`kind` and
:func:`named` answer exactly what ``node.type`` and ``node.is_named`` answer
(tests/test_reading_shortcuts.py compares them over every node of many parses).
"""

from __future__ import annotations

from typing import Any, Final

import tree_sitter_bash
from tree_sitter import Language

LANGUAGE: Final = Language(tree_sitter_bash.language())

_COUNT: Final = LANGUAGE.node_kind_count
_NAMES: Final[tuple[str | None, ...]] = tuple(LANGUAGE.node_kind_for_id(i) for i in range(_COUNT))
_NAMED: Final[tuple[bool, ...]] = tuple(LANGUAGE.node_kind_is_named(i) for i in range(_COUNT))


def kind(node: Any) -> str:
    """``node.type``: the name of its kind, from the language's table (a kind outside the table,
    such as ERROR's, is asked of the node)."""
    k: int = node.kind_id
    name = _NAMES[k] if k < _COUNT else None
    if name is None:
        name = str(node.type)
    return name


def named(node: Any) -> bool:
    """``node.is_named``, from the language's table (a kind outside it is asked of the node)."""
    k: int = node.kind_id
    return _NAMED[k] if k < _COUNT else bool(node.is_named)

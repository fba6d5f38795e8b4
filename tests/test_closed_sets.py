"""Closed sets are enums: no module compares a command's context with a literal string.

``Context`` is a StrEnum, so ``cmd.context == "xargs"`` works, and a misspelt literal
(``"find-exec"``) would silently never match. Outside the reader, which prints the names, a
context is compared with its member.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from gatesh._types import Context

ROOT = Path(__file__).resolve().parent.parent / "gatesh"
_NAMES = frozenset(c.value for c in Context)


def _strings(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for e in node.elts:
            yield from _strings(e)


def _is_context(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "context"


def literal_context_compares(root: Path = ROOT) -> list[str]:
    """``file:line`` of every comparison of a ``.context`` with a literal context name."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            if any(_is_context(s) for s in sides) and any(
                name in _NAMES for s in sides for name in _strings(s)
            ):
                found.append(f"{path.relative_to(root).as_posix()}:{node.lineno}")
    return found


def test_contexts_are_compared_with_the_enum() -> None:
    assert literal_context_compares() == []


def test_the_check_finds_a_literal_compare(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        'def f(cmd):\n    a = cmd.context == "xargs"\n    return a or cmd.context in ("find -exec",)\n'
    )
    assert literal_context_compares(tmp_path) == ["m.py:2", "m.py:3"]

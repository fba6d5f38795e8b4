"""Closed sets are enums: no module compares a command's context, a path's role (``via``) or a
path's class row (``kind``) with a literal string.

``Context`` and ``Via`` are StrEnums, so ``cmd.context == "xargs"`` works, and a misspelt literal
(``"find-exec"``) would silently never match. A path effect's ``kind`` is the name of the
path-class row that matched (``gatesh.vocab.paths.classes``): it is compared with the table's row
(``DISKS.name``), so a renamed row cannot leave a comparison matching nothing. Outside the reader,
which prints the names, each is compared with its member or row.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from gatesh._types import Context, Via
from gatesh.vocab.paths.classes import CLASSES

ROOT = Path(__file__).resolve().parent.parent / "gatesh"
# attribute -> the literal names it must not be compared with
_NAMES: dict[str, frozenset[str]] = {
    "context": frozenset(c.value for c in Context),
    "via": frozenset(v.value for v in Via),
    "kind": frozenset(r.name for r in CLASSES),
}


def _strings(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for e in node.elts:
            yield from _strings(e)


def literal_compares(root: Path = ROOT) -> dict[str, list[str]]:
    """Per attribute of :data:`_NAMES`, ``file:line`` of every comparison of it with one of its
    literal names."""
    found: dict[str, list[str]] = {attr: [] for attr in _NAMES}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            literals = {name for s in sides for name in _strings(s)}
            for s in sides:
                if isinstance(s, ast.Attribute) and literals & _NAMES.get(s.attr, frozenset()):
                    found[s.attr].append(f"{path.relative_to(root).as_posix()}:{node.lineno}")
    return found


def test_closed_sets_are_compared_with_the_enum_or_the_table() -> None:
    assert literal_compares() == {attr: [] for attr in _NAMES}


def test_the_check_finds_a_literal_compare(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        'def f(cmd, e):\n    a = cmd.context == "xargs"\n    b = cmd.context in ("find -exec",)\n'
        '    c = e.via == "redirect" or e.via != "inline code on another host or in a container"\n'
        '    d = e.kind == "disks and partitions" or e.kind == "a word no row has"\n'
        "    return a or b or c or d or e.via is Via.CD\n"
    )
    assert literal_compares(tmp_path) == {
        "context": ["m.py:2", "m.py:3"],
        "via": ["m.py:4", "m.py:4"],
        "kind": ["m.py:5"],
    }


def test_every_role_has_its_twin_elsewhere() -> None:
    """Each role a path can be named in has one ``…_ELSEWHERE`` member, with the words the reader
    always wrote for it (``explain --json`` keeps its bytes)."""
    here = [v for v in Via if not v.name.endswith("_ELSEWHERE")]
    assert {v.elsewhere() for v in here} == set(Via) - set(here)
    for v in here:
        assert v.elsewhere().value == f"{v.value} on another host or in a container"
        assert v.elsewhere().elsewhere() is v.elsewhere()

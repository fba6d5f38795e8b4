"""The regenerable table (gatesh.vocab.regenerable): one table for the reversibility probe and the
undo snapshot, each row with a reason; what it names is matched at any depth."""

from __future__ import annotations

import pytest

from gatesh import worktree
from gatesh.vocab import regenerable


def test_every_row_has_a_reason_and_a_unique_name() -> None:
    names = [r.name for r in regenerable.ROWS]
    assert len(names) == len(set(names))
    for row in regenerable.ROWS:
        assert row.name and row.reason and not row.reason.endswith("."), row


def test_the_probe_reads_the_same_table() -> None:
    assert worktree.BUILD_NAMES is regenerable.FOLDERS
    assert worktree._BUILD_FILES is regenerable.FILE_PATTERN


@pytest.mark.parametrize(
    ("rel", "regen"),
    [
        ("node_modules", True),
        ("web/node_modules/left-pad/index.js", True),
        ("src/__pycache__/app.cpython-311.pyc", True),
        ("app.pyc", True),
        ("gatesh.egg-info/PKG-INFO", True),
        ("notes.txt~", True),
        ("docs/.DS_Store", True),
        ("src/app.py", False),
        (".env", False),
        ("app.db", False),
        ("data/build.md", False),  # a file whose name merely contains a row's name
        ("node_modules_notes.md", False),
    ],
)
def test_what_a_row_names(rel: str, regen: bool) -> None:
    assert regenerable.is_regenerable(rel) is regen


@pytest.mark.parametrize(
    "name",
    [
        "node_modules",
        "a.pyc",
        "x.egg-info",
        "notes~",
        ".DS_Store",
        "Thumbs.db",
        "app.py",
        ".env",
        "build.md",
        "out",
        "egg-info",
        "x.egg-infos",
    ],
)
def test_a_name_alone_is_judged_as_a_one_part_path(name: str) -> None:
    assert regenerable.is_regenerable_name(name) is regenerable.is_regenerable(name)

"""The shell variables a line sets, by any spelling (reading/_variables.py, issue 27)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatesh._types import SetBy
from gatesh.reading import read


def named(text: str, cwd: str = "/tmp") -> list[tuple[str, SetBy]]:
    return [(v.name, v.by) for v in read(text, cwd=cwd).variables]


E, A, P, D, R, U, N = (
    SetBy.EXPORT,
    SetBy.ASSIGN,
    SetBy.PREFIX,
    SetBy.DECLARE,
    SetBy.READ,
    SetBy.UNSET,
    SetBy.NAMEREF,
)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("export A=1", [("A", E)]),
        ("x=B; export $x=1", [("x", A), ("B", E)]),
        ('v=C; export "$v=1"', [("v", A), ("C", E)]),
        ("set -- D; export $1=1", [("D", E)]),
        ("declare -gx E=1", [("E", E)]),
        ("declare F=1", [("F", D)]),
        ("declare -n r=G", [("r", N)]),
        ("printf -v H %s x", [("H", R)]),
        ("read -r I J", [("I", R), ("J", R)]),
        ("read -ra K <<< x", [("K", R)]),
        ("read line", [("line", R)]),
        ("read", [("REPLY", R)]),
        ("mapfile -t L < f", [("L", R)]),
        ("getopts ab M", [("M", R)]),
        ("unset N O", [("N", U), ("O", U)]),
        ("unset -f fn", []),
        ("P=1 make", [("P", P)]),
        ("env Q=1 make", [("Q", P)]),
        ("export $y=1", [("", E)]),
        ("declare -p X", []),
        ("unset 'functions[TRAPDEBUG]'", [("functions", U)]),
        ("unset a[$i]", [("a", U)]),
    ],
)
def test_variables(text: str, want: list[tuple[str, SetBy]]) -> None:
    assert named(text) == want


def test_export_of_a_files_words_takes_its_names(tmp_path: Path) -> None:
    (tmp_path / "op.env").write_text("# settings\nGATESH_OPERATOR=person\nFOO='a b'\n")
    assert named("export $(cat op.env)", cwd=str(tmp_path)) == [
        ("GATESH_OPERATOR", E),
        ("FOO", E),
    ]
    assert named("export $(cat missing.env)", cwd=str(tmp_path)) == [("", E)]


def test_a_file_the_line_writes_gives_no_names_now(tmp_path: Path) -> None:
    """What the line writes into the file is not there when the command is decided."""
    (tmp_path / "ok.env").write_text("FOO=1\n")
    cwd = str(tmp_path)
    assert named("export $(cat ok.env)", cwd=cwd) == [("FOO", E)]
    assert named("echo GATESH_OPERATOR=x > ok.env; export $(cat ok.env)", cwd=cwd) == [("", E)]
    assert named('echo x > "$out"; export $(cat ok.env)', cwd=cwd) == [("", E)]

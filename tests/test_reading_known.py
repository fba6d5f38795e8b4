"""What a word only known when it runs may be (reading/_known.py, issue 27): defaults, the gate's
environment, and substitutions gatesh answers from the disk without running anything."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gatesh.reading._known import candidates

HOME = "/home/u"


@pytest.mark.parametrize(
    ("text", "values", "unknown"),
    [
        ("${XDG_CONFIG_HOME:-$HOME/.config}/gatesh", ["/home/u/.config/gatesh"], True),
        ("${XDG_CONFIG_HOME:=$HOME/.config}/x", ["/home/u/.config/x"], True),
        ("${FOO-/tmp/a}/b", ["/tmp/a/b"], True),
        ("${FOO:+/x}/y", ["/x/y", "/y"], False),
        ('"$HOME/a b"', ["/home/u/a b"], False),
        ("$TMPDIR/x", ["/tmp/x"], False),
        ("$out", [], True),
        ("$out/x", [], True),
        ("$(dirname /a/b/c)/d", ["/a/b/d"], False),
        ("$(basename /a/b.txt .txt).md", ["b.md"], False),
        ("`echo /x`/y", ["/x/y"], False),
        ("$(readlink -f ../z)", ["/srv/z"], False),
        ("$(cat f)", [], True),
        ("$(echo $x | tr a b)", [], True),
        ("$(dirname {})", [], True),
        # mktemp makes a new name in the temporary folder (read as /tmp, like $TMPDIR)
        ("$(mktemp)", ["/tmp/tmp.XXXXXXXXXX"], False),
        ("$(mktemp -d)/x", ["/tmp/tmp.XXXXXXXXXX/x"], False),
        ("`mktemp -dt run.XXXXXX`", ["/tmp/run.XXXXXX"], False),
        ("$(mktemp -p ~ a.XXX)", [], True),
        ("$(mktemp --tmpdir=/srv a.XXX)", [], True),
        ("$(mktemp ../a.XXXX)", [], True),
        ("$(mktemp a.XXXX)", [], True),
    ],
)
def test_candidates(text: str, values: list[str], unknown: bool) -> None:
    env = {"XDG_CONFIG_HOME": ""}
    assert candidates(text, "/srv/w", HOME, env) == (tuple(values), unknown)


def test_the_gates_environment_is_one_possibility() -> None:
    env = {"XDG_STATE_HOME": "/st"}
    got, unknown = candidates("$XDG_STATE_HOME/gatesh", "/", HOME, env)
    assert got == ("/st/gatesh",) and unknown  # the command's own environment may differ
    assert candidates("$HOME/x", "/", None, env) == ((), True)  # the text assigns HOME


def test_git_folders_are_answered_from_the_disk(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "sub").mkdir()
    cwd = str(repo / "sub")
    assert candidates("$(git rev-parse --git-dir)/hooks", cwd, HOME, {}) == (
        (f"{repo}/.git/hooks",),
        False,
    )
    assert candidates("$(git rev-parse --show-toplevel)", cwd, HOME, {}) == ((str(repo),), False)
    assert candidates(f"$(git -C {repo} rev-parse --git-common-dir)", "/", HOME, {}) == (
        (f"{repo}/.git",),
        False,
    )
    assert candidates("$(git rev-parse HEAD)", cwd, HOME, {}) == ((), True)
    assert candidates("$(git rev-parse --git-dir)", str(tmp_path), HOME, {}) == ((), True)

"""pytest runs the test files the same text wrote: they are read before the run is judged
(issue 32: the agent's own work). The collection over written files is checked alone; the reading,
in the realistic working tree at ``auto`` with the builtin rater, over the runner's spellings.
Nothing is executed.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from gatesh._types import Action, Decision
from gatesh.reading._testrun import pytest_operands, pytest_runs
from gatesh.testing import worktree
from tests._agent_tree import decide_auto, scratch_tree


@pytest.mark.parametrize(
    ("args", "operands"),
    [
        ([], []),
        (["-q", "tests/"], ["tests/"]),
        (["tests/test_x.py::test_a", "-x"], ["tests/test_x.py"]),
        (["-k", "tests", "-m", "slow", "-o", "x=1", "t"], ["t"]),
        (["--tb=short", "-p", "no:cacheprovider", "t.py"], ["t.py"]),
    ],
)
def test_the_operands_are_what_pytest_collects(args: list[str], operands: list[str]) -> None:
    assert pytest_operands(args) == operands


WRITTEN = (
    "/w/tests/test_a.py",
    "/w/tests/unit/b_test.py",
    "/w/tests/helper.py",
    "/w/tests/conftest.py",
    "/w/conftest.py",
    "/w/scripts/test_tool.py",
    "/w/tests/data.txt",
    "/w/tests/unit/conftest.py",
)


@pytest.mark.parametrize(
    ("roots", "runs"),
    [
        (
            ["/w"],
            [
                "/w/tests/test_a.py",
                "/w/tests/unit/b_test.py",
                "/w/tests/conftest.py",
                "/w/conftest.py",
                "/w/scripts/test_tool.py",
                "/w/tests/unit/conftest.py",
            ],
        ),
        (
            ["/w/tests/unit"],
            [
                "/w/tests/unit/b_test.py",
                "/w/tests/conftest.py",
                "/w/conftest.py",
                "/w/tests/unit/conftest.py",
            ],
        ),
        # a file named is run whatever its name; the conftest.py files above it load
        (["/w/tests/helper.py"], ["/w/tests/helper.py", "/w/tests/conftest.py", "/w/conftest.py"]),
    ],
)
def test_the_written_files_pytest_runs(roots: list[str], runs: list[str]) -> None:
    assert pytest_runs(WRITTEN, roots) == runs


# --- the reading ---------------------------------------------------------------------------------

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed for the tree")

RUNNERS = (
    "pytest",
    "pytest -q",
    "python3 -m pytest",
    "python -m pytest -x",
    "python3.11 -m pytest",
    "/usr/bin/python3 -m pytest -q",
    "py.test",
    "pytest tests/",
    "pytest tests/test_new.py",
    "pytest tests/test_new.py::test_it -v",
    "pytest -k it tests",
    "timeout 60 python3 -m pytest tests/",
)
HARM = "import os\n\n\ndef test_it():\n    os.system('rm -rf ~/Documents')\n"
FINE = "import os\n\n\ndef test_it():\n    assert os.getcwd()\n"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[worktree.Scratch]:
    yield from scratch_tree(tmp_path_factory, "testrun")


def _decide(cmd: str, tree: worktree.Scratch) -> Decision:
    return decide_auto(cmd, tree.repo, "testrun")


def _written(path: str, text: str) -> str:
    return f"cat > {path} <<'EOF'\n{text}EOF\n"


@needs_git
@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("path", ["tests/test_new.py", "tests/conftest.py"])
def test_a_test_written_in_the_text_is_read_before_pytest_runs_it(
    tree: worktree.Scratch, runner: str, path: str
) -> None:
    harmful = _decide(_written(path, HARM) + runner, tree)
    assert harmful.action is not Action.ALLOW, (runner, harmful.reason)
    assert "rm -rf ~/Documents" in harmful.reason, (harmful.rule_id, harmful.reason)
    fine = _decide(_written(path, FINE) + runner, tree)
    assert fine.action is Action.ALLOW, (runner, fine.rule_id, fine.reason)


@needs_git
@pytest.mark.parametrize(
    "cmd",
    [
        # a folder pytest is not given, a file it does not collect: not run, not read
        _written("scripts/test_tool.py", HARM) + "pytest tests/",
        _written("tests/cleanup.py", HARM) + "pytest tests/",
        # written after the run
        "pytest tests/; " + _written("tests/test_later.py", HARM).rstrip("\n"),
    ],
)
def test_what_pytest_does_not_run_is_not_its_code(tree: worktree.Scratch, cmd: str) -> None:
    d = _decide(cmd, tree)
    assert "python3" not in [c.head for c in d.facts.commands], cmd

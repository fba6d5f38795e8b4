"""Which files written earlier in the same text a test runner runs (issue 32: the agent's own work).

``cat > tests/test_x.py <<EOF … EOF; python3 -m pytest tests/`` runs the test file it just wrote:
the reader reads it before the run is judged, as it reads a script written and then run.
:func:`pytest_runs` is pytest's collection over the written files only (the tree's own test
files are the project's code, which the runner's knowledge gap stands for): a file named on the
command line (a node id's file part); a test file (``test_*.py``, ``*_test.py``) under a folder
named, or under the working folder when none is; and every ``conftest.py`` pytest loads for those
folders (in them, under them, and in the folders above them, where its root folder may lie).
Reading a file pytest would not run only adds scrutiny, so the selection errs that way.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterable, Sequence
from typing import Final

# pytest's options (and the common plugins') whose value is the next word, not a path to collect.
PYTEST_VALUE_OPTS: Final = frozenset(
    {
        "-k",
        "-m",
        "-o",
        "-c",
        "-p",
        "-W",
        "-r",
        "-n",
        "--rootdir",
        "--deselect",
        "--ignore",
        "--ignore-glob",
        "--confcutdir",
        "--basetemp",
        "--junitxml",
        "--junit-xml",
        "--tb",
        "--maxfail",
        "--durations",
        "--cov",
        "--cov-report",
        "--log-level",
        "--log-cli-level",
        "--log-file",
        "--override-ini",
        "--config-file",
        "--import-mode",
        "--capture",
        "--color",
        "--dist",
        "--numprocesses",
        "--timeout",
        "--reruns",
    }
)
_TEST_FILES: Final = ("test_*.py", "*_test.py")


def pytest_operands(args: Sequence[str]) -> list[str]:
    """The paths pytest is given in ``args`` (node ids cut to their file: ``t.py::test_a``)."""
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "--":
            continue
        if a.startswith("-"):
            skip = a in PYTEST_VALUE_OPTS
            continue
        out.append(a.split("::", 1)[0])
    return out


def pytest_runs(written: Iterable[str], roots: Sequence[str]) -> list[str]:
    """The paths of ``written`` (absolute, normalised) pytest runs when given ``roots`` (absolute,
    normalised: its operands, or the working folder), in ``written``'s order."""
    out: list[str] = []
    for path in written:
        if not path.endswith(".py"):
            continue
        folder, name = posixpath.split(path)
        for root in roots:
            if path == root:
                out.append(path)
                break
            under = path.startswith(root.rstrip("/") + "/")
            if under and any(fnmatch.fnmatchcase(name, p) for p in _TEST_FILES):
                out.append(path)
                break
            if name == "conftest.py" and (under or _above(folder, root)):
                out.append(path)
                break
    return out


def _above(folder: str, root: str) -> bool:
    """Whether ``folder`` is ``root``'s folder or one above it."""
    return root == folder or root.startswith(folder.rstrip("/") + "/")

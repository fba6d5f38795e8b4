"""benchmarks/pty_enter.py's before/after (issue 28): the temporary checkout of the commit before
the issue, and the S14 rows run_all writes from its figures. No timing is asserted."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))

import pty_enter  # noqa: E402
import run_all  # noqa: E402


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.slow
def test_the_before_checkout_is_made_from_the_commit_and_removed_after(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "f").write_text("then\n")
    _git(repo, "add", "f")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "then")
    then = _git(repo, "rev-parse", "--short", "HEAD")
    (repo / "f").write_text("now\n")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "now")

    with pty_enter.before_checkout(then, str(repo)) as (path, why):
        assert path is not None and why == ""
        assert Path(path, "f").read_text() == "then\n"
        assert path in _git(repo, "worktree", "list")
    assert not Path(path).exists()
    assert path not in _git(repo, "worktree", "list")
    assert (repo / "f").read_text() == "now\n"

    with pty_enter.before_checkout("0123456789abcdef", str(repo)) as (path, why):
        assert path is None
        assert why == "commit 0123456789abcdef is not in this repository"


def test_the_s14_rows_show_before_and_after_or_say_why_not() -> None:
    figures = {
        "before": "d58fd64",
        "bash_plain_ms": 0.3,
        "bash_gated_ms": 3.4,
        "bash_added_ms": 3.1,
        "bash_before_ms": 22.9,
        "bash_before_added_ms": 22.6,
    }
    rows = run_all.s14_rows({"pty_enter": {"status": "ok", "result": figures, "size": "n"}})
    enter = [r for r in rows if "Enter-to-prompt" in r.figure]
    assert [r.result for r in enter] == ["PASS", "–"]
    assert "gated 3.40 ms; before issue 28 (d58fd64) 22.90 ms" in enter[0].spread
    assert enter[1].median == "22.60 ms" and "d58fd64" in enter[1].figure

    missing = {"before": "d58fd64", "before_missing": "commit d58fd64 is not in this repository"}
    figures = {k: v for k, v in figures.items() if not k.startswith("bash_before")} | missing
    rows = run_all.s14_rows({"pty_enter": {"status": "ok", "result": figures, "size": "n"}})
    enter = [r for r in rows if "Enter-to-prompt" in r.figure]
    assert len(enter) == 1
    assert enter[0].spread.endswith("no before figure: commit d58fd64 is not in this repository")

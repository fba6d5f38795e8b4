"""The realistic working tree the agent-work tests decide in, and one decision there.

Both agent-work test modules decide at ``auto`` with the builtin rater, as
``benchmarks/agent_work.py`` does, with ``HOME`` pointed at the tree's scratch home for the
module's lifetime (the rater judges paths under ``~`` by where they are).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from gatesh._types import Decision, Rung
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.rater import make_rater
from gatesh.session import SessionState
from gatesh.testing import worktree

CONFIG = default()


def scratch_tree(factory: pytest.TempPathFactory, name: str) -> Iterator[worktree.Scratch]:
    """A scratch working tree (and home) for a module-scoped fixture; ``HOME`` is restored after."""
    scratch = worktree.build(str(factory.mktemp(name)))
    old = os.environ.get("HOME")
    os.environ["HOME"] = scratch.home
    try:
        yield scratch
    finally:
        if old is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = old


def decide_auto(cmd: str, cwd: str, session: str) -> Decision:
    """``cmd`` decided at ``auto`` with the builtin rater in ``cwd``, nothing executed."""
    return decide(
        cmd,
        cwd=cwd,
        config=CONFIG,
        session=SessionState(id=session),
        rater=make_rater(CONFIG, "builtin"),
        rung=Rung.AUTO,
    )

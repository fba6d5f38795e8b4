"""``auto`` with a key: the builtin first, the model only where the builtin is not sure (S4).

The builtin stage rates every command. Its verdict stands with no model call when it is ``attack``,
or ``safe`` on complete knowledge (:attr:`gatesh.Verdict.complete`: no gap in what the builtin saw
and models) with no floor standing over it — or ``safe`` with no floor whose every gap the boundary
the command will run in contains (:mod:`gatesh.boundary.contain`: only while the pipeline says the
command runs inside a boundary this kernel enforces). Everything else — a safe verdict with a gap, a floor,
``destructive``, ``catastrophic``, a builtin that could not assess — is asked of the model stage.

Guarantees of :meth:`CascadeRater.rate`:

- never milder than the builtin stage: the model's answer may raise the builtin's outcome, never
  lower it (so a model that answers ``safe`` to everything leaves the gate exactly as strict as
  the builtin alone); a floor is applied by the pipeline after the rating, whatever it is;
- fail closed: a model stage that fails leaves ``destructive`` with the S4 cause ("Could not
  assess this command: …") unless the builtin found worse, which stands;
- only the model's answers are cached (by the model backend, keyed by what the model was shown);
  the builtin stage is rated afresh every time, so a change in the working tree is seen;
- never raises: an error of ours is a fail-closed verdict.

The verdict carries a :class:`gatesh.Cascade` record: which stage decided, why the model was or
was not asked, the builtin stage's verdict and the model's answer, for ``explain`` and the audit log.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from gatesh._types import Asked, Cascade, CascadeStage, Facts, Outcome, Verdict

if TYPE_CHECKING:
    from gatesh.rater import Rater

__all__ = ["ASKABLE", "CascadeRater", "asked_for", "combine"]

#: The cases a user may have the model asked about (``rater.ask_model``); all by default.
ASKABLE: Final[tuple[Asked, ...]] = (
    Asked.UNKNOWN,
    Asked.FLOOR,
    Asked.DESTRUCTIVE,
    Asked.CATASTROPHIC,
)

_BY_OUTCOME: Final = {
    Outcome.DESTRUCTIVE: Asked.DESTRUCTIVE,
    Outcome.CATASTROPHIC: Asked.CATASTROPHIC,
}


def asked_for(first: Verdict, facts: Facts) -> tuple[Asked, str]:
    """Whether the builtin stage's verdict ``first`` on ``facts`` is asked of the model, and why
    (one sentence)."""
    if first.fail_cause:
        return Asked.UNKNOWN, f"the builtin could not assess it ({first.reason})"
    if first.outcome is Outcome.ATTACK:
        rule = f" ({first.findings[0].rule_id})" if first.findings else ""
        return Asked.ATTACK, f"the builtin found an attack{rule}, which stands without the model"
    if first.outcome is not Outcome.SAFE:
        return _BY_OUTCOME[first.outcome], (
            f"the builtin rated it {first.outcome.value}; the model may raise that, never lower it"
        )
    if first.gaps and not facts.floor_notes:
        from gatesh.boundary import contain

        held = contain.active()
        if held is not None and contain.contained(first.gaps):
            return Asked.CONTAINED, f"contained by the boundary: {held.why()}"
    if first.gaps:
        return (
            Asked.UNKNOWN,
            f"the builtin's safe verdict is not on complete knowledge: {first.gaps[0].reason}",
        )
    if facts.floor_notes:
        return Asked.FLOOR, "a floor stands over the builtin's safe verdict; the model may raise it"
    return Asked.COMPLETE, "the builtin's safe verdict rests on complete knowledge"


def combine(first: Verdict, answer: Verdict, asked: Asked, why: str) -> Verdict:
    """The cascade's verdict from the builtin's ``first`` and the model's ``answer`` (S4).

    The outcome is the worse of the two. The model decides when it raised the builtin, or agreed
    with a safe one (or with a builtin that could not assess: its rating is then the one obtained);
    the builtin decides when the model agreed with its non-safe verdict (its rule
    and remedy are the ones cited) or answered milder (a model never lowers the builtin). A model
    that failed leaves the fail-closed ``destructive`` verdict, unless the builtin found worse.
    """
    duration = first.duration_ms + answer.duration_ms

    def record(decided: CascadeStage, note: str = "") -> Cascade:
        return Cascade(decided=decided, asked=asked, why=why + note, builtin=first, model=answer)

    if answer.fail_cause:
        if first.outcome.rank > Outcome.DESTRUCTIVE.rank:
            return dataclasses.replace(
                first,
                duration_ms=duration,
                cascade=record(CascadeStage.BUILTIN, f"; the model stage failed ({answer.reason})"),
            )
        return dataclasses.replace(
            answer,
            duration_ms=duration,
            findings=first.findings,
            gaps=first.gaps,
            cascade=record(CascadeStage.MODEL),
            undo=first.undo,
        )
    same = answer.outcome is first.outcome
    if answer.outcome.rank > first.outcome.rank or (
        same and (first.outcome is Outcome.SAFE or first.fail_cause)
    ):
        return dataclasses.replace(
            answer,
            duration_ms=duration,
            gaps=first.gaps,
            cascade=record(CascadeStage.MODEL),
            undo=first.undo,  # the builtin's safe verdict may rest on a snapshot (S17)
        )
    note = (
        ""
        if same
        else (
            f"; the model answered {answer.outcome.value}, and a model answer never lowers the builtin's"
        )
    )
    return dataclasses.replace(
        first, duration_ms=duration, cascade=record(CascadeStage.BUILTIN, note)
    )


class CascadeRater:
    """The ``auto`` rater with a key: ``builtin`` first, ``model`` where the builtin is not sure.
    Satisfies ``gatesh.rater.Rater``. ``ask`` is the set of cases the model is asked about
    (:data:`ASKABLE` by default); a case left out stands on the builtin's verdict alone."""

    name = "cascade"

    def __init__(self, builtin: Rater, model: Rater, ask: Iterable[Asked] = ASKABLE) -> None:
        self.builtin = builtin
        self.model_stage = model
        self.model = model.model
        self.ask = frozenset(ask)

    def rate(self, facts: Facts, *, cwd: str) -> Verdict:
        """The cascade's verdict for ``facts``: see the module docstring. Never raises."""
        start = time.perf_counter()
        try:
            return self._rate(facts, cwd)
        except Exception as exc:  # a bug of ours fails closed, never allows
            return Verdict(
                outcome=Outcome.DESTRUCTIVE,
                reason=f"Could not assess this command: error (internal {type(exc).__name__}).",
                backend=self.name,
                model=self.model,
                fail_cause="error",
                duration_ms=(time.perf_counter() - start) * 1000,
            )

    def _rate(self, facts: Facts, cwd: str) -> Verdict:
        first = self.builtin.rate(facts, cwd=cwd)
        asked, why = asked_for(first, facts)
        if asked.asks and asked not in self.ask:
            asked, why = Asked.LEFT, f"rater.ask_model leaves this to the builtin ({why})"
        if not asked.asks:
            return dataclasses.replace(
                first, cascade=Cascade(CascadeStage.BUILTIN, asked, why, builtin=first)
            )
        return combine(first, self.model_stage.rate(facts, cwd=cwd), asked, why)

    def health_notice(self) -> str | None:
        """The model stage's notice after repeated failures (S4); the builtin stage has none."""
        return self.model_stage.health_notice()

"""``gatesh explain`` and ``gatesh eval``: the pipeline as a dry run. Nothing is ever executed.

``explain`` shows the reading, each layer's own finding (computed independently, so a layer after
the deciding one is still shown) and the decision. ``eval`` runs ``decide`` over a JSONL corpus,
each row in a fresh session, and counts actions per label.

Both are transports like any other: they decide with ``pipeline.decide`` and finish with
``gatesh.finish`` (as a dry run: nobody is asked, nothing is written), so what they show is what
a real surface would decide and record; ``explain --json`` includes that audit line.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict, cast

from gatesh import _paths
from gatesh._errors import EXIT_ASKED, EXIT_OK, EXIT_REFUSED
from gatesh._json import plain
from gatesh._types import (
    Action,
    AlignmentResult,
    Context,
    Decision,
    Facts,
    Finding,
    Outcome,
    Rung,
    Stage,
    Verdict,
)
from gatesh.audit import cascade_record
from gatesh.audit_record import CascadePart, DecisionRecord, RaterPart, RulingRecord
from gatesh.boundary.compute import Network
from gatesh.boundary.contain import Containment, contained
from gatesh.boundary.contain import here as contain_here
from gatesh.config import Config, load_config
from gatesh.finish import Finished, decide_and_finish, dry_run, now
from gatesh.pipeline import LAYERS, LayerFinding, decide
from gatesh.rater import BACKENDS, Rater, backend_name, make_rater
from gatesh.session import SessionState
from gatesh.undo.guard import Forecast, foresee, policy_for

RISKY, BENIGN = "risky", "benign"


class CorpusRow(TypedDict):
    """A row of an ``eval`` corpus, as read from its JSONL file (other members are kept as read
    and written back with ``--misses``)."""

    cmd: str
    label: NotRequired[str]


@dataclass(frozen=True)
class Summary:
    """The decision, as ``explain --json`` shows it."""

    action: Action
    stage: Stage
    outcome: Outcome | None
    reason: str
    remedy: str
    rule_id: str
    rung: Rung
    message: str
    notice: str
    to_person_reason: str
    model_call: RaterPart | None  # the model request behind the verdict, if one was made
    cascade: CascadePart | None
    verdict: Verdict | None
    alignment: AlignmentResult | None
    counters: Mapping[str, int]


@dataclass(frozen=True)
class Rules:
    """How many kernel rules a boundary has, by kind."""

    write: int
    read: int


@dataclass(frozen=True)
class BoundaryView:
    """The boundary the command would run in through ``gatesh -c`` (S16), as explain shows it."""

    id: str
    abi: int
    writable: tuple[str, ...]
    rules: Rules
    unreadable: tuple[str, ...]
    readable_stores: tuple[str, ...]
    kept_out: tuple[str, ...]
    network: Network
    limits: Mapping[str, int]
    tmpdir: str
    sealed_tree: bool
    missing: tuple[str, ...]  # protections this kernel does not enforce
    contained: str  # why the boundary counts as knowledge for this verdict ("" when it does not)


@dataclass(frozen=True)
class NoBoundary:
    """The command would run, in no boundary: ``none`` says why."""

    none: str


@dataclass(frozen=True)
class Explanation:
    """``explain --json``: one object, encoded once (:func:`gatesh._json.plain`)."""

    decision: Summary
    undo: Forecast | None  # what the undo snapshot would do
    layers: Mapping[str, LayerFinding]
    facts: Facts
    audit: DecisionRecord | RulingRecord | None  # the line a real surface would write
    boundary: BoundaryView | NoBoundary | None


def _checker(config: Config, backend: str) -> Any:
    from gatesh import alignment, alignment_model

    if backend in ("anthropic", "cascade"):
        return alignment_model.make_checker(config, "anthropic")
    return alignment.BuiltinChecker()


def layers(facts: Facts, config: Config, cwd: str) -> dict[str, LayerFinding]:
    """Each policy layer's own finding for ``facts``, whatever stage decided (a list entry as the
    person wrote it): the pipeline's layers, in its order, asked as it asks them."""
    paths = _paths.current()
    return {layer.name: layer.find(facts, config, paths, cwd) for layer in LAYERS}


class _Explained:
    """``explain`` as a surface of the one path (:func:`gatesh.finish.decide_and_finish`): the
    decision with undo and, when it rests on a snapshot, without; finished as a dry run."""

    def __init__(self, command: str, cwd: str, rung: Rung | None, backend: str | None) -> None:
        self.command, self.cwd, self.rung, self.backend = command, cwd, rung, backend
        self.used: Config | None = None  # the config it was decided under; None: invalid
        self.without: Decision | None = None
        # As `gatesh -c` decides: knowing the command runs inside its boundary, where this kernel
        # enforces one (gatesh.boundary.contain); None without.
        self.held: Containment | None = None

    def config(self) -> Config:
        return load_config(self.cwd)

    def hold(self) -> AbstractAsyncContextManager[object]:
        return contextlib.nullcontext()

    async def decide(self, config: Config) -> Decision:
        backend = backend_name(config) if self.backend in (None, "auto") else str(self.backend)
        rater, checker = make_rater(config, backend), _checker(config, backend)
        policy = policy_for(config, _paths.current().state_dir)
        self.held = held = contain_here(config.boundary.enabled)

        def decided(undo: bool) -> Decision:
            return decide(
                self.command,
                cwd=self.cwd,
                config=config,
                rung=self.rung,
                rater=rater,
                checker=checker,
                undo=policy if undo else None,
                contain=held,
            )

        decision = decided(True)
        # S17: a decision that rests on a snapshot is also shown as it is without one (the
        # snapshot may be skipped when the command runs: over a budget, git failing).
        self.without = decided(False) if decision.undo else None
        return decision

    async def finish(self, decision: Decision, config: Config | None) -> Finished:
        self.used = config
        return dry_run(decision, state=SessionState(id="explain"), cwd=self.cwd)


def explain_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="gatesh explain",
        description="Dry run: show how gatesh reads COMMAND, each layer's finding and the action. "
        "Nothing is executed.",
        epilog="Exit status: 0 when the command would run, 126 when it would be refused (denied, "
        "refused by a rule, rejected or halted), 3 when a person would decide it; 1 when "
        "gatesh failed, 2 for bad usage.",
    )
    parser.add_argument("command", help="the command line, as one argument")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rung", choices=[r.value for r in Rung], help="rung to decide at")
    parser.add_argument("--cwd", default=None, help="working directory to decide in")
    parser.add_argument("--backend", choices=["auto", *BACKENDS], help="rater backend")
    args = parser.parse_args(argv)
    cwd = os.path.abspath(args.cwd or os.getcwd())
    here = _Explained(args.command, cwd, Rung(args.rung) if args.rung else None, args.backend)
    done = now(decide_and_finish(args.command, cwd, here))
    decision, config = done.decision, here.used
    if config is None:  # an invalid configuration: the refusal every surface gives, no layers
        undo: Forecast | None = None
        found: dict[str, LayerFinding] = {}
        bounded = None
    else:
        state_dir = _paths.current().state_dir
        undo = foresee(decision, cwd=cwd, config=config, state_dir=state_dir, without=here.without)
        found = layers(decision.facts, config, cwd)
        bounded = _boundary(decision, cwd, config, here.held)
    if args.json:
        shown = Explanation(_summary(decision), undo, found, decision.facts, done.record, bounded)
        print(json.dumps(plain(shown), ensure_ascii=False))
    else:
        lines = _undo_lines(undo) if undo is not None else ""
        sys.stdout.write(_human(decision, found, here.held) + lines + _boundary_lines(bounded))
    return exit_status(done.action)


def exit_status(action: Action) -> int:
    """What ``gatesh explain`` exits with for the action the command would get: a script can
    test it (0 runs, 126 refused, 3 a person decides)."""
    if action is Action.ALLOW:
        return EXIT_OK
    if action is Action.ESCALATE:
        return EXIT_ASKED
    return EXIT_REFUSED


def _undo_lines(undo: Forecast) -> str:
    """What the undo snapshot does for this command (S17), for the human explanation."""
    from gatesh.audit import fold_home
    from gatesh.render import neutralise

    if not undo.enabled:
        return "undo: off (undo.enabled = false): no snapshot, losses judged without undo\n"
    if not undo.snapshot:
        return "undo: no snapshot (nothing it runs may write a work tree or a file it names)\n"
    where = [fold_home(t) for t in undo.trees or ()] + [
        fold_home(p) + " (a copy)" for p in undo.outside or ()
    ]
    lines = [f"undo: a snapshot is taken before it runs, of {', '.join(where)}"]
    if undo.rests_on:
        without = undo.without.value if undo.without is not None else "?"
        lines.append(
            "undo: it runs because that snapshot holds what it loses; if the snapshot is skipped "
            "(over undo.max_bytes or undo.max_seconds, or git fails) it is judged without undo: "
            f"{without.upper()}"
        )
    for root, why in (undo.last_skipped or {}).items():
        lines.append(f"undo: the last snapshot of {fold_home(root)} was skipped: {neutralise(why)}")
    return "\n".join(lines) + "\n"


def _boundary(
    decision: Decision, cwd: str, config: Config, held: Containment | None = None
) -> BoundaryView | NoBoundary | None:
    """The boundary the command would run in through ``gatesh -c`` (S16), as explain shows it:
    None when it would not run; ``{"none": why}`` when it would run in no boundary."""
    if decision.action is not Action.ALLOW:
        return None
    from gatesh.boundary import holds
    from gatesh.boundary.compute import boundary_for

    here = holds.state(config.boundary.enabled)
    b = boundary_for(decision, cwd, config.boundary, _paths.current())
    if b is None:
        return NoBoundary(here.why_none)
    return BoundaryView(
        id=b.id,
        abi=b.abi,
        writable=tuple(b.writable),
        rules=Rules(write=len(b.write), read=len(b.read)),
        unreadable=tuple(b.unreadable),
        readable_stores=tuple(b.readable_stores),
        kept_out=tuple(g.value for g in b.kept_out),
        network=b.network,
        limits=b.limits.wire(),
        tmpdir=b.tmpdir,
        sealed_tree=b.sealed_tree,
        missing=tuple(p.id for p in holds.PROTECTIONS if not here.holds(p.id)),
        contained=_contained_why(decision, held),
    )


def _contained_why(decision: Decision, held: Containment | None) -> str:
    """Why the boundary counts as knowledge for this verdict ("" when it does not:
    :mod:`gatesh.boundary.contain`)."""
    v = decision.verdict
    if held is None or v is None:
        return ""
    gaps = v.cascade.builtin.gaps if v.cascade is not None else v.gaps
    return held.why() if contained(gaps) else ""


def _boundary_lines(b: BoundaryView | NoBoundary | None) -> str:
    if b is None:
        return ""
    if isinstance(b, NoBoundary):
        return f"boundary: none ({b.none})\n"
    lim = b.limits
    out = [
        f"boundary: {b.id} (Landlock ABI {b.abi}, {b.rules.write + b.rules.read + 1} rules)",
        "  writes      " + ", ".join(b.writable),
        "  never       " + ", ".join(b.kept_out),
        f"  unreadable  {len(b.unreadable)} credential stores"
        + (
            f" (readable for this command: {', '.join(b.readable_stores)})"
            if b.readable_stores
            else ""
        ),
        f"  network     {'open' if b.network.open else 'closed'}: {b.network.why}",
        "  scopes      signals and abstract Unix sockets stay inside",
        f"  limits      {lim['nproc']} processes, {lim['data'] >> 20} MiB of memory, "
        f"{lim['fsize'] >> 20} MiB per file, {lim['cpu']} s CPU",
    ]
    if b.tmpdir:
        out.append(f"  TMPDIR      {b.tmpdir} (a protected place lies in the temporary folders)")
    if b.missing:
        out.append("  not on this kernel: " + ", ".join(b.missing))
    if b.contained:
        out.append(f"  knowledge   what gatesh did not read is contained: {b.contained}")
    return "\n".join(out) + "\n"


def _summary(d: Decision) -> Summary:
    v = d.verdict
    return Summary(
        action=d.action,
        stage=d.stage,
        outcome=d.outcome,
        reason=d.reason,
        remedy=d.remedy,
        rule_id=d.rule_id,
        rung=d.rung,
        message=d.message,
        notice=d.notice,
        to_person_reason=d.to_person_reason,
        model_call=_model_call(v),
        cascade=cascade_record(v),
        verdict=v,
        alignment=d.alignment,
        counters=d.counters,
    )


def _model_call(v: Verdict | None) -> RaterPart | None:
    """The model request behind ``v``, if one was made (a cascade's model stage, or the model alone)."""
    call = v.cascade.model if v is not None and v.cascade is not None else v
    if call is None or call.backend == "builtin":
        return None
    return RaterPart(
        call.backend, call.model, round(call.duration_ms, 1), call.fail_cause, call.cached
    )


def _cascade_lines(v: Verdict, held: Containment | None = None) -> list[str]:
    """The cascade's stages for the human explanation: what each said, who decided and why."""
    from gatesh.render import neutralise

    c = v.cascade
    if c is None:
        if v.backend != "builtin" or v.fail_cause:
            return []
        if v.complete:
            return [
                f"  {'knowledge':<16} complete (with a key, this verdict stands without asking the model)"
            ]
        if held is not None and v.outcome is Outcome.SAFE and contained(v.gaps):
            return [
                f"  {'knowledge':<16} contained by the boundary (with a key, this verdict stands "
                "without asking the model): " + "; ".join(neutralise(g.reason) for g in v.gaps)
            ]
        return [
            f"  {'knowledge':<16} not complete (with a key, the model is asked): "
            + "; ".join(neutralise(g.reason) for g in v.gaps)
        ]
    b = c.builtin
    knowledge = (
        "complete knowledge"
        if b.complete
        else "not complete: " + "; ".join(neutralise(g.reason) for g in b.gaps)
        if b.gaps
        else "not complete"
    )
    out = [f"  {'cascade':<16} builtin stage: {b.outcome.value} ({knowledge})"]
    if c.model is None:
        out.append(f"  {'':<16} model stage: not asked — {neutralise(c.why)}")
    else:
        m = c.model
        state = (
            f"failed ({m.fail_cause})"
            if m.fail_cause
            else m.outcome.value + (" (cached)" if m.cached else "")
        )
        out.append(f"  {'':<16} model stage: asked — {neutralise(c.why)}")
        out.append(
            f"  {'':<16} model answered: {state}, {m.duration_ms:.1f} ms: {neutralise(m.reason)}"
        )
    out.append(f"  {'':<16} decided by the {c.decided.value} stage")
    return out


def _human(d: Decision, found: Mapping[str, LayerFinding], held: Containment | None = None) -> str:
    from gatesh.render import neutralise

    f = d.facts
    out = [f"command: {neutralise(f.text)}"]
    if f.harness:
        out.append(f"harness: {f.harness} wrapper peeled; its boilerplate is not rated")
    if f.justification:
        out.append(f"justification: {neutralise(f.justification)}")
    out.append(f"reading: {'readable' if f.readable else 'UNREADABLE: ' + f.unreadable}")
    for c in f.commands:
        extra: list[str] = [c.context.value] if c.context is not Context.TOP else []
        extra += [f"via {'/'.join(c.wrappers)}"] if c.wrappers else []
        extra += ["privileged"] if c.privileged else []
        extra += [f"writes {', '.join(t or '<dynamic>' for t in c.writes)}"] if c.writes else []
        head = c.head or "<dynamic head>"
        out.append(
            f"  - {head}: {neutralise(' '.join(c.words))}"
            + (f"  ({'; '.join(extra)})" if extra else "")
        )
    if f.hosts:
        out.append(f"hosts: {', '.join(f.hosts)}")
    for note in f.notes:
        out.append(f"note: {neutralise(note)}")
    out.append("layers:" if found else "layers: not asked (the configuration is invalid)")
    for name, value in found.items():
        out.append(f"  {name:<16} {_layer_text(value)}")
    v = d.verdict
    if v is not None:
        who = v.backend + (f" {v.model}" if v.model else "")
        out.append(
            f"  {'rater':<16} {v.outcome.value} ({who}, {v.duration_ms:.1f} ms): {v.reason}"
            + (f" — remedy: {v.remedy}" if v.remedy else "")
        )
        for finding in v.findings:
            out.append(
                f"  {'':<16}   {finding.rule_id} ({finding.outcome.value}): {finding.reason}"
            )
        out.extend(_cascade_lines(v, held))
    if d.alignment is not None:
        a = d.alignment
        out.append(
            f"  {'alignment':<16} {a.decision}{' (' + a.fail_cause + ')' if a.fail_cause else ''}: {a.reason}"
        )
    out.append(
        f"decision: {d.action.value.upper()} at stage {d.stage.value} (rung {d.rung.value})"
        + (f", outcome {d.outcome.value}" if d.outcome else "")
    )
    out.append(f"reason: {neutralise(d.reason)}")
    if d.to_person_reason:
        out.append(f"a person decides because {d.to_person_reason}")
    if d.notice:
        out.append(f"notice: {d.notice}")
    if d.message:
        out += ["message to the agent:", *("  " + line for line in d.message.splitlines())]
    return "\n".join(out) + "\n"


def _layer_text(value: LayerFinding) -> str:
    if isinstance(value, tuple):
        return "; ".join(f"{x.rule_id}: {x.reason}" for x in value) or "none"
    if value is None or value is False:
        return "no match" if value is None else "no"
    if isinstance(value, Finding):
        return f"{value.rule_id} ({value.outcome.value}): {value.reason}"
    return str(value)


def eval_rows(
    rows: list[CorpusRow], *, config: Config, rung: Rung, rater: Rater, checker: Any, cwd: str
) -> tuple[list[Decision], float]:
    """Decide every row in a fresh session; returns the decisions and the seconds taken."""
    start = time.perf_counter()
    out = [
        done.decision
        for done in finish_rows(
            rows, config=config, rung=rung, rater=rater, checker=checker, cwd=cwd
        )
    ]
    return out, time.perf_counter() - start


def finish_rows(
    rows: list[CorpusRow], *, config: Config, rung: Rung, rater: Rater, checker: Any, cwd: str
) -> list[Finished]:
    """Decide and finish (as a dry run) every row, each in a fresh session."""
    out = []
    for r in rows:
        command = str(r["cmd"])
        row = _EvalRow(command, cwd, config, rung, rater, checker)
        out.append(now(decide_and_finish(command, cwd, row)))
    return out


class _EvalRow:
    """One row of ``eval`` as a surface of the one path: a fresh session, the corpus's config,
    finished as a dry run."""

    def __init__(
        self, command: str, cwd: str, config: Config, rung: Rung, rater: Rater, checker: Any
    ) -> None:
        self.command, self.cwd, self._config = command, cwd, config
        self.rung, self.rater, self.checker = rung, rater, checker
        self.state = SessionState(id="eval")

    def config(self) -> Config:
        return self._config

    def hold(self) -> AbstractAsyncContextManager[object]:
        return contextlib.nullcontext()

    async def decide(self, config: Config) -> Decision:
        return decide(
            self.command,
            cwd=self.cwd,
            config=config,
            session=self.state,
            rater=self.rater,
            checker=self.checker,
            rung=self.rung,
        )

    async def finish(self, decision: Decision, config: Config | None) -> Finished:
        return dry_run(decision, state=self.state, cwd=self.cwd, surface="eval")


def eval_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="gatesh eval",
        description='Decide every row of a JSONL corpus ({"cmd": …, "label": …} per line), each '
        "in a fresh session, and count the actions per label. Nothing is executed.",
    )
    parser.add_argument("file", help="JSONL file (- for stdin)")
    parser.add_argument(
        "--rung", choices=[r.value for r in Rung], default=None, help="rung (default: config)"
    )
    parser.add_argument("--backend", choices=["auto", *BACKENDS], help="rater backend")
    parser.add_argument("--json", action="store_true", help="end with one JSON summary line")
    parser.add_argument(
        "--misses", metavar="FILE", help="write risky rows allowed and benign rows not allowed"
    )
    parser.add_argument("--cwd", default=None, help="working directory the commands are decided in")
    args = parser.parse_args(argv)
    cwd = os.path.abspath(args.cwd or os.getcwd())
    config = load_config(cwd)
    rung = Rung(args.rung) if args.rung else config.rung
    backend = backend_name(config) if args.backend in (None, "auto") else args.backend
    rows = _read_rows(args.file)
    decisions, seconds = eval_rows(
        rows,
        config=config,
        rung=rung,
        rater=make_rater(config, backend),
        checker=_checker(config, backend),
        cwd=cwd,
    )
    by_label: dict[str, Counter[str]] = defaultdict(Counter)
    misses = []
    for row, d in zip(rows, decisions, strict=True):
        label = str(row.get("label", "unknown"))
        by_label[label][d.action.value] += 1
        allowed = d.action is Action.ALLOW
        if (label == RISKY and allowed) or (label == BENIGN and not allowed):
            misses.append(
                {
                    **row,
                    "action": d.action.value,
                    "stage": d.stage.value,
                    "reason": d.reason,
                    "rule_id": d.rule_id,
                }
            )
    if args.misses:
        with open(args.misses, "w", encoding="utf-8") as f:
            for m in misses:
                f.write(json.dumps(m, ensure_ascii=False) + "\n")
    total = len(rows)
    per_second = total / seconds if seconds > 0 else 0.0
    actions = [a.value for a in Action]
    print(f"{total} commands at rung {rung.value} with the {backend} rater, {per_second:.0f}/s")
    print(f"{'label':<10}" + "".join(f"{a:>10}" for a in actions) + f"{'allowed':>10}")
    for label, counts in sorted(by_label.items()):
        n = sum(counts.values())
        print(
            f"{label:<10}"
            + "".join(f"{counts.get(a, 0):>10}" for a in actions)
            + f"{100 * counts.get('allow', 0) / n:>9.1f}%"
        )
    if args.json:
        print(
            json.dumps(
                {
                    "total": total,
                    "per_second": round(per_second, 1),
                    "by_label": {k: dict(v) for k, v in sorted(by_label.items())},
                }
            )
        )
    return 0


def _read_rows(path: str) -> list[CorpusRow]:
    stream = sys.stdin if path == "-" else open(path, encoding="utf-8", errors="surrogateescape")
    rows: list[CorpusRow] = []
    with stream:
        for n, line in enumerate(stream, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SystemExit(f"gatesh eval: {path}:{n}: not JSON ({exc.msg})") from exc
            if not isinstance(row, dict) or "cmd" not in row:
                raise SystemExit(f'gatesh eval: {path}:{n}: expected an object with a "cmd" field')
            rows.append(cast("CorpusRow", row))  # checked: an object with a "cmd" member
    return rows

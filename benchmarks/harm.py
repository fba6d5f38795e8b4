"""Harm measured: run each row of a corpus for real in a disposable jail and record what it did.

    python benchmarks/harm.py CORPUS.jsonl [--gate on|off] [--rung auto] [--jobs N]
                              [--timeout S] [--out ROWS.jsonl] [--json]
                              [--boundary on|off] [--boundary-limits K=N,…]
                              [--baseline ROWS.jsonl] [--harmed-only]
                              [--network-unread open|closed] [--no-baseline]

Every row runs in a fresh bubblewrap jail (gatesh.testing.jail) holding the same seeded world
(gatesh.testing.world): a HOME with canary credentials, gatesh installed by install.sh with every
hook, a repository with unpushed and uncommitted work and its bare remote, and a loopback internet
that records what it receives. Before the first row the jail is proved to hold (a write to the
host root fails, no address outside loopback is reachable, the limits are in force); without that
proof nothing runs. ``--gate off`` runs each row as ``bash -c ROW`` (git's hooks off too): the
baseline. ``--gate on`` runs each row twice, the baseline and ``gatesh -c ROW`` as a harness runs
it (nobody answers escalations), and judges the gated run against the baseline. After each run the
harm predicates (gatesh.testing.harm) are checked against the seed.

CORPUS.jsonl holds one object per line with ``cmd`` and ``label`` (``risky``, ``benign``, or
anything else: unlabelled). ``--out`` writes one JSON line per row::

    {"cmd", "label", "gate", "action", "exit", "harm": [predicates], "seconds", "why", "stderr",
     "baseline": {…} (gate on), "same_effects": bool (benign rows, gate on), "error"?}

``--boundary off`` switches gatesh's boundary off in the world's config (``boundary.enabled =
false``, S16): with ``--boundary on`` (the default) beside it, what the boundary adds to the gate.
``--boundary-limits K=N,…`` sets the boundary's limits in the world's config (``processes``,
``memory_mib``, ``file_mib``, ``cpu_s``): below the jail's own (256 MiB per file, 2 GiB of
resident memory), the bombs a gate allows meet the boundary's limits first, and each run's line
says where they stopped (``largest_file``, ``memory_kill``).
``--baseline ROWS.jsonl`` takes each row's gate-off run from an earlier ``--gate off --out`` of the
same corpus instead of running it again (the gate-off world does not depend on the boundary);
``--harmed-only`` then runs only the rows whose baseline harmed (the others cannot count).
``--network-unread open|closed`` sets ``boundary.network_unread`` in the world's config (the
network of code gatesh did not read, S16); without it gatesh's default holds. ``--no-baseline``
(gate on) runs no gate-off run at all: for runs that compare two gated runs with each other
(benchmarks/harm_boundary.py's still-runs step), whose lines then have no ``baseline``.

``--json`` ends the output with one summary object: ``{"rows", "risky": {"harmed", "harmless",
"refused", "no_harm_possible"}, "benign": {"ran", "refused"}, "by_predicate": {name: count}, …}``.
A risky row that harms nothing even with the gate off is "no harm possible here" and is left out
of the share. Exit status 0, or 1 when a row could not be run (a jail error) or the jail does not
hold, 2 for bad usage or a bad corpus.

Environment: GATESH_HARM_DIR (where the world template is kept; default /var/cache/gatesh-harm as
root, else ~/.cache/gatesh-harm), GATESH_HARM_UID (the host uid jails run as when started by root).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gatesh._types import Rung  # noqa: E402
from gatesh.testing import harm, jail, world  # noqa: E402
from gatesh.testing.observed import Observed  # noqa: E402

#: The Codex the world's hooks are trusted with, when the real-harness tests installed it.
try:
    from tests.harness import clis as _clis

    _CODEX: str | None = _clis.CLIS["codex"].path if _clis.CLIS["codex"].installed() else None
except Exception:  # no tests folder, or no codex: the Codex hooks are installed untrusted
    _CODEX = None

#: Paths of the gate's own bookkeeping, left out when a gated run's effects are compared with the
#: baseline's (the audit log grows only when the gate is on).
_GATE_OWN = (world.rel(world.HOME) + "/.local/state/gatesh/", "runtime/")


#: The start of a run's standard error kept in its line: enough for the error that stopped it
#: (gatesh's own notice about the boundary follows the command's output).
_STDERR_KEPT = 600


class CorpusError(Exception):
    """The corpus cannot be read (the message names the line)."""


@dataclass(frozen=True)
class Row:
    cmd: str
    label: str


def load(path: str) -> list[Row]:
    rows = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: {exc}") from exc
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise CorpusError(f"{path}:{n}: not JSON ({exc})") from exc
        if not isinstance(obj, dict) or not isinstance(obj.get("cmd"), str):
            raise CorpusError(f'{path}:{n}: an object with a "cmd" string is needed')
        label = obj.get("label", "unknown")
        rows.append(Row(obj["cmd"], label if isinstance(label, str) else "unknown"))
    return rows


# --- one run ----------------------------------------------------------------------------------------


def action_of(seen: Observed, gate: bool) -> str:
    """What the gate did with the row: the action of the first ``-c`` audit record written after
    the warm-up, which is the row's own check (its command may be the row with a harness's
    wrapper taken off; checks the row's own commands make come after it). "run" with the gate
    off; "unknown" when there is no such record (the row removed the audit log, say)."""
    if not gate:
        return "run"
    for record in seen.audit:
        if record.surface == "-c":
            return record.action
    return "unknown"


def effects(seen: Observed, predicates: Iterable[str]) -> dict[str, Any]:
    """What a run did, comparable between the baseline and the gated run."""
    changes = sorted(
        (c.path, c.kind.value) for c in seen.changes if not c.path.startswith(_GATE_OWN)
    )
    return {"exit": seen.exit_code, "changes": changes, "harm": sorted(predicates)}


def run_once(
    proof: jail.Proof, template: world.Template, cmd: str, gate: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the row's line for this run, its effects); the line has "error" when the jail failed."""
    started = time.monotonic()
    seen = jail.run_row(proof, world.job(template, cmd, gate=gate))
    seconds = round(time.monotonic() - started, 3)
    if seen.ok and (seen.warmup_exit != 0 or len(seen.daemons_before) != 1):
        # Every row starts from the same world: one daemon, started by the warm-up and seen by
        # the warden. Without it a row that stops the daemon would be judged against nothing.
        seen = Observed.failed(
            f"the warm-up `gatesh -c true` exited {seen.warmup_exit} with "
            f"{len(seen.daemons_before)} daemons running, not 1: {seen.warmup_stderr}"
        )
    if not seen.ok:
        line = {"action": "error", "exit": None, "harm": [], "seconds": seconds}
        line["error"] = seen.error[:2000]
        return line, {}
    verdict = harm.judge(template.seed, seen)
    names = [p.value for p in verdict.predicates]
    line = {
        "action": action_of(seen, gate),
        "exit": seen.exit_code,
        "harm": names,
        "seconds": seconds,
        "why": verdict.why(),
        "stderr": seen.stderr[:_STDERR_KEPT],
        # Where an exhaustion stopped: the largest file the row left, the memory watchdog.
        "largest_file": max((c.size for c in seen.changes if c.type == "f"), default=0),
        "memory_kill": seen.memory_kill,
    }
    return line, effects(seen, names)


def run_row(
    proof: jail.Proof,
    template: world.Template,
    row: Row,
    gate: str,
    baseline: tuple[dict[str, Any], dict[str, Any]] | None = None,
    *,
    no_baseline: bool = False,
) -> dict[str, Any]:
    """The row's line: its gate-off run (``baseline``, when given, instead of running it), and
    with the gate on its gated run judged against it (``no_baseline``: the gated run alone)."""
    out: dict[str, Any] = {"cmd": row.cmd, "label": row.label, "gate": gate}
    if no_baseline and gate == "on":
        gated, _ = run_once(proof, template, row.cmd, gate=True)
        return out | gated
    base, base_effects = baseline or run_once(proof, template, row.cmd, gate=False)
    if gate == "off":
        out.update(base)
        out["effects"] = base_effects  # what --baseline compares a later gated run against
        return out
    gated, gated_effects = run_once(proof, template, row.cmd, gate=True)
    out.update(gated)
    out["baseline"] = base
    if row.label == "benign":
        out["same_effects"] = bool(base_effects) and gated_effects == base_effects
    if "error" in base and "error" not in out:
        out["error"] = "baseline: " + base["error"]
    return out


# --- the summary -------------------------------------------------------------------------------------


def classify(line: Mapping[str, Any], gate: str) -> str:
    """A risky (or unlabelled) row's class: harmed, harmless, refused or no_harm_possible."""
    harmed = bool(line.get("harm"))
    if gate == "off":
        return "harmed" if harmed else "no_harm_possible"
    if not harmed and not (line.get("baseline") or {}).get("harm"):
        return "no_harm_possible"
    if harmed:
        return "harmed"
    return "harmless" if line.get("action") == "allow" else "refused"


def _ran(line: Mapping[str, Any], gate: str) -> bool:
    return gate == "off" or line.get("action") == "allow"


def summarise(lines: list[dict[str, Any]], gate: str) -> dict[str, Any]:
    """The summary object (keys as the issue names them, and a few more)."""
    ok = [ln for ln in lines if "error" not in ln]
    risky = {"harmed": 0, "harmless": 0, "refused": 0, "no_harm_possible": 0}
    benign = {"ran": 0, "refused": 0}
    unlabelled = {**risky, "ran": 0}
    by_predicate = {p.value: 0 for p in harm.Predicate}
    by_action: dict[str, int] = {}
    for ln in ok:
        for name in ln["harm"]:
            by_predicate[name] += 1
        by_action[ln["action"]] = by_action.get(ln["action"], 0) + 1
        if ln["label"] == "benign":
            benign["ran" if _ran(ln, gate) else "refused"] += 1
        elif ln["label"] == "risky":
            risky[classify(ln, gate)] += 1
        else:
            unlabelled[classify(ln, gate)] += 1
            unlabelled["ran"] += _ran(ln, gate)
    possible = len([ln for ln in ok if ln["label"] == "risky"]) - risky["no_harm_possible"]
    seconds = [float(ln["seconds"]) for ln in ok]
    out: dict[str, Any] = {
        "rows": len(lines),
        "gate": gate,
        "risky": risky,
        "benign": benign,
        "unlabelled": unlabelled,
        "by_predicate": by_predicate,
        "by_action": dict(sorted(by_action.items())),
        "errors": len(lines) - len(ok),
        "risky_harm_share": round(risky["harmed"] / possible, 4) if possible else None,
        "benign_ran_share": round(benign["ran"] / sum(benign.values()), 4)
        if sum(benign.values())
        else None,
        "seconds_per_row": round(statistics.fmean(seconds), 3) if seconds else None,
        "same_effects": sum(1 for ln in ok if ln.get("same_effects")),
    }
    if gate == "on":
        base = [{**ln["baseline"], "label": ln["label"]} for ln in ok if "baseline" in ln]
        out["baseline"] = {k: v for k, v in summarise(base, "off").items() if k != "baseline"}
    return out


# --- the run -----------------------------------------------------------------------------------------


def _progress(total: int) -> Callable[[dict[str, Any]], None]:
    """A one-line progress report on a terminal (nothing otherwise)."""
    lock = threading.Lock()
    state = {"done": 0, "harmed": 0, "errors": 0, "start": time.monotonic()}
    tty = sys.stderr.isatty()

    def tick(line: dict[str, Any]) -> None:
        with lock:
            state["done"] += 1
            state["harmed"] += bool(line.get("harm"))
            state["errors"] += "error" in line
            if tty:
                per = (time.monotonic() - state["start"]) / state["done"]
                sys.stderr.write(
                    f"\rharm: {state['done']}/{total} rows, {state['harmed']} harmed, "
                    f"{state['errors']} errors, {per:.2f} s/row "
                )
                sys.stderr.flush()

    return tick


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="benchmarks/harm.py",
        description="Run each corpus row for real in a disposable jail and record what it did.",
    )
    ap.add_argument("corpus", metavar="CORPUS.jsonl")
    ap.add_argument("--gate", choices=("on", "off"), default="on")
    ap.add_argument("--rung", choices=[r.value for r in Rung], default=Rung.AUTO.value)
    ap.add_argument("--jobs", type=int, default=1, metavar="N", help="jails side by side")
    ap.add_argument("--timeout", type=float, default=20.0, metavar="S", help="per row")
    ap.add_argument("--out", metavar="ROWS.jsonl", help="one JSON line per row")
    ap.add_argument("--json", action="store_true", help="end with the summary as one JSON line")
    ap.add_argument(
        "--boundary",
        choices=("on", "off"),
        default="on",
        help="gatesh's boundary (S16) on or off in the world's config",
    )
    ap.add_argument(
        "--boundary-limits",
        default="",
        metavar="K=N,…",
        help=f"the boundary's limits in the world's config ({', '.join(world.LIMIT_KEYS)})",
    )
    ap.add_argument(
        "--baseline",
        metavar="ROWS.jsonl",
        help="each row's gate-off run from an earlier --gate off --out of this corpus",
    )
    ap.add_argument(
        "--harmed-only",
        action="store_true",
        help="with --baseline: run only the rows whose gate-off run harmed",
    )
    ap.add_argument(
        "--network-unread",
        choices=("open", "closed"),
        default="",
        help="boundary.network_unread in the world's config (default: gatesh's own)",
    )
    ap.add_argument(
        "--no-baseline", action="store_true", help="gate on: no gate-off run of each row"
    )
    args = ap.parse_args(argv)
    if args.jobs < 1 or args.timeout <= 0:
        ap.error("--jobs needs at least 1 and --timeout a positive number of seconds")
    limits: list[tuple[str, int]] = []
    for item in filter(None, args.boundary_limits.split(",")):
        key, _, value = item.partition("=")
        if key not in world.LIMIT_KEYS or not value.isdigit() or int(value) <= 0:
            ap.error(f"--boundary-limits: {item!r} is not K=N with K one of {world.LIMIT_KEYS}")
        limits.append((key, int(value)))
    try:
        rows = load(args.corpus)
        baselines = _baselines(args.baseline, rows) if args.baseline else {}
    except CorpusError as exc:
        print(f"harm: {exc}", file=sys.stderr)
        return 2
    if args.harmed_only:
        if not args.baseline:
            ap.error("--harmed-only needs --baseline")
        rows = [r for r in rows if r.cmd not in baselines or baselines[r.cmd][0].get("harm")]
    why_not = jail.missing()
    if why_not:
        print(f"harm: no jail can run here: {why_not}", file=sys.stderr)
        return 1
    try:
        spec = jail.JailSpec(python=jail.jail_python(), timeout_s=args.timeout)
        proof = jail.prove(spec, extra_write_targets=(str(ROOT),))
        workdir = world.default_workdir()
        print(f"harm: the jail holds; the world template in {workdir} …", file=sys.stderr)
        pip_env = {k: v for k, v in os.environ.items() if k.startswith("PIP_")}
        template = world.build(
            spec,
            workdir,
            str(ROOT),
            rung=args.rung,
            codex=_CODEX,
            pip_env=pip_env,
            boundary=args.boundary == "on",
            network_unread=args.network_unread,
            limits=tuple(limits),
        )
    except jail.JailUnsafe as exc:
        print(f"harm: {exc}", file=sys.stderr)
        return 1
    tick = _progress(len(rows))

    def one(row: Row) -> dict[str, Any]:
        line = run_row(
            proof, template, row, args.gate, baselines.get(row.cmd), no_baseline=args.no_baseline
        )
        tick(line)
        return line

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        lines = list(pool.map(one, rows))
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            for ln in lines:
                f.write(json.dumps(ln) + "\n")
    summary = summarise(lines, args.gate) | {
        "boundary": args.boundary,
        "network_unread": args.network_unread or "default",
    }
    if limits:
        summary["boundary_limits"] = dict(limits)
    for ln in lines:
        if "error" in ln:
            print(f"harm: error on {ln['cmd'][:80]!r}: {ln['error'][:300]}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary))
    else:
        print(_text(summary))
    return 1 if summary["errors"] else 0


def _baselines(path: str, rows: list[Row]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Each row's gate-off line and its effects, from an earlier ``--gate off --out`` run (by
    command; a row without one, or whose run failed there, runs its baseline again)."""
    got: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CorpusError(f"{path}: {exc}") from exc
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            ln = json.loads(line)
        except ValueError as exc:
            raise CorpusError(f"{path}:{n}: not JSON ({exc})") from exc
        if ln.get("gate") != "off" or "error" in ln or "effects" not in ln:
            continue
        base = {k: ln[k] for k in ("action", "exit", "harm", "seconds", "why") if k in ln}
        eff = dict(ln["effects"])
        eff["changes"] = [tuple(c) for c in eff.get("changes", ())]  # as effects() makes them
        got[ln["cmd"]] = (base, eff)
    return got


def _text(summary: Mapping[str, Any]) -> str:
    lines = [
        f"{summary['rows']} rows, gate {summary['gate']}, {summary['errors']} errors, "
        f"{summary['seconds_per_row']} s per row",
        f"risky: {summary['risky']}  (harm share {summary['risky_harm_share']})",
        f"benign: {summary['benign']}  (ran share {summary['benign_ran_share']})",
        "by predicate: " + ", ".join(f"{k} {v}" for k, v in summary["by_predicate"].items()),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

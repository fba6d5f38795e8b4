"""Harm with the boundary on and off (S16; issue 30 item 7): what the gate with its boundary lets
through, and whether ordinary work still runs inside it. Everything runs in benchmarks/harm.py's
jail, which proves it holds before the first row.

    python benchmarks/harm_boundary.py [--sample N] [--work M] [--jobs J] [--out DIR] [--timeout S]
                                       [--only harm|work] [--corpora A,B] [--gate-on-only]
                                       [--resume] [--network-unread open,closed]
                                       [--work-class all|unread]

1. **Harm**, on the project's bypass, tamper, generalisation, exhaustion (bombs) and network
   (exfiltration by code gatesh did not read) corpora
   (benchmarks/harm_corpora.py; ``--corpora`` picks some; every row, or an evenly spaced sample
   of N per corpus): each row once with the gate off (the
   baseline); then the rows that harmed there, with the gate on and gatesh's boundary on (where the
   kernel enforces it, what the boundary contains counts as knowledge: gatesh.boundary.contain)
   and with it off (``boundary.enabled = false``). Of the rows that harm with the gate off, the
   share that still harms with the gate on, by predicate.
2. **Still runs**, on a sample of M rows (default 100) each of the agent-work and tldr corpora
   (``$GATESH_CORPUS``): gate on, with the boundary off and on (no gate-off run: the two gated
   runs are compared with each other). Of the rows that ran with the boundary off (allowed, exit
   0), the share that still run with it on; and of the rows allowed whose program was found here
   (exit neither 126 nor 127), the share that end with the same exit status with it on; the
   others listed, with the start of their standard error.

``--network-unread open,closed`` runs every gate-on run with the boundary on once per setting of
``boundary.network_unread`` (S16; without it, gatesh's default): what closing the network of code
gatesh did not read costs ordinary work, and what opening it lets harm do. ``--work-class
unread`` keeps, of the agent-work and tldr corpora, only the rows that setting decides: allowed,
and running code gatesh did not read (:func:`gatesh.boundary.compute.network_for`'s ``unread``,
decided here as benchmarks/decision_dump.py decides, before the sample is taken).

``--only harm`` or ``--only work`` runs one of the two steps (the other is reported as not run).
``--gate-on-only`` leaves out, in the harm step, the gate-on run with the boundary off (the
comparison, not the figure). ``--resume`` takes a run's rows from its file in ``--out`` when an
earlier run there wrote it for the same rows (one jail per row is minutes of a loaded machine).
Prints the figures and ends with one JSON object. Exit status 1 when a harm run failed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import CORPUS  # noqa: E402

RISKY = ("bypass", "tamper", "generalisation", "exhaustion", "network")
WORK = ("agent_work", "tldr")


def _sample(rows: list[str], n: int) -> list[str]:
    if n <= 0 or len(rows) <= n:
        return rows
    step = len(rows) / n
    return [rows[int(i * step)] for i in range(n)]


def _unread(cmds: list[str]) -> list[bool]:
    """For each command: whether the gate allows it and its network is the one of code gatesh
    did not read (decided outside the jail, in the scratch tree of benchmarks/decision_dump.py,
    as a surface that confines what it runs: the jail's world decides the same way)."""
    import os
    import tempfile

    from gatesh._types import Action, Rung
    from gatesh.boundary.compute import network_for
    from gatesh.boundary.contain import here
    from gatesh.config import default
    from gatesh.pipeline import decide
    from gatesh.rater import make_rater
    from gatesh.session import SessionState
    from gatesh.testing import worktree

    config = default()
    rater = make_rater(config, "builtin")
    held = here()
    home = os.environ.get("HOME")
    out = []
    try:
        with tempfile.TemporaryDirectory(prefix="gatesh-harm-cls-") as root:
            scratch = worktree.build(root)
            os.environ["HOME"] = scratch.home
            for cmd in cmds:
                d = decide(
                    cmd,
                    cwd=scratch.repo,
                    config=config,
                    session=SessionState(id="harm-boundary"),
                    rater=rater,
                    checker=None,
                    rung=Rung.AUTO,
                    contain=held,
                )
                out.append(d.action is Action.ALLOW and network_for(d, config.boundary).unread)
    finally:
        if home is not None:
            os.environ["HOME"] = home
    return out


def _corpora(out: Path, n: int, work: int, work_class: str = "all") -> dict[str, Path]:
    """Write each corpus (sampled) as JSONL in ``out``; their paths by name. ``work_class``
    "unread": the work corpora's rows of :func:`_unread` only."""
    from harm_corpora import bypass, exhaustion, generalisation, network, tamper

    paths: dict[str, Path] = {}
    for name, rows in (
        ("bypass", bypass()),
        ("tamper", tamper()),
        ("generalisation", generalisation()),
        ("exhaustion", exhaustion()),
        ("network", network()),
    ):
        lines = _sample([json.dumps(r) for r in rows], n)
        paths[name] = out / f"{name}.jsonl"
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name in WORK:
        src = Path(CORPUS) / name / "commands.jsonl"
        if not src.exists():
            print(f"harm_boundary: {src} missing, skipped", file=sys.stderr)
            continue
        rows = []
        for line in src.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                label = r.get("label") if r.get("label") in ("benign", "risky") else "unknown"
                rows.append(json.dumps({"cmd": r["cmd"], "label": label}))
        if work_class == "unread":
            keep = _unread([json.loads(r)["cmd"] for r in rows])
            print(f"harm_boundary: {name}: {sum(keep)} of {len(rows)} rows run unread code")
            rows = [r for r, k in zip(rows, keep, strict=True) if k]
            name_out = f"{name}-unread"
        else:
            name_out = name
        paths[name] = out / f"{name_out}.jsonl"
        paths[name].write_text("\n".join(_sample(rows, work)) + "\n", encoding="utf-8")
    return paths


def _resumed(corpus: Path, out: Path, gate: str) -> dict[str, Any] | None:
    """The summary of an earlier run's rows in ``out``, when it holds every row of ``corpus``
    once, none of them failed, and it ran with the gate ``gate``; else None."""
    from harm import summarise

    try:
        lines = [json.loads(ln) for ln in out.read_text(encoding="utf-8").splitlines() if ln]
        wanted = [
            json.loads(ln)["cmd"] for ln in corpus.read_text(encoding="utf-8").splitlines() if ln
        ]
    except (OSError, ValueError, KeyError):
        return None
    if sorted(ln.get("cmd") for ln in lines) != sorted(set(wanted)) or any(
        "error" in ln or ln.get("gate") != gate for ln in lines
    ):
        return None
    print(f"harm_boundary: {out} resumed ({len(lines)} rows)", file=sys.stderr)
    return summarise(lines, gate) | {"exit_status": 0, "resumed": True}


def _harm(corpus: Path, out: Path, extra: list[str], args: argparse.Namespace) -> dict[str, Any]:
    if args.resume and "--harmed-only" not in extra:
        got = _resumed(corpus, out, extra[extra.index("--gate") + 1])
        if got is not None:
            return got
    argv = [
        sys.executable,
        str(HERE / "harm.py"),
        str(corpus),
        "--jobs",
        str(args.jobs),
        "--timeout",
        str(args.timeout),
        "--out",
        str(out),
        "--json",
        *extra,
    ]
    got = subprocess.run(argv, capture_output=True, text=True)
    last = got.stdout.strip().rpartition("\n")[2]
    try:
        summary = json.loads(last)
    except ValueError:
        raise SystemExit(f"harm_boundary: {' '.join(argv)} failed: {got.stderr[-2000:]}") from None
    summary["exit_status"] = got.returncode
    return summary


def _lines(path: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            ln = json.loads(line)
            out[ln["cmd"]] = ln
    return out


def _ran(ln: dict[str, Any] | None) -> bool:
    return (
        ln is not None and "error" not in ln and ln.get("action") == "allow" and ln.get("exit") == 0
    )


#: Exit statuses of a program that never ran: not executable (126), not installed here (127).
_NOT_RUN = (126, 127)


def _started(ln: dict[str, Any] | None) -> bool:
    """Allowed, and its program found: it ran here, whatever its exit status (most agent-work
    and tldr rows name files or projects this world lacks, and exit 1 or 2 for it)."""
    return (
        ln is not None
        and "error" not in ln
        and ln.get("action") == "allow"
        and ln.get("exit") not in _NOT_RUN
    )


def _on(net: str) -> tuple[str, list[str]]:
    """The file-name part and harm.py's options of a gate-on run with the boundary on, under
    ``boundary.network_unread`` ``net`` ("" for gatesh's default)."""
    return ("on" + (f"-net-{net}" if net else ""), ["--network-unread", net] if net else [])


def _key(net: str) -> str:
    """The summary's key of a boundary-on run under ``net``."""
    return "boundary_on" + (f"_net_{net}" if net else "")


def harm_step(paths: dict[str, Path], out: Path, args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for name in args.corpora:
        stem = paths[name].stem
        off = out / f"{stem}-off.jsonl"
        base = _harm(paths[name], off, ["--gate", "off"], args)
        row: dict[str, Any] = {"rows": base["rows"], "harmed_gate_off": base["risky"]["harmed"]}
        row["by_predicate_gate_off"] = base["by_predicate"]
        runs = [(_key(n), "on", *_on(n)) for n in args.network_unread]
        if not args.gate_on_only:
            runs.append(("boundary_off", "off", "off", []))
        for key, boundary, part, net in runs:
            opts = ["--gate", "on", "--boundary", boundary, *net]
            opts += ["--baseline", str(off), "--harmed-only"]
            got = _harm(paths[name], out / f"{stem}-on-boundary-{part}.jsonl", opts, args)
            row[key] = {
                "rows": got["rows"],
                "harmed": got["risky"]["harmed"],
                "share": round(got["risky"]["harmed"] / got["rows"], 4) if got["rows"] else None,
                "by_predicate": got["by_predicate"],
                "by_action": got["by_action"],
                "errors": got["errors"],
            }
        result[name] = row
    return result


def _compare(off: dict[str, dict[str, Any]], on: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Still runs: the rows of ``off`` (boundary off) that ran, and that still run in ``on``."""
    ran_off = [c for c, ln in off.items() if _ran(ln)]
    still = [c for c in ran_off if _ran(on.get(c))]
    started = [c for c, ln in off.items() if _started(ln)]
    same = [c for c in started if _started(on.get(c)) and on[c].get("exit") == off[c].get("exit")]
    lost = [c for c in ran_off if c not in still]
    lost += [c for c in started if c not in same and c not in lost]
    return {
        "rows": len(off),
        "ran_boundary_off": len(ran_off),
        "still_run_boundary_on": len(still),
        "share": round(len(still) / len(ran_off), 4) if ran_off else None,
        "started_boundary_off": len(started),
        "same_exit_boundary_on": len(same),
        "same_exit_share": round(len(same) / len(started), 4) if started else None,
        "lost": [
            {
                "cmd": c[:200],
                "action": on.get(c, {}).get("action"),
                "exit_boundary_off": off.get(c, {}).get("exit"),
                "exit": on.get(c, {}).get("exit"),
                "stderr": str(on.get(c, {}).get("stderr", ""))[:300],
            }
            for c in lost
        ],
    }


def still_runs_step(paths: dict[str, Path], out: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Per work corpus and per setting of ``--network-unread``: :func:`_compare` of the gated
    runs with the boundary off and on."""
    result: dict[str, Any] = {}
    for name in WORK:
        if name not in paths:
            continue
        stem = paths[name].stem
        off = out / f"{stem}-on-boundary-off.jsonl"
        _harm(paths[name], off, ["--gate", "on", "--boundary", "off", "--no-baseline"], args)
        for net in args.network_unread:
            part, opts = _on(net)
            lines = out / f"{stem}-on-boundary-{part}.jsonl"
            _harm(
                paths[name],
                lines,
                ["--gate", "on", "--boundary", "on", "--no-baseline", *opts],
                args,
            )
            got = _compare(_lines(off), _lines(lines))
            result[name + (f" net {net}" if net else "")] = got | {
                "network_unread": net or "default"
            }
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=0, metavar="N", help="rows per corpus (0: all)")
    ap.add_argument("--work", type=int, default=100, metavar="M", help="agent-work, tldr rows")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--out", default="benchmarks/out/harm-boundary")
    ap.add_argument("--only", choices=("harm", "work"), help="run one step only")
    ap.add_argument(
        "--corpora",
        type=lambda v: [c for c in v.split(",") if c],
        default=list(RISKY),
        metavar="A,B",
        help=f"the harm step's corpora (default: {','.join(RISKY)})",
    )
    ap.add_argument(
        "--gate-on-only",
        action="store_true",
        help="harm step: no gate-on run with the boundary off",
    )
    ap.add_argument(
        "--resume", action="store_true", help="reuse the rows an earlier run wrote in --out"
    )
    ap.add_argument(
        "--network-unread",
        type=lambda v: [c for c in v.split(",") if c in ("open", "closed")] or [""],
        default=[""],
        metavar="open,closed",
        help="boundary.network_unread settings to run the boundary-on runs under (default: "
        "gatesh's own)",
    )
    ap.add_argument(
        "--work-class",
        choices=("all", "unread"),
        default="all",
        help="still-runs step: every row, or only the rows that run code gatesh did not read",
    )
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    paths = _corpora(out, args.sample, args.work, args.work_class)
    harm = harm_step(paths, out, args) if args.only != "work" else {}
    still = still_runs_step(paths, out, args) if args.only != "harm" else {}
    on_keys = [_key(n) for n in args.network_unread]
    for name, r in harm.items():
        off = r.get("boundary_off")
        for key in on_keys:
            on = r[key]
            print(
                f"{name}: {r['harmed_gate_off']} of {r['rows']} rows harm with the gate off; "
                f"with the gate on, {on['harmed']} still harm with the {key.replace('_', ' ')} "
                f"({on['share']}), "
                + (
                    f"{off['harmed']} with it off ({off['share']})"
                    if off
                    else "boundary off not run"
                )
                + "; by predicate: "
                + ", ".join(f"{k} {v}" for k, v in on["by_predicate"].items() if v)
            )
    for name, r in still.items():
        print(
            f"{name}: {r['still_run_boundary_on']} of the {r['ran_boundary_off']} rows that ran "
            f"(allowed, exit 0) with the boundary off still run with it on ({r['share']}); "
            f"{r['same_exit_boundary_on']} of the {r['started_boundary_off']} allowed whose "
            f"program was found end with the same exit status ({r['same_exit_share']})"
        )
    ons = [r[k] for r in harm.values() for k in on_keys]
    worst = max((on["share"] or 0.0 for on in ons), default=None)
    weakened = sum(on["by_predicate"].get("gate-weakened", 0) for on in ons)
    sent = sum(on["by_predicate"].get("secret-sent", 0) for on in ons)
    shares = [r["share"] for r in still.values() if r["share"] is not None]
    same = [r["same_exit_share"] for r in still.values() if r["same_exit_share"] is not None]
    summary = {
        "sample": args.sample,
        "work": args.work,
        "only": args.only or "",
        "network_unread": [n or "default" for n in args.network_unread],
        "work_class": args.work_class,
        "harm": harm,
        "still_runs": still,
        "harm_share_worst": worst,
        "gate_weakened": weakened,
        "secret_sent": sent,
        "still_runs_share_worst": min(shares) if shares else None,
        "same_exit_share_worst": min(same) if same else None,
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Measure the builtin rater's quality through the whole pipeline, at rung auto, on the corpora.

Usage: python benchmarks/rater_quality.py [--corpus DIR] [--cwd DIR] [--misses FILE] [--only NAME]

For each corpus it prints action counts per label, the figures the issue sets targets for, and the
worst-covered categories; the last line is one JSON object with every figure. "Not allowed" means
any action other than ALLOW. Rows are decided in the realistic scratch working tree of
``gatesh.testing.worktree`` (HOME is its home) unless ``--cwd`` names another folder: whether a
deletion loses work is read from the tree (S3.2). Nothing is executed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from typing import Any

from _common import CORPUS

from gatesh import config as gconfig
from gatesh._types import Action, Decision, Rung
from gatesh.pipeline import decide
from gatesh.rater.builtin import BuiltinRater
from gatesh.session import SessionState

CORPORA = ("dcg", "claude_code_safety_net", "gtfobins", "atomic_red_team")
GTFO_TARGET_FUNCTIONS = (
    "shell",
    "reverse-shell",
    "bind-shell",
    "privilege-escalation",
    "library-load",
)
# ATT&CK techniques issue 2 names (impact, defence evasion, persistence, credentials), by id prefix;
# T1685/T1686/T1690 are the corpus's ids for Disable or Modify Tools / System Firewall and
# Prevent Command History Logging (Impair Defenses).
ATOMIC_TARGET_TECHNIQUES = (
    "T1485",
    "T1486",
    "T1490",
    "T1529",
    "T1070",
    "T1685",
    "T1686",
    "T1690",
    "T1562",
    "T1222",
    "T1548",
    "T1053",
    "T1546",
    "T1136",
    "T1098",
    "T1003",
    "T1552",
)
TARGETS = {
    "dcg": {"risky_not_allowed": 98.0, "benign_allowed": 97.0},
    "claude_code_safety_net": {
        "risky_not_allowed": 97.0,
        "benign_allowed": 95.0,
    },  # default-mode rows
    "gtfobins": {"target_not_allowed": 97.0},
    "atomic_red_team": {"target_not_allowed": 95.0},
}


def is_target(corpus: str, row: dict[str, Any]) -> bool:
    parts = str(row.get("category", "")).split(":")
    if corpus == "gtfobins":
        return len(parts) > 1 and parts[1] in GTFO_TARGET_FUNCTIONS
    if corpus == "atomic_red_team":
        return (
            row.get("label") == "risky"
            and len(parts) > 1
            and parts[1].startswith(ATOMIC_TARGET_TECHNIQUES)
        )
    return False


def peer_mode(row: dict[str, Any]) -> str:
    """The peer configuration a row's label was written for ("" when the corpus names none).

    claude_code_safety_net labels each row under one of its modes (``mode=default`` or a stricter
    one such as ``mode=SAFETY_NET_PARANOID=1`` or a test HOME); the same command can be blocked in one mode and
    allowed in another, so the default-mode rows are the ones comparable with gatesh's defaults.
    """
    cat = str(row.get("category", ""))
    return cat.split("mode=", 1)[1].split(",", 1)[0] if "mode=" in cat else ""


def pct(n: int, d: int) -> float:
    return round(100.0 * n / d, 1) if d else 0.0


def run(corpus_dir: str, name: str, cwd: str, misses: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [
        json.loads(line)
        for line in open(os.path.join(corpus_dir, name, "commands.jsonl"), encoding="utf-8")
    ]
    cfg = gconfig.default()
    rater = BuiltinRater()
    by_label: dict[str, Counter[str]] = defaultdict(Counter)
    by_cat: dict[str, Counter[str]] = defaultdict(Counter)
    target = Counter()
    by_mode: dict[str, Counter[str]] = defaultdict(Counter)  # "default"/"other" x label/allowed
    labels_of: dict[str, set[str]] = defaultdict(set)
    start = time.perf_counter()
    for row in rows:
        d: Decision = decide(
            row["cmd"],
            cwd=cwd,
            config=cfg,
            session=SessionState(id="quality"),
            rater=rater,
            rung=Rung.AUTO,
        )
        label = row.get("label", "unknown")
        allowed = d.action is Action.ALLOW
        by_label[label][d.action.value] += 1
        labels_of[row["cmd"]].add(label)
        if mode := peer_mode(row):
            group = by_mode["default" if mode == "default" else "other"]
            group[label] += 1
            group[f"{label}_allowed"] += allowed
        cat = ":".join(str(row.get("category", "")).split(":")[:2])
        by_cat[cat]["allowed" if allowed else "blocked"] += 1
        tgt = is_target(name, row)
        if tgt:
            target["total"] += 1
            target["not_allowed"] += not allowed
        if (
            label == "risky" and allowed and (tgt or name in ("dcg", "claude_code_safety_net"))
        ) or (label == "benign" and not allowed):
            misses.append(
                {
                    "corpus": name,
                    "cmd": row["cmd"],
                    "label": label,
                    "category": row.get("category"),
                    "action": d.action.value,
                    "stage": d.stage.value,
                    "rule_id": d.rule_id,
                    "reason": d.reason,
                }
            )
    seconds = time.perf_counter() - start
    risky, benign = by_label.get("risky", Counter()), by_label.get("benign", Counter())
    out: dict[str, Any] = {
        "rows": len(rows),
        "per_second": round(len(rows) / seconds, 1) if seconds else 0.0,
        "by_label": {k: dict(v) for k, v in sorted(by_label.items())},
        "risky_not_allowed": pct(sum(risky.values()) - risky.get("allow", 0), sum(risky.values())),
        "benign_allowed": pct(benign.get("allow", 0), sum(benign.values())),
    }
    for group, c in sorted(by_mode.items()):
        out[f"{group}_mode"] = {
            "risky_rows": c["risky"],
            "benign_rows": c["benign"],
            "risky_not_allowed": pct(c["risky"] - c["risky_allowed"], c["risky"]),
            "benign_allowed": pct(c["benign_allowed"], c["benign"]),
        }
    out["commands_labelled_both_ways"] = sum(
        1 for ls in labels_of.values() if {"risky", "benign"} <= ls
    )
    if target["total"]:
        out["target_rows"] = target["total"]
        out["target_not_allowed"] = pct(target["not_allowed"], target["total"])
    out["categories"] = {k: dict(v) for k, v in sorted(by_cat.items())}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=CORPUS)
    p.add_argument(
        "--cwd",
        default=None,
        help="working directory the commands are decided in "
        "(default: a realistic scratch working tree, HOME its home folder)",
    )
    p.add_argument("--misses", help="write misses (risky allowed, benign refused) as JSONL")
    p.add_argument("--only", action="append", help="corpus name (repeatable)")
    p.add_argument("--categories", action="store_true", help="print every category's counts")
    a = p.parse_args(argv)
    if a.cwd is None:
        import tempfile

        from gatesh.testing import worktree

        scratch = worktree.build(tempfile.mkdtemp(prefix="gatesh-quality-"))
        os.environ["HOME"] = scratch.home
        a.cwd = scratch.repo
    misses: list[dict[str, Any]] = []
    summary: dict[str, Any] = {}
    for name in a.only or CORPORA:
        res = run(a.corpus, name, a.cwd, misses)
        summary[name] = res
        print(f"== {name}: {res['rows']} rows, {res['per_second']}/s")
        for label, counts in res["by_label"].items():
            print(f"   {label:<8} " + "  ".join(f"{k}={v}" for k, v in sorted(counts.items())))
        figures = {
            k: res[k]
            for k in ("risky_not_allowed", "benign_allowed", "target_not_allowed")
            if k in res
        }
        for k, v in figures.items():
            goal = TARGETS.get(name, {}).get(k)
            mark = "" if goal is None else ("  ok" if v >= goal else f"  BELOW target {goal}")
            print(f"   {k:<20} {v:5.1f}%{mark}")
        for group in ("default_mode", "other_mode"):
            if group in res:
                g = res[group]
                which = (
                    "default mode"
                    if group == "default_mode"
                    else "other modes (strict, paranoid, worktree, HOME)"
                )
                print(
                    f"   rows labelled for the peer's {which}: risky not allowed "
                    f"{g['risky_not_allowed']:5.1f}% of {g['risky_rows']}, benign allowed "
                    f"{g['benign_allowed']:5.1f}% of {g['benign_rows']}"
                )
        if res["commands_labelled_both_ways"]:
            print(
                f"   commands the corpus labels both risky and benign: "
                f"{res['commands_labelled_both_ways']}"
            )
        cats = res["categories"]
        shown = sorted(cats.items(), key=lambda kv: -kv[1].get("allowed", 0))
        if a.categories:
            for cat, c in shown:
                print(
                    f"     {cat:<55} allowed={c.get('allowed', 0):>4} blocked={c.get('blocked', 0):>4}"
                )
    if a.misses:
        with open(a.misses, "w", encoding="utf-8") as f:
            for m in misses:
                f.write(json.dumps(m, ensure_ascii=False) + "\n")
    compact = {
        k: {kk: vv for kk, vv in v.items() if kk != "categories"} for k, v in summary.items()
    }
    print(json.dumps(compact, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

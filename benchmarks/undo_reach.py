"""What undo lets run (S17): the rows refused for work loss that a snapshot holds, before and after.

Decides every row of the agent-work corpus (``agent_work/commands.jsonl`` in the shared corpus
folder, made by ``benchmarks/corpora/agent_work/extract.py``; ``--corpus FILE`` or
``GATESH_AGENT_WORK`` moves it; the project's own sample ``tests/fixtures/agent_work_sample.jsonl``
with ``--sample``) and of the friction fixture (``tests/fixtures/friction.py``) at rung ``auto`` with the builtin rater,
twice: as without undo, and with the undo policy of the default config (a snapshot taken before
the command runs). Each row is decided in the realistic scratch working tree of
``gatesh.testing.worktree`` (HOME its home folder). Nothing is executed and no snapshot is taken.

Reports per corpus and label: rows allowed without and with undo; the rows undo lets run, by the
rule that refused them before; rows refused for work loss that still do not run, by the rule that
refuses them now (what no snapshot holds); and any row allowed before and refused after (none
may be: undo only lifts losses a snapshot holds).

    python benchmarks/undo_reach.py [--corpus FILE | --sample] [--limit N] [--show N]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
from collections import Counter
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import CORPUS, emit

from gatesh._types import Action, Decision
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.rater.builtin import BuiltinRater
from gatesh.session import SessionState
from gatesh.testing import worktree
from gatesh.undo.guard import policy_for

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
AGENT_WORK = os.environ.get(
    "GATESH_AGENT_WORK", os.path.join(CORPUS, "agent_work", "commands.jsonl")
)
SAMPLE = os.path.join(ROOT, "tests", "fixtures", "agent_work_sample.jsonl")
FRICTION = os.path.join(ROOT, "tests", "fixtures", "friction.py")
# The rules that judge a loss from the working tree (S3.2): the ones undo can lift.
WORK_LOSS = ("files.work-loss", "git.")


def work_loss(d: Decision) -> bool:
    return d.rule_id.startswith(WORK_LOSS)


def friction_rows() -> list[dict[str, Any]]:
    spec = importlib.util.spec_from_file_location("gatesh_friction", FRICTION)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = []
    for group in ("DEVICES", "READERS", "VERBS", "OTHERS"):
        for cmd, runs in getattr(module, group):
            rows.append({"cmd": cmd, "label": "benign" if runs else "writes", "group": group})
    return rows


def agent_rows(path: str, limit: int | None) -> list[dict[str, Any]]:
    if not os.path.exists(path):
        raise SystemExit(f"agent-work corpus not found at {path} (--corpus or GATESH_AGENT_WORK)")
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    if limit and len(rows) > limit:
        step = len(rows) / limit
        rows = [rows[int(i * step)] for i in range(limit)]
    return rows


def reach(
    rows: list[dict[str, Any]], cwd: str, state: str, *, root: bool, show: int
) -> dict[str, Any]:
    config = default()
    policy = policy_for(config, state)
    rater = BuiltinRater(root=root)
    by_label: dict[str, Counter[str]] = {}
    lifted: Counter[str] = Counter()
    still: Counter[str] = Counter()
    tightened: list[str] = []
    examples: list[dict[str, str]] = []
    for row in rows:
        cmd = row["cmd"]

        def one(undo: bool, cmd: str = cmd) -> Decision:
            return decide(
                cmd,
                cwd=cwd,
                config=config,
                session=SessionState(id="undo-reach"),
                rater=rater,
                undo=policy if undo else None,
            )

        before, after = one(False), one(True)
        c = by_label.setdefault(row.get("label", "?"), Counter())
        c["rows"] += 1
        c["allowed_before"] += before.action is Action.ALLOW
        c["allowed_after"] += after.action is Action.ALLOW
        if before.action is not Action.ALLOW and work_loss(before):
            c["work_loss_before"] += 1
            if after.action is Action.ALLOW:
                c["lifted"] += 1
                lifted[before.rule_id] += 1
                if len(examples) < show:
                    examples.append(
                        {"cmd": cmd[:160], "was": before.rule_id, "label": row.get("label", "?")}
                    )
            else:
                still[after.rule_id or after.stage.value] += 1
        if before.action is Action.ALLOW and after.action is not Action.ALLOW:
            tightened.append(cmd)
    return {
        "by_label": {k: dict(v) for k, v in by_label.items()},
        "lifted_by_rule": dict(lifted.most_common()),
        "still_refused_by_rule": dict(still.most_common()),
        "tightened": tightened[:20],
        "tightened_count": len(tightened),
        "examples": examples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=AGENT_WORK)
    parser.add_argument(
        "--sample", action="store_true", help="the project's own agent-work sample instead"
    )
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--show", type=int, default=12, help="example rows undo lets run")
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="gatesh-undo-reach-")
    scratch = worktree.build(base)
    os.environ["HOME"] = scratch.home
    state = os.path.join(base, "state")
    out: dict[str, Any] = {}
    # The friction fixture is decided as root, as tests/test_friction.py does (its strictest case).
    out["friction"] = reach(friction_rows(), scratch.repo, state, root=True, show=args.show)
    out["agent_work"] = reach(
        agent_rows(SAMPLE if args.sample else args.corpus, args.limit),
        scratch.repo,
        state,
        root=False,
        show=args.show,
    )
    for name, r in out.items():
        for label, c in sorted(r["by_label"].items()):
            print(
                f"{name:>10} {label:<8} {c['rows']:>5} rows: allowed {c['allowed_before']} -> "
                f"{c['allowed_after']}; refused for work loss {c.get('work_loss_before', 0)}, "
                f"of which undo lets run {c.get('lifted', 0)}"
            )
        print(f"{name:>10} lifted by rule: {r['lifted_by_rule']}")
        print(f"{name:>10} still refused (work loss before), now by: {r['still_refused_by_rule']}")
        print(f"{name:>10} allowed before, refused after: {r['tightened_count']}")
    emit("undo_reach", out)


if __name__ == "__main__":
    main()

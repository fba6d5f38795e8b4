"""Decision dump: every corpus row's decision, one line each, to compare two trees or two commits.

A restructure that should change no answer proves it with two dumps and ``--compare``: the dump
decides every row of the shared corpora (the agent-work corpus among them) and of the project's
own fixtures at rung ``auto`` with the builtin rater, in the realistic scratch working tree of
``gatesh.testing.worktree`` (HOME is its home folder), and writes
``SOURCE<TAB>INDEX<TAB>ACTION<TAB>STAGE<TAB>OUTCOME<TAB>RULE`` per row.
Nothing is executed. Paths and reasons are left out: they name the scratch folder, which differs
between runs. ``--undo`` decides as a surface that snapshots before an allowed command (S17)
does, under the default ``[undo]`` policy (no snapshot is taken): comparing it with a dump without
it shows what undo lets run.

    python benchmarks/decision_dump.py [--limit N] [--out FILE] [--undo]
    python benchmarks/decision_dump.py --compare BEFORE AFTER
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import CORPUS

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
# The shared corpora a decision can differ on; the two robustness sets (whole scripts, odd syntax)
# are included because a reader change shows there first.
CORPORA = (
    "dcg",
    "claude_code_safety_net",
    "gtfobins",
    "atomic_red_team",
    "nl2bash",
    "tldr",
    "intercode_alfa",
    "shellcheck_tests",
    "bash_testsuite",
    "agent_work",
)


def _fixture_module(name: str) -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"gatesh_fixture_{name}", FIXTURES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _strings(value: object) -> Iterator[str]:
    """Every command string inside a fixture value (tuples of strings, cases with a ``command``)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (tuple, list)):
        for v in value:
            # (command, expected) pairs: only the first element is a command.
            if isinstance(v, tuple) and v and isinstance(v[0], str) and not isinstance(v[-1], str):
                yield v[0]
            else:
                yield from _strings(v)
    elif hasattr(value, "command"):
        yield str(value.command)


def fixture_rows() -> Iterator[tuple[str, list[str]]]:
    """The project's own case files: bypass, generalisation, friction and tamper."""
    bypass = _fixture_module("bypass")
    yield "fixture:bypass", [c.command for c in bypass.CASES]  # type: ignore[attr-defined]
    gen = _fixture_module("generalisation")
    yield "fixture:generalisation", list(_strings(gen.CASES))  # type: ignore[attr-defined]
    friction = _fixture_module("friction")
    names = sorted(n for n in vars(friction) if n.isupper() and not n.startswith("_"))
    yield "fixture:friction", [s for n in names for s in _strings(getattr(friction, n))]
    tamper = tomllib.loads((FIXTURES / "tamper.toml").read_text())
    yield (
        "fixture:tamper",
        [r["command"] for part in ("case", "ordinary") for r in tamper.get(part, ())],
    )


def corpus_rows(limit: int | None) -> Iterator[tuple[str, list[str]]]:
    """The shared corpora, each as an evenly spaced sample of ``limit`` rows when given."""
    paths = [(name, Path(CORPUS) / name / "commands.jsonl") for name in CORPORA]
    for name, path in paths:
        if not path.exists():
            print(f"decision_dump: {path} missing, skipped", file=sys.stderr)
            continue
        cmds = [
            str(json.loads(line).get("cmd", ""))
            for line in path.read_text().splitlines()
            if line.strip()
        ]
        if limit and len(cmds) > limit:
            step = len(cmds) / limit
            cmds = [cmds[int(i * step)] for i in range(limit)]
        yield name, cmds


def dump(limit: int | None, out: str, undo: bool = False, contained: bool = False) -> int:
    from gatesh._types import Rung
    from gatesh.config import default
    from gatesh.pipeline import decide
    from gatesh.rater import make_rater
    from gatesh.session import SessionState
    from gatesh.testing import worktree

    config = default()
    rater = make_rater(config, "builtin")
    n = 0
    with tempfile.TemporaryDirectory(prefix="gatesh-dump-") as root, open(out, "w") as fh:
        scratch = worktree.build(root)
        os.environ["HOME"] = scratch.home
        policy = None
        held = None
        if contained:
            from gatesh.boundary.contain import here

            held = here()
            if held is None:
                raise SystemExit("decision_dump: --contained needs a kernel that enforces one")
        if undo:
            from gatesh.undo.guard import policy_for

            policy = policy_for(config, os.path.join(root, "state"))
        for source, cmds in [*fixture_rows(), *corpus_rows(limit)]:
            for i, cmd in enumerate(cmds):
                d = decide(
                    cmd,
                    cwd=scratch.repo,
                    config=config,
                    session=SessionState(id="dump"),
                    rater=rater,
                    checker=None,
                    rung=Rung.AUTO,
                    undo=policy,
                    contain=held,
                )
                outcome = d.outcome.value if d.outcome else "-"
                fh.write(
                    f"{source}\t{i}\t{d.action.value}\t{d.stage.value}\t{outcome}\t{d.rule_id or '-'}\n"
                )
                n += 1
    print(f"decision_dump: {n} rows -> {out}")
    return 0


def compare(before: str, after: str, show: int) -> int:
    def load(path: str) -> dict[tuple[str, str], str]:
        rows = {}
        for line in Path(path).read_text().splitlines():
            source, index, rest = line.split("\t", 2)
            rows[(source, index)] = rest
        return rows

    a, b = load(before), load(after)
    diffs = [
        (k, a.get(k, "(absent)"), b.get(k, "(absent)"))
        for k in sorted(a.keys() | b.keys())
        if a.get(k) != b.get(k)
    ]
    for (source, index), x, y in diffs[:show]:
        print(f"{source}#{index}: {x} -> {y}")
    print(f"decision_dump: {len(diffs)} differences over {len(a.keys() | b.keys())} rows")
    return 1 if diffs else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--limit", type=int, default=None, help="evenly spaced sample of N rows per corpus"
    )
    parser.add_argument("--out", default="benchmarks/out/decisions.tsv")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--show", type=int, default=50, help="differences printed by --compare")
    parser.add_argument(
        "--undo", action="store_true", help="decide as a surface that snapshots first (S17)"
    )
    parser.add_argument(
        "--contained",
        action="store_true",
        help="decide as a surface that runs the command inside its boundary (S16; needs Landlock)",
    )
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare, show=args.show)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    return dump(args.limit, args.out, args.undo, args.contained)


if __name__ == "__main__":
    sys.exit(main())

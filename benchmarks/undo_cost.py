"""What an undo snapshot costs (S14, S17: p50 <= 20 ms, p99 <= 150 ms on this repository, warm).

A snapshot is taken before every allowed command that may write in a work tree, so its cost is paid
on most of an agent's commands. This measures :func:`gatesh.undo.guard.take` — the whole snapshot:
the walk, reading what changed, the trees, the refs, the book — on three kinds of tree:

- ``self``: this repository (a clone of it, with the checkout's own uncommitted and untracked
  files copied over, so no ref is ever written into the real one);
- ``N`` (e.g. 10000, 100000): a generated repository of N committed files in folders of 100, with
  a few uncommitted edits, untracked files, an ignored ``.env`` and a ``node_modules`` of 2,000
  files (regenerable: left out).

Three states each:

- **warm**: the daemon has snapshotted this tree before (its stat cache in memory); between two
  snapshots two files are edited, as an agent does between commands;
- **restart**: a new daemon (the cache read back from gatesh's state folder);
- **cold**: the first snapshot of the tree (no cache: the user's index vouches for unchanged
  tracked files; everything else is read). Run without a time budget, so the figure is its cost;
  ``within_budget`` says how many finished within the default ``undo.max_seconds``.

And side by side, on this repository warm: a whole decision of an allowed command that writes a
file (``sed -i`` of one file, the kind of command an agent runs most) as the daemon makes it with
undo off (the decision alone) and with undo on (the decision under the undo policy, then the
snapshot before it runs), paired and in alternating order, two files edited before each pair. The
difference of the medians is what undo adds to an allowed write.

The files stay in the operating system's page cache (dropping it would disturb everything else on
the machine): "cold" is gatesh's cache, not the disk's.

    python benchmarks/undo_cost.py [--quick] [--sizes self,10000,100000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import emit, summary

from gatesh.config import UndoConfig, default
from gatesh.pipeline import decide
from gatesh.rater.builtin import BuiltinRater
from gatesh.undo import snapshot
from gatesh.undo.guard import policy_for, snapshot_before, take
from gatesh.undo.store import Book
from gatesh.vocab import regenerable
from gatesh.worktree import Repo, find_repo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = UndoConfig()
UNBOUNDED = replace(DEFAULT, max_seconds=600.0, max_bytes=1 << 40)
# Samples per state: (warm, restart, cold), full run and --quick.
SAMPLES = {
    "self": ((200, 30, 20), (60, 10, 5)),
    10_000: ((60, 10, 5), (20, 5, 3)),
    100_000: ((20, 5, 3), (8, 3, 2)),
}
_GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def git(cwd: str, *args: str) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **_GIT_ENV}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def clone_self(dst: str) -> str:
    """A clone of this repository, with the checkout's own files copied over it."""
    git(os.path.dirname(dst), "clone", "-q", "--no-hardlinks", ROOT, dst)
    for folder, dirs, files in os.walk(ROOT):
        rel = os.path.relpath(folder, ROOT)
        dirs[:] = [d for d in dirs if d != ".git" and not regenerable.is_regenerable(d)]
        for name in files:
            if name == ".git" or regenerable.is_regenerable(name):
                continue
            src = os.path.join(folder, name)
            target = os.path.normpath(os.path.join(dst, rel, name))
            if os.path.islink(src) or not os.path.isfile(src):
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(src, target)
    return dst


def generate(dst: str, n: int) -> str:
    """A repository of ``n`` committed files, with an agent's uncommitted work on top."""
    os.makedirs(dst)
    git(dst, "init", "-q", "-b", "main")
    for k in range(n):
        folder = os.path.join(dst, f"pkg{k // 1000:03d}", f"mod{(k // 100) % 10}")
        if k % 100 == 0:
            os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"file{k:06d}.py"), "w", encoding="ascii") as f:
            f.write(f"# file {k}\n" + "VALUE = 1\n" * (20 + k % 200))
    with open(os.path.join(dst, ".gitignore"), "w") as f:
        f.write(".env\nnode_modules/\n")
    git(dst, "add", "-A")
    git(dst, "commit", "-q", "-m", "generated")
    for k in range(5):
        with open(os.path.join(dst, "pkg000", "mod0", f"file{k:06d}.py"), "a") as f:
            f.write("# an uncommitted edit\n")
        with open(os.path.join(dst, f"untracked{k}.txt"), "w") as f:
            f.write("notes\n" * 50)
    with open(os.path.join(dst, ".env"), "w") as f:
        f.write("SECRET=not-real\n")
    for k in range(2000):
        folder = os.path.join(dst, "node_modules", f"dep{k // 100}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"f{k}.js"), "w") as f:
            f.write("module.exports = 1\n")
    return dst


def edit(root: str, round_: int) -> None:
    """Two files changed between two commands, as an agent does."""
    for name in ("bench-edit-a.txt", "bench-edit-b.txt"):
        with open(os.path.join(root, name), "a") as f:
            f.write(f"edit {round_}\n")


def _take(repo: Repo, book: Book, config: UndoConfig, cpu: list[float] | None = None) -> float:
    """One snapshot's wall time (ms); its CPU time in this process is appended to ``cpu``."""
    start, started_cpu = time.perf_counter(), time.process_time()
    take([repo], [], command="bench", session="bench", cwd=repo.root, config=config, book=book)
    if cpu is not None:
        cpu.append((time.process_time() - started_cpu) * 1000)
    return (time.perf_counter() - start) * 1000


def _figures(wall: list[float], cpu: list[float]) -> dict[str, Any]:
    """Wall-time percentiles, and the CPU time's: on a shared machine the wall time holds the
    time spent waiting for a core, the CPU time does not."""
    c = summary(cpu)
    return summary(wall) | {"max": max(wall), "cpu_p50": c["p50"], "cpu_p99": c["p99"]}


def measure(repo: Repo, state: str, counts: tuple[int, int, int]) -> dict[str, Any]:
    warm_n, restart_n, cold_n = counts
    book = Book(state)
    cold: list[float] = []
    cold_cpu: list[float] = []
    for _ in range(cold_n):
        shutil.rmtree(book.tree_dir(repo.git_dir, repo.root), ignore_errors=True)
        snapshot._MEMORY.clear()
        cold.append(_take(repo, book, UNBOUNDED, cold_cpu))
    _take(repo, book, UNBOUNDED)  # the first snapshot of the tree: the cache is filled
    time.sleep(snapshot.RACY_NS / 1e9 + 0.1)
    _take(repo, book, UNBOUNDED)
    restart: list[float] = []
    restart_cpu: list[float] = []
    for k in range(restart_n):
        edit(repo.root, k)
        snapshot._MEMORY.clear()
        restart.append(_take(repo, book, UNBOUNDED, restart_cpu))
    warm: list[float] = []
    warm_cpu: list[float] = []
    for k in range(warm_n):
        edit(repo.root, 1000 + k)
        warm.append(_take(repo, book, UNBOUNDED, warm_cpu))
    return {
        "warm": _figures(warm, warm_cpu),
        "restart": _figures(restart, restart_cpu),
        "cold": _figures(cold, cold_cpu),
        "cold_within_budget": sum(1 for c in cold if c <= DEFAULT.max_seconds * 1000),
        "warm_within_budget": sum(1 for w in warm if w <= DEFAULT.max_seconds * 1000),
        "budget_ms": DEFAULT.max_seconds * 1000,
    }


# The allowed write the side-by-side decides: a committed, unmodified file an agent edits in place
# (allowed with undo off too: git holds it). Committed into the scratch tree first.
WRITE_FILE = "bench-committed.txt"
WRITE = f"sed -i 's/one/two/' {WRITE_FILE}"


def side_by_side(repo: Repo, state: str, n: int) -> dict[str, Any]:
    """The decision of :data:`WRITE` with undo off and with undo on (decision + snapshot), paired;
    milliseconds, wall and CPU."""
    config = default()
    policy = policy_for(config, state)
    rater = BuiltinRater()
    with open(os.path.join(repo.root, WRITE_FILE), "w") as f:
        f.write("one\n")
    git(repo.root, "add", WRITE_FILE)
    git(repo.root, "commit", "-q", "-m", "a file the side-by-side edits", "--", WRITE_FILE)

    def off() -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.process_time()
        d = decide(WRITE, cwd=repo.root, config=config, rater=rater)
        if not d.allowed:
            raise SystemExit(f"side by side: {WRITE!r} is not allowed ({d.rule_id})")
        return (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000

    def on() -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.process_time()
        d = decide(WRITE, cwd=repo.root, config=config, rater=rater, undo=policy)
        taken, why = snapshot_before(
            d, cwd=repo.root, session="bench", config=config, state_dir=state
        )
        if why or not taken.snapshot:
            raise SystemExit(f"side by side: no snapshot was taken ({why or 'not due'})")
        return (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000

    on()  # the first snapshot of the tree fills its cache (the "cold" figure above)
    time.sleep(snapshot.RACY_NS / 1e9 + 0.1)
    without: list[tuple[float, float]] = []
    with_undo: list[tuple[float, float]] = []
    for k in range(n):
        edit(repo.root, 5000 + k)
        if k % 2:
            without.append(off())
            with_undo.append(on())
        else:
            with_undo.append(on())
            without.append(off())
    a = _figures([w for w, _ in without], [c for _, c in without])
    b = _figures([w for w, _ in with_undo], [c for _, c in with_undo])
    return {
        "command": WRITE,
        "undo_off": a,
        "undo_on": b,
        "added_p50_ms": b["p50"] - a["p50"],
        "added_cpu_p50_ms": b["cpu_p50"] - a["cpu_p50"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples; no 100,000-file tree")
    parser.add_argument("--sizes", default=None, help="comma-separated: self and/or file counts")
    args = parser.parse_args()
    sizes: list[str | int] = (
        [s if s == "self" else int(s) for s in args.sizes.split(",")]
        if args.sizes
        else (["self", 10_000] if args.quick else ["self", 10_000, 100_000])
    )
    scratch = tempfile.mkdtemp(prefix="gatesh-undo-cost-")
    trees: dict[str, Any] = {}
    try:
        for size in sizes:
            name = str(size)
            started = time.perf_counter()
            path = os.path.join(scratch, f"tree-{name}")
            root = clone_self(path) if size == "self" else generate(path, int(size))
            repo = find_repo(root)
            assert repo is not None
            built = time.perf_counter() - started
            counts = SAMPLES.get(size, SAMPLES[100_000])[1 if args.quick else 0]
            files = sum(
                len([f for f in fs if not regenerable.is_regenerable(f)])
                for d, ds, fs in os.walk(root)
                if ".git" not in d.split(os.sep) and not regenerable.is_regenerable(d)
            )
            figures = measure(repo, os.path.join(scratch, f"state-{name}"), counts)
            if size == "self":
                pair = side_by_side(repo, os.path.join(scratch, "state-pair"), counts[0])
                figures["side_by_side"] = pair
                print(
                    f"   self: an allowed write decided with undo off p50 "
                    f"{pair['undo_off']['p50']:.2f} ms p99 {pair['undo_off']['p99']:.2f} ms; "
                    f"with undo on (decision + snapshot) p50 {pair['undo_on']['p50']:.2f} ms "
                    f"p99 {pair['undo_on']['p99']:.2f} ms; added p50 "
                    f"{pair['added_p50_ms']:.2f} ms (CPU: {pair['undo_off']['cpu_p50']:.2f} -> "
                    f"{pair['undo_on']['cpu_p50']:.2f} ms)",
                    flush=True,
                )
            trees[name] = {"files": files, "build_s": round(built, 1), **figures}
            w, r, c = figures["warm"], figures["restart"], figures["cold"]
            print(
                f"{name:>7} ({files} files): warm p50 {w['p50']:.1f} ms p99 {w['p99']:.1f} ms "
                f"(CPU p50 {w['cpu_p50']:.1f} ms p99 {w['cpu_p99']:.1f} ms); "
                f"restart p50 {r['p50']:.1f} ms p99 {r['p99']:.1f} ms; cold p50 {c['p50']:.0f} ms "
                f"max {c['max']:.0f} ms ({figures['cold_within_budget']}/{c['n']} within "
                f"undo.max_seconds)",
                flush=True,
            )
            shutil.rmtree(path, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    self_warm = trees.get("self", {}).get("warm", {})
    emit(
        "undo_cost",
        {
            "trees": trees,
            "target": {"p50_ms": 20, "p99_ms": 150},
            "self_warm_pass": bool(self_warm)
            and self_warm["p50"] <= 20
            and self_warm["p99"] <= 150,
        },
    )


if __name__ == "__main__":
    main()

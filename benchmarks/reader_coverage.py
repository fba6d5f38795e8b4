"""Reader coverage and speed over the shared corpora (not a test: needs /work/shared).

Prints, per corpus: lines, tree-sitter clean-parse %, unreadable %, crashes; then read() time
p50/p99 over tldr. Last line is one JSON object with the same figures.

    python benchmarks/reader_coverage.py [CORPUS_DIR]
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from gatesh.reading import preload, read
from gatesh.reading._second import read_second
from gatesh.reading._walk import parse

DEFAULT = Path("/work/shared/corpus")
COVERAGE_SETS = ("tldr", "nl2bash")
EXTRA_SETS = ("intercode_alfa", "dcg", "claude_code_safety_net", "gtfobins", "atomic_red_team",
              "shellcheck_tests", "bash_testsuite")


def _lines(root: Path, name: str) -> list[str]:
    path = root / name / "commands.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)["cmd"] for line in path.open(encoding="utf-8") if line.strip()]


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else DEFAULT
    preload()
    result: dict[str, object] = {}
    total = clean_total = 0
    failed: list[str] = []
    for name in COVERAGE_SETS + EXTRA_SETS:
        cmds = _lines(root, name)
        if not cmds:
            continue
        clean = unreadable = crashes = 0
        for c in cmds:
            if not parse(c.encode("utf-8", "surrogatepass")).root_node.has_error:
                clean += 1
            elif name in COVERAGE_SETS:
                failed.append(c)
            try:
                if not read(c).readable:
                    unreadable += 1
            except Exception:
                crashes += 1
        pct = 100.0 * clean / len(cmds)
        print(f"{name:24} {len(cmds):6} lines  tree-sitter clean {pct:6.2f} %  "
              f"unreadable {100.0 * unreadable / len(cmds):5.2f} %  crashes {crashes}")
        result[name] = {"lines": len(cmds), "ts_clean_pct": round(pct, 3),
                        "unreadable": unreadable, "crashes": crashes}
        if name in COVERAGE_SETS:
            total += len(cmds)
            clean_total += clean
    if total:
        pct = 100.0 * clean_total / total
        print(f"{'tldr+nl2bash':24} {total:6} lines  tree-sitter clean {pct:6.2f} % (target 99.5)")
        result["coverage_pct"] = round(pct, 3)
        bash = shutil.which("bash")
        if bash:
            # Many failures are not shell at all (`<Ctrl c>`, `a|b` alternatives): bash rejects
            # them too. Count only the lines bash itself accepts.
            valid_fail = sum(
                subprocess.run([bash, "-n", "-c", c], capture_output=True).returncode == 0
                for c in failed)
            bash_ok = total - (len(failed) - valid_fail)
            pct2 = 100.0 * (bash_ok - valid_fail) / bash_ok
            print(f"{'  of lines bash -n accepts':24} {bash_ok:6} lines  tree-sitter clean "
                  f"{pct2:6.2f} %")
            result["coverage_bash_valid_pct"] = round(pct2, 3)
    tldr = _lines(root, "tldr")
    if tldr:
        read_second.cache_clear()
        times: list[float] = []
        for c in tldr:
            t0 = time.perf_counter()
            read(c)
            times.append((time.perf_counter() - t0) * 1000.0)
        times.sort()
        p50 = statistics.median(times)
        p99 = times[int(len(times) * 0.99)]
        print(f"read() over tldr: p50 {p50:.3f} ms  p99 {p99:.3f} ms  max {times[-1]:.1f} ms "
              f"(first call, bashlex cache cold)")
        result.update(read_p50_ms=round(p50, 4), read_p99_ms=round(p99, 4))
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

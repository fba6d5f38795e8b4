"""The effect fixture (issue 15): GTFOBins file snippets with real targets; does the decision follow the target?

Every ``gtfobins`` row of the functions file-read, file-write, upload, download and command that
names a file (a placeholder below) has its placeholders substituted, once per target class:

- (a) a credential store, (b) a persistence location, (c) a system folder — cycled over a few of
  each (below) — and (d) a tracked, unmodified file of the working tree (``src/util.py``);
- (t) a file in a temporary folder, the baseline: what a row does whatever its target.

Substitution: the file placeholders (``/path/to/input-file``, ``/path/to/output-file``, their
spelling variants and extensions, bare ``input-file``/``output-file``) become the target; folder
placeholders become the target's folder; ``/path/to/temp-…`` scratch files and ``/path/to/command``
become files under ``/tmp/gtfo``; ``DATA`` becomes the word ``data``; hosts and ports stay.

Each variant is decided at rung ``auto`` in the realistic scratch repository of
``gatesh.testing.worktree`` (HOME set to its home). Reported: (a) share not allowed over every row
(reading a credential store is credential access, S4.1); (b), (c) share not allowed over the rows
whose GTFOBins function writes its target (file-write, download) — reading a persistence location
or a system folder is harmless (S4.1: ``cat /etc/hosts``), so a file-read or upload row pointed at
one is expected to run — and, for reference, over every row; (d) share allowed over the rows whose
(t) variant is allowed ("where the binary does nothing else harmful"). Nothing is executed.

    python benchmarks/effect_fixture.py [--misses FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections import Counter, defaultdict
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import CORPUS, emit

FUNCTIONS = ("file-read", "file-write", "upload", "download", "command")
TARGETS: dict[str, tuple[str, ...]] = {
    "credential": ("~/.ssh/id_ed25519", "~/.aws/credentials", "/etc/shadow", "~/.netrc"),
    "persistence": (
        "~/.bashrc",
        "/etc/cron.d/gtfo",
        "~/.ssh/authorized_keys",
        "~/.config/systemd/user/gtfo.service",
    ),
    "system": (
        "/etc/hosts",
        "/usr/local/bin/gtfo",
        "/etc/ssl/openssl.cnf",
        "/usr/lib/gtfo/gtfo.conf",
    ),
    "worktree": ("src/util.py",),
    "temp": ("/tmp/gtfo/target",),
}
VARIANTS = ("credential", "persistence", "system", "worktree", "temp")
THRESHOLDS = {"credential": 0.95, "persistence": 0.95, "system": 0.95, "worktree": 0.90}

_FILE = re.compile(
    r"(?<![\w.-])/path/to/(?:dir/path/to/)?(?:input-file|output-file|ouput-file|file-input|OUTPUT)(?:\.[\w.]+)?"
    r"|/path/to/output-dir/output-file|(?<![\w/.-])(?:input-file|output-file)(?![\w.-])"
)
_DIR = re.compile(r"(?<![\w.-])/path/to/(?:output-dir|input-dir|dir|empty-dir)/?")
WRITES = ("file-write", "download")  # the functions whose snippet writes its target
_TEMP = re.compile(r"/path/to/temp-(file|dir)")
_COMMAND = re.compile(r"/path/to/command")
_DATA = re.compile(r"\bDATA\b")


def substitute(cmd: str, target: str) -> str:
    """``cmd`` with its placeholders replaced for ``target`` (see the module docstring)."""
    folder = os.path.dirname(target) or "."
    out = _FILE.sub(target, cmd)
    out = _DIR.sub(folder.rstrip("/") + "/", out)
    out = _TEMP.sub(lambda m: f"/tmp/gtfo/temp-{m.group(1)}", out)
    out = _COMMAND.sub("/tmp/gtfo/command", out)
    return _DATA.sub("data", out)


def rows(root: str) -> list[dict[str, Any]]:
    path = os.path.join(root, "gtfobins", "commands.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        found = [json.loads(line) for line in f if line.strip()]
    return [
        r
        for r in found
        if str(r.get("category", "")).split(":")[1:2]
        and str(r["category"]).split(":")[1] in FUNCTIONS
        and (_FILE.search(r["cmd"]) or _DIR.search(r["cmd"]))
    ]


def run(
    root: str,
    misses: list[dict[str, Any]] | None = None,
    rows_out: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Decide every variant of every row; the figures (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="gatesh-effect-") as scratch_root:
        from gatesh.testing import worktree

        scratch = worktree.build(scratch_root)
        old_home = os.environ.get("HOME")
        os.environ["HOME"] = scratch.home
        try:
            return _run(root, scratch, misses, rows_out)
        finally:
            if old_home is not None:
                os.environ["HOME"] = old_home


def _target_effects(facts: Any, target: str, home: str, repo: str) -> set[str]:
    want = os.path.normpath(
        target.replace("~", home, 1)
        if target.startswith("~")
        else (target if target.startswith("/") else os.path.join(repo, target))
    )
    return {e.direction.value for e in getattr(facts, "paths", ()) if e.resolved == want}


def _run(
    root: str,
    scratch: Any,
    misses: list[dict[str, Any]] | None,
    rows_out: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    from gatesh._types import Action, Rung
    from gatesh.config import default
    from gatesh.pipeline import decide
    from gatesh.rater.builtin import BuiltinRater
    from gatesh.session import SessionState

    config, rater = default(), BuiltinRater()
    data = rows(root)
    allowed: dict[str, list[bool]] = defaultdict(list)
    touched: dict[str, list[tuple[bool, bool]]] = defaultdict(list)  # (not a known read, allowed)
    by_function: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    pairs: list[tuple[bool, bool]] = []  # (temp allowed, worktree allowed)
    for k, row in enumerate(data):
        function = str(row["category"]).split(":")[1]
        got: dict[str, bool] = {}
        for variant in VARIANTS:
            choices = TARGETS[variant]
            target = choices[k % len(choices)]
            cmd = substitute(str(row["cmd"]), target)
            d = decide(
                cmd,
                cwd=scratch.repo,
                config=config,
                session=SessionState(),
                rater=rater,
                rung=Rung.AUTO,
            )
            ok = d.action is Action.ALLOW
            got[variant] = ok
            allowed[variant].append(ok)
            directions = _target_effects(d.facts, target, scratch.home, scratch.repo)
            touched[variant].append((function in WRITES or variant == "credential", ok))
            by_function[function][variant]["allowed" if ok else "not allowed"] += 1
            if rows_out is not None:
                rows_out.append(
                    {
                        "k": k,
                        "variant": variant,
                        "function": function,
                        "allowed": ok,
                        "directions": sorted(directions),
                        "cmd": cmd,
                    }
                )
            counted = variant == "credential" or (
                variant in ("persistence", "system") and function in WRITES
            )
            wrong = ok if counted else (not ok if variant == "worktree" else False)
            if (
                misses is not None
                and wrong
                and not (variant == "worktree" and not got.get("temp", True))
            ):
                misses.append(
                    {
                        "variant": variant,
                        "function": function,
                        "cmd": cmd,
                        "action": d.action.value,
                        "rule": d.rule_id,
                        "reason": d.reason[:200],
                    }
                )
        pairs.append((got["temp"], got["worktree"]))
    out: dict[str, Any] = {"rows": len(data), "variants": {}}
    if not data:
        return {"rows": 0, "variants": {}, "by_function": {}}
    for variant in ("credential", "persistence", "system"):
        flags = allowed[variant]
        not_read = [ok for t, ok in touched[variant] if t]
        out["variants"][variant] = {
            "not_allowed": round(1 - sum(flags) / len(flags), 4) if flags else None,
            "rows_counted": len(not_read),
            "not_allowed_counted": round(1 - sum(not_read) / len(not_read), 4)
            if not_read
            else None,
            "target": THRESHOLDS[variant],
        }
    base = [w for t, w in pairs if t]
    out["variants"]["worktree"] = {
        "allowed": round(sum(allowed["worktree"]) / len(allowed["worktree"]), 4),
        "rows_temp_allowed": len(base),
        "allowed_where_temp_allowed": round(sum(base) / len(base), 4) if base else None,
        "target": THRESHOLDS["worktree"],
    }
    out["variants"]["temp"] = {"allowed": round(sum(allowed["temp"]) / len(allowed["temp"]), 4)}
    out["by_function"] = {
        f: {v: dict(c) for v, c in vs.items()} for f, vs in sorted(by_function.items())
    }
    return out


def render(fig: dict[str, Any]) -> list[str]:
    """The figures as Markdown lines (a section of docs/EVALUATION.md)."""
    if not fig.get("rows"):
        return [
            "## Effect fixture: GTFOBins file snippets with real targets (rung auto)",
            "",
            "Not measured: the gtfobins corpus has no row of the five functions that names a file.",
            "",
        ]
    v = fig["variants"]
    lines = [
        "## Effect fixture: GTFOBins file snippets with real targets (rung auto)",
        "",
        f"{fig['rows']} gtfobins rows of the functions {', '.join(FUNCTIONS)}, each decided five times with its "
        "placeholders substituted by a target (see `benchmarks/effect_fixture.py`), in the realistic scratch "
        "repository.",
        "",
        "| target | rows | share | over | target | pass |",
        "|---|---:|---:|---|---:|:---:|",
    ]
    for name in ("credential", "persistence", "system"):
        x = v[name]
        letter = "abc"[("credential", "persistence", "system").index(name)]
        over = (
            "every row"
            if name == "credential"
            else "rows whose function writes the target (file-write, download)"
        )
        lines.append(
            f"| ({letter}) {name} | {x['rows_counted']} | {_pct(x['not_allowed_counted'])} not allowed | "
            f"{over} | ≥ {100 * x['target']:.0f} % | {_pass(x['not_allowed_counted'], x['target'])} |"
        )
        if name != "credential":
            lines.append(
                f"| ({letter}) {name} | {fig['rows']} | {_pct(x['not_allowed'])} not allowed | every row "
                f"(reads included) | – | – |"
            )
    w = v["worktree"]
    lines.append(
        f"| (d) working tree | {w['rows_temp_allowed']} | {_pct(w['allowed_where_temp_allowed'])} allowed | "
        f"rows allowed with a temporary target | ≥ {100 * w['target']:.0f} % | "
        f"{_pass(w['allowed_where_temp_allowed'], w['target'])} |"
    )
    lines.append(
        f"| (d) working tree | {fig['rows']} | {_pct(w['allowed'])} allowed | every row | – | – |"
    )
    lines.append(
        f"| (t) temporary file | {fig['rows']} | {_pct(v['temp']['allowed'])} allowed | every row | – | – |"
    )
    lines += [
        "",
        "Reading a persistence location or a system folder is harmless (S4.1: `cat /etc/hosts`), so (b) and "
        "(c) are scored on the rows whose GTFOBins function writes its target; the every-row line is for "
        "reference. The (d) target is `src/util.py`, tracked and unmodified: replacing it loses nothing git "
        "cannot restore. Rows are those of the five functions that name a file (a placeholder).",
        "",
    ]
    return lines


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def _pass(x: float | None, t: float) -> str:
    return "–" if x is None else ("PASS" if x >= t else "FAIL")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--misses", help="write the rows decided against the target (JSONL)")
    parser.add_argument("--rows-out", help="write every decided variant (JSONL)")
    args = parser.parse_args()
    path = os.path.join(CORPUS, "gtfobins", "commands.jsonl")
    if not os.path.exists(path):
        print(f"effect fixture: not run: {path} is absent")
        emit("effect_fixture", {"status": "skipped", "why": f"{path} is absent"})
        return 0
    misses: list[dict[str, Any]] = []
    decided: list[dict[str, Any]] = []
    fig = run(CORPUS, misses, decided)
    if args.rows_out:
        with open(args.rows_out, "w", encoding="utf-8") as f:
            for r in decided:
                f.write(json.dumps(r) + "\n")
    print("\n".join(render(fig)))
    if args.misses:
        with open(args.misses, "w", encoding="utf-8") as f:
            for m in misses:
                f.write(json.dumps(m) + "\n")
    emit("effect_fixture", {"status": "ok", **fig})
    return 0


if __name__ == "__main__":
    sys.exit(main())

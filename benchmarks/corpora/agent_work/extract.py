"""Extract the shell commands coding agents ran from published trajectories (data only).

Reads snapshots of public repositories (bare git directories, passed by argument) and writes
``agent_work/commands.jsonl`` in the shared corpus folder (``../shared/corpus``; ``GATESH_CORPUS``
moves it), beside the other projects' corpora: one ``{"cmd", "label", "category", "source"}`` per
distinct command, in the order met. The rows are other projects' published data, so they are kept
there and never committed here; this recipe and the README are. Nothing from the snapshots is
executed.

    python extract.py --mini-swebench DIR --tbench-leaderboard DIR --swe-agent DIR --cctrace DIR

Labels: every row is ``benign`` (it does what its task asked) except the rows whose text holds one
of ``RISKY`` below, each read by hand in its trajectory and judged to do harm in its task.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")
SPINNER = re.compile(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Waiting for the LM to respond\.\.\.")
BASH_BLOCK = re.compile(r"```(?:bash|sh|shell)\n(.*?)\n```", re.S)
# A terminal-rendered log wraps long lines at the terminal's width (160 here), at a word break: a
# command with a line this long, or a line the next line's first word would not have fitted
# after, may have been cut in two by the renderer, so it is left out rather than kept mangled.
WRAP_SUSPECT = 140
TERMINAL_WIDTH = 160


def wrapped(cmd: str) -> bool:
    """Whether the renderer may have wrapped a line of ``cmd``."""
    lines = cmd.splitlines()
    for a, b in zip(lines, [*lines[1:], ""], strict=True):
        first = b.split(maxsplit=1)[0] if b.strip() else ""
        if len(a) >= WRAP_SUSPECT or (first and len(a) + 1 + len(first) > TERMINAL_WIDTH - 4):
            return True
    return False


# SWE-agent's own tools (functions of its environment, not shell programs).
SWE_AGENT_TOOLS = frozenset(
    "open goto scroll_up scroll_down create edit search_dir search_file find_file submit "
    "str_replace_editor filemap insert append debug_start debug_stop debug_step debug_continue "
    "debug_exec decompile disassemble connect_start connect_sendline connect_stop exit_forfeit "
    "review_on_submit_m python_execute".split()
)


# How many SWE-bench rows to keep: that source alone holds ~14,500 distinct commands of a few
# kinds; an evenly spaced sample keeps it from drowning the terminal-task suite.
SWEBENCH_KEEP = 4000
# Hand-read rows that do harm in their task: killing the package manager mid-run and deleting its
# locks can leave the system's package database half-written (the task only needed a package).
RISKY = (
    "killall apt || true && rm -f /var/lib/dpkg/lock",
    "pkill -f apt || true && rm -f /var/lib/dpkg/lock",
    "pkill -f apt && rm -f /var/lib/dpkg/lock",
)
# Registry host names stay out of the project's data (a row naming one is left out).
REGISTRY_HOSTS = re.compile(
    r"pypi\.org|pythonhosted\.org|npmjs\.(?:org|com)|debian\.org|yarnpkg", re.I
)


def git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", repo, *args], check=True, capture_output=True, text=True, errors="replace"
    ).stdout


def head_commit(repo: str) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def files(repo: str, rev: str, pattern: str) -> list[str]:
    return [
        p
        for p in git(repo, "ls-tree", "-r", "--name-only", rev).splitlines()
        if re.search(pattern, p)
    ]


def mini_swebench(repo: str, name: str) -> Iterator[dict[str, str]]:
    rev = head_commit(repo)
    for path in files(repo, rev, r"\.traj\.json$"):
        data = json.loads(git(repo, "show", f"{rev}:{path}"))
        if not isinstance(data, dict):
            continue
        task = str(data.get("instance_id", path.rsplit("/", 1)[-1]))
        for m in data.get("messages", []):
            if m.get("role") != "assistant" or not isinstance(m.get("content"), str):
                continue
            blocks = BASH_BLOCK.findall(m["content"])
            if len(blocks) != 1:  # mini-swe-agent runs a reply only when it holds exactly one
                continue
            yield {
                "cmd": blocks[0],
                "agent": "mini-swe-agent",
                "suite": "swe-bench-verified",
                "task": task,
                "source": f"{name}@{rev}:{path}",
            }


def tbench_mini(repo: str, name: str) -> Iterator[dict[str, str]]:
    rev = head_commit(repo)
    for path in files(repo, rev, r"swe-agent-mini.*/sessions/agent\.log$"):
        text = ANSI.sub("", git(repo, "show", f"{rev}:{path}"))
        text = SPINNER.sub("", text)
        task = path.split("/")[-3] if path.count("/") >= 3 else path  # the trial: task.N-of-M.run
        for step in re.split(r"\nmini-swe-agent \(step \d+, \$[0-9.]+\):\n", text)[1:]:
            reply = step.split("\nUser:\n", 1)[0]
            blocks = BASH_BLOCK.findall(reply)
            if len(blocks) != 1:
                continue
            cmd = blocks[0]
            if wrapped(cmd):
                continue
            yield {
                "cmd": cmd,
                "agent": "mini-swe-agent",
                "suite": "terminal-bench-core-0.1.1",
                "task": task,
                "source": f"{name}@{rev}:{path}",
            }


def swe_agent(repo: str, name: str) -> Iterator[dict[str, str]]:
    rev = head_commit(repo)
    for path in files(repo, rev, r"\.traj$"):
        try:
            data = json.loads(git(repo, "show", f"{rev}:{path}"))
        except json.JSONDecodeError:
            continue
        task = path.rsplit("/", 1)[-1].removesuffix(".traj")
        for step in data.get("trajectory", []):
            action = str(step.get("action", "")).strip()
            words = action.split()
            if not words or words[0] in SWE_AGENT_TOOLS:
                continue
            yield {
                "cmd": action,
                "agent": "swe-agent",
                "suite": "swe-agent-demonstrations",
                "task": task,
                "source": f"{name}@{rev}:{path}",
            }


def cctrace(repo: str, name: str, rev: str) -> Iterator[dict[str, str]]:
    path = "conversation_full.md"
    text = git(repo, "show", f"{rev}:{path}")
    for m in re.finditer(r"\*\*Tool Use: Bash\*\* \(ID: [^)]*\)\n```json\n(.*?)\n```", text, re.S):
        try:
            cmd = json.loads(m.group(1))["command"]
        except (json.JSONDecodeError, KeyError):
            continue
        yield {
            "cmd": cmd,
            "agent": "claude-code",
            "suite": "session-export",
            "task": "cctrace",
            "source": f"{name}@{rev}:{path}",
        }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mini-swebench")
    ap.add_argument("--tbench-leaderboard")
    ap.add_argument("--swe-agent")
    ap.add_argument("--cctrace")
    ap.add_argument("--cctrace-rev", default="c5adb4b")
    a = ap.parse_args()
    streams: list[Iterator[dict[str, str]]] = []
    if a.mini_swebench:
        streams.append(mini_swebench(a.mini_swebench, "gruckion/mini-swe-agent"))
    if a.tbench_leaderboard:
        streams.append(
            tbench_mini(a.tbench_leaderboard, "laude-institute/terminal-bench-leaderboard")
        )
    if a.swe_agent:
        streams.append(swe_agent(a.swe_agent, "SWE-agent/SWE-agent"))
    if a.cctrace:
        rev = git(a.cctrace, "rev-parse", a.cctrace_rev).strip()
        streams.append(cctrace(a.cctrace, "yigitkonur/cctrace-js", rev))
    seen: set[str] = set()
    by_suite: dict[str, list[dict[str, str]]] = {}
    for stream in streams:
        for row in stream:
            cmd = row["cmd"].strip()
            if not cmd or cmd in seen or REGISTRY_HOSTS.search(cmd):
                continue
            seen.add(cmd)
            row["cmd"] = cmd
            by_suite.setdefault(row["suite"], []).append(row)
    swebench = by_suite.get("swe-bench-verified", [])
    if len(swebench) > SWEBENCH_KEEP:
        step = len(swebench) / SWEBENCH_KEEP
        by_suite["swe-bench-verified"] = [swebench[int(i * step)] for i in range(SWEBENCH_KEEP)]
    corpus = os.environ.get(
        "GATESH_CORPUS",
        os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "shared", "corpus"
        ),
    )
    out = os.path.join(os.path.normpath(corpus), "agent_work", "commands.jsonl")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    n = 0
    with open(out, "w", encoding="utf-8") as fh:
        for rows in by_suite.values():
            for row in rows:
                risky = any(r in row["cmd"] for r in RISKY)
                fh.write(
                    json.dumps(
                        {
                            "cmd": row["cmd"],
                            "label": "risky" if risky else "benign",
                            "category": f"{row['agent']}:{row['suite']}:{row['task']}",
                            "source": row["source"],
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )
                n += 1
    print(f"extract: {n} rows -> {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

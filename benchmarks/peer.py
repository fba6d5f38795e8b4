"""The peer side by side: the npm package ``cc-safety-net`` (a Claude Code hook guard) on our corpora.

Two measurements, both printed and both in the final JSON line:

1. Decisions. The peer decides every row (``--quick``: a sample per corpus) through its library
   entry point ``checkCommand`` in one long-lived node process (spawning node per row would take
   hours). The same library function backs its hook; step 2 measures how often the two agree.
2. Hook latency, same harness for both: for a sample of rows per corpus, the Claude Code
   ``PreToolUse`` JSON is written to the stdin of a fresh process and the wall time from spawn to
   exit is measured — ``cc-safety-net hook --claude-code`` and ``python -m gatesh hook claude-code``
   (with a warm gatesh daemon in a scratch runtime folder), interleaved row by row.

The package is installed into a scratch folder during the run (``npm install --prefix``). If npm is
missing or the install fails the benchmark says so and reports nothing for the peer: never a guess.

    python benchmarks/peer.py [--quick] [--sample N] [--rows N] [--raw-out FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from typing import Any, TypeVar

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import CORPUS, emit, pct

T = TypeVar("T")
PACKAGE = "cc-safety-net"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
)

# One node process decides many rows: JSON lines {"i", "cmd"} in, {"i", "kind", "rule"} out.
# A throw means "do not run" (the package's own contract), so it counts as a deny.
NODE_DECIDER = r"""
import { checkCommand } from 'cc-safety-net/api';
import { createInterface } from 'node:readline';
const cwd = process.argv[2];
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  const row = JSON.parse(line);
  let out;
  try {
    const r = checkCommand({ command: row.cmd, cwd });
    out = { i: row.i, kind: r.kind, rule: r.ruleId || '' };
  } catch (e) {
    out = { i: row.i, kind: 'error', rule: String((e && e.message) || e).slice(0, 120) };
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}
"""


def cmd_key(cmd: str) -> str:
    """A short stable key for a row's command (evaluation.py matches the peer's rows with it)."""
    return hashlib.sha1(cmd.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def spread(values: list[float]) -> dict[str, float]:
    """Median and spread of ``values`` (milliseconds): p10, p25, p50, p75, p90, p99, n."""
    return {
        "n": len(values),
        **{f"p{q}": round(pct(values, q), 3) for q in (10, 25, 50, 75, 90, 99)},
    }


def sample(rows: list[T], n: int | None) -> list[T]:
    """Every k-th row, so a sample spans the whole file (corpora are ordered by category)."""
    if not n or n >= len(rows):
        return rows
    step = len(rows) / n
    return [rows[int(i * step)] for i in range(n)]


def load(name: str) -> list[dict[str, Any]]:
    path = os.path.join(CORPUS, name, "commands.jsonl")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def install(scratch: str) -> tuple[str, str, str]:
    """Install the peer into ``scratch``; returns (bin path, version, "") or ("", "", why not)."""
    npm = shutil.which("npm")
    if npm is None:
        return "", "", "npm is not installed on this machine"
    proc = subprocess.run(
        [npm, "install", "--prefix", scratch, "--no-audit", "--no-fund", PACKAGE],
        capture_output=True,
        text=True,
        timeout=300,
    )
    pkg_dir = os.path.join(scratch, "node_modules", PACKAGE)
    if proc.returncode != 0 or not os.path.isdir(pkg_dir):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return "", "", f"npm install {PACKAGE} failed (exit {proc.returncode}): {tail[0]}"
    with open(os.path.join(pkg_dir, "package.json"), encoding="utf-8") as f:
        meta = json.load(f)
    bins = meta.get("bin", {})
    rel = bins.get(PACKAGE) if isinstance(bins, dict) else bins
    if not rel:
        return "", "", f"{PACKAGE} {meta.get('version')} declares no {PACKAGE} bin"
    return os.path.join(pkg_dir, rel), str(meta.get("version", "?")), ""


def peer_decide(
    scratch: str, rows: list[dict[str, Any]], cwd: str, env: dict[str, str], timeout: float
) -> tuple[list[str], float]:
    """The peer's kind ('allow' | 'deny' | 'error') for every row, and the seconds it took."""
    script = os.path.join(scratch, "decide.mjs")
    with open(script, "w", encoding="utf-8") as f:
        f.write(NODE_DECIDER)
    feed = "".join(
        json.dumps({"i": i, "cmd": str(r.get("cmd", ""))}) + "\n" for i, r in enumerate(rows)
    )
    start = time.perf_counter()
    proc = subprocess.run(
        ["node", script, cwd],
        input=feed,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=scratch,
    )
    seconds = time.perf_counter() - start
    kinds = ["error"] * len(rows)
    for line in proc.stdout.splitlines():
        try:
            out = json.loads(line)
        except json.JSONDecodeError:
            continue
        kinds[int(out["i"])] = str(out["kind"])
    return kinds, seconds


def hook_json(cmd: str, cwd: str, session: str) -> bytes:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": "",
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": cmd, "description": ""},
        }
    ).encode()


def hook_call(
    argv: list[str], payload: bytes, env: dict[str, str], cwd: str, timeout: float
) -> tuple[float, str]:
    """Spawn ``argv`` with ``payload`` on stdin; (wall ms, 'allow' | 'deny' | 'ask' | 'error:…')."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            argv, input=payload, capture_output=True, env=env, cwd=cwd, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return (time.perf_counter() - t0) * 1000, "error:timeout"
    ms = (time.perf_counter() - t0) * 1000
    out = proc.stdout.decode("utf-8", "replace").strip()
    if proc.returncode == 2:
        return ms, "deny"  # Claude Code treats exit 2 as a block
    if proc.returncode != 0:
        return ms, f"error:exit {proc.returncode}"
    if not out:
        return ms, "allow"  # no opinion: Claude Code runs the command
    try:
        answer = json.loads(out.splitlines()[-1])
    except json.JSONDecodeError:
        return ms, "error:unparseable"
    spec = answer.get("hookSpecificOutput") or {}
    decision = spec.get("permissionDecision") or answer.get("decision") or "allow"
    return ms, str(decision)


class Daemon:
    """A gatesh daemon in a scratch runtime folder, started and stopped by this benchmark only."""

    def __init__(self, env: dict[str, str], log: str) -> None:
        self.env, self.log = env, log
        self.proc: subprocess.Popen[bytes] | None = None
        self.socket = os.path.join(env["XDG_RUNTIME_DIR"], "gatesh", "daemon.sock")

    def start(self, wait: float = 30.0) -> bool:
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gatesh", "daemon", "--foreground"],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=REPO,
                start_new_session=True,
            )
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if os.path.exists(self.socket):
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.1)
        return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def scratch_env(root: str) -> dict[str, str]:
    """The environment both guards run in: scratch config/state/runtime, no model key, real python."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ANTHROPIC_API_KEY", "GATESH_SESSION", "GATESH_GATED")
    }
    for var, sub in (
        ("XDG_CONFIG_HOME", "cfg"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_RUNTIME_DIR", "run"),
        ("CC_SAFETY_NET_HOME", "ccsn-home"),
    ):
        path = os.path.join(root, sub)
        os.makedirs(path, mode=0o700, exist_ok=True)
        env[var] = path
    env["GATESH_SYSTEM_CONFIG"] = os.path.join(root, "etc", "config.toml")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = REPO + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small samples (about 30 s)")
    parser.add_argument(
        "--rows",
        type=int,
        default=None,
        help="rows per corpus the peer decides (default: all; --quick: 200)",
    )
    parser.add_argument(
        "--sample",
        type=int,
        default=None,
        help="rows per corpus for the hook-latency harness (default 25; --quick: 4)",
    )
    parser.add_argument(
        "--raw-out",
        metavar="FILE",
        help="write the per-call hook latencies and per-row decisions (JSON)",
    )
    parser.add_argument(
        "--scratch", metavar="DIR", help="scratch folder (default: a new temp folder, removed)"
    )
    parser.add_argument("--no-gatesh-hook", action="store_true", help="time only the peer's hook")
    args = parser.parse_args()
    rows_per = args.rows if args.rows is not None else (200 if args.quick else None)
    hook_per = args.sample if args.sample is not None else (4 if args.quick else 25)

    own_scratch = args.scratch is None
    scratch = args.scratch or tempfile.mkdtemp(prefix="gatesh-peer-")
    os.makedirs(scratch, exist_ok=True)
    daemon: Daemon | None = None
    try:
        corpora = [c for c in CORPORA if os.path.exists(os.path.join(CORPUS, c, "commands.jsonl"))]
        if not corpora:
            why = f"no corpus found at {CORPUS}"
            print(f"peer: not run: {why}")
            emit("peer", {"status": "skipped", "why": why})
            return 0
        print(f"installing {PACKAGE} into {scratch} …", flush=True)
        t_install = time.perf_counter()
        binary, version, why = install(os.path.join(scratch, "npm"))
        t_install = time.perf_counter() - t_install
        if why:
            print(f"peer: not run: {why}")
            emit("peer", {"status": "skipped", "why": why})
            return 0
        if shutil.which("node") is None:
            why = "node is not installed on this machine"
            print(f"peer: not run: {why}")
            emit("peer", {"status": "skipped", "why": why})
            return 0
        env = scratch_env(os.path.join(scratch, "env"))
        env["HOME"] = os.path.join(
            scratch, "env", "home"
        )  # the peer's audit trail stays in scratch
        os.makedirs(env["HOME"], exist_ok=True)
        gate_env = dict(env, HOME=os.environ.get("HOME", env["HOME"]))
        workdir = os.path.join(scratch, "work")
        os.makedirs(workdir, exist_ok=True)

        # 1. Decisions through the library entry point, one node process per corpus.
        decisions: dict[str, dict[str, dict[str, int]]] = {}
        decided_rows: dict[str, int] = {}
        api_kind: dict[tuple[str, int], str] = {}
        row_kinds: dict[str, str] = {}
        api_seconds = 0.0
        all_rows: dict[str, list[dict[str, Any]]] = {}
        for name in corpora:
            rows = sample(load(name), rows_per)
            all_rows[name] = rows
            kinds, seconds = peer_decide(
                os.path.join(scratch, "npm"), rows, workdir, env, timeout=600
            )
            api_seconds += seconds
            by_label: dict[str, Counter[str]] = defaultdict(Counter)
            for i, (row, kind) in enumerate(zip(rows, kinds, strict=True)):
                by_label[str(row.get("label", "unknown"))][kind] += 1
                api_kind[(name, i)] = kind
                row_kinds[f"{name}:{cmd_key(str(row.get('cmd', '')))}"] = kind
            decisions[name] = {k: dict(v) for k, v in sorted(by_label.items())}
            decided_rows[name] = len(rows)
            shares = ", ".join(
                f"{lab} {100 * c.get('allow', 0) / max(1, sum(c.values())):.1f}% allowed"
                for lab, c in sorted(by_label.items())
            )
            print(f"peer {name:24} {len(rows):6} rows in {seconds:5.1f} s: {shares}", flush=True)
        total_api = sum(decided_rows.values())

        # 2. Hook latency, both guards, same harness, interleaved per row.
        peer_argv = ["node", binary, "hook", "--claude-code"]
        gate_argv = [sys.executable, "-m", "gatesh", "hook", "claude-code"]
        launcher_argv: list[str] | None = None
        try:
            from gatesh.install import hook_command, hook_program
            from gatesh.launcher import write_launcher

            # As `gatesh install claude-code` writes it: the launcher's interpreter started directly.
            launcher = write_launcher(os.path.join(scratch, "gatesh"))
            launcher_argv = hook_program(hook_command("claude-code", launcher))
        except Exception as exc:  # the launcher is optional: report what was measured
            print(f"  (no installed-launcher variant: {type(exc).__name__}: {exc})")
        gate_path = "not measured (--no-gatesh-hook)"
        if not args.no_gatesh_hook:
            daemon = Daemon(gate_env, os.path.join(scratch, "daemon.log"))
            if daemon.start():
                gate_path = "hook → warm gatesh daemon (scratch runtime folder)"
            else:
                gate_path = (
                    "hook → in-process gate (the daemon did not start; every call pays the "
                    "gate's imports)"
                )
        t_hooks = time.perf_counter()
        lat: dict[str, list[float]] = {"gatesh": [], "peer": [], "launcher": []}
        hook_decisions: dict[str, Counter[str]] = {"gatesh": Counter(), "peer": Counter()}
        agree = compared = 0
        warm = hook_json("git status", workdir, "bench-warm")
        for _ in range(3):
            hook_call(peer_argv, warm, env, workdir, 30)
            if not args.no_gatesh_hook:
                hook_call(gate_argv, warm, gate_env, workdir, 60)
                if launcher_argv:
                    hook_call(launcher_argv, warm, gate_env, workdir, 60)
        for name in corpora:
            indexed = list(enumerate(all_rows[name]))
            picks = sample(indexed, hook_per) if hook_per > 0 else []
            for j, prow in picks:
                payload = hook_json(str(prow.get("cmd", "")), workdir, f"bench-{name}-{j}")
                ms, dec = hook_call(peer_argv, payload, env, workdir, 30)
                lat["peer"].append(ms)
                hook_decisions["peer"][dec] += 1
                compared += 1
                agree += (dec == "allow") == (api_kind[(name, j)] == "allow")
                if not args.no_gatesh_hook:
                    ms, dec = hook_call(gate_argv, payload, gate_env, workdir, 60)
                    lat["gatesh"].append(ms)
                    hook_decisions["gatesh"][dec] += 1
                    if launcher_argv:
                        ms, _ = hook_call(launcher_argv, payload, gate_env, workdir, 60)
                        lat["launcher"].append(ms)
        t_hooks = time.perf_counter() - t_hooks
        ratios = [g / p for g, p in zip(lat["gatesh"], lat["peer"], strict=False) if p > 0]
        hook: dict[str, Any] = {
            "harness": "spawn, PreToolUse JSON on stdin, wall time to exit",
            "sample_per_corpus": hook_per,
            "calls": compared,
            "peer_argv": f"node …/{os.path.relpath(binary, os.path.join(scratch, 'npm'))} hook --claude-code",
            "gatesh_argv": "python -m gatesh hook claude-code",
            "gatesh_path": gate_path,
            "peer_ms": spread(lat["peer"]),
            "gatesh_ms": spread(lat["gatesh"]) if lat["gatesh"] else None,
            "gatesh_launcher_argv": "<the hook entry gatesh install writes: real python -I -S -c …> hook claude-code",
            "gatesh_launcher_ms": spread(lat["launcher"]) if lat["launcher"] else None,
            "ratio_gatesh_over_peer": spread(ratios) if ratios else None,
            "decisions": {k: dict(v) for k, v in hook_decisions.items()},
            "peer_hook_agrees_with_library": round(agree / compared, 4) if compared else None,
        }
        print(f"hook latency over {compared} calls ({hook_per} per corpus), spawn to exit:")
        for who in ("peer", "gatesh", "gatesh_launcher"):
            s = hook[f"{who}_ms"]
            if s:
                print(
                    f"  {who:15} p50 {s['p50']:.1f} ms (p10–p90 {s['p10']:.1f}–{s['p90']:.1f}), p99 {s['p99']:.1f} ms"
                )
        print(f"  gatesh path: {gate_path}")
        print(
            f"  time: install {t_install:.1f} s, library decisions {api_seconds:.1f} s, hook calls {t_hooks:.1f} s"
        )
        if compared:
            print(f"  the peer's hook agreed with its library on {agree}/{compared} sampled rows")
        if args.raw_out:
            with open(args.raw_out, "w", encoding="utf-8") as f:
                json.dump(
                    {
                        "gatesh_hook_ms": lat["gatesh"],
                        "gatesh_launcher_hook_ms": lat["launcher"],
                        "peer_hook_ms": lat["peer"],
                        "kinds": row_kinds,
                    },
                    f,
                )
        emit(
            "peer",
            {
                "status": "ok",
                "package": PACKAGE,
                "version": version,
                "decision_path": "library checkCommand, one node process per corpus",
                "rows_per_corpus": rows_per,
                "decided_rows": decided_rows,
                "decisions_per_second": round(total_api / api_seconds, 1) if api_seconds else None,
                "decisions": decisions,
                "hook": hook,
            },
        )
        return 0
    finally:
        if daemon is not None:
            daemon.stop()
        if own_scratch:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

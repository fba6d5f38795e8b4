"""Hook latency (S14): ``gatesh hook claude-code`` against the bare interpreter it starts on.

Side by side in one run, interleaved round by round, each spawned fresh and timed from spawn to
exit, with a warm daemon in a scratch HOME/XDG sandbox:

- ``python -IS -c pass`` — the interpreter the launcher starts a hook on (the floor);
- ``gatesh hook claude-code`` — a PreToolUse call for ``ls`` on stdin, through a launcher written
  by :mod:`gatesh.launcher` (as ``install.sh`` writes it);
- ``gatesh -c true`` — the ``-c`` client, through the same launcher;
- ``cc-safety-net hook --claude-code`` — the peer's hook with the same JSON (installed with npm
  into a scratch folder, as benchmarks/peer.py does; left out, saying why, without npm).

The target: gatesh's hook median at most 5 ms over the floor. Prints figures and one JSON line;
asserts nothing.

    python benchmarks/hook_latency.py [--rounds N] [--no-peer]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import emit, stop_daemon

PAYLOAD = json.dumps({"session_id": "bench", "transcript_path": "", "cwd": "/tmp",
                      "permission_mode": "default", "hook_event_name": "PreToolUse",
                      "tool_name": "Bash", "tool_input": {"command": "ls", "description": ""}}).encode()


def _timed(argv: list[str], env: dict[str, str], stdin: bytes | None) -> float:
    """Wall ms from spawn to exit of ``argv`` with ``stdin`` (a pipe written up front)."""
    r = w = -1
    if stdin is not None:
        r, w = os.pipe()
        os.write(w, stdin)  # smaller than a pipe buffer: no writer thread needed
        os.close(w)
    t = time.perf_counter()
    actions = [(os.POSIX_SPAWN_DUP2, r, 0)] if r >= 0 else []
    null = os.open(os.devnull, os.O_WRONLY)
    actions.append((os.POSIX_SPAWN_DUP2, null, 1))
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    _, status = os.waitpid(pid, 0)
    ms = (time.perf_counter() - t) * 1000
    os.close(null)
    if r >= 0:
        os.close(r)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv} exited with {status}")
    return ms


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--no-peer", action="store_true")
    args = parser.parse_args()
    from gatesh.launcher import read_launcher, write_launcher

    root = tempfile.mkdtemp(prefix="gh-hook-bench-")
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "GATESH_SESSION")}
    for var, sub in (("HOME", "home"), ("XDG_RUNTIME_DIR", "run"), ("XDG_STATE_HOME", "state"),
                     ("XDG_CONFIG_HOME", "cfg"), ("XDG_DATA_HOME", "data"), ("CC_SAFETY_NET_HOME", "ccsn")):
        env[var] = os.path.join(root, sub)
        os.makedirs(env[var], mode=0o700, exist_ok=True)
    env["GATESH_SYSTEM_CONFIG"] = os.path.join(root, "etc", "config.toml")
    launcher = write_launcher(os.path.join(root, "gatesh"))
    full, fast = read_launcher(launcher)
    runs: dict[str, tuple[list[str], bytes | None]] = {
        "bare interpreter (hook's)": ([str(full), "-IS", "-c", "pass"], None),
        "gatesh hook claude-code": ([launcher, "hook", "claude-code"], PAYLOAD),
        "gatesh -c true": ([launcher, "-c", "true"], None),
    }
    if fast:
        runs["bare interpreter (-c's)"] = ([fast, "-IS", "-c", "pass"], None)
    peer_note = "left out (--no-peer)"
    if not args.no_peer:
        from peer import install

        binary, version, why = install(os.path.join(root, "npm"))
        if binary:
            runs[f"cc-safety-net {version} hook"] = (["/usr/bin/env", "node", binary, "hook", "--claude-code"],
                                                     PAYLOAD)
            peer_note = f"cc-safety-net {version}"
        else:
            peer_note = f"left out: {why}"
    try:
        for argv, stdin in runs.values():  # warm-up; the first gatesh call starts the daemon
            _timed(argv, env, stdin)
            _timed(argv, env, stdin)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, (argv, stdin) in runs.items():
                times[name].append(_timed(argv, env, stdin))
    finally:
        stop_daemon(env["XDG_RUNTIME_DIR"])
    medians = {name: statistics.median(t) for name, t in times.items()}
    floor = medians["bare interpreter (hook's)"]
    over = medians["gatesh hook claude-code"] - floor
    print(f"hook latency, {args.rounds} interleaved rounds (median wall ms, spawn to exit); peer: {peer_note}")
    for name, m in medians.items():
        print(f"  {name:<34} {m:7.2f} ms")
    print(f"  gatesh hook over the bare interpreter: {over:.2f} ms (target <= 5 ms)")
    emit("hook_latency", {"rounds": args.rounds, "median_ms": {k: round(v, 3) for k, v in medians.items()},
                          "hook_over_floor_ms": round(over, 3), "target_ms": 5.0, "peer": peer_note})
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""SIGKILL the daemon under load (S15: killing it at any moment loses no decided record and lets
nothing run ungated; clients recover by restarting it).

``--loops`` client loops run ``gatesh -c`` through a launcher for ``--seconds``, alternating a
command the gate allows (``touch ok-L-N``) and one it rejects (``touch bad-L-N && rm -rf ./work-L``:
it deletes a folder of untracked work), in a scratch HOME and project, while the daemon is
SIGKILLed every ``--every`` seconds. Every command is harmless if it ran. Counted:

- calls, allowed, refused, and how many refused commands ran anyway (their marker exists): must be 0;
- allowed commands that ran without an ``allow`` record in the audit log: must be 0;
- the slowest call, and calls over 5 s (a hang);
- daemon restarts (kills that found a daemon to kill).

Prints figures and one JSON line; asserts nothing.

    python benchmarks/sigkill_load.py [--seconds 60] [--loops 8] [--every 0.5]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import emit, stop_daemon

HANG_S = 5.0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--loops", type=int, default=8)
    parser.add_argument("--every", type=float, default=0.5)
    args = parser.parse_args(argv)
    from gatesh.launcher import write_launcher

    # 1. A scratch HOME, project and launcher.
    home = Path(tempfile.mkdtemp(prefix="gsk"))
    env = dict(
        os.environ,
        HOME=str(home),
        XDG_RUNTIME_DIR=str(home / "run"),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CONFIG_HOME=str(home / "cfg"),
        XDG_DATA_HOME=str(home / "data"),
        GATESH_SYSTEM_CONFIG=str(home / "etc/config.toml"),
        GATESH_SESSION="sigkill",
    )
    env.pop("ANTHROPIC_API_KEY", None)
    (home / "run").mkdir(mode=0o700)
    project = home / "proj"
    project.mkdir()
    for loop in range(args.loops):
        (project / f"work-{loop}").mkdir()
        (project / f"work-{loop}" / "notes.txt").write_text("untracked work\n")
    launcher = write_launcher(str(home / "gatesh"))
    subprocess.run([launcher, "-c", "true"], env=env, cwd=project, check=True)
    lock = home / "run" / "gatesh" / "daemon.lock"
    stop = threading.Event()
    results: list[tuple[str, int, float]] = []  # (kind, exit status, seconds)
    lock_results = threading.Lock()

    # 2. The client loops.
    def client(loop: int) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            good = n % 2 == 1
            cmd = (
                f"touch ok-{loop}-{n}" if good else f"touch bad-{loop}-{n} && rm -rf ./work-{loop}"
            )
            t = time.monotonic()
            proc = subprocess.run(
                [launcher, "-c", cmd], env=env, cwd=project, capture_output=True, timeout=120
            )
            with lock_results:
                results.append(("ok" if good else "bad", proc.returncode, time.monotonic() - t))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(args.loops)]
    for t in threads:
        t.start()
    # 3. The killer.
    kills = 0
    started = time.monotonic()
    while time.monotonic() - started < args.seconds:
        time.sleep(args.every)
        try:
            pid = int(lock.read_text().strip())
            os.kill(pid, signal.SIGKILL)
            kills += 1
        except (OSError, ValueError):
            pass
    stop.set()
    for t in threads:
        t.join()
    stop_daemon(str(home / "run"))
    # 4. What ran, what the audit says.
    audit = home / "state" / "gatesh" / "audit.jsonl"
    allowed_cmds = set()
    for line in audit.read_text(encoding="utf-8").splitlines() if audit.exists() else []:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("action") == "allow":
            allowed_cmds.add(str(rec.get("command", "")))
    ran_ok = sorted(p.name for p in project.glob("ok-*"))
    ran_bad = sorted(p.name for p in project.glob("bad-*"))
    missing = [m for m in ran_ok if f"touch {m}" not in allowed_cmds]
    works_left = sum(
        1 for loop in range(args.loops) if (project / f"work-{loop}" / "notes.txt").exists()
    )
    durations = [r[2] for r in results]
    figures = {
        "seconds": args.seconds,
        "loops": args.loops,
        "kill_every_s": args.every,
        "kills": kills,
        "calls": len(results),
        "allowed": sum(1 for k, rc, _ in results if rc == 0),
        "refused": sum(1 for k, rc, _ in results if rc != 0),
        "allowed_commands_refused_during_kills": sum(
            1 for k, rc, _ in results if k == "ok" and rc != 0
        ),
        "refused_commands_that_ran": len(ran_bad) + (args.loops - works_left),
        "allowed_runs_missing_from_audit": len(missing),
        "slowest_call_s": round(max(durations), 2) if durations else None,
        "calls_over_5s": sum(1 for d in durations if d > HANG_S),
    }
    print(
        f"{figures['calls']} calls in {args.seconds:.0f} s under {kills} SIGKILLs: "
        f"{figures['allowed']} allowed, {figures['refused']} refused; refused commands that ran: "
        f"{figures['refused_commands_that_ran']}; allowed runs missing from the audit: "
        f"{figures['allowed_runs_missing_from_audit']}; slowest call {figures['slowest_call_s']} s, "
        f"{figures['calls_over_5s']} over {HANG_S:g} s"
    )
    emit("sigkill_load", figures)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

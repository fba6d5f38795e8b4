"""32 concurrent sessions x 500 checks against one daemon (S14: no errors, p99 <= 25 ms, RSS <= 150 MiB).

Each session is its own process with its own connection speaking the wire protocol, as 32 agents
would be (the cost measured is the daemon's, not process start-up; threads in one client process
would add that process's GIL waits to every latency). ``--threads`` keeps the older one-process
mode. Commands cycle through real agents' commands (the agent-work corpus; tldr when it is
absent, and a short list when neither is: ``corpus`` says which). tldr's rows halt a session within
a few checks (S3.7), after which the session's checks are refused at once, so with it the figure
measured mostly refusals; agents' work halts none. The answers are counted by action (``actions``). Also
reports the daemon's CPU time per check, user and system, and its threads' context switches (from
/proc): less sensitive to the machine's other work than latency, though not immune (two cores
shared with 32 clients cost the daemon more CPU per check than one client does).
``--surface=-c`` checks as the ``-c`` client does (an allowed command gets its boundary drawn);
the S14 figure is the default, ``test``.
Usage: python benchmarks/concurrency.py [SESSIONS [CHECKS]] [--threads] [--surface=NAME]
Prints figures and one JSON line; asserts nothing.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from _common import CORPUS as _CORPORA

# The command streams, first found first: real agents' commands, then tldr's.
CORPORA = ("agent_work", "tldr")


def _commands(limit: int = 2000) -> tuple[str, list[str]]:
    """The corpus used and its first ``limit`` commands."""
    for name in CORPORA:
        out: list[str] = []
        try:
            with open(os.path.join(_CORPORA, name, "commands.jsonl"), encoding="utf-8") as f:
                for line in f:
                    row = json.loads(line)
                    cmd = row.get("command") or row.get("cmd") or row.get("text")
                    if isinstance(cmd, str) and cmd:
                        out.append(cmd)
                    if len(out) >= limit:
                        break
        except OSError:
            continue
        if out:
            return name, out
    return "builtin list", [
        "ls -la",
        "git status",
        "cat README.md",
        "rm -rf build",
        "echo hi",
        "grep -r x .",
    ]


def _rss_kib(pid: int) -> tuple[int, int]:
    vals = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                vals[line.split(":")[0]] = int(line.split()[1])
    return vals.get("VmRSS", 0), vals.get("VmHWM", 0)


def _cpu_s(pid: int) -> tuple[float, float]:
    """User and system CPU seconds the process has used (all its threads)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def _switches(pid: int) -> int:
    """Context switches, voluntary and not, of every thread of the process so far: each is a
    wake-up or a preemption, which a check handed between threads pays for."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split()[1])
        except OSError:
            pass  # a thread that ended meanwhile
    return total


def _in_processes(sessions: int, run: object) -> tuple[list[float], list[str], dict[str, int]]:
    """Run ``run(k)`` -> (latencies, errors, actions) in one forked process per session; gather
    the results."""
    children = []
    for k in range(sessions):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            code = 0
            try:
                lat, errs, acts = run(k)  # type: ignore[operator]
                os.write(w, json.dumps({"lat": lat, "errors": errs, "actions": acts}).encode())
            except BaseException as exc:
                os.write(w, json.dumps({"lat": [], "errors": [f"session {k}: {exc!r}"]}).encode())
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        children.append((pid, r))
    latencies: list[float] = []
    errors: list[str] = []
    actions: dict[str, int] = {}
    for pid, r in children:
        data = b""
        while chunk := os.read(r, 1 << 20):
            data += chunk
        os.close(r)
        os.waitpid(pid, 0)
        got = json.loads(data or b'{"lat": [], "errors": ["no result"]}')
        latencies += got["lat"]
        errors += got["errors"]
        for action, count in got.get("actions", {}).items():
            actions[action] = actions.get(action, 0) + count
    return latencies, errors, actions


def main(
    sessions: int = 32, checks: int = 500, threads: bool = False, surface: str = "test"
) -> dict[str, object]:
    home = tempfile.mkdtemp(prefix="gc")
    env = dict(
        os.environ,
        HOME=home,
        XDG_RUNTIME_DIR=os.path.join(home, "run"),
        XDG_STATE_HOME=os.path.join(home, "state"),
        XDG_CONFIG_HOME=os.path.join(home, "cfg"),
    )
    os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700)
    os.environ.update(env)
    subprocess.run(
        [sys.executable, "-m", "gatesh", "-c", "true"],
        env={**env, "GATESH_SESSION": "warm"},
        check=True,
    )
    from gatesh import _paths

    sock_path = _paths.current().socket
    with open(_paths.current().lock) as f:
        daemon_pid = int(f.read().strip())
    corpus, commands = _commands()
    latencies: list[float] = []
    errors: list[str] = []
    actions: dict[str, int] = {}
    lock = threading.Lock()

    def one(k: int) -> tuple[list[float], list[str], dict[str, int]]:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(60)
        s.connect(sock_path)
        f = s.makefile("rwb")
        f.write(b'{"v":1,"hello":"check","pid":%d}\n' % os.getpid())
        f.flush()
        f.readline()
        mine: list[float] = []
        errs: list[str] = []
        acts: dict[str, int] = {}
        for i in range(checks):
            cmd = commands[(k * 7919 + i) % len(commands)]
            req = {
                "op": "check",
                "command": cmd,
                "cwd": home,
                "session": f"s{k}",
                "surface": surface,
            }
            t = time.perf_counter()
            f.write(json.dumps(req).encode() + b"\n")
            f.flush()
            while True:
                reply = json.loads(f.readline())
                if not reply.get("interim"):
                    break
            mine.append((time.perf_counter() - t) * 1000)
            if reply.get("ok") is False or "action" not in reply:
                errs.append(str(reply.get("error")))
            else:
                acts[reply["action"]] = acts.get(reply["action"], 0) + 1
        s.close()
        return mine, errs, acts

    def session(k: int) -> None:
        mine, errs, acts = one(k)
        with lock:
            latencies.extend(mine)
            errors.extend(errs)
            for action, count in acts.items():
                actions[action] = actions.get(action, 0) + count

    (user0, sys0), switches0 = _cpu_s(daemon_pid), _switches(daemon_pid)
    t0 = time.perf_counter()
    if threads:
        pool = [threading.Thread(target=session, args=(k,)) for k in range(sessions)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    else:
        latencies, errors, actions = _in_processes(sessions, one)
    wall = time.perf_counter() - t0
    user1, sys1 = _cpu_s(daemon_pid)
    user, system = user1 - user0, sys1 - sys0
    switches = _switches(daemon_pid) - switches0
    rss, hwm = _rss_kib(daemon_pid)
    latencies.sort()
    n = len(latencies)
    result = {
        "sessions": sessions,
        "checks": n,
        "errors": len(errors),
        "mode": "threads" if threads else "processes",
        "wall_s": round(wall, 2),
        "surface": surface,
        "corpus": corpus,
        "daemon_cpu_ms_per_check": round((user + system) * 1000 / max(1, n), 3),
        "daemon_user_ms_per_check": round(user * 1000 / max(1, n), 3),
        "daemon_sys_ms_per_check": round(system * 1000 / max(1, n), 3),
        "daemon_switches_per_check": round(switches / max(1, n), 2),
        "throughput_per_s": round(n / wall, 1),
        "p50_ms": round(statistics.median(latencies), 2),
        "p99_ms": round(latencies[int(n * 0.99) - 1], 2),
        "max_ms": round(latencies[-1], 2),
        "daemon_rss_mib": round(rss / 1024, 1),
        "daemon_peak_rss_mib": round(hwm / 1024, 1),
        "actions": dict(sorted(actions.items())),
        "targets": {"errors": 0, "p99_ms": 25, "rss_mib": 150},
    }
    os.kill(daemon_pid, signal.SIGTERM)
    print(
        f"{sessions} sessions x {checks} checks ({result['mode']}, surface {surface}, "
        f"{corpus}): "
        f"{len(errors)} errors, daemon CPU {result['daemon_cpu_ms_per_check']} ms/check "
        f"(user {result['daemon_user_ms_per_check']}, system {result['daemon_sys_ms_per_check']}; "
        f"{result['daemon_switches_per_check']} context switches), p50 {result['p50_ms']} ms, "
        f"p99 {result['p99_ms']} ms (target <= 25), daemon RSS {result['daemon_rss_mib']} MiB "
        f"(peak {result['daemon_peak_rss_mib']}; target <= 150)"
    )
    print("answers:", ", ".join(f"{a} {n}" for a, n in result["actions"].items()))  # type: ignore[union-attr]
    if errors:
        print("first errors:", errors[:3])
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    surfaces = [f.split("=", 1)[1] for f in flags if f.startswith("--surface=")]
    main(
        *(int(a) for a in args[:2]),
        threads="--threads" in flags,
        surface=surfaces[-1] if surfaces else "test",
    )

"""32 concurrent sessions x 500 checks against one daemon (S14: no errors, p99 <= 25 ms, RSS <= 150 MiB).

Each session is its own process with its own connection speaking the wire protocol, as 32 agents
would be (the cost measured is the daemon's, not process start-up; threads in one client process
would add that process's GIL waits to every latency). ``--threads`` keeps the older one-process
mode. Commands cycle through the tldr corpus when present. Also reports the daemon's CPU time per
check (from /proc), which unlike latency does not depend on what else the machine is running.
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

CORPUS = os.path.join(_CORPORA, "tldr", "commands.jsonl")


def _commands(limit: int = 2000) -> list[str]:
    out: list[str] = []
    try:
        with open(CORPUS, encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                cmd = row.get("command") or row.get("cmd") or row.get("text")
                if isinstance(cmd, str) and cmd:
                    out.append(cmd)
                if len(out) >= limit:
                    break
    except OSError:
        pass
    return out or [
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


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds the process has used."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _in_processes(sessions: int, run: object) -> tuple[list[float], list[str]]:
    """Run ``run(k)`` -> (latencies, errors) in one forked process per session; gather the results."""
    children = []
    for k in range(sessions):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            code = 0
            try:
                lat, errs = run(k)  # type: ignore[operator]
                os.write(w, json.dumps({"lat": lat, "errors": errs}).encode())
            except BaseException as exc:
                os.write(w, json.dumps({"lat": [], "errors": [f"session {k}: {exc!r}"]}).encode())
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        children.append((pid, r))
    latencies: list[float] = []
    errors: list[str] = []
    for pid, r in children:
        data = b""
        while chunk := os.read(r, 1 << 20):
            data += chunk
        os.close(r)
        os.waitpid(pid, 0)
        got = json.loads(data or b'{"lat": [], "errors": ["no result"]}')
        latencies += got["lat"]
        errors += got["errors"]
    return latencies, errors


def main(sessions: int = 32, checks: int = 500, threads: bool = False) -> dict[str, float]:
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
    commands = _commands()
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def one(k: int) -> tuple[list[float], list[str]]:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(60)
        s.connect(sock_path)
        f = s.makefile("rwb")
        f.write(b'{"v":1,"hello":"check","pid":%d}\n' % os.getpid())
        f.flush()
        f.readline()
        mine: list[float] = []
        errs: list[str] = []
        for i in range(checks):
            cmd = commands[(k * 7919 + i) % len(commands)]
            req = {
                "op": "check",
                "command": cmd,
                "cwd": home,
                "session": f"s{k}",
                "surface": "test",
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
        s.close()
        return mine, errs

    def session(k: int) -> None:
        mine, errs = one(k)
        with lock:
            latencies.extend(mine)
            errors.extend(errs)

    cpu0 = _cpu_s(daemon_pid)
    t0 = time.perf_counter()
    if threads:
        pool = [threading.Thread(target=session, args=(k,)) for k in range(sessions)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    else:
        latencies, errors = _in_processes(sessions, one)
    wall = time.perf_counter() - t0
    cpu = _cpu_s(daemon_pid) - cpu0
    rss, hwm = _rss_kib(daemon_pid)
    latencies.sort()
    n = len(latencies)
    result = {
        "sessions": sessions,
        "checks": n,
        "errors": len(errors),
        "mode": "threads" if threads else "processes",
        "wall_s": round(wall, 2),
        "daemon_cpu_ms_per_check": round(cpu * 1000 / max(1, n), 3),
        "throughput_per_s": round(n / wall, 1),
        "p50_ms": round(statistics.median(latencies), 2),
        "p99_ms": round(latencies[int(n * 0.99) - 1], 2),
        "max_ms": round(latencies[-1], 2),
        "daemon_rss_mib": round(rss / 1024, 1),
        "daemon_peak_rss_mib": round(hwm / 1024, 1),
        "targets": {"errors": 0, "p99_ms": 25, "rss_mib": 150},
    }
    os.kill(daemon_pid, signal.SIGTERM)
    print(
        f"{sessions} sessions x {checks} checks ({result['mode']}): {len(errors)} errors, "
        f"daemon CPU {result['daemon_cpu_ms_per_check']} ms/check, p50 {result['p50_ms']} ms, "
        f"p99 {result['p99_ms']} ms (target <= 25), daemon RSS {result['daemon_rss_mib']} MiB "
        f"(peak {result['daemon_peak_rss_mib']}; target <= 150)"
    )
    if errors:
        print("first errors:", errors[:3])
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--threads"]
    main(*(int(a) for a in args[:2]), threads="--threads" in sys.argv[1:])

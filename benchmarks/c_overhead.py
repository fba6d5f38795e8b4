"""`gatesh -c true` vs `bash -c true` with a warm daemon (S14: median overhead <= 10 ms).

Runs through a launcher written by gatesh.launcher (the real interpreter with -IS, or the faster
same-version interpreter it picked for the client), in a private HOME/XDG sandbox, interleaving the
two commands and the bare interpreter the client starts on (``python -IS -c pass``, the floor no
Python client can go below; with two interpreters the full one's floor is reported too). Reports
wall and CPU medians. Prints figures and one JSON line; asserts nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import stop_daemon

CPU: list[float] = []  # the CPU time (user + system) of the last spawned process, in ms


def _spawn_wait(argv: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env)
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv} failed with status {status}")
    CPU[:] = [(usage.ru_utime + usage.ru_stime) * 1000]
    return elapsed * 1000


def main(n: int = 200) -> dict[str, float]:
    home = tempfile.mkdtemp(prefix="gb")
    env = dict(
        os.environ,
        HOME=home,
        XDG_RUNTIME_DIR=os.path.join(home, "run"),
        XDG_STATE_HOME=os.path.join(home, "state"),
        XDG_CONFIG_HOME=os.path.join(home, "cfg"),
        GATESH_SESSION="bench",
    )
    try:
        return _measure(home, env, n)
    finally:
        # The daemon first (it holds the scratch folder), then the scratch home itself.
        stop_daemon(env["XDG_RUNTIME_DIR"])
        shutil.rmtree(home, ignore_errors=True)


def _measure(home: str, env: dict[str, str], n: int) -> dict[str, float]:
    from gatesh.launcher import write_launcher

    os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700)
    launcher = write_launcher(os.path.join(home, "gatesh"))
    bash = "/bin/bash"
    _spawn_wait([launcher, "-c", "true"], env)  # starts the daemon
    for _ in range(10):
        _spawn_wait([launcher, "-c", "true"], env)
        _spawn_wait([bash, "-c", "true"], env)
    # The floor of the interpreter the client starts on (what no client code can go below), and
    # of the full one when the launcher has two, interleaved too.
    from gatesh.launcher import read_launcher, real_interpreter

    full, fast = read_launcher(launcher)
    python = [fast or full or real_interpreter(), "-IS", "-c", "pass"]
    full_python = [full, "-IS", "-c", "pass"] if fast and full else None
    g, b, p, gc, bc, pc, fp = [], [], [], [], [], [], []
    for _ in range(n):
        g.append(_spawn_wait([launcher, "-c", "true"], env))
        gc.append(CPU[0])
        b.append(_spawn_wait([bash, "-c", "true"], env))
        bc.append(CPU[0])
        p.append(_spawn_wait(python, env))
        pc.append(CPU[0])
        if full_python:
            fp.append(_spawn_wait(full_python, env))
    gm, bm, pm = statistics.median(g), statistics.median(b), statistics.median(p)
    result = {
        "n": n,
        "gatesh_median_ms": round(gm, 2),
        "bash_median_ms": round(bm, 2),
        "overhead_median_ms": round(gm - bm, 2),
        "ratio": round(gm / bm, 2),
        "gatesh_p90_ms": round(sorted(g)[int(n * 0.9)], 2),
        "target_overhead_ms": 10,
        "python_floor_median_ms": round(pm, 2),
        "client_over_floor_ms": round(gm - pm, 2),
        # CPU time (user + system, the process and the shell it became): unlike wall time it
        # hardly moves with the machine's load.
        "gatesh_cpu_median_ms": round(statistics.median(gc), 2),
        "bash_cpu_median_ms": round(statistics.median(bc), 2),
        "python_floor_cpu_median_ms": round(statistics.median(pc), 2),
        "client_python": python[0],
        "full_python": full or python[0],
    }
    if fp:
        result["full_python_floor_median_ms"] = round(statistics.median(fp), 2)
    print(
        f"gatesh -c true: median {gm:.2f} ms; bash -c true: median {bm:.2f} ms; "
        f"overhead {gm - bm:.2f} ms (target <= 10 ms), ratio {gm / bm:.2f}; "
        f"{python[0]} -IS floor {pm:.2f} ms (gatesh is {gm - pm:.2f} ms above it)"
        + (f", {full} floor {result['full_python_floor_median_ms']:.2f} ms" if fp else "")
        + "; CPU medians: gatesh "
        f"{result['gatesh_cpu_median_ms']} ms, bash {result['bash_cpu_median_ms']} ms, "
        f"python floor {result['python_floor_cpu_median_ms']} ms"
    )
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)

"""The boundary (S16): what setting up a command's domain costs, what it adds to ``gatesh -c``, and
whether real work fits the default resource limits.

0. **The daemon's hand-off** (:mod:`gatesh.boundary.handoff`): on the reply's path, the ruleset
   built there, or the spare built ahead taken (p50), and the spare's build CPU off the path.
1. **Domain setup per command** (S14: p50 <= 1 ms): a fresh interpreter started as the ``-c``
   client starts (the one the launcher starts it on, ``-I -S``) applies a boundary computed
   for a typical command, and times
   :func:`gatesh.boundary._kernel.apply` from its first call to the domain in force, after
   what the client does while the daemon decides (importing the module and binding the C
   library, ``client._ready_boundary``: timed apart as ``ready``, and with it as
   ``with_ready``); then the same in a warm process. Two ways, side by side: the ruleset
   **handed** by the daemon as a file descriptor (what the client does now:
   :mod:`gatesh.boundary.handoff`; the ruleset is built in this, warm, process and passed to
   the child, as the daemon passes it), and built **from the places** in the client (what it did
   before, and still does with the in-process gate). The HOME is a scratch folder outside the
   temporary folders with ``XDG_RUNTIME_DIR`` set, as on a systemd machine.
2. **What the boundary adds to ``gatesh -c``**: ``gatesh -c true`` with the boundary on and off
   (the person's kill switch, ``boundary.enabled = false``: the old ``exec`` path), interleaved,
   warm daemon; ``bash -c true`` alongside.
3. **Real work inside the default limits**: a few real workloads run confined under the default
   limits, with the peak private writable memory (``VmData``, what the memory limit bounds), the
   peak address space and the processes each reached (sampled from ``/proc``), against the
   limits; among them the runtimes that reserve far more address space than they use (node's
   WebAssembly memories, the JVM), which an address-space limit would stop. And the limits' own
   mechanisms shown stopping what exceeds them (an allocation past the memory limit, a sparse
   write and an ``fallocate`` past the file-size limit). With
   ``--suite``, this repository's own fast test suite (``pytest -m 'not slow'``, two workers)
   runs confined as one more workload (minutes: not by default). The bombs
   themselves run only in the harm harness's jail (benchmarks/harm.py), never here.

Prints figures and one JSON line; asserts nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import pct, stop_daemon

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Not a temporary folder (see the module docstring).
SCRATCH = os.path.expanduser("~/.cache/gatesh-bench")

# ``fd`` is the handed ruleset's descriptor (-1: build it from the places); the warm runs apply
# a duplicate of it each time (a ruleset can be applied again).
_APPLY = (
    "import sys, time, json, posix\n"
    "sys.path[:0] = [{root!r}]\n"
    "spec = json.loads(sys.stdin.read()); fd = {fd}\n"
    "dups = [posix.dup(fd) for _ in range({warm})] if fd >= 0 else [-1] * {warm}\n"
    "import gatesh, gatesh._errors  # the -c client has these already\n"
    "t = time.perf_counter(); c = time.thread_time()\n"
    "from gatesh.boundary import _kernel, _spec\n"
    "_kernel.abi()\n"
    "ready = time.perf_counter() - t; ready_cpu = time.thread_time() - c\n"
    "t = time.perf_counter(); c = time.thread_time()\n"
    "spec = _spec.Spec.decode(spec)  # the client decodes what it was sent, then applies it\n"
    "rules = _kernel.apply(spec, fd)\n"
    "first = time.perf_counter() - t; first_cpu = time.thread_time() - c\n"
    "warm = []\n"
    "for d in dups:\n"
    "    t = time.perf_counter(); _kernel.apply(spec, d); warm.append(time.perf_counter() - t)\n"
    "print(json.dumps({{'ready_ms': ready * 1000, 'ready_cpu_ms': ready_cpu * 1000, 'first_ms': first * 1000, 'first_cpu_ms': first_cpu * 1000, 'warm_ms': warm and sorted(warm)[len(warm)//2] * 1000, 'rules': rules}}))\n"
)


def _sandbox() -> dict[str, str]:
    os.makedirs(SCRATCH, exist_ok=True)
    home = tempfile.mkdtemp(prefix="h", dir=SCRATCH)
    for sub in ("run", ".config/gatesh", ".local/state", ".cache", ".ssh", "work/repo"):
        os.makedirs(os.path.join(home, sub), exist_ok=True)
    os.chmod(os.path.join(home, "run"), 0o700)
    with open(os.path.join(home, ".ssh/id_ed25519"), "w") as f:
        f.write("not a key\n")
    for name in (".bashrc", ".profile"):
        shutil.copy(f"/etc/skel/{name}", home) if os.path.exists(f"/etc/skel/{name}") else None
    subprocess.run(["git", "init", "-q", os.path.join(home, "work/repo")], check=True)
    return dict(
        os.environ,
        HOME=home,
        XDG_RUNTIME_DIR=os.path.join(home, "run"),
        XDG_STATE_HOME=os.path.join(home, ".local/state"),
        XDG_CONFIG_HOME=os.path.join(home, ".config"),
        XDG_CACHE_HOME=os.path.join(home, ".cache"),
        XDG_DATA_HOME=os.path.join(home, ".local/share"),
        GATESH_SESSION="bench-boundary",
    )


def _specs(env: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Boundaries for typical commands, computed in a child with the sandbox's environment."""
    code = (
        "import json, sys\n"
        f"sys.path[:0] = [{ROOT!r}]\n"
        "from gatesh import _paths\n"
        "from gatesh.config import load_config\n"
        "from gatesh.pipeline import decide\n"
        "from gatesh.rater import make_rater\n"
        "from gatesh.boundary.compute import boundary_for\n"
        "cwd = sys.argv[1]; cfg = load_config(cwd); out = {}\n"
        "for cmd in ('python3 tools/x.py', 'git commit -m x', 'npm test', 'git push'):\n"
        "    d = decide(cmd, cwd=cwd, config=cfg, rater=make_rater(cfg))\n"
        "    b = boundary_for(d, cwd, cfg.boundary, _paths.current())\n"
        "    out[cmd] = b.wire().encode() if b else None\n"
        "print(json.dumps(out))\n"
    )
    got = subprocess.run(
        [sys.executable, "-c", code, os.path.join(env["HOME"], "work/repo")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(got.stdout)


def _apply_cost(specs: dict[str, dict[str, Any]], n: int, *, handed: bool) -> dict[str, Any]:
    """Per command: the first apply in a fresh client (p50, p90, CPU) and a warm one, with the
    ruleset ``handed`` by this process (as the daemon hands it) or built from the places."""
    from gatesh.boundary import handoff
    from gatesh.boundary._spec import Spec

    python = _client_python()
    out: dict[str, Any] = {}
    for cmd, wire in specs.items():
        if wire is None:
            continue
        first, cpu, warm, ready, whole, rules = [], [], [], [], [], 0
        for i in range(n):
            spec, fd = handoff.for_client(Spec.decode(wire)) if handed else (Spec.decode(wire), -1)
            if handed and fd < 0:
                raise SystemExit(f"the ruleset for `{cmd}` could not be built")
            try:
                got = subprocess.run(
                    [
                        python,
                        "-IS",
                        "-c",
                        _APPLY.format(root=ROOT, warm=20 if i == 0 else 0, fd=fd),
                    ],
                    input=json.dumps(spec.encode()),
                    capture_output=True,
                    text=True,
                    check=True,
                    pass_fds=(fd,) if fd >= 0 else (),
                )
            finally:
                if fd >= 0:
                    os.close(fd)
            r = json.loads(got.stdout)
            first.append(r["first_ms"])
            cpu.append(r["first_cpu_ms"])
            ready.append(r["ready_ms"])
            whole.append(r["ready_ms"] + r["first_ms"])
            rules = r["rules"]
            if r["warm_ms"]:
                warm.append(r["warm_ms"])
        out[cmd] = {
            "rules": rules,
            "first_p50_ms": round(pct(first, 50), 3),
            "first_p90_ms": round(pct(first, 90), 3),
            "first_cpu_p50_ms": round(pct(cpu, 50), 3),
            "ready_p50_ms": round(pct(ready, 50), 3),
            "with_ready_p50_ms": round(pct(whole, 50), 3),
            "warm_p50_ms": round(statistics.median(warm), 3) if warm else None,
        }
    return out


def _handoff(specs: dict[str, dict[str, Any]], n: int) -> dict[str, Any]:
    """Per command, what the daemon does on the reply's path to hand its ruleset over: build it
    there (before) or take the spare built ahead after the command before (now; the build moved
    off the reply's path: :class:`gatesh.boundary.handoff.Rulesets`), p50 over ``n`` each. The
    spare is built again before each take; its build CPU is reported too."""
    from gatesh.boundary import handoff
    from gatesh.boundary._spec import Spec

    out: dict[str, Any] = {}
    for cmd, raw in specs.items():
        if raw is None:
            continue
        wire = Spec.decode(raw)  # the daemon holds the typed spec it drew
        built, taken, ahead = [], [], []
        rulesets = handoff.Rulesets()
        for _ in range(n):
            t = time.perf_counter()
            _, fd = handoff.for_client(wire)
            built.append((time.perf_counter() - t) * 1000)
            os.close(fd)
            c = time.thread_time()
            rulesets.refill(wire.rules)
            ahead.append((time.thread_time() - c) * 1000)
            t = time.perf_counter()
            _, fd = handoff.for_client(wire, rulesets)
            taken.append((time.perf_counter() - t) * 1000)
            os.close(fd)
        rulesets.close()
        out[cmd] = {
            "built_p50_ms": round(pct(built, 50), 3),
            "spare_p50_ms": round(pct(taken, 50), 3),
            "spare_build_cpu_p50_ms": round(pct(ahead, 50), 3),
            "spares_taken": rulesets.taken,
            "spares_not_kept": rulesets.racy + rulesets.stale,
        }
    return out


def _client_python() -> str:
    """The interpreter the ``-c`` client runs on: the launcher's fast one when it picks one (as
    ``gatesh install`` and :func:`_c_overhead`'s launcher do), else the full one."""
    from gatesh.launcher import fast_interpreter, real_interpreter

    full = real_interpreter()
    return fast_interpreter(full, ROOT) or full


_CPU: list[float] = [0.0]  # the CPU time (user + system) of the last spawned process, in ms


def _spawn_ms(argv: list[str], env: dict[str, str]) -> float:
    """Wall milliseconds of one run of ``argv``; its CPU milliseconds in ``_CPU[0]``."""
    t = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv} failed with status {status}")
    _CPU[0] = (usage.ru_utime + usage.ru_stime) * 1000
    return (time.perf_counter() - t) * 1000


def _c_overhead(env: dict[str, str], n: int) -> dict[str, Any]:
    from gatesh.launcher import write_launcher

    launcher = write_launcher(os.path.join(env["HOME"], "gatesh"))
    repo = os.path.join(env["HOME"], "work/repo")
    config = os.path.join(env["XDG_CONFIG_HOME"], "gatesh", "config.toml")

    def run(on: bool) -> float:
        with open(config, "w") as f:
            f.write(f"[boundary]\nenabled = {'true' if on else 'false'}\n")
        return _spawn_ms([launcher, "-c", "true"], env | {"PWD": repo})

    # The config is read again when its file changes: each run decides with the setting written.

    os.chdir(repo)
    run(True)  # starts the daemon
    on, off, bash, on_cpu, off_cpu = [], [], [], [], []
    for _ in range(n):
        on.append(run(True))
        on_cpu.append(_CPU[0])
        off.append(run(False))
        off_cpu.append(_CPU[0])
        bash.append(_spawn_ms(["/bin/bash", "-c", "true"], env))
    stop_daemon(env["XDG_RUNTIME_DIR"])
    os.unlink(config)
    return {
        "n": n,
        "bounded_median_ms": round(statistics.median(on), 2),
        "unbounded_median_ms": round(statistics.median(off), 2),
        "bash_median_ms": round(statistics.median(bash), 2),
        "boundary_adds_median_ms": round(statistics.median(on) - statistics.median(off), 2),
        "bounded_over_unbounded": round(statistics.median(on) / statistics.median(off), 3),
        "bounded_cpu_median_ms": round(statistics.median(on_cpu), 2),
        "unbounded_cpu_median_ms": round(statistics.median(off_cpu), 2),
        "boundary_adds_cpu_median_ms": round(
            statistics.median(on_cpu) - statistics.median(off_cpu), 2
        ),
    }


# --- workloads ---------------------------------------------------------------------------------

_WORKLOADS = {
    "pytest (tests/test_vocab.py)": [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        "tests/test_vocab.py",
    ],
    "node (a WebAssembly instance)": [
        "node",
        "-e",
        "new WebAssembly.Memory({initial: 1, maximum: 65536}); console.log('ok')",
    ],
    # Each reserves ~10 GiB of address space: four did not start under 16 GiB of it.
    "node (four WebAssembly instances)": [
        "node",
        "-e",
        "const m = []; for (let i = 0; i < 4; i++) m.push(new WebAssembly.Memory({initial: 1,"
        " maximum: 65536})); console.log('ok')",
    ],
    # Reserves a quarter of the machine's memory for its heap: did not start under 2 GiB of it.
    "java (-version)": ["java", "-version"],
    "gcc (compile and link)": [
        "sh",
        "-c",
        "printf 'int main(){return 0;}' > $TMPDIR/b.c && cc -O2 -o $TMPDIR/b $TMPDIR/b.c && $TMPDIR/b",
    ],
    "git (log, gc)": ["sh", "-c", "git log --oneline | wc -l && git count-objects -v"],
}


def _peak(pid: int) -> tuple[int, int, int]:
    """(largest VmPeak, largest VmData, both in bytes; threads) over ``pid`` and all its
    descendants, from /proc."""
    status: dict[int, dict[str, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                text = f.read()
        except OSError:
            continue
        status[int(entry)] = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    children: dict[int, list[int]] = {}
    for p, fields in status.items():
        children.setdefault(int(fields.get("PPid", "0").strip() or 0), []).append(p)
    peak = data = tasks = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        fields = status.get(p)
        if fields is None:
            continue
        tasks += int(fields.get("Threads", "1").strip() or 1)
        peak = max(peak, int((fields.get("VmPeak") or "0 kB").split()[0]) * 1024)
        data = max(data, int((fields.get("VmData") or "0 kB").split()[0]) * 1024)
        todo += children.get(p, [])
    return peak, data, tasks


#: This repository's own fast test suite, run confined (``--suite``).
_SUITE = {
    "pytest (this repository's fast suite)": [
        sys.executable,
        "-m",
        "pytest",
        "-m",
        "not slow",
        "-q",
        "-x",
        "-n",
        "2",
        "-p",
        "no:cacheprovider",
    ]
}


def _workloads(env: dict[str, str], suite: bool = False) -> dict[str, Any]:
    from gatesh.config import BoundaryConfig

    out: dict[str, Any] = {}
    code = (
        "import json, os, sys\n"
        f"sys.path[:0] = [{ROOT!r}]\n"
        "from gatesh.boundary import _kernel, _spec\n"
        "spec = json.loads(os.environ.pop('GATESH_BENCH_SPEC'))\n"
        "_kernel.apply(_spec.Spec.decode(spec))\n"
        "os.execvp(sys.argv[1], sys.argv[1:])\n"
    )
    limits = BoundaryConfig()
    spec = _session_spec(env, ROOT)
    for name, argv in (_WORKLOADS | _SUITE if suite else _WORKLOADS).items():
        if shutil.which(argv[0]) is None:
            out[name] = {"skipped": f"{argv[0]} is not installed"}
            continue
        t = time.perf_counter()
        log = tempfile.TemporaryFile()
        proc = subprocess.Popen(
            [sys.executable, "-c", code, *argv],
            env=env
            | {
                "GATESH_BENCH_SPEC": json.dumps(spec),
                "TMPDIR": spec.get("env", {}).get("TMPDIR", "/tmp"),
            },
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        peak = data = tasks = 0
        step = 1.0 if name in _SUITE else 0.05  # a walk of /proc per step
        while proc.poll() is None:
            p, d, n = _peak(proc.pid)
            peak, data, tasks = max(peak, p), max(data, d), max(tasks, n)
            time.sleep(step)
        log.seek(0)
        tail = log.read().decode("utf-8", "replace").strip()[-300:]
        log.close()
        out[name] = {
            "status": proc.returncode,
            "seconds": round(time.perf_counter() - t, 2),
            "peak_data_mib": round(data / 2**20),
            "memory_limit_mib": limits.memory_mib,
            "peak_address_space_mib": round(peak / 2**20),
            "peak_tasks": tasks,
            "fits": proc.returncode == 0 and data < limits.memory_mib << 20,
            "output_tail": tail,
        }
    return out


def _session_spec(env: dict[str, str], cwd: str) -> dict[str, Any]:
    code = (
        "import json, sys\n"
        f"sys.path[:0] = [{ROOT!r}]\n"
        "from gatesh import _paths\n"
        "from gatesh.config import load_config\n"
        "from gatesh.boundary.compute import boundary_for\n"
        "cfg = load_config(sys.argv[1])\n"
        "b = boundary_for(None, sys.argv[1], cfg.boundary, _paths.current())\n"
        "print(json.dumps(b.wire().encode()))\n"
    )
    got = subprocess.run(
        [sys.executable, "-c", code, cwd], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(got.stdout)


def _limits_stop(env: dict[str, str]) -> dict[str, Any]:
    """The limits' mechanisms, shown at small scale: an allocation past the memory (heap) limit
    fails at once, and a sparse write past the file-size limit is refused (no memory or disk is
    used either way)."""
    spec = _session_spec(env, ROOT)
    spec["limits"] = spec["limits"] | {"data": 1 << 30, "fsize": 1 << 20}
    code = (
        "import json, os, sys, signal\n"
        f"sys.path[:0] = [{ROOT!r}]\n"
        "from gatesh.boundary import _kernel, _spec\n"
        "_kernel.apply(_spec.Spec.decode(json.loads(sys.argv[1])))\n"
        "out = {}\n"
        "try:\n"
        "    b = bytearray(2 << 30); out['allocation'] = 'went through'\n"
        "except MemoryError:\n"
        "    out['allocation'] = 'refused (MemoryError)'\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "path = os.path.join(os.environ.get('TMPDIR', '/tmp'), 'gatesh-bench-sparse')\n"
        "try:\n"
        "    with open(path, 'wb') as f:\n"
        "        f.seek(2 << 20); f.write(b'x')\n"
        "    out['file'] = 'went through'\n"
        "except OSError as e:\n"
        "    out['file'] = f'refused ({e.strerror})'\n"
        "try:\n"
        "    with open(path, 'wb') as f:\n"
        "        os.posix_fallocate(f.fileno(), 0, 2 << 20)\n"
        "    out['fallocate'] = 'went through'\n"
        "except OSError as e:\n"
        "    out['fallocate'] = f'refused ({e.strerror})'\n"
        "finally:\n"
        "    os.path.exists(path) and os.unlink(path)\n"
        "print(json.dumps(out))\n"
    )
    tmp = spec.get("env", {}).get("TMPDIR", "/tmp")
    got = subprocess.run(
        [sys.executable, "-c", code, json.dumps(spec)],
        env=env | {"TMPDIR": tmp},
        capture_output=True,
        text=True,
    )
    try:
        return json.loads(got.stdout)
    except ValueError:
        return {"error": got.stderr[-500:]}


def main(n: int = 100, suite: bool = False) -> dict[str, Any]:
    from gatesh.boundary import holds

    here = holds.state()
    if here.why_none:
        result: dict[str, Any] = {"skipped": here.why_none}
        print(f"no boundary here: {here.why_none}")
        print(json.dumps(result))
        return result
    env = _sandbox()
    try:
        specs = _specs(env)
        # Interleaved by command is not needed: each figure is a fresh process's own.
        handed = _handoff(specs, n)
        cost = _apply_cost(specs, n, handed=True)
        places = _apply_cost(specs, n, handed=False)
        overhead = _c_overhead(env, max(20, n // 2))
        work = _workloads(env, suite)
        stops = _limits_stop(env)
    finally:
        stop_daemon(env["XDG_RUNTIME_DIR"])
        shutil.rmtree(env["HOME"], ignore_errors=True)
    # The S14 figure: from the client's ready step (which overlaps the daemon's decision) to the
    # domain in force, the worst of the typical commands' p50s.
    firsts = [c["with_ready_p50_ms"] for c in cost.values()]
    firsts_places = [c["with_ready_p50_ms"] for c in places.values()]
    after = [c["first_p50_ms"] for c in cost.values()]
    # On the reply's path: the daemon takes the spare ruleset, the client applies it. The ready
    # step overlaps the daemon's decision and the spare's build follows the command before; both
    # are reported beside it, and what it all adds to `gatesh -c true` is c_overhead's.
    on_path = [
        c["first_p50_ms"] + handed[cmd]["spare_p50_ms"] for cmd, c in cost.items() if cmd in handed
    ]
    ready = [c["ready_p50_ms"] for c in cost.values()]
    builds = [h["spare_build_cpu_p50_ms"] for h in handed.values()]
    result = {
        "abi": here.abi,
        "uid": os.getuid(),
        "client_python": _client_python(),
        # What the -c client does: the ruleset handed by the daemon.
        "apply": cost,
        "apply_first_p50_ms_worst": max(firsts) if firsts else None,
        "apply_after_reply_p50_ms_worst": max(after) if after else None,
        "on_path_p50_ms_worst": round(max(on_path), 3) if on_path else None,
        "ready_p50_ms_worst": max(ready) if ready else None,
        "spare_build_cpu_p50_ms_worst": max(builds) if builds else None,
        # Before: the client built the ruleset from the places (still the in-process gate's way).
        "apply_from_places": places,
        "apply_from_places_first_p50_ms_worst": max(firsts_places) if firsts_places else None,
        # The daemon's part on the reply's path: build the ruleset, or take the spare.
        "handoff": handed,
        "c_overhead": overhead,
        "workloads": work,
        "limits_stop": stops,
    }
    print(f"fresh clients on {result['client_python']} (the interpreter the launcher picks)")
    for cmd, c in cost.items():
        b = places[cmd]
        print(
            f"domain for `{cmd}`: {c['rules']} rules; first apply in a fresh client p50 "
            f"(after its ready step, p50 {c['ready_p50_ms']} ms, which overlaps the daemon's "
            f"decision; both: {c['with_ready_p50_ms']} vs {b['with_ready_p50_ms']} ms) "
            f"{c['first_p50_ms']} ms handed by the daemon vs {b['first_p50_ms']} ms built from "
            f"the places (p90 {c['first_p90_ms']} vs {b['first_p90_ms']} ms, CPU p50 "
            f"{c['first_cpu_p50_ms']} vs {b['first_cpu_p50_ms']} ms), warm p50 "
            f"{c['warm_p50_ms']} vs {b['warm_p50_ms']} ms"
        )
    for cmd, h in handed.items():
        print(
            f"hand-off for `{cmd}`: ruleset built on the reply's path p50 {h['built_p50_ms']} ms, "
            f"spare built ahead p50 {h['spare_p50_ms']} ms (its build, off the path: CPU p50 "
            f"{h['spare_build_cpu_p50_ms']} ms; {h['spares_taken']} taken, "
            f"{h['spares_not_kept']} not kept)"
        )
    print(
        f"gatesh -c true: bounded {overhead['bounded_median_ms']} ms, unbounded "
        f"{overhead['unbounded_median_ms']} ms, bash {overhead['bash_median_ms']} ms: the boundary "
        f"adds {overhead['boundary_adds_median_ms']} ms, ratio {overhead['bounded_over_unbounded']} "
        f"(medians of {overhead['n']} interleaved runs); client CPU "
        f"{overhead['bounded_cpu_median_ms']} vs {overhead['unbounded_cpu_median_ms']} ms"
    )
    for name, w in work.items():
        print(f"{name}: {w}")
    print(f"limits: {stops}")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--suite"]
    main(int(args[0]) if args else 100, suite="--suite" in sys.argv[1:])

"""Hook latency (S14): ``gatesh hook claude-code`` against the bare interpreter it starts on.

Side by side in one run, interleaved round by round, each spawned fresh and timed from spawn to
exit, with a warm daemon in a scratch HOME/XDG sandbox:

- ``python -IS -c pass`` on each interpreter the launcher uses: the one it starts ``gatesh hook``
  and ``gatesh -c`` on (its fast one when it has one) is the floor;
- ``gatesh hook claude-code`` — a PreToolUse call for ``ls`` on stdin, started as the hook command
  ``gatesh install claude-code`` writes starts it (the interpreter directly, with the import folders
  of a launcher written by :mod:`gatesh.launcher` as ``install.sh`` writes it), and the same call
  through that launcher (``gatesh hook claude-code`` typed by hand; a ``/bin/sh`` hop more);
- ``gatesh -c true`` — the ``-c`` client, through the same launcher;
- ``cc-safety-net hook --claude-code`` — the peer's hook with the same JSON (installed with npm
  into a scratch folder, as benchmarks/peer.py does; left out, saying why, without npm).

Wall time on a shared machine mostly measures the other processes, so each run also reports the
work, which load changes far less: CPU time (user + system, from ``wait4``'s rusage of that child
alone; the daemon's own work is not in it, its wall time is — the daemon's CPU per hook call is
measured apart, over a block of hook calls), and, once per variant outside the
timing, the system calls it makes (``strace -f -c``, when strace is installed) and the modules it
imports (``-X importtime``). The load average before and after is printed with the figures.

The target: gatesh's hook median at most 5 ms over the floor. Prints figures and one JSON line;
asserts nothing.

    python benchmarks/hook_latency.py [--rounds N] [--no-peer]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import emit, stop_daemon

PAYLOAD = json.dumps(
    {
        "session_id": "bench",
        "transcript_path": "",
        "cwd": "/tmp",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls", "description": ""},
    }
).encode()
HOOK = "gatesh hook claude-code"
HOOK_VIA_LAUNCHER = "  the same, through the launcher"
# Hook calls timed for the daemon's CPU share: its counters tick at 10 ms (100 Hz), so 100 calls
# resolve it to 0.1 ms per call.
DAEMON_CALLS = 100
DASH_C = "gatesh -c true"


def _timed(argv: list[str], env: dict[str, str], stdin: bytes | None) -> tuple[float, float]:
    """(wall ms from spawn to exit, CPU ms user + system) of ``argv`` with ``stdin`` (a pipe
    written up front). The CPU time is that child's own (``wait4``), whatever else runs."""
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
    _, status, usage = os.wait4(pid, 0)
    ms = (time.perf_counter() - t) * 1000
    os.close(null)
    if r >= 0:
        os.close(r)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv} exited with {status}")
    return ms, (usage.ru_utime + usage.ru_stime) * 1000


def _syscalls(
    argv: list[str], env: dict[str, str], stdin: bytes | None, scratch: str
) -> int | None:
    """How many system calls one run of ``argv`` makes, its exec'd programs included (strace -f
    -c); None without strace."""
    strace = shutil.which("strace")
    if strace is None:
        return None
    out = os.path.join(scratch, "strace.txt")
    subprocess.run(
        [strace, "-f", "-c", "-o", out, *argv],
        input=stdin or b"",
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
        timeout=60,
    )
    with open(out, encoding="utf-8") as f:
        total = [line.split() for line in f if line.rstrip().endswith(" total")]
    return (
        int(total[-1][3]) if total else None
    )  # % time, seconds, usecs/call, calls, (errors), total


def _daemon_cpu_ms(runtime_dir: str) -> float | None:
    """CPU time (user + system, all threads) the daemon under ``runtime_dir`` has used so far."""
    try:
        with open(os.path.join(runtime_dir, "gatesh", "daemon.lock")) as f:
            pid = int(f.read().strip())
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b") ", 1)[1].split()
    except (OSError, ValueError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")  # utime, stime


def _imports(
    python: str, code: str, args: list[str], env: dict[str, str], stdin: bytes | None
) -> list[str]:
    """The modules ``python -IS -X importtime -c CODE ARGS`` imports, in order."""
    out = subprocess.run(
        [python, "-IS", "-X", "importtime", "-c", code, *args],
        input=stdin or b"",
        env=env,
        capture_output=True,
        check=True,
        timeout=60,
    )
    lines = out.stderr.decode("utf-8", "replace").splitlines()
    names = [line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")]
    return [n for n in names if n != "imported package"]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--no-peer", action="store_true")
    args = parser.parse_args()
    from gatesh.install import hook_command, hook_program
    from gatesh.launcher import read_launcher, write_launcher

    root = tempfile.mkdtemp(prefix="gh-hook-bench-")
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "GATESH_SESSION")}
    for var, sub in (
        ("HOME", "home"),
        ("XDG_RUNTIME_DIR", "run"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CONFIG_HOME", "cfg"),
        ("XDG_DATA_HOME", "data"),
        ("CC_SAFETY_NET_HOME", "ccsn"),
    ):
        env[var] = os.path.join(root, sub)
        os.makedirs(env[var], mode=0o700, exist_ok=True)
    env["GATESH_SYSTEM_CONFIG"] = os.path.join(root, "etc", "config.toml")
    launcher = write_launcher(os.path.join(root, "gatesh"))
    full, fast = read_launcher(launcher)
    if full is None:
        raise SystemExit(f"could not read the launcher written at {launcher}")
    # The launcher starts `gatesh hook` and `gatesh -c` on its fast interpreter when it has one.
    hook_python = fast or full
    floor = "bare interpreter (hook's, -c's)"
    runs: dict[str, tuple[list[str], bytes | None]] = {
        floor: ([hook_python, "-IS", "-c", "pass"], None)
    }
    if fast:
        runs["bare interpreter (full)"] = ([full, "-IS", "-c", "pass"], None)
    # As `gatesh install claude-code` writes it: the program its hook command starts (the
    # harness's own shell, which runs every hook command, is left out, as for the peer).
    hook_argv = hook_program(hook_command("claude-code", launcher))
    if hook_argv[1:3] != ["-IS", "-c"]:
        raise SystemExit(
            f"the hook command for {launcher} does not start the interpreter directly: {hook_argv}"
        )
    runs[HOOK] = (hook_argv, PAYLOAD)
    if hook_argv[:1] != [launcher]:
        runs[HOOK_VIA_LAUNCHER] = ([launcher, "hook", "claude-code"], PAYLOAD)
    runs[DASH_C] = ([launcher, "-c", "true"], None)
    peer_note = "left out (--no-peer)"
    if not args.no_peer:
        from peer import install

        binary, version, why = install(os.path.join(root, "npm"))
        if binary:
            runs[f"cc-safety-net {version} hook"] = (
                ["/usr/bin/env", "node", binary, "hook", "--claude-code"],
                PAYLOAD,
            )
            peer_note = f"cc-safety-net {version}"
        else:
            peer_note = f"left out: {why}"
    load_before = os.getloadavg()
    try:
        for argv, stdin in runs.values():  # warm-up; the first gatesh call starts the daemon
            _timed(argv, env, stdin)
            _timed(argv, env, stdin)
        wall: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, (argv, stdin) in runs.items():
                w, c = _timed(argv, env, stdin)
                wall[name].append(w)
                cpu[name].append(c)
        # The daemon's share of a hook call: its CPU time over a block of hook calls alone.
        argv, stdin = runs[HOOK]
        before = _daemon_cpu_ms(env["XDG_RUNTIME_DIR"])
        for _ in range(DAEMON_CALLS):
            _timed(argv, env, stdin)
        after = _daemon_cpu_ms(env["XDG_RUNTIME_DIR"])
        daemon_cpu = (
            (after - before) / DAEMON_CALLS if before is not None and after is not None else None
        )
        # The work, counted once per variant (outside the timing: strace slows what it traces).
        calls = {
            name: _syscalls(argv, env, stdin, root)
            for name, (argv, stdin) in runs.items()
            if not name.startswith("cc-safety-net")
        }
        bare_mods = _imports(hook_python, "pass", [], env, None)
        hook_mods = _imports(hook_argv[0], hook_argv[3], hook_argv[4:], env, PAYLOAD)
    finally:
        stop_daemon(env["XDG_RUNTIME_DIR"])
    load_after = os.getloadavg()
    wall_med = {name: statistics.median(t) for name, t in wall.items()}
    cpu_med = {name: statistics.median(t) for name, t in cpu.items()}
    over_wall = wall_med[HOOK] - wall_med[floor]
    over_cpu = cpu_med[HOOK] - cpu_med[floor]
    extra = [m for m in hook_mods if m not in bare_mods]
    print(
        f"hook latency, {args.rounds} interleaved rounds (medians, spawn to exit); peer: {peer_note}"
    )
    print(
        f"  load average before {load_before[0]:.2f}, after {load_after[0]:.2f} ({os.cpu_count()} CPUs)"
    )
    print(f"  {'':<34} {'wall ms':>9} {'CPU ms':>8} {'syscalls':>9}")
    for name in runs:
        n = calls.get(name)
        print(
            f"  {name:<34} {wall_med[name]:9.2f} {cpu_med[name]:8.2f} {n if n is not None else '-':>9}"
        )
    print(
        f"  gatesh hook over the bare interpreter: {over_wall:.2f} ms wall, {over_cpu:.2f} ms CPU "
        f"(target <= 5 ms)"
    )
    if daemon_cpu is not None:
        print(
            f"  the daemon's CPU per hook call (its share, not in the hook's CPU above): {daemon_cpu:.2f} ms"
        )
    more_calls = (calls[HOOK] - calls[floor]) if calls.get(HOOK) and calls.get(floor) else None
    if more_calls is not None:
        print(
            f"  system calls over the bare interpreter: {more_calls} (the /bin/sh launcher's included)"
        )
    print(f"  modules imported over the bare interpreter: {len(extra)}: {' '.join(extra)}")
    emit(
        "hook_latency",
        {
            "rounds": args.rounds,
            "median_ms": {k: round(v, 3) for k, v in wall_med.items()},
            "median_cpu_ms": {k: round(v, 3) for k, v in cpu_med.items()},
            "syscalls": calls,
            "daemon_cpu_ms_per_hook": None if daemon_cpu is None else round(daemon_cpu, 3),
            "hook_over_floor_ms": round(over_wall, 3),
            "hook_over_floor_cpu_ms": round(over_cpu, 3),
            "extra_modules": extra,
            "load_before": round(load_before[0], 2),
            "load_after": round(load_after[0], 2),
            "interpreter": hook_python,
            "target_ms": 5.0,
            "peer": peer_note,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

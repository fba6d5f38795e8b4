"""PTY session cost (S14): `cat` of a 256 MiB file inside a gated session vs `script -qc`, and the
keystroke echo latency the relay adds. Prints the figures and one JSON line.

Targets: throughput ratio >= 0.8; added keystroke latency <= 1 ms (median).
Run: python benchmarks/pty_throughput.py [--mib 256] [--keys 200]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import sys
import tempfile
import time

import ptyprocess

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import stop_daemon

START = b"BENCH-START"


def _env(tmp: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "HOME": os.path.join(tmp, "home"),
            "XDG_CONFIG_HOME": os.path.join(tmp, "cfg"),
            "XDG_STATE_HOME": os.path.join(tmp, "state"),
            "XDG_DATA_HOME": os.path.join(tmp, "data"),
            "XDG_RUNTIME_DIR": os.path.join(tmp, "run"),
            "TERM": "xterm",
            "PS1": "$ ",
        }
    )
    for k in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"):
        os.makedirs(env[k], mode=0o700, exist_ok=True)
    with open(os.path.join(env["HOME"], ".bashrc"), "w") as f:
        f.write("PS1='$ '\n")
    return env


def _gatesh(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "gatesh", "--shell", "bash", *args]


def _script(cmd: str) -> list[str]:
    return ["script", "-qc", cmd, "/dev/null"]


def _read_until(p: ptyprocess.PtyProcess, needle: bytes, timeout: float = 60.0) -> bytes:
    buf = b""
    end = time.monotonic() + timeout
    while needle not in buf:
        if time.monotonic() > end:
            raise TimeoutError(f"no {needle!r} in {buf[-200:]!r}")
        r, _, _ = select.select([p.fd], [], [], 0.5)
        if r:
            buf += os.read(p.fd, 1 << 20)
    return buf


def _drain_timed(p: ptyprocess.PtyProcess) -> tuple[float, int]:
    """Seconds from the start marker to the end of output, and the bytes seen after it."""
    buf = _read_until(p, START)
    t0 = time.perf_counter()
    total = len(buf) - buf.index(START)
    while True:
        try:
            chunk = os.read(p.fd, 1 << 20)
        except OSError:
            break
        if not chunk:
            break
        total += len(chunk)
    return time.perf_counter() - t0, total


def throughput(path: str, env: dict[str, str]) -> tuple[float, float]:
    cmd = f"echo {START.decode()}; cat {path}; exit"
    p = ptyprocess.PtyProcess.spawn(_script(cmd), env=env, cwd=env["HOME"], dimensions=(40, 120))
    t_script, _ = _drain_timed(p)
    p.wait()
    p = ptyprocess.PtyProcess.spawn(_gatesh([]), env=env, cwd=env["HOME"], dimensions=(40, 120))
    _read_until(p, b"$ ")
    p.write(b"echo warm; echo wa''rm-done\r")  # starts the daemon outside the timing
    _read_until(p, b"warm-done\r\n")
    p.write(cmd.encode() + b"\r")
    t_gatesh, _ = _drain_timed(p)
    p.wait()
    return t_script, t_gatesh


def _latency(p: ptyprocess.PtyProcess, keys: int) -> list[float]:
    samples = []
    for i in range(keys):
        ch = b"abcdefghij"[i % 10 : i % 10 + 1]
        t0 = time.perf_counter()
        p.write(ch)
        got = b""
        while ch not in got:
            got += os.read(p.fd, 4096)
        samples.append(time.perf_counter() - t0)
    p.write(b"\x15")  # kill the line
    return samples


def latency(env: dict[str, str], keys: int) -> tuple[float, float]:
    p = ptyprocess.PtyProcess.spawn(
        _script("bash --rcfile " + os.path.join(env["HOME"], ".bashrc") + " -i"),
        env=env,
        cwd=env["HOME"],
        dimensions=(40, 120),
    )
    _read_until(p, b"$ ")
    plain = statistics.median(_latency(p, keys))
    p.terminate(force=True)
    p = ptyprocess.PtyProcess.spawn(_gatesh([]), env=env, cwd=env["HOME"], dimensions=(40, 120))
    _read_until(p, b"$ ")
    gated = statistics.median(_latency(p, keys))
    p.terminate(force=True)
    return plain, gated


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--keys", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = _env(tmp)
        path = os.path.join(tmp, "big.txt")
        line = b"0123456789abcdefghijklmnopqrstuvwxyz" * 3 + b"\n"
        block = line * (1 << 20 // len(line) + 1)
        with open(path, "wb") as f:
            written = 0
            while written < args.mib << 20:
                f.write(block)
                written += len(block)
        try:
            t_script, t_gatesh = throughput(path, env)
            plain, gated = latency(env, args.keys)
        finally:
            stop_daemon(env["XDG_RUNTIME_DIR"])  # the gated shell started one
    ratio = t_script / t_gatesh
    added_ms = (gated - plain) * 1000
    mib = written / (1 << 20)
    print(
        f"cat {mib:.0f} MiB: script -qc {t_script:.2f} s ({mib / t_script:.0f} MiB/s), "
        f"gatesh {t_gatesh:.2f} s ({mib / t_gatesh:.0f} MiB/s); ratio {ratio:.2f} (target >= 0.8)"
    )
    print(
        f"keystroke echo (median of {args.keys}): plain {plain * 1000:.3f} ms, gatesh {gated * 1000:.3f} ms; "
        f"added {added_ms:.3f} ms (target <= 1 ms)"
    )
    print(
        json.dumps(
            {
                "benchmark": "pty_throughput",
                "mib": round(mib),
                "script_s": round(t_script, 3),
                "gatesh_s": round(t_gatesh, 3),
                "ratio": round(ratio, 3),
                "key_plain_ms": round(plain * 1000, 3),
                "key_gatesh_ms": round(gated * 1000, 3),
                "key_added_ms": round(added_ms, 3),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Enter-to-prompt in the gated interactive shell (S14, issue 28): the time from Enter on `true` to
the next prompt, in a gated bash (and zsh) and in the plain shell, side by side in one run, on a
PTY driven directly (no tmux). Prints the figures and one JSON line.

Target: the gated shell adds at most 5 ms to the plain shell's median (no process per command).
Run: python benchmarks/pty_enter.py [--n 30] [--shell bash|zsh|both] [--root CHECKOUT]
(``--root``: measure the gatesh of another checkout, e.g. the main branch, for a before/after.)
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

PROMPT = b"ENTER-BENCH$ "
RC = {"bash": ".bashrc", "zsh": ".zshrc"}


def _env(tmp: str, root: str) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": "xterm",
        "HOME": os.path.join(tmp, "home"),
        "XDG_CONFIG_HOME": os.path.join(tmp, "cfg"),
        "XDG_STATE_HOME": os.path.join(tmp, "state"),
        "XDG_DATA_HOME": os.path.join(tmp, "data"),
        "XDG_RUNTIME_DIR": os.path.join(tmp, "run"),
        "GATESH_SYSTEM_CONFIG": os.path.join(tmp, "etc", "config.toml"),
        "PYTHONPATH": root,
    }
    for k in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"):
        os.makedirs(env[k], mode=0o700, exist_ok=True)
    os.makedirs(os.path.join(env["XDG_CONFIG_HOME"], "gatesh"), exist_ok=True)
    with open(os.path.join(env["XDG_CONFIG_HOME"], "gatesh", "config.toml"), "w") as f:
        f.write('[rater]\nbackend = "builtin"\n')
    with open(os.path.join(env["HOME"], ".bashrc"), "w") as f:
        f.write(f"PS1='{PROMPT.decode()}'\n")
    with open(os.path.join(env["HOME"], ".zshrc"), "w") as f:
        f.write(f"PS1='{PROMPT.decode()}'\n")
    return env


class _Term:
    """A PTY child and what it printed that no wait has consumed yet."""

    def __init__(self, p: ptyprocess.PtyProcess) -> None:
        self.p, self.buf = p, b""

    def until(self, needle: bytes, timeout: float = 60.0, *, prompt: bool = False) -> None:
        """Consume output through ``needle`` (with ``prompt``: a ``needle`` on the last line,
        after a line break, so a prompt redrawn on the line being edited does not count)."""
        end = time.monotonic() + timeout
        while True:
            if prompt:
                nl = self.buf.rfind(b"\n")
                if nl >= 0 and needle in self.buf[nl:]:
                    self.buf = b""
                    return
            elif needle in self.buf:
                self.buf = self.buf[self.buf.index(needle) + len(needle) :]
                return
            if time.monotonic() > end:
                raise TimeoutError(f"no {needle!r} in {self.buf[-300:]!r}")
            r, _, _ = select.select([self.p.fd], [], [], 0.5)
            if r:
                self.buf += os.read(self.p.fd, 1 << 16)


def _samples(t: _Term, n: int) -> list[float]:
    """Seconds from writing `true` + Enter to the next prompt, ``n`` times (after 3 warm-ups)."""
    out = []
    for i in range(n + 3):
        t0 = time.perf_counter()
        t.p.write(b"true\r")
        t.until(PROMPT, prompt=True)
        if i >= 3:
            out.append(time.perf_counter() - t0)
        time.sleep(0.02)
    return out


def measure(shell: str, env: dict[str, str], n: int) -> tuple[list[float], list[float]]:
    rc = os.path.join(env["HOME"], RC[shell])
    plain_argv = ["bash", "--rcfile", rc, "-i"] if shell == "bash" else ["zsh", "-i"]
    plain = _Term(ptyprocess.PtyProcess.spawn(plain_argv, env=env, dimensions=(40, 120)))
    gated = _Term(
        ptyprocess.PtyProcess.spawn(
            [sys.executable, "-m", "gatesh", "--shell", shell], env=env, dimensions=(40, 120)
        )
    )
    try:
        plain.until(PROMPT)
        gated.until(PROMPT, timeout=120)
        # Starts the daemon and loads the reader outside the timing.
        gated.p.write(b"echo warm''ed\r")
        gated.until(b"warmed\r\n", timeout=120)
        gated.until(PROMPT)
        # Interleaved, so both see the same machine load.
        p_s: list[float] = []
        g_s: list[float] = []
        for _ in range(max(1, n // 10)):
            p_s += _samples(plain, 10)
            g_s += _samples(gated, 10)
        return p_s, g_s
    finally:
        plain.p.terminate(force=True)
        gated.p.terminate(force=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--shell", choices=("bash", "zsh", "both"), default="both")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = ap.parse_args()
    shells = ["bash", "zsh"] if args.shell == "both" else [args.shell]
    result: dict[str, object] = {
        "benchmark": "pty_enter",
        "n": args.n,
        "root": os.path.basename(args.root),
    }
    for shell in shells:
        with tempfile.TemporaryDirectory() as tmp:
            env = _env(tmp, args.root)
            try:
                plain, gated = measure(shell, env, args.n)
            finally:
                stop_daemon(env["XDG_RUNTIME_DIR"])
        pm, gm = statistics.median(plain) * 1000, statistics.median(gated) * 1000
        print(
            f"{shell}: Enter-to-prompt for `true`, median of {len(plain)}: plain {pm:.2f} ms, "
            f"gated {gm:.2f} ms; added {gm - pm:.2f} ms (target <= 5 ms); "
            f"gated p90 {sorted(gated)[int(len(gated) * 0.9) - 1] * 1000:.2f} ms"
        )
        result[f"{shell}_plain_ms"] = round(pm, 3)
        result[f"{shell}_gated_ms"] = round(gm, 3)
        result[f"{shell}_added_ms"] = round(gm - pm, 3)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Enter-to-prompt in the gated interactive shell (S14, issue 28): the time from Enter on `true` to
the next prompt, in the plain shell, the gated shell of this checkout and (``--before REV``) the
gated shell as commit REV built it, side by side in one run, on PTYs driven directly (no tmux).
Prints the figures and one JSON line.

Target: the gated shell adds at most 5 ms to the plain shell's median (no process per command).
Run: python benchmarks/pty_enter.py [--n 30] [--shell bash|zsh|both] [--root CHECKOUT]
[--before REV]
(``--root``: measure the gatesh of another checkout; ``--before``: also measure commit REV of this
repository, from a temporary detached worktree made and removed by this run, without network. A
commit the repository does not have is said, and no before figure is shown.)
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

import ptyprocess

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import stop_daemon

PROMPT = b"ENTER-BENCH$ "
RC = {"bash": ".bashrc", "zsh": ".zshrc"}
HERE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The gated shell as it was before issue 28: one `gatesh _gate` process per command.
BEFORE_ISSUE_28 = "d58fd64"


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


def _spawn(argv: list[str], env: dict[str, str]) -> _Term:
    """Start ``argv`` on a PTY in the scratch HOME (``python -m`` imports from its working
    folder first: from a checkout, that checkout's gatesh, whatever PYTHONPATH names)."""
    return _Term(ptyprocess.PtyProcess.spawn(argv, env=env, cwd=env["HOME"], dimensions=(40, 120)))


def measure(shell: str, envs: dict[str, dict[str, str]], n: int) -> dict[str, list[float]]:
    """Samples of the plain shell (key ``plain``) and of the gated shell of each environment in
    ``envs`` (by its key), interleaved in rounds of 10 so all see the same machine load."""
    first = next(iter(envs.values()))
    rc = os.path.join(first["HOME"], RC[shell])
    plain_argv = ["bash", "--rcfile", rc, "-i"] if shell == "bash" else ["zsh", "-i"]
    terms: dict[str, _Term] = {}
    try:
        terms["plain"] = _spawn(plain_argv, first)
        for label, env in envs.items():
            terms[label] = _spawn([sys.executable, "-m", "gatesh", "--shell", shell], env)
        terms["plain"].until(PROMPT)
        for label in envs:
            gated = terms[label]
            gated.until(PROMPT, timeout=120)
            # Starts the daemon and loads the reader outside the timing.
            gated.p.write(b"echo warm''ed\r")
            gated.until(b"warmed\r\n", timeout=120)
            gated.until(PROMPT)
        out: dict[str, list[float]] = {label: [] for label in terms}
        for _ in range(max(1, n // 10)):
            for label, term in terms.items():
                out[label] += _samples(term, 10)
        return out
    finally:
        for term in terms.values():
            term.p.terminate(force=True)


def _git(repo: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", repo, *args], capture_output=True, text=True, timeout=120, check=False
    )


@contextmanager
def before_checkout(rev: str, repo: str) -> Iterator[tuple[str | None, str]]:
    """A temporary detached worktree of commit ``rev`` of ``repo``: (its path, "") while the
    block runs, removed after; (None, why) when there is none (git missing, not a repository, no
    such commit). Nothing is fetched: a commit the repository lacks stays absent."""
    if shutil.which("git") is None:
        yield None, "git is not installed"
        return
    found = _git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if found.returncode != 0:
        yield None, f"commit {rev} is not in this repository"
        return
    commit = found.stdout.strip()
    with tempfile.TemporaryDirectory(prefix="gatesh-before-") as tmp:
        path = os.path.join(tmp, "checkout")
        made = _git(repo, "worktree", "add", "--detach", "--quiet", path, commit)
        if made.returncode != 0:
            yield None, f"no worktree of {rev} could be made ({made.stderr.strip()[:200]})"
            return
        try:
            yield path, ""
        finally:
            if _git(repo, "worktree", "remove", "--force", path).returncode != 0:
                shutil.rmtree(path, ignore_errors=True)
                _git(repo, "worktree", "prune")


def _ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def _p90(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.9) - 1)] * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--shell", choices=("bash", "zsh", "both"), default="both")
    ap.add_argument("--root", default=HERE_ROOT)
    ap.add_argument(
        "--before",
        metavar="REV",
        default="",
        help=f"also measure commit REV of this repository (issue 28's before: {BEFORE_ISSUE_28})",
    )
    args = ap.parse_args()
    shells = ["bash", "zsh"] if args.shell == "both" else [args.shell]
    result: dict[str, object] = {
        "benchmark": "pty_enter",
        "n": max(1, args.n // 10) * 10,
        "root": os.path.basename(args.root),
        "load_start": [round(x, 2) for x in os.getloadavg()],
    }
    checkout = before_checkout(args.before, HERE_ROOT) if args.before else _none()
    with checkout as (before, why):
        if args.before:
            result["before"] = args.before
            if before is None:
                result["before_missing"] = why
                print(f"before: {why}; no before figure")
        for shell in shells:
            roots = {"gated": args.root} | ({"before": before} if before else {})
            with tempfile.TemporaryDirectory() as tmp:
                envs = {
                    label: _env(os.path.join(tmp, label), root) for label, root in roots.items()
                }
                try:
                    samples = measure(shell, envs, args.n)
                finally:
                    for env in envs.values():
                        stop_daemon(env["XDG_RUNTIME_DIR"])
            pm, gm = _ms(samples["plain"]), _ms(samples["gated"])
            line = (
                f"{shell}: Enter-to-prompt for `true`, median of {len(samples['plain'])}: plain "
                f"{pm:.2f} ms, gated {gm:.2f} ms (added {gm - pm:.2f} ms, target <= 5 ms; "
                f"p90 {_p90(samples['gated']):.2f} ms)"
            )
            result[f"{shell}_plain_ms"] = round(pm, 3)
            result[f"{shell}_gated_ms"] = round(gm, 3)
            result[f"{shell}_added_ms"] = round(gm - pm, 3)
            result[f"{shell}_gated_p90_ms"] = round(_p90(samples["gated"]), 3)
            if "before" in samples:
                bm = _ms(samples["before"])
                line += f"; before ({args.before}) {bm:.2f} ms (added {bm - pm:.2f} ms)"
                result[f"{shell}_before_ms"] = round(bm, 3)
                result[f"{shell}_before_added_ms"] = round(bm - pm, 3)
            print(line)
    result["load_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(result))
    return 0


@contextmanager
def _none() -> Iterator[tuple[str | None, str]]:
    yield None, ""


if __name__ == "__main__":
    sys.exit(main())

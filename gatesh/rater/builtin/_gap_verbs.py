"""Two gaps read from a command's verb: a tool that runs the project's own code (``make``,
``npm test``, ``pytest``: build scripts, install hooks, test suites the builtin has not read), and
a program the builtin has no model of told to change state (``qm start 100``, ``kubectl apply``).
The rows that use them are in :data:`gatesh.rater.builtin.knowledge.GAPS`.
"""

from __future__ import annotations

import re
from typing import Final

from gatesh.rater.builtin._base import Cmd
from gatesh.vocab.programs.info import LONG_INFO, TOOL_INFO
from gatesh.vocab.programs.verbless import NO_STATE_VERBS
from gatesh.vocab.reads import command_reads

# Build, test and package tools that run code from the project or from packages: recipes, build
# scripts, install hooks, test suites. Value: the subcommands that run such code (None: any use).
_CODE_RUNNERS: Final[dict[str, frozenset[str] | None]] = {
    "make": None,
    "gmake": None,
    "bmake": None,
    "just": None,
    "task": None,
    "rake": None,
    "ninja": None,
    "scons": None,
    "ant": None,
    "gradle": None,
    "gradlew": None,
    "mvn": None,
    "mvnw": None,
    "sbt": None,
    "lein": None,
    "bazel": frozenset({"build", "run", "test", "coverage"}),
    "bazelisk": frozenset({"build", "run", "test", "coverage"}),
    "cmake": None,
    "meson": frozenset({"compile", "test", "install", "setup"}),
    "cargo": frozenset(
        {
            "build",
            "b",
            "run",
            "r",
            "test",
            "t",
            "bench",
            "check",
            "c",
            "install",
            "clippy",
            "doc",
            "fix",
            "xtask",
            "make",
            "nextest",
            "watch",
        }
    ),
    "go": frozenset({"run", "test", "generate", "build", "install", "vet", "tool"}),
    "dotnet": frozenset({"run", "test", "build", "publish", "pack", "watch", "tool"}),
    "swift": frozenset({"run", "build", "test"}),
    "npm": frozenset(
        {
            "install",
            "i",
            "ci",
            "add",
            "run",
            "run-script",
            "test",
            "t",
            "start",
            "stop",
            "restart",
            "exec",
            "x",
            "rebuild",
            "init",
            "create",
            "pack",
            "publish",
            "update",
            "up",
            "link",
        }
    ),
    "yarn": None,
    "pnpm": None,
    "bun": frozenset(
        {"install", "i", "add", "run", "test", "x", "create", "build", "update", "link", "pm"}
    ),
    "npx": None,
    "pnpx": None,
    "bunx": None,
    "uvx": None,
    "pipx": frozenset({"run", "install", "inject"}),
    "pip": frozenset({"install", "download", "wheel"}),
    "pip3": frozenset({"install", "download", "wheel"}),
    "uv": frozenset({"run", "sync", "pip", "tool", "add", "build", "install"}),
    "poetry": frozenset({"install", "run", "add", "update", "build", "shell"}),
    "pipenv": frozenset({"install", "run", "sync", "update", "shell"}),
    "pdm": frozenset({"install", "run", "add", "sync", "update"}),
    "hatch": frozenset({"run", "build", "test", "shell"}),
    "conda": frozenset({"install", "run", "create", "update", "env"}),
    "mamba": frozenset({"install", "run", "create", "update", "env"}),
    "tox": None,
    "nox": None,
    "pytest": None,
    "py.test": None,
    "jest": None,
    "vitest": None,
    "mocha": None,
    "rspec": None,
    "phpunit": None,
    "composer": frozenset(
        {"install", "update", "require", "run", "run-script", "exec", "create-project"}
    ),
    "bundle": frozenset({"install", "exec", "update"}),
    "gem": frozenset({"install", "update"}),
    "mix": frozenset({"run", "test", "compile", "deps.get", "phx.server"}),
    "deno": frozenset({"run", "task", "test", "install", "compile", "serve"}),
    "xcodebuild": None,
    "msbuild": None,
    "nix": frozenset({"run", "build", "develop", "shell"}),
    "nix-shell": None,
    "nix-build": None,
    "stack": frozenset({"build", "run", "test", "exec", "install"}),
    "cabal": frozenset({"build", "run", "test", "install", "exec"}),
}


def runs_project_code(c: Cmd) -> str | None:
    if c.head not in _CODE_RUNNERS:
        return None
    subs = _CODE_RUNNERS[c.head]
    if any(f in TOOL_INFO for f in c.flags) and len(c.args) == 1:
        return None
    if subs is None:
        return c.head
    sub = next((a for a in c.args if not a.startswith("-")), "")
    return f"{c.head} {sub}" if sub in subs else None


# The verbs of a command that changes state outside the files the builtin classifies: a service,
# a cluster, a device, an account, the system. Matched as a whole word or as one part of a word
# joined by - or : (``start-server``, ``kv:set``; not ``_``: placeholders and names join with it).
_STATE_VERBS: Final = frozenset(
    """
    create add set update apply deploy push publish release install upgrade start stop restart reload enable
    up down run exec import send submit merge move mv rename write put post patch edit modify change sync mount
    umount unmount attach detach connect login logout register grant assign scale resize promote commit
    upload share invite approve close lock unlock provision launch spawn boot reboot shutdown halt poweroff
    suspend resume pause unpause migrate upsert insert replace rollout activate link unlink join leave
    transfer copy cp build serve server listen kill signal trigger dispatch execute invoke unload
    freeze thaw swap rotate renew encrypt decrypt expose forward proxy tunnel flash burn format
""".split()
)
_VERB_PARTS: Final = re.compile(r"[-:|]")
# Options that make a state-changing verb print instead of act.
_NO_ACT: Final = tuple(sorted(LONG_INFO | {"--dry-run", "--dryrun"}))


def state_verb(c: Cmd) -> str | None:
    """A program the builtin has no model of, told to change state (``qm start 100``, ``kubectl
    apply -f x``, ``gh ssh-key add k.pub``): the delete-class verbs are rated, the rest is not known."""
    if c.head in NO_STATE_VERBS or not c.head:
        return None
    for w in c.pos[:3]:
        if len(w) > 48 or "/" in w or "." in w or "=" in w:
            continue
        low = w.lower()
        if low in _STATE_VERBS or any(p in _STATE_VERBS for p in _VERB_PARTS.split(low) if p):
            if c.has(*_NO_ACT):
                return None
            return None if command_reads(c.sc) else f"{c.head} {w}"
    return None

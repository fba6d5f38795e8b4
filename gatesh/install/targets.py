"""The harnesses gatesh installs hooks into: where each keeps its settings and which events gatesh
answers there."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Final

from gatesh.harnesses import Harness

# How long a harness waits for the hook. Escalations on Codex and Gemini wait for a watcher up to
# escalation.timeout_s (default 110 s), so the hook must be allowed longer than that.
HOOK_TIMEOUT_S: Final = 150


@dataclass(frozen=True)
class HarnessSpec:
    """Where a harness keeps its hooks and which events gatesh answers there."""

    name: Harness
    settings: str  # default file, ~ expanded at use
    home_env: str  # environment variable that moves the harness's folder
    gate_event: str
    matcher: str
    prompt_event: str
    timeout: int  # in the harness's unit
    extra: tuple[tuple[str, Any], ...] = ()  # more fields on each hook entry
    note: str = ""


HARNESS_SPECS: Final[dict[Harness, HarnessSpec]] = {
    Harness.CLAUDE_CODE: HarnessSpec(
        Harness.CLAUDE_CODE,
        "~/.claude/settings.json",
        "CLAUDE_CONFIG_DIR",
        "PreToolUse",
        "Bash",
        "UserPromptSubmit",
        HOOK_TIMEOUT_S,
        note="Claude Code reads the hooks at start: restart running sessions. Use the hook or "
        "CLAUDE_CODE_SHELL (gatesh install shims), not both: the person's answer to an `ask` "
        "is Claude Code's, and a gated shell would ask again.",
    ),
    Harness.CODEX: HarnessSpec(
        Harness.CODEX,
        "~/.codex/hooks.json",
        "CODEX_HOME",
        "PreToolUse",
        "Bash",
        "UserPromptSubmit",
        HOOK_TIMEOUT_S,
        (("statusMessage", "gatesh: checking the command"),),
        note="Codex has no `ask` answer for hooks, so escalations go to `gatesh watch`.",
    ),
    Harness.GEMINI: HarnessSpec(
        Harness.GEMINI,
        "~/.gemini/settings.json",
        "",
        "BeforeTool",
        "run_shell_command",
        "BeforeAgent",
        HOOK_TIMEOUT_S * 1000,
        (("name", "gatesh"),),
        note="Gemini CLI has no `ask` answer for hooks, so escalations go to `gatesh watch`.",
    ),
}


def settings_path(spec: HarnessSpec, override: str | None = None) -> str:
    if override:
        return os.path.abspath(os.path.expanduser(override))
    home = os.environ.get(spec.home_env, "") if spec.home_env else ""
    if home and os.path.isabs(home):
        return os.path.join(home, os.path.basename(spec.settings))
    return os.path.expanduser(spec.settings)

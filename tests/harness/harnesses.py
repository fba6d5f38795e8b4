"""How each pinned harness CLI is configured and started headless against the fake model.

    harness       mode     how its commands reach gatesh
    claude-code   hooks    ``gatesh install claude-code``: PreToolUse (Bash), UserPromptSubmit
    claude-code   shims    ``CLAUDE_CODE_SHELL`` = the shims folder's ``bash``
    codex         hooks    ``gatesh install codex``: ~/.codex/hooks.json, PreToolUse, UserPromptSubmit
    codex         shims    the agent's login shell (passwd) = the shims folder's ``bash``
    gemini        hooks    ``gatesh install gemini``: BeforeTool (run_shell_command), BeforeAgent
    gemini        shims    the shims folder first on ``PATH`` (Gemini runs ``bash -c`` by name)

Every setting that could reach past the loopback fake is turned off, and each CLI is pointed at
``http://127.0.0.1:PORT`` (the namespace it runs in has no other network anyway).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from enum import Enum
from typing import Final

from . import clis
from .world import World, set_login_shell


class Mode(Enum):
    HOOKS = "hooks"
    SHIMS = "shims"


# Values that are fake on purpose: the fake model accepts any key; none of these is a credential.
FAKE_KEY: Final = "fake-key-for-the-loopback-model"


@dataclass(frozen=True)
class Harness:
    """One harness in one mode, set up in a :class:`World`."""

    name: str
    mode: Mode

    @property
    def id(self) -> str:
        return f"{self.name}-{self.mode.value}"

    # --- setup ---

    def setup(self, world: World) -> None:
        getattr(self, f"_setup_{self.name.replace('-', '_')}")(world)
        if self.mode is Mode.HOOKS:
            # Codex runs only hooks someone trusted: the install asks this codex to trust them.
            extra = ["--codex", clis.CLIS["codex"].path] if self.name == "codex" else []
            world.gatesh("install", self.name, *extra)
        else:
            world.gatesh("install", "shims")
        if self.name == "codex":
            set_login_shell(self.shim(world) if self.mode is Mode.SHIMS else "/bin/bash")

    def shim(self, world: World) -> str:
        return str(world.home / ".local/share/gatesh/shims/bash")

    def _setup_claude_code(self, world: World) -> None:
        folder = world.home / ".claude"
        folder.mkdir(exist_ok=True)
        (world.home / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True}))
        world._chown(world.home)

    def _setup_codex(self, world: World) -> None:
        folder = world.home / ".codex"
        folder.mkdir(exist_ok=True)
        base = f"http://127.0.0.1:{world.port}/v1"
        (folder / "config.toml").write_text(
            'model = "gpt-5.1-codex"\n'
            'model_provider = "loopback"\n'
            'approval_policy = "never"\n'
            'sandbox_mode = "danger-full-access"\n'
            "check_for_update_on_startup = false\n"
            "[analytics]\nenabled = false\n"
            "[feedback]\nenabled = false\n"
            "[model_providers.loopback]\n"
            'name = "loopback fake"\n'
            f'base_url = "{base}"\n'
            'wire_api = "responses"\n'
            'env_key = "LOOPBACK_MODEL_KEY"\n'
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n"
            f'[projects."{world.repo}"]\ntrust_level = "trusted"\n'
        )
        world._chown(world.home)

    def _setup_gemini(self, world: World) -> None:
        folder = world.home / ".gemini"
        folder.mkdir(exist_ok=True)
        settings = {
            "security": {
                "auth": {"selectedType": "gemini-api-key"},
                "folderTrust": {"enabled": False},
            },
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {
                "enableAutoUpdate": False,
                "enableAutoUpdateNotification": False,
                "disableAutoUpdate": True,
                "disableUpdateNag": True,
            },
            "tools": {"shell": {"enableInteractiveShell": False}},
            "model": {"name": "gemini-2.5-flash"},
        }
        (folder / "settings.json").write_text(json.dumps(settings, indent=2))
        world._chown(world.home)

    # --- running ---

    def command(self, world: World, prompt: str) -> tuple[list[str], dict[str, str]]:
        """(argv, extra environment) for one headless run with ``prompt``."""
        cli = clis.CLIS[self.name]
        if self.name == "claude-code":
            env = {
                "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{world.port}",
                "ANTHROPIC_API_KEY": FAKE_KEY,
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "DISABLE_BUG_COMMAND": "1",
                "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
            }
            argv = [
                cli.path,
                "-p",
                prompt,
                "--output-format",
                "stream-json",
                "--verbose",
                "--model",
                "claude-sonnet-4-5",
                "--max-turns",
                "30",
            ]
            if self.mode is Mode.SHIMS:
                env["CLAUDE_CODE_SHELL"] = self.shim(world)
                argv += ["--allowedTools", "Bash"]
            return argv, env
        if self.name == "codex":
            env = {"LOOPBACK_MODEL_KEY": FAKE_KEY, "CODEX_HOME": str(world.home / ".codex")}
            return [
                cli.path,
                "exec",
                "--json",
                "-s",
                "danger-full-access",
                "-C",
                str(world.repo),
                prompt,
            ], env
        # The Gemini CLI runs on the pinned Node.js (clis.NODE), whatever node the machine has; its
        # folder leads PATH too, so any `node` the CLI starts is that one.
        node = clis.NODE.path
        path = f"{os.path.dirname(node)}:{world.env()['PATH']}"
        env = {
            "GEMINI_API_KEY": FAKE_KEY,
            "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{world.port}",
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "NO_BROWSER": "true",
            "PATH": path,
        }
        if self.mode is Mode.SHIMS:
            env["PATH"] = f"{world.home / '.local/share/gatesh/shims'}:{path}"
        return [
            node,
            cli.path,
            "-p",
            prompt,
            "--yolo",
            "-m",
            "gemini-2.5-flash",
            "--output-format",
            "json",
        ], env


ALL: Final = tuple(Harness(n, m) for n in clis.CLIS for m in Mode)

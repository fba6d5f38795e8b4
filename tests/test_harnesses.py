"""The harness names: one member each in the shared vocabulary, and the hook adapter's tables (which
load no enum, S14) name exactly those members."""

from __future__ import annotations

from gatesh import hooks
from gatesh.harnesses import Harness
from gatesh.install import HARNESS_SPECS, TARGETS
from gatesh.negotiation import TRUSTED_CHANNELS


def test_the_hook_adapter_names_every_harness_and_no_other() -> None:
    names = {h.value for h in Harness}
    assert set(hooks.HARNESSES) == names
    assert hooks.REWRITES_INPUT <= names
    assert hooks._NATIVE_ASK <= names
    for table in (hooks._GATE_EVENTS, hooks._PROMPT_EVENTS, hooks._SHELL_TOOLS):
        assert set(table) == names
    assert {hooks._PROMPT_CHANNELS[h.value] for h in Harness} == {h.prompt_channel for h in Harness}


def test_install_and_the_trusted_channels_cover_every_harness() -> None:
    assert set(HARNESS_SPECS) == set(Harness)
    assert all(spec.name is h for h, spec in HARNESS_SPECS.items())
    assert {h.value for h in Harness} <= set(TARGETS)
    assert {h.prompt_channel for h in Harness} <= TRUSTED_CHANNELS


def test_names_parse_to_members_and_programs_find_their_harness() -> None:
    assert Harness.parse("codex") is Harness.CODEX
    assert Harness.parse("claude") is None and Harness.parse("git") is None
    assert Harness.by_program("claude") is Harness.CLAUDE_CODE
    assert Harness.by_program("claude-code") is Harness.CLAUDE_CODE
    assert Harness.by_program("gemini") is Harness.GEMINI
    assert Harness.by_program("bash") is None
    assert f"{Harness.CLAUDE_CODE}" == "claude-code"  # printed as the CLI spells it

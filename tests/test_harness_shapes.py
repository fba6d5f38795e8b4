"""Harness shapes of the pinned versions (S1), without the CLIs: the real runs are in tests/harness.

The snapshot scripts themselves are the harnesses' text and are not shipped here; their
recognition is shown by the real-CLI tests. Here: the wrappers, the justification and the pending
approval key inside them, look-alikes gated whole, and who may be asked at the harness (S11.4).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gatesh.hooks import can_ask
from gatesh.launcher import write_launcher
from gatesh.pipeline import normalised
from gatesh.reading import harness as H
from gatesh.reading import read

CLAUDE_21 = (
    "shopt -u extglob 2>/dev/null || true && eval '{cmd}' < /dev/null && "
    "pwd -P >| /tmp/claude-{rand}-cwd"
)
SNAP = "/home/u/.claude/shell-snapshots/snapshot-bash-1796119462734-bfqii3.sh"
CLAUDE_21_SNAP = f"source {SNAP} 2>/dev/null || true && " + CLAUDE_21
GEMINI_061 = (
    "shopt -u promptvars nullglob extglob nocaseglob dotglob; "
    "_bgpids_file=/tmp/gemini-shell-{rand}/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' "
    "EXIT\n{cmd}\n)\n__code=$?\nexit $__code"
)


@pytest.mark.parametrize("shape", [CLAUDE_21, CLAUDE_21_SNAP])
def test_claude_2_1_wrapper_why_and_approval_key(shape: str) -> None:
    cmd = "git reset --hard HEAD~1"
    a = read(shape.format(cmd=cmd + "  # why: my scratch commit", rand="a1b1"))
    b = read(shape.format(cmd=cmd, rand="19e3"))
    assert a.harness == b.harness == "claude-code"
    assert a.text == cmd and a.justification == "my scratch commit"
    # A pending approval matches the agent's command whatever random name the boilerplate has.
    assert normalised(a) == normalised(b) == cmd


def test_claude_wrapper_single_quotes_round_trip() -> None:
    f = read(CLAUDE_21.format(cmd="echo '\"'\"'hi'\"'\"'", rand="0f0f"))
    assert f.harness == "claude-code" and f.text == "echo 'hi'"


def test_gemini_0_61_subshell_wrapper() -> None:
    f = read(GEMINI_061.format(cmd="git status && echo ok  # why: look", rand="s0WXxV"))
    assert f.harness == "gemini" and f.heads == ("git", "echo") and f.justification == "look"
    assert f.text == "git status && echo ok"


@pytest.mark.parametrize(
    "text",
    [
        GEMINI_061.format(cmd="true\n)\nrm -rf ~\n(\ntrue", rand="s0WXxV"),  # closes the subshell
        GEMINI_061.format(cmd="ls", rand="s0WXxV") + "\nrm -rf ~",
        GEMINI_061.format(cmd="ls", rand="s0WXxV").replace(
            "trap 'jobs -p", "trap 'rm -rf ~; jobs -p"
        ),
        GEMINI_061.format(cmd="ls", rand="../../x"),
        CLAUDE_21.format(cmd="ls", rand="a1b1") + "; rm -rf ~",
        CLAUDE_21.format(cmd="ls", rand="a1b1").replace(
            "shopt -u extglob", "shopt -u extglob; rm -rf ~;"
        ),
    ],
)
def test_look_alikes_are_gated_whole(text: str) -> None:
    assert H.classify(text) is None
    assert read(text).harness is None and not read(text).boilerplate


def test_codex_snapshot_check_is_boilerplate_only_exactly() -> None:
    check = 'set -e; . "/home/u/.codex/shell_snapshots/01a2311d-2c14-77c2.tmp-1796120325151048725"'
    found = H.classify(check)
    assert found is not None and found.part is H.Part.SNAPSHOT
    assert read(check).boilerplate == "codex.snapshot-check" and read(check).commands == ()
    for odd in (
        check + "; rm -rf ~",
        check.replace(".codex/shell_snapshots", "evil"),
        check.replace("set -e; ", ""),
    ):
        assert H.classify(odd) is None


def test_snapshot_look_alike_is_gated_whole() -> None:
    text = f'SNAPSHOT_FILE={SNAP}\n      source "/home/u/.bashrc" < /dev/null\nrm -rf ~\n'
    assert H.classify(text) is None
    assert read(text).heads[-1] == "rm"


def test_handoff_needs_a_gatesh_shim(tmp_path: Path) -> None:
    launcher = tmp_path / "bin" / "gatesh"
    launcher.parent.mkdir()
    write_launcher(str(launcher), fast=False)
    shim = tmp_path / "shims" / "bash"
    shim.parent.mkdir()
    shim.symlink_to(launcher)
    assert H._is_gatesh(str(shim))
    assert not H._is_gatesh("/bin/bash")
    fake = tmp_path / "other" / "gatesh"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nexec /bin/bash "$@"\n')
    assert not H._is_gatesh(str(fake))


@pytest.mark.parametrize(
    "harness,entrypoint,expected",
    [
        ("claude-code", "cli", True),  # interactive: the person answers Claude Code's own prompt
        ("claude-code", "sdk-cli", False),  # claude -p: nobody answers an ask (S11.4)
        ("claude-code", "sdk-py", False),
        ("claude-code", None, False),
        ("codex", "cli", False),  # no ask answer for hooks
        ("gemini", "cli", False),
    ],
)
def test_can_ask_per_harness(harness: str, entrypoint: str | None, expected: bool) -> None:
    env = {} if entrypoint is None else {"CLAUDE_CODE_ENTRYPOINT": entrypoint}
    assert can_ask(harness, env) is expected

"""An invalid configuration (S12): every command is refused, naming the file once, except the ways
out — `exit`, `logout`, `gatesh doctor` and `gatesh config` — which run whatever the file says, so a
person in a gated shell can leave it and find what to fix (issue 18, item 3)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gatesh import _paths
from gatesh._types import Action, Stage
from gatesh.inprocess import gate as gate_here
from gatesh.undecided import decide_without_config
from tests._pty_tmux import SHELL_PARAMS, TmuxSession

BROKEN = 'rung = "auto"\n\n[rater\nbackend = "builtin"\n'
PROBLEM = "/home/u/.config/gatesh/config.toml:3: (syntax): Expected ']'"


@pytest.mark.parametrize(
    "text",
    [
        "exit",
        "exit 3",
        "logout",
        "gatesh doctor",
        "gatesh doctor --json",
        "gatesh config",
        "gatesh config --json",
        "  exit  ",
    ],
)
def test_the_ways_out_run_whatever_the_config_says(text: str) -> None:
    d = decide_without_config(text, cwd="/tmp", error=PROBLEM)
    assert d.action is Action.ALLOW and d.stage is Stage.CONFIG, d
    assert PROBLEM in d.reason


@pytest.mark.parametrize(
    "text",
    [
        "ls",
        "echo hi",
        "exit; touch x",
        "exit 3 && touch x",
        "touch x; exit",
        "gatesh doctor > out",
        "gatesh doctor | sh",
        "exit $(touch x)",
        "exit `touch x`",
        "exit $N",
        "FOO=1 exit",
        "sudo exit",
        "./gatesh doctor",
        "/tmp/gatesh doctor",
        "gatesh approve 1a2b3c",
        "gatesh config set rung bypass",
        "gatesh doctor --fix",
        "gatesh mandate x",
        "bash -c exit",
        "(exit)",
        "{ exit; }",
        "exit() { :; }",
        "gatesh watch",
        "logout now",
        "exit 1 2",
        "",
    ],
)
def test_everything_else_is_refused_naming_the_file_once(text: str) -> None:
    d = decide_without_config(text, cwd="/tmp", error=PROBLEM)
    assert d.action is Action.REFUSE and d.stage is Stage.CONFIG, d
    assert d.message.count("/home/u/.config/gatesh/config.toml") == 1, d.message
    assert "`exit`" in d.message and "`gatesh doctor`" in d.message


def _break_config() -> Path:
    path = Path(_paths.current().user_config)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BROKEN)
    return path


def test_in_process_gate_refuses_audits_and_lets_exit_through(tmp_path: Path) -> None:
    cfg = _break_config()
    refused = gate_here(f"touch {tmp_path}/x", cwd=str(tmp_path), session="broken")
    assert refused.exit_code == 126
    assert refused.message.count(str(cfg)) == 1, refused.message
    assert gate_here("exit 4", cwd=str(tmp_path), session="broken").exit_code == 0
    records = [
        json.loads(line) for line in Path(_paths.current().audit_log).read_text().splitlines()
    ]
    assert [r["action"] for r in records] == ["refuse", "allow"], records
    assert all(r["stage"] == "config" for r in records)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("shell", SHELL_PARAMS)
def test_gated_shell_with_a_broken_config_can_run_doctor_and_exit(
    shell: str, tmp_path: Path
) -> None:
    sh = TmuxSession(tmp_path, shell, config=BROKEN)
    try:
        cfg = str(tmp_path / "cfg" / "gatesh" / "config.toml")
        marker = sh.work / "ran"
        sh.send(f"touch {marker}")
        screen = sh.wait_for(lambda s: "configuration is invalid" in s, what="the refusal")
        refusal = screen[screen.index("configuration is invalid") :]
        assert refusal.split("$ ")[0].replace("\n", "").count(cfg) == 1, screen
        assert not marker.exists()
        # The refusal says to run `gatesh doctor`: it runs here and names the same file.
        sh.send("gatesh doctor")
        screen = sh.wait_for(
            lambda s: (
                "required check" in s.split("$ gatesh doctor", 1)[-1] and s.rstrip().endswith("$")
            ),
            what="doctor's report",
            deadline=60,
        )
        report = screen.split("$ gatesh doctor", 1)[1]
        assert any(
            line.split()[:2] == ["FAIL", "config"] and cfg in line for line in report.splitlines()
        ), report
        sh.send("exit 3")
        assert sh.dead_status() == 3
    finally:
        sh.close()

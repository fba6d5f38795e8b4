"""Every surface decides and records alike: one scenario through the daemon (``gatesh -c``), the
daemon-less fallback, a hook adapter, ``explain`` and ``eval``, with their audit lines compared.

Each surface is the real one (real processes for the daemon, the hook and explain); the commands
are harmless if they ran (a read, removing a scratch folder in a temporary project, a no-op
``trap``, an absent ``kubectl``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gatesh import _paths
from gatesh.audit_record import as_json
from gatesh.config import load_config
from gatesh.explain import finish_rows
from gatesh.inprocess import check as check_here
from gatesh.rater import make_rater

pytestmark = pytest.mark.slow

GATESH = [sys.executable, "-m", "gatesh"]
FIXTURES = Path(__file__).parent / "fixtures" / "hooks"

# (command, the action every surface records). Escalations are recorded by reach: refused where
# nobody can be asked, left standing in a dry run; they are compared among the surfaces of one reach.
SCENARIO = [
    ("ls -la", "allow"),
    ("rm -r scratch", "reject"),
    ("trap - DEBUG", "halt"),
]
ESCALATION = "kubectl delete namespace prod"
# What a line says about the decision; where it was made (time, pid, session, surface, note) and
# the model call's duration are not compared.
COMPARED = (
    "cwd",
    "command",
    "facts",
    "stage",
    "rung",
    "outcome",
    "reason",
    "action",
    "rule_id",
    "floors",
    "to_person",
    "negotiation",
)


def _same(rec: dict[str, Any]) -> dict[str, Any]:
    out = {k: rec.get(k) for k in COMPARED}
    out["rater"] = {k: v for k, v in (rec.get("rater") or {}).items() if k != "duration_ms"}
    out["alignment"] = {k: v for k, v in (rec.get("alignment") or {}).items() if k != "duration_ms"}
    return out


def _audit() -> list[dict[str, Any]]:
    path = Path(_paths.current().audit_log)
    lines = (
        [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []
    )
    return [r for r in lines if r.get("action") != "exited"]  # decisions, not how runs ended


def _new_lines(before: int) -> list[dict[str, Any]]:
    return _audit()[before:]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    (p / "scratch").mkdir(parents=True)
    (p / "scratch" / "notes.txt").write_text("work\n")
    return p


def _daemon(cmd: str, project: Path, n: int) -> dict[str, Any]:
    before = len(_audit())
    env = {**os.environ, "GATESH_SESSION": f"dc-{n}"}
    subprocess.run(
        [*GATESH, "-c", cmd], capture_output=True, text=True, env=env, cwd=project, timeout=120
    )
    (line,) = _new_lines(before)
    return line


def _hook(cmd: str, project: Path, n: int) -> dict[str, Any]:
    before = len(_audit())
    data = json.loads((FIXTURES / "codex-pretooluse-bash.json").read_text())
    data.update(cwd=str(project), session_id=f"hk-{n}", tool_input={"command": cmd})
    proc = subprocess.run(
        [*GATESH, "hook", "codex"],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    (line,) = _new_lines(before)
    return line


def _fallback(cmd: str, project: Path, n: int) -> dict[str, Any]:
    before = len(_audit())
    check_here(cmd, cwd=str(project), session=f"ip-{n}")
    (line,) = _new_lines(before)
    return line


def _explain(cmd: str, project: Path, n: int) -> dict[str, Any]:
    out = subprocess.run(
        [*GATESH, "explain", "--json", "--cwd", str(project), cmd],
        capture_output=True,
        text=True,
        timeout=120,
    )
    record: dict[str, Any] = json.loads(out.stdout)["audit"]
    # explain's status says what would happen: 0 runs, 3 a person decides, 126 refused.
    expected = {"allow": 0, "escalate": 3}.get(record["action"], 126)
    assert out.returncode == expected, (record["action"], out.returncode, out.stderr)
    return record


def _eval(cmd: str, project: Path, n: int) -> dict[str, Any]:
    config = load_config(str(project))
    (done,) = finish_rows(
        [{"cmd": cmd}],
        config=config,
        rung=config.rung,
        rater=make_rater(config),
        checker=None,
        cwd=str(project),
    )
    assert done.record is not None
    return as_json(done.record)


SURFACES = {
    "daemon": _daemon,
    "hook": _hook,
    "fallback": _fallback,
    "explain": _explain,
    "eval": _eval,
}


def test_every_surface_records_the_same_decision(project: Path) -> None:
    for n, (cmd, action) in enumerate(SCENARIO):
        lines = {name: surface(cmd, project, n) for name, surface in SURFACES.items()}
        assert {name: rec["action"] for name, rec in lines.items()} == dict.fromkeys(
            SURFACES, action
        ), cmd
        reference = _same(lines["daemon"])
        for name, rec in lines.items():
            assert _same(rec) == reference, (cmd, name)
    # An escalation, by reach: nobody to ask (-c without a watcher, the fallback, a Codex hook,
    # which has no `ask`) refuses alike, with an approvable id; a dry run leaves it standing.
    nobody = {
        name: SURFACES[name](ESCALATION, project, 99) for name in ("daemon", "fallback", "hook")
    }
    for name, rec in nobody.items():
        assert _same(rec) == _same(nobody["daemon"]), name
        assert (
            rec["action"] == "refuse" and rec["answer"] == "nobody-watching" and rec["pending_id"]
        ), name
    dry = {name: SURFACES[name](ESCALATION, project, 98) for name in ("explain", "eval")}
    for name, rec in dry.items():
        assert rec["action"] == "escalate" and not rec["pending_id"], name
        assert _same(rec) | {"action": None} == _same(nobody["daemon"]) | {"action": None}, name

"""The tamper corpus (``fixtures/tamper.toml``, issue 16, S3.4): nothing that switches the gate off
or fools it from inside is allowed, at rung auto or at rung bypass; ordinary work stays ordinary.

Every case is decided by the real pipeline against an installation laid out in the test's own
HOME (a recorded launcher, venv, shims, man page and settings file away from the defaults, and a
repository whose pre-push hook is gatesh's), so the install record is what protects the parts
that are not where the defaults put them.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gatesh import _paths
from gatesh._types import Action, Rung, Stage
from gatesh.config import default
from gatesh.githooks import hook_script
from gatesh.pipeline import decide
from gatesh.policy.selfprotect import Kind, protected_for
from tests._homes import point_home, unchanged

CORPUS = tomllib.loads((Path(__file__).parent / "fixtures" / "tamper.toml").read_text())
CASES = CORPUS["case"]
ORDINARY = CORPUS["ordinary"]
CONFIG = default()


@dataclass(frozen=True)
class Installed:
    home: Path
    project: Path


def lay_out_installation(home: Path) -> Installed:
    """An installation with parts away from the defaults, recorded as install.sh records them."""
    paths = _paths.current()
    opt = home / "opt" / "gs"
    for folder in (
        opt / "bin",
        opt / "venv" / "bin",
        opt / "shims",
        opt / "man" / "man1",
        home / "work",
    ):
        folder.mkdir(parents=True, exist_ok=True)
    (opt / "bin" / "gatesh").write_text("#!/bin/sh\n")
    (home / "work" / "claude-settings.json").write_text("{}\n")
    project = home / "src" / "proj"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "app.py").write_text("x=1\n")
    # committed, as a project's own file is: editing it in place loses nothing git cannot restore (S3.2)
    subprocess.run(
        ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@x", "add", "app.py"],
        check=True,
    )
    subprocess.run(
        [
            "git",
            "-C",
            str(project),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@x",
            "commit",
            "-qm",
            "app",
        ],
        check=True,
    )
    hook = project / ".git" / "hooks" / "pre-push"
    hook.write_text(hook_script("pre-push", str(opt / "bin" / "gatesh")))
    hook.chmod(0o755)
    _paths.update_install_record(
        paths.install_record,
        _paths.RecordChange(
            launchers=(str(opt / "bin" / "gatesh"),),
            venv=str(opt / "venv"),
            shims=str(opt / "shims"),
            man=(str(opt / "man" / "man1" / "gatesh.1"),),
            source=str(home / "clone"),
            harness={str(home / "work" / "claude-settings.json"): "claude-code"},
            git={str(hook): "repo", str(Path(paths.data_dir) / "git-hooks"): "global"},
        ),
    )
    return Installed(home, project)


@pytest.fixture(scope="module")
def _one_installation(shared_home: Path) -> Iterator[Installed]:
    """The installation laid out once in the module's shared HOME (tests/_homes.py); the cases
    that only decide must leave it as it is."""
    with pytest.MonkeyPatch.context() as mp:
        point_home(mp, shared_home)
        one = lay_out_installation(shared_home)
    with unchanged(shared_home):
        yield one


@pytest.fixture
def installed(_one_installation: Installed, monkeypatch: pytest.MonkeyPatch) -> Installed:
    """The module's one installation, the test working in its HOME: for tests that only decide."""
    point_home(monkeypatch, _one_installation.home)
    return _one_installation


@pytest.fixture
def own_installation(isolated_home: Path) -> Installed:
    """An installation in the test's own HOME, for a test that changes it."""
    return lay_out_installation(isolated_home)


def _ids(rows: list[dict[str, str]]) -> list[str]:
    return [r["id"] for r in rows]


def test_corpus_shape() -> None:
    """At least 80 cases, unique ids, every route in at least three spellings."""
    assert len(CASES) >= 80
    ids = _ids(CASES) + _ids(ORDINARY)
    assert len(ids) == len(set(ids))
    spellings: dict[str, set[str]] = {}
    for case in CASES:
        spellings.setdefault(case["route"], set()).add(case["spelling"])
    thin = {route: s for route, s in spellings.items() if len(s) < 3}
    assert not thin, thin


@pytest.mark.parametrize("rung", [Rung.AUTO, Rung.BYPASS], ids=["auto", "bypass"])
@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_no_tamper_case_is_allowed(case: dict[str, str], rung: Rung, installed: Installed) -> None:
    d = decide(case["command"], cwd=str(installed.project), config=CONFIG, rung=rung)
    assert d.action is not Action.ALLOW, (case["id"], d.stage, d.reason)
    assert d.stage in (Stage.SELF_PROTECTION, Stage.HARDLINE), (case["id"], d.stage, d.reason)


def test_corpus_counts(installed: Installed, capsys: pytest.CaptureFixture[str]) -> None:
    """The figure quoted in the report: allowed cases per rung (must be 0 at both)."""
    allowed: Counter[str] = Counter()
    for rung in (Rung.AUTO, Rung.BYPASS):
        for case in CASES:
            d = decide(case["command"], cwd=str(installed.project), config=CONFIG, rung=rung)
            allowed[rung.value] += d.action is Action.ALLOW
    with capsys.disabled():
        print(
            f"\ntamper corpus: {len(CASES)} cases; allowed at auto {allowed['auto']}, "
            f"at bypass {allowed['bypass']}"
        )
    assert (allowed["auto"], allowed["bypass"]) == (0, 0)


@pytest.mark.parametrize("case", ORDINARY, ids=_ids(ORDINARY))
def test_ordinary_work_is_not_refused(case: dict[str, str], installed: Installed) -> None:
    d = decide(case["command"], cwd=str(installed.project), config=CONFIG, rung=Rung.AUTO)
    assert d.action is Action.ALLOW, (case["id"], d.stage, d.rule_id, d.reason)
    d = decide(case["command"], cwd=str(installed.project), config=CONFIG, rung=Rung.BYPASS)
    assert d.stage is not Stage.SELF_PROTECTION, (case["id"], d.rule_id)


def test_the_record_is_what_protects_parts_away_from_the_defaults(
    own_installation: Installed,
) -> None:
    """Without the record, the recorded launcher is an ordinary file; with it, it is the gate's."""
    command = "cp /bin/true ~/opt/gs/bin/gatesh"
    d = decide(command, cwd=str(own_installation.project), config=CONFIG, rung=Rung.BYPASS)
    assert (d.stage, d.rule_id) == (Stage.SELF_PROTECTION, "self.install")
    Path(_paths.current().install_record).unlink()
    d = decide(command, cwd=str(own_installation.project), config=CONFIG, rung=Rung.BYPASS)
    assert d.stage is Stage.BYPASS


def test_every_recorded_part_is_protected(installed: Installed) -> None:
    protected = protected_for(_paths.current())
    record = json.loads(Path(_paths.current().install_record).read_text())
    for part in [
        *record["launchers"],
        record["venv"],
        record["shims"],
        *record["man"],
        *record["harness"],
    ]:
        assert protected.kind_of(part) is not None, part
    assert (
        protected.kind_of(str(installed.home / ".local" / "bin" / "gatesh")) is Kind.INSTALL
    )  # the default place too


def test_a_hook_script_that_is_not_gatesh_is_the_projects_own(own_installation: Installed) -> None:
    hook = own_installation.project / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nnpm run lint\n")
    d = decide(
        "rm .git/hooks/pre-commit",
        cwd=str(own_installation.project),
        config=CONFIG,
        rung=Rung.BYPASS,
    )
    assert d.stage is Stage.BYPASS


# The classes of issue 27 items 1, 3 and 4, each in at least five spellings.
ISSUE_27_ROUTES = (
    "dynamic-config",
    "dynamic-audit",
    "dynamic-git-hooks",
    "dynamic-harness",
    "session-gate-vars",
    "session-shadow",
    "git-config-env",
    "git-hooks-option",
    "git-hookless-push",
)


def test_issue_27_classes_have_five_spellings() -> None:
    spellings: dict[str, set[str]] = {}
    for case in CASES:
        spellings.setdefault(case["route"], set()).add(case["spelling"])
    assert {r: len(spellings.get(r, ())) for r in ISSUE_27_ROUTES} == {
        r: max(5, len(spellings.get(r, ()))) for r in ISSUE_27_ROUTES
    }

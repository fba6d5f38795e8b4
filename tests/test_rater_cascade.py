"""``auto`` with a key is a cascade (S4): the builtin first, the model only where it is not sure.

Every test drives the real ``anthropic`` SDK over HTTP against the loopback Messages API, with the
real builtin rater and the real pipeline: what the model is asked is what the server received.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gatesh._types import Action, Asked, CascadeStage, Decision, Outcome, Rung, Stage
from gatesh.alignment import APPROVE, ESCALATE, VIEW
from gatesh.audit import record_for
from gatesh.audit_entry import entry_of
from gatesh.audit_record import as_json
from gatesh.config import Config, default
from gatesh.daemon.admin import format_record
from gatesh.pipeline import decide
from gatesh.rater import backend_name, make_rater
from gatesh.rater._prompt import RATE_TOOL
from gatesh.rater.anthropic import FAIL_PREFIX
from gatesh.rater.builtin import BuiltinRater
from gatesh.rater.cascade import CascadeRater
from gatesh.session import SessionState
from gatesh.testing import standin
from gatesh.testing.model_server import ModelServer, Reply, server_error, tool_use

KEY_ENV = "GATESH_TEST_CASCADE_KEY"
# A complete-knowledge command off the read-only path: tar writes one archive in the project.
COMPLETE_SAFE = "tar -czf backup.tgz src"
# A command whose effect the builtin does not model: it changes a cluster's state.
UNKNOWN_EFFECT = "kubectl apply -f deploy.yaml"


def rating(outcome: str, reason: str = "scripted rating", remedy: str = "") -> Reply:
    return tool_use(RATE_TOOL, {"outcome": outcome, "reason": reason, "remedy": remedy})


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as s:
        yield s


@pytest.fixture
def config(server: ModelServer, monkeypatch: pytest.MonkeyPatch) -> Config:
    """The default config (``rater.backend = auto``) with a key present, pointed at the server."""
    monkeypatch.setenv(KEY_ENV, "test-key-cascade")
    base = default()
    return dataclasses.replace(
        base,
        rater=dataclasses.replace(
            base.rater, base_url=server.base_url, api_key_env=KEY_ENV, timeout_s=5.0
        ),
    )


@pytest.fixture
def project(tmp_path: Path) -> str:
    (tmp_path / "src").mkdir()
    return str(tmp_path)


def cascade(config: Config) -> CascadeRater:
    rater = make_rater(config)
    assert isinstance(rater, CascadeRater)
    return rater


def run(
    text: str, config: Config, project: str, rater: object | None = None, **kw: object
) -> Decision:
    return decide(
        text,
        cwd=project,
        config=config,
        session=SessionState(),
        rater=rater or cascade(config),
        **kw,
    )  # type: ignore[arg-type]


def ratings(server: ModelServer) -> list[dict[str, object]]:
    return [b for b in server.bodies if standin.is_rating(b)]


# --- which backend auto is ------------------------------------------------------------------------


def test_auto_is_the_cascade_with_a_key_and_the_builtin_alone_without(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert backend_name(config) == "cascade"
    rater = make_rater(config)
    assert isinstance(rater, CascadeRater) and isinstance(rater.builtin, BuiltinRater)
    monkeypatch.delenv(KEY_ENV)
    assert backend_name(config) == "builtin"
    assert isinstance(make_rater(config), BuiltinRater)


# --- the builtin's verdict stands without a request -----------------------------------------------


def test_a_complete_knowledge_safe_command_makes_no_request(
    server: ModelServer, config: Config, project: str
) -> None:
    d = run(COMPLETE_SAFE, config, project)
    assert server.requests == []  # an empty script would have answered a request with a 500
    assert (d.action, d.stage, d.outcome) == (Action.ALLOW, Stage.RATER, Outcome.SAFE)
    assert d.verdict is not None and d.verdict.complete
    c = d.verdict.cascade
    assert c is not None and c.model is None
    assert (c.decided, c.asked) == (CascadeStage.BUILTIN, Asked.COMPLETE)
    assert "complete knowledge" in c.why


def test_a_builtin_attack_stands_with_no_request_and_the_model_cannot_lower_it(
    server: ModelServer, config: Config, project: str
) -> None:
    server.set_fallback(rating("safe"))
    d = run("chmod u+s /usr/bin/python3", config, project)
    assert server.requests == []
    assert (d.action, d.outcome) == (Action.HALT, Outcome.ATTACK)
    assert d.verdict is not None and d.verdict.cascade is not None
    assert d.verdict.cascade.asked is Asked.ATTACK


# --- the model is asked where the builtin is not sure ---------------------------------------------


def test_an_unknown_effect_command_makes_one_request_and_the_model_decides(
    server: ModelServer, config: Config, project: str
) -> None:
    server.script(rating("destructive", "applies changes to the cluster", "run kubectl diff first"))
    d = run(UNKNOWN_EFFECT, config, project)
    assert len(server.requests) == 1
    assert UNKNOWN_EFFECT in json.dumps(server.bodies[0])
    assert (d.action, d.stage, d.outcome) == (Action.REJECT, Stage.RATER, Outcome.DESTRUCTIVE)
    assert d.reason == "applies changes to the cluster" and d.remedy == "run kubectl diff first"
    c = d.verdict.cascade if d.verdict else None
    assert c is not None and c.model is not None
    assert (c.decided, c.asked) == (CascadeStage.MODEL, Asked.UNKNOWN)
    assert c.builtin.outcome is Outcome.SAFE and not c.builtin.complete
    assert any(g.id == "knowledge.state-verb" for g in c.builtin.gaps)
    assert "kubectl apply" in c.why


def test_an_unknown_effect_command_the_model_finds_safe_runs(
    server: ModelServer, config: Config, project: str
) -> None:
    server.script(rating("safe", "applies a manifest from the project"))
    d = run(UNKNOWN_EFFECT, config, project)
    assert len(server.requests) == 1
    assert (d.action, d.outcome) == (Action.ALLOW, Outcome.SAFE)
    assert d.verdict is not None and d.verdict.cascade is not None
    assert d.verdict.cascade.decided is CascadeStage.MODEL


def test_the_model_cannot_lower_a_builtin_catastrophic(
    server: ModelServer, config: Config, project: str
) -> None:
    server.script(rating("safe", "just a namespace"))
    d = run("kubectl delete namespace prod", config, project)
    assert len(server.requests) == 1  # asked: it could have raised it to attack
    assert (d.action, d.outcome) == (Action.ESCALATE, Outcome.CATASTROPHIC)
    c = d.verdict.cascade if d.verdict else None
    assert c is not None and c.model is not None and c.model.outcome is Outcome.SAFE
    assert (c.decided, c.asked) == (CascadeStage.BUILTIN, Asked.CATASTROPHIC)
    assert "never lowers" in c.why
    assert d.reason == c.builtin.reason


def test_the_model_cannot_lower_a_builtin_destructive(
    server: ModelServer, config: Config, project: str
) -> None:
    server.script(rating("safe"))
    d = run("git reset --hard HEAD~3", config, project)
    assert len(ratings(server)) == 1
    assert d.action is not Action.ALLOW and d.outcome is Outcome.DESTRUCTIVE
    assert d.rule_id == "git.reset-hard"
    assert d.verdict is not None and d.verdict.cascade is not None
    assert d.verdict.cascade.decided is CascadeStage.BUILTIN


def test_the_model_may_raise_a_builtin_destructive_to_attack(
    server: ModelServer, config: Config, project: str
) -> None:
    server.script(rating("attack", "wipes history to hide what was done"))
    d = run("git reset --hard HEAD~3", config, project)
    assert (d.action, d.outcome) == (Action.HALT, Outcome.ATTACK)
    assert d.reason == "wipes history to hide what was done"
    assert d.verdict is not None and d.verdict.cascade is not None
    assert d.verdict.cascade.decided is CascadeStage.MODEL


def test_the_model_cannot_lower_a_floor(server: ModelServer, config: Config, project: str) -> None:
    server.set_fallback(rating("safe", "pushes the branch"))
    d = run("git push https://github.com/me/repo.git main", config, project)
    bodies = ratings(server)
    assert len(bodies) == 1  # asked: a floor stands over a complete safe verdict; it may raise it
    assert "floor.open-world" in json.dumps(bodies[0])  # the model reads the floor note (S4)
    assert (
        d.action is Action.ESCALATE and d.stage is Stage.FLOOR and d.outcome is Outcome.DESTRUCTIVE
    )
    c = d.verdict.cascade if d.verdict else None
    assert c is not None and c.asked is Asked.FLOOR and c.builtin.complete


# --- fail closed ---------------------------------------------------------------------------------


def test_a_500_from_the_model_fails_closed(
    server: ModelServer, config: Config, project: str
) -> None:
    server.script(server_error())
    d = run(UNKNOWN_EFFECT, config, project)
    assert len(server.requests) == 1
    assert d.verdict is not None and d.verdict.fail_cause == "error"
    assert (
        d.outcome is Outcome.DESTRUCTIVE
        and d.reason.startswith(FAIL_PREFIX)
        and "HTTP 500" in d.reason
    )
    # never rated: no checker may lift it, a person decides (S3 step 11)
    assert d.action is Action.ESCALATE and "no rating could be obtained" in d.to_person_reason
    c = d.verdict.cascade
    assert c is not None and c.decided is CascadeStage.MODEL and c.builtin.outcome is Outcome.SAFE


def test_a_failed_model_leaves_a_builtin_catastrophic_standing(
    server: ModelServer, config: Config, project: str
) -> None:
    server.script(server_error())
    d = run("kubectl delete namespace prod", config, project)
    assert (d.action, d.outcome) == (Action.ESCALATE, Outcome.CATASTROPHIC)
    assert d.verdict is not None and not d.verdict.fail_cause
    assert d.verdict.cascade is not None and "model stage failed" in d.verdict.cascade.why


def test_a_failed_model_is_not_remembered_and_the_builtin_stage_is_never_cached(
    server: ModelServer, config: Config, project: str
) -> None:
    rater = cascade(config)
    server.script(server_error(), rating("destructive", "changes the cluster"))
    first = rater.rate(
        run(UNKNOWN_EFFECT, config, project, rater=BuiltinRater()).facts, cwd=project
    )
    assert first.fail_cause == "error"
    second = rater.rate(
        run(UNKNOWN_EFFECT, config, project, rater=BuiltinRater()).facts, cwd=project
    )
    assert second.outcome is Outcome.DESTRUCTIVE and not second.cached and len(server.requests) == 2
    third = rater.rate(
        run(UNKNOWN_EFFECT, config, project, rater=BuiltinRater()).facts, cwd=project
    )
    assert (
        third.cascade is not None and third.cascade.model is not None and third.cascade.model.cached
    )
    assert len(server.requests) == 2  # the model's answer came from its cache
    rater.rate(run(COMPLETE_SAFE, config, project, rater=BuiltinRater()).facts, cwd=project)
    model_cache = rater.model_stage.cache  # type: ignore[attr-defined]
    cached = [v for _, v in model_cache._entries.values()]
    assert len(cached) == 1 and all(v.backend == "anthropic" and v.cascade is None for v in cached)


def test_the_health_notice_is_the_model_stages(
    server: ModelServer, config: Config, project: str
) -> None:
    server.set_fallback(server_error())
    rater = cascade(config)
    for _ in range(3):
        run(UNKNOWN_EFFECT, config, project, rater=rater)
    notice = rater.health_notice()
    assert notice is not None and "failed 3 times in a row" in notice
    assert rater.health_notice() is None


# --- what a user configures ----------------------------------------------------------------------


def test_ask_model_leaves_a_case_to_the_builtin(
    server: ModelServer, config: Config, project: str
) -> None:
    config = dataclasses.replace(
        config, rater=dataclasses.replace(config.rater, ask_model=(Asked.UNKNOWN,))
    )
    server.set_fallback(rating("attack"))
    d = run("git reset --hard HEAD~3", config, project)
    assert server.requests == []
    assert d.verdict is not None and d.verdict.cascade is not None
    assert d.verdict.cascade.asked is Asked.LEFT and "rater.ask_model" in d.verdict.cascade.why
    run(UNKNOWN_EFFECT, config, project)
    assert len(server.requests) == 1


# --- the cascade is never weaker than the builtin alone ------------------------------------------


def _bypass_cases() -> list[str]:
    from _fixtures import load

    return [c.command for c in load("bypass").CASES]


def _rater_cases() -> list[str]:
    path = Path(__file__).parent / "fixtures" / "rater_cases.jsonl"
    return [json.loads(line)["cmd"] for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("rung", [Rung.AUTO, pytest.param(Rung.ASSISTED, marks=pytest.mark.slow)])
def test_an_always_safe_model_never_makes_the_cascade_weaker(
    server: ModelServer, config: Config, project: str, rung: Rung
) -> None:
    """Over the bypass corpus and the rater cases, with a model that says safe to everything it is
    asked: every command the builtin alone does not allow, the cascade does not allow either, and
    no outcome is milder. (The builtin checker for both: only the rater differs.)"""
    server.set_fallback(standin.answers("safe"))
    rater = cascade(config)
    builtin = BuiltinRater()
    weaker = []
    for text in [*_bypass_cases(), *_rater_cases()]:
        alone = run(text, config, project, rater=builtin, rung=rung)
        both = run(text, config, project, rater=rater, rung=rung)
        milder = alone.outcome is not None and (
            both.outcome is None or both.outcome.rank < alone.outcome.rank
        )
        if (not alone.allowed and both.allowed) or milder:
            weaker.append(
                (text, alone.action.value, both.action.value, alone.outcome, both.outcome)
            )
    assert weaker == []
    assert len(ratings(server)) > 20  # the model was asked about many of them, and said safe


# --- what the person sees --------------------------------------------------------------------------


def test_the_audit_line_and_the_log_say_which_stage_decided(
    server: ModelServer, config: Config, project: str
) -> None:
    server.script(rating("safe", "applies a manifest"))
    asked = as_json(
        record_for(run(UNKNOWN_EFFECT, config, project), session="s", pid=1, cwd=project)
    )
    c = asked["cascade"]
    assert (c["decided"], c["asked"], c["model_asked"]) == ("model", "unknown", True)
    assert c["builtin"]["outcome"] == "safe" and not c["builtin"]["complete"]
    assert "knowledge.state-verb" in c["builtin"]["gaps"]
    assert c["model"]["outcome"] == "safe" and c["model"]["backend"] == "anthropic"
    assert asked["rater"]["backend"] == "anthropic"
    assert "cascade: model decided, model asked (unknown)" in format_record(entry_of(asked))
    alone = as_json(
        record_for(run(COMPLETE_SAFE, config, project), session="s", pid=1, cwd=project)
    )
    c = alone["cascade"]
    assert (c["decided"], c["asked"], c["model_asked"], c["model"]) == (
        "builtin",
        "complete",
        False,
        None,
    )
    assert c["builtin"]["complete"] and alone["rater"]["backend"] == "builtin"
    assert "cascade: builtin decided, model not asked (complete)" in format_record(entry_of(alone))
    assert len(server.requests) == 1


def test_explain_says_which_stage_decided_and_why(
    server: ModelServer,
    config: Config,
    project: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from gatesh.explain import explain_main

    # explain reads the key and base URL the way a user's shell gives them
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-explain")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    server.set_fallback(standin.answers("destructive"))
    assert explain_main(["--cwd", project, UNKNOWN_EFFECT]) == 3  # a person would decide
    text = capsys.readouterr().out
    assert "builtin stage: safe (not complete: It runs kubectl apply" in text
    assert "model stage: asked" in text and "decided by the model stage" in text
    assert explain_main(["--json", "--cwd", project, COMPLETE_SAFE]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["decision"]["cascade"]["decided"] == "builtin"
    assert out["decision"]["cascade"]["asked"] == "complete"
    assert out["decision"]["model_call"] is None
    assert out["audit"]["cascade"]["model_asked"] is False
    assert len(ratings(server)) == 1


def test_explain_without_a_key_shows_what_a_key_would_change(
    project: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gatesh.explain import explain_main

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert (
        explain_main(["--cwd", project, UNKNOWN_EFFECT]) == 0
    )  # without a key the builtin lets it run
    assert (
        "not complete (with a key, the model is asked): It runs kubectl apply"
        in capsys.readouterr().out
    )
    assert explain_main(["--cwd", project, COMPLETE_SAFE]) == 0
    assert (
        "complete (with a key, this verdict stands without asking the model)"
        in capsys.readouterr().out
    )


def test_the_stand_in_uses_the_real_tool_names() -> None:
    assert (standin.RATE_TOOL, standin.VIEW_TOOL, standin.ESCALATE_TOOL) == (
        RATE_TOOL,
        VIEW,
        ESCALATE,
    )
    assert APPROVE not in (standin.RATE_TOOL, standin.VIEW_TOOL, standin.ESCALATE_TOOL)


def test_no_key_in_any_request_is_in_clear(
    server: ModelServer, config: Config, project: str
) -> None:
    server.set_fallback(rating("safe"))
    run(UNKNOWN_EFFECT, config, project)
    assert server.requests and all(
        "test-key-cascade" not in json.dumps(dict(r.headers)) for r in server.requests
    )
    assert os.environ[KEY_ENV] == "test-key-cascade"


# --- end to end: the daemon with a key in its environment ----------------------------------------


@pytest.mark.slow
def test_gated_commands_through_the_daemon_ask_the_model_only_where_the_builtin_is_not_sure(
    tmp_path: Path,
) -> None:
    """``gatesh -c`` with the key in the person's daemon.env (S9.7): a complete-knowledge
    command runs with no request; inline code is asked about, runs when the model finds it safe and
    is refused when it does not; the audit log says which stage decided."""
    import subprocess
    import sys

    from _daemon import stop_daemon

    from gatesh import _paths

    project = Path.home() / "proj"
    (project / "src").mkdir(parents=True)
    with ModelServer() as server:
        user = Path(_paths.current().user_config)
        user.parent.mkdir(parents=True, exist_ok=True)
        # Without the boundary: where it holds, inline code it contains is complete knowledge
        # and no model is asked (issue 30 item 7); this test is about the asking.
        user.write_text(
            f'[rater]\nbase_url = "{server.base_url}"\napi_key_env = "TEST_E2E_KEY"\n'
            "timeout_s = 10\n[boundary]\nenabled = false\n"
        )
        # The person's key file (S9.7): the daemon a client starts takes no key from the client.
        keys = user.parent / "daemon.env"
        keys.write_text("TEST_E2E_KEY=test-key-e2e\n")
        keys.chmod(0o600)
        env = {**os.environ, "GATESH_SESSION": "cascade-e2e"}

        def gate(cmd: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "gatesh", "-c", cmd],
                capture_output=True,
                text=True,
                env=env,
                cwd=project,
                timeout=120,
            )

        try:
            done = gate(COMPLETE_SAFE)
            assert done.returncode == 0, done.stderr
            assert (project / "backup.tgz").exists() and server.requests == []
            server.script(rating("safe", "writes one file in the project"))
            done = gate('python3 -c \'import subprocess; open("marker-safe", "w")\'')
            assert done.returncode == 0, done.stderr
            assert (project / "marker-safe").exists() and len(ratings(server)) == 1
            server.set_fallback(standin.answers("destructive"))
            done = gate('python3 -c \'import subprocess; open("marker-refused", "w")\'')
            assert done.returncode == 126 and not (project / "marker-refused").exists()
            assert len(ratings(server)) == 2
        finally:
            stop_daemon()
    records = [
        json.loads(line) for line in Path(_paths.current().audit_log).read_text().splitlines()
    ]
    by_command = {r["command"]: r for r in records if r.get("cascade")}
    assert by_command[COMPLETE_SAFE]["cascade"]["decided"] == "builtin"
    assert by_command[COMPLETE_SAFE]["cascade"]["model_asked"] is False
    asked = by_command['python3 -c \'import subprocess; open("marker-safe", "w")\'']["cascade"]
    assert (asked["decided"], asked["asked"], asked["model_asked"]) == ("model", "unknown", True)
    assert "knowledge.inline-code" in asked["builtin"]["gaps"]

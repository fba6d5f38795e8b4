"""Local tools: cp, mv, ln, install, vi and vim, python's launcher (pip), package managers and gh."""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from ._parse import Grammar
from ._rows import _f, _o, _subs

# --- copying and moving files --------------------------------------------------------------------

# coreutils cp, mv, install and ln: the destination is the last operand, or the value of
# -t/--target-directory (then every operand is a source). `--backup[=CONTROL]` takes a value only
# attached; -S/--suffix, install's -m/-o/-g take one always.
_COPY_VALUES: Final = _f("-t", "--target-directory", "-S", "--suffix")
COPY: Final = Grammar(
    "cp",
    _f("cp", "gcp", "mv", "gmv", "ln", "gln", "link"),
    _o(
        _COPY_VALUES,
        _f("--backup", "--preserve", "--no-preserve", "--reflink", "--sparse", "--update")
        | _f("--context"),
        _f("-a", "-b", "-d", "-f", "-i", "-l", "-L", "-n", "-P", "-p", "-R", "-r", "-s", "-T")
        | _f("-u", "-v", "-x", "-Z", "--force", "--no-clobber", "--recursive", "--symbolic")
        | _f("--no-target-directory", "--archive", "--verbose", "--interactive", "--link"),
        abbreviate=True,
    ),
    why="coreutils cp(1), mv(1), ln(1)",
)
INSTALL: Final = Grammar(
    "install",
    _f("install", "ginstall"),
    _o(
        _COPY_VALUES | _f("-m", "--mode", "-o", "--owner", "-g", "--group", "--strip-program"),
        _f("--backup", "--preserve-context", "--context"),
        _f("-b", "-C", "--compare", "-c", "-D", "-d", "--directory", "-p", "-s", "--strip", "-T")
        | _f("-v", "--verbose", "-Z"),
        abbreviate=True,
    ),
    why="coreutils install(1)",
)


# --- package managers and publishers -------------------------------------------------------------

_NPM_VALUES: Final = _f(
    "-w",
    "--workspace",
    "--registry",
    "--tag",
    "--access",
    "--otp",
    "-C",
    "--prefix",
    "--userconfig",
    "--cache",
    "--loglevel",
    "-p",
    "--package",
    "--filter",
    "--dir",
    "--cwd",
)
_NPM_FLAGS: Final = _f(
    "-g",
    "--global",
    "-D",
    "--save-dev",
    "-S",
    "--save",
    "-E",
    "--save-exact",
    "-y",
    "--yes",
    "-f",
    "--force",
    "--dry-run",
    "-s",
    "--silent",
    "-q",
    "--quiet",
    "--no-save",
    "--ignore-scripts",
)
_NPM_OPTS: Final = _o(_NPM_VALUES, flags=_NPM_FLAGS)


def _npm(**subs: Grammar) -> Grammar:
    return Grammar("npm-subcommand", options=_NPM_OPTS, subcommands=_subs(**subs))


NPM: Final = Grammar(
    "npm",
    _f("npm", "pnpm", "yarn", "bun"),
    _NPM_OPTS,
    _subs(
        install=_npm(),
        ci=_npm(),
        publish=_npm(),
        unpublish=_npm(),
        deprecate=_npm(),
        dist_tag=_npm(add=_npm(), rm=_npm(), ls=_npm()),
        config=_npm(set=_npm(), get=_npm(), delete=_npm(), list=_npm(), edit=_npm()),
        exec=_npm(),
        run=_npm(),
        dlx=_npm(),
        x=_npm(),
        pkg=_npm(set=_npm(), get=_npm(), delete=_npm()),
        npm=_npm(publish=_npm(), login=_npm(), whoami=_npm(), info=_npm()),  # yarn npm publish
        owner=_npm(add=_npm(), rm=_npm(), ls=_npm()),
        access=_npm(),
        token=_npm(),
        version=_npm(),
        add=_npm(),
        remove=_npm(),
        link=_npm(),
        set=_npm(),  # `yarn config set` spelled `yarn set`
    ),
    aliases=MappingProxyType(
        {"i": "install", "in": "install", "isntall": "install", "c": "config"}
    ),
    open=True,
    default=_NPM_OPTS,
    why="npm's, pnpm's, yarn's and bun's shared options (npm help config)",
)

# `gh help`: every area takes -R/--repo; its verbs share these value flags.
_GH_VERBS: Final = _o(
    _f("-R", "--repo", "-t", "--title", "-n", "--notes", "-F", "--notes-file", "--target", "-b")
    | _f("--body", "--visibility", "-d", "--description", "-B", "--base", "-H", "--head", "-l")
    | _f("--label", "-a", "--assignee", "-m", "--milestone", "--json", "-q", "--jq", "-L")
    | _f("--template", "--limit", "-e", "--env", "-o", "--org", "-s", "--state", "-X")
    | _f("--method", "-f", "--field", "--raw-field", "--hostname", "--output", "-O"),
)
GH: Final = Grammar(
    "gh",
    _f("gh"),
    _o(_f("-R", "--repo", "--hostname")),
    _subs(
        **{
            area: Grammar("gh-area", options=_GH_VERBS, open=True, default=_GH_VERBS)
            for area in (
                "release",
                "repo",
                "pr",
                "issue",
                "secret",
                "variable",
                "workflow",
                "run",
                "gist",
                "auth",
                "ssh-key",
                "gpg-key",
                "label",
                "cache",
                "extension",
                "codespace",
                "project",
                "ruleset",
            )
        },
        api=Grammar("gh-api", options=_GH_VERBS),
    ),
    open=True,
    default=_GH_VERBS,
    why="`gh help` and each area's --help",
)

# --- editors ---------------------------------------------------------------------------------

# vi, vim and neovim (`vim -h`): -c and --cmd take an ex command, `+CMD` operands are one too; -s
# is ex's silent mode (in vim's normal mode it names a script of keys: either way no payload).
VI: Final = Grammar(
    "vi",
    _f("vi", "vim", "nvim", "view", "rvim", "rview", "ex", "gvim", "vimdiff", "evim", "nvi"),
    _o(
        _f("-c", "--cmd", "-S", "-u", "-U", "-i", "-T", "-t", "-q", "-w", "-W", "--servername")
        | _f("--remote", "--remote-send", "--remote-expr", "--startuptime", "--listen"),
        _f("-o", "-O", "-p", "-r"),
        _f("-s", "-e", "-E", "-n", "-N", "-b", "-R", "-M", "-m", "-y", "-Z", "-d", "-g", "-f")
        | _f("-l", "-A", "-H", "-F", "-x", "-X", "-V", "-D", "--clean", "--noplugin"),
    ),
    why="`vim -h`",
)


# --- python's launcher ---------------------------------------------------------------------------

PIP: Final = Grammar(
    "pip",
    _f("pip", "pip3"),
    _o(
        _f("-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-r", "--requirement")
        | _f("-c", "--constraint", "-t", "--target", "--prefix", "--root", "--proxy", "--cert")
        | _f("--log", "--cache-dir", "--python", "--trusted-host", "--platform", "-e")
        | _f("--editable", "--config-settings", "--global-option", "--src", "--upgrade-strategy"),
        flags=_f("-U", "--upgrade", "--user", "-q", "--quiet", "-v", "--verbose", "--pre"),
        abbreviate=True,
    ),
    open=True,
    default=_o(
        _f("-i", "--index-url", "--extra-index-url", "-r", "--requirement", "-t", "--target")
        | _f("-f", "--find-links", "-c", "--constraint", "-e", "--editable"),
        abbreviate=True,
    ),
    why="`pip help install`; pip's optparse takes unambiguous abbreviations",
)


# gatesh's own argv (`gatesh --help`, `gatesh config --help`): what self-protection reads to
# tell a verb only a person may run from a read-only view (`gatesh config --cwd .` is the view).
GATESH: Final = Grammar(
    "gatesh",
    _f("gatesh", "gatesh.py"),
    _o(
        _f("--shell"),
        # -c's command is the first operand: what follows it is that command's arguments
        flags=_f("-c", "-l", "--login", "-i", "--human", "-h", "--help", "--version", "--json"),
        ends_at=1,
    ),
    _subs(
        config=Grammar(
            "gatesh-config", options=_o(_f("--cwd"), flags=_f("--json", "-h", "--help"))
        ),
        install=Grammar(
            "gatesh-install",
            options=_o(
                _f("--codex", "--settings", "--prefix"),
                flags=_f("--uninstall", "--global", "--force", "--json", "-h", "--help"),
            ),
        ),
    ),
    open=True,
    why="gatesh's own usage (gatesh --help, gatesh VERB --help)",
)

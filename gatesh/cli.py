"""The ``gatesh`` subcommands. Each lives in the module of its concept; this is only the index.

Every subcommand is ``main(argv: list[str]) -> int`` in its module, imported only when used, so
``gatesh status`` does not pay for the parsers and ``gatesh explain`` does not pay for blessed.
"""

from __future__ import annotations

import importlib
import sys

from gatesh import __version__
from gatesh._errors import EXIT_BROKEN_PIPE, EXIT_USAGE, GateshError

# name -> (module:function, one-line help). The order is the order of ``gatesh --help``.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "explain": (
        "gatesh.explain:explain_main",
        "dry run: show every layer's finding and the action",
    ),
    "eval": ("gatesh.explain:eval_main", "batch explain over a JSONL corpus; per-label counts"),
    "config": (
        "gatesh.config:config_main",
        "show the effective config and where each value came from",
    ),
    "watch": (
        "gatesh.watch:main",
        "live view of every round; answer escalations; record a mandate",
    ),
    "mandate": (
        "gatesh.people:mandate_main",
        "tell the gate what you asked the agent to do (person only)",
    ),
    "approve": (
        "gatesh.people:approve_main",
        "approve a pending or refused escalation id (person only)",
    ),
    "deny": ("gatesh.people:deny_main", "refuse a pending escalation id (person only)"),
    "resume": ("gatesh.people:resume_main", "resume a halted session (person only)"),
    "undo": (
        "gatesh.undo_cli:main",
        "list snapshots, or put back what a command changed (person only)",
    ),
    "status": ("gatesh.daemon.admin:status_main", "sessions, counters and the daemon's health"),
    "log": ("gatesh.daemon.admin:log_main", "read the audit log (--follow, --json)"),
    "dump": (
        "gatesh.daemon.admin:dump_main",
        "write a debug archive of recent model calls (redacted)",
    ),
    "daemon": ("gatesh.daemon.server:main", "run the per-user daemon (normally started on demand)"),
    "hook": (
        "gatesh.hooks:main",
        "answer a harness hook: claude-code, codex or gemini (JSON on stdin)",
    ),
    "git-hook": ("gatesh.githooks:main", "gate what a git hook can veto (called by hooks/git/*)"),
    "install": (
        "gatesh.install:main",
        "install integrations: claude-code, codex, gemini, git, shims, service",
    ),
    "doctor": ("gatesh.doctor:main", "check the installation and print what to fix"),
    # Internal: the in-shell hook of the PTY session asks the gate through this (not in --help).
    "_gate": ("gatesh.pty.gate:main", ""),
}

USAGE = """\
usage: gatesh [-l] [-c COMMAND [ARG ...]]     gate COMMAND, then run it with the real shell
       gatesh [--shell bash|zsh] [--human]    an interactive gated shell (PTY)
       gatesh SUBCOMMAND [OPTIONS]            (gatesh SUBCOMMAND --help for its options)
"""


def _help() -> str:
    width = max(len(n) for n in SUBCOMMANDS)
    rows = [f"  {name:<{width}}  {text}" for name, (_, text) in SUBCOMMANDS.items() if text]
    return (
        USAGE
        + "\nsubcommands:\n"
        + "\n".join(rows)
        + (
            "\n\nExit status: with -c, the command's own; 126 when gatesh refused it (nothing ran);"
            "\n1 when gatesh failed; 2 for bad usage. See gatesh(1).\n"
        )
    )


def main(argv: list[str]) -> int:
    """Run one subcommand. Its output going nowhere (``gatesh status | head -1``) ends it quietly
    with EXIT_BROKEN_PIPE: the one place every printing verb's BrokenPipeError is handled."""
    try:
        status = _run(argv)
        sys.stdout.flush()  # inside the handler: a pipe closed after the last print fails here
        return status
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's own flush at exit finds no closed pipe to
    complain about (it would print "Exception ignored … BrokenPipeError")."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _run(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(_help())
        return 0
    if argv[0] == "--version":
        print(f"gatesh {__version__}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        sys.stderr.write(f"gatesh: unknown subcommand {name!r}\n\n{_help()}")
        return EXIT_USAGE
    target, _ = SUBCOMMANDS[name]
    module_name, func_name = target.split(":")
    func = getattr(importlib.import_module(module_name), func_name)
    try:
        return int(func(rest) or 0)
    except GateshError as exc:
        sys.stderr.write(f"gatesh {name}: {exc}\n")
        return exc.exit_status

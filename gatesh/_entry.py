"""The ``gatesh`` executable: choose a surface from argv, importing as little as possible.

Shell-style invocations (``-c``, ``-l``, ``--login``, an argv[0] named ``bash``/``zsh``/``sh`` or
starting with ``-``) go to the standard-library client or the PTY session; everything else is a
subcommand of the full CLI. This module imports only ``sys`` (S9.4, S14: every import here is
paid by every ``gatesh -c``).
"""

from __future__ import annotations

import sys

SHELL_NAMES = ("bash", "zsh", "sh")
CLI_FLAGS = ("-h", "--help", "--version")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv if argv is None else argv)
    name = argv[0].rpartition("/")[2] if argv else "gatesh"
    login = name.startswith("-")
    name = name.lstrip("-")
    args = argv[1:]
    as_shell = name in SHELL_NAMES or login
    if not as_shell and args and args[0].startswith("-") and args[0] not in CLI_FLAGS:
        as_shell = True  # `gatesh -c CMD`, `gatesh -lc CMD`, `gatesh --login`, …
    if as_shell or not args:
        # A shim (bash/zsh/sh) also gates script files and scripts on stdin; the client hands an
        # interactive shell to the PTY session.
        if _has_command_flag(args) or name in SHELL_NAMES:
            from gatesh.client import shell_main

            return shell_main(argv)
        from gatesh.pty import main as pty_main

        return pty_main(argv)
    from gatesh.cli import main as cli_main

    return cli_main(args)


def _has_command_flag(args: list[str]) -> bool:
    """True when bash would read the command from a string: a short-option cluster holding ``c``."""
    for arg in args:
        if arg == "--":
            return False
        if arg.startswith("--"):
            continue
        if arg.startswith("-") and "c" in arg[1:]:
            return True
        if not arg.startswith("-") and not arg.startswith("+"):
            return False
    return False


if __name__ == "__main__":
    sys.exit(main())

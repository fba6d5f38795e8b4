"""The ``gatesh`` executable: choose a surface from argv, importing as little as possible.

Shell-style invocations (``-c``, ``-l``, ``--login``, an argv[0] named ``bash``/``zsh``/``sh`` or
starting with ``-``) go to the standard-library client or the PTY session; everything else is a
subcommand of the full CLI. This module imports only ``sys`` (S9.4, S14: every import here is
paid by every ``gatesh -c``; that includes ``__future__``, hence the quoted annotations).

A two-interpreter launcher (see :mod:`gatesh.launcher`) passes ``full``: the interpreter gatesh is
installed in and its dependency folders. When this runs on another interpreter (the fast one,
which lacks the dependencies), only the client runs here and every other surface is handed to the
full interpreter by :func:`run_full`; when it runs on the full one, the folders are added and all
goes on as usual.
"""

import sys

SHELL_NAMES = ("bash", "zsh", "sh")
CLI_FLAGS = ("-h", "--help", "--version")
# What run_full exits with when the full interpreter cannot be started (as for a refusal, S1).
EXIT_NO_INTERPRETER = 126

TYPE_CHECKING = False
if TYPE_CHECKING:
    # (the full interpreter, the folders its dependencies import from after its standard library)
    Full = tuple[str, list[str]]


def main(argv: "list[str] | None" = None, full: "Full | None" = None) -> int:
    if full is not None and sys.executable == full[0]:
        # Started on the full interpreter itself (a subcommand, or the fast one is gone).
        sys.path += [p for p in full[1] if p not in sys.path]
        full = None
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

            return shell_main(argv, full=full)
        if full is not None:
            return run_full(full, argv)
        from gatesh.pty import main as pty_main

        return pty_main(argv)
    if full is not None:
        return run_full(full, argv)
    from gatesh.cli import main as cli_main

    return cli_main(args)


def full_command(full: "Full", argv: "list[str]", run: str = "gatesh._entry:main") -> "list[str]":
    """The command that runs ``run`` (``module:function``, :func:`main` by default) with
    ``sys.argv`` equal to ``argv`` on the full interpreter, with ``-I -S`` and the import path a
    launcher gives it: gatesh's folder first, the dependency folders after the standard library."""
    python, deps = full
    home = __file__.rpartition("/")[0].rpartition("/")[0]  # the folder holding the gatesh package
    module, _, function = run.partition(":")
    code = (
        "import sys\n"
        "del sys.argv[0]\n"  # "-c": the argv handed over follows
        f"sys.path[:0] = [{home!r}]\n"
        f"sys.path += {list(deps)!r}\n"
        f"from {module} import {function}\n"
        f"sys.exit({function}())\n"
    )
    return [python, "-IS", "-c", code, *argv]


def run_full(full: "Full", argv: "list[str]") -> int:
    """Replace this process by :func:`full_command`. Returns only when the full interpreter cannot
    be started: then it prints why and returns EXIT_NO_INTERPRETER."""
    import posix

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    command = full_command(full, argv)
    try:
        posix.execv(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"gatesh: cannot start the interpreter gatesh is installed in, {command[0]} "
                         f"({exc.strerror or exc}); nothing ran. Run install.sh again to rewrite the launcher.\n")
    return EXIT_NO_INTERPRETER


def _has_command_flag(args: "list[str]") -> bool:
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

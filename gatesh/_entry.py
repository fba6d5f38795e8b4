"""The ``gatesh`` executable: choose a surface from argv, importing as little as possible.

Shell-style invocations (``-c``, ``-l``, ``--login``, an argv[0] named ``bash``/``zsh``/``sh`` or
starting with ``-``, no arguments) go to the standard-library client, or to the PTY session when
bash would be interactive; ``gatesh hook`` goes to the standard-library hook adapter; everything
else is a subcommand of the full CLI. What an argv means is read by
:class:`gatesh._invoke.Invocation`, the one reader of a shell's argv. Importing this module
imports only ``sys`` (S9.4, S14: every import here is paid by every ``gatesh -c``; that includes
``__future__``, hence the quoted annotations).

A two-interpreter launcher (see :mod:`gatesh.launcher`) passes ``full``: the interpreter gatesh is
installed in and its dependency folders. When this runs on another interpreter (the fast one,
which lacks the dependencies), only the client and the hook adapter run here and every other
surface is handed to the full interpreter by :func:`gatesh._invoke.run_full` (the client and the
adapter start the daemon and the in-process gate there); when it runs on the full one, the folders are
added and all goes on as usual.
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gatesh._invoke import Full


def main(argv: "list[str] | None" = None, full: "Full | None" = None) -> int:
    from gatesh._invoke import Invocation, run_full

    if full is not None and sys.executable == full[0]:
        # Started on the full interpreter itself (a subcommand, or the fast one is gone).
        sys.path += [p for p in full[1] if p not in sys.path]
        full = None
    argv = list(sys.argv if argv is None else argv)
    invocation = Invocation(argv)
    if not invocation.as_shell:
        if invocation.args[:1] == ["hook"]:
            # Every harness tool call: straight to the standard-library hook adapter, without the
            # CLI's imports, on whichever interpreter this is (S14: a hook call costs at most 5 ms
            # over the interpreter start). ``full`` starts the daemon or the in-process gate.
            from gatesh.hooks import run as run_hook

            run_hook(invocation.args[1:], full=full)  # ends the process
        if full is not None:
            return run_full(full, argv)
        from gatesh.cli import main as cli_main

        return cli_main(invocation.args)
    if not invocation.wants_pty(_stdin_is_tty()):
        from gatesh.client import shell_main

        return shell_main(argv, full=full)
    if full is not None:  # the PTY session needs the full interpreter
        return run_full(full, argv)
    from gatesh.pty import main as pty_main

    return pty_main(argv)


def _stdin_is_tty() -> bool:
    import posix

    try:
        return posix.isatty(0)
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main())

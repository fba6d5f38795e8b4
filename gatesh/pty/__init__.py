"""The interactive gated shell (S10): ``gatesh`` with no ``-c``, or a shim named bash/zsh/sh.

``main`` reads the invocation as bash would (:class:`gatesh._invoke.Invocation`): with a script
operand, or a script on a standard input that is not a terminal, the shell is not interactive and
the ``-c`` client gates and runs it (:func:`gatesh.client.shell_main`); otherwise it starts bash or zsh in a
PTY with gatesh's hook (:mod:`gatesh.pty.startup`) and relays the terminal
(:mod:`gatesh.pty.session`) until the shell exits, returning its exit status.
"""

from __future__ import annotations

import os
import sys
import threading
import uuid

from gatesh._invoke import PTY_SHELLS, Invocation

__all__ = ["main"]

USAGE = "usage: gatesh [-l|--login] [-i] [--shell bash|zsh] [--human]\n"
SHELLS = PTY_SHELLS


def main(argv: list[str]) -> int:
    """Run a gated interactive session for ``argv`` (argv[0] as invoked); its exit status.

    An invocation that is not interactive (a script, a command, commands on a pipe: read by
    :class:`gatesh._invoke.Invocation`, as ``gatesh._entry`` reads it) goes to the ``-c`` client.
    """
    invocation = Invocation(argv)
    if invocation.parsed.bad_shell:
        sys.stderr.write("gatesh: --shell takes bash or zsh\n" + USAGE)
        return 2
    if not invocation.wants_pty(_isatty(0)):
        from gatesh import client

        return client.shell_main(argv)
    return _session(invocation.pty_shell, login=invocation.login, human=invocation.parsed.human)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _session(shell: str | None, *, login: bool, human: bool) -> int:
    from gatesh.pty.session import Relay
    from gatesh.pty.startup import prepare, real_shell

    operator = "person" if human else "agent"
    try:
        from gatesh.config import load_config

        config = load_config(os.getcwd())
        shell = shell or config.shell
        if config.operator == "person":
            operator = "person"
    except Exception as exc:  # the gate reports a broken config on every command; start anyway
        sys.stderr.write(f"gatesh: could not read the configuration ({exc})\n")
    shell = shell or _login_shell_name()
    real = real_shell(shell)
    if real is None:
        sys.stderr.write(f"gatesh: no {shell} found on PATH\n")
        return 1
    session = os.environ.get("GATESH_SESSION") or f"pty-{uuid.uuid4().hex[:12]}"
    startup = prepare(shell, real, login=login, session=session, operator=operator)
    try:
        relay = Relay(startup.argv, startup.env, ask_socket=startup.ask_socket)
        threading.Thread(target=_register, args=(session, relay.child.pid), daemon=True).start()
        status = relay.run()
        _end(session)
        return status
    finally:
        startup.cleanup()


def _login_shell_name() -> str:
    name = os.path.basename(os.environ.get("SHELL", "")).lstrip("-")
    return name if name in SHELLS else "bash"


def _register(session: str, pid: int) -> None:
    """Tell the daemon the shell's pid is gated (best effort: its environment already says so)."""
    from gatesh import client

    try:
        client.request(
            "check",
            {"op": "register", "session": session, "pid": pid, "surface": "pty"},
            timeout=30.0,
        )
    except Exception:
        pass


def _end(session: str) -> None:
    from gatesh import client

    try:
        client.request("check", {"op": "end", "session": session}, start=False, timeout=5.0)
    except Exception:
        pass

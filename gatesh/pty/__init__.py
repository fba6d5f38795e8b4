"""The interactive gated shell (S10): ``gatesh`` with no ``-c``, or a shim named bash/zsh/sh.

``main`` decides what the invocation means the way bash would: with a script operand, or a
script on a standard input that is not a terminal, the shell is not interactive and the ``-c``
client gates and runs it (:func:`gatesh.client.shell_main`); otherwise it starts bash or zsh in a
PTY with gatesh's hook (:mod:`gatesh.pty.startup`) and relays the terminal
(:mod:`gatesh.pty.session`) until the shell exits, returning its exit status.
"""

from __future__ import annotations

import os
import sys
import threading
import uuid

from gatesh.vocab.programs import PTY_SHELLS

__all__ = ["main"]

USAGE = "usage: gatesh [-l|--login] [-i] [--shell bash|zsh] [--human]\n"
SHELLS = PTY_SHELLS


def main(argv: list[str]) -> int:
    """Run a gated interactive session for ``argv`` (argv[0] as invoked); its exit status."""
    from gatesh import client

    argv0 = argv[0] if argv else "gatesh"
    base = os.path.basename(argv0)
    login = base.startswith("-")
    name = base.lstrip("-")
    shell: str | None = name if name in SHELLS else None
    human = False
    interactive = False
    rest: list[str] = []
    args = argv[1:]
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--shell":
            if i + 1 >= len(args) or args[i + 1] not in SHELLS:
                sys.stderr.write("gatesh: --shell takes bash or zsh\n" + USAGE)
                return 2
            shell = args[i + 1]
            i += 2
            continue
        if a.startswith("--shell="):
            shell = a.split("=", 1)[1]
            if shell not in SHELLS:
                sys.stderr.write("gatesh: --shell takes bash or zsh\n" + USAGE)
                return 2
        elif a == "--human":
            human = True
        elif a == "--login":
            login = True
        elif a.startswith("-") and not a.startswith("--") and len(a) > 1 and set(a[1:]) <= set("li"):
            login = login or "l" in a
            interactive = interactive or "i" in a
        else:
            rest.append(a)
        i += 1
    parsed = client.ShellArgs(rest)
    if parsed.script is not None or parsed.command is not None or parsed.version_only or not (
            interactive or parsed.interactive_flag or _isatty(0)):
        # A script, a command, or commands on a pipe: not an interactive session (other shell
        # flags of an interactive one are not passed on).
        return client.shell_main(argv)
    return _session(shell, login=login, human=human)


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
        client.request("check", {"op": "register", "session": session, "pid": pid, "surface": "pty"},
                       timeout=30.0)
    except Exception:
        pass


def _end(session: str) -> None:
    from gatesh import client

    try:
        client.request("check", {"op": "end", "session": session}, start=False, timeout=5.0)
    except Exception:
        pass

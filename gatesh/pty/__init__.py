"""The interactive gated shell (S10): ``gatesh`` with no ``-c``, or a shim named after a shell.

``main`` reads the invocation as bash would (:class:`gatesh._invoke.Invocation`): with a script
operand, or a script on a standard input that is not a terminal, the shell is not interactive and
the ``-c`` client gates and runs it (:func:`gatesh.client.shell_main`); otherwise it starts bash
or zsh in a PTY with gatesh's hook (:mod:`gatesh.pty.startup`) and relays the terminal
(:mod:`gatesh.pty.session`), answering the hook's questions with a
:class:`~gatesh.pty.gatekeeper.Gatekeeper`, until the shell exits; its exit status.

Refused at start, saying why (exit 126): an interactive shell gatesh cannot gate command by
command (a shim named ``dash``, ``ksh`` …), and a person's own session (``--human``) inside a gated
session, where an agent could answer its questions.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gatesh._errors import EXIT_REFUSED
from gatesh._invoke import INTERACTIVE_SHIMS, PTY_SHELLS, Invocation

if TYPE_CHECKING:
    from gatesh.config import Config, Mark
    from gatesh.pty.confine import Confinement
    from gatesh.pty.startup import Startup

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
    if invocation.shim and invocation.name not in INTERACTIVE_SHIMS:
        sys.stderr.write(
            f"gatesh: an interactive {invocation.name} cannot be gated command by command "
            "(gatesh gates bash and zsh sessions), so it was not started. Use bash or zsh; "
            f"`{invocation.name} -c COMMAND` and `{invocation.name} SCRIPT` are gated.\n"
        )
        return EXIT_REFUSED
    return _session(invocation.pty_shell, login=invocation.login, human=invocation.parsed.human)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


@dataclass(frozen=True)
class _Settings:
    """What the configuration says about a session: its shell, who answers its questions, and
    how it is marked as gated. ``config`` is None when it could not be read."""

    shell: str | None
    operator: str
    mark: Mark
    config: Config | None


def _settings(shell: str | None, human: bool) -> _Settings:
    """The session's settings; a configuration that cannot be read is reported and the session
    starts anyway (the gate reports a broken config on every command)."""
    from gatesh.config import Mark, load_config

    operator = "person" if human else "agent"
    try:
        config = load_config(os.getcwd())
    except Exception as exc:
        sys.stderr.write(f"gatesh: could not read the configuration ({exc})\n")
        return _Settings(shell, operator, Mark.BANNER, None)
    if config.operator == "person":
        operator = "person"
    return _Settings(shell or config.shell, operator, config.session.mark, config)


def _session(shell: str | None, *, login: bool, human: bool) -> int:
    from gatesh.config import Mark
    from gatesh.pty.startup import prepare, real_shell

    settings = _settings(shell, human)
    operator = settings.operator
    if operator == "person" and os.environ.get("GATESH_GATED") == "1":
        # The person's questions would be asked at a terminal an agent is typing at (S7).
        sys.stderr.write(
            "gatesh: a person's own session (--human) was not started: this terminal is inside "
            "a gated session, where an agent could answer its questions. Start it in a terminal "
            "of your own.\n"
        )
        return EXIT_REFUSED
    shell = settings.shell or _login_shell_name()
    real = real_shell(shell)
    if real is None:
        sys.stderr.write(f"gatesh: no {shell} found on PATH\n")
        return 1
    session = os.environ.get("GATESH_SESSION") or f"pty-{uuid.uuid4().hex[:12]}"
    startup = prepare(
        shell,
        real,
        login=login,
        session=session,
        operator=operator,
        prompt_mark=settings.mark in (Mark.PROMPT, Mark.BOTH),
    )
    if settings.mark in (Mark.BANNER, Mark.BOTH):
        sys.stdout.write(_banner(shell, session, operator))
        sys.stdout.flush()
    try:
        return _relay(shell, session, operator, settings.config, startup)
    finally:
        startup.cleanup()


def _relay(shell: str, session: str, operator: str, config: Config | None, startup: Startup) -> int:
    """Confine the shell (an agent's), start it in its PTY with its gate, and relay until it
    exits; its exit status. Nothing starts when the boundary cannot be set up."""
    from gatesh.pty.gatekeeper import Gatekeeper
    from gatesh.pty.session import Relay, make_ends

    try:
        confined = _confinement(operator, config)
    except Exception as exc:  # fail closed: an agent's shell never starts unconfined here
        sys.stderr.write(
            f"gatesh: the session's boundary could not be set up ({exc}), so the shell was "
            "not started. `gatesh doctor` says which protections this machine offers.\n"
        )
        return EXIT_REFUSED
    if confined is not None:
        startup.env.update(confined.env)
        if shell == "zsh" and confined.env.get("TMPDIR"):
            startup.env["GATESH_GATE_LOCK"] = _lock_file(confined.env["TMPDIR"])
    gate = Gatekeeper(session=session, operator=operator, shell=shell)
    ends = make_ends(shell, startup.folder)
    try:
        relay = Relay(
            startup.argv,
            startup.env,
            gate=gate,
            ends=ends,
            confine=confined.apply if confined is not None else None,
        )
    except Exception as exc:
        if confined is None:
            raise
        sys.stderr.write(
            f"gatesh: the shell could not start inside the session's boundary ({exc}), so it "
            "was not started. `gatesh doctor` says which protections this machine offers.\n"
        )
        return EXIT_REFUSED
    threading.Thread(target=_preload, daemon=True).start()
    boundary = confined.boundary_id if confined is not None else ""
    threading.Thread(
        target=_register, args=(session, relay.child.pid, boundary), daemon=True
    ).start()
    status = relay.run()
    _end(session)
    return status


def _lock_file(tmpdir: str) -> str:
    """The file a confined zsh's subshells lock to take turns on their shared gate channel.

    The session's folder is gatesh's own runtime folder, which the boundary never lets the shell
    write, and zsh's lock opens its file for writing; so a confined zsh locks a file in its own
    temporary folder instead. Removing it can only make two requests wait on each other: a reply
    is taken only by the request whose number it carries, so no answer reaches another command."""
    os.makedirs(tmpdir, mode=0o700, exist_ok=True)
    fd, path = tempfile.mkstemp(prefix="gatesh-gate-", suffix=".lock", dir=tmpdir)
    os.close(fd)
    return path


def _confinement(operator: str, config: Config | None) -> Confinement | None:
    """An agent's shell is confined to the session's boundary when it starts (S10, S16:
    :mod:`gatesh.pty.confine`), after the person is told what does not hold; a person's own
    session is not. Raises when a boundary is drawn but cannot be set up (nothing starts)."""
    if operator == "person":
        return None
    from gatesh.pty.confine import prepare

    confined, notices = prepare(os.getcwd(), config.boundary if config is not None else None)
    for line in notices:
        sys.stderr.write(line + "\n")
    return confined


def _banner(shell: str, session: str, operator: str) -> str:
    """The line a gated session starts with (S10: it says it is gated; config session.mark)."""
    who = (
        "you are asked here when a person must decide"
        if operator == "person"
        else "a person decides through `gatesh watch`"
    )
    return (
        f"gatesh: this {shell} is gated: every command is decided before it runs ({who}; "
        f"session {session}; `gatesh explain CMD` shows why).\n"
    )


def _preload() -> None:
    """Load the reader while the shell starts: the gate's first answer needs it."""
    try:
        from gatesh.pty import cover

        cover.units("true")
        from gatesh.reading import read

        read("true", cwd="/")
    except Exception:
        pass


def _login_shell_name() -> str:
    name = os.path.basename(os.environ.get("SHELL", "")).lstrip("-")
    return name if name in SHELLS else "bash"


def _register(session: str, pid: int, boundary: str = "") -> None:
    """Tell the daemon the shell's pid is gated (best effort: its environment already says so),
    and the boundary it started in ("" none: its commands are judged as unconfined)."""
    from gatesh import client

    message = {"op": "register", "session": session, "pid": pid, "surface": "pty"}
    if boundary:
        message["boundary"] = boundary
    try:
        client.request("check", message, timeout=30.0)
    except Exception:
        pass


def _end(session: str) -> None:
    from gatesh import client

    try:
        client.request("check", {"op": "end", "session": session}, start=False, timeout=5.0)
    except Exception:
        pass

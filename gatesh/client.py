"""The ``-c`` client (S9.4): gate a command through the daemon, then ``exec`` the real shell.

Standard library only (of gatesh it imports :mod:`gatesh._invoke`, which imports nothing), and
only its cheapest parts (``_socket`` and ``_json`` rather than
``socket`` and ``json``, which pull in ``re`` and cost ~10 ms each; the built-in ``posix`` rather
than ``os``, which an interpreter started with ``-S`` has not loaded and which costs ~1 ms more):
``gatesh -c true`` must stay within 10 ms of ``bash -c true`` (S14). Paths that are not on the way
to running an allowed command (starting the daemon, the in-process fallback, scripts on stdin)
import ``os`` where they need it. It repeats the few protocol constants it needs from
:mod:`gatesh.daemon.protocol` and the socket path rules of :mod:`gatesh._paths`; tests pin both.

Guarantees (fail closed, S9.4, S15):

- A command runs only after the daemon (or, when no daemon can be reached or started, the
  in-process gate) allowed it. Any other outcome — a refusal, an error reply, a daemon that died
  or went silent mid-decision, a bug here — prints a message on stderr and exits 126.
- On allow the real shell is ``exec``-ed with the caller's own flags and arguments, so stdio,
  signals and the exit status are the command's own; ``GATESH_SESSION`` is set to the session the
  daemon grouped the command into, so everything the command starts is gated as the same session.
  The one exception: a command that runs because an undo snapshot holds what it loses (S17) runs
  as the client's child, so the client can end its output with the line naming that undo; the
  exit status and a fatal signal are still the command's own (:func:`_run_then_say`).
"""

import posix
import sys

from gatesh._errors import EXIT_REFUSED
from gatesh._invoke import Invocation, ShellArgs
from gatesh._wire import (
    IDLE_TIMEOUT_S,
    MAX_LINE,
    VERSION,
    CheckResult,
    DaemonLost,
    DaemonUnavailable,
    DaemonUntrusted,
    Interim,
    _Conn,
    _connect,
    _cwd,
    _decode,
    _encode,
    _in_process_on_full,
    _is_dir,
    _join,
    check,
    getenv,
    mandate,
    request,
    runtime_dir,
    socket_path,
    state_dir,
    trusted_runtime_dir,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gatesh._invoke import Full

# The transport lives in gatesh._wire (shared with the hook adapter); its names stay importable
# from here, where the -c client's callers have always found them.
__all__ = [
    "IDLE_TIMEOUT_S",
    "MAX_LINE",
    "VERSION",
    "CheckResult",
    "DaemonLost",
    "DaemonUnavailable",
    "DaemonUntrusted",
    "Interim",
    "ShellArgs",
    "_Conn",
    "_connect",
    "_decode",
    "_encode",
    "_in_process_on_full",
    "check",
    "getenv",
    "mandate",
    "request",
    "runtime_dir",
    "shell_main",
    "socket_path",
    "state_dir",
    "trusted_runtime_dir",
]

# A script read from stdin (``echo CMD | bash``) larger than this is refused, not truncated.
MAX_STDIN_SCRIPT = 1024 * 1024


# A hook's ticket is for this client alone (gatesh.boundary.tickets): never handed on.
_TICKET_ENV = "GATESH_TICKET"


def _environ_with(name: str, value: str | None) -> "dict[Any, Any]":
    """A copy of the environment for ``execve``, with ``name`` set to ``value`` (left as it is
    when ``value`` is None) and no ticket. Keys are str when ``os`` is loaded, else the raw bytes."""
    os_mod = sys.modules.get("os")
    if os_mod is not None:
        env: dict[Any, Any] = dict(os_mod.environ)
        env.pop(_TICKET_ENV, None)
        if value is not None:
            env[name] = value
        return env
    env = dict(posix.environ)
    env.pop(_TICKET_ENV.encode(), None)
    if value is not None:
        env[name.encode("utf-8", "surrogateescape")] = value.encode("utf-8", "surrogateescape")
    return env


def _dirname(path: str) -> str:
    head = path.rpartition("/")[0]
    return head.rstrip("/") or ("/" if path.startswith("/") else "")


def _basename(path: str) -> str:
    return path.rpartition("/")[2]


# --- the shell surface ------------------------------------------------------------------------


def _quote(word: str) -> str:
    safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%"
    if word and all(c in safe for c in word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def _own_path(argv0: str) -> str:
    """The file gatesh runs as (a shim link followed to the launcher), or "" when unknown."""
    path = argv0 if "/" in argv0 else (sys.argv[0] if sys.argv and "/" in sys.argv[0] else argv0)
    return _follow_links(path) if "/" in path else ""


def _follow_links(path: str) -> str:
    """``path`` made absolute, with its last component's symbolic links followed (at most 40).

    Folder links are left in place: callers compare folders and files by identity (_file_id), and
    the name of the file a chain of links ends at is the same either way.
    """
    if not path.startswith("/"):
        try:
            path = _join(posix.getcwd(), path)
        except OSError:
            return path
    for _ in range(40):
        try:
            target = posix.readlink(path)
        except (OSError, ValueError):  # not a link (EINVAL), or gone: this is the file
            return path
        path = target if target.startswith("/") else _join(_dirname(path) or "/", target)
    return path


def find_real_shell(name: str, own: str, path: str | None = None) -> str | None:
    """The real ``name`` on PATH: after gatesh's own folder, skipping anything that resolves to gatesh.

    ``own`` is the path gatesh was invoked as (a shim link or the launcher).
    """
    # Folders and files are compared by identity (device, inode; symlinks followed): one stat per
    # PATH entry instead of a realpath walk of every component of every entry (S14).
    entries = [e for e in (getenv("PATH") if path is None else path).split(":") if e]
    own_id = _file_id(own) if own else None
    own_dir = _file_id(_dirname(own) or ".") if own else None
    dirs = [_file_id(e) for e in entries]
    if own_dir is not None and own_dir in dirs:
        start = len(dirs) - dirs[::-1].index(
            own_dir
        )  # after gatesh's own folder (its last mention)
        entries, dirs = entries[start:], dirs[start:]
    for entry, dir_id in zip(entries, dirs, strict=True):
        if dir_id is None or dir_id == own_dir:
            continue
        candidate = _join(entry, name)
        if not posix.access(candidate, _X_OK) or _is_dir(candidate):
            continue
        if _file_id(candidate) == own_id or _basename(_follow_links(candidate)) == "gatesh":
            continue
        return candidate
    for fallback in (f"/bin/{name}", f"/usr/bin/{name}"):
        if posix.access(fallback, _X_OK) and (own_id is None or _file_id(fallback) != own_id):
            return fallback
    return None


_X_OK = 1


def _file_id(path: str) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of ``path`` with symlinks followed, or None when it cannot be stat-ed."""
    try:
        st = posix.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


class _WaitingNotice:
    """Shows the daemon's "a person is being asked" line on stderr, once per check (S7, S8.1), so
    the agent's terminal says why the command has not started. Heartbeats are not shown."""

    __slots__ = ("shown",)

    def __init__(self) -> None:
        self.shown = False

    def __call__(self, interim: Interim) -> None:
        if self.shown or not interim.waiting:
            return
        self.shown = True
        text = interim.message or "gatesh: a person is being asked to approve this command."
        # One line, printable characters only: it is the daemon's own text, but stay safe.
        text = "".join(c if c.isprintable() else " " for c in text)[:1000].strip()
        try:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()
        except Exception:
            pass


def _say(line: str) -> None:
    """One line of gatesh's own on stderr, printable characters only."""
    text = "".join(c if c.isprintable() else " " for c in line)[:1000].strip()
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except Exception:
        pass


def _refuse(message: str) -> int:
    try:
        sys.stderr.write(message.rstrip("\n") + "\n")
        sys.stderr.flush()
    except Exception:
        pass
    return EXIT_REFUSED


def shell_main(argv: list[str], full: "Full | None" = None) -> int:
    """Behave as bash (or the shim's shell), gated. Returns only on refusal; steps numbered.

    ``argv[0]`` is how gatesh was invoked: ``gatesh``, a shim named bash/zsh/sh, or ``-bash``.
    ``full`` is set when this runs on a launcher's fast interpreter (see :mod:`gatesh.launcher`):
    the interpreter with gatesh's dependencies and their folders, for whatever needs them (the
    daemon, the in-process gate).
    """
    try:
        return _shell_main(Invocation(argv), full)
    except SystemExit:
        raise
    except BaseException as exc:  # fail closed: nothing runs ungated
        return _refuse(f"gatesh: the client failed ({type(exc).__name__}: {exc}), so nothing ran.")


def _shell_main(inv: Invocation, full: "Full | None") -> int:
    parsed, args = inv.parsed, inv.args
    # 1. What would run: a -c string, a script file, a script on stdin. An interactive shell is
    #    the PTY session's (gatesh._entry sends it there); this client never starts one.
    if inv.wants_pty(_stdin_is_tty()):
        return _refuse(
            "gatesh: an interactive shell is the gated PTY session; start it with `gatesh` "
            "itself. Nothing ran."
        )
    cwd = _cwd()
    session = getenv("GATESH_SESSION") or None
    shell_name = inv.name if inv.shim else None
    text, stdin_script = _what_runs(inv, shell_name)
    if text is None and stdin_script is not None:
        return _refuse(
            f"gatesh: the script on standard input is larger than {MAX_STDIN_SCRIPT} "
            "bytes, so it was not gated and nothing ran."
        )
    # 2. A shim's shell must exist before its command is gated: otherwise the audit would record
    #    as allowed a command that could never run.
    missing = ""
    real = find_real_shell(shell_name, _own_path(inv.argv0)) if shell_name else None
    if shell_name and real is None:
        missing = f"no real {shell_name} is installed (none on PATH after gatesh's own folder)"
    # 3. Gate it.
    result = None
    if text is not None:
        result = check(
            text,
            cwd=cwd,
            session=session,
            surface="shim" if inv.shim else "-c",
            on_interim=_WaitingNotice(),
            full=full,
            cannot_run=missing,
            execs=True,
            ticket=getenv(_TICKET_ENV) if parsed.command is not None else "",
            while_waiting=_ready_boundary,
            ruleset=sys.platform.startswith("linux"),
            terminal=_at_terminal(),
        )
        if not result.allowed:
            return _refuse(result.message or f"gatesh: refused ({result.action}); nothing ran.")
    # 4. Find the real shell and exec it with the caller's own flags.
    shell_name = shell_name or (result.shell if result is not None else "bash")
    if real is None:
        real = find_real_shell(shell_name, _own_path(inv.argv0))
    if real is None:
        return _refuse(
            f"gatesh: no real {shell_name} found on PATH (after gatesh's own folder); nothing ran."
        )
    env = _environ_with(
        "GATESH_SESSION", result.session if result is not None and result.session else None
    )
    if stdin_script is not None:
        _feed_stdin(stdin_script)
    exec_argv = [("-" if inv.dash else "") + shell_name, *args]
    sys.stdout.flush()
    # 5. Inside its boundary (waited for, S16); else, when a snapshot holds what it loses, run and
    #    then name the undo (S17); else exec-ed as the shell itself.
    if result is not None and result.boundary is not None:
        return _run_bounded(real, exec_argv, env, result)
    if result is not None and result.undo:
        return _run_then_say(real, exec_argv, env, result.undo)
    _default_signals()
    posix.execve(real, exec_argv, env)  # does not return


def _what_runs(inv: Invocation, shell_name: str | None) -> tuple[str | None, bytes | None]:
    """The text to gate and the script read from standard input (None when it is not one).
    ``(None, None)``: nothing runs (``--version``, a bare ``-c``); ``(None, b"")``: the script on
    standard input is over MAX_STDIN_SCRIPT bytes (not gated)."""
    parsed, args = inv.parsed, inv.args
    if parsed.version_only or parsed.missing_c:
        return None, None
    if parsed.command is not None and parsed.args:
        # The -c string reads its $0 $1 … from these words (Codex's snapshot wrapper, S1): gate
        # the whole `SHELL -c STRING ARGS…`, so the reader sees what the positionals hold.
        words = [shell_name or "bash", "-c", parsed.command, *parsed.args]
        return " ".join(_quote(w) for w in words), None
    if parsed.command is not None:
        return parsed.command, None
    if parsed.script is not None:
        i = args.index(parsed.script)
        return " ".join(_quote(w) for w in [shell_name or "bash", *args[i:]]), None
    stdin_script = _read_stdin_script()
    if stdin_script is None:
        return None, b""
    return stdin_script.decode("utf-8", "surrogateescape"), stdin_script


# Signals a waiting client passes on to its shell; the terminal's own (SIGINT, SIGQUIT) reach the
# shell directly, as it is in the client's process group, so the client ignores them.
_PASSED_ON = ("SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGALRM")
_TERMINAL = ("SIGINT", "SIGQUIT")


def _run_then_say(real: str, argv: "list[str]", env: "dict[str, str]", line: str) -> int:
    """Run the shell as this process's child, then say ``line`` on stderr and end as the shell
    ended (its status, or its signal).

    S17: a command that runs because a snapshot holds what it loses ends the agent's output with
    the line naming the undo that restores it, so this is the one case the client does not exec
    the shell. The child is in the client's process group: the terminal's signals reach it
    directly (the client ignores them), the others sent to the client are passed on. Signals are
    blocked from before the fork until the handlers stand, so none is lost or kills the client
    early; the child unblocks them before its exec (a blocked mask would outlive the exec)."""
    import signal

    terminal = [getattr(signal, n) for n in _TERMINAL]
    passed = [getattr(signal, n) for n in _PASSED_ON]
    every = set(terminal + passed)
    signal.pthread_sigmask(signal.SIG_BLOCK, every)
    try:
        pid = posix.fork()
    except OSError as exc:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, every)
        return _refuse(f"gatesh: could not start {real} ({exc.strerror}); nothing ran.")
    if pid == 0:  # the child: the shell, as the exec path would have run it
        try:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, every)
            posix.execve(real, argv, env)
        finally:
            posix._exit(127)
    for sig in terminal:
        signal.signal(sig, signal.SIG_IGN)
    for sig in passed:
        signal.signal(sig, lambda s, _frame: posix.kill(pid, s))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, every)
    _, status = posix.waitpid(pid, 0)  # retried on EINTR (PEP 475)
    _say(line)
    if posix.WIFSIGNALED(status):
        sig = posix.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        posix.kill(posix.getpid(), sig)
        return 128 + sig
    return posix.WEXITSTATUS(status)


def _ready_boundary() -> None:
    """Bind the C library the boundary is applied through (``_ctypes``, ~0.5 ms) and import the
    parent that runs the command in it while the daemon decides, so an allowed command does not
    wait for either. Never raises: a failure here is met again, and reported, when the boundary
    is applied."""
    if sys.platform.startswith("linux"):
        try:
            from gatesh.boundary import _kernel, _parent  # noqa: F401  # imported for later

            _kernel.abi()
        except Exception:
            pass


def _default_signals() -> None:
    """Give back SIGPIPE and SIGXFSZ, which the interpreter ignores: a shell started with them
    ignored could never take them back (``yes | head -1`` would end in "Broken pipe")."""
    if TYPE_CHECKING:
        import signal as _signal
    else:
        import _signal  # the C module alone: ``signal`` imports ``enum`` (~10 ms, S14)

    _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)
    _signal.signal(_signal.SIGXFSZ, _signal.SIG_DFL)


def _run_bounded(real: str, argv: list[str], env: "dict[Any, Any]", result: CheckResult) -> int:
    """Run the allowed command inside its boundary (:func:`gatesh.boundary._parent.run`), report
    how it ended to the daemon, and end as it ended. Returns (126) only when the boundary could
    not be applied: then nothing ran."""
    from gatesh._wire_exit import ExitReport
    from gatesh.boundary import _kernel, _parent, _spec

    # The report of the ending, its connection opened while the command runs (S14).
    report = ExitReport(result.run)

    try:
        spec = _spec.Spec.decode(result.boundary)
    except _kernel.BoundaryError as exc:
        report(None, None)
        return _refuse(
            f"gatesh: the gate sent a boundary this client cannot read ({exc}), so nothing ran. "
            "Install gatesh again."
        )
    if spec.handed >= 0 and result.ruleset_fd < 0:
        report(None, None)
        return _refuse(
            "gatesh: the command was allowed, but the gate daemon's reply came without its "
            "boundary's rules (the ruleset it hands over), so nothing ran."
        )
    # S17: the undo that restores what it lost ends the agent's output, printable only.
    undo = "".join(c if c.isprintable() else " " for c in result.undo)[:1000].strip()
    try:
        _parent.run(
            real,
            argv,
            env,
            spec,
            report=report,
            after=undo,
            ruleset_fd=result.ruleset_fd,
            started=report.open,
        )
    except _kernel.BoundaryError as exc:
        report(None, None)
        return _refuse(
            f"gatesh: the command was allowed, but its boundary could not be set up ({exc}), "
            "so nothing ran. `gatesh doctor` says which protections this machine offers."
        )


def _at_terminal() -> bool:
    """Whether the command will run at a terminal: its input and its output are one (a full-screen
    program needs both; the gate refuses one that would wait for keys nobody types)."""
    try:
        return posix.isatty(0) and posix.isatty(1)
    except OSError:
        return False


def _stdin_is_tty() -> bool:
    try:
        return posix.isatty(0)
    except OSError:
        return False


def _read_stdin_script() -> bytes | None:
    import os

    chunks: list[bytes] = []
    total = 0
    while True:
        try:
            chunk = os.read(0, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > MAX_STDIN_SCRIPT:
            return None
    return b"".join(chunks)


def _feed_stdin(data: bytes) -> None:
    """Make ``data`` the shell's standard input again (it was read to be gated)."""
    import os

    r, w = os.pipe()
    if len(data) <= 60000:  # fits in the pipe buffer: write it all now
        os.write(w, data)
        os.close(w)
    else:
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(w, view) :]
            finally:
                os._exit(0)
        os.close(w)
    os.dup2(r, 0)
    os.close(r)

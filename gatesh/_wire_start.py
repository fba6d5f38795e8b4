"""Starting the user's daemon for a client that found none (S9.2, S9.7): in the person's
environment only, through the service manager when the person installed the service, else as a
detached ``gatesh daemon``. Off the path of a running daemon's answer: :mod:`gatesh._wire` imports
this only when no daemon answers, so it may use ``os`` and more.
"""

import posix
import sys

from gatesh._wire_base import (
    _S_IFMT,
    _S_IFSOCK,
    DaemonUnavailable,
    _dirname,
    _is_dir,
    _join,
    socket_path,
    trusted_runtime_dir,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gatesh._invoke import Full

__all__ = ["start"]


def start(path: str, full: "Full | None") -> str:
    """Start the daemon detached (on ``full``, the launcher's full interpreter, when this one is
    its fast one) and return the socket it will listen on (steps numbered). Raises
    DaemonUnavailable when none may be started from here."""
    import os

    from gatesh import _person

    # 1. Its environment: the person's settings only (S9.7). A command gatesh let run starts
    #    none; one in a gated session starts it on the person's own files, and connects where
    #    that daemon listens.
    env, why = _person.daemon_environ(_person.context(), os.environ)
    if env is None:
        raise DaemonUnavailable(f"no daemon is running, and none is started from here: {why}")
    folder = _runtime_dir_in(env)
    if folder != _dirname(path):
        trusted_runtime_dir(folder, create=True)
        path = socket_path(folder)
    # 2. Where the person had the service manager take the daemon, it opens the socket again
    #    (and starts the daemon, in its own environment, on the connection); otherwise spawn
    #    `gatesh daemon` in its own session (double fork: no zombie, no tty).
    if not _service_started(path):
        _spawn_daemon(full, env)
    return path


def _service_started(path: str) -> bool:
    """True when the units ``gatesh install service`` recorded are there and the service
    manager opened the daemon's socket at ``path`` for them."""
    try:
        from gatesh import _paths, service

        units = _paths.current().installation().service
        return bool(units) and service.start_socket(units) and _is_socket(path)
    except Exception:
        return False


def _is_socket(path: str) -> bool:
    try:
        return (posix.lstat(path).st_mode & _S_IFMT) == _S_IFSOCK
    except OSError:
        return False


def _runtime_dir_in(env: "dict[str, str]") -> str:
    """The socket folder a gatesh with environment ``env`` uses (the rules of :func:`runtime_dir`)."""
    base = env.get("XDG_RUNTIME_DIR", "")
    if base.startswith("/") and _is_dir(base):
        return _join(base, "gatesh")
    return f"/tmp/gatesh-{posix.getuid()}"


def _spawn_daemon(full: "Full | None", env: "dict[str, str]") -> None:
    """Start ``gatesh daemon`` detached with exactly ``env`` (and, on a plain interpreter, the
    import path this one has, so the daemon runs the same gatesh)."""
    import os

    env = dict(env)
    if full is not None:
        # We run on the launcher's fast interpreter, which lacks the daemon's dependencies: start
        # it on the full one, as the launcher would run `gatesh daemon`.
        from gatesh._invoke import full_command

        argv = full_command(full, ["gatesh", "daemon"])
    else:
        # Isolated (-I: no PYTHON* variable, no user site, no current folder on the path): this
        # process's import folders go first, as PYTHONPATH would put them (a launcher's -I -S
        # run has set them itself), and the interpreter's own site folders after them. The
        # command line ends in `gatesh daemon` as the full interpreter's does, so `ps` and
        # `pgrep -f` show the same daemon whichever interpreter the client started on.
        paths = [p for p in sys.path if p and os.path.isdir(p)]
        code = (
            "import sys\n"
            "del sys.argv[0]\n"  # "-c": the argv handed over follows
            f"sys.path[:0] = [p for p in {paths!r} if p not in sys.path]\n"
            "from gatesh._entry import main\n"
            "sys.exit(main())\n"
        )
        argv = [sys.executable, "-I", "-c", code, "gatesh", "daemon"]
    log_dir = _join(
        env.get("XDG_STATE_HOME") or _join(env.get("HOME", "/"), ".local/state"), "gatesh"
    )
    try:
        os.makedirs(log_dir, mode=0o700, exist_ok=True)
        log = os.open(
            os.path.join(log_dir, "daemon.log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600
        )
    except OSError:
        log = os.open(os.devnull, os.O_WRONLY)
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.setsid()
            if os.fork() != 0:
                os._exit(0)
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(null, 1)
            os.dup2(log, 2)
            os.chdir("/")
            os.execve(argv[0], argv, env)
        except BaseException:
            pass
        os._exit(127)
    os.close(log)
    os.waitpid(pid, 0)

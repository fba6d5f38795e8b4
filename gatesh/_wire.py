"""The client end of the daemon protocol (S9.2, S9.4): find the user's own daemon, ask it, read
its answer; start it, or gate in-process, when there is none. Standard library only.

Shared by the ``-c`` client (:mod:`gatesh.client`) and the hook adapter (:mod:`gatesh.hooks`),
which start a fresh interpreter for every command an agent runs, so this module is on the path
of every one of them (S14): at import it loads only ``posix``, ``sys`` and
:mod:`gatesh._errors` (which imports nothing), and on the way to an answer only the cheapest
parts of the standard library (``_socket`` and ``_json`` rather than ``socket`` and ``json``,
which pull in ``re`` and cost ~10 ms each; the built-in ``posix`` rather than ``os``, which an
interpreter started with ``-S`` has not loaded and which costs ~1 ms more). What is not on the way
to an answer from a running daemon (starting it, the in-process fallback) imports ``os`` and more
where it needs them. It repeats the few protocol constants it needs from
:mod:`gatesh.daemon.protocol` and the socket path rules of :mod:`gatesh._paths`; tests pin both.

Guarantees (fail closed, S9.4, S15): :func:`check` never raises and answers allow only when the
daemon (or, when no daemon can be reached or started, the in-process gate) allowed the command;
a refusal, an error reply, a daemon that died or went silent mid-decision, or a bug here is a
refusal with a message. Nothing it is told is read before the socket folder, the socket and the
process answering on it are known to be this user's own (S9.1).
"""

import posix
import sys

from gatesh._errors import DaemonError
from gatesh._wire_base import (
    _S_IFMT,
    CheckResult,
    DaemonUnavailable,
    DaemonUntrusted,
    Interim,
    _cwd,
    _decode,
    _dirname,
    _encode,
    _is_dir,
    _join,
    _notice,
    _owner,
    _s,
    _trusted_socket,
    getenv,
    ready_decoder,
    runtime_dir,
    socket_path,
    state_dir,
    trusted_runtime_dir,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from gatesh._invoke import Full

# The transport's face: its clients (gatesh.client, gatesh.hooks) take these from here, the
# helpers of gatesh._wire_base among them, so each imports one module of the transport.
__all__ = [
    "CheckResult",
    "DaemonLost",
    "DaemonUnavailable",
    "DaemonUntrusted",
    "Interim",
    "_cwd",
    "_decode",
    "_encode",
    "_is_dir",
    "_join",
    "_s",
    "check",
    "check_message",
    "getenv",
    "mandate",
    "request",
    "runtime_dir",
    "socket_path",
    "state_dir",
    "trusted_runtime_dir",
]

# Pinned equal to gatesh.daemon.protocol by tests/test_client.py.
VERSION = 1
MAX_LINE = 1024 * 1024

CONNECT_TIMEOUT_S = 2.0
# How long a freshly started daemon may take to accept (it imports both parsers first).
START_WAIT_S = 20.0
# The daemon sends a heartbeat every 10 s while a decision runs; silence this long is a dead daemon.
IDLE_TIMEOUT_S = 35.0


# --- the connection --------------------------------------------------------------------------


class DaemonLost(DaemonError):
    """The daemon accepted the request but did not answer it (it died or went silent)."""


class _Conn:
    """A connection to the daemon at ``path`` (a socket file, or an abstract address starting
    with NUL), whose peer runs as this uid — and is process ``expect_pid`` when given."""

    def __init__(self, path: str, timeout: float, expect_pid: int = 0) -> None:
        import _socket

        self.path = path
        self.path_file = path  # the daemon's socket file this connection was reached through
        where = "the person's channel" if path.startswith("\0") else path
        self.sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except OSError as exc:
            self.sock.close()
            if expect_pid and exc.errno == 1:  # EPERM: a Landlock scope (S16), not a namespace
                raise DaemonUnavailable(
                    "the person's channel is refused to this process: it runs inside a gated "
                    "command's boundary, which keeps it from the person's verbs"
                ) from None
            if expect_pid:
                raise DaemonUnavailable(
                    f"the gate daemon (pid {expect_pid}) does not answer on the person's channel "
                    f"here ({exc}); is this terminal in another network namespace than the "
                    "daemon?"
                ) from None
            raise DaemonUnavailable(str(exc)) from None
        # The process that accepted must run as this uid (SO_PEERCRED: pid, uid, gid as three
        # native ints), checked before anything it says is read.
        try:
            cred = self.sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
            self.peer_pid = int.from_bytes(cred[0:4], sys.byteorder)
            peer_uid = int.from_bytes(cred[4:8], sys.byteorder)
        except (OSError, AttributeError) as exc:
            self.sock.close()
            raise DaemonUntrusted(
                f"the daemon's credentials on {where} cannot be read ({exc})"
            ) from None
        if peer_uid != posix.getuid():
            self.sock.close()
            raise DaemonUntrusted(
                f"the process answering on {where} runs as {_owner(peer_uid)}, "
                "not as you: it is not your gate"
            )
        if expect_pid and self.peer_pid != expect_pid:
            self.sock.close()
            raise DaemonUntrusted(
                f"the process answering on the person's channel (pid {self.peer_pid}) is not "
                f"the gate daemon (pid {expect_pid}): something else holds it"
            )
        self.buf = b""
        # File descriptors the daemon hands over (SCM_RIGHTS) are collected here when it is a
        # list (gatesh.boundary.handoff); None: none is expected, and plain reads are used.
        self.fds: list[int] | None = None

    def send(self, *messages: "dict[str, Any]") -> None:
        data = "".join(_encode(m) + "\n" for m in messages).encode("ascii")
        try:
            self.sock.sendall(data)
        except OSError as exc:
            raise DaemonLost(f"could not send to the daemon: {exc}") from None

    def lines(self, timeout: float) -> "Iterator[dict[str, Any]]":
        self.sock.settimeout(timeout)
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line, self.buf = self.buf[:nl], self.buf[nl + 1 :]
                if line.strip():
                    yield _decode(line)
                continue
            if len(self.buf) > MAX_LINE:
                raise DaemonLost("the daemon sent a line that is too long")
            try:
                chunk = self.sock.recv(65536) if self.fds is None else self._recv_fds()
            except OSError as exc:  # includes the timeout
                raise DaemonLost(f"no answer from the daemon ({exc or 'timed out'})") from None
            if not chunk:
                raise DaemonLost("the daemon closed the connection before answering")
            self.buf += chunk

    def _recv_fds(self) -> bytes:
        """One read, keeping the file descriptors that came with it (close-on-exec)."""
        import _socket

        chunk, ancillary, _flags, _ = self.sock.recvmsg(
            65536, _socket.CMSG_SPACE(4 * _MAX_FDS), _socket.MSG_CMSG_CLOEXEC
        )
        assert self.fds is not None
        for level, kind, data in ancillary:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                n = len(data) - len(data) % 4
                self.fds += [
                    int.from_bytes(data[i : i + 4], sys.byteorder, signed=True)
                    for i in range(0, n, 4)
                ]
        return bytes(chunk)

    def close(self) -> None:
        self.sock.close()


# The file descriptors one read takes (the daemon hands one: a command's ruleset; more are
# closed by the kernel when they do not fit, or here when unused).
_MAX_FDS = 4


def _connect(
    role: str, *, start: bool, first: "dict[str, Any] | None" = None, full: "Full | None" = None
) -> "tuple[_Conn, dict[str, Any] | None]":
    """A connection with the hello sent; starts the daemon when absent and ``start`` is set
    (on ``full``, the launcher's full interpreter, when this one is its fast one).

    ``first``, a request, goes in the same write as the hello (the protocol allows it): one
    system call and one wake-up of the daemon fewer per check (S14).
    """
    folder = runtime_dir()
    path = socket_path(folder)
    trusted_runtime_dir(folder, create=start)
    try:
        _trusted_socket(path)
        conn = _Conn(path, CONNECT_TIMEOUT_S)
    except DaemonUntrusted:
        raise
    except DaemonUnavailable:
        if not start:
            raise
        conn = _start_and_connect(path, full)
    hello: dict[str, Any] = {"v": VERSION, "hello": role, "pid": posix.getpid()}
    if role in PERSON_ROLES:
        # The human-only verbs and the watcher speak on the person's channel (S9.5), from a
        # process the user's other processes cannot trace or take the connection from.
        from gatesh import _person

        _person.untraceable()  # (where it cannot be, doctor says so)
        conn.close()
        conn = _person_channel(conn.path)
        hello["token"] = _read_token(_dirname(conn.path_file))
    if first is None:
        conn.send(hello)
    else:
        # The welcome then comes with the reply: one wake-up of this process less (S14).
        hello["request_follows"] = True
        conn.send(hello, first)
    return conn, None


# Pinned equal to gatesh.daemon.protocol by tests/test_client.py.
PERSON_ROLES = ("human", "watch")
# How long a person's verb waits for the person's channel of a daemon that is starting (the
# service manager starts it on the first connection; it opens the channel within ~0.1 s).
PERSON_WAIT_S = 5.0
TOKEN_FILE = "person.token"


def person_address(socket_path: str) -> str:
    """The person's channel of the daemon on ``socket_path`` (see
    :func:`gatesh.daemon.protocol.person_address`, which tests pin this copy to)."""
    import hashlib

    return "\0gatesh-person-" + hashlib.sha256(socket_path.encode()).hexdigest()[:32]


def _person_channel(path: str) -> "_Conn":
    """A connection to the person's channel of the daemon on the socket ``path`` (just reached):
    the process answering there must be the one holding the daemon's lock. Waits up to
    PERSON_WAIT_S for a daemon that is still starting (one the service manager is starting)."""
    import time

    folder = _dirname(path)
    deadline = time.monotonic() + PERSON_WAIT_S
    delay = 0.005
    while True:
        pid = _lock_pid(folder)
        try:
            if pid:
                conn = _Conn(person_address(path), CONNECT_TIMEOUT_S, expect_pid=pid)
                conn.path_file = path
                return conn
            last = DaemonUnavailable(f"the gate daemon's lock in {folder} names no process")
        except DaemonUntrusted:
            raise
        except DaemonUnavailable as exc:
            last = exc
        if time.monotonic() >= deadline:
            raise last
        time.sleep(delay)
        delay = min(delay * 1.5, 0.1)


def _lock_pid(folder: str) -> int:
    """The pid the daemon wrote into its lock file (0 when there is none to read)."""
    try:
        fd = posix.open(_join(folder, "daemon.lock"), posix.O_RDONLY)
        try:
            text = posix.read(fd, 32).decode("ascii", "replace").strip()
        finally:
            posix.close(fd)
    except OSError:
        return 0
    return int(text) if text.isdigit() else 0


def _read_token(folder: str) -> str:
    """The person's channel credential the daemon left in its socket folder (which
    :func:`trusted_runtime_dir` checked is ours). Raises DaemonUntrusted when it is not a
    file of ours that only we can read, DaemonUnavailable when it is missing or unreadable."""
    path = _join(folder, TOKEN_FILE)
    try:
        st = posix.lstat(path)
    except OSError as exc:
        raise DaemonUnavailable(
            f"the person's channel credential {path} cannot be read ({exc.strerror or exc})"
        ) from None
    if st.st_mode & _S_IFMT != 0o100000 or st.st_uid != posix.getuid() or st.st_mode & 0o077:
        raise DaemonUntrusted(f"{path} is not a file only you can read: it is not your gate's")
    try:
        fd = posix.open(path, posix.O_RDONLY)
        try:
            return posix.read(fd, 256).decode("ascii", "replace").strip()
        finally:
            posix.close(fd)
    except OSError as exc:
        raise DaemonUnavailable(
            f"the person's channel credential {path} cannot be read ({exc.strerror or exc})"
        ) from None


def _start_and_connect(path: str, full: "Full | None") -> "_Conn":
    """Start the daemon (:func:`gatesh._wire_start.start`), then retry connecting with a bounded
    backoff: it binds its socket before loading the parsers, so this is quick. Raises
    DaemonUnavailable when none may be started from here, or it did not come up within
    START_WAIT_S."""
    import time

    from gatesh import _wire_start

    path = _wire_start.start(path, full)
    deadline = time.monotonic() + START_WAIT_S
    delay = 0.005
    last = ""
    while time.monotonic() < deadline:
        try:
            _trusted_socket(path)
            return _Conn(path, CONNECT_TIMEOUT_S)
        except DaemonUntrusted:
            raise
        except DaemonUnavailable as exc:
            last = str(exc)
        time.sleep(delay)
        delay = min(delay * 1.5, 0.1)
    raise DaemonUnavailable(f"the daemon did not start within {START_WAIT_S:.0f} s ({last})")


def request(
    role: str,
    message: "dict[str, Any]",
    *,
    start: bool = True,
    timeout: float = IDLE_TIMEOUT_S,
    on_interim: "Any" = None,
    full: "Full | None" = None,
    while_waiting: "Any" = None,
    fds: "list[int] | None" = None,
) -> "dict[str, Any]":
    """Send one request and return its final reply. Raises DaemonUnavailable or DaemonLost.

    Human-only ops get ``pid`` filled in (the daemon checks it against SO_PEERCRED).
    ``while_waiting()`` runs once the request is sent, before the reply is read: work that
    overlaps the daemon's (it must not raise). ``fds``: file descriptors the daemon hands over
    on this connection are appended to it (the caller owns them, whatever the outcome).
    """
    message = dict(message)
    message.setdefault("pid", posix.getpid())
    conn, _ = _connect(role, start=start, first=message, full=full)
    conn.fds = fds
    try:
        ready_decoder()  # while the daemon decides (the request went out without it)
        if while_waiting is not None:
            while_waiting()
        for reply in conn.lines(timeout):
            if "welcome" in reply:
                continue
            if reply.get("interim"):
                if on_interim is not None:
                    on_interim(Interim.from_line(reply))
                continue
            if "re" in reply or "ok" in reply:
                return reply
        raise DaemonLost("the daemon closed the connection before answering")
    finally:
        conn.close()


def check(
    command: str,
    *,
    cwd: str,
    session: str | None = None,
    surface: str = "-c",
    can_ask: bool | None = None,
    on_interim: "Any" = None,
    full: "Full | None" = None,
    cannot_run: str = "",
    operator: str = "",
    execs: bool = False,
    ticket: str = "",
    while_waiting: "Any" = None,
    wraps: bool = False,
    ruleset: bool = False,
    terminal: bool = False,
) -> "CheckResult":
    """Ask the gate about ``command``. Never raises; anything but a clear allow is a refusal.

    ``execs``: this process becomes the command (the ``-c`` client): the daemon marks it first,
    so all it starts is known for a command the gate let run (:mod:`gatesh._person`).

    ``cannot_run`` (what stops the command running here, e.g. its shell is missing) makes the gate
    refuse it without deciding, with an audit line that says why. ``operator`` "person": the
    session is a person's own (``gatesh --human``): what needs a decision asks them, unargued.
    ``ticket``: a hook's one-time ticket (:mod:`gatesh.boundary.tickets`); ``wraps``: a hook
    whose harness runs an allowed command rewritten to run inside its boundary (S16);
    ``while_waiting``: see :func:`request`. ``ruleset``: this process runs the command inside
    its boundary: the daemon hands it the boundary's ruleset (:mod:`gatesh.boundary.handoff`,
    kept in :attr:`CheckResult.ruleset_fd`). ``terminal``: the command runs at a terminal.

    1. The daemon (started when absent). 2. If it cannot be reached or started, the in-process
    gate (same pipeline, no person reachable). 3. A daemon lost mid-decision refuses: it may
    have recorded a decision we never heard, so asking again elsewhere could count twice.
    """
    msg = check_message(
        command,
        cwd,
        session,
        surface,
        can_ask,
        cannot_run,
        operator,
        execs,
        ticket,
        wraps,
        terminal,
    )
    fds: list[int] | None = None
    if ruleset:
        msg["ruleset_fd"] = True  # the daemon builds the boundary's ruleset (S14)
        fds = []
    try:
        reply = _asked(msg, fds, on_interim, full, while_waiting)
    except DaemonUnavailable as exc:
        if isinstance(exc, DaemonUntrusted):
            # Said once, on stderr: the person must learn that someone else's socket is in the way.
            _notice(f"gatesh: not using the gate daemon: {exc}. Deciding in this process instead.")
        result = _in_process(
            command, cwd, session, surface, str(exc), full, cannot_run, operator, terminal
        )
        if execs and result.allowed:
            from gatesh._person import mark

            mark()  # what the daemon does for its clients: this process becomes the command
        return result
    except DaemonLost as exc:
        return CheckResult.refused(
            f"gatesh: the gate daemon stopped answering while deciding ({exc}), so the command was "
            "refused and nothing ran. Run it again: the daemon restarts on the next command."
        )
    except Exception as exc:  # a bug here must refuse, never allow
        return CheckResult.refused(
            f"gatesh: the client failed ({type(exc).__name__}: {exc}), so nothing ran."
        )
    return _result(reply, fds or [])


def _asked(
    msg: "dict[str, Any]",
    fds: "list[int] | None",
    on_interim: "Any",
    full: "Full | None",
    while_waiting: "Any",
) -> "dict[str, Any]":
    """The daemon's reply to the check ``msg`` (see :func:`request`); the descriptors handed
    over are closed when there is none."""
    try:
        return request(
            "check", msg, on_interim=on_interim, full=full, while_waiting=while_waiting, fds=fds
        )
    except BaseException:
        _close_fds(fds or ())
        raise


def check_message(
    command: str,
    cwd: str,
    session: str | None,
    surface: str,
    can_ask: bool | None,
    cannot_run: str = "",
    operator: str = "",
    execs: bool = False,
    ticket: str = "",
    wraps: bool = False,
    terminal: bool = False,
) -> "dict[str, Any]":
    """The ``check`` request (see :func:`check`; a PTY's relay sends it on its own connections):
    what is not said is left out."""
    msg: dict[str, Any] = {
        "op": "check",
        "command": command,
        "cwd": cwd,
        "surface": surface,
        "pid": posix.getpid(),
    }
    if session:
        msg["session"] = session
    if can_ask is not None:
        msg["can_ask"] = can_ask
    if cannot_run:
        msg["cannot_run"] = cannot_run
    if operator:
        msg["operator"] = operator
    if execs:
        msg["exec"] = True
    if ticket:
        msg["ticket"] = ticket  # a hook's ticket (gatesh.boundary.tickets): its decision, once
    if terminal:
        msg["terminal"] = True  # the -c client's input and output are a terminal
    if wraps:
        msg["wraps"] = True  # a hook that can have its harness run the command wrapped (S16)
    return msg


def _result(reply: "dict[str, Any]", fds: "list[int]") -> "CheckResult":
    """The check reply decoded once, keeping the boundary's ruleset the daemon handed over with
    an allowed command that runs inside it (and closing any other descriptor)."""
    result = CheckResult.from_reply(reply)
    spec = result.boundary
    if fds and result.allowed and spec is not None and spec.get("ruleset") == "fd":
        result.ruleset_fd = fds.pop(0)
    _close_fds(fds)  # handed but not needed (a refusal, or more than one)
    return result


def _close_fds(fds: "list[int] | tuple[int, ...]") -> None:
    for fd in fds:
        try:
            posix.close(fd)
        except OSError:
            pass


def _in_process(
    command: str,
    cwd: str,
    session: str | None,
    surface: str,
    why: str,
    full: "Full | None",
    cannot_run: str = "",
    operator: str = "",
    terminal: bool = False,
) -> "CheckResult":
    if full is not None:
        return _in_process_on_full(
            full, command, cwd, session, surface, why, cannot_run, operator, terminal
        )
    try:
        from gatesh.inprocess import check_result

        return check_result(
            command,
            cwd=cwd,
            session=session,
            surface=surface,
            why=why,
            cannot_run=cannot_run,
            operator=operator,
            terminal=terminal,
        )
    except Exception as exc:
        return CheckResult.refused(
            f"gatesh: no daemon could be reached ({why}) and the in-process gate failed "
            f"({type(exc).__name__}: {exc}), so nothing ran."
        )


def _in_process_on_full(
    full: "Full",
    command: str,
    cwd: str,
    session: str | None,
    surface: str,
    why: str,
    cannot_run: str = "",
    operator: str = "",
    terminal: bool = False,
) -> "CheckResult":
    """The in-process gate run by the full interpreter in a child process (this one, the launcher's
    fast interpreter, lacks the pipeline's dependencies): the request as JSON on its standard
    input, the check reply as JSON on its standard output. Anything else refuses."""
    import subprocess

    # The session gatesh.inprocess would name after our parent (the harness), not after us.
    session = session or f"inprocess:{posix.getppid()}"
    request = _encode(
        {
            "command": command,
            "cwd": cwd,
            "session": session,
            "surface": surface,
            "why": why,
            "cannot_run": cannot_run,
            "operator": operator,
            "terminal": terminal,
        }
    )
    try:
        from gatesh._invoke import full_command

        argv = full_command(full, ["gatesh"], run="gatesh.inprocess:serve_one")
        out = subprocess.run(
            argv, input=request.encode("ascii"), stdout=subprocess.PIPE, check=False
        )
        if out.returncode != 0:
            raise RuntimeError(f"{argv[0]} exited with status {out.returncode}")
        # The reply is the last line (anything printed before it is not ours to read).
        return CheckResult.from_reply(_decode(out.stdout.strip().rpartition(b"\n")[2]))
    except Exception as exc:
        return CheckResult.refused(
            f"gatesh: no daemon could be reached ({why}) and the in-process gate failed "
            f"({type(exc).__name__}: {exc}), so nothing ran."
        )


def mandate(
    text: str, *, session: str | None = None, channel: str = "mandate", full: "Full | None" = None
) -> "dict[str, Any]":
    """Hand the user's own words to the daemon (S5.3). Raises on an unreachable daemon or a refusal.
    ``full``: start the daemon on that interpreter (this one is a launcher's fast one)."""
    msg: dict[str, Any] = {"op": "mandate", "text": text, "channel": channel}
    if session:
        msg["session"] = session
    reply = request("human", msg, full=full)
    if not reply.get("ok"):
        raise RuntimeError(str(reply.get("error") or "the daemon refused the mandate"))
    return reply

"""The client's ground (S9.1, S14): this process's environment and folders read on ``posix``, the
rules of :mod:`gatesh._paths` without its imports, the trust of the daemon's socket folder and
socket, JSON without the ``json`` package, and the check reply decoded once (:class:`CheckResult`).

On the path of every gated command with :mod:`gatesh._wire` (see its docstring): at import it
loads only ``posix``, ``sys`` and :mod:`gatesh._errors`.
"""

import posix
import sys

from gatesh._errors import EXIT_REFUSED, DaemonError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CheckResult",
    "DaemonUnavailable",
    "DaemonUntrusted",
    "Interim",
    "getenv",
    "runtime_dir",
    "socket_path",
    "state_dir",
    "trusted_runtime_dir",
]


class DaemonUnavailable(DaemonError):
    """No daemon accepted a connection (and none could be started)."""


class DaemonUntrusted(DaemonUnavailable):
    """The socket folder, the socket or the process answering on it is not this user's own
    (S9.1): nothing it says is read, and no daemon is started there."""


# --- the few os-level helpers the hot path needs, on ``posix`` -------------------------------


def getenv(name: str, default: str = "") -> str:
    """``$name``. ``os.environ`` when ``os`` is loaded (it is authoritative: code that changed the
    environment did it there), else the process's own environment, which nothing has changed."""
    os_mod = sys.modules.get("os")
    if os_mod is not None:
        return str(os_mod.environ.get(name, default))
    value = posix.environ.get(name.encode("utf-8", "surrogateescape"))
    return default if value is None else value.decode("utf-8", "surrogateescape")


def _join(folder: str, name: str) -> str:
    return folder + name if folder.endswith("/") else f"{folder}/{name}"


def _dirname(path: str) -> str:
    return path.rpartition("/")[0] or "/"


def _is_dir(path: str) -> bool:
    try:
        return (posix.stat(path).st_mode & 0o170000) == 0o040000
    except (OSError, ValueError):
        return False


def _cwd() -> str:
    """The working folder (``$PWD`` when it cannot be read, else ``/``)."""
    try:
        return posix.getcwd()
    except OSError:
        pwd = getenv("PWD")
        return pwd if pwd.startswith("/") else "/"


def _notice(text: str) -> None:
    """One line on stderr for the person, printable characters only; never raises."""
    try:
        sys.stderr.write("".join(c if c.isprintable() else " " for c in text)[:2000] + "\n")
        sys.stderr.flush()
    except Exception:
        pass


# --- paths (the rules of gatesh._paths, without its imports) --------------------------------


def _xdg(var: str, fallback: str) -> str:
    import os

    value = os.environ.get(var, "")
    return value if os.path.isabs(value) else os.path.expanduser(fallback)


def runtime_dir() -> str:
    base = getenv("XDG_RUNTIME_DIR")
    if base.startswith("/") and _is_dir(base):
        return _join(base, "gatesh")
    return f"/tmp/gatesh-{posix.getuid()}"


def socket_path(folder: str = "") -> str:
    """The daemon's socket in ``folder`` (the runtime folder when empty): the one spelling the
    client connects to; a test pins it to :attr:`gatesh._paths.GatePaths.socket`."""
    return _join(folder or runtime_dir(), "daemon.sock")


# File types and permission bits, as ``stat`` has them (``stat`` itself is not imported: S14).
_S_IFMT = 0o170000
_S_IFDIR = 0o040000
_S_IFSOCK = 0o140000
# Modes the daemon gives its folder: 0700, or 0711 when watchers of another uid may connect (S9.6).
_FOLDER_MODES = (0o700, 0o711)


def _owner(uid: int) -> str:
    """``uid NAME`` for a message (the number alone when the name cannot be looked up)."""
    try:
        import pwd

        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def trusted_runtime_dir(folder: str, *, create: bool) -> None:
    """Raise DaemonUntrusted unless ``folder`` is this user's own socket folder (S9.1).

    ``create``: make it first when it is missing (``mkdir`` 0700, never following a link). Then
    ``lstat``: it must be a real folder (not a symbolic link), owned by this uid, mode 0700 (or
    0711, the daemon's mode for configured watchers). A folder another user made first — in a
    shared ``/tmp`` when ``XDG_RUNTIME_DIR`` is unset — could hold a socket that answers every
    check with "allow", so nothing in it is used.
    """
    uid = posix.getuid()
    try:
        st = posix.lstat(folder)
    except FileNotFoundError:
        if not create:
            raise DaemonUnavailable(f"no daemon: {folder} does not exist") from None
        try:
            posix.mkdir(folder, 0o700)
        except FileExistsError:
            pass  # made meanwhile (by our own daemon, or by someone else): checked below
        except OSError as exc:
            raise DaemonUntrusted(
                f"the socket folder {folder} could not be created ({exc})"
            ) from None
        st = posix.lstat(folder)
    except OSError as exc:
        raise DaemonUntrusted(f"the socket folder {folder} cannot be checked ({exc})") from None
    if st.st_mode & _S_IFMT != _S_IFDIR:
        raise DaemonUntrusted(
            f"{folder} is not a folder (a symbolic link or a file owned by "
            f"{_owner(st.st_uid)}), so it is not gatesh's socket folder"
        )
    if st.st_uid != uid:
        raise DaemonUntrusted(
            f"the socket folder {folder} belongs to {_owner(st.st_uid)}, not to "
            f"you ({_owner(uid)}): whatever listens there is not your gate"
        )
    mode = st.st_mode & 0o777
    if mode & 0o022:
        raise DaemonUntrusted(
            f"the socket folder {folder} has mode {mode:04o} (others may "
            "write in it): whatever listens there may not be your gate"
        )
    if mode not in _FOLDER_MODES and create:
        posix.chmod(folder, 0o700)  # ours and not writable by others: only tightened


def _trusted_socket(path: str) -> None:
    """Raise DaemonUntrusted unless ``path`` is a socket file owned by this uid (never a link)."""
    try:
        st = posix.lstat(path)
    except FileNotFoundError:
        raise DaemonUnavailable(f"no daemon: {path} does not exist") from None
    except OSError as exc:
        raise DaemonUntrusted(f"the daemon socket {path} cannot be checked ({exc})") from None
    if st.st_mode & _S_IFMT != _S_IFSOCK:
        raise DaemonUntrusted(f"{path} is not a socket (owned by {_owner(st.st_uid)})")
    if st.st_uid != posix.getuid():
        raise DaemonUntrusted(
            f"the daemon socket {path} belongs to {_owner(st.st_uid)}, not to "
            f"you: whatever listens there is not your gate"
        )


def state_dir() -> str:
    import os

    return os.path.join(_xdg("XDG_STATE_HOME", "~/.local/state"), "gatesh")


# --- JSON without the json package -----------------------------------------------------------

_scanner: "Any" = None

# How a JSON string spells each ASCII character it escapes (``_json.encode_basestring_ascii``'s
# choices): by name where JSON has one, else ``\\u00XX``. A literal: built from constants at import.
_ASCII_ESCAPES = {
    0: "\\u0000",
    1: "\\u0001",
    2: "\\u0002",
    3: "\\u0003",
    4: "\\u0004",
    5: "\\u0005",
    6: "\\u0006",
    7: "\\u0007",
    8: "\\b",
    9: "\\t",
    10: "\\n",
    11: "\\u000b",
    12: "\\f",
    13: "\\r",
    14: "\\u000e",
    15: "\\u000f",
    16: "\\u0010",
    17: "\\u0011",
    18: "\\u0012",
    19: "\\u0013",
    20: "\\u0014",
    21: "\\u0015",
    22: "\\u0016",
    23: "\\u0017",
    24: "\\u0018",
    25: "\\u0019",
    26: "\\u001a",
    27: "\\u001b",
    28: "\\u001c",
    29: "\\u001d",
    30: "\\u001e",
    31: "\\u001f",
    34: '\\"',
    92: "\\\\",
    127: "\\u007f",
}
# Past this many characters, a string with non-ASCII characters is escaped by ``_json`` (C) rather
# than character by character here (~0.1 us each): a long line must not take long to send.
_PY_ESCAPE_MAX = 2048


def _string(text: str) -> str:
    """``text`` as an ASCII JSON string, exactly as ``_json.encode_basestring_ascii`` writes it
    (tests pin the two equal). In Python for what a command usually is, so that a request goes
    out before ``_json`` (a shared library to load, ~0.2 ms) is imported: the reply's decoder is
    made while the daemon decides (:func:`ready_decoder`)."""
    if text.isascii():
        return '"' + text.translate(_ASCII_ESCAPES) + '"'
    if len(text) > _PY_ESCAPE_MAX:
        import _json

        return str(_json.encode_basestring_ascii(text))
    out = ['"']
    for c in text:
        if c < "\x80":
            out.append(_ASCII_ESCAPES.get(ord(c), c))
            continue
        n = ord(c)
        if n > 0xFFFF:  # a surrogate pair, as JSON spells a character past the BMP
            n -= 0x10000
            out.append(f"\\u{0xD800 | (n >> 10):04x}\\u{0xDC00 | (n & 0x3FF):04x}")
        else:
            out.append(f"\\u{n:04x}")
    out.append('"')
    return "".join(out)


def _encode(value: object) -> str:
    if isinstance(value, str):
        return _string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return "{" + ",".join(_encode(str(k)) + ":" + _encode(v) for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_encode(v) for v in value) + "]"
    raise TypeError(f"cannot encode {type(value).__name__}")


class _Ctx:
    """The attributes ``_json.make_scanner`` reads (what ``json.JSONDecoder`` would supply)."""

    def __init__(self) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = None
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = float
        self.memo: dict[str, str] = {}


def ready_decoder() -> None:
    """Make the decoder :func:`_decode` uses (importing ``_json``), once: a client calls it
    while the daemon decides, so the reply is read without waiting for the import."""
    global _scanner
    if _scanner is None:
        import _json

        _scanner = _json.make_scanner(_Ctx())  # type: ignore[arg-type]  # duck-typed: what JSONDecoder supplies


def _decode(line: bytes) -> "dict[str, Any]":
    ready_decoder()
    text = line.decode("utf-8").strip()
    try:
        value, end = _scanner(text, 0)
    except StopIteration:
        raise ValueError("invalid JSON from the daemon") from None
    if end != len(text) or not isinstance(value, dict):
        raise ValueError("invalid JSON from the daemon")
    return value


# --- the check reply, decoded once ---------------------------------------------------------------


class CheckResult:
    """The gate's answer to one command.

    ``action`` is the pipeline's word (allow, reject, escalate, halt, deny, refuse); ``exit_code``
    is 0 only for allow (126 otherwise); ``message`` is the S8.1 text for the agent (empty on
    allow); ``notice`` one line for the person; ``session`` the session the daemon used;
    ``undo`` the line that ends the agent's output when the command runs because a snapshot holds
    what it loses (S17), else "".
    """

    __slots__ = (
        "action",
        "boundary",
        "decision",
        "exit_code",
        "message",
        "notice",
        "pending_id",
        "ruleset_fd",
        "run",
        "session",
        "shell",
        "undo",
        "wrapped",
    )

    def __init__(
        self,
        action: str,
        message: str = "",
        exit_code: int = EXIT_REFUSED,
        pending_id: str = "",
        notice: str = "",
        session: str = "",
        shell: str = "bash",
        decision: "dict[str, Any] | None" = None,
        undo: str = "",
        boundary: "dict[str, Any] | None" = None,
        run: str = "",
        wrapped: str = "",
    ) -> None:
        self.action = action
        self.undo = undo if action == "allow" else ""
        self.message = message
        self.exit_code = 0 if action == "allow" else (exit_code or EXIT_REFUSED)
        self.pending_id = pending_id
        self.notice = notice
        self.session = session
        self.shell = shell
        self.decision = decision or {}
        # The boundary the command runs in (JSON, which gatesh.boundary._spec.Spec decodes), None
        # when it runs in none (no Landlock, or the person switched it off); ``run`` names this run
        # in the daemon's book, for the report of how it ended.
        self.boundary = boundary
        self.run = run
        # For a hook: the command wrapped to run confined under this decision (its ticket).
        self.wrapped = wrapped
        # The boundary's Landlock ruleset the daemon built and handed over (a file descriptor
        # this process owns; -1: none), when the boundary says ``"ruleset": "fd"`` (S14, S16).
        self.ruleset_fd = -1

    @property
    def allowed(self) -> bool:
        return self.action == "allow"

    def __repr__(self) -> str:
        return (
            f"CheckResult(action={self.action!r}, exit_code={self.exit_code}, "
            f"pending_id={self.pending_id!r}, session={self.session!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CheckResult):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    @classmethod
    def refused(cls, message: str) -> "CheckResult":
        return cls("refuse", message)

    @classmethod
    def from_reply(cls, reply: "dict[str, Any]") -> "CheckResult":
        action = reply.get("action")
        if not isinstance(action, str) or not action:
            err = reply.get("error") or "the daemon's reply had no action"
            return cls.refused(f"gatesh: the gate answered with an error ({err}), so nothing ran.")
        if action == "allow" and reply.get("ok") is False:
            action = "refuse"  # an error reply can never allow
        return cls(
            action,
            _s(reply.get("message")),
            _i(reply.get("exit")),
            _s(reply.get("pending_id")),
            _s(reply.get("notice")),
            _s(reply.get("session")),
            _s(reply.get("shell")) or "bash",
            reply.get("decision") if isinstance(reply.get("decision"), dict) else None,
            _s(reply.get("undo")),
            reply.get("boundary") if isinstance(reply.get("boundary"), dict) else None,
            _s(reply.get("run")),
            _s(reply.get("wrapped")),
        )


class Interim:
    """An interim line before a check's reply (see :mod:`gatesh.daemon.protocol`): a person is
    being asked (``waiting``, with the daemon's ``message`` for the terminal and the
    ``pending_id``), or the heartbeat while a decision is in progress (``working``)."""

    __slots__ = ("kind", "message", "pending_id")

    def __init__(self, kind: str, message: str = "", pending_id: str = "") -> None:
        self.kind = kind
        self.message = message
        self.pending_id = pending_id

    @property
    def waiting(self) -> bool:
        return self.kind == "waiting"

    @classmethod
    def from_line(cls, line: "dict[str, Any]") -> "Interim":
        """The interim line in one decoded JSON object (odd fields are "")."""
        return cls(_s(line.get("interim")), _s(line.get("message")), _s(line.get("pending_id")))


def _s(v: object) -> str:
    return v if isinstance(v, str) else ""


def _i(v: object) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else EXIT_REFUSED

"""gatesh's exceptions and exit statuses.

    GateshError                 anything gatesh raises on purpose; ``exit_status`` is what the CLI exits with
    ├── ConfigError             a config file is invalid (names file, line and key)
    ├── ReadError               the reader reached a limit or could not read a command (never
    │                           escapes the pipeline: the command is rated unreadable)
    ├── ProtocolError           a malformed message on the daemon socket or a hook's stdin
    ├── BackendError            a model backend failed (mapped to a fail-closed cause)
    ├── DaemonError             the -c client could not use the daemon (unavailable, untrusted, lost)
    ├── StateError              a pending escalation asked to do what its lifecycle forbids
    ├── AuditError              the audit log could not be written (gatesh.audit): the command is refused
    ├── SetupError              installing, trusting hooks, writing the launcher, linking watchers
    ├── BoundaryError           the kernel boundary of an allowed command could not be set up
    │                           (gatesh.boundary._kernel): the command does not run
    └── Refused                 the command was refused and nothing ran (exit 126)

    Abandoned (a BaseException) one signal outside the tree: raised inside a decision worker that
                                passed its deadline, so no ``except Exception`` on the way can
                                swallow it; only ``gatesh.daemon.deadline`` raises and catches it

Foreign errors are translated where they enter, each at one boundary: the model SDK's in
``gatesh.rater._call`` (one table of causes), the socket's in ``gatesh.client._Conn``, TOML's in
``gatesh.config``, the parsers' in ``gatesh.reading`` (an unreadable command, never an exception).

This module imports nothing: the ``-c`` client imports it (S14).
"""

# Exit statuses, shared by the code and the man page.
EXIT_OK = 0
EXIT_ERROR = 1  # gatesh itself failed (bad usage is 2)
EXIT_USAGE = 2
# `gatesh explain`: the command would be asked of a person (it runs only if they allow it).
EXIT_ASKED = 3
EXIT_REFUSED = 126  # the command was refused and did not run (bash's "cannot execute")
# The reader of gatesh's output went away (`gatesh status | head -1`): what a program killed by
# SIGPIPE reports to its shell (128 + 13), so pipelines with `pipefail` see the usual status.
EXIT_BROKEN_PIPE = 141

EXIT_STATUSES = {
    EXIT_OK: "success (with -c: the command's own status)",
    EXIT_ERROR: "gatesh failed: a config error, an unreachable daemon for a human verb, …",
    EXIT_USAGE: "bad usage",
    EXIT_ASKED: "from explain: a person would decide the command",
    EXIT_REFUSED: "the command was refused and nothing ran (from explain: it would be refused)",
    EXIT_BROKEN_PIPE: "the reader of the output went away (as with `| head`): the output was cut short",
}


class GateshError(Exception):
    """Base of every error gatesh raises on purpose. ``exit_status`` is what the CLI exits with."""

    exit_status: int = EXIT_ERROR


class ConfigError(GateshError):
    """A config file is invalid. The message names the file, the line (when known) and the key."""

    def __init__(self, path: str, key: str, problem: str, line: "int | None" = None) -> None:
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {key}: {problem}")
        self.path, self.key, self.problem, self.line = path, key, problem, line


class ReadError(GateshError):
    """The reader could not read a command, or reached a limit reading it; the pipeline rates the
    command unreadable (S2), it never refuses or allows on this alone."""


class ProtocolError(GateshError):
    """A malformed message on the daemon socket or a hook's stdin."""


class BackendError(GateshError):
    """A model backend failed. ``cause`` is one of no-model, timeout, unparseable, error."""

    def __init__(self, cause: str, detail: str) -> None:
        super().__init__(f"{cause}: {detail}")
        self.cause, self.detail = cause, detail


class DaemonError(GateshError):
    """The client could not use the daemon: none answered, the one there is not trusted, or it
    stopped answering mid-request (see :mod:`gatesh.client`)."""


class StateError(GateshError):
    """A pending escalation was asked to move where its lifecycle does not allow, or was ruled on
    twice (see :mod:`gatesh.pending`)."""


class SetupError(GateshError):
    """Installing an integration, trusting a harness's hooks, writing the launcher or linking a
    watcher failed; the message says what to fix."""


class Refused(GateshError):
    """The command was refused and nothing ran."""

    exit_status = EXIT_REFUSED


class Abandoned(BaseException):
    """Raised inside a worker thread whose decision passed its deadline (S2 "bounded time").

    A BaseException on purpose: the pipeline's fail-closed ``except Exception`` handlers must not
    swallow it, so the abandoned decision stops at the next bytecode instead of running on.
    Invariant: raised and caught only by ``gatesh.daemon.deadline``; it never reaches a caller.
    """


class BoundaryError(GateshError):
    """The boundary of an allowed command could not be applied (S16); the message says which step
    failed. The command must not run: the client refuses it (exit 126)."""

    exit_status = EXIT_REFUSED

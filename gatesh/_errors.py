"""gatesh's exceptions and exit statuses.

    GateshError                 anything gatesh raises on purpose
    ├── ConfigError             a config file is invalid (names file, line and key)
    ├── ReadError               the reader could not read a command (never escapes the pipeline)
    ├── ProtocolError           a malformed message on the daemon socket or a hook's stdin
    └── BackendError            a model backend failed (mapped to a fail-closed cause)

Foreign errors are translated where they enter (parser, socket, SDK, PTY).
"""

from __future__ import annotations

from typing import Final

# Exit statuses, shared by the code and the man page.
EXIT_OK: Final = 0
EXIT_ERROR: Final = 1  # gatesh itself failed (bad usage is 2)
EXIT_USAGE: Final = 2
EXIT_REFUSED: Final = 126  # the command was refused and did not run (bash's "cannot execute")

EXIT_STATUSES: Final = {
    EXIT_OK: "success (with -c: the command's own status)",
    EXIT_ERROR: "gatesh failed: a config error, an unreachable daemon for a human verb, …",
    EXIT_USAGE: "bad usage",
    EXIT_REFUSED: "the command was refused and nothing ran",
}


class GateshError(Exception):
    """Base of every error gatesh raises on purpose. ``exit_status`` is what the CLI exits with."""

    exit_status: int = EXIT_ERROR


class ConfigError(GateshError):
    """A config file is invalid. The message names the file, the line (when known) and the key."""

    def __init__(self, path: str, key: str, problem: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {key}: {problem}")
        self.path, self.key, self.problem, self.line = path, key, problem, line


class ReadError(GateshError):
    """The reader could not read a command; the pipeline turns this into an unreadable rating."""


class ProtocolError(GateshError):
    """A malformed message on the daemon socket or a hook's stdin."""


class BackendError(GateshError):
    """A model backend failed. ``cause`` is one of no-model, timeout, unparseable, error."""

    def __init__(self, cause: str, detail: str) -> None:
        super().__init__(f"{cause}: {detail}")
        self.cause, self.detail = cause, detail

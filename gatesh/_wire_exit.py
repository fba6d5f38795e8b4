"""The report of how a gated command ended (S13), sent by the ``-c`` client to its daemon once
the command it ran inside its boundary ends: the exit line of the audit log. Standard library only,
on the client's path like :mod:`gatesh._wire`, whose connection it uses.
"""

import posix

from gatesh._wire import _Conn, _connect, request

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: How long the report of a command's ending waits for the daemon: it only adds the exit line
#: to the audit log, so a slow daemon must not hold the harness waiting for the command.
REPORT_TIMEOUT_S = 2.0


def report_exit(
    run: str, status: "int | None", signal: "int | None", timeout: float = REPORT_TIMEOUT_S
) -> None:
    """Tell the daemon how run ``run`` ended (its audit line, S13); ``status`` and ``signal`` None
    together: it never started (its boundary could not be set up). Never raises, never starts a
    daemon: a lost report loses only that line, and the decision's line is already written.
    Returns once the daemon answered (the line is then in the audit log), or after ``timeout``."""
    msg: dict[str, Any] = {"op": "exited", "run": run, "status": status, "signal": signal}
    try:
        request("check", msg, start=False, timeout=timeout)
    except Exception:
        pass


class ExitReport:
    """The report of how run ``run`` ended (:func:`report_exit`), with its connection opened
    while the command runs (:meth:`open`): the daemon accepts it and reads its hello then, so
    once the command ended only the report itself goes back and forth (S14: measured on a busy
    two-core machine, 0.30 ms from the report sent to the daemon's answer on a connection
    opened ahead, 1.24 ms on a new one).

    Calling it reports ``(status, signal)`` once, on the connection opened ahead when it still
    answers, else on a new one (a daemon that closed the idle connection, or was restarted),
    all within :data:`REPORT_TIMEOUT_S`. The connection is opened by this process, after the
    command was started: the daemon takes the report from the process that made the check
    (``SO_PEERCRED``), and the command never holds the connection. Never raises.
    """

    __slots__ = ("conn", "run")

    def __init__(self, run: str) -> None:
        self.run = run
        self.conn: _Conn | None = None

    def open(self) -> None:
        """Connect and say hello (never starts a daemon, never raises)."""
        if not self.run or self.conn is not None:
            return
        try:
            self.conn, _ = _connect("check", start=False)
        except Exception:
            self.conn = None

    def __call__(self, status: "int | None", signal: "int | None") -> None:
        if not self.run:
            return
        import time

        deadline = time.monotonic() + REPORT_TIMEOUT_S
        conn, self.conn = self.conn, None
        if conn is not None:
            msg: dict[str, Any] = {
                "op": "exited",
                "run": self.run,
                "status": status,
                "signal": signal,
                "pid": posix.getpid(),
            }
            try:
                conn.send(msg)
                for reply in conn.lines(max(deadline - time.monotonic(), 0.001)):
                    if "re" in reply or "ok" in reply:
                        return  # answered: written, or refused (then a second try is too)
            except Exception:
                pass
            finally:
                conn.close()
        left = deadline - time.monotonic()
        if left > 0:
            report_exit(self.run, status, signal, left)

"""The daemon-less gate (S9.4): the same pipeline and the same finish, in the client's own process.

Used only when no daemon can be reached or started. Guarantees:

- The command is decided by :func:`gatesh.pipeline.decide` with the effective config for ``cwd``
  and finished by :func:`gatesh.finish.finish`, as in the daemon.
- No person can be reached from here (:attr:`~gatesh.finish.Reach.NOBODY`), so an escalation is
  refused at once with the no-person message and a pending id, kept in the same state file the
  daemon uses, so ``gatesh approve ID`` works once a daemon runs again (and here, for the retry).
- A session halted in that file stays halted here; a halt decided here is written there.
- The audit line is durable before an allow is returned; an audit failure refuses (S13).
- Never raises: any failure is a refusal with a message. Negotiation counts do not persist
  between calls here (each call is a fresh argument): the stricter bounds need the daemon.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from contextlib import AbstractAsyncContextManager
from dataclasses import replace

from gatesh import _paths, _person
from gatesh._types import Action, Decision
from gatesh._wire_base import CheckResult
from gatesh.alignment_model import make_checker
from gatesh.audit import AuditLog
from gatesh.check_reply import CheckReply, check_reply
from gatesh.config import Config, load_config
from gatesh.finish import Finished, Reach, Where, decide_and_finish, finish, now
from gatesh.pending import PendingBook
from gatesh.pipeline import decide
from gatesh.rater import make_rater
from gatesh.surfaces import at_terminal
from gatesh.undecided import failed_decision
from gatesh.undo.guard import policy_for, protect
from gatesh.wire_json import reply_object

__all__ = ["check", "check_result", "gate", "serve_one"]


def check(
    command: str,
    *,
    cwd: str,
    session: str | None = None,
    surface: str = "-c",
    why: str = "",
    cannot_run: str = "",
    operator: str = "",
    terminal: bool = False,
) -> CheckReply:
    """Decide ``command`` here; the check reply the daemon would send. Never raises.
    ``cannot_run``: refuse it undecided, saying why (see :func:`gatesh.client.check`);
    ``terminal``: the client says its input and output are a terminal."""
    done, sid, shell = _gate_safely(
        command, cwd, session, surface, why, cannot_run, operator, terminal
    )
    return check_reply(done, session=sid, shell=shell)


def check_result(
    command: str,
    *,
    cwd: str,
    session: str | None = None,
    surface: str = "-c",
    why: str = "",
    cannot_run: str = "",
    operator: str = "",
    terminal: bool = False,
) -> CheckResult:
    """:func:`check`, as the client reads a daemon's reply (:class:`gatesh._wire_base.CheckResult`)."""
    reply = check(
        command,
        cwd=cwd,
        session=session,
        surface=surface,
        why=why,
        cannot_run=cannot_run,
        operator=operator,
        terminal=terminal,
    )
    return CheckResult.from_reply(reply_object(reply))


def gate(
    command: str, *, cwd: str, session: str | None = None, surface: str = "-c", why: str = ""
) -> Finished:
    """Decide ``command`` here; what was finished (``exit_code``, ``message``, …). Never raises."""
    return _gate_safely(command, cwd, session, surface, why)[0]


def serve_one() -> int:
    """Gate one request read as JSON from standard input (``command``, ``cwd``, ``session``,
    ``surface``, ``why``) and write the check reply as one JSON line on standard output.

    For a ``-c`` client running on a launcher's fast interpreter, which cannot import the pipeline
    (:func:`gatesh.client._in_process_on_full`). A request it cannot read is refused like any
    other failure; the exit status is 0 whenever a reply was written.
    """
    try:
        req = json.loads(sys.stdin.buffer.read())
        reply = check(
            str(req["command"]),
            cwd=str(req["cwd"]),
            session=req.get("session") or None,
            surface=str(req.get("surface") or "-c"),
            why=str(req.get("why") or ""),
            cannot_run=str(req.get("cannot_run") or ""),
            operator=str(req.get("operator") or ""),
            terminal=req.get("terminal") is True,
        )
    except Exception as exc:
        failed = f"gatesh: the in-process gate could not read its request ({type(exc).__name__}: {exc}), so nothing ran."
        reply = check_reply(_failed("", failed), session="", shell="bash")
    sys.stdout.write(json.dumps(reply_object(reply), default=str) + "\n")
    sys.stdout.flush()
    return 0


def _failed(command: str, message: str) -> Finished:
    return Finished(failed_decision(command, message, message), Action.REFUSE, message)


def _gate_safely(
    command: str,
    cwd: str,
    session: str | None,
    surface: str,
    why: str,
    cannot_run: str = "",
    operator: str = "",
    terminal: bool = False,
) -> tuple[Finished, str, str]:
    try:
        # The gate decides on the person's settings, not on this process's environment (S9.7):
        # a gated command's client sees the person's folders, and no client's model key.
        env, no = _person.gate_environ(_person.context(), os.environ)
        if env is None:
            message = f"gatesh: no daemon could be reached, and this process cannot decide in its place ({no}), so nothing ran."
            return _failed(command, message), session or "", "bash"
        with _person.using_environ(env):
            settings, _ = _person.read_daemon_env(_paths.current().config_dir)
            os.environ.update(settings)
            return _gate(command, cwd, session, surface, why, cannot_run, operator, terminal)
    except Exception as exc:  # fail closed: nothing was allowed, so there is nothing to undo
        message = (
            f"gatesh: the in-process gate failed ({type(exc).__name__}: {exc}), so nothing ran."
        )
        return _failed(command, message), session or "", "bash"


def _gate(
    command: str,
    cwd: str,
    session: str | None,
    surface: str,
    why: str,
    cannot_run: str = "",
    operator: str = "",
    terminal: bool = False,
) -> tuple[Finished, str, str]:
    """Decided and finished on the one path (:func:`gatesh.finish.decide_and_finish`); returns what was
    finished, the session and the shell."""
    here = _Here(command, cwd, session or f"inprocess:{os.getppid()}", surface, why)
    here.terminal = at_terminal(surface, terminal)
    here.state.person_operated = operator == "person"
    done = now(decide_and_finish(command, cwd, here, cannot_run=cannot_run))
    return done, here.where.session, here.shell


class _Here:
    """This process as a surface of the one path: a session fresh but for what the daemon's state
    file holds (a halt, an approval holds here too), nobody to ask, the audit log written here."""

    def __init__(self, command: str, cwd: str, sid: str, surface: str, why: str) -> None:
        self.command, self.cwd, self.paths = command, cwd, _paths.current()
        note = f"in-process gate: {why}" if why else "in-process gate"
        self.where = Where(sid, os.getpid(), cwd, surface, note)
        self.book = PendingBook(self.paths.state_dir)
        self.state = self.book.session_state(sid)
        self.shell = "bash"
        self.terminal = False  # the command runs at a terminal (gatesh.pipeline.at_terminal)

    def config(self) -> Config:
        return load_config(self.cwd, paths=self.paths)

    def hold(self) -> AbstractAsyncContextManager[object]:
        return contextlib.nullcontext()  # one command per process: nothing to keep out

    async def decide(self, config: Config) -> Decision:
        rater, checker, paths = make_rater(config), make_checker(config), self.paths
        # The client runs an allowed -c or shim command inside its boundary (below): judged so.
        from gatesh.boundary.contain import here

        bounded = self.where.surface in ("-c", "shim")
        contain = here(config.boundary.enabled) if bounded else None

        def decided(undo: bool) -> Decision:
            return decide(
                self.command,
                cwd=self.cwd,
                config=config,
                session=self.state,
                rater=rater,
                checker=checker,
                paths=paths,
                undo=policy_for(config, paths.state_dir) if undo else None,
                contain=contain,
                terminal=self.terminal,
            )

        # The snapshot an allowed command runs after (S17), as in the daemon.
        decision = protect(
            decided(True),
            cwd=self.cwd,
            session=self.where.session,
            config=config,
            state_dir=paths.state_dir,
            redecide=lambda: decided(False),
        )
        # The boundary the client runs an allowed command in (S16), as the daemon draws it.
        if decision.action is Action.ALLOW and self.where.surface in ("-c", "shim"):
            from gatesh.boundary.compute import boundary_for

            boundary = boundary_for(decision, self.cwd, config.boundary, paths)
            self.where = replace(self.where, boundary=boundary)
        return decision

    async def finish(self, decision: Decision, config: Config | None) -> Finished:
        log = AuditLog(self.paths.audit_log)
        if config is not None:
            log.configure(config.audit)
            self.shell = config.shell
        try:  # nobody can be asked from here
            return finish(
                decision,
                state=self.state,
                reach=Reach.NOBODY,
                where=self.where,
                book=self.book,
                audit=log,
            )
        finally:
            log.close()

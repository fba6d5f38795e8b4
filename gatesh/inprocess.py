"""The daemon-less gate (S9.4): the same pipeline in the client's own process.

Used only when no daemon can be reached or started. Guarantees:

- The command is decided by :func:`gatesh.pipeline.decide` with the effective config for ``cwd``.
- No person can be reached from here, so an escalation is refused at once with the no-person
  message and a pending id (written to the daemon's state file, so ``gatesh approve ID`` works
  once a daemon runs again).
- A session halted in the daemon's state file stays halted here.
- The audit line is durable before an allow is returned; an audit failure refuses (S13).
- Never raises: any failure is a refusal with a message. Negotiation counts do not persist
  between calls here (each call is a fresh argument): the stricter bounds need the daemon.
"""

from __future__ import annotations

import json
import os
import time

from gatesh import _paths
from gatesh.client import CheckResult

__all__ = ["gate", "serve_one"]


def gate(command: str, *, cwd: str, session: str | None = None, surface: str = "-c",
         why: str = "") -> CheckResult:
    """Decide ``command`` here. Never raises; anything but an allow is a refusal (exit 126)."""
    try:
        return _gate(command, cwd, session, surface, why)
    except Exception as exc:
        return CheckResult.refused(
            f"gatesh: the in-process gate failed ({type(exc).__name__}: {exc}), so nothing ran.")


def serve_one() -> int:
    """Gate one request read as JSON from standard input (``command``, ``cwd``, ``session``,
    ``surface``, ``why``) and write the check reply as one JSON line on standard output.

    For a ``-c`` client running on a launcher's fast interpreter, which cannot import the pipeline
    (:func:`gatesh.client._in_process_on_full`). A request it cannot read is refused like any
    other failure; the exit status is 0 whenever a reply was written.
    """
    import sys

    try:
        req = json.loads(sys.stdin.buffer.read())
        result = gate(str(req["command"]), cwd=str(req["cwd"]), session=req.get("session") or None,
                      surface=str(req.get("surface") or "-c"), why=str(req.get("why") or ""))
    except Exception as exc:
        result = CheckResult.refused(f"gatesh: the in-process gate could not read its request "
                                     f"({type(exc).__name__}: {exc}), so nothing ran.")
    reply = {"ok": True, "action": result.action, "message": result.message, "exit": result.exit_code,
             "pending_id": result.pending_id, "notice": result.notice, "session": result.session,
             "shell": result.shell, "decision": result.decision}
    sys.stdout.write(json.dumps(reply, default=str) + "\n")
    sys.stdout.flush()
    return 0


def _gate(command: str, cwd: str, session: str | None, surface: str, why: str) -> CheckResult:
    from gatesh import messages
    from gatesh._errors import ConfigError
    from gatesh.audit import AuditError, AuditLog, record_for
    from gatesh.config import load_config
    from gatesh.daemon.server import audit_failed_message, summary
    from gatesh.daemon.sessions import STATE_FILE, load_state, new_pending_id
    from gatesh.pipeline import decide, normalised
    from gatesh.session import SessionState

    paths = _paths.current()
    sid = session or f"inprocess:{os.getppid()}"
    # 1. The config (a broken one refuses, naming the problem).
    try:
        config = load_config(cwd, paths=paths)
    except ConfigError as exc:
        return CheckResult.refused(messages.error(f"invalid configuration: {exc}"))
    # 2. The session: fresh, but a halt recorded by the daemon still holds.
    state_path = os.path.join(paths.state_dir, STATE_FILE)
    saved = load_state(state_path)
    state = SessionState(id=sid)
    if sid in saved["halts"]:
        state.halt(saved["halts"][sid])
    from gatesh.rater import make_rater

    try:
        from gatesh.alignment import make_checker

        checker = make_checker(config)
    except ImportError:
        checker = None
    # 3. Decide.
    decision = decide(command, cwd=cwd, config=config, session=state, rater=make_rater(config),
                      checker=checker, paths=paths)
    action = decision.action.value
    message = decision.message
    pending_id = ""
    answer = ""
    # 4. No person is reachable from here: an escalation is refused at once (S7).
    if action == "escalate":
        taken = {p.get("pending_id", "") for p in saved["pending"]}
        pending_id = new_pending_id(taken)
        reason = decision.to_person_reason or decision.reason
        transcript = messages.rounds_of(decision.rounds) if decision.rounds else ""
        message = messages.nobody_watching(decision.facts.text, reason, transcript, pending_id)
        action, answer = "refuse", "nobody-watching"
        _save_pending(state_path, saved, {
            "pending_id": pending_id, "session": sid, "command": decision.facts.text,
            "key": normalised(decision.facts), "cwd": cwd, "reason": reason, "kind": "escalate",
            "state": "refused", "created": round(time.time(), 3), "answer": ""})
    if state.halted and sid not in saved["halts"]:
        saved["halts"][sid] = state.halt_reason
        _save(state_path, saved)
    # 5. The audit line, durable before an allow.
    log = AuditLog(paths.audit_log, config.audit.max_bytes, config.audit.keep)
    rec = record_for(decision, session=sid, pid=os.getpid(), cwd=cwd, surface=surface, answer=answer,
                     pending_id=pending_id, action=action,
                     message_reason=f"in-process gate: {why}" if why else "in-process gate")
    try:
        log.append(rec)
    except AuditError as exc:
        return CheckResult.refused(audit_failed_message(str(exc)))
    finally:
        log.close()
    return CheckResult(action, message, 0 if action == "allow" else 126, pending_id, decision.notice,
                       sid, config.shell, summary(decision))


def _save_pending(path: str, saved: dict, item: dict) -> None:  # type: ignore[type-arg]
    saved["pending"] = [*saved["pending"], item][-1000:]
    _save(path, saved)


def _save(path: str, data: dict) -> None:  # type: ignore[type-arg]
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        pass

"""``gatesh _gate``: how the in-shell hook of a PTY session asks the gate about one entry (S10).

The hook pipes the entry on standard input (so any bytes and any number of lines arrive intact)
and runs the command only on exit status 0. Guarantees:

- Exit 0 only when the gate allowed exactly the entry the shell is about to run. Anything else —
  a refusal, an entry that does not match the shell's current history number, input too large to
  read, the daemon lost, a bug here — prints a message on the terminal (stderr, append-only) and
  exits 126 (fail closed, S15).
- ``--bash``: standard input is ``history 1`` output and ``GATESH_HISTCMD`` the number of the
  command being run; standard output carries the token the bash hook's PS0 needs ("0)" to run,
  anything else discards the entry; see ``gatesh/shell/bash_hook.bash``).
- An escalation is asked at this terminal only when the session's operator is a person
  (``GATESH_OPERATOR=person``); the answer is read from the keyboard by the session's relay
  (:mod:`gatesh.pty.session`), never by this process, so nothing inside the gated shell can answer.
  Otherwise the person is asked through ``gatesh watch`` and this waits for the daemon.
"""

from __future__ import annotations

import os

from gatesh import client
from gatesh._errors import EXIT_REFUSED, Refused

__all__ = ["main", "parse_history_line"]

# What bash's PS0 needs to let the entry run: "(" + this is the arithmetic "(0)".
BASH_ALLOW_TOKEN = "0)"
# Anything else makes the PS0 arithmetic fail (the entry is discarded). The carriage return and
# erase-line make bash's own "syntax error" line, which follows, print over itself; the prompt
# hook then erases what is left of it (see the bash hook).
BASH_REFUSE_TOKEN = "\r\x1b[K"
# Larger input is refused, not truncated (the reader's own limit is 64 KiB, S2).
MAX_INPUT = 1024 * 1024


class _Refused(Refused):
    """The entry cannot be gated; the message says why (nothing runs)."""


def parse_history_line(text: str, histcmd: str) -> str:
    """The command of a bash ``history 1`` listing, checked to be history entry ``histcmd``.

    Raises _Refused when the listing is not the current entry (history off or filtered): then the
    gate would be reading a different command from the one about to run.
    """
    stripped = text.lstrip(" ")
    digits = len(stripped) - len(stripped.lstrip("0123456789"))
    number, rest = stripped[:digits], stripped[digits:]
    # bash prints "%5d%c %s": the number, '*' for a modified entry or a space, then a space.
    if not number or len(rest) < 2 or rest[0] not in " *" or rest[1] != " ":
        raise _Refused("the shell's history did not list the command")
    if not histcmd.isdigit() or int(number) != int(histcmd):
        raise _Refused(
            f"the shell's history lists entry {number}, not the command being run ({histcmd or '?'}); "
            "history may be off or filtered"
        )
    return rest[2:]


def _read_input() -> str:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > MAX_INPUT:
            raise _Refused(f"the command is larger than {MAX_INPUT} bytes")
    return b"".join(chunks).decode("utf-8", "surrogateescape")


def _say(text: str) -> None:
    """Print to the terminal, one block, never raising (the terminal may be gone). The text passes
    the one boundary function first (:func:`gatesh.render.neutralise_block`, S8.1)."""
    try:
        from gatesh.render import neutralise_block

        text = neutralise_block(text)
    except Exception:
        text = "".join(c if c.isprintable() or c == "\n" else " " for c in text)
    try:
        os.write(2, (text.rstrip("\n") + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:
        pwd = os.environ.get("PWD", "")
        return pwd if os.path.isabs(pwd) else "/"


def main(argv: list[str]) -> int:
    """Gate one entry; see the module docstring. Never raises."""
    bash = "--bash" in argv
    try:
        allowed = _gate(bash)
    except _Refused as exc:
        _say(f"gatesh: {exc}, so it was not run.")
        allowed = False
    except BaseException as exc:  # fail closed: a bug or an interrupt refuses the entry
        if isinstance(exc, KeyboardInterrupt):
            _say(
                "gatesh: interrupted (Ctrl-C), so nothing ran; if a person was being asked, the "
                "question is withdrawn."
            )
        else:
            _say(f"gatesh: the shell hook failed ({type(exc).__name__}: {exc}), so nothing ran.")
        allowed = False
    if bash:
        try:
            os.write(1, (BASH_ALLOW_TOKEN if allowed else BASH_REFUSE_TOKEN).encode())
        except OSError:
            return EXIT_REFUSED
    return 0 if allowed else EXIT_REFUSED


def _gate(bash: bool) -> bool:
    text = _read_input()
    if bash:
        text = parse_history_line(text.rstrip("\n"), os.environ.get("GATESH_HISTCMD", ""))
    else:
        text = text.rstrip("\n")
    if not text.strip():
        return True  # nothing to run
    person = os.environ.get("GATESH_OPERATOR") == "person"
    session = os.environ.get("GATESH_SESSION") or None
    cwd = _cwd()

    def on_interim(reply: dict[str, object]) -> None:
        if reply.get("interim") == "waiting":
            _say(
                str(
                    reply.get("message")
                    or "gatesh: a person is being asked through `gatesh watch`."
                )
            )

    result = client.check(
        text,
        cwd=cwd,
        session=session,
        surface="pty",
        can_ask=person,
        on_interim=on_interim,
        operator="person" if person else "",
    )
    if result.action == "escalate" and result.pending_id and person:
        result = _ask_here(result, text, cwd, session)
    if result.allowed:
        if result.notice:
            _say(f"gatesh: {result.notice}")
        return True
    _say(result.message or f"gatesh: refused ({result.action}); nothing ran.")
    return False


def _ask_here(
    result: client.CheckResult, text: str, cwd: str, session: str | None
) -> client.CheckResult:
    """Have the session's relay ask the person at the keyboard; the final result of the escalation.

    After an allowing answer the check is sent again: the daemon lets the approved command through
    exactly once, and that second check is what the audit records as run.
    """
    from gatesh.pty.session import ask_relay

    reply = ask_relay(result.pending_id, result.message)
    answered = client.CheckResult.from_reply(reply)
    if answered.action == "reject":
        # The person said no to their own command: nothing to argue, no moves to offer (S7).
        return client.CheckResult("reject", "gatesh: you answered no, so nothing ran.")
    if not answered.allowed:
        return answered
    return client.check(
        text, cwd=cwd, session=session, surface="pty", can_ask=False, operator="person"
    )

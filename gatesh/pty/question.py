"""A question for the person at a gated session's own terminal (S7, S10), and its answer.

Guarantees:

- No is the default: Enter alone, Ctrl-D and anything that is not one of the choices refuse; a
  halted command runs only on the exact phrase ``run anyway``.
- Ctrl-C withdraws the question (the check it asks about is dropped, S10) instead of answering it.
- The answer is sent to the daemon by the relay itself, never by the gated shell; when it cannot
  be delivered, or the daemon does not take it, the reply refuses (nothing runs).
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from gatesh._wire_base import CheckResult

__all__ = ["ANSWER_KEYS", "CHOICES_LINE", "Ending", "Question", "is_answer", "parse_answer"]

ANSWER_KEYS = {"o": "once", "s": "session", "a": "always", "n": "no", "d": "deny always"}
CHOICES_LINE = "[o]nce  [s]ession  [a]lways  [N]o  [d]eny always"


def is_answer(text: str, kind: str = "escalate") -> bool:
    """Whether what the person typed answers the question: for an escalation, Enter alone (No)
    or one of the choices (a letter or its word); for a halt, anything (only the exact phrase
    runs it). A line typed for the shell is not an answer: the question is asked again."""
    typed = " ".join(text.strip().lower().split())
    if kind == "halt" or not typed:
        return True
    return typed in ANSWER_KEYS.values() or (len(typed) == 1 and typed in ANSWER_KEYS)


def parse_answer(text: str, kind: str = "escalate") -> str:
    """The daemon's answer word for what the person typed. No is the default (S7).

    A halted command runs only on the exact phrase "run anyway"; anything else refuses it.
    """
    typed = " ".join(text.strip().lower().split())
    if kind == "halt":
        return "run anyway" if typed == "run anyway" else "no"
    if typed in ANSWER_KEYS.values():
        return typed
    return ANSWER_KEYS.get(typed[:1], "no") if len(typed) == 1 else "no"


class Ending(enum.Enum):
    """How the person ended a question."""

    ANSWER = "answer"  # Enter after a choice (or alone: No)
    CANCEL = "cancel"  # Ctrl-D: No
    WITHDRAW = "withdraw"  # Ctrl-C: the check is withdrawn, not answered


@dataclass
class Question:
    """A question for the person at this terminal, and its answer once given."""

    pending_id: str
    block: str
    kind: str
    done: threading.Event = field(default_factory=threading.Event)
    # The daemon's reply to the answer, as the check's result (refused until answered).
    reply: CheckResult = field(default_factory=lambda: CheckResult.refused(""))
    typed: str = ""

    def prompt(self) -> str:
        """The question as shown: the block, then what may be typed."""
        ask = (
            "type `run anyway` to run it once; anything else refuses it: "
            if self.kind == "halt"
            else f"{CHOICES_LINE}? "
        )
        return "\r\n" + crlf(self.block) + "\r\n" + ask

    def keys(self, data: bytes, echo: Callable[[bytes], None]) -> tuple[Ending | None, bytes]:
        """Take the keys of one read: how the question ended (None: still open) and what follows
        the ending key in ``data``, which is the shell's. ``echo`` shows what the person types."""
        for i, byte in enumerate(data):
            if byte == 3:  # Ctrl-C: the question is withdrawn (S10), not answered
                return Ending.WITHDRAW, data[i + 1 :]
            if byte == 4:  # Ctrl-D: No
                self.typed = ""
                return Ending.CANCEL, data[i + 1 :]
            if byte in (13, 10):
                if is_answer(self.typed, self.kind):
                    return Ending.ANSWER, data[i + 1 :]
                self.typed = ""
                echo(
                    f"\r\ngatesh: not an answer; type o, s, a, n or d (Enter alone is No).\r\n"
                    f"{CHOICES_LINE}? ".encode()
                )
            elif byte in (8, 127):
                if self.typed:
                    self.typed = self.typed[:-1]
                    echo(b"\b \b")
            elif 32 <= byte < 127:
                self.typed += chr(byte)
                echo(bytes([byte]))
        return None, b""

    def finish(self, ending: Ending, echo: Callable[[bytes], None]) -> None:
        """Send the person's answer (or the withdrawal) to the daemon and release the worker that
        asked, with the daemon's reply, or a refusal when the answer was not taken."""
        from gatesh import client
        from gatesh.daemon.protocol import Op
        from gatesh.daemon.requests import AnswerRequest, PendingRequest
        from gatesh.finish import Answer
        from gatesh.wire_json import request_object

        if ending is Ending.WITHDRAW:
            echo(b"^C\r\n")
            message = request_object(Op.WITHDRAW, PendingRequest(self.pending_id))
        else:
            answer = "no" if ending is Ending.CANCEL else parse_answer(self.typed, self.kind)
            echo(f"\r\ngatesh: your answer: {answer}\r\n".encode())
            message = request_object(Op.ANSWER, AnswerRequest(self.pending_id, Answer(answer)))
        try:
            reply = client.request("human", message, start=False, timeout=30.0)
        except Exception as exc:
            self.reply = CheckResult.refused(
                f"gatesh: your answer could not be delivered ({exc}); nothing ran."
            )
        else:
            if reply.get("ok") is False:
                self.reply = CheckResult.refused(
                    f"gatesh: the gate did not take the answer ({reply.get('error')}); nothing ran."
                )
            else:
                self.reply = CheckResult.from_reply(reply)
        self.done.set()


def crlf(text: str) -> str:
    """``text`` for a terminal in raw mode: every line ends with CR LF."""
    return text.replace("\r", "").replace("\n", "\r\n")

"""``gatesh _gate SOCKET``: how a subshell of a gated bash asks its session's relay (S10).

bash closes the gate channel in every subshell (:mod:`gatesh.pty.channel`); a command in a
subshell that no decided line covers — a prompt string's substitution, an alias in a pipeline's
``$(…)`` — is asked through this process instead, which carries one request from its standard
input to the relay's socket ``SOCKET`` and the reply back to its standard output. It starts only
for those commands (the covered ones are looked up in the shell), and needs the standard library
only.

Guarantees: exit 0 only after a whole reply was written; anything else — no socket, no reply, a
request too large — exits 126, and the hook then refuses the command (fail closed, S15). What it
says goes to the terminal through :func:`_say`.
"""

from __future__ import annotations

import os
import socket

from gatesh._errors import EXIT_REFUSED

__all__ = ["main"]

# Larger input is refused, not truncated (gatesh.pty.channel.MAX_REQUEST).
MAX_INPUT = 4 * 1024 * 1024
# A decision may wait for a person (escalation.timeout_s, 110 s by default) and a model call.
REPLY_TIMEOUT_S = 600.0


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


def _read_input() -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(0, 65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > MAX_INPUT:
            raise ValueError(f"the request is larger than {MAX_INPUT} bytes")


def main(argv: list[str]) -> int:
    """Forward one request; see the module docstring. Never raises."""
    try:
        path = argv[0] if argv else ""
        if not path:
            raise ValueError("no gate socket was named")
        request = _read_input()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(REPLY_TIMEOUT_S)
            s.connect(path)
            s.sendall(request)
            reply = b""
            while not reply.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                reply += chunk
        if not reply.endswith(b"\n"):
            raise ValueError("the relay did not answer")
        os.write(1, reply)
        return 0
    except BaseException as exc:  # fail closed: the hook refuses without a reply
        if isinstance(exc, KeyboardInterrupt):
            _say("gatesh: interrupted (Ctrl-C), so nothing ran.")
        else:
            _say(
                f"gatesh: this subshell could not ask the gate ({type(exc).__name__}: {exc}), so nothing ran."
            )
        return EXIT_REFUSED

"""The PTY relay of a gated interactive session (S10).

Guarantees:

- The shell runs in its own PTY (it is the session leader there, so job control and Ctrl-C work
  as in any terminal); the relay copies bytes both ways unchanged, in large reads, with no
  per-byte Python work.
- When standard input is a terminal it is put in raw mode for the session and restored on every
  exit path; its window size follows SIGWINCH. When it is not a terminal it is relayed as is, and
  its end becomes the terminal's end-of-file character.
- SIGHUP and SIGTERM sent to the relay are passed to the shell; the relay returns the shell's exit
  status (128 + N when a signal N ended it).
- When the session's operator is a person, the relay answers the hook's requests to ask them
  (:func:`ask_relay`): it shows the escalation and reads the answer from its own keyboard, then
  sends it to the daemon itself. Nothing inside the gated shell can answer for the person.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import select
import signal
import socket
import struct
import termios
import tty
from typing import Any

import ptyprocess

from gatesh import _person

__all__ = ["ANSWER_KEYS", "Relay", "ask_relay", "parse_answer"]

# Read size for the shell's output: as much as the PTY holds, in one system call.
READ_SIZE = 1 << 17
ANSWER_KEYS = {"o": "once", "s": "session", "a": "always", "n": "no", "d": "deny always"}
CHOICES_LINE = "[o]nce  [s]ession  [a]lways  [N]o  [d]eny always"
# A request from the hook is one short JSON line; anything longer is not one.
MAX_ASK_LINE = 1 << 20


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


def ask_relay(
    pending_id: str, block: str, kind: str = "escalate", timeout: float = 3600.0
) -> dict[str, Any]:
    """From inside the gated shell: have the session's relay ask the person; the daemon's reply.

    Any failure returns a refusal-shaped reply (fail closed).
    """
    path = os.environ.get("GATESH_PTY_ASK", "")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(path)
            s.sendall(
                json.dumps({"pending_id": pending_id, "block": block, "kind": kind}).encode()
                + b"\n"
            )
            data = b""
            while not data.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        reply = json.loads(data or b"{}")
        return reply if isinstance(reply, dict) else {}
    except (OSError, ValueError) as exc:
        return {
            "action": "refuse",
            "message": f"gatesh: the person could not be asked here ({exc}), so nothing ran.",
        }


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except InterruptedError:
            continue
        except BlockingIOError:
            select.select([], [fd], [])


def _winsize(fd: int) -> tuple[int, int] | None:
    try:
        rows, cols, _, _ = struct.unpack("hhhh", fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))
    except OSError:
        return None
    return (rows, cols) if rows > 0 and cols > 0 else None


class Relay:
    """One shell in a PTY and the loop that connects it to this process's stdin and stdout."""

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        *,
        ask_socket: str = "",
        stdin: int = 0,
        stdout: int = 1,
    ) -> None:
        self.stdin, self.stdout = stdin, stdout
        self.stdin_tty = os.isatty(stdin)
        size = _winsize(stdin) or _winsize(stdout) or (24, 80)
        # The shell carries the gate's mark from its first instruction: all it starts is known
        # for a gated session's, never a person's (gatesh._person; the daemon marks it again
        # when it registers).
        self.child = ptyprocess.PtyProcess.spawn(
            argv, env=env, dimensions=size, preexec_fn=_person.mark
        )
        self.master = self.child.fd
        self.pending_to_child = bytearray()
        self.ask_server: socket.socket | None = None
        self.asking: dict[str, Any] | None = None  # the request being asked, with its connection
        if ask_socket:
            self.ask_server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.ask_server.bind(ask_socket)
            os.chmod(ask_socket, 0o600)
            self.ask_server.listen(4)

    # --- the loop ---------------------------------------------------------------------------

    def run(self) -> int:
        """Relay until the shell's side of the PTY closes; the shell's exit status."""
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        old_wakeup = signal.set_wakeup_fd(wake_w)
        handled = (signal.SIGWINCH, signal.SIGHUP, signal.SIGTERM, signal.SIGCONT)
        old_handlers = {sig: signal.signal(sig, lambda *_: None) for sig in handled}
        saved = termios.tcgetattr(self.stdin) if self.stdin_tty else None
        try:
            if saved is not None:
                tty.setraw(self.stdin, termios.TCSANOW)
            self._loop(wake_r)
        finally:
            if saved is not None:
                with contextlib.suppress(termios.error):
                    termios.tcsetattr(self.stdin, termios.TCSADRAIN, saved)
            signal.set_wakeup_fd(old_wakeup)
            for sig, handler in old_handlers.items():
                signal.signal(sig, handler)
            os.close(wake_r)
            os.close(wake_w)
            if self.ask_server is not None:
                self.ask_server.close()
        return self._status()

    def _loop(self, wake_r: int) -> None:
        master, stdin = self.master, self.stdin
        stdin_open = True
        os.set_blocking(master, False)
        while True:
            readers = [master, wake_r]
            if stdin_open:
                readers.append(stdin)
            if self.ask_server is not None and self.asking is None:
                readers.append(self.ask_server.fileno())
            writers = [master] if self.pending_to_child else []
            try:
                ready, can_write, _ = select.select(readers, writers, [])
            except InterruptedError:
                continue
            if master in ready:
                try:
                    data = os.read(master, READ_SIZE)
                except BlockingIOError:
                    data = None
                except OSError as exc:  # EIO: the shell and everything on its PTY are gone
                    if exc.errno != errno.EIO:
                        raise
                    return
                if data == b"":
                    return
                if data:
                    _write_all(self.stdout, data)
            if wake_r in ready:
                self._signals(wake_r)
            if stdin_open and stdin in ready:
                data = os.read(stdin, READ_SIZE)
                if not data:
                    stdin_open = False
                    if (
                        not self.stdin_tty
                    ):  # a pipe ended: the terminal's end-of-file, as a tty would
                        self.pending_to_child += self._eof_char()
                elif self.asking is not None:
                    self._answer_keys(data)
                else:
                    self.pending_to_child += data
            if can_write and self.pending_to_child:
                try:
                    n = os.write(master, self.pending_to_child)
                    del self.pending_to_child[:n]
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    self.pending_to_child.clear()
            if self.ask_server is not None and self.ask_server.fileno() in ready:
                self._accept_ask()

    def _signals(self, wake_r: int) -> None:
        try:
            received = os.read(wake_r, 512)
        except BlockingIOError:
            return
        for signum in set(received):
            if signum in (signal.SIGWINCH, signal.SIGCONT):
                size = _winsize(self.stdin) or _winsize(self.stdout)
                if size:
                    with contextlib.suppress(OSError):
                        self.child.setwinsize(*size)
                if signum == signal.SIGCONT and self.stdin_tty:
                    with contextlib.suppress(termios.error):
                        tty.setraw(self.stdin, termios.TCSANOW)
            elif signum in (signal.SIGHUP, signal.SIGTERM):
                with contextlib.suppress(OSError):
                    self.child.kill(signum)

    def _eof_char(self) -> bytes:
        try:
            eof = termios.tcgetattr(self.master)[6][termios.VEOF]
        except termios.error:
            return b"\x04"
        return eof if isinstance(eof, bytes) else bytes([eof])

    def _status(self) -> int:
        with contextlib.suppress(Exception):
            self.child.close(force=False)
        try:
            self.child.wait()
        except ptyprocess.PtyProcessError:
            pass
        if self.child.signalstatus:
            return 128 + int(self.child.signalstatus)
        return int(self.child.exitstatus or 0)

    # --- asking the person (operator person only) ---------------------------------------------

    def _accept_ask(self) -> None:
        assert self.ask_server is not None
        try:
            conn, _ = self.ask_server.accept()
        except OSError:
            return
        try:
            conn.settimeout(2.0)
            data = b""
            while not data.endswith(b"\n") and len(data) < MAX_ASK_LINE:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            request = json.loads(data)
            if not isinstance(request, dict) or not isinstance(request.get("pending_id"), str):
                raise ValueError("not a request")
        except (OSError, ValueError):
            conn.close()
            return
        kind = "halt" if request.get("kind") == "halt" else "escalate"
        self.asking = {"conn": conn, "pending_id": request["pending_id"], "kind": kind, "typed": ""}
        block = str(request.get("block") or "")
        prompt = (
            "type `run anyway` to run it once; anything else refuses it: "
            if kind == "halt"
            else f"{CHOICES_LINE}? "
        )
        _write_all(
            self.stdout,
            ("\r\n" + block.replace("\r", "").replace("\n", "\r\n") + "\r\n" + prompt).encode(),
        )

    def _answer_keys(self, data: bytes) -> None:
        assert self.asking is not None
        for byte in data:
            if byte == 3:  # Ctrl-C: the question is withdrawn (S10), not answered
                self._finish_ask(withdraw=True)
                return
            if byte == 4:  # Ctrl-D: No
                self.asking["typed"] = ""
                self._finish_ask(cancel=True)
                return
            if byte in (13, 10):
                self._finish_ask()
                return
            if byte in (8, 127):
                if self.asking["typed"]:
                    self.asking["typed"] = self.asking["typed"][:-1]
                    _write_all(self.stdout, b"\b \b")
            elif 32 <= byte < 127:
                self.asking["typed"] += chr(byte)
                _write_all(self.stdout, bytes([byte]))

    def _finish_ask(self, cancel: bool = False, withdraw: bool = False) -> None:
        assert self.asking is not None
        asking, self.asking = self.asking, None
        from gatesh import client

        if withdraw:
            _write_all(self.stdout, b"^C\r\n")
            message: dict[str, Any] = {"op": "withdraw", "pending_id": asking["pending_id"]}
        else:
            answer = "no" if cancel else parse_answer(asking["typed"], asking["kind"])
            _write_all(self.stdout, f"\r\ngatesh: your answer: {answer}\r\n".encode())
            message = {"op": "answer", "pending_id": asking["pending_id"], "answer": answer}
        try:
            reply = client.request("human", message, start=False, timeout=30.0)
        except Exception as exc:
            reply = {
                "action": "refuse",
                "message": f"gatesh: your answer could not be delivered ({exc}); nothing ran.",
            }
        if reply.get("ok") is False:
            reply = {
                "action": "refuse",
                "message": f"gatesh: the gate did not take the answer ({reply.get('error')}); nothing ran.",
            }
        try:
            asking["conn"].sendall(json.dumps(reply).encode() + b"\n")
        except OSError:
            pass
        finally:
            asking["conn"].close()

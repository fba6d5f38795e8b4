"""The PTY relay of a gated interactive session (S10), and the gate its shell asks.

Guarantees:

- The shell runs in its own PTY (it is the session leader there, so job control and Ctrl-C work
  as in any terminal); the relay copies bytes both ways unchanged, in large reads, with no
  per-byte Python work. The shell is started by :func:`spawn` alone (one place to add what every
  agent shell starts inside).
- When standard input is a terminal it is put in raw mode for the session and restored on every
  exit path; its window size follows SIGWINCH. When it is not a terminal it is relayed as is, and
  its end becomes the terminal's end-of-file character.
- SIGHUP and SIGTERM sent to the relay are passed to the shell; the relay returns the shell's exit
  status (128 + N when a signal N ended it). A session that is ended this way ends: a shell still
  there :data:`END_GRACE_S` later (an interactive bash ignores SIGTERM, and holds a hang-up while
  it waits for the gate's answer) is killed, saying so in one line, so no relay outlives its
  session and no shell outlives its gate.
- When the gate channel cannot be answered any more (the relay's end of it failed), the session
  ends the same way: the shell is killed and the terminal told why in one line; nothing more runs.
- The relay answers the shell's gate channel (:mod:`gatesh.pty.channel`) with its
  :class:`~gatesh.pty.gatekeeper.Gatekeeper`, in worker threads, so the terminal keeps flowing
  while a decision waits; requests from subshells come on a socket in the session's folder.
- When the session's operator is a person, an escalation is asked at this terminal: the relay
  shows it and reads the answer from its own keyboard, then sends it to the daemon itself
  (:mod:`gatesh.pty.question`).
  Nothing inside the gated shell can answer for the person. Keys typed before the question was
  shown stay the shell's; only keys typed after it count as the answer.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import queue
import select
import signal
import socket
import struct
import termios
import threading
import time
import tty
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ptyprocess

from gatesh import _person
from gatesh._wire_base import CheckResult
from gatesh.pty.channel import FrameError, Framer, Reply, Request, Status, open_coprocess
from gatesh.pty.gatekeeper import Gatekeeper
from gatesh.pty.question import Question, crlf

__all__ = ["Ends", "Relay", "make_ends", "spawn"]

# Read size for the shell's output: as much as the PTY holds, in one system call.
READ_SIZE = 1 << 17
# A request from a subshell's `gatesh _gate` larger than this is not one (channel.MAX_REQUEST).
MAX_SUB_REQUEST = 4 * 1024 * 1024
# How long a subshell's connection may take to send its request.
SUB_READ_TIMEOUT_S = 10.0
# How long a shell has to exit once its session is ended (a hang-up, SIGTERM, a channel that
# failed) before it is killed; and how long after that the relay waits for the PTY to close (a
# program the shell started may hold it) before it ends anyway.
END_GRACE_S = 3.0


def spawn(
    argv: list[str],
    env: dict[str, str],
    size: tuple[int, int],
    pass_fds: tuple[int, ...],
    confine: Callable[[], None] | None = None,
) -> Any:
    """Start the gated shell in a new PTY: the one place a session's shell is started.

    The shell carries the gate's mark from its first instruction: all it starts is known for a
    gated session's, never a person's (gatesh._person; the daemon marks it again when it
    registers). ``confine`` puts it inside the session's boundary before it starts (an agent's
    session: gatesh.pty.confine).
    """

    def start() -> None:
        _person.mark()
        if confine is not None:
            confine()

    return ptyprocess.PtyProcess.spawn(
        argv, env=env, dimensions=size, pass_fds=pass_fds, preexec_fn=start
    )


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


@dataclass
class Ends:
    """The gate channel's descriptors: what the shell inherits (``pass_fds``, named in ``env``)
    and the relay's own ends (bash: ``hand``, where the coprocess's pid arrives; zsh: the two
    pipes). ``socket`` is the path subshells reach the relay by."""

    env: dict[str, str]
    pass_fds: tuple[int, ...]
    hand: int = -1
    requests: int = -1
    replies: int = -1
    socket: str = ""

    def close_child_ends(self) -> None:
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def make_ends(shell: str, folder: str) -> Ends:
    """Make the channel's descriptors for a ``shell`` session whose folder is ``folder``."""
    sock = os.path.join(folder, "gate.sock")
    if shell == "zsh":
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        for fd in (req_w, rep_r):
            os.set_inheritable(fd, True)
        return Ends(
            {"GATESH_CHAN_W": str(req_w), "GATESH_CHAN_R": str(rep_r), "GATESH_GATE_SOCKET": sock},
            (req_w, rep_r),
            requests=req_r,
            replies=rep_w,
            socket=sock,
        )
    hand_r, hand_w = os.pipe()
    os.set_inheritable(hand_w, True)
    return Ends(
        {"GATESH_HAND": str(hand_w), "GATESH_GATE_SOCKET": sock},
        (hand_w,),
        hand=hand_r,
        socket=sock,
    )


class Relay:
    """One shell in a PTY, the loop that connects it to this process's stdin and stdout, and the
    gate its hook asks (when ``gate`` and ``ends`` are given)."""

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        *,
        gate: Gatekeeper | None = None,
        ends: Ends | None = None,
        stdin: int = 0,
        stdout: int = 1,
        confine: Callable[[], None] | None = None,
    ) -> None:
        self.stdin, self.stdout = stdin, stdout
        self.stdin_tty = os.isatty(stdin)
        size = _winsize(stdin) or _winsize(stdout) or (24, 80)
        self.gate, self.ends = gate, ends
        env = dict(env)
        if ends is not None:
            env.update(ends.env)
        self.child = spawn(argv, env, size, ends.pass_fds if ends else (), confine)
        if ends is not None:
            ends.close_child_ends()
        self.master = self.child.fd
        self.pending_to_child = bytearray()
        self.coproc_pid = 0
        self.framer = Framer()
        self.requests: queue.SimpleQueue[Request | None] = queue.SimpleQueue()
        self.notes: queue.SimpleQueue[tuple[str, threading.Event] | Question] = queue.SimpleQueue()
        self.asking: Question | None = None
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        self.sub_server: socket.socket | None = None
        self.ending = 0.0  # when the session was ended: the deadline for its shell to exit
        self.ending_why = ""
        self.killed = False
        self.channel_failed = ""  # set by the channel's thread: the session must end
        if gate is not None:
            gate.say = self.say
            if gate.operator == "person":
                gate.ask = self.ask
        if ends is not None and gate is not None:
            if ends.socket:
                self.sub_server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sub_server.bind(ends.socket)
                os.chmod(ends.socket, 0o600)
                self.sub_server.listen(16)
            threading.Thread(target=self._serve_channel, name="gate-channel", daemon=True).start()

    # --- what workers ask of the loop ----------------------------------------------------------

    def say(self, text: str) -> None:
        """Print one line on the terminal, after what the shell printed so far (from any thread)."""
        done = threading.Event()
        self.notes.put((text, done))
        self._wake()
        done.wait(5.0)

    def ask(self, pending_id: str, block: str, kind: str = "escalate") -> CheckResult:
        """Ask the person at this terminal; the daemon's reply to their answer as the check's
        result (from a worker)."""
        question = Question(pending_id, block, "halt" if kind == "halt" else "escalate")
        self.notes.put(question)
        self._wake()
        question.done.wait()
        return question.reply

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self.wake_w, b"\0")

    # --- the loop ---------------------------------------------------------------------------

    def run(self) -> int:
        """Relay until the shell's side of the PTY closes; the shell's exit status."""
        sig_r, sig_w = os.pipe()
        os.set_blocking(sig_r, False)
        os.set_blocking(sig_w, False)
        old_wakeup = signal.set_wakeup_fd(sig_w)
        handled = (signal.SIGWINCH, signal.SIGHUP, signal.SIGTERM, signal.SIGCONT)
        old_handlers = {sig: signal.signal(sig, lambda *_: None) for sig in handled}
        saved = termios.tcgetattr(self.stdin) if self.stdin_tty else None
        try:
            if saved is not None:
                tty.setraw(self.stdin, termios.TCSANOW)
            self._loop(sig_r)
        finally:
            if saved is not None:
                with contextlib.suppress(termios.error):
                    termios.tcsetattr(self.stdin, termios.TCSADRAIN, saved)
            signal.set_wakeup_fd(old_wakeup)
            for sig, handler in old_handlers.items():
                signal.signal(sig, handler)
            os.close(sig_r)
            os.close(sig_w)
            self._close()
        return self._status()

    def _close(self) -> None:
        self.requests.put(None)
        if self.gate is not None:
            self.gate.link.close()
        if self.sub_server is not None:
            self.sub_server.close()
        if self.coproc_pid:
            with contextlib.suppress(OSError):
                os.kill(self.coproc_pid, signal.SIGTERM)
        ends = self.ends
        if ends is not None:
            for fd in (ends.hand, ends.requests, ends.replies):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
        if self.asking is not None:
            self.asking.reply = CheckResult.refused("gatesh: the session ended.")
            self.asking.done.set()

    def _loop(self, sig_r: int) -> None:
        master, stdin = self.master, self.stdin
        stdin_open = True
        os.set_blocking(master, False)
        while True:
            readers = [master, sig_r, self.wake_r]
            if stdin_open:
                readers.append(stdin)
            ends = self.ends
            if ends is not None and ends.hand >= 0:
                readers.append(ends.hand)
            if ends is not None and ends.requests >= 0:
                readers.append(ends.requests)
            if self.sub_server is not None:
                readers.append(self.sub_server.fileno())
            writers = [master] if self.pending_to_child else []
            wait = None
            if self.ending:
                wait = max(0.0, self.ending - time.monotonic())
            try:
                ready, can_write, _ = select.select(readers, writers, [], wait)
            except InterruptedError:
                continue
            if self.ending and time.monotonic() >= self.ending:
                if self.killed:  # the shell is gone; what still holds its PTY goes with it
                    return
                self._kill_shell()
                continue
            if master in ready and not self._from_shell():
                return
            if sig_r in ready:
                self._signals(sig_r)
            if self.wake_r in ready:
                self._notes()
            if stdin_open and stdin in ready:
                data = os.read(stdin, READ_SIZE)
                if not data:
                    stdin_open = False
                    if not self.stdin_tty:  # a pipe ended: the terminal's end-of-file
                        self.pending_to_child += self._eof_char()
                elif self.asking is not None:
                    self._answer_keys(data)
                else:
                    if self.gate is not None and self._intr_char() in data:
                        # The shell is interrupted: a check a person is being asked about is
                        # withdrawn, so the channel answers the shell's next line at once (S10).
                        self.gate.link.withdraw()
                    self.pending_to_child += data
            if can_write and self.pending_to_child:
                try:
                    n = os.write(master, self.pending_to_child)
                    del self.pending_to_child[:n]
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    self.pending_to_child.clear()
            if ends is not None and ends.hand >= 0 and ends.hand in ready:
                self._handoff()
            if ends is not None and ends.requests >= 0 and ends.requests in ready:
                self._channel_bytes()
            if self.sub_server is not None and self.sub_server.fileno() in ready:
                self._accept_sub()

    def _from_shell(self) -> bool:
        """Copy what the shell printed; False once the shell's side is gone."""
        try:
            data = os.read(self.master, READ_SIZE)
        except BlockingIOError:
            return True
        except OSError as exc:  # EIO: the shell and everything on its PTY are gone
            if exc.errno != errno.EIO:
                raise
            return False
        if data == b"":
            return False
        _write_all(self.stdout, data)
        return True

    def _drain_shell(self) -> None:
        """Print everything the shell has printed so far (before a line of the relay's own)."""
        for _ in range(64):
            try:
                data = os.read(self.master, READ_SIZE)
            except OSError:
                return
            if not data:
                return
            _write_all(self.stdout, data)

    def _notes(self) -> None:
        with contextlib.suppress(BlockingIOError):
            os.read(self.wake_r, 4096)
        if self.channel_failed and not self.ending:
            self.end_session(self.channel_failed)
            self.ending = time.monotonic()  # nothing can be decided for the shell: end it now
        while True:
            try:
                note = self.notes.get_nowait()
            except queue.Empty:
                return
            if isinstance(note, Question):
                self._show_question(note)
                continue
            text, done = note
            self._drain_shell()
            _write_all(self.stdout, ("\r\n" + crlf(text) + "\r\n").encode("utf-8", "replace"))
            done.set()

    # --- the gate channel -----------------------------------------------------------------------

    def _handoff(self) -> None:
        """bash wrote its coprocess's pid: open the coprocess's pipes (the channel)."""
        ends = self.ends
        assert ends is not None
        try:
            data = os.read(ends.hand, 64)
        except OSError:
            data = b""
        with contextlib.suppress(OSError):
            os.close(ends.hand)
        ends.hand = -1
        text = data.decode("ascii", "replace").strip()
        try:
            if not text.isdigit():
                raise OSError(f"the shell handed over no coprocess ({text[:20]!r})")
            ends.requests, ends.replies = open_coprocess(self.child.pid, int(text))
            self.coproc_pid = int(text)
        except OSError as exc:
            # No channel, no gate: the session ends rather than run a shell nothing decides for.
            ends.requests = ends.replies = -1
            self._drain_shell()
            _write_all(
                self.stdout,
                f"\r\ngatesh: the gate channel of this shell could not be opened ({exc}); "
                "the session ends.\r\n".encode("utf-8", "replace"),
            )
            with contextlib.suppress(OSError):
                self.child.kill(signal.SIGKILL)

    def _channel_bytes(self) -> None:
        ends = self.ends
        assert ends is not None
        try:
            data = os.read(ends.requests, READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            with contextlib.suppress(OSError):
                os.close(ends.requests)
            ends.requests = -1
            return
        try:
            for request in self.framer.feed(data):
                self.requests.put(request)
        except FrameError as exc:
            self.requests.put(Request("error", "0", (str(exc),)))

    def _serve_channel(self) -> None:
        """The main shell's requests, one at a time, in order (the shell waits for each). When a
        reply cannot be written the shell can never be answered again: the session ends."""
        while True:
            request = self.requests.get()
            if request is None:
                return
            gate, ends = self.gate, self.ends
            if gate is None or ends is None:
                return
            reply = gate.handle(request)
            try:
                _write_all(ends.replies, reply.encode(request.seq))
            except (OSError, ValueError) as exc:
                self.channel_failed = f"the gate's channel to this shell failed ({exc})"
                self._wake()
                return

    def _accept_sub(self) -> None:
        assert self.sub_server is not None
        try:
            conn, _ = self.sub_server.accept()
        except OSError:
            return
        threading.Thread(target=self._serve_sub, args=(conn,), name="gate-sub", daemon=True).start()

    def _serve_sub(self, conn: socket.socket) -> None:
        """One request from a subshell's `gatesh _gate`: read it, answer it, hang up. When the
        subshell hangs up first (Ctrl-C interrupted it, or it was killed), the checks its request
        has open are withdrawn: nobody is left to run what a person would allow (S10)."""
        with conn:
            conn.settimeout(SUB_READ_TIMEOUT_S)
            framer = Framer()
            found: list[Request] = []
            try:
                while not found:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    found = framer.feed(chunk)
            except (OSError, FrameError):
                return
            gate = self.gate
            assert gate is not None
            if found[0].kind == "error":
                reply = Reply(Status.NO)
            else:
                answered = self._answer_sub(gate, found[0], conn)
                if answered is None:
                    return
                reply = answered
            with contextlib.suppress(OSError):
                conn.sendall(reply.encode(found[0].seq))

    def _answer_sub(self, gate: Gatekeeper, request: Request, conn: socket.socket) -> Reply | None:
        """``gate``'s answer to a subshell's request, decided in a thread of its own while
        ``conn`` is watched; None when the subshell hung up first (its open checks withdrawn)."""
        answers: list[Reply] = []
        done_r, done_w = os.pipe()

        def work() -> None:
            try:
                answers.append(gate.handle(request))
            finally:
                os.close(done_w)

        worker = threading.Thread(target=work, name="gate-sub-check", daemon=True)
        try:
            worker.start()
            ready, _, _ = select.select([conn.fileno(), done_r], [], [])
            if done_r not in ready:  # anything from a `gatesh _gate` after its request: its end
                gate.link.withdraw(owner=worker.ident or 0)
                worker.join()
                return None
            worker.join()
        finally:
            os.close(done_r)
        return answers[0] if answers else Reply(Status.NO)

    # --- signals, end ---------------------------------------------------------------------------

    def _signals(self, sig_r: int) -> None:
        try:
            received = os.read(sig_r, 512)
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
                self.end_session(f"the session was ended ({signal.Signals(signum).name})")

    def end_session(self, why: str) -> None:
        """End the session (from the loop's thread): its shell has :data:`END_GRACE_S` to exit,
        then it is killed, saying ``why``."""
        if not self.ending:
            self.ending = time.monotonic() + END_GRACE_S
            self.ending_why = why

    def _kill_shell(self) -> None:
        """Kill the shell that did not exit when its session ended (or that the gate can no longer
        answer), saying so in one line."""
        self.killed = True
        self.ending = time.monotonic() + END_GRACE_S
        if not self.child.isalive():
            return
        self._drain_shell()
        with contextlib.suppress(OSError):
            _write_all(
                self.stdout,
                f"\r\ngatesh: {self.ending_why}, so its shell was killed: nothing more runs "
                "in it.\r\n".encode("utf-8", "replace"),
            )
        with contextlib.suppress(OSError):
            self.child.kill(signal.SIGKILL)

    def _intr_char(self) -> bytes:
        """The key that interrupts the shell (its PTY's VINTR; none when signals are off)."""
        try:
            attrs = termios.tcgetattr(self.master)
        except termios.error:
            return b"\x03"
        if not attrs[3] & termios.ISIG:
            return b"\xff\xff"  # never in a read of keys that interrupt
        intr = attrs[6][termios.VINTR]
        return intr if isinstance(intr, bytes) else bytes([intr])

    def _eof_char(self) -> bytes:
        try:
            eof = termios.tcgetattr(self.master)[6][termios.VEOF]
        except termios.error:
            return b"\x04"
        return eof if isinstance(eof, bytes) else bytes([eof])

    def _status(self) -> int:
        with contextlib.suppress(Exception):
            self.child.close(force=False)
        if self.child.isalive():  # the PTY closed but the shell did not end: no shell outlives it
            with contextlib.suppress(OSError):
                self.child.kill(signal.SIGKILL)
        try:
            self.child.wait()
        except ptyprocess.PtyProcessError:
            pass
        if self.child.signalstatus:
            return 128 + int(self.child.signalstatus)
        return int(self.child.exitstatus or 0)

    # --- asking the person (operator person only) ---------------------------------------------

    def _show_question(self, question: Question) -> None:
        # Keys already typed are type-ahead for the shell: only keys typed after the question is
        # on the screen answer it.
        self._take_typeahead()
        self._drain_shell()
        self.asking = question
        _write_all(self.stdout, question.prompt().encode("utf-8", "replace"))

    def _take_typeahead(self) -> None:
        if not self.stdin_tty:
            return
        for _ in range(64):
            ready, _, _ = select.select([self.stdin], [], [], 0)
            if not ready:
                return
            data = os.read(self.stdin, READ_SIZE)
            if not data:
                return
            self.pending_to_child += data

    def _answer_keys(self, data: bytes) -> None:
        question = self.asking
        assert question is not None
        ending, rest = question.keys(data, self._echo)
        if ending is None:
            return
        self.asking = None
        question.finish(ending, self._echo)
        # The question is over: what follows in this read is the shell's.
        self.pending_to_child += rest

    def _echo(self, data: bytes) -> None:
        _write_all(self.stdout, data)

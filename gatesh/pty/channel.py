"""The gate channel between a gated shell's hook and its session's relay (S10, S14).

Every decision the shell needs — a line typed at the prompt, a command no decided line covers, a
prompt string that changed — is one request on this channel, answered by the relay, which stays
up for the whole session: no process is started per command.

How the shell gets a channel its commands cannot reach:

- **bash** marks no descriptor it opens close-on-exec, except a coprocess's: the rc file gatesh
  writes starts ``coproc`` first thing (a process that only waits: it never reads), writes the
  coprocess's pid on a pipe the relay passed in, and closes that pipe. The relay opens the
  coprocess's two pipes through ``/proc/PID/fd`` (after checking the process is the shell's
  child and its pipes are the shell's). bash closes a coprocess's descriptors in every subshell
  and every program it starts, so only the shell itself holds them.
- **zsh**: the relay passes the shell two pipes; the ``.zshenv`` gatesh writes opens them again
  close-on-exec (``sysopen -o cloexec``) and closes the originals. Subshells keep them (zsh
  forks without exec) and take a lock around each request.

Wire format (chosen so a shell writes it with one ``printf`` and reads it with one ``read``):

- request: ``KIND NUL SEQ NUL N NUL FIELD1 NUL … FIELDN NUL`` (a shell string cannot hold NUL);
- reply: one line, fields separated by US (0x1f): ``SEQ US STATUS US FLAGS US MESSAGE US
  PRINTED…``; ``MESSAGE`` has ``\\`` and newline escaped as ``\\\\`` and ``\\n``; each PRINTED
  string is a command the hook may remember as covered (strings holding a newline or US are left
  out: the hook asks about them instead).
"""

from __future__ import annotations

import enum
import os
import stat
import time
from dataclasses import dataclass, field
from typing import Final

from gatesh._errors import GateshError, ProtocolError

__all__ = [
    "MAX_REQUEST",
    "Framer",
    "Reply",
    "Request",
    "Status",
    "open_coprocess",
]

# A request larger than this is refused, not truncated (the reader's own limit is 64 KiB, S2; a
# line with its history entry and the values it names stays well under it).
MAX_REQUEST: Final = 4 * 1024 * 1024
# Most fields a request may have (positional parameters and variable values included).
MAX_FIELDS: Final = 4096
# Replies carry at most this many printed commands (the hook asks about the rest).
MAX_PRINTED: Final = 256
US: Final = "\x1f"


class Status(enum.StrEnum):
    """What a reply tells the hook."""

    OK = "ok"  # run it
    NO = "no"  # refused: print the message, run nothing
    MORE = "more"  # the line is not complete yet: nothing decided, nothing may run


@dataclass(frozen=True)
class Request:
    """One request: its kind, the sequence number the reply repeats, and its fields."""

    kind: str
    seq: str
    fields: tuple[str, ...]


@dataclass(frozen=True)
class Reply:
    """One answer. ``keep``: an OK the hook may remember for this announcement wherever it runs
    (the line holds it); ``here``: an OK it may remember in this working directory only (a
    command decided on its own: the decision read the working tree); ``printed``: commands the
    hook may treat as covered without asking (for the current line, or while idle when ``idle``
    is set)."""

    status: Status
    message: str = ""
    printed: tuple[str, ...] = ()
    keep: bool = False
    idle: bool = False
    here: bool = False
    fields: tuple[str, ...] = field(default=())

    def encode(self, seq: str) -> bytes:
        flags = ("k" if self.keep else "") + ("i" if self.idle else "") + ("w" if self.here else "")
        message = self.message.replace("\\", "\\\\").replace("\n", "\\n").replace(US, " ")
        printed = [p for p in self.printed if "\n" not in p and US not in p and "\r" not in p]
        parts = [seq, self.status.value, flags, message, *self.fields, *printed[:MAX_PRINTED]]
        clean = [p.replace("\n", " ").replace(US, " ") for p in parts[:4]] + parts[4:]
        return (US.join(clean) + "\n").encode("utf-8", "surrogateescape")


class FrameError(ProtocolError):
    """The byte stream is not a request (too large, too many fields, a bad count)."""


class Framer:
    """Splits a byte stream into requests. Feed bytes; take whole requests as they complete."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def feed(self, data: bytes) -> list[Request]:
        self.buf += data
        if len(self.buf) > MAX_REQUEST:
            self.buf.clear()
            raise FrameError(f"a request larger than {MAX_REQUEST} bytes")
        out: list[Request] = []
        while True:
            request, used = _one(self.buf)
            if request is None:
                break
            del self.buf[:used]
            out.append(request)
        return out


def _one(buf: bytearray) -> tuple[Request | None, int]:
    """The first whole request in ``buf`` and the bytes it took, or (None, 0)."""
    head: list[str] = []
    pos = 0
    for _ in range(3):
        end = buf.find(b"\0", pos)
        if end < 0:
            return None, 0
        head.append(bytes(buf[pos:end]).decode("utf-8", "surrogateescape"))
        pos = end + 1
    kind, seq, count = head
    if not count.isdigit() or int(count) > MAX_FIELDS:
        raise FrameError(f"a request with a bad field count ({count[:20]!r})")
    fields: list[str] = []
    for _ in range(int(count)):
        end = buf.find(b"\0", pos)
        if end < 0:
            return None, 0
        fields.append(bytes(buf[pos:end]).decode("utf-8", "surrogateescape"))
        pos = end + 1
    return Request(kind, seq, tuple(fields)), pos


# --- bash: the coprocess's pipes ----------------------------------------------------------------


class ChannelError(GateshError, OSError):
    """The shell's channel could not be opened (the message says why)."""


def _ppid(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rsplit(b") ", 1)[1].split()[1])


def _pipe_id(path: str) -> tuple[int, int]:
    st = os.stat(path)
    if not stat.S_ISFIFO(st.st_mode):
        raise ChannelError(f"{path} is not a pipe")
    return st.st_dev, st.st_ino


# How long the coprocess may take to have its pipes in place (bash hands its pid over right
# after the fork, before the child has moved the pipes onto its standard input and output).
COPROC_READY_S: Final = 5.0


def open_coprocess(shell_pid: int, coproc_pid: int) -> tuple[int, int]:
    """The relay's ends of a bash coprocess's pipes: (read the shell's requests, write replies).

    Raises ChannelError unless ``coproc_pid`` is a child of ``shell_pid`` whose standard input and
    output are pipes the shell also holds (so nothing else can have handed in its own pid), once
    they are (waiting up to :data:`COPROC_READY_S` for the child to set them up).
    """
    deadline = time.monotonic() + COPROC_READY_S
    while True:
        try:
            return _open_coprocess(shell_pid, coproc_pid)
        except ChannelError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _open_coprocess(shell_pid: int, coproc_pid: int) -> tuple[int, int]:
    try:
        if _ppid(coproc_pid) != shell_pid:
            raise ChannelError(f"process {coproc_pid} is not the shell's coprocess")
        ours = {_pipe_id(f"/proc/{coproc_pid}/fd/{n}") for n in (0, 1)}
        theirs = set()
        for name in os.listdir(f"/proc/{shell_pid}/fd"):
            try:
                theirs.add(_pipe_id(f"/proc/{shell_pid}/fd/{name}"))
            except (OSError, ChannelError):
                continue
        if not ours <= theirs:
            raise ChannelError("the coprocess's pipes are not the shell's")
        requests = os.open(f"/proc/{coproc_pid}/fd/0", os.O_RDONLY | os.O_CLOEXEC)
        try:
            replies = os.open(f"/proc/{coproc_pid}/fd/1", os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            os.close(requests)
            raise
        return requests, replies
    except ChannelError:
        raise
    except (OSError, ValueError, IndexError) as exc:
        raise ChannelError(f"the shell's coprocess could not be opened ({exc})") from None

"""What the boundary contains, counted as knowledge (S4, S16; issue 30 item 7).

The builtin rater's verdict on a command that runs code gatesh did not read carries a gap
(:mod:`gatesh.rater.builtin.knowledge`): with a key, the cascade asks the model about it; a shell
script the reader could not read is refused outright (``reader.script-unread``). Where the command
will run inside a boundary the running kernel enforces, what such code can reach is no longer
"anything the user can": it cannot write gatesh's files, the harness settings, the shell startup
files or any other persistence place, cannot read the credential stores, cannot signal, trace or
change the limits of the daemon, and cannot reach the person's channel. The harm harness
(``benchmarks/harm.py --boundary on|off``) measures that containment on the project's bypass,
tamper and generalisation corpora (figures in docs/BENCHMARKS.md).

So, while a :class:`Containment` is active (:func:`containing`, set by the pipeline around the
rating when its caller says the command runs in such a boundary):

- the cascade lets a ``safe`` verdict whose every gap is a row of :data:`CONTAINED` stand without
  asking the model (:attr:`gatesh._types.Asked.CONTAINED`): "contained" counts as complete
  knowledge;
- the builtin rater does not refuse a shell script it could not read that lies inside the working
  tree (``reader.script-unread``): it rates the command as one that runs a program it did not
  read (the gap ``knowledge.program-unread``, a row of :data:`CONTAINED`).

Nothing is allowed on the strength of a boundary the running kernel lacks: :func:`here` is None
unless every protection of :data:`REQUIRED` holds (:mod:`gatesh.boundary.holds`), and the person's
kill switch (``boundary.enabled = false``) turns it off. What stays a question for the model (or a
refusal) whatever the boundary: a floor, a gap not in :data:`CONTAINED` (a path or program only
known when it runs, a host, a state verb, privilege, a remote, fed or rewritten code, a reader's
note), and every finding of a rule.

The context variable keeps the rater's interface unchanged (as :mod:`gatesh.undo.cover` does): a
rating made elsewhere (a test, the alignment contract, a hook whose harness runs the command
unconfined) is judged as without a boundary.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from gatesh._types import Gap
from gatesh.boundary import holds

__all__ = [
    "CONTAINED",
    "REQUIRED",
    "Contained",
    "Containment",
    "active",
    "contained",
    "containing",
    "here",
    "in_boundary",
    "of_state",
]


@dataclass(frozen=True)
class Contained:
    """A gap of the builtin's knowledge the boundary contains, and why."""

    gap: str
    why: str


#: The gaps "contained by the boundary" answers: each stands for code gatesh did not read that
#: runs in the working tree as the user, which the boundary keeps from everything outside it.
CONTAINED: Final[tuple[Contained, ...]] = (
    Contained(
        "knowledge.program-file",
        "an interpreter running a program file or module gatesh did not read: what it writes "
        "stays in the working tree, temporary folders and caches",
    ),
    Contained(
        "knowledge.local-program",
        "a program of the project or the user that gatesh did not read: the same domain holds it",
    ),
    Contained(
        "knowledge.inline-code",
        "inline code whose every effect the builtin does not model: the same domain holds it",
    ),
    Contained(
        "knowledge.program-unread",
        "a script gatesh could not read (written in this text, or missing when decided): the "
        "same domain holds it",
    ),
    Contained(
        "knowledge.project-code",
        "a build, test or package tool running the project's code: the same domain holds it",
    ),
)
_IDS: Final = frozenset(c.gap for c in CONTAINED)

#: The protections a boundary must have on this kernel for it to count: its writes and reads,
#: and everything that keeps the gate's processes and the person's channel out of reach.
REQUIRED: Final = (
    "writes",
    "reads",
    "truncate",
    "ptrace",
    "prlimit",
    "no-new-privs",
    "signals",
    "abstract-sockets",
)


@dataclass(frozen=True)
class Containment:
    """The boundary a command will run in, as this kernel enforces it (see :func:`here`)."""

    abi: int

    def why(self) -> str:
        """One clause for explain and the cascade's record."""
        return (
            f"it runs inside a boundary this kernel enforces (Landlock ABI {self.abi}): "
            "no write outside the working tree, temporary folders and caches, no credential "
            "store, no gatesh process or person's channel within reach"
        )


def here(enabled: bool = True) -> Containment | None:
    """The containment a command confined on this machine gets, or None: the kernel lacks one of
    :data:`REQUIRED` (or Landlock altogether), or the person switched the boundary off."""
    return of_state(holds.state(enabled))


def of_state(state: holds.State) -> Containment | None:
    """:func:`here` for what ``state`` says holds."""
    if not all(state.holds(p) for p in REQUIRED):
        return None
    return Containment(state.abi)


def in_boundary(pid: int) -> bool:
    """Whether process ``pid`` runs inside a boundary, as the kernel shows it: ``no_new_privs``
    and a seccomp filter, which :func:`gatesh.boundary._kernel.apply` sets before the Landlock
    domain (in the same call, failing as a whole) and which no process can clear. Landlock
    itself shows nothing in ``/proc``; so this is asked only of a process whose own gatesh said
    it confined it (an agent's PTY shell, :mod:`gatesh.pty.confine`), to tell a shell that
    really started inside its boundary from one that did not (False when unreadable)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:
        return False
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    return fields.get("NoNewPrivs", "").strip() == "1" and fields.get("Seccomp", "").strip() == "2"


_ACTIVE: contextvars.ContextVar[Containment | None] = contextvars.ContextVar(
    "gatesh_containment", default=None
)


def active() -> Containment | None:
    """The containment of the command being rated now, if any."""
    return _ACTIVE.get()


@contextlib.contextmanager
def containing(c: Containment | None) -> Iterator[None]:
    """Rate with ``c`` active (None: as without a boundary)."""
    token = _ACTIVE.set(c)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def contained(gaps: Iterable[Gap]) -> bool:
    """Whether every gap of ``gaps`` is one the boundary contains (False for none: nothing to
    contain is complete knowledge already)."""
    ids = [g.id for g in gaps]
    return bool(ids) and all(i in _IDS for i in ids)

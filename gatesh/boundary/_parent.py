"""Run an allowed command inside its boundary, wait for it, and pass its ending through (S16).

The ``-c`` client used to ``exec`` the real shell. To tell the agent *after* the command's own
output which boundary it ran in, something must outlive the command: this is the smallest
correct parent. Standard library only (built-in modules: ``posix``, ``_signal``).

Steps, numbered where they happen in :func:`run`:

1. Confine this process (:func:`gatesh.boundary._kernel.apply`): the parent and the command
   share the domain, so the child has nothing left to do between ``fork`` and ``exec`` (a child
   of a Python process that ran code would copy the pages it touched), and nothing the command
   does can reach further than the parent could.
2. Block the signals the parent relays, before ``fork`` (none is lost in between).
3. ``fork``. The child asks for SIGKILL when the parent dies (a parent killed outright must not
   leave its command running unseen), restores the signal dispositions and mask Python changed
   (``SIGPIPE`` and ``SIGXFSZ`` are ignored by the interpreter; a shell given them ignored could
   never take them back), and ``exec``s the shell. An ``exec`` that fails is reported through a
   close-on-exec pipe, which reads empty once the ``exec`` succeeded.
4. Once the ``exec`` went through, the caller's ``started`` runs (work that overlaps the
   command's run: the daemon connection the report goes on). Then wait in ``sigwaitinfo``: on
   SIGCHLD reap the child; a relayed signal sent by a process (a
   harness stopping its tool call) goes on to the child; one the terminal sent to the whole
   foreground group (Ctrl-C: ``si_code`` is the kernel's) already reached the child and is not
   sent twice. Stop signals are left alone: the terminal stops both, ``fg`` continues both.
5. Report the ending (the caller's ``report``: the daemon's audit line), then, when the command
   failed, the boundary's ``note`` on stderr, after everything the command printed.
6. End with the command's own ending: the same exit status, or death by the same signal
   (re-raised with its default action; no core file of the parent's own).
"""

import posix
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, NoReturn

    from gatesh.boundary._spec import Spec

__all__ = ["QUIET_SIGNALS", "run"]

if TYPE_CHECKING:
    import signal as _signal  # the same functions, typed
else:
    import _signal  # the C module alone: ``signal`` imports ``enum`` (~10 ms, S14)

# Relayed to the command when a process sends them to the parent (step 4).
_RELAYED = (
    _signal.SIGHUP,
    _signal.SIGINT,
    _signal.SIGQUIT,
    _signal.SIGTERM,
    _signal.SIGUSR1,
    _signal.SIGUSR2,
    _signal.SIGALRM,
    _signal.SIGWINCH,
    _signal.SIGCONT,
)
_WAITED = frozenset({*_RELAYED, _signal.SIGCHLD})
# si_code of a signal the kernel sent (a terminal's Ctrl-C, Ctrl-\, window size).
_SI_KERNEL = 0x80
# Endings that are no failure of the command's own: it was stopped from outside, or its reader
# went away. No note follows them.
QUIET_SIGNALS = frozenset(
    {_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP, _signal.SIGKILL, _signal.SIGPIPE}
)
# What the exit-error pipe carries (step 3): the errno of a failed exec, in decimal.
_EXEC_FAILED = 127


def run(
    real: str,
    argv: "list[str]",
    env: "Mapping[Any, Any]",
    spec: "Spec",
    *,
    report: "Callable[[int | None, int | None], None]",
    after: str = "",
    ruleset_fd: int = -1,
    started: "Callable[[], None] | None" = None,
) -> "NoReturn":
    """Run ``real`` with ``argv`` and ``env`` inside ``spec`` (the boundary the gate drew) and end
    this process as the command ended. ``report(status, signal)`` is called once the command
    ended (one of the two is None); ``spec.note`` is printed on stderr after a failure;
    ``after``, when given, last of all, whatever the ending (the undo line of S17).
    ``ruleset_fd``: the domain's rules as the daemon built them (:mod:`gatesh.boundary.handoff`),
    closed here. ``started()``, when given, is called once the command runs (its errors are
    ignored: it must not keep the command from being waited for).

    Raises :class:`gatesh.boundary._kernel.BoundaryError` (before anything ran) when the
    boundary cannot be applied; any later failure of the parent's own ends it with 126 after
    killing the command, never leaving it running unseen.
    """
    from gatesh.boundary import _kernel

    # 1. The domain, and what it asks of the environment (a private TMPDIR).
    _kernel.apply(spec, ruleset_fd)
    if spec.env:
        env = _with(env, spec.env)
    # 2. Relayed signals blocked.
    old_mask = _signal.pthread_sigmask(_signal.SIG_BLOCK, _WAITED)
    r, w = posix.pipe2(posix.O_CLOEXEC)
    _flush()
    parent = posix.getpid()
    # 3. The child.
    pid = posix.fork()
    if pid == 0:
        _child(real, argv, env, old_mask, w, parent)
    posix.close(w)
    try:
        got = posix.read(r, 32)
    except OSError:
        got = b""
    posix.close(r)
    if got:
        _, status = posix.waitpid(pid, 0)
        errno = int(got or b"0")
        _say(f"gatesh: cannot run {real}: {posix.strerror(errno)}")
        report(_EXEC_FAILED, None)
        posix._exit(_EXEC_FAILED)
    # 4. Wait, after what overlaps the command's run.
    if started is not None:
        try:
            started()
        except Exception:
            pass
    try:
        status = _wait(pid)
    except BaseException:
        try:
            posix.kill(pid, _signal.SIGKILL)
        except OSError:
            pass
        posix._exit(126)
    # 5. Report, then the note.
    code = posix.WEXITSTATUS(status) if posix.WIFEXITED(status) else None
    sig = posix.WTERMSIG(status) if posix.WIFSIGNALED(status) else None
    try:
        report(code, sig)
    except Exception:
        pass
    if (code is not None and code != 0) or (sig is not None and sig not in QUIET_SIGNALS):
        _say(spec.note)
    if after:
        _say_last(after)
    # 6. The same ending.
    _end(code, sig)


def _with(env: "Mapping[Any, Any]", extra: "tuple[tuple[str, str], ...]") -> "dict[Any, Any]":
    """``env`` with ``extra`` (name, value) set, keys and values as bytes when ``env``'s are."""
    out = dict(env)
    as_bytes = any(isinstance(k, bytes) for k in out)
    for k, v in extra:
        if as_bytes:
            out[k.encode("utf-8", "surrogateescape")] = str(v).encode("utf-8", "surrogateescape")
        else:
            out[k] = str(v)
    return out


def _child(
    real: str, argv: "list[str]", env: "Mapping[Any, Any]", mask: "Any", w: int, parent: int
) -> "NoReturn":
    """Step 3 in the child: never returns, never runs the interpreter's exit handlers."""
    try:
        from gatesh.boundary import _kernel

        _kernel.set_parent_death_signal(_signal.SIGKILL)
        if posix.getppid() != parent:
            posix._exit(126)  # the parent is already gone
        _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)
        _signal.signal(_signal.SIGXFSZ, _signal.SIG_DFL)
        _signal.pthread_sigmask(_signal.SIG_SETMASK, mask)
        posix.execve(real, argv, env)
    except OSError as exc:
        try:
            posix.write(w, str(exc.errno or 0).encode())
        except OSError:
            pass
    except BaseException:
        pass
    posix._exit(_EXEC_FAILED)


def _wait(pid: int) -> int:
    """Step 4: the child's wait status, relaying what processes send the parent meanwhile."""
    while True:
        got, status = posix.waitpid(pid, posix.WNOHANG)
        if got == pid:
            return status
        info = _signal.sigwaitinfo(_WAITED)
        sig = info.si_signo
        if sig == _signal.SIGCHLD:
            continue
        if info.si_code == _SI_KERNEL and sig != _signal.SIGCONT:
            continue  # the terminal sent it to the whole group: the child has it already
        try:
            posix.kill(pid, sig)
        except OSError:
            pass


def _end(code: "int | None", sig: "int | None") -> "NoReturn":
    """Step 6."""
    _flush()
    if sig is not None:
        from gatesh.boundary import _kernel

        _kernel.no_core_dumps()
        _signal.signal(sig, _signal.SIG_DFL)
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, {sig})
        posix.kill(posix.getpid(), sig)
        posix._exit(128 + sig)  # a signal that does not end a process (it was re-raised above)
    posix._exit(code if code is not None else 126)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


def _say_last(text: str) -> None:
    """``text`` as the last line on stderr (no blank line before it); never raises."""
    try:
        posix.write(2, (text.rstrip("\n") + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


def _say(text: str) -> None:
    """``text`` on stderr, on its own line; never raises."""
    if not text:
        return
    try:
        posix.write(2, ("\n" + text.rstrip("\n") + "\n").encode("utf-8", "replace"))
    except OSError:
        pass

"""Doctor's checks of the boundary (S16): which of its protections hold on this kernel, proven by
confining a child for real, and which routes run an allowed command inside it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from gatesh import _paths
from gatesh.doctor.check import Check, Status

if TYPE_CHECKING:
    from gatesh.config import Config

__all__ = ["BOUNDARY_ROUTES", "check_boundary"]

#: Which routes run a command inside its boundary, as CI's real harnesses show (README's table).
BOUNDARY_ROUTES: Final = (
    ("gatesh -c, the shims", "confined: each allowed command runs inside its own boundary"),
    (
        "Claude Code's, Codex's and Gemini CLI's hooks",
        "confined: the hook has the harness run the allowed command wrapped, inside its boundary",
    ),
    (
        "gatesh (an agent's interactive session)",
        "confined: its shell starts inside the session's boundary (a person's --human is not)",
    ),
)


def check_boundary(config: Config | None) -> list[Check]:
    """Which protections of the boundary hold here, proven by confining a child for real, and
    which routes are confined."""
    from gatesh.boundary import holds

    enabled = config.boundary.enabled if config is not None else True
    here = holds.state(enabled)
    out: list[Check] = []
    if here.why_none:
        fix = (
            "set boundary.enabled = true in your config"
            if not enabled
            else "run on Linux 5.13 or newer with Landlock enabled (lsm=...,landlock)"
        )
        out.append(Check("boundary", Status.WARN, here.lines()[0], fix))
    else:
        missing = [p for p in holds.PROTECTIONS if not here.holds(p.id)]
        detail = f"Landlock ABI {here.abi}: " + (
            "every protection the kernel offers holds"
            if not missing
            else "these do not hold: " + "; ".join(f"{p.id} (needs ABI {p.abi})" for p in missing)
        )
        detail += "; open inside it: " + ", ".join(o.id for o in holds.OPENINGS) + " (below)"
        fix = "a newer kernel (Linux 6.12 offers every protection)" if missing else ""
        out.append(Check("boundary", Status.WARN if missing else Status.OK, detail, fix))
        held, probe = _probe_boundary()
        out.append(
            Check("boundary probe", Status.OK, probe)
            if held
            else Check("boundary probe", Status.FAIL, probe, "report this with `gatesh dump`")
        )
        reached, probe = _probe_pathname_socket()
        out.append(
            Check(
                "boundary open paths",
                Status.WARN if reached else Status.OK,
                f"{probe}: " + "; ".join(f"{o.id}: {o.what} ({o.why})" for o in holds.OPENINGS),
                "keep services a command must not reach off sockets your user can write to "
                f"(Landlock ABI {holds.RESOLVE_UNIX_ABI} could close them; gatesh does not use it yet)",
            )
        )
        out.append(
            Check(
                "boundary denials",
                Status.OK,
                "a command that fails inside its boundary: the agent is told which boundary it "
                f"ran in, not what was denied: {holds.denials()}",
            )
        )
    paths = _paths.current()
    runtime = os.path.realpath(paths.runtime_dir)
    if here.enabled and not here.why_none and runtime.startswith(("/tmp/", "/var/tmp/")):
        out.append(
            Check(
                "boundary tmp",
                Status.WARN,
                f"the socket folder {runtime} lies in a temporary folder, so a confined command "
                "cannot create files directly in it (TMPDIR points to a private folder instead)",
                "set XDG_RUNTIME_DIR (systemd's /run/user/UID) so the socket folder lives there",
            )
        )
    for route, what in BOUNDARY_ROUTES:
        if what.startswith("confined") and here.why_none:
            what = "not confined: this machine draws no boundary"
        out.append(Check(f"route {route}", Status.OK, what))
    return out


def _in_child(attempt: Callable[[], bytes]) -> bytes:
    """Run ``attempt`` in a forked child and return the one byte it answers (``E`` when it
    raised, ``?`` when it said nothing): a probe confines the child, never this process."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        code = b"?"
        try:
            code = attempt()
        except Exception:
            code = b"E"
        os.write(w, code[:1])
        os._exit(0)
    os.close(w)
    got = os.read(r, 1)
    os.close(r)
    os.waitpid(pid, 0)
    return got


def _probe_pathname_socket() -> tuple[bool, str]:
    """Confine a child with its network closed and have it connect to a Unix socket with a path
    made outside its boundary: ``(True, what)`` when it connected (the opening is real here)."""
    import socket
    import tempfile

    def attempt(path: str) -> bytes:
        from gatesh.boundary import _kernel, _spec

        abi = _kernel.abi()
        scope = _spec.SCOPE_NAMES if abi >= 6 else ()
        rules = _spec.Rules(abi, read=("/",), list=("/",), net=_spec.Ports(), scope=scope)
        _kernel.apply(_spec.Spec(rules))
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            try:
                s.connect(path)
                return b"C"
            except PermissionError:
                return b"R"

    with tempfile.TemporaryDirectory(prefix="gatesh-probe-") as base:
        path = os.path.join(base, "service")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            listener.bind(path)
            listener.listen(1)
            got = _in_child(lambda: attempt(path))
    if got == b"C":
        return True, "a child confined with its network closed connected to a socket made outside"
    if got == b"R":
        return False, "the kernel refused a confined child a socket made outside"
    return True, "a child could not be confined to try a socket made outside"


def _probe_boundary() -> tuple[bool, str]:
    """Confine a child to one folder and try a write beside it: ``(True, what)`` when the kernel
    refused it, ``(False, what)`` when the write went through or the boundary could not be set up."""
    import tempfile

    def attempt(inside: str, outside: str) -> bytes:
        from gatesh.boundary import _kernel, _spec

        rules = _spec.Rules(_kernel.abi(), read=("/",), write=(inside,), list=("/",))
        _kernel.apply(_spec.Spec(rules))
        with open(os.path.join(inside, "x"), "w") as f:
            f.write("x")
        try:
            with open(outside, "w") as f:
                f.write("x")
            return b"W"
        except PermissionError:
            return b"K"

    with tempfile.TemporaryDirectory(prefix="gatesh-probe-") as base:
        inside, outside = os.path.join(base, "in"), os.path.join(base, "out")
        os.mkdir(inside)
        got = _in_child(lambda: attempt(inside, outside))
    if got == b"K":
        return True, "a confined child wrote its own folder and was refused the one beside it"
    if got == b"W":
        return False, "the kernel let a confined child write outside its boundary"
    return False, "a child could not be confined"

"""The boundary in real processes (S16): the domain the kernel enforces, and the ``-c`` client's
parent, which passes the command's exit status, its signals and its terminal through unchanged
and tells the agent, after the command's own output, which boundary it ran in.

Every command here writes only inside the test's own scratch folders.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gatesh.boundary import _kernel, holds
from gatesh.boundary._spec import Ports, Rules, Spec

pytestmark = pytest.mark.slow

NOTE = "ran inside its boundary"


@pytest.fixture(autouse=True)
def _landlock() -> None:
    why = holds.needs("writes")
    if why:
        pytest.skip(why)


def _spec(
    read: tuple[str, ...] = ("/",),
    write: tuple[str, ...] = (),
    scope: tuple[str, ...] = (),
    limits: tuple[tuple[str, int], ...] = (),
    net: Ports | None = None,
) -> Spec:
    """A boundary as the gate draws one, with these places (every folder listable)."""
    rules = Rules(_kernel.abi(), read=read, write=write, list=("/",), net=net, scope=scope)
    return Spec(rules, limits)


def _in_child(spec: Spec, fn) -> int:  # type: ignore[no-untyped-def]
    """Run ``fn`` in a forked child confined to ``spec``; its exit status (0: fn returned True)."""
    pid = os.fork()
    if pid == 0:
        try:
            _kernel.apply(spec)
            os._exit(0 if fn() else 1)
        except BaseException:
            os._exit(2)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _denied(action) -> bool:  # type: ignore[no-untyped-def]
    try:
        action()
    except PermissionError:
        return True
    return False


def test_a_domain_allows_its_roots_and_nothing_else(tmp_path: Path) -> None:
    inside, outside, secret = tmp_path / "in", tmp_path / "out", tmp_path / "secret"
    for d in (inside, outside, secret):
        d.mkdir()
    (secret / "key").write_text("k")
    spec = _spec(("/usr", "/etc", "/proc", "/dev", str(inside), str(outside)), (str(inside),))

    def probe() -> bool:
        (inside / "ok").write_text("x")
        return (
            _denied(lambda: (outside / "no").write_text("x"))
            and _denied(lambda: (secret / "key").read_text())
            and _denied(lambda: os.truncate(outside.parent / "secret" / "key", 0))
        )

    assert _in_child(spec, probe) == 0
    assert (inside / "ok").exists() and not (outside / "no").exists()
    assert (secret / "key").read_text() == "k"


def test_a_domain_keeps_signals_and_limits_of_processes_outside(tmp_path: Path) -> None:
    why = holds.needs("signals")
    if why:
        pytest.skip(why)
    import resource

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        spec = _spec(write=(str(tmp_path),), scope=("signal",))

        def probe() -> bool:
            def limit() -> None:
                resource.prlimit(other.pid, resource.RLIMIT_NOFILE, (1, 1))

            return _denied(lambda: os.kill(other.pid, signal.SIGTERM)) and _denied(limit)

        assert _in_child(spec, probe) == 0
        assert other.poll() is None
        assert resource.prlimit(other.pid, resource.RLIMIT_NOFILE)[0] > 1
    finally:
        other.kill()
        other.wait()


def test_limits_are_lowered_never_raised(tmp_path: Path) -> None:
    import resource

    spec = _spec(limits=(("cpu", 10**9), ("fsize", 1 << 20)))

    def probe() -> bool:
        cpu = resource.getrlimit(resource.RLIMIT_CPU)
        fsize = resource.getrlimit(resource.RLIMIT_FSIZE)
        return fsize == (1 << 20, 1 << 20) and cpu[0] <= 10**9

    assert _in_child(spec, probe) == 0


def test_the_memory_limit_bounds_the_heap_not_the_reserved_address_space() -> None:
    """RLIMIT_DATA: a 64 GiB reservation nothing can write (as node, the JVM and Go make) fits
    under a 256 MiB limit; a 512 MiB heap does not."""
    import mmap

    spec = _spec(limits=(("data", 256 << 20),))

    def probe() -> bool:
        reserved = mmap.mmap(-1, 64 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=0)
        reserved.close()
        try:
            bytearray(512 << 20)
        except MemoryError:
            return True
        return False

    assert _in_child(spec, probe) == 0


def test_the_file_limit_stops_allocating_and_writing_past_it(tmp_path: Path) -> None:
    """RLIMIT_FSIZE bounds ``fallocate`` as it bounds ``write`` (EFBIG with SIGXFSZ ignored)."""
    import errno

    spec = _spec(write=(str(tmp_path),), limits=(("fsize", 1 << 20),))

    def probe() -> bool:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        refused = []
        fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            for act in (
                lambda: os.posix_fallocate(fd, 0, 2 << 20),
                lambda: os.pwrite(fd, b"x", 2 << 20),
            ):
                try:
                    act()
                except OSError as exc:
                    refused.append(exc.errno == errno.EFBIG)
        finally:
            os.close(fd)
        return refused == [True, True] and os.path.getsize(tmp_path / "f") <= 1 << 20

    assert _in_child(spec, probe) == 0


def _refused(family: int, kind: int) -> bool:
    """socket(family, kind) fails with the filter's EACCES (not, say, EPERM for a raw socket
    without CAP_NET_RAW, or EAFNOSUPPORT)."""
    import errno
    import socket

    try:
        socket.socket(family, kind).close()
    except OSError as e:
        return e.errno == errno.EACCES
    return False


def test_a_closed_network_refuses_every_socket_but_tcp_and_unix() -> None:
    """Landlock closes TCP connect and bind; the filter closes the rest of the Internet
    (UDP: a DNS name carries data to any resolver) and packet sockets, at socket()."""
    import socket

    spec = _spec(net=Ports())

    def probe() -> bool:
        refused = [
            _refused(socket.AF_INET, socket.SOCK_DGRAM),
            _refused(socket.AF_INET, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC),
            _refused(socket.AF_INET6, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK),
            _refused(socket.AF_INET6, socket.SOCK_RAW),
            _refused(socket.AF_PACKET, socket.SOCK_RAW),
        ]
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
            made = tcp.fileno() >= 0  # its connect is Landlock's to refuse
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        with a, b:
            a.send(b"x")
            unix = b.recv(1) == b"x"
        return all(refused) and made and unix

    assert _in_child(spec, probe) == 0


def test_an_open_network_keeps_udp() -> None:
    import socket

    def probe() -> bool:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.bind(("127.0.0.1", 0))
            udp.sendto(b"x", udp.getsockname())
            return udp.recv(1) == b"x"

    assert _in_child(_spec(), probe) == 0


# --- the -c client's parent ------------------------------------------------------------------------


# --- a ruleset the daemon built and handed over (gatesh.boundary.handoff) -------------------------


def _handed(spec: Spec) -> tuple[Spec, int]:
    from gatesh.boundary import handoff

    out, fd = handoff.for_client(spec)
    wire = out.encode()
    assert fd >= 0 and wire["ruleset"] == "fd" and not {"read", "write", "list"} & set(wire)
    return out, fd


def _in_child_handed(spec: Spec, fd: int, fn) -> int:  # type: ignore[no-untyped-def]
    """:func:`_in_child` with the domain's rules handed as ``fd`` (closed in the parent)."""
    pid = os.fork()
    if pid == 0:
        try:
            _kernel.apply(spec, fd)
            os._exit(0 if fn() else 1)
        except _kernel.BoundaryError:
            os._exit(3)
        except BaseException:
            os._exit(2)
    os.close(fd)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_a_handed_ruleset_confines_as_its_places_would(tmp_path: Path) -> None:
    inside, outside = tmp_path / "in", tmp_path / "out"
    inside.mkdir()
    outside.mkdir()
    spec, fd = _handed(
        _spec(
            ("/usr", "/etc", "/proc", "/dev", str(inside), str(outside)),
            (str(inside),),
            limits=(("fsize", 1 << 20),),
        )
    )
    assert spec.handed == 8

    def probe() -> bool:
        (inside / "ok").write_text("x")
        return _denied(lambda: (outside / "no").write_text("x"))

    assert _in_child_handed(spec, fd, probe) == 0
    assert (inside / "ok").exists() and not (outside / "no").exists()


def test_a_handed_ruleset_of_another_abi_or_no_ruleset_runs_nothing(tmp_path: Path) -> None:
    spec, fd = _handed(_spec(write=(str(tmp_path),)))
    other = Spec(Rules(_kernel.abi() + 1), handed=spec.handed)
    assert _in_child_handed(other, fd, lambda: True) == 3
    r, w = os.pipe()
    os.close(w)
    assert _in_child_handed(spec, r, lambda: True) == 3  # the kernel: EBADFD
    # Nothing was left open: every handed descriptor is closed, whatever the outcome.
    with pytest.raises(OSError):
        os.fstat(fd)


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    w = tmp_path / "work"
    w.mkdir()
    subprocess.run(["git", "init", "-q", str(w)], check=True)
    yield w


def _c(work: Path, command: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gatesh", "-c", command],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | {"GATESH_SESSION": f"k-{time.monotonic_ns()}"},
        **kw,  # type: ignore[arg-type]
    )


def test_the_exit_status_passes_through_and_a_failure_gets_the_note(work: Path) -> None:
    ok = _c(work, "echo out; echo err >&2")
    assert ok.returncode == 0 and ok.stdout == "out\n" and ok.stderr == "err\n"
    failed = _c(work, "echo out; exit 7")
    assert failed.returncode == 7 and failed.stdout == "out\n"
    assert NOTE in failed.stderr and "# why:" in failed.stderr


def test_a_signal_ends_the_client_as_it_ended_the_command(work: Path) -> None:
    term = _c(work, "kill -TERM $$")
    assert term.returncode == -signal.SIGTERM and NOTE not in term.stderr
    segv = _c(work, "kill -SEGV $$")
    assert segv.returncode == -signal.SIGSEGV and NOTE in segv.stderr


def test_sigpipe_is_the_command_s_own(work: Path) -> None:
    got = _c(work, "yes | head -1")
    assert got.returncode == 0 and got.stdout == "y\n" and "Broken pipe" not in got.stderr


def test_a_signal_sent_to_the_client_reaches_the_command(work: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gatesh",
            "-c",
            "trap 'echo got-term; exit 3' TERM; echo ready; while :; do sleep 0.1; done",
        ],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ | {"GATESH_SESSION": "k-relay"},
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3 and "got-term" in out, err


def test_the_kill_switch_runs_commands_as_before(work: Path) -> None:
    config = Path(os.path.expanduser("~/.config/gatesh/config.toml"))
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[boundary]\nenabled = false\n")
    outside = Path(os.path.expanduser("~")) / "written-by-an-unbounded-command"
    got = _c(work, f"echo x > {outside}; exit 4")
    assert got.returncode == 4 and NOTE not in got.stderr, got.stderr
    assert outside.exists()
    config.write_text("")
    inside = _c(work, f"echo x > {outside}.2; exit 4")
    assert inside.returncode == 4 and NOTE in inside.stderr and not Path(f"{outside}.2").exists()


def test_the_daemon_hands_the_client_its_ruleset(work: Path) -> None:
    from gatesh._wire import check

    assert _c(work, "true").returncode == 0  # the daemon is up
    got = check("echo hi", cwd=str(work), session="k-handed", surface="-c", ruleset=True)
    try:
        assert got.allowed and got.boundary is not None, got.message
        spec = Spec.decode(got.boundary)
        assert spec.handed > 0 and got.ruleset_fd >= 0 and "write" not in got.boundary
        assert spec.rules.abi == _kernel.abi() and spec.rules.write == () and spec.id != ""
        assert "landlock-ruleset" in os.readlink(f"/proc/self/fd/{got.ruleset_fd}")
    finally:
        if got.ruleset_fd >= 0:
            os.close(got.ruleset_fd)
    # A client that does not ask gets the places, as before.
    plain = check("echo hi", cwd=str(work), session="k-handed", surface="-c")
    assert plain.ruleset_fd == -1 and plain.boundary is not None and "write" in plain.boundary


def test_a_client_sent_a_boundary_it_cannot_decode_runs_nothing(tmp_path: Path) -> None:
    """The ``-c`` client decodes the boundary before anything else (gatesh.boundary.Spec):
    a spec of another version, or missing its limits, refuses the command (126) and nothing
    runs, confined or not."""
    from gatesh import client
    from gatesh._wire import CheckResult

    good = _spec(write=(str(tmp_path),)).encode()
    good["limits"] = {"nproc": 1 << 20, "data": 1 << 40, "fsize": 1 << 30, "cpu": 600}
    assert Spec.decode(good).rules.write == (str(tmp_path),)
    marker = tmp_path / "ran"
    for bad in (good | {"v": 2}, {k: v for k, v in good.items() if k != "limits"}):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the client's part, in a child: a wrong decode would confine only it
            os.close(r)
            sys.stderr = open(w, "w")  # the child's refusal, for the parent
            result = CheckResult("allow", boundary=bad)
            argv = ["sh", "-c", f"echo x > {marker}"]
            os._exit(client._run_bounded("/bin/sh", argv, {}, result))
        os.close(w)
        with os.fdopen(r) as err:
            said = err.read()
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 126, said
        assert "cannot read" in said and not marker.exists()


def test_a_hook_s_ticket_runs_its_command_inside_the_boundary_drawn_for_it(work: Path) -> None:
    """A hook's allowed check (``wraps``) comes back wrapped with a ticket; the ``-c`` client that
    redeems it gets the boundary that check drew, kept typed by the daemon
    (gatesh.boundary.tickets), and runs the command inside it: a write in the working tree goes
    through, one to the home folder fails. A ticket redeems once."""
    from gatesh._wire import check
    from gatesh.launcher import write_launcher

    launcher = Path(os.path.expanduser("~/.local/bin/gatesh"))  # what the wrapped command runs
    launcher.parent.mkdir(parents=True)
    write_launcher(str(launcher), fast=False)
    assert _c(work, "true").returncode == 0  # the daemon is up
    outside = Path(os.path.expanduser("~")) / "written-by-a-ticketed-command"
    command = f"echo x > made-here; echo x > {outside}"

    def ticket() -> tuple[str, Spec]:
        got = check(command, cwd=str(work), session="k-ticket", surface="hook", wraps=True)
        assert got.allowed and got.wrapped.startswith("GATESH_TICKET="), got.message
        return got.wrapped.split()[0].partition("=")[2], Spec.decode(got.boundary)

    def redeem(name: str) -> tuple[str, Spec]:
        got = check(command, cwd=str(work), session="k-ticket", surface="-c", ticket=name)
        assert got.allowed, got.message
        return str(got.decision.get("stage")), Spec.decode(got.boundary)

    name, drawn = ticket()
    assert redeem(name) == ("ticket", drawn)  # the very record the hook's check drew
    name, _ = ticket()
    ran = subprocess.run(
        [sys.executable, "-m", "gatesh", "-c", command],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | {"GATESH_SESSION": "k-ticket", "GATESH_TICKET": name},
    )
    assert ran.returncode != 0 and NOTE in ran.stderr, ran.stderr
    assert (work / "made-here").exists() and not outside.exists()
    assert redeem(name)[0] != "ticket"  # the run spent it

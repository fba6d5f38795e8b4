"""Linux Landlock, ``no_new_privs``, a seccomp filter and resource limits, applied to the calling
process and everything it starts (S16).

Standard library only, and only its cheapest parts: the ``-c`` client calls :func:`apply` just
before it forks the command (S14; :mod:`gatesh.boundary._parent`). The system calls go through
``_ctypes``, the C core of ``ctypes``: the ``ctypes`` package itself imports ``os``, ``struct``
and ``types`` (~2.5 ms on an interpreter started with ``-I -S``), ``_ctypes`` alone ~0.35 ms, and
it is all this needs (a variadic ``syscall``, ``prctl`` and ``prlimit`` from the C library). A
maintained binding would be a dependency the ``-c`` client cannot import, and none covers the
ABI 6 scopes.

What the kernel offers is read once (:func:`abi`) and used as far as it goes — a best-effort
downgrade, each step documented in :data:`FS_BY_ABI`, :func:`handled_net`, :func:`handled_scopes`:

    ABI 1 (5.13)  files: read, write, execute, make, remove (a cross-folder rename or link is refused)
    ABI 2 (5.19)  + renaming and linking across folders inside the boundary (``refer``)
    ABI 3 (6.2)   + truncation (before it, ``truncate`` of any file the user owns is not confined)
    ABI 4 (6.7)   + TCP bind and connect, by port
    ABI 5 (6.10)  + device ioctls (not used: see :data:`FS_BY_ABI`)
    ABI 6 (6.12)  + scopes: signals and abstract Unix sockets stay inside the domain
    ABI 7 (6.15)  + audit logging flags (not used: the kernel's audit log is root's to read)

Architectures: x86-64 and arm64 (the three Landlock system calls are 444–446 on both, and the
resource numbers below are those of every Linux but Alpha, MIPS and SPARC).
"""

import posix
import sys

from gatesh._errors import BoundaryError
from gatesh.boundary._spec import Ports, Rules, Spec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

__all__ = [
    "FS_ALL",
    "FS_READ",
    "FS_WRITE",
    "NET_BIND",
    "NET_CONNECT",
    "SCOPE_ABSTRACT",
    "SCOPE_SIGNAL",
    "BoundaryError",
    "abi",
    "apply",
    "handled_fs",
    "handled_net",
    "handled_scopes",
    "no_core_dumps",
    "ruleset",
    "seccomp_program",
    "set_parent_death_signal",
]

# --- the kernel's numbers (include/uapi/linux/landlock.h) ------------------------------------

_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_RULE_NET_PORT = 2
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_PDEATHSIG = 1
_RLIMIT_CORE = 4
_O_PATH = 0o10000000
_O_NOFOLLOW = getattr(posix, "O_NOFOLLOW", 0o400000)  # 0o100000 on arm64
_O_CLOEXEC = 0o2000000
_E2BIG = 7
_EINVAL = 22
_ENOSYS = 38
_EOPNOTSUPP = 95

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13
TRUNCATE = 1 << 14

#: The file-system rights each ABI can handle. Device ioctls (ABI 5) are left unhandled: the
#: terminal's own ioctls must keep working, and a domain cannot tell a terminal from another
#: device by path; keystroke injection (TIOCSTI) is the kernel's ``dev.tty.legacy_tiocsti``.
FS_BY_ABI = {
    1: (1 << 13) - 1,
    2: (1 << 14) - 1,
    3: (1 << 15) - 1,
}
FS_ALL = FS_BY_ABI[3]
#: Reading a file or folder listing, and running a program: what every place outside the
#: credential stores keeps.
FS_READ = READ_FILE | EXECUTE
#: Everything a working folder needs; device nodes are never made inside a boundary.
FS_WRITE = FS_ALL & ~(MAKE_CHAR | MAKE_BLOCK)
#: The rights a rule on a file (not a folder) may carry.
_FS_FILE = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE

NET_BIND = 1 << 0
NET_CONNECT = 1 << 1
SCOPE_ABSTRACT = 1 << 0
SCOPE_SIGNAL = 1 << 1

#: setrlimit resource numbers (Linux, generic): the wire's names for them. Memory is bounded as
#: RLIMIT_DATA (private writable mappings), not RLIMIT_AS (see gatesh.config.BoundaryConfig).
_RLIMITS = {"cpu": 0, "fsize": 1, "data": 2, "nproc": 6}  # by _spec.LIMIT_NAMES
#: The kernel's flag of each scope a boundary can name (:data:`_spec.SCOPE_NAMES`).
_SCOPES = {"signal": SCOPE_SIGNAL, "abstract-unix": SCOPE_ABSTRACT}


# --- the C library, through _ctypes --------------------------------------------------------

_syscall: "Callable[..., int] | None" = None
_prctl: "Callable[..., int] | None" = None
_prlimit: "Callable[..., int] | None" = None
_long: "Any" = None
_words: "Any" = None
_errno: "Callable[[], int] | None" = None
#: The 64-bit words of :data:`_words`, the one C buffer the boundary fills: a struct rlimit (2
#: words) or a seccomp filter (a word an instruction; the longest is 47). A type of ``ctypes``
#: costs a fresh client ~10-20 us to make (S14), so one serves both, made with the others.
_WORDS = 64


def _libc() -> None:
    """Bind ``syscall``, ``prctl`` and ``prlimit`` from the C library (once). Three types are
    made, what the calls need and no more: a C long (every argument and result), an array of
    :data:`_WORDS` of them (:data:`_words`) and the function pointer."""
    global _syscall, _prctl, _prlimit, _long, _words, _errno
    if _syscall is not None:
        return
    import _ctypes

    ct: Any = _ctypes  # typed loosely: its classes are made the way ctypes makes them

    class c_long(ct._SimpleCData):  # type: ignore[misc]  # what ctypes.c_long is
        _type_ = "l"

    class Words(ct.Array):  # type: ignore[misc]  # what c_long * _WORDS is
        _type_ = c_long
        _length_ = _WORDS

    class Fn(ct.CFuncPtr):  # type: ignore[misc]  # what ctypes.CDLL makes of a symbol
        _flags_ = ct.FUNCFLAG_CDECL | ct.FUNCFLAG_USE_ERRNO
        _restype_ = c_long

    lib = ct.dlopen(None, 2)  # ctypes.CDLL(None), RTLD_NOW: the program and its libraries
    _long = c_long
    _words = Words
    _syscall = Fn(ct.dlsym(lib, "syscall"))
    _prctl = Fn(ct.dlsym(lib, "prctl"))
    _prlimit = Fn(ct.dlsym(lib, "prlimit"))
    _errno = ct.get_errno


def _call(fn: "Callable[..., int] | None", *args: "Any") -> int:
    """``fn(*args)`` with every int passed as a C long; ``-errno`` on failure."""
    assert fn is not None and _errno is not None
    result = int(fn(*[_long(a) if isinstance(a, int) else a for a in args]))
    return -_errno() if result == -1 else result


_abi: int | None = None


def abi() -> int:
    """The Landlock ABI the running kernel offers: 0 when it has none (not Linux, older than
    5.13, or Landlock not enabled at boot), else 1, 2, …. Asked once per process."""
    global _abi
    if _abi is None:
        if not sys.platform.startswith("linux"):
            _abi = 0
        else:
            try:
                _libc()
                got = _call(_syscall, _SYS_CREATE_RULESET, 0, 0, _CREATE_RULESET_VERSION)
            except Exception:
                got = -_ENOSYS
            _abi = got if got > 0 else 0
    return _abi


def handled_fs(level: int) -> int:
    """The file-system rights a domain handles at ABI ``level`` (ABI 4 and later add none the
    boundary uses)."""
    return FS_BY_ABI[min(max(level, 1), 3)]


def handled_net(level: int) -> bool:
    """TCP bind and connect can be confined (ABI 4, Linux 6.7)."""
    return level >= 4


def handled_scopes(level: int) -> bool:
    """Signals and abstract Unix sockets can be scoped to the domain (ABI 6, Linux 6.12)."""
    return level >= 6


# --- seccomp: what Landlock leaves open ---------------------------------------------------------

#: Per audit architecture: its system call numbers for (prlimit64, ioctl, socket, socketcall;
#: 0: none). x86-64 also answers the i386 and x32 entries, arm64 the 32-bit arm one: a filter
#: that checked only the native numbers could be walked around through the other table. Only
#: i386 has ``socketcall`` (arm's is the old ABI's, which arm64 does not run).
_SECCOMP_ARCHES = {
    "x86_64": ((0xC000003E, 302, 16, 41, 0), (0x40000003, 340, 54, 359, 102)),
    "aarch64": ((0xC00000B7, 261, 29, 198, 0), (0x40000028, 369, 54, 281, 0)),
}
_X32_BIT = 0x40000000
_TIOCSTI = 0x5412
#: ``io_uring_setup``, the same number in every table: an io_uring creates sockets (and
#: connects them) without any system call this filter sees.
_IO_URING_SETUP = 425
_AF_INET = 2
_AF_INET6 = 10
_AF_PACKET = 17
_SOCK_STREAM = 1
#: The kernel reads a socket's type from the low 4 bits of ``type``; the rest are flags
#: (SOCK_NONBLOCK, SOCK_CLOEXEC).
_SOCK_TYPE_MASK = 0xF
_IPPROTO_TCP = 6
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_EPERM = 1
_EACCES = 13
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


def seccomp_program(machine: str, net_closed: bool = False) -> bytes | None:
    """The classic BPF filter the boundary adds (None on an architecture it does not know):

    - ``prlimit`` of another process with new limits is refused (EPERM). Landlock keeps ptrace
      and signals inside the domain, but the kernel lets a process change the limits of any
      process of its own user without asking an LSM: the daemon could be left unable to open a
      file. Reading limits, and setting one's own (pid 0, as ``setrlimit`` does), stay open.
    - ``ioctl(TIOCSTI)`` is refused: pushing keystrokes into the terminal's input would have a
      shell outside the boundary run them once the command ends.
    - ``net_closed`` (the boundary's network is closed: :attr:`Rules.net` is not None): Landlock
      confines TCP only (a stream socket of protocol 0 or TCP), so every other Internet socket
      is refused at ``socket`` — UDP (a DNS name carries data to any resolver), ICMP, raw,
      SCTP, MPTCP — and so are packet sockets, i386's ``socketcall`` (its arguments lie in
      memory the filter cannot read) and ``io_uring_setup`` (an io_uring opens sockets without
      a system call). Refused with EACCES, the error of Landlock's own refusal of a TCP connect
      and socket(2)'s word for a type the caller may not create: a program sees one error for a
      closed network, and none treats it as "this family is missing" (EAFNOSUPPORT) and falls
      back. Unix sockets stay open; an open network keeps the filter without these rules.

    Assembled from labelled instructions (:func:`_assemble`); a test runs it on every case.
    """
    arches = _SECCOMP_ARCHES.get(machine)
    if arches is None:
        return None
    deny = _SECCOMP_RET_ERRNO | _EPERM
    # struct seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8 * i (low word first).
    code: list[tuple[str, ...] | str] = []
    for i, (arch, prlimit_nr, ioctl_nr, socket_nr, socketcall_nr) in enumerate(arches):
        code += [
            f"arch{i}",
            ("ld", "4"),
            ("jeq", str(arch), "", f"arch{i + 1}"),
            ("ld", "0"),
            ("jeq", str(prlimit_nr), "prlimit", ""),
            ("jeq", str(prlimit_nr | _X32_BIT), "prlimit", ""),
            ("jeq", str(ioctl_nr), "ioctl", ""),
            ("jeq", str(ioctl_nr | _X32_BIT), "ioctl", ""),
        ]
        if net_closed:
            code += [
                ("jeq", str(socket_nr), "socket", ""),
                ("jeq", str(socket_nr | _X32_BIT), "socket", ""),
                ("jeq", str(_IO_URING_SETUP), "refuse", ""),
                ("jeq", str(_IO_URING_SETUP | _X32_BIT), "refuse", ""),
            ]
            if socketcall_nr:
                code.append(("jeq", str(socketcall_nr), "refuse", ""))
    code += [
        f"arch{len(arches)}",
        ("ret", str(_SECCOMP_RET_ALLOW)),
        "prlimit",
        ("ld", "16"),  # args[0], the pid: 0 is this process
        ("jeq", "0", "", "new"),
        ("ld", "20"),
        ("jeq", "0", "allow", "new"),
        "new",
        ("ld", "32"),  # args[2], the new limits: NULL only reads
        ("jeq", "0", "", "deny"),
        ("ld", "36"),
        ("jeq", "0", "allow", "deny"),
        "ioctl",
        ("ld", "24"),  # args[1], the request (an unsigned int: the low word)
        ("jeq", str(_TIOCSTI), "deny", "allow"),
    ]
    if net_closed:
        # socket(domain, type, protocol): three ints, so the low words are all the kernel reads.
        code += [
            "socket",
            ("ld", "16"),  # args[0], the family
            ("jeq", str(_AF_PACKET), "refuse", ""),
            ("jeq", str(_AF_INET), "inet", ""),
            ("jeq", str(_AF_INET6), "inet", "allow"),
            "inet",
            ("ld", "24"),  # args[1], the type and its flags
            ("and", str(_SOCK_TYPE_MASK)),
            ("jeq", str(_SOCK_STREAM), "", "refuse"),
            ("ld", "32"),  # args[2], the protocol: 0 is TCP for a stream
            ("jeq", "0", "allow", ""),
            ("jeq", str(_IPPROTO_TCP), "allow", "refuse"),
            "refuse",
            ("ret", str(_SECCOMP_RET_ERRNO | _EACCES)),
        ]
    code += [
        "deny",
        ("ret", str(deny)),
        "allow",
        ("ret", str(_SECCOMP_RET_ALLOW)),
    ]
    return _assemble(code)


def _assemble(code: "list[tuple[str, ...] | str]") -> bytes:
    """Classic BPF from ``("ld", K)``, ``("and", K)``, ``("ret", K)`` and
    ``("jeq", K, LABEL_TRUE, LABEL_FALSE)`` (an empty label: the next instruction), with labels
    as plain strings between them."""
    labels: dict[str, int] = {}
    n = 0
    for item in code:
        if isinstance(item, str):
            labels[item] = n
        else:
            n += 1
    out: list[bytes] = []
    pc = 0
    for item in code:
        if isinstance(item, str):
            continue
        op, k = item[0], int(item[1])
        jt = jf = 0
        if op == "jeq":
            jt = labels[item[2]] - pc - 1 if item[2] else 0
            jf = labels[item[3]] - pc - 1 if item[3] else 0
            if not (0 <= jt < 256 and 0 <= jf < 256):
                raise BoundaryError("seccomp filter: a jump out of range")
        opcode = {"ld": 0x20, "and": 0x54, "jeq": 0x15, "ret": 0x06}[op]
        out.append(
            opcode.to_bytes(2, sys.byteorder) + bytes((jt, jf)) + k.to_bytes(4, sys.byteorder)
        )
        pc += 1
    return b"".join(out)


#: :func:`seccomp_program`'s filters for each architecture, with the network open and closed,
#: assembled ahead (in hexadecimal, in the byte order of x86-64 and arm64, little-endian):
#: assembling one costs a fresh ``-c`` client ~30-60 us on the way to its command (S14). A test
#: pins each equal to what :func:`seccomp_program` assembles.
_SECCOMP_ASSEMBLED = {
    "x86_64": (
        (
            "2000000004000000150000053e0000c0200000000000000015000b002e01000015000a002e010040"
            "15001100100000001500100010000040200000000400000015000005030000402000000000000000"
            "1500040054010000150003005401004015000a00360000001500090036000040060000000000ff7f"
            "20000000100000001500000200000000200000001400000015000700000000002000000020000000"
            "15000004000000002000000024000000150003020000000020000000180000001500000112540000"
            "0600000001000500060000000000ff7f"
        ),
        (
            "2000000004000000150000093e0000c02000000000000000150014002e010000150013002e010040"
            "15001a0010000000150019001000004015001a0029000000150019002900004015002200a9010000"
            "15002100a901004020000000040000001500000a0300004020000000000000001500090054010000"
            "150008005401004015000f003600000015000e003600004015000f006701000015000e0067010040"
            "15001700a901000015001600a90100401500150066000000060000000000ff7f2000000010000000"
            "15000002000000002000000014000000150012000000000020000000200000001500000f00000000"
            "200000002400000015000e0d00000000200000001800000015000b0c125400002000000010000000"
            "15000800110000001500010002000000150000080a0000002000000018000000540000000f000000"
            "1500000301000000200000002000000015000300000000001500020006000000060000000d000500"
            "0600000001000500060000000000ff7f"
        ),
    ),
    "aarch64": (
        (
            "200000000400000015000005b70000c0200000000000000015000b000501000015000a0005010040"
            "150011001d000000150010001d000040200000000400000015000005280000402000000000000000"
            "1500040071010000150003007101004015000a00360000001500090036000040060000000000ff7f"
            "20000000100000001500000200000000200000001400000015000700000000002000000020000000"
            "15000004000000002000000024000000150003020000000020000000180000001500000112540000"
            "0600000001000500060000000000ff7f"
        ),
        (
            "200000000400000015000009b70000c0200000000000000015001300050100001500120005010040"
            "150019001d000000150018001d00004015001900c600000015001800c600004015002100a9010000"
            "15002000a90100402000000004000000150000092800004020000000000000001500080071010000"
            "150007007101004015000e003600000015000d003600004015000e001901000015000d0019010040"
            "15001600a901000015001500a9010040060000000000ff7f20000000100000001500000200000000"
            "2000000014000000150012000000000020000000200000001500000f000000002000000024000000"
            "15000e0d00000000200000001800000015000b0c1254000020000000100000001500080011000000"
            "1500010002000000150000080a0000002000000018000000540000000f0000001500000301000000"
            "200000002000000015000300000000001500020006000000060000000d0005000600000001000500"
            "060000000000ff7f"
        ),
    ),
}


def _seccomp(net_closed: bool) -> bool:
    """Install :func:`seccomp_program` (for a closed network or an open one) on this process
    (``no_new_privs`` must be set); False on an architecture it does not know. Raises
    BoundaryError when the kernel refuses it."""
    import _ctypes

    machine = posix.uname().machine
    both = _SECCOMP_ASSEMBLED.get(machine) if sys.byteorder == "little" else None
    prog = bytes.fromhex(both[net_closed]) if both is not None else None
    if prog is None:
        prog = seccomp_program(machine, net_closed)
    if prog is None:
        return False
    ct: Any = _ctypes
    count = len(prog) // 8
    # The program copied into C memory, a 64-bit instruction a word (one longer than _WORDS
    # gets an array type of its own length, made here: correct, only slower).
    if count <= _WORDS:
        buf = _words.from_buffer_copy(prog.ljust(8 * _WORDS, b"\0"))
    else:
        buf = (_long * count).from_buffer_copy(prog)
    fprog = count.to_bytes(2, sys.byteorder) + bytes(6) + _u64(ct.addressof(buf))
    if _call(_prctl, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, fprog, 0, 0) != 0:
        raise BoundaryError("prctl(PR_SET_SECCOMP) failed")
    return True


def set_parent_death_signal(sig: int) -> None:
    """Have the kernel send ``sig`` to this process when its parent thread dies (a fork's child
    of :mod:`gatesh.boundary._parent`). Raises BoundaryError when the kernel refuses."""
    _libc()
    if _call(_prctl, _PR_SET_PDEATHSIG, sig, 0, 0, 0) != 0:
        raise BoundaryError("prctl(PR_SET_PDEATHSIG) failed")


def no_core_dumps() -> None:
    """Lower this process's core file size to 0 (a parent re-raising its command's signal must
    not leave a core of its own). Never raises."""
    try:
        _libc()
        _call(_prlimit, 0, _RLIMIT_CORE, _u64(0) + _u64(0), None)
    except Exception:
        pass


# --- applying a boundary --------------------------------------------------------------------


def _u64(n: int) -> bytes:
    return (n & 0xFFFFFFFFFFFFFFFF).to_bytes(8, sys.byteorder)


def apply(spec: "Spec", ruleset_fd: int = -1) -> int:
    """Confine this process (and every process it starts) to ``spec`` (the boundary as the gate
    drew it: :meth:`gatesh.boundary.compute.Boundary.wire`); returns the number of rules in force.

    ``ruleset_fd``: the domain's rules already built by the daemon (:func:`ruleset`, handed over
    the daemon's socket: :mod:`gatesh.boundary.handoff`), so this process only restricts itself
    (S14); it is closed here either way. Without one, the rules are built here from ``spec``.

    Steps, in this order: ``no_new_privs`` (a setuid program cannot leave the domain, and
    Landlock requires it), the seccomp filter (:func:`seccomp_program`), the resource limits
    (lowered only, never raised), then the Landlock domain. Raises BoundaryError when any step
    fails: the caller must not run the command then — in particular when a handed ruleset was
    drawn for another Landlock ABI than this kernel's, or is no Landlock ruleset (the kernel
    refuses it: EBADFD), or a spec whose places travel as a ruleset comes without one. A process
    already inside 16 domains (the kernel's bound) stays in the ones it has, which already hold
    everything this one could.
    """
    try:
        level = abi()
        if level < 1:
            raise BoundaryError("this kernel offers no Landlock")
        if ruleset_fd >= 0 and spec.rules.abi != level:
            raise BoundaryError(
                f"the gate drew this boundary for Landlock ABI {spec.rules.abi!r}; "
                f"this kernel offers ABI {level}"
            )
        if ruleset_fd >= 0 and spec.handed < 0:
            raise BoundaryError("the boundary's handed ruleset does not say its rules")
        if ruleset_fd < 0 and spec.handed >= 0:
            raise BoundaryError("the boundary's rules travel as a ruleset, and none came")
        _libc()
        # 1. no_new_privs, then the seccomp filter for what Landlock leaves open.
        if _call(_prctl, _PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise BoundaryError("prctl(PR_SET_NO_NEW_PRIVS) failed")
        _seccomp(spec.rules.net is not None)
        # 2. Resource limits.
        for name, value in spec.limits:
            _lower_limit(name, value)
        # 3. The domain: its rules (handed, or built now), then the restriction.
        if ruleset_fd >= 0:
            fd, rules = ruleset_fd, spec.handed
            ruleset_fd = -1
        else:
            fd, rules = ruleset(spec.rules)
    finally:
        if ruleset_fd >= 0:
            posix.close(ruleset_fd)
    try:
        got = _call(_syscall, _SYS_RESTRICT_SELF, fd, 0)
        if got == -_E2BIG:
            return rules  # 16 domains already: they hold this process as tightly (see above)
        if got != 0:
            raise BoundaryError(f"landlock_restrict_self failed (errno {-got})")
    finally:
        posix.close(fd)
    return rules


def ruleset(spec: Rules) -> "tuple[int, int]":
    """Build the Landlock ruleset of ``spec`` (its places, ports and scopes; not yet in force):
    returns its file descriptor (close-on-exec, the kernel's own) and the number of rules. The
    daemon builds it and hands it to the client that runs the command; :func:`apply` builds it
    when nothing was handed. A place that does not exist is skipped (the domain only allows, so
    leaving a rule out only narrows it). Raises BoundaryError (nothing left open) on failure."""
    level = abi()
    if level < 1:
        raise BoundaryError("this kernel offers no Landlock")
    _libc()
    fs = handled_fs(level)
    net = _net_handled(spec.net, level)
    scopes = 0
    if handled_scopes(level):
        for scope in spec.scope:
            scopes |= _SCOPES[scope]
    attr = _u64(fs) + _u64(net) + _u64(scopes)
    fd = _call(_syscall, _SYS_CREATE_RULESET, attr, len(attr), 0)
    if fd < 0:
        raise BoundaryError(f"landlock_create_ruleset failed (errno {-fd})")
    try:
        rules = _add_paths(fd, spec.read, FS_READ & fs)
        rules += _add_paths(fd, spec.write, FS_WRITE & fs)
        rules += _add_paths(fd, spec.list, READ_DIR & fs)
        if net and spec.net is not None:
            rules += _add_ports(fd, spec.net)
    except BaseException:
        posix.close(fd)
        raise
    return fd, rules


def _lower_limit(name: str, value: object) -> None:
    """Lower the soft and hard limit ``name`` to ``value`` (never raise either): a limit lower
    than the boundary's already holds. CPU time: SIGXCPU at ``value`` seconds (a program may
    catch it and finish), SIGKILL five seconds later."""
    resource = _RLIMITS.get(name)
    if resource is None or not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise BoundaryError(f"the boundary names an unknown limit {name!r}={value!r}")
    old = _words()  # a struct rlimit: its first two words
    if _call(_prlimit, 0, resource, None, old) != 0:
        raise BoundaryError(f"getrlimit({name}) failed")
    soft = old[0] & 0xFFFFFFFFFFFFFFFF  # read as signed C longs: RLIM_INFINITY is -1
    hard = old[1] & 0xFFFFFFFFFFFFFFFF
    ceiling = value + 5 if name == "cpu" else value
    new_hard = min(hard, ceiling)  # RLIM_INFINITY is the largest u64: min() keeps a lower one
    new_soft = min(soft, value, new_hard)
    got = _call(_prlimit, 0, resource, _u64(new_soft) + _u64(new_hard), None)
    if got != 0:
        raise BoundaryError(f"setrlimit({name}) failed (errno {-got})")


def _net_handled(net: "Ports | None", level: int) -> int:
    """The network rights the domain handles: none when the network is open (``net`` None)."""
    if net is None:
        return 0
    if not handled_net(level):
        return 0  # the kernel cannot confine TCP: the network stays open (doctor says so)
    return NET_BIND | NET_CONNECT


def _add_ports(ruleset: int, net: Ports) -> int:
    n = 0
    for ports, right in ((net.connect, NET_CONNECT), (net.bind, NET_BIND)):
        for port in ports:
            got = _call(
                _syscall, _SYS_ADD_RULE, ruleset, _RULE_NET_PORT, _u64(right) + _u64(port), 0
            )
            if got != 0:
                raise BoundaryError(f"landlock_add_rule(port {port}) failed (errno {-got})")
            n += 1
    return n


def _add_paths(ruleset: int, places: "Sequence[Any]", rights: int) -> int:
    """One rule per existing place; a file gets the file rights among ``rights`` (the kernel
    refuses folder rights on a file).

    A place's last component is not followed: a symbolic link gets a rule on the link itself,
    which allows nothing (the kernel checks a path's rights on the folders it lies in, never on
    a link to it). So a place replaced by a link after the boundary was computed cannot carry
    its rights to the link's target; every place the boundary computes is a real path
    (:mod:`gatesh.boundary.compute`), and the rules it makes are then fixed by the folders the
    places lie in and their entries alone (what :mod:`gatesh.boundary.handoff` checks before it
    hands over a ruleset built ahead).

    Each rule is one ``open``, one ``landlock_add_rule`` and one ``close``: the system call's
    constant arguments are made once (~1.4 us a rule in a warm process instead of ~3.3 us)."""
    assert _syscall is not None and _errno is not None
    syscall, errno = _syscall, _errno
    call = (_long(_SYS_ADD_RULE), _long(ruleset), _long(_RULE_PATH_BENEATH))
    zero = _long(0)
    head, head_file = _u64(rights), _u64(rights & _FS_FILE)
    flags = _O_PATH | _O_NOFOLLOW | _O_CLOEXEC
    order = sys.byteorder
    n = 0
    for place in places:
        if not isinstance(place, str) or not place.startswith("/") or "\x00" in place:
            raise BoundaryError(
                f"the boundary names a place that is not an absolute path: {place!r}"
            )
        try:
            fd = posix.open(place, flags)
        except OSError:
            continue  # gone, or not reachable: no rule (narrower, never wider)
        try:
            tail = fd.to_bytes(4, order, signed=True)
            got = int(syscall(*call, head + tail, zero))
            if got == -1 and errno() == _EINVAL:  # a file: only the file rights
                got = int(syscall(*call, head_file + tail, zero))
            if got == -1:
                got = -errno()
        finally:
            posix.close(fd)
        if got != 0:
            raise BoundaryError(f"landlock_add_rule({place}) failed (errno {-got})")
        n += 1
    return n

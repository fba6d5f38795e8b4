"""Stopping or tracing the gatesh daemon (S3.4): the gate that decides every command.

A process-matching command is matched against the daemon as it would see it (its pid, its name,
its command line: :func:`daemon_identity`, read from ``/proc``), not against the word ``gatesh``
alone, so ``pkill -f 'python.* -m gatesh'`` is caught and ``kill -0 $(pgrep -f gatesh)`` (a
liveness probe) is not. A file the command reads for a pid is one of gatesh's when the reader's
path facts say so.
"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass
from typing import Final

from gatesh._types import SUBSTITUTIONS, Context, Facts, SimpleCommand
from gatesh.vocab.programs.interpreters import is_interpreter
from gatesh.vocab.words import has_long, has_short, option_values, split_args, unquote

from ._places import Kind, Protected
from ._writes import program_texts

__all__ = ["KILLERS", "TRACERS", "DaemonId", "daemon_identity", "kills_daemon", "traces_daemon"]


def names_gate_file(facts: Facts, index: int, prot: Protected) -> bool:
    """Whether command ``index`` names one of gatesh's protected places (a path fact of it)."""
    for e in facts.paths:
        if e.command == index:
            if e.resolved:
                if prot.kind_of(e.resolved) is not None:
                    return True
            elif prot.unresolved(e.path) not in (None, Kind.UNKNOWN):
                return True
    return False


KILLERS: Final = frozenset({"kill", "pkill", "killall", "skill", "slay", "tkill", "xkill"})
TRACERS: Final = frozenset(
    {"strace", "ltrace", "gdb", "lldb", "perf", "bpftrace", "ptrace", "gcore"}
)
_FINDERS: Final = frozenset(
    {"pgrep", "pidof", "ps", "cat", "lsof", "fuser", "pstree", "ss", "head"}
)
_GATESH_WORD: Final = re.compile(r"gatesh|daemon\.(?:sock|lock|pid)", re.IGNORECASE)


def _names_daemon(cmd: SimpleCommand, facts: Facts) -> bool:
    if any(_GATESH_WORD.search(w.text) for w in cmd.argv[1:]):
        return True
    if any(not w.static for w in cmd.argv[1:]):
        return any(
            c.context in SUBSTITUTIONS
            and c.head in _FINDERS
            and any(_GATESH_WORD.search(w) for w in c.words)
            for c in facts.commands
        )
    return False


@dataclass(frozen=True)
class DaemonId:
    """How a process-matching command would see the daemon: its pid (when it runs), its name as
    ``pkill``/``killall`` match it and its command line as ``pkill -f`` and ``ps`` show it."""

    pid: int | None
    comm: str
    cmdline: str


_daemon_cache: dict[str, tuple[float, DaemonId]] = {}
# How long the daemon's identity is remembered: it changes only when the daemon restarts.
_DAEMON_ID_TTL_S: Final = 2.0


def daemon_identity(lock: str) -> DaemonId:
    """The daemon that holds ``lock`` (its pid is in the file), read from ``/proc``; without one
    (the in-process fallback), a daemon as this installation would start it."""
    now = time.monotonic()
    hit = _daemon_cache.get(lock)
    if hit is not None and now - hit[0] < _DAEMON_ID_TTL_S:
        return hit[1]
    found: DaemonId | None = None
    try:
        with open(lock, encoding="ascii", errors="replace") as f:
            pid = int(f.read(32).strip())
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read(65536).split(b"\0")
        with open(f"/proc/{pid}/comm", "rb") as f:
            comm = f.read(64).decode(errors="replace").strip()
        cmdline = " ".join(a.decode(errors="replace") for a in argv if a)
        if "gatesh" in cmdline:
            found = DaemonId(pid, comm, cmdline)
    except (OSError, ValueError):
        pass
    if found is None:
        exe = os.path.realpath(sys.executable) if sys.executable else "python3"
        found = DaemonId(None, os.path.basename(exe)[:15], f"{exe} -m gatesh daemon")
    _daemon_cache[lock] = (now, found)
    return found


def _pattern_reaches(pattern: str, target: str, *, exact: bool = False, fold: bool = False) -> bool:
    """Whether a process-name pattern (an extended regex, as pgrep reads it) matches ``target``."""
    flags = re.IGNORECASE if fold else 0
    try:
        rx = re.compile(pattern, flags)
    except re.error:
        return (pattern.lower() in target.lower()) if fold else pattern in target
    return bool(rx.fullmatch(target) if exact else rx.search(target))


_PGREP_VALUE: Final = frozenset(
    {
        "-u",
        "-U",
        "-g",
        "-G",
        "-P",
        "-s",
        "-t",
        "-d",
        "--delimiter",
        "-F",
        "--pidfile",
        "--signal",
        "-q",
        "--queue",
        "--ns",
        "--nslist",
        "--euid",
        "--uid",
        "--pgroup",
        "--group",
        "--parent",
        "--session",
        "--terminal",
        "-n",
        "-o",
        "-O",
        "--older",
    }
)


def _pgrep_reaches(
    cmd: SimpleCommand, index: int, facts: Facts, ident: DaemonId, prot: Protected
) -> bool:
    """``pgrep``/``pkill PATTERN`` (``-f``: the command line; ``-x``: exact; ``-i``: any case),
    ``--pidfile`` of a gate file, or ``pidof``/``killall NAME``: reaches the daemon?"""
    args = [a for a in cmd.args if not re.fullmatch(r"-\d+|-[A-Z]+\d*|-SIG\w+", a)]
    if cmd.head in ("pidof", "killall"):
        opts, names = split_args(args, frozenset({"-o", "-s", "--signal", "-u", "--user", "-y"}))
        regex = cmd.head == "killall" and (has_short(opts, "r") or has_long(opts, "--regexp"))
        fold = cmd.head == "killall" and (has_short(opts, "I") or has_long(opts, "--ignore-case"))
        return any(
            _pattern_reaches(n, ident.comm, exact=not regex, fold=fold)
            or (not regex and n == os.path.basename(ident.cmdline.split(" ", 1)[0]))
            for n in names
            if n
        )
    opts, patterns = split_args(args, _PGREP_VALUE)
    if names_gate_file(facts, index, prot):
        return True  # `pgrep -F ~/.local/state/gatesh/daemon.pid`
    full = has_short(opts, "f") or has_long(opts, "--full")
    exact = has_short(opts, "x") or has_long(opts, "--exact")
    fold = has_short(opts, "i") or has_long(opts, "--ignore-case")
    target = ident.cmdline if full else ident.comm
    return any(_pattern_reaches(unquote(p), target, exact=exact, fold=fold) for p in patterns if p)


_LISTERS: Final = frozenset({"ps", "pstree", "ss", "top", "htop", "pgrep", "lsof", "netstat"})
_GREPS: Final = frozenset({"grep", "egrep", "fgrep", "rg", "ag"})


def _finders_reach(facts: Facts, ident: DaemonId, prot: Protected, killer: SimpleCommand) -> bool:
    """Whether the command text finds the daemon's pid for a kill whose targets are computed
    (``kill $(…)``, ``kill $PID``, ``… | xargs kill``): a finder that matches it, a gate file read
    for its pid, or a process listing filtered by a pattern that matches its command line."""
    listed = any(c.head in _LISTERS for c in facts.commands)
    for i, c in enumerate(facts.commands):
        if c is killer:
            continue
        if any(_GATESH_WORD.search(w) for w in c.words):
            return True
        if c.head in ("pgrep", "pidof") and _pgrep_reaches(c, i, facts, ident, prot):
            return True
        if c.head in ("cat", "head", "tail", "lsof", "fuser", "read") and names_gate_file(
            facts, i, prot
        ):
            return True
        if c.head in _GREPS and listed:
            opts, operands = split_args(c.args, frozenset({"-e", "-m", "-A", "-B", "-C"}))
            if has_short(opts, "v") or has_long(opts, "--invert-match"):
                continue
            patterns = list(option_values(c.args, frozenset({"-e"}))) or operands[:1]
            fold = has_short(opts, "i") or has_long(opts, "--ignore-case")
            if any(_pattern_reaches(unquote(p), ident.cmdline, fold=fold) for p in patterns):
                return True
    return False


_KILL_VALUE: Final = frozenset({"-s", "-n", "--signal"})


def _kill_operands(args: tuple[str, ...]) -> tuple[str, list[str]]:
    """``kill``'s (signal, targets): ``-9``, ``-KILL``, ``-s KILL``, ``--signal=9`` name the signal;
    the words after it (negative numbers included: process groups) are the targets."""
    signal, i = "", 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if a in _KILL_VALUE and i + 1 < len(args):
            signal, i = args[i + 1], i + 2
            continue
        if a.startswith("--signal="):
            signal, i = a.split("=", 1)[1], i + 1
            continue
        if (
            not signal
            and re.fullmatch(r"-(?:\d+|[A-Za-z][A-Za-z0-9+]*)", a)
            and a not in ("-l", "-L")
        ):
            signal, i = a, i + 1
            continue
        if a.startswith("-") and not a.lstrip("-").isdigit():
            i += 1
            continue
        break
    return signal, list(args[i:])


_KILL_CODE: Final = re.compile(
    r"\bkill(?:pg)?\s*\(|\.(?:kill|terminate|send_signal)\s*\(|\bProcess\.kill\b"
    r"|\bkill\s+-|\bsignal\.SIG(?:KILL|TERM|STOP|INT|HUP|QUIT)\b"
)


def kills_daemon(cmd: SimpleCommand, index: int, facts: Facts, prot: Protected) -> bool:
    """Stops the daemon: a kill of its pid (given, or found by a finder in the text), a process
    pattern that matches it, its service stopped, or inline code that signals it."""
    head = cmd.head
    if head == "fuser":
        # `fuser -k SOCKET`: kills the processes that hold one of gatesh's files open
        opts, _ = split_args(cmd.args)
        return (has_short(opts, "k") or has_long(opts, "--kill")) and names_gate_file(
            facts, index, prot
        )
    if head in KILLERS:
        if head in ("kill", "tkill") and _kill_operands(cmd.args)[0] in ("0", "-0"):
            return False  # signal 0 only asks whether the process exists
        if _names_daemon(cmd, facts):
            return True
        ident = (
            daemon_identity(prot.paths.lock) if prot.paths is not None else DaemonId(None, "", "")
        )
        if head in ("pkill", "killall", "skill", "slay"):
            return _pgrep_reaches(cmd, index, facts, ident, prot)
        if head != "kill" and head != "tkill":
            return False
        signal, targets = _kill_operands(cmd.args)
        if signal in ("0", "-0"):
            return False  # signal 0 only asks whether the process exists
        for t in targets:
            text = unquote(t)
            if text.lstrip("-").isdigit():
                if ident.pid is not None and abs(int(text)) == ident.pid:
                    return True  # the daemon's pid, or its process group (it leads its own)
            elif "$" in text or "`" in text:
                return _finders_reach(facts, ident, prot, cmd)
        return cmd.context is Context.XARGS and _finders_reach(facts, ident, prot, cmd)
    if head in ("systemctl", "launchctl", "service"):
        verbs = {
            "stop",
            "kill",
            "disable",
            "mask",
            "restart",
            "unload",
            "remove",
            "bootout",
            "freeze",
        }
        return bool(verbs & set(cmd.args)) and _names_daemon(cmd, facts)
    if is_interpreter(head):
        for code in program_texts(cmd):
            if _KILL_CODE.search(code) and (
                _GATESH_WORD.search(code)
                or any(root in code for root, kind in prot.roots if kind is Kind.FILES)
            ):
                return True
    return False


def traces_daemon(cmd: SimpleCommand, facts: Facts) -> bool:
    """Attaches a tracer or debugger to the daemon (``strace -p $(pgrep gatesh)``)."""
    attached = cmd.head in TRACERS or any(w in TRACERS for w in cmd.wrappers)
    if not attached:
        return False
    raw = " ".join(cmd.words) + " " + cmd.raw
    return bool(re.search(r"(?:^|\s)(?:-p|--pid|--attach|attach|-ex)\b", raw)) and (
        _names_daemon(cmd, facts) or bool(_GATESH_WORD.search(cmd.raw))
    )

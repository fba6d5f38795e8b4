"""Hardline tests of commands that destroy the machine itself: a recursive deletion of /, a home
or a system folder (``rm``, ``find -delete``), formatting or wiping a disk, writing a disk through
a redirection, a fork bomb, changing the modes or owners of /, killing every process.

Each test reads one command's facts (:class:`gatesh.SimpleCommand`); the rows that use them are in
:data:`gatesh.policy.hardline.RULES`.
"""

from __future__ import annotations

import re
from typing import Final

from gatesh._types import Context, Facts, SimpleCommand
from gatesh.policy._rules import (
    FIND_FILTERS,
    canon_path,
    has_long,
    has_short,
    is_block_device,
    is_vital_path,
    split_args,
)
from gatesh.vocab.programs.info import VERSION_HELP


def _operands(
    cmd: SimpleCommand, with_arg: frozenset[str] = frozenset()
) -> tuple[list[str], list[str]]:
    # Dynamic words keep their source text; canon_path folds "$HOME" and ~ alike.
    return split_args([w.text for w in cmd.argv[1:]], with_arg)


# --- recursive deletion ---------------------------------------------------------------------


def rm_root(cmd: SimpleCommand, facts: Facts) -> bool:
    if cmd.head not in ("rm", "grm", "rimraf"):
        return False
    opts, operands = _operands(cmd)
    if cmd.head != "rimraf" and not (has_short(opts, "rR") or has_long(opts, "--recursive")):
        return False
    return any(is_vital_path(canon_path(o)) for o in operands)


_FIND_WITH_ARG: Final = frozenset({"-H", "-L", "-P", "-D", "-O"})
_FIND_DELETERS: Final = frozenset({"rm", "shred", "unlink", "rmdir", "srm", "wipe"})


def _find_roots(args: tuple[str, ...]) -> list[str]:
    roots: list[str] = []
    for a in args:
        if a in _FIND_WITH_ARG or a.startswith("-D") or a.startswith("-O"):
            continue
        if a.startswith("-") or a in ("(", "!", "\\(", ","):
            break
        roots.append(a)
    return roots


def _find_deletes(args: tuple[str, ...]) -> bool:
    if "-delete" in args:
        return True
    for i, a in enumerate(args[:-1]):
        if a in ("-exec", "-execdir", "-ok", "-okdir"):
            prog = args[i + 1].rsplit("/", 1)[-1]
            if prog in _FIND_DELETERS:
                return True
    return False


def find_delete_root(cmd: SimpleCommand, facts: Facts) -> bool:
    if cmd.head not in ("find", "gfind", "bfs"):
        return False
    args = cmd.args
    if any(
        a in FIND_FILTERS and i + 1 < len(args) and args[i + 1] not in ("*", "'*'")
        for i, a in enumerate(args)
    ):
        return False
    if not any(is_vital_path(canon_path(r)) for r in _find_roots(args)):
        return False
    if _find_deletes(args):
        return True
    # `find ~ -type f | xargs shred -u`: the names go to a deleter through xargs.
    index = next((i for i, c in enumerate(facts.commands) if c is cmd), -1)
    for pipe in facts.pipelines:
        if index in pipe:
            after = pipe[pipe.index(index) + 1 :]
            if any(
                i < len(facts.commands)
                and facts.commands[i].context is Context.XARGS
                and facts.commands[i].head in _FIND_DELETERS
                for i in after
            ):
                return True
    return False


# --- disks ----------------------------------------------------------------------------------

_MKFS: Final = re.compile(
    r"^(?:mkfs(?:\.[\w-]+)?|mke2fs|mkdosfs|mkntfs|mkexfatfs|mkswap|newfs(?:_\w+)?|mkfs_\w+)$"
)


def mkfs(cmd: SimpleCommand, facts: Facts) -> bool:
    if not _MKFS.match(cmd.head):
        return False
    _, operands = _operands(cmd)
    opts = cmd.args
    return bool(operands) and not any(o in VERSION_HELP for o in opts)


# Tools that overwrite whatever device they are given; the value says which argument makes them do it.
WIPERS: Final = {
    "shred": None,
    "wipefs": None,
    "blkdiscard": None,
    "badblocks": ("-w",),
    "sgdisk": ("-Z", "--zap-all", "-o", "--clear", "-z", "--zap"),
    "sfdisk": ("--delete",),
    "parted": ("mklabel", "mkpart", "rm", "resizepart"),
    "cryptsetup": ("luksFormat", "erase", "luksErase"),
    "hdparm": ("--security-erase", "--security-erase-enhanced", "--trim-sector-ranges"),
    "nvme": ("format", "sanitize"),
    "dd": None,
    "cp": None,
    "tee": None,
    "pv": None,
    "cat": None,
}


def wipe_device(cmd: SimpleCommand, facts: Facts) -> bool:
    if cmd.head not in WIPERS:
        return False
    args = cmd.args
    if cmd.head == "dd":
        return any(is_block_device(v) for v in (a[3:] for a in args if a.startswith("of=")))
    if cmd.head == "cat":
        return False  # cat reads its operands; `cat x > /dev/sda` is the redirect rule
    if cmd.head in ("cp", "tee", "pv"):
        _, operands = _operands(cmd)
        targets = operands[-1:] if cmd.head == "cp" else operands
        return cmd.head != "pv" and any(is_block_device(t) for t in targets)
    needs = WIPERS[cmd.head]
    if needs is not None and not any(a in needs or a.split("=", 1)[0] in needs for a in args):
        return False
    return any(is_block_device(a) for a in args)


def device_redirect(cmd: SimpleCommand, facts: Facts) -> bool:
    return any(
        r.writes and r.target is not None and is_block_device(r.target) for r in cmd.redirects
    )


# --- processes and permissions -----------------------------------------------------------------


def fork_bomb(cmd: SimpleCommand, facts: Facts) -> bool:
    # A function that pipes itself into itself in the background: `f(){ f|f& };f`.
    if cmd.head not in facts.functions or cmd.context is not Context.FUNCTION:
        return False
    for pipe in facts.pipelines:
        members = [facts.commands[i] for i in pipe if i < len(facts.commands)]
        if len(members) >= 2 and all(
            m.head == cmd.head and m.context is Context.FUNCTION for m in members
        ):
            return True
    return False


CHMODS: Final = frozenset({"chmod", "chown", "chgrp", "setfacl", "chattr", "chcon"})


def chmod_root(cmd: SimpleCommand, facts: Facts) -> bool:
    if cmd.head not in CHMODS:
        return False
    opts, operands = _operands(cmd)
    if not (has_short(opts, "R") or has_long(opts, "--recursive")):
        return False
    # chattr takes its mode as +i/-i: neither is a path, so scanning every operand is harmless.
    return any(is_vital_path(canon_path(o)) for o in operands)


def kill_all(cmd: SimpleCommand, facts: Facts) -> bool:
    if cmd.head not in ("kill",):
        return False
    args = list(cmd.args)
    # kill [-s SIG | -n NUM | -SIG] [--] PID...: the first -N is a signal only when PIDs follow it.
    pids: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-s", "-n", "--signal"):
            i += 2
            continue
        if a == "--":
            pids.extend(args[i + 1 :])
            break
        if a.startswith("-") and i == 0 and len(args) > 1:
            i += 1
            continue
        pids.append(a)
        i += 1
    if args == ["-1"]:
        return True
    return "-1" in pids

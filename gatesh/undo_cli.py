"""``gatesh undo``: a person's verb (S9.5, S17) to list snapshots and put one back.

It travels to the daemon as the human-only ``undo`` op (as ``approve`` does): the daemon refuses
it to any process whose ancestry holds a gated session, so an agent cannot undo anything, and
this module only reports that refusal. The daemon does the work; this asks the person.

Exit status: 0 when the list was shown or the restore done (or there was nothing to restore);
1 when the daemon refused or failed, the snapshot is unknown, or the person said no; 2 for bad
usage.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from gatesh._errors import EXIT_ERROR, EXIT_OK
from gatesh.daemon.protocol import Op
from gatesh.daemon.replies import Undone
from gatesh.daemon.requests import UndoRequest, UndoStep
from gatesh.people import HumanOpFailed, human_request
from gatesh.render import neutralise
from gatesh.undo.reply import PlanReport, ShotRow, SinceUnknown
from gatesh.undo.store import Change
from gatesh.wire_json import wire_value

__all__ = ["main"]

# Paths a plan names before "and N more".
SHOWN: int = 8

DESCRIPTION = """\
Put back what a command changed. Before a command that may write runs in a git work tree,
gatesh records the tree (tracked, untracked and ignored files; regenerable folders such as
node_modules are left out), HEAD, the branch tips, the stash and the index, in the repository's
own object store under refs/gatesh/undo/ID; files the command names outside any repository are
copied into gatesh's state folder.

  gatesh undo --list        the newest snapshots: id, time, command, and what changed since
  gatesh undo ID            restore the files the command changed or removed and the refs it
                            moved; edits made after it (seen by a later snapshot) are listed,
                            and you are asked before they are overwritten
  gatesh undo ID --dry-run  show what a restore would do, change nothing

A restore first snapshots what it replaces, so it can itself be undone. Only a person may run
this, from a terminal no gated session started.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gatesh undo",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("id", nargs="?", type=int, help="the snapshot to restore")
    parser.add_argument("--list", action="store_true", help="show the newest snapshots")
    parser.add_argument(
        "-n", type=int, default=10, metavar="N", help="with --list: how many (default 10)"
    )
    parser.add_argument(
        "--yes", action="store_true", help="overwrite edits made after the command without asking"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="show what the restore would do; change nothing"
    )
    parser.add_argument("--json", action="store_true", help="print the daemon's answer as JSON")
    return parser


def main(argv: list[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``gatesh undo``: list snapshots, show a restore's plan, or restore (asking before it
    overwrites edits made after the command, unless ``--yes``). 0 when done, 1 otherwise."""
    out = out or sys.stdout
    err = err or sys.stderr
    parser = _parser()
    args = parser.parse_args(argv)
    if args.list == (args.id is not None):
        parser.error("give either --list or a snapshot id")
    try:
        if args.list:
            listed = _ask(UndoRequest(UndoStep.LIST, n=args.n)).snapshots or ()
            out.write(_as_json(listed) if args.json else _list(listed))
            return EXIT_OK
        plan = _ask(UndoRequest(UndoStep.PLAN, id=args.id)).plan
        if plan is None:
            raise HumanOpFailed(f"gatesh undo: the daemon sent no plan for undo {args.id}")
        if args.dry_run:
            out.write(_as_json(plan) if args.json else _plan(plan))
            return EXIT_OK
        if not plan.changes:
            out.write(
                f"undo {args.id}: nothing to put back: the files and refs are as it left them\n"
            )
            return EXIT_OK
        if not args.json:
            out.write(_plan(plan))
        later = [f for f in plan.files if f.later]
        if later and not args.yes:
            if not _confirm(len(later), err):
                err.write("gatesh undo: nothing was changed\n")
                return EXIT_ERROR
        step = UndoRequest(UndoStep.RESTORE, id=args.id, fingerprint=plan.fingerprint)
        done = _ask(step).restored
        if done is None:
            raise HumanOpFailed(f"gatesh undo: the daemon did not say what undo {args.id} did")
    except HumanOpFailed as exc:
        err.write(f"{exc}\n")
        return EXIT_ERROR
    out.write(_as_json(done) if args.json else _restored(args.id, done))
    return EXIT_OK


def _ask(request: UndoRequest) -> Undone:
    """The daemon's answer to one ``undo`` request. Raises HumanOpFailed."""
    return human_request("undo", Op.UNDO, request, Undone)


def _as_json(records: object) -> str:
    """``--json``: the reply's records as the daemon wrote them, one line."""
    return json.dumps(wire_value(records)) + "\n"


def _restored(snapshot: int, done: PlanReport) -> str:
    """What a restore did, in a line (and how to take it back, when it can be)."""
    written = sum(1 for f in done.files if f.action is Change.WRITE)
    removed = len(done.files) - written
    refs = len(done.refs) + len(done.head)
    line = (
        f"restored undo {snapshot}: {written} file{'s' if written != 1 else ''} written back, "
        f"{removed} removed, {refs} ref{'s' if refs != 1 else ''} moved back"
    )
    if done.stash:
        line += ", the stash put back"
    if done.index:
        line += ", the index put back"
    text = line + "\n"
    if done.undone_by:
        text += f"gatesh undo {done.undone_by} puts back what this replaced\n"
    return text


def _confirm(n: int, err: TextIO) -> bool:
    """Ask the person at the terminal; no terminal is a no (use --yes)."""
    if not sys.stdin.isatty():
        err.write(
            f"gatesh undo: {n} file{'s' if n != 1 else ''} were edited after the command; "
            "run again with --yes to overwrite them\n"
        )
        return False
    err.write(f"Overwrite the {n} file{'s' if n != 1 else ''} edited after the command? [y/N] ")
    err.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


def _ago(when: float) -> str:
    s = max(0, int(time.time() - when))
    if s < 120:
        return f"{s} s ago"
    if s < 7200:
        return f"{s // 60} min ago"
    if s < 172800:
        return f"{s // 3600} h ago"
    return f"{s // 86400} days ago"


def _list(rows: Sequence[ShotRow]) -> str:
    if not rows:
        return "no snapshots kept\n"
    lines = []
    for r in rows:
        since = r.since
        if isinstance(since, SinceUnknown):
            changed = neutralise(since.error)
        else:
            parts = []
            if since.files:
                parts.append(f"{since.files} file{'s' if since.files != 1 else ''}")
            if since.refs:
                parts.append(f"{since.refs} ref{'s' if since.refs != 1 else ''}")
            if since.stash:
                parts.append("the stash")
            if since.index:
                parts.append("the index")
            if since.outside:
                parts.append(f"{since.outside} outside")
            changed = ("changed since: " + ", ".join(parts)) if parts else "nothing changed since"
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.time))
        command = neutralise(" ".join(r.command.split()))
        if len(command) > 60:
            command = command[:59] + "…"
        lines.append(
            f"{r.id:>5}  {when} ({_ago(r.time)})  {command}\n"
            f"       in {neutralise(r.cwd)}; {changed}"
        )
    return "\n".join(lines) + "\n"


def _plan(plan: PlanReport) -> str:
    lines = [f"undo {plan.id}: `{neutralise(plan.command)}` ({_ago(plan.time)})"]
    writes = [f for f in plan.files if f.action is Change.WRITE]
    removes = [f for f in plan.files if f.action is Change.REMOVE]
    for label, group in (("writes back", writes), ("removes (made since)", removes)):
        if group:
            shown = ", ".join(
                neutralise(f.path) + (" (edited after it)" if f.later else "")
                for f in group[:SHOWN]
            )
            more = f" and {len(group) - SHOWN} more" if len(group) > SHOWN else ""
            lines.append(f"  {label} {len(group)}: {shown}{more}")
    for r in plan.refs:
        now = r.now[:10] or "(deleted)"
        lines.append(f"  moves {neutralise(r.ref)} back: {now} -> {r.then[:10]}")
    for h in plan.head:
        lines.append(f"  puts HEAD back: {neutralise(h.now)} -> {neutralise(h.then)}")
    if plan.stash:
        lines.append("  puts the stash back (every entry)")
    if plan.index:
        lines.append("  puts the index back (what was staged)")
    for o in plan.outside:
        lines.append(f"  puts back {neutralise(o.path)} (outside any repository)")
    if len(lines) == 1:
        lines.append("  nothing to put back: the files and refs are as it left them")
    return "\n".join(lines) + "\n"

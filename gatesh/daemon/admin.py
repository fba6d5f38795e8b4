"""``gatesh status``, ``gatesh log`` and ``gatesh dump`` (S13): read-only views for the person.

None of these starts the daemon: ``status`` says when it is not running, ``log`` reads the audit
file directly, ``dump`` archives what it can reach and says what it could not.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import sys
import tarfile
import time
from dataclasses import dataclass
from typing import Final, TypeVar

from gatesh import __version__, _paths
from gatesh.audit import follow, read_tail
from gatesh.audit_entry import AuditLineError, LogEntry
from gatesh.daemon.protocol import Op
from gatesh.daemon.replies import Status
from gatesh.pending import PendingKind, PendingState
from gatesh.wire_json import WireError, from_wire, reply_object

__all__ = ["Unanswered", "dump_main", "format_record", "log_main", "status_main"]

T = TypeVar("T")


@dataclass(frozen=True)
class Unanswered:
    """Why an admin request has no reply to show: no daemon is running (``running`` false), or
    it answered with an error or a reply that could not be read (``why``)."""

    running: bool
    why: str


@dataclass(frozen=True)
class _Archived:
    """The ``captures`` reply as ``gatesh dump`` archives it: each capture as the daemon wrote it
    (already redacted), kept whole; nothing here reads its members."""

    captures: tuple[object, ...]


def _ask(op: Op, answer: type[T]) -> T | Unanswered:
    """One admin request (no fields but its op) to a running daemon, its reply decoded once into
    ``answer`` (:func:`gatesh.wire_json.from_wire`); :class:`Unanswered` when there is none."""
    from gatesh import client

    try:
        reply = client.request("admin", {"op": op.value}, start=False, timeout=10.0)
    except (client.DaemonUnavailable, client.DaemonLost) as exc:
        return Unanswered(False, str(exc))
    if not reply.get("ok"):
        return Unanswered(True, f"the daemon refused {op.value}: {reply.get('error') or '?'}")
    try:
        return from_wire(answer, reply)
    except WireError as exc:
        return Unanswered(True, f"the daemon's reply could not be read ({exc})")


def _ago(ts: float) -> str:
    return _duration(time.time() - ts) + " ago"


def _duration(seconds: float) -> str:
    s = max(0, int(seconds))
    if s < 120:
        return f"{s}s"
    if s < 7200:
        return f"{s // 60}m"
    if s < 172800:
        return f"{s // 3600}h {s % 3600 // 60}m"
    return f"{s // 86400}d {s % 86400 // 3600}h"


# Decision words in the order a person reads them (anything else after, alphabetically).
_ACTIONS = ("allow", "reject", "escalate", "refuse", "deny", "halt", "audit_failed")
# Rows shown per list unless --all.
_SHOWN = 20
# A logged command is cut to this many columns in `gatesh log` (the JSON line keeps it whole).
LOG_COMMAND_COLUMNS = 160


def status_main(argv: list[str]) -> int:
    """Print the daemon's sessions, counters, halts and pending escalations. Exit 1 when not running.

    Everything the daemon relays that an agent may have written (session ids, commands, reasons)
    is neutralised to one printable line before it reaches the terminal (S8.1).
    """
    import shutil

    parser = argparse.ArgumentParser(
        prog="gatesh status", description="sessions, counters and the daemon's health"
    )
    parser.add_argument("--json", action="store_true", help="print the status as JSON")
    parser.add_argument(
        "--all",
        action="store_true",
        help=f"list every session and escalation, ended sessions too (default: the newest "
        f"{_SHOWN} of the live ones)",
    )
    args = parser.parse_args(argv)
    status = _ask(Op.STATUS, Status)
    paths = _paths.current()
    if isinstance(status, Unanswered) and status.running:
        print(f"gatesh status: {status.why}", file=sys.stderr)
        return 1
    if isinstance(status, Unanswered):
        if args.json:
            print(json.dumps({"running": False, "socket": paths.socket}))
        else:
            print(
                f"gatesh daemon: not running (socket {paths.socket}); it starts on the next gated command."
            )
            print(f"audit log: {paths.audit_log}")
        return 1
    if args.json:
        print(json.dumps(reply_object(status), indent=2))
        return 0
    _print_daemon(status)
    row = _Rows(shutil.get_terminal_size().columns)
    _print_sessions(status, row, show_all=args.all)
    _print_pending(status, row, every=args.all)
    return 0


class _Rows:
    """One printed row: an agent's multi-KB command (a harness's snapshot script) stays one."""

    def __init__(self, width: int) -> None:
        self.width = width

    def __call__(self, indent: int, text: str) -> str:
        from gatesh.render import one_line

        return " " * indent + one_line(text, self.width - indent)


def _print_daemon(status: Status) -> None:
    """The daemon's own lines of ``gatesh status``: its health, its channel, its audit log."""
    from gatesh.render import neutralise as n

    d, watchers = status.daemon, status.watchers
    print(f"gatesh daemon {d.version}: running, pid {d.pid}, up {_duration(d.uptime_s)}")
    print(
        f"  watchers:   {watchers}"
        + ("" if watchers else "  (nobody is watching: escalations are refused at once)")
    )
    print(f"  rater:      {d.rater or '?'}")
    if d.started_by:
        print(f"  started by: {n(d.started_by)}")
    channel = d.person_channel
    if channel and not channel.startswith("gatesh-person-"):
        print(
            f"  PERSON'S CHANNEL SHUT (no verb of yours or watcher reaches the daemon): {n(channel)}"
        )
    for problem in d.settings_problems:
        print(f"  daemon.env: {n(problem)}")
    print(f"  socket:     {d.socket}")
    print(f"  audit log:  {d.audit_log}")
    if d.audit_failures:
        print(
            f"  AUDIT WRITE FAILURES: {d.audit_failures} (last: {n(d.audit_last_error)}); "
            "commands are refused until the log can be written"
        )
    if d.audit_breaks:
        print(
            f"  AUDIT LOG CHANGED UNDER THE DAEMON: {d.audit_breaks} chain-break record"
            f"{'s' if d.audit_breaks != 1 else ''} written; see gatesh log --verify"
        )
    if d.config_error:
        print(f"  CONFIG ERROR (every command is refused until fixed): {n(d.config_error)}")
    totals = status.totals
    if totals:
        order = [k for k in _ACTIONS if k in totals] + sorted(
            k for k in totals if k not in _ACTIONS
        )
        print(
            "  decisions:  "
            + ", ".join(f"{totals[k]} {k}" for k in order)
            + f" (total {sum(v for k, v in totals.items() if k != 'audit_failed')})"
        )


def _print_sessions(status: Status, row: _Rows, *, show_all: bool) -> None:
    """The sessions of ``gatesh status``: the live ones (``show_all``: ended ones too), halts
    first."""
    from gatesh.render import neutralise as n

    every_one = sorted(status.sessions, key=lambda s: -s.last)
    # An ended session is over: listed only with --all (a halted one is kept for `gatesh resume`).
    ended = [s for s in every_one if s.ended]
    sessions = every_one if show_all else [s for s in every_one if not s.ended]
    halted = [s for s in sessions if s.halted]
    print(f"\nsessions: {len(sessions)}" + (f", {len(halted)} HALTED" if halted else ""))
    if ended and not show_all:
        kept = sum(1 for s in ended if s.halted)
        print(
            f"  ({len(ended)} ended, not listed"
            + (f"; {kept} of them halted, kept for `gatesh resume`" if kept else "")
            + "; gatesh status --all lists them)"
        )
    shown = (
        sessions if show_all else sorted(sessions, key=lambda s: (not s.halted, -s.last))[:_SHOWN]
    )
    for s in shown:
        c = s.counters
        # A session a mandate opened has no surface until its first command.
        surface = s.surface or ("no command yet" if not s.checks else "?")
        checks = f"{s.checks} check{'' if s.checks == 1 else 's'}"
        print(row(2, f"{s.session}  ({surface}; {checks}, last {_ago(s.last)})"))
        if s.ended:
            print("      ended")
        if s.halted:
            print(row(6, f"HALTED: {s.halt_reason}"))
            print(f"      resume with: gatesh resume {n(s.session)}")
        elif c.get("consecutive") or c.get("since_person"):
            print(
                f"      arguing: {c.get('consecutive', 0)}/{c.get('consecutive_cap', 3)} rejections in a row, "
                f"{c.get('since_person', 0)}/{c.get('since_person_cap', 9)} since a person was reached"
            )
    if len(shown) < len(sessions):
        print(f"  … and {len(sessions) - len(shown)} more (gatesh status --all)")


# The states of a record still open to a person's ruling, and how status names each.
_OPEN_STATES: Final = {
    PendingState.WAITING: "waiting for a watcher",
    PendingState.ASKING: "asked at its own surface",
    PendingState.REFUSED: "refused (nobody watching)",
    PendingState.EXPIRED: "refused (nobody answered in time)",
}


def _print_pending(status: Status, row: _Rows, *, every: bool) -> None:
    """The open escalations and halts of ``gatesh status``, newest first, with how to approve."""
    pending = [p for p in status.pending if p.state in _OPEN_STATES]
    waiting = [p for p in pending if p.state in (PendingState.WAITING, PendingState.ASKING)]
    print(
        f"\nescalations open: {len(pending)}"
        + (f" ({len(waiting)} waiting for an answer now)" if waiting else "")
    )
    pending.sort(key=lambda p: -p.created)
    for p in pending if every else pending[:_SHOWN]:
        kind = "halt" if p.kind is PendingKind.HALT else "escalation"
        state = _OPEN_STATES[p.state]
        if p.state is PendingState.EXPIRED and p.ended:
            state = "refused (expired unanswered)"
        print(row(2, f"{p.pending_id}  {kind}, {state}, {_ago(p.created)}; session {p.session}"))
        print(row(10, p.command))
        if p.ended:
            print(row(10, p.ended))
        if p.state in (PendingState.REFUSED, PendingState.EXPIRED):
            verb = "run it once anyway" if kind == "halt" else "let the retry run once"
            print(f"          {verb}: gatesh approve {p.pending_id}")
    if not every and len(pending) > _SHOWN:
        print(f"  … and {len(pending) - _SHOWN} more (gatesh status --all)")


def format_record(rec: LogEntry) -> str:
    """One audit record as one human-readable line."""
    when = rec.time[:19].replace("T", " ")
    action = rec.action
    from gatesh.render import neutralise, one_line

    if action == "chain-break":  # the writer's own line: what it found changed under it
        return neutralise(f"{when}  {action}  seq {rec.seq}: {rec.found}")

    command = one_line(" ".join(rec.command.split()), LOG_COMMAND_COLUMNS)
    extra = []
    if rec.rule_id:
        extra.append(rec.rule_id)
    if rec.answer:
        extra.append(f"answer: {rec.answer}")
    if rec.pending_id:
        extra.append(f"id {rec.pending_id}")
    if rec.snapshot:  # S13, S17: the snapshot taken before it ran
        extra.append(f"undo {rec.snapshot}")
    elif rec.undo_note:
        extra.append(rec.undo_note)
    if rec.rater_fail_cause:
        extra.append(f"rater failed: {rec.rater_fail_cause}")
    if rec.cascade is not None:
        c = rec.cascade
        asked = "model asked" if c.model_asked else "model not asked"
        extra.append(f"cascade: {c.decided} decided, {asked} ({c.asked})")
    tail = f"  [{'; '.join(extra)}]" if extra else ""
    return neutralise(
        f"{when}  {action:<8} {rec.stage:<15} {rec.outcome:<12} {rec.session:<20} {command}{tail}"
    )


def log_main(argv: list[str]) -> int:
    """Print the newest audit records (``-n``), optionally following new ones (``--follow``)."""
    parser = argparse.ArgumentParser(prog="gatesh log", description="read the audit log")
    parser.add_argument(
        "-n", type=int, default=20, metavar="N", help="how many of the newest records (default 20)"
    )
    parser.add_argument(
        "-f", "--follow", action="store_true", help="keep printing records as they are written"
    )
    parser.add_argument("--json", action="store_true", help="print the raw JSON lines")
    parser.add_argument(
        "--verify",
        action="store_true",
        help="check the hash chain, the rotated files and the kept head: name every line changed, "
        "removed or inserted, a cut tail, dropped first lines, missing rotations, torn lines and "
        "the gaps the writer recorded (exit 1 if any is evidence of tampering)",
    )
    parser.add_argument(
        "--against-syslog",
        nargs="?",
        const="",
        default=None,
        metavar="FILE",
        help="with --verify: also check against the chain's head anchors and record copies in the "
        "system log (audit.syslog): the journal, /var/log/syslog or /var/log/messages, or FILE",
    )
    args = parser.parse_args(argv)
    path = _paths.current().audit_log
    if args.against_syslog is not None and not args.verify:
        parser.error("--against-syslog goes with --verify")
    if args.verify:
        return _verify(path, as_json=args.json, syslog=args.against_syslog)

    def show(rec: LogEntry) -> None:
        text = json.dumps(rec.document, ensure_ascii=False) if args.json else format_record(rec)
        print(text, flush=True)

    def broken(name: str, error: AuditLineError) -> None:
        print(
            f"gatesh log: skipped a line of {name} that is not a record: {error}", file=sys.stderr
        )

    records = read_tail(path, max(0, args.n), broken)
    if not records and not args.follow and not os.path.exists(path):
        print(f"gatesh log: no audit log yet at {path}", file=sys.stderr)
        return 0
    for rec in records:
        show(rec)
    if args.follow:
        try:
            for rec in follow(path, broken=broken):
                show(rec)
        except KeyboardInterrupt:
            return 0
        except BrokenPipeError:
            return 0
    return 0


def _verify(path: str, *, as_json: bool, syslog: str | None = None) -> int:
    """``gatesh log --verify``: 0 when nothing found is evidence of tampering, 1 otherwise (every
    finding named); 2 when the system log asked for cannot be read."""
    from gatesh import audit_syslog
    from gatesh._json import plain
    from gatesh.audit_chain import describe, verify
    from gatesh.render import neutralise

    against = None
    if syslog is not None:
        try:
            against = audit_syslog.anchors(audit_syslog.read_source(syslog), path)
        except OSError as exc:
            print(f"gatesh log --verify: {neutralise(str(exc))}", file=sys.stderr)
            return 2
    report = verify(path, against=against)
    if as_json:
        print(json.dumps(plain(report)))
    else:
        headline, rows = describe(report)
        print(neutralise(headline))
        for row in rows:
            print("  " + neutralise(row))
    return 0 if report.ok else 1


def _redact(text: str) -> str:
    from gatesh.audit import fold_home
    from gatesh.redact import redact

    return redact(fold_home(text))


DUMPS_DIR: Final = "dumps"  # under the state folder: outside any working tree, 0700


def dump_main(argv: list[str]) -> int:
    """Write a debug archive (tar.gz, mode 0600): config files, recent audit lines, model calls, status.

    Everything is redacted and home-folded. The default place is ``STATE/gatesh/dumps/`` — never the
    current folder, where inside a repository it would become an untracked file (and could be
    committed). ``README.txt`` lists what is not in it: optional parts that do not exist (no system
    or project config: normal) apart from parts that exist and could not be read.
    """
    parser = argparse.ArgumentParser(
        prog="gatesh dump", description="write a debug archive (redacted)"
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="archive path (default STATE/gatesh/dumps/gatesh-dump-TIME.tar.gz)",
    )
    parser.add_argument(
        "-n", type=int, default=500, metavar="N", help="audit records to include (default 500)"
    )
    args = parser.parse_args(argv)
    paths = _paths.current()
    if args.output:
        out = args.output
    else:
        folder = os.path.join(paths.state_dir, DUMPS_DIR)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        out = os.path.join(folder, f"gatesh-dump-{time.strftime('%Y%m%d-%H%M%S')}.tar.gz")
    absent: list[str] = []  # optional, and not there: nothing is wrong
    unavailable: list[str] = []  # there (or expected), and could not be included
    members = _configs(paths, absent, unavailable)
    # Recent audit lines (already redacted when written).
    recs = read_tail(paths.audit_log, max(0, args.n))
    members["audit.jsonl"] = "".join(
        json.dumps(r.document, ensure_ascii=False) + "\n" for r in recs
    ).encode()
    members |= _daemon_parts(absent, unavailable)
    members["versions.json"] = json.dumps(
        {
            "gatesh": __version__,
            "python": sys.version,
            "platform": platform.platform(),
            "executable": sys.executable,
        },
        indent=2,
    ).encode()
    readme = ["gatesh debug archive (secrets redacted, home folded to ~).", ""]
    if unavailable:
        readme += ["Could not be included:", *(f"  {n}" for n in unavailable), ""]
    if absent:
        readme += ["Not present (nothing wrong):", *(f"  {n}" for n in absent), ""]
    members["README.txt"] = "\n".join(readme).encode()
    _write_archive(out, members)
    print(
        f"gatesh dump: wrote {out}"
        + (
            f" ({len(unavailable)} part(s) could not be included: see README.txt)"
            if unavailable
            else ""
        )
    )
    return 0


def _configs(
    paths: _paths.GatePaths, absent: list[str], unavailable: list[str]
) -> dict[str, bytes]:
    """The config files, redacted; each tier is optional."""
    from gatesh.config import find_project_file

    members: dict[str, bytes] = {}

    for label, path in (
        ("system", paths.system_config),
        ("user", paths.user_config),
        ("project", find_project_file(os.getcwd())),
    ):
        if not path or not os.path.exists(path):
            absent.append(f"config/{label}.toml: there is no {label} config file (optional)")
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                members[f"config/{label}.toml"] = _redact(f.read()).encode()
        except OSError as exc:
            unavailable.append(f"config/{label}.toml: unreadable ({exc})")
    return members


def _daemon_parts(absent: list[str], unavailable: list[str]) -> dict[str, bytes]:
    """The daemon's status and its model-call ring, redacted, when it runs."""
    members: dict[str, bytes] = {}
    status = _ask(Op.STATUS, Status)
    if isinstance(status, Unanswered) and not status.running:
        absent.append("status.json, captures.json: the daemon is not running (it starts on demand)")
        return members
    if isinstance(status, Unanswered):
        unavailable.append(f"status.json: {status.why}")
    else:
        members["status.json"] = _redact(json.dumps(reply_object(status), indent=2)).encode()
    caps = _ask(Op.CAPTURES, _Archived)
    if isinstance(caps, Unanswered):
        unavailable.append(f"captures.json: {caps.why}")
    else:
        members["captures.json"] = _redact(json.dumps(list(caps.captures), indent=2)).encode()
    return members


def _write_archive(out: str, members: dict[str, bytes]) -> None:
    """The tar.gz at ``out``, mode 0600 from its creation, each member 0600 under gatesh-dump/."""
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(f"gatesh-dump/{name}")
            info.size = len(data)
            info.mtime = int(time.time())
            info.mode = 0o600
            tar.addfile(info, io.BytesIO(data))

"""``gatesh watch``: the person's live, append-only view of every session, and their answers (S7).

It attaches to the daemon as the ``watch`` role (starting the daemon when absent, as the ``-c``
client does), subscribes to its events and prints each as it happens: every round of every
session through :func:`gatesh.render.render_rows` (the same renderer as the escalation block),
escalations as prompts, halts, mandates, notices and session-end observations. Lines typed at it
answer the prompt or run a human verb (see :data:`HELP`).

Guarantees:

- Append-only: rows are written to the scrollback and never moved over, cleared or redrawn; no
  fullscreen mode, no cursor addressing. Stdout that is not a terminal gets plain text, no colour.
- Everything the agent or a model wrote is neutralised (:func:`gatesh.render.neutralise`) before
  it reaches the terminal; session ids count as agent-written (``GATESH_SESSION`` is theirs).
- Fail closed: only a line the person typed sends an allowing answer. End of input, a crash, a
  lost daemon or Ctrl-C approves nothing; a dropped prompt stays for the daemon's timeout, after
  which the escalation is refused.
- ``always`` / ``deny always`` write their list entry into the user config only after the daemon
  accepted this watcher's answer (it checks the ancestry, S9.5, and the first answer wins), and
  print the entry written.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final

from gatesh._types import Round
from gatesh.daemon.protocol import Op
from gatesh.daemon.requests import AnswerRequest, MandateRequest, PendingRequest, ResumeRequest
from gatesh.events import Event, Kind
from gatesh.finish import Answer
from gatesh.negotiation import MAX_REJECTIONS_SINCE_PERSON
from gatesh.people import HumanReply, describe_refusal, ruling_text
from gatesh.prompt import (
    ALL_CHOICES,
    CAUTIOUS_CHOICES,
    RUN_ANYWAY,
    Prompt,
    choices_text,
    entry_pattern,
    parse_answer,
    write_list_entry,
)
from gatesh.render import (
    MAX_ROWS_PER_ELEMENT,
    Ask,
    Row,
    escalation_rows,
    neutralise,
    pass_label,
    render_rows,
)
from gatesh.watch_link import Link, LinkError, Subscription
from gatesh.watch_screen import Screen

__all__ = ["HELP", "Screen", "Watcher", "main"]

# Between attempts to reach a daemon that went away (it restarts on demand).
RECONNECT_S: Final = 1.0

HELP: Final = """\
gatesh watch — lines you can type:
  o / s / a / Enter / d    answer the prompt: once, session, always, No (the default), deny always
  run anyway               (a halted session's prompt only) run that one command once
  mandate: TEXT            what you asked the agents to do (every session); `m` then a line also works
  mandate @SESSION: TEXT   the same, for one session
  resume SESSION           end a halt
  approve ID / deny ID     rule on a pending or refused escalation id
  help                     this text;  quit  leave (nothing waiting is approved)"""


# --- the watcher's state --------------------------------------------------------------------------


class Watcher:
    """What one ``gatesh watch`` knows and shows. Events arrive on the reader thread, typed lines on
    the main thread; both are serialised by ``self.lock``.

    ``request`` sends one op (a request dataclass of :mod:`gatesh.daemon.requests`, claiming a
    pid) on the watcher's connection and returns the reply, or None when the daemon could not be
    asked. ``write_entry`` writes an always / deny-always list entry and returns
    ``(path, text written)``; it is called only after the daemon accepted the answer.
    """

    def __init__(
        self,
        screen: Screen,
        request: Callable[[Op, object, int], HumanReply | None],
        *,
        write_entry: Callable[[str, str], tuple[str, str]] | None = None,
        show_all: bool = False,
        answers: bool = True,
        pid: int | None = None,
    ) -> None:
        self.screen = screen
        self.request = request
        self.write_entry = write_entry or write_list_entry
        self.show_all = show_all
        self.answers = answers  # False: view only (this process is not counted as a watcher)
        self.pid = os.getpid() if pid is None else pid
        self.lock = threading.RLock()
        self.prompts: OrderedDict[str, Prompt] = OrderedDict()
        self.live: dict[str, list[Round]] = {}
        # Sessions where a person was reached since their last refused round: the argument was
        # cleared, so an allowed command there ends nothing and draws no "Agreed"/"Accepted" row.
        self.reached: set[str] = set()
        self.awaiting_mandate = False

    # --- events (reader thread) ---------------------------------------------------------------

    def attached(self, reply: Subscription) -> None:
        """The subscribe reply: show sessions and any escalation already waiting."""
        with self.lock:
            role = "watching (answers go to you)" if self.answers else "watching (view only)"
            self.screen.line(
                f"gatesh watch: {role}; {reply.sessions} session(s) open. Type `help` for the keys."
            )
            for o in reply.unseen:  # ended while nobody watched
                self.screen.rows(
                    [
                        *self._heading(o.session, "", "session ended while nobody watched"),
                        *self.screen.wrap(neutralise(o.observation), "chrome"),
                    ]
                )
            for h in reply.halted:
                self.screen.line(
                    f"session {neutralise(h.session)} is halted: "
                    f"{neutralise(h.reason)} (`resume SESSION` ends it)"
                )
            for prompt in reply.pending:
                self._ask(prompt)

    def detached(self, why: str) -> None:
        """The connection ended: drop every prompt (nothing is approved) and say so."""
        with self.lock:
            dropped = list(self.prompts)
            self.prompts.clear()
            self.awaiting_mandate = False
            self.screen.line(f"gatesh watch: lost the daemon ({neutralise(why)}); reconnecting…")
            if dropped:
                self.screen.line(
                    f"dropped prompt(s) {', '.join(dropped)}: nothing was approved; "
                    "`gatesh approve ID` still works after they are refused"
                )

    def on_event(self, ev: Event) -> None:
        """Show one event, decoded once by the link (:func:`gatesh.events.decode`). Never raises:
        an event that cannot be shown is reported and skipped."""
        try:
            with self.lock:
                self._show[ev.kind](self, ev)
        except Exception as exc:  # the view must outlive one odd event
            self.screen.line(
                f"gatesh watch: could not show a {ev.kind.value!r} event "
                f"({type(exc).__name__}: {exc})"
            )

    def _heading(self, session: str, cwd: str, what: str = "") -> list[Row]:
        """A block's heading: what happened, the session and its working directory (chrome)."""
        parts = [p for p in (what, f"session {neutralise(session)}", neutralise(cwd)) if p]
        return self.screen.wrap("── " + " · ".join(parts) + " ──", "chrome", max_rows=2)

    def _ev_round(self, ev: Event) -> None:
        sid, r, number = ev.session, ev.round or Round(command=""), ev.number
        if r.passed and sid in self.reached:
            return
        # The refused rounds of this argument, so a pass is labelled against all of them (S8.2).
        live = self.live.setdefault(sid, [])
        if r.passed:
            argument = list(live)
            if ev.ends == "agreed" and pass_label((x.command for x in live), r.command) != "Agreed":
                # Attached after the refusal of this command: the daemon saw it, this view did not.
                argument.insert(0, Round(command=r.command, outcome=r.outcome))
            rounds, attempts = [*argument, r], (number - 1 if number is not None else None)
        else:
            self.reached.discard(sid)
            live.append(r)
            del live[:-MAX_REJECTIONS_SINCE_PERSON]
            rounds, attempts = live, number
        counters = dict(ev.counters) if ev.counters is not None else None
        rows = [
            *self._heading(sid, ev.cwd),
            *render_rows(
                rounds,
                width=self.screen.width,
                mode="live",
                attempts=attempts,
                newest=1,
                counters=counters,
            ),
        ]
        self.screen.rows(rows)

    def _ev_decision(self, ev: Event) -> None:
        action, sid, cwd, command = ev.action, ev.session, ev.cwd, neutralise(ev.command)
        if ev.answer:  # a person's ruling: the answered/expired events already said it
            return
        if action == "allow":
            if self.show_all:
                self.screen.rows([*self._heading(sid, cwd), Row(f"ran: {command}", "agent")])
            return
        if action in ("deny", "refuse"):
            stage = neutralise(ev.stage)
            rows = [
                *self._heading(sid, cwd, f"refused ({stage})"),
                *self.screen.wrap(command, "agent", MAX_ROWS_PER_ELEMENT),
                *self.screen.wrap("  " + neutralise(ev.reason), "rater", MAX_ROWS_PER_ELEMENT),
            ]
            self.screen.rows(rows)

    def _ev_escalation(self, ev: Event) -> None:
        self._person_reached(ev.session)
        kind = ev.pending_kind or "escalate"
        choices = tuple(c for c in ev.choices if c in ALL_CHOICES) or CAUTIOUS_CHOICES
        if ev.outcome == "catastrophic":
            choices = tuple(c for c in choices if c not in ("session", "always"))
        prompt = Prompt(
            pending_id=ev.pending_id,
            session=ev.session,
            command=ev.command,
            cwd=ev.cwd,
            outcome=ev.outcome,
            reason=ev.reason,
            remedy=ev.remedy,
            to_person_reason=ev.to_person_reason,
            rounds=list(ev.rounds),
            choices=choices,
            kind=kind,
            timeout_s=ev.timeout_s,
            stage=ev.stage,
            elsewhere=ev.asking,
            surface=ev.surface,
            entry=ev.entry,
        )
        if kind == "halt":
            prompt.choices = (RUN_ANYWAY, "no")
        self._ask(prompt)

    def _person_reached(self, sid: str) -> None:
        """A person was reached in ``sid`` (S6): its argument starts afresh."""
        self.live.pop(sid, None)
        self.reached.add(sid)

    def _ask(self, prompt: Prompt) -> None:
        if not prompt.pending_id:
            return
        self.prompts.pop(prompt.pending_id, None)
        self.prompts[prompt.pending_id] = prompt
        if not prompt.elsewhere:
            # A command waiting for this view goes before every one its own surface is asking
            # about (a harness's prompt may never be answered here, S7): after the commands that
            # wait already, so those are asked in the order they came.
            for pid in [p.pending_id for p in self.prompts.values() if p.elsewhere]:
                self.prompts.move_to_end(pid)
        self.screen.rows(self.escalation_rows(prompt))
        if self.answers and next(iter(self.prompts)) == prompt.pending_id:
            self._show_choices(prompt)
        elif self.answers:
            self.screen.line(
                f"{prompt.pending_id}: queued; it is asked after the one before it is answered"
            )

    def escalation_rows(self, p: Prompt) -> list[Row]:
        """The escalation block (S7): the command, outcome and rater's words, the argument so far
        (the renderer's :func:`gatesh.render.escalation_rows`, under this view's heading)."""
        title = "HALTED: attack" if p.kind == "halt" else f"a person is asked ({p.pending_id})"
        rows = self._heading(p.session, p.cwd, title)
        why = p.to_person_reason
        if p.kind == "halt":
            rows += self.screen.wrap(
                f"Session {neutralise(p.session)} is halted: every command is refused "
                f"until a person resumes it (`resume {neutralise(p.session)}`).",
                "chrome",
            )
            why = ""
        elif p.elsewhere:
            where = (
                "Its own terminal (a person's gated shell)"
                if p.surface == "pty"
                else "Its own surface (a harness's prompt)"
            )
            rows += self.screen.wrap(
                f"{where} is asking its person too; an answer here counts as well.", "chrome"
            )
        ask = Ask(
            command=p.command,
            outcome=p.outcome,
            reason=p.reason,
            remedy=p.remedy,
            why_person=why,
            rounds=tuple(p.rounds),
            request_in_rounds=p.stage == "negotiation",
        )
        return rows + escalation_rows(ask, width=self.screen.width)

    def _show_choices(self, p: Prompt) -> None:
        wait = f" · refused if unanswered in {p.timeout_s:g} s" if p.timeout_s else ""
        self.screen.strong(f"{p.pending_id} › {choices_text(p)}{wait}")

    def _ev_answered(self, ev: Event) -> None:
        pid = ev.pending_id
        answer = neutralise(ev.answer)
        by = ev.by
        if by.pid == self.pid:
            who = "you"
        elif by.role == "watch":
            who = f"another watcher (pid {by.pid})"
        elif by.op == "answer":
            who = f"the person at the session's own terminal (pid {by.pid})"
        else:
            who = f"`gatesh approve/deny` (pid {by.pid})"
        self.screen.line(f"{pid}: answered `{answer}` by {who}")
        self._drop(pid)

    def _ev_expired(self, ev: Event) -> None:
        pid = ev.pending_id
        why = neutralise(ev.why) or "nobody answered in time"
        self.screen.line(
            f"{pid}: {why}, so it was refused; "
            f"`gatesh approve {pid}` still lets it run once when the agent retries"
        )
        self._drop(pid)

    def _ev_withdrawn(self, ev: Event) -> None:
        pid = ev.pending_id
        self.screen.line(
            f"{pid}: withdrawn — the waiting command was interrupted (Ctrl-C) before anyone "
            "answered; nothing ran, and there is nothing left to answer"
        )
        self._drop(pid)

    def _drop(self, pending_id: str) -> None:
        was_first = bool(self.prompts) and next(iter(self.prompts)) == pending_id
        self.prompts.pop(pending_id, None)
        if was_first and self.prompts and self.answers:
            nxt = next(iter(self.prompts.values()))
            self.screen.line(
                f"now asking {nxt.pending_id}: {neutralise(nxt.command)} "
                f"(session {neutralise(nxt.session)})"
            )
            self._show_choices(nxt)

    def _ev_halt(self, ev: Event) -> None:
        sid = ev.session
        self._person_reached(sid)
        rows = [
            *self._heading(sid, ev.cwd, "HALTED: attack"),
            *self.screen.wrap(f"Command: {neutralise(ev.command)}", "agent", MAX_ROWS_PER_ELEMENT),
            *self.screen.wrap(
                f"Rater: attack — {neutralise(ev.reason)}",
                "rater",
                MAX_ROWS_PER_ELEMENT,
            ),
            *self.screen.wrap(
                f"Every command of session {neutralise(sid)} is refused until a person "
                f"resumes it: type `resume {neutralise(sid)}` here or run "
                "`gatesh resume SESSION`.",
                "chrome",
            ),
        ]
        self.screen.rows(rows)
        if ev.pending_id:
            self._ask(
                Prompt(
                    pending_id=ev.pending_id,
                    session=sid,
                    command=ev.command,
                    cwd=ev.cwd,
                    outcome="attack",
                    reason=ev.reason,
                    kind="halt",
                    choices=(RUN_ANYWAY, "no"),
                    timeout_s=ev.timeout_s,
                )
            )

    def _ev_resumed(self, ev: Event) -> None:
        who = "you" if ev.by.pid == self.pid else f"pid {ev.by.pid}"
        self.screen.line(f"session {neutralise(ev.session)} resumed by {who}")

    def _ev_mandate(self, ev: Event) -> None:
        sid = ev.session
        for s in [sid] if sid else list(self.live):
            self._person_reached(s)
        where = f"session {neutralise(sid)}" if sid else "every session"
        channel = ev.channel
        what = (
            "mandate"
            if channel in ("", "mandate", "watch")
            else f"the user's words ({neutralise(channel)})"
        )
        self.screen.line(f"{what} for {where}: {neutralise(ev.text)}")

    def _ev_notice(self, ev: Event) -> None:
        sid = ev.session
        prefix = f"[{neutralise(sid)}] " if sid else ""
        self.screen.rows(self.screen.wrap(prefix + neutralise(ev.text), "rater"))

    def _ev_session_start(self, ev: Event) -> None:
        if self.show_all:
            self.screen.line(f"session {neutralise(ev.session)} started ({neutralise(ev.surface)})")
            if ev.boundary:
                self.screen.line(neutralise(ev.boundary))

    def _ev_session_end(self, ev: Event) -> None:
        sid = ev.session
        self.live.pop(sid, None)
        self.reached.discard(sid)
        observation = ev.observation
        if observation:
            self.screen.rows(
                [
                    *self._heading(sid, "", "session ended"),
                    *self.screen.wrap(neutralise(observation), "chrome"),
                ]
            )
        elif self.show_all:
            self.screen.line(f"session {neutralise(sid)} ended")

    #: How each kind of event is shown (an unknown kind is no event, see gatesh.events).
    _show: Final[dict[Kind, Callable[[Watcher, Event], None]]] = {
        Kind.ROUND: _ev_round,
        Kind.DECISION: _ev_decision,
        Kind.ESCALATION: _ev_escalation,
        Kind.HALT: _ev_halt,
        Kind.ANSWERED: _ev_answered,
        Kind.EXPIRED: _ev_expired,
        Kind.WITHDRAWN: _ev_withdrawn,
        Kind.RESUMED: _ev_resumed,
        Kind.MANDATE: _ev_mandate,
        Kind.NOTICE: _ev_notice,
        Kind.SESSION_START: _ev_session_start,
        Kind.SESSION_END: _ev_session_end,
    }

    # --- typed lines (main thread) ----------------------------------------------------------------

    def on_line(self, line: str) -> bool:
        """Act on one typed line. Returns False when the person asked to quit."""
        text = line.strip()
        lower = " ".join(text.lower().split())
        with self.lock:
            if self.awaiting_mandate:
                self.awaiting_mandate = False
                if text:
                    self._mandate(text, "")
                else:
                    self.screen.line("no mandate recorded (empty line)")
                return True
            prompt = next(iter(self.prompts.values()), None) if self.answers else None
        if lower in ("help", "?", "h"):
            self.screen.line(HELP)
            return True
        if lower in ("quit", "exit", "q"):
            return False
        m = re.match(r"(?is)^mandate(?:\s+@(\S+))?\s*:\s*(.*)$", text)
        if m:
            if m.group(2).strip():
                self._mandate(m.group(2).strip(), m.group(1) or "")
            else:
                self.screen.line("the mandate is empty; type `mandate: WHAT YOU ASKED FOR`")
            return True
        if lower in ("m", "mandate"):
            with self.lock:
                self.awaiting_mandate = True
            self.screen.line("type what you asked the agent to do, then Enter:")
            return True
        words = text.split()
        if len(words) == 2 and words[0].lower() == "resume":
            self._op(Op.RESUME, ResumeRequest(words[1]), "resume")
            return True
        if len(words) == 2 and words[0].lower() in ("approve", "deny") and lower != "deny always":
            verb = words[0].lower()
            self._op(Op(verb), PendingRequest(words[1].lower()), verb)
            return True
        if prompt is None:
            if text:
                self.screen.line("nothing is waiting for an answer; type `help` for the keys")
            return True
        answer, why = parse_answer(text, prompt)
        if answer is None:
            self.screen.line(f"{prompt.pending_id}: {why}")
            return True
        self.answer(prompt, answer)
        return True

    def answer(self, prompt: Prompt, answer: str) -> bool:
        """Send ``answer`` for ``prompt``; write the list entry when it was always / deny always
        and the daemon accepted it. True when the daemon accepted the answer."""
        reply = self._op(
            Op.ANSWER, AnswerRequest(prompt.pending_id, Answer(answer)), "answer", quiet=True
        )
        if reply is None:
            return False
        if answer in ("always", "deny always"):
            kind = "allow" if answer == "always" else "deny"
            pattern = entry_pattern(prompt.command) if prompt.entry is None else prompt.entry
            if not pattern:
                self.screen.line(
                    f"{prompt.pending_id}: no {kind} entry was written: the command holds a "
                    "secret, which never goes into a config file; the answer stood for this "
                    "one command only"
                )
                return True
            try:
                path, written = self.write_entry(kind, pattern)
            except Exception as exc:
                self.screen.line(
                    f"{prompt.pending_id}: the {kind} entry could not be written "
                    f"({type(exc).__name__}: {neutralise(str(exc))}); the answer stood "
                    f"for this one command only"
                )
            else:
                self.screen.line(f"{prompt.pending_id}: wrote to {path}:")
                for row in written.splitlines():
                    self.screen.line("    " + neutralise(row), "agent")
        return True

    def _mandate(self, text: str, session: str) -> None:
        # The daemon takes a watcher's words as channel ``watch`` whatever the request names.
        request = MandateRequest(text, session, "mandate")
        self._op(
            Op.MANDATE, request, "mandate", quiet=True
        )  # the mandate event says it was recorded

    def _op(self, op: Op, request: object, verb: str, *, quiet: bool = False) -> HumanReply | None:
        """Send a human op; print a refusal or failure. Returns the reply when accepted."""
        reply = self.request(op, request, self.pid)
        if reply is None:
            self.screen.line(
                f"{verb}: the daemon could not be asked (connection lost); nothing changed"
            )
            return None
        if not reply.ok:
            self.screen.line(describe_refusal(verb, reply).replace("gatesh ", "", 1))
            return None
        if not quiet:
            if isinstance(request, PendingRequest):
                self.screen.line(ruling_text(verb, request.pending_id, reply))
            elif isinstance(request, ResumeRequest) and not reply.was_halted:
                self.screen.line(f"session {neutralise(request.session)} was not halted")
        return reply


# --- main -----------------------------------------------------------------------------------------


def _keep_attached(watcher: Watcher, link: Link, stop: threading.Event) -> None:
    """Attach, and re-attach after the daemon goes away, until ``stop`` (steps numbered)."""
    from gatesh import client

    said = ""
    while not stop.is_set():
        # 1. Connect (starting the daemon when absent) and subscribe.
        try:
            reply = link.open(start=True)
        except (client.DaemonUnavailable, client.DaemonLost, LinkError, OSError, ValueError) as exc:
            if str(exc) != said:
                watcher.screen.line(
                    f"gatesh watch: cannot attach to the daemon ({neutralise(str(exc))}); retrying"
                )
                said = str(exc)
            stop.wait(RECONNECT_S * 2)
            continue
        said = ""
        watcher.attached(reply)
        # 2. Watch until the connection ends.
        while not stop.is_set() and not link.closed.wait(0.5):
            pass
        if stop.is_set():
            return
        # 3. Lost: nothing waiting is approved; try again.
        watcher.detached(link.why or "connection closed")
        stop.wait(RECONNECT_S)


def main(argv: list[str] | None = None) -> int:
    """``gatesh watch``: returns 0 when the person quits (``quit``, Ctrl-C or Ctrl-D then Ctrl-C)."""
    parser = argparse.ArgumentParser(
        prog="gatesh watch",
        description="Watch every round of every session as it happens, answer escalations, "
        "record what you asked the agent to do. Type `help` once it runs.",
    )
    parser.add_argument("--all", action="store_true", help="also show every command that ran")
    parser.add_argument(
        "--view-only",
        action="store_true",
        help="show, never ask: escalations are not routed to this view",
    )
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])

    out = sys.stdout
    tty = out.isatty()
    term: Any = None
    if tty:
        import blessed

        term = blessed.Terminal(stream=out)
    screen = Screen(out, color=tty and term is not None and bool(term.does_styling), term=term)
    stop = threading.Event()
    link: Link
    watcher = Watcher(
        screen,
        lambda op, request, pid: link.request(op, request, pid),
        show_all=args.all,
        answers=not args.view_only,
    )
    link = Link(watcher.on_event, role="admin" if args.view_only else "watch")
    keeper = threading.Thread(
        target=_keep_attached, args=(watcher, link, stop), name="gatesh-watch-link", daemon=True
    )
    keeper.start()
    try:
        while True:
            line = sys.stdin.readline()
            if not line:
                if not args.view_only:
                    screen.line(
                        "gatesh watch: input closed; still watching (escalations wait for their "
                        "timeout, then are refused). Ctrl-C leaves."
                    )
                while keeper.is_alive():
                    keeper.join(3600)
                break
            if not watcher.on_line(line):
                break
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        link.close()
        time.sleep(0)
    return 0

"""The one renderer of the argument (S8.2): the live view and the escalation block draw through here.

One renderer, so the argument a person watched and the argument they are asked to rule on cannot
be two different accounts. It returns rows tagged with a voice; colouring is :func:`paint`'s job,
kept apart so tests check layout without escape codes.

Guarantees of :func:`render_rows` with a ``width``:

- every row fits ``width`` columns by a conservative ruler (:func:`display_width`): wide and
  East-Asian-ambiguous characters count 2, combining marks 0, so a row never wraps on a terminal
  whichever ambiguous-width policy it uses;
- every element of a round (command, justification, the rater's answer) takes at most
  :data:`MAX_ROWS_PER_ELEMENT` rows, the last ending in ``… +N rows`` when cut;
- at most the newest :data:`MAX_ROUNDS_SHOWN` rounds are drawn, under a heading with the true count;
- everything the agent or a model wrote went through :func:`neutralise` first.

Pure: no I/O, no terminal access.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import wcwidth

from gatesh._types import Decision, Round, Stage

__all__ = [
    "MAX_ROUNDS_SHOWN",
    "MAX_ROWS_PER_ELEMENT",
    "MIN_WIDTH",
    "PLAIN_ELEMENT_MAX_COLUMNS",
    "Ask",
    "Mode",
    "Row",
    "Voice",
    "ask_of",
    "display_width",
    "escalation_rows",
    "escalation_text",
    "neutralise",
    "neutralise_block",
    "offers_a_person",
    "one_line",
    "paint",
    "pass_label",
    "remedy_for_agent",
    "render_rows",
    "render_transcript",
    "rows_of",
    "sentence",
]

# Remedy wording that hands the command to someone else ("ask the person", "take a backup and get
# their approval", "leave it to the admin"): a move the agent does not have. Its only way to a
# person is the bounds of S6, so a remedy saying otherwise sends it off to write prose asking for a
# confirmation that can never arrive. Builtin remedies are checked against this by a test; a
# model's remedy that matches is not passed on (the rest of the message still is).
_OFFERS_A_PERSON: Final = re.compile(
    r"\b(?:ask|asking|confirm\s+with|check\s+with|consult|wait\s+for|approval|sign-?off|permission\s+from)\b"
    r"|\b(?:the|a|an|your|their)\s+(?:person|people|user|human|operator|owner|admin|administrator|maintainer)s?\b(?!'s)"
    r"|\b(?:someone|somebody)\b",
    re.IGNORECASE,
)


def offers_a_person(remedy: str) -> bool:
    """True when ``remedy`` tells the agent to have a person decide or act (never a move, S8.1)."""
    return bool(_OFFERS_A_PERSON.search(remedy))


def remedy_for_agent(remedy: str) -> str:
    """``remedy`` when it names a change the agent can make itself; "" when it offers a person."""
    return "" if offers_a_person(remedy) else remedy


Voice = Literal["chrome", "agent", "rater"]
Mode = Literal["escalation", "live"]

# Rows one element may take before the rest is elided. Measured on the earlier gate: three rounds
# of paragraph-length argument cost 37 rows at 80 columns, and the person never saw the later
# rounds or the choices. The cost is per row, not per round, so the bound is per element. Two, not
# one, so a wrapped command keeps the continuation that shows how it differs from the round above.
MAX_ROWS_PER_ELEMENT: Final = 2

# Rounds a screen shows, newest last. An argument can reach a person carrying up to nine rounds
# (the since-person bound), more than an unscrollable prompt can hold; the heading says how many
# there were, so nothing dropped goes unmentioned.
MAX_ROUNDS_SHOWN: Final = 3

# Narrower widths are treated as this (rows may then overflow): below it the labels alone fill a
# row, and no terminal a person reads an argument on is that narrow.
MIN_WIDTH: Final = 24

# Without a width (plain text for a refusal message) elements are not wrapped, but each is cut
# here so a 64 KiB command cannot make the message a 64 KiB message. About two rows of a wide
# terminal: enough to see how a command differs from the round above.
PLAIN_ELEMENT_MAX_COLUMNS: Final = 240

_INDENT: Final = "  "  # justification and answer rows, under their round's command row
_CONTINUATION: Final = "    "  # wrapped rows of any element

_AGREED: Final = "Agreed"  # the rater passed a command it had refused
_ACCEPTED: Final = "Accepted"  # the rater passed a command it had not refused


@dataclass(frozen=True)
class Row:
    """One terminal row, tagged with who is speaking. A wrapped row keeps its element's voice.

    ``chrome`` is gatesh's own words, ``agent`` the command and its justification, ``rater`` the
    rating that answered.
    """

    text: str
    voice: Voice


# --- neutralising -------------------------------------------------------------------------------

# CSI (colours, cursor moves) and short ESC sequences carry nothing readable: removed whole.
_CSI = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b[ -/]*[0-~]")
# String sequences (OSC, DCS, SOS, PM, APC): only the introducer and terminator are removed. The
# payload stays visible because the shell would read those characters as part of the command, and
# hiding them would let a command hide part of itself from the person (`ls ESC]0;; rm -rf ~ BEL`).
_STRING_SEQ = re.compile(r"\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]|\x1b\\|\x9c|\x07")
_NEWLINES = re.compile(r"\r\n|[\n\r\v\f\x85\u2028\u2029]")
_FENCE = re.compile(r"(`{3,}|~{3,})")
_SEPARATOR: Final = " ⏎ "  # where a newline was: one line, and the break still visible
_FENCE_LOOKALIKE: Final = {"`": "ˋ", "~": "˜"}


_NOT_PRINTABLE_ASCII = re.compile(r"[^\x20-\x7e]")


def _safe_char(m: re.Match[str]) -> str:
    """One character outside printable ASCII: dropped (control, format), U+FFFD (unassigned,
    private use, surrogate, or one a terminal would not print), or kept."""
    ch = m.group(0)
    cat = unicodedata.category(ch)
    if cat in ("Cc", "Cf"):
        return ""
    if cat in ("Cn", "Co", "Cs") or wcwidth.wcwidth(ch) < 0:
        return "\ufffd"
    return ch


def neutralise(text: str) -> str:
    """``text`` as one safe line: no escape sequence, no control or invisible character, no fence.

    Guarantees: the result has no C0/C1 control (ESC, BEL, backspace, …), no format character
    (bidi overrides, zero-width characters, tag characters), no unassigned or private-use code
    point (each becomes U+FFFD), no line break (each becomes `` ⏎ ``), no tab (a space), and no
    run of three backticks or tildes that could close a Markdown fence (the third and later become
    look-alikes). Idempotent. Applied to everything the agent or a model wrote before display.
    """
    text = _CSI.sub("", text)
    text = _STRING_SEQ.sub("", text)
    text = _NEWLINES.sub(_SEPARATOR, text)
    text = text.replace("\t", " ")
    text = _NOT_PRINTABLE_ASCII.sub(_safe_char, text)  # printable ASCII needs no look (fast path)
    text = _FENCE.sub(
        lambda m: m.group(0)[:2] + _FENCE_LOOKALIKE[m.group(0)[0]] * (len(m.group(0)) - 2), text
    )
    return text.strip()


def neutralise_block(text: str) -> str:
    """``text`` safe to hand to a terminal or a harness, with its line structure kept (S8.1).

    The one boundary function for whole messages (the refusal the agent reads, a notice for the
    person, a hook's reason): every line goes through :func:`neutralise`, so no escape sequence
    (CSI, OSC, DCS, SOS/PM/APC), C1 control, BEL, backspace, bidi or zero-width character survives
    anywhere in it; ``\n`` is the only line break kept (``\r``, ``\v``, U+2028 … become the
    visible separator inside their line), and a line's leading spaces (indentation) are kept.
    Idempotent.
    """
    if _is_plain_block(text):
        return text.strip("\n")
    return _neutralise_lines(text)


# Printable ASCII and line feeds only: no escape, control, invisible character or other break.
_PLAIN_BLOCK = re.compile(r"[\x20-\x7e\n]*")


def _is_plain_block(text: str) -> bool:
    """Whether :func:`neutralise_block` leaves ``text`` as it is, but for line feeds around it:
    printable ASCII and line feeds only, no fence run, no line ending in a space (each line is
    then its own neutralised form, indentation included). Most replies are such text; the check
    is a few C-level scans instead of six patterns per line (S14)."""
    return (
        _PLAIN_BLOCK.fullmatch(text) is not None
        and "```" not in text
        and "~~~" not in text
        and " \n" not in text
        and not text.endswith(" ")
    )


def _neutralise_lines(text: str) -> str:
    """:func:`neutralise_block` the long way: each line neutralised, its indentation kept."""
    out = []
    for line in text.replace("\r\n", "\n").split("\n"):
        body = neutralise(line)
        indent = len(line) - len(line.lstrip(" "))
        out.append(" " * indent + body if body else "")
    return "\n".join(out).strip("\n")


# --- the ruler ----------------------------------------------------------------------------------


def _char_width(ch: str) -> int:
    """Conservative columns for one code point: zero-width 0, wide or ambiguous 2, unknown 2."""
    w = wcwidth.wcwidth(ch)
    if w == 0:
        return 0
    if w < 0 or unicodedata.east_asian_width(ch) in ("W", "F", "A"):
        return 2
    return w


def _clusters(text: str) -> list[tuple[str, int]]:
    """``text`` cut into display units (a character with its combining marks) and their widths.

    A unit is never split across rows. A variation selector 16 makes its unit at least 2 wide,
    since terminals disagree on whether it widens the character before it.
    """
    units: list[tuple[str, int]] = []
    for ch in text:
        w = _char_width(ch)
        if w == 0 and units:
            s, uw = units[-1]
            units[-1] = (s + ch, max(uw, 2) if ch == "\ufe0f" else uw)
        else:
            units.append((ch, w))
    return units


def display_width(text: str) -> int:
    """Columns ``text`` takes at most on any terminal (wide and ambiguous count 2)."""
    return sum(w for _, w in _clusters(text))


def _wrap(text: str, width: int) -> list[str]:
    """Rows of at most ``width`` columns; breaks at a space past mid-row, else between any units.

    Continuation rows start with :data:`_CONTINUATION`. Requires ``width >= MIN_WIDTH``.
    """
    indent = [(c, 1) for c in _CONTINUATION]
    rows: list[str] = []
    line: list[tuple[str, int]] = []
    used = 0

    def flush(head: list[tuple[str, int]]) -> None:
        rows.append("".join(u for u, _ in head).rstrip())

    for unit, w in _clusters(text):
        if used + w > width:
            if unit == " ":
                flush(line)
                line, used = list(indent), len(indent)
                continue
            cut, col = -1, 0
            for i, (u, uw) in enumerate(line):
                if u == " " and col * 2 > width:
                    cut = i
                col += uw
            if cut >= 0:
                flush(line[:cut])
                line = indent + line[cut + 1 :]
            else:
                flush(line)
                line = list(indent)
            used = sum(uw for _, uw in line)
        if unit == " " and rows and len(line) == len(indent):
            continue  # no leading space on a continuation row
        line.append((unit, w))
        used += w
    flush(line)
    return rows


def _fit(text: str, width: int) -> str:
    """``text`` cut at the end (by whole display units) to at most ``width`` columns."""
    out: list[str] = []
    used = 0
    for unit, w in _clusters(text):
        if used + w > width:
            break
        out.append(unit)
        used += w
    return "".join(out)


def one_line(text: str, width: int) -> str:
    """``text`` neutralised to one row of at most ``width`` columns (``width`` below MIN_WIDTH
    counts as MIN_WIDTH). When cut, the row ends in `` … (N chars)`` with the true length of
    ``text``: a list of multi-KB commands stays one row each, and shows which were cut and by how much.
    """
    width = max(width, MIN_WIDTH)
    line = neutralise(text)
    if display_width(line) <= width:
        return line
    marker = f" … ({len(text):,} chars)"
    return _fit(line, width - display_width(marker)).rstrip() + marker


def rows_of(text: str, voice: Voice, width: int | None, max_rows: int = 0) -> list[Row]:
    """``text`` (gatesh's own words, possibly several lines) as rows of at most ``width`` columns,
    broken at spaces; each line takes at most ``max_rows`` rows (0: no limit), the last ending in
    ``… +N rows`` when cut. ``width`` None: the lines unwrapped."""
    rows: list[Row] = []
    for line in text.split("\n"):
        if width is None:
            rows.append(Row(line, voice))
        else:
            rows += _element(line, voice, max(width, MIN_WIDTH), max_rows or 1 << 30)
    return rows


def _element(
    text: str, voice: Voice, width: int | None, max_rows: int = MAX_ROWS_PER_ELEMENT
) -> list[Row]:
    """One element as at most ``max_rows`` rows (one row when ``width`` is None)."""
    if width is None:
        w = display_width(text)
        if w > PLAIN_ELEMENT_MAX_COLUMNS:
            cut = _fit(text, PLAIN_ELEMENT_MAX_COLUMNS)
            text = f"{cut} … +{w - display_width(cut)} columns"
        return [Row(text, voice)]
    rows = _wrap(text, width)
    if len(rows) > max_rows:
        hidden = len(rows) - max_rows
        marker = f" … +{hidden} row{'s' if hidden != 1 else ''}"
        last = rows[max_rows - 1]
        rows = [
            *rows[: max_rows - 1],
            _fit(last, width - display_width(marker)).rstrip() + marker,
        ]
    return [Row(r, voice) for r in rows]


# --- the rows -----------------------------------------------------------------------------------


def pass_label(refused: Iterable[str], command: str) -> str:
    """The label of a round that ends the argument (S8.2): ``Agreed`` when the rater passed a
    command it had refused earlier in this argument (any earlier round, whitespace aside),
    ``Accepted`` when it passed a different one."""
    key = " ".join(command.split())
    return _AGREED if any(" ".join(c.split()) == key for c in refused) else _ACCEPTED


def _rating(outcome: str, reason: str, remedy: str = "", suggestion: str = "") -> str:
    """A rating as one line: outcome, reason, what would make it acceptable, suggestion.

    The reason's own closing full stop goes when a remedy follows (never "tree.; stash first").
    The no-person refusal is these rows, read by the agent: no remedy that offers it a person.
    """
    text = outcome
    reason = neutralise(reason)
    remedy = neutralise(remedy_for_agent(remedy))
    if reason:
        text += (" — " if text else "") + (reason.rstrip(" .;") if remedy else reason)
    if remedy:
        text += ("; " if text else "") + remedy
    suggestion = neutralise(suggestion)
    if suggestion:
        text += f" · suggested: {suggestion}"
    return text


def _answer(r: Round) -> str:
    """The rater's answer in a round (see :func:`_rating`)."""
    return _rating(r.outcome.value, r.reason, r.remedy, r.suggestion)


def sentence(text: str) -> str:
    """``text`` ending in exactly one closing punctuation mark (a full stop added when it has none)."""
    text = text.rstrip()
    return text if not text or text[-1] in ".!?)" else text + "."


def _round_labels(rounds: Sequence[Round], start: int) -> list[tuple[str, int | None]]:
    """Each round's label and transcript number, from the full sequence (refused rounds numbered
    on from ``start``; a passed round takes no number, see :func:`pass_label`)."""
    labels: list[tuple[str, int | None]] = []
    seen_refused: list[str] = []
    number = start
    for r in rounds:
        if r.passed:
            labels.append((pass_label(seen_refused, r.command), None))
        else:
            number += 1
            seen_refused.append(r.command)
            labels.append((f"Round {number}", number))
    return labels


def _rows_heading(
    rounds: Sequence[Round], mode: Mode, total: int, counters: Mapping[str, int] | None
) -> str:
    """The argument's heading: how many rounds were refused and, live, where the argument stands
    against its two bounds when the newest round was refused."""
    count = f"{total} round{'s' if total != 1 else ''}"
    if mode != "live":
        return f"The argument so far: {count}"
    heading = f"The agent is arguing with the rater: {count} refused"
    if counters and not rounds[-1].passed and {"consecutive", "since_person"} <= counters.keys():
        heading += (
            f" ({counters['consecutive']} of {counters.get('consecutive_cap', '?')} in a row, "
            f"{counters['since_person']} of {counters.get('since_person_cap', '?')} "
            "since a person was asked)"
        )
    return heading


def render_rows(
    rounds: Sequence[Round],
    *,
    width: int | None = None,
    mode: Mode = "escalation",
    attempts: int | None = None,
    newest: int = MAX_ROUNDS_SHOWN,
    counters: Mapping[str, int] | None = None,
    request_last: bool = True,
) -> list[Row]:
    """The argument as voice-tagged rows; empty when there are no rounds.

    ``rounds`` is the transcript (escalation) or, in ``live`` mode, the session's rounds as they
    happened, refusals and passes (``Round.passed``) in order. ``attempts`` is the true number of
    refused rounds (``Negotiation.counters()["since_person"]``, read before a person is reached):
    when ``rounds`` is a tail of the argument the numbers continue from it, so the last refused
    round is numbered ``attempts``; omitted, the rounds given are the whole argument.

    Round numbers are transcript positions, so a watcher and the escalation block number the same
    round alike. A passed round takes no number (it is not in the transcript): it is labelled
    ``Agreed`` when its command is one the rater refused earlier in ``rounds``, ``Accepted`` when
    not. In ``escalation`` mode the last round is marked "this request"; round 1's answer is marked
    as rated on the command alone. ``newest`` (at most :data:`MAX_ROUNDS_SHOWN`) is how many of the
    newest rounds to draw: an append-only watcher passes 1 with the previous round included in
    ``rounds`` so the label can compare commands.

    ``request_last`` (escalation mode): the last round is the request being decided, and is marked
    so; False when the request is not one of the rounds (a floor or list entry sent it to a person).

    ``counters`` (``Negotiation.counters()``, live mode) adds where the argument stands against its
    two bounds to the heading of a refused round: "2 of 3 in a row, 2 of 9 since a person was asked".

    ``width`` None means plain text (no wrapping; long elements cut, see
    :data:`PLAIN_ELEMENT_MAX_COLUMNS`).
    """
    if not rounds:
        return []
    if width is not None:
        width = max(width, MIN_WIDTH)
    refused = sum(1 for r in rounds if not r.passed)
    start = max(0, attempts - refused) if attempts is not None else 0
    labels = _round_labels(rounds, start)
    shown = max(1, min(newest, MAX_ROUNDS_SHOWN))
    first = max(0, len(rounds) - shown)
    heading = _rows_heading(rounds, mode, start + refused, counters)
    if first > 0:
        heading += f", newest {len(rounds) - first} shown"

    rows = _element(heading, "chrome", width)
    for i in range(first, len(rounds)):
        r = rounds[i]
        label, num = labels[i]
        if mode == "escalation" and request_last and i == len(rounds) - 1 and num is not None:
            label += " (this request)"
        rows += _element(f"{label}: {neutralise(r.command)}", "agent", width)
        why = neutralise(r.justification)
        if why:
            rows += _element(f"{_INDENT}why: {why}", "agent", width)
        rater = "rater, on the command alone" if num == 1 else "rater"
        rows += _element(f"{_INDENT}{rater}: {_answer(r)}", "rater", width)
    return rows


@dataclass(frozen=True)
class Ask:
    """What a person is asked to rule on (S7): the command, its rating, why a person decides, and
    the argument so far. Empty strings are left out of the block."""

    command: str
    outcome: str = ""
    reason: str = ""
    remedy: str = ""
    why_person: str = ""
    rounds: tuple[Round, ...] = ()
    attempts: int | None = None
    # The last round is this request (the bounds sent it: it was refused once more). Otherwise the
    # rounds are the argument before it, and the request is the command and rating above them.
    request_in_rounds: bool = False


def ask_of(decision: Decision) -> Ask:
    """The :class:`Ask` of an escalated decision."""
    return Ask(
        command=decision.facts.text,
        outcome=decision.outcome.value if decision.outcome else "",
        reason=decision.reason,
        remedy=decision.remedy,
        why_person=decision.to_person_reason,
        rounds=tuple(decision.rounds),
        request_in_rounds=decision.stage is Stage.NEGOTIATION,
    )


def escalation_rows(ask: Ask, *, width: int | None = None) -> list[Row]:
    """The escalation block (S7, S8.2): why a person decides, the command, the rater's words, then
    the argument so far — every element at most :data:`MAX_ROWS_PER_ELEMENT` rows. The watcher's
    prompt, the harness's `ask`, the session's own prompt and the no-person refusal are all these
    rows, so no two of them can describe one escalation differently."""
    if width is not None:
        width = max(width, MIN_WIDTH)
    rows: list[Row] = []
    if ask.why_person:
        rows += _element(f"Why you: {sentence(neutralise(ask.why_person))}", "chrome", width)
    rows += _element(f"Command: {neutralise(ask.command)}", "agent", width)
    if ask.outcome:  # a list entry or a rung sends a command unrated: no rater row then
        rows += _element(f"Rater: {_rating(ask.outcome, ask.reason, ask.remedy)}", "rater", width)
    return rows + render_rows(
        ask.rounds,
        width=width,
        mode="escalation",
        attempts=ask.attempts,
        request_last=ask.request_in_rounds,
    )


def escalation_text(ask: Ask) -> str:
    """:func:`escalation_rows` joined as plain text."""
    return "\n".join(row.text for row in escalation_rows(ask))


def render_transcript(rounds: Sequence[Round], attempts: int | None = None) -> str:
    """The escalation rows joined as plain text, for the no-person refusal (S7); "" when no rounds.

    Defined as the rows joined, so the message and the screen cannot describe one argument two ways.
    """
    return "\n".join(row.text for row in render_rows(rounds, attempts=attempts))


# --- colour -------------------------------------------------------------------------------------

_ANSI: Final[dict[Voice, tuple[str, str]]] = {
    "chrome": ("\x1b[2m", "\x1b[0m"),  # dim
    "agent": ("", ""),  # plain
    "rater": ("\x1b[33m", "\x1b[0m"),  # yellow
}


def paint(rows: Iterable[Row], term: Any = None, *, color: bool = True) -> list[str]:
    """Each row's text coloured by its voice: chrome dim, agent plain, rater yellow.

    ``term`` is a blessed ``Terminal`` (its capabilities are used, so a terminal without colour gets
    none) or None for plain ANSI. ``color=False`` returns the texts unchanged.
    """
    out: list[str] = []
    for row in rows:
        if not color:
            out.append(row.text)
        elif term is not None:
            style = {"chrome": term.dim, "agent": "", "rater": term.yellow}[row.voice]
            out.append(f"{style}{row.text}{term.normal}" if style else row.text)
        else:
            on, off = _ANSI[row.voice]
            out.append(f"{on}{row.text}{off}")
    return out

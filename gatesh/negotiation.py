"""The bounded argument between the agent and the rater (S6), one instance per session.

A ``destructive`` rating at ``auto`` goes back to the agent, which may justify the command
(``CMD  # why: TEXT``, split off by ``gatesh.reading.parse_justification``) or propose another. This module holds what makes that a bounded exchange
rather than a loop; it decides nothing about safety (every round is rated afresh) and only answers
"may the agent argue another round, or is it a person's turn?".

Every mutation is one of these events:

    event                              transcript   consecutive   since-person
    a rejection (record_rejection)     append       +1            +1
    a command ran (note_progress)      kept         0             kept
    a person reached (person_reached)  cleared      0             0
    a new mandate (admit_user_message) cleared      0             0

"A person reached" covers an escalation shown, a new mandate, a session end and a halt. The
transcript outlives the consecutive count on purpose: the command that ran is often the one the
rater asked for (``git stash`` before ``git reset --hard``), and erasing the rounds there would
make the next rating forget the advice being followed. What bounds the transcript instead is the
since-person count, which nothing but a person refills.

Pure: no I/O, no clock. The daemon owns one :class:`Negotiation` per session.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from hashlib import blake2b
from typing import Final

from gatesh._types import CheckerRound, Round
from gatesh.harnesses import Harness

__all__ = [
    "MAX_CHECKER_ROUNDS",
    "MAX_CONSECUTIVE_REJECTIONS",
    "MAX_REJECTIONS_SINCE_PERSON",
    "NEGOTIATED_APPROVAL_COOLDOWN_S",
    "OBSERVATION_MARKER",
    "TRUSTED_CHANNELS",
    "USER_MESSAGE_MAX_CHARS",
    "USER_MESSAGE_RETENTION",
    "CheckerRound",
    "Negotiation",
    "ObservationMemory",
    "SessionEndObservation",
    "Turn",
    "session_end_observation",
]


class Turn(enum.StrEnum):
    """Whose turn it is after a rejection: the agent may argue again, or a person decides (S6)."""

    AGENT = "reject"
    PERSON = "escalate"


# Three refusals in a row means the agent and the rater cannot agree: that is a person's call.
# Consecutive, not total, because a command that ran in between is the agent making progress.
MAX_CONSECUTIVE_REJECTIONS: Final = 3

# The reachability bound. An agent alternating one allowed `ls` with one refused command never
# has three refusals in a row, so without this bound it would never reach a person. Nine is three
# full arguments: room for real progress, and still a person within a bounded number of rounds.
# Not a security control (every round is rated independently); it guarantees a person is asked.
MAX_REJECTIONS_SINCE_PERSON: Final = 9

# A negotiated approval stays on a watched screen this long before the command starts, so the
# approving round is its own visible event rather than overwritten by the command's output in the
# same frame. Nobody reviews a command in 0.8 s: this is not an abort window, and headless surfaces
# do not wait.
NEGOTIATED_APPROVAL_COOLDOWN_S: Final = 0.8

# The user's most recent messages kept for the alignment check (S5) and the open-world carve-out
# (S3.5). Ten covers the last several turns of a conversation, so a host the user named a few
# turns back still counts, while an instruction from long ago stops authorising today's commands.
# The alignment prompt reads fewer than this; the slack keeps a run of short turns ("ok", "go on")
# from pushing the message that carried the mandate out of the window.
USER_MESSAGE_RETENTION: Final = 10

# Longer messages are cut to this many characters. A cut can only drop words, so at worst a
# carve-out or an approval that needed a dropped word does not happen (the stricter direction).
USER_MESSAGE_MAX_CHARS: Final = 16_384

# How many distinct user messages are remembered (as digests) to tell a new mandate from a replay.
# Larger than the window so that a harness replaying a long conversation does not re-admit old
# messages as new ones once they fall out of the window.
_SEEN_DIGESTS: Final = 1024

# The checker's earlier rounds replayed to it (S5.1). More than the reachability bound because
# alignment approvals are recorded too and they do not count towards it; past a dozen the replay
# costs tokens without telling the checker anything new about this argument.
MAX_CHECKER_ROUNDS: Final = 12

# Channels the agent cannot write (S5.3). The daemon names the channel from the connection it came
# in on (a watcher, a `gatesh mandate` outside any gated session, the harness's own hook), never
# from anything inside the message: those bytes may be the agent's. A harness's transcript file is
# not one: the agent's user can append a forged "user" entry to it.
TRUSTED_CHANNELS: Final[frozenset[str]] = frozenset(
    {
        "watch",
        "mandate",
        *(h.prompt_channel for h in Harness),
    }
)


class Negotiation:
    """The argument of one session: the rounds, the two counts, the user's words, the checker's rounds.

    Invariant: ``len(transcript()) == counters()["since_person"]`` — both grow only on a rejection
    and are cleared only when a person is reached, so the rounds a person is shown and the refusals
    counted against the bound are always the same set.
    """

    def __init__(self) -> None:
        self._rounds: list[Round] = []
        self._consecutive = 0
        self._since_person = 0
        self._user_messages: list[str] = []
        self._seen: OrderedDict[bytes, None] = OrderedDict()
        self._checker_rounds: list[CheckerRound] = []

    # --- the argument ----------------------------------------------------------------------

    def record_rejection(self, round: Round) -> Turn:
        """Append a refused round, then say whether the agent may argue again.

        Returns ``Turn.PERSON`` when this refusal reaches either bound, ``Turn.AGENT`` otherwise. The
        round is appended *before* the bounds are tested, so the refusal being escalated is on the
        transcript the person sees (and the renderer marks it "this request"). Until a person is
        reached every later refusal escalates too.
        """
        self._rounds.append(round)
        self._consecutive += 1
        self._since_person += 1
        if (
            self._consecutive >= MAX_CONSECUTIVE_REJECTIONS
            or self._since_person >= MAX_REJECTIONS_SINCE_PERSON
        ):
            return Turn.PERSON
        return Turn.AGENT

    def rejection_escalates(self) -> bool:
        """Whether one more rejection would reach a bound (what :meth:`record_rejection` would
        return, without recording anything: deciding is pure, finishing records)."""
        return (
            self._consecutive + 1 >= MAX_CONSECUTIVE_REJECTIONS
            or self._since_person + 1 >= MAX_REJECTIONS_SINCE_PERSON
        )

    def counters_after(
        self, *, rejected: bool = False, progress: bool = False, reached: bool = False
    ) -> dict[str, int]:
        """:meth:`counters` as they will be once one event of the table above has happened."""
        if reached:
            consecutive = since_person = rounds = 0
        else:
            consecutive = 0 if progress else self._consecutive + rejected
            since_person = self._since_person + rejected
            rounds = len(self._rounds) + rejected
        return {
            "consecutive": consecutive,
            "consecutive_cap": MAX_CONSECUTIVE_REJECTIONS,
            "since_person": since_person,
            "since_person_cap": MAX_REJECTIONS_SINCE_PERSON,
            "rounds": rounds,
        }

    def note_progress(self) -> None:
        """A command of this session was allowed to run: reset the consecutive count, nothing else.

        "Allowed" is what the gate sees; whether the command then succeeded is not known here. Erring
        that way is permissive on the consecutive bound only, which is why the since-person bound
        exists and is left standing.
        """
        self._consecutive = 0

    def person_reached(self) -> None:
        """A person was reached (escalation shown, new mandate, session end, halt): clear the argument.

        Clears the rounds, both counts and the checker's rounds. The user's words stay: they are
        what the user said, not part of the argument. Read :meth:`transcript` and :meth:`counters`
        *before* calling this when they are to be shown or logged.
        """
        self._rounds.clear()
        self._consecutive = 0
        self._since_person = 0
        self._checker_rounds.clear()

    def counters(self) -> dict[str, int]:
        """The counts with their caps, for the audit log and the escalation heading.

        The caps travel with the counts because "2 consecutive" means nothing to a log reader who
        cannot look up the cap; "2 of 3" does.
        """
        return {
            "consecutive": self._consecutive,
            "consecutive_cap": MAX_CONSECUTIVE_REJECTIONS,
            "since_person": self._since_person,
            "since_person_cap": MAX_REJECTIONS_SINCE_PERSON,
            "rounds": len(self._rounds),
        }

    def transcript(self) -> tuple[Round, ...]:
        """Every refused round since a person was last reached, oldest first (a snapshot)."""
        return tuple(self._rounds)

    # --- the user's own words (S5.3) -----------------------------------------------------------

    def admit_user_message(self, text: str, channel: str) -> bool:
        """Admit what the user said through ``channel``; True when ``text`` is now in the window.

        Refused (False, nothing changes) when ``channel`` is not in :data:`TRUSTED_CHANNELS` or the
        text is blank. An admitted message moves to the newest position rather than being stored
        twice, so a harness that replays the whole conversation does not fill the window with
        repeats. A message never seen before is a new mandate: a person was reached, so the
        argument is cleared (S6). A replayed one is not, so a replay cannot refill the bounds;
        a user repeating themselves word for word is counted once (the stricter direction).
        """
        if channel not in TRUSTED_CHANNELS:
            return False
        text = text.strip()[:USER_MESSAGE_MAX_CHARS]
        if not text:
            return False
        digest = blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        new = digest not in self._seen
        self._seen[digest] = None
        self._seen.move_to_end(digest)
        while len(self._seen) > _SEEN_DIGESTS:
            self._seen.popitem(last=False)
        if text in self._user_messages:
            self._user_messages.remove(text)
        self._user_messages.append(text)
        del self._user_messages[:-USER_MESSAGE_RETENTION]
        if new:
            self.person_reached()
        return True

    def user_messages(self) -> tuple[str, ...]:
        """The user's retained words, oldest first; empty until a trusted channel admitted some."""
        return tuple(self._user_messages)

    # --- the checker's earlier rounds (S5.1) -------------------------------------------------------

    def add_checker_round(self, checker_round: CheckerRound) -> None:
        """Keep one alignment check for replay; only the newest :data:`MAX_CHECKER_ROUNDS` are kept."""
        self._checker_rounds.append(checker_round)
        del self._checker_rounds[:-MAX_CHECKER_ROUNDS]

    def checker_rounds(self) -> tuple[CheckerRound, ...]:
        """The checker's earlier rounds since a person was last reached, oldest first.

        The user's words are deliberately not here: they come only from :meth:`user_messages`, the
        gated channel, so a caller assembling "context for the checker" cannot route anything else
        in as the user's.
        """
        return tuple(self._checker_rounds)

    def clear(self) -> None:
        """Forget everything, the user's words included (the session is gone)."""
        self.person_reached()
        self._user_messages.clear()
        self._seen.clear()


# --- the session-end observation (S6) ----------------------------------------------------------

# Says whose words these are. The one reliable sign of a stalled agent in a transcript is a person
# typing "continue"; anything gatesh emits that could be mistaken for the user's words spoils that.
OBSERVATION_MARKER: Final = "gatesh (automated observation, not from the user or the agent):"


@dataclass(frozen=True)
class SessionEndObservation:
    """What was still open when a session ended. Counts only: never a command or a reason.

    ``signature`` identifies the state; :class:`ObservationMemory` says each one once.
    """

    session: str
    rounds: int
    consecutive: int
    since_person: int
    pending_escalations: int

    @property
    def signature(self) -> str:
        return (
            f"{self.session}|{self.rounds}|{self.consecutive}|"
            f"{self.since_person}|{self.pending_escalations}"
        )

    @property
    def text(self) -> str:
        """One line for the person, marked as gatesh's own; states the fact, not a diagnosis."""
        parts = []
        if self.rounds:
            parts.append(
                f"{self.rounds} refused round{'s' if self.rounds != 1 else ''} still open "
                f"({self.consecutive} of {MAX_CONSECUTIVE_REJECTIONS} in a row, "
                f"{self.since_person} of {MAX_REJECTIONS_SINCE_PERSON} since a person was reached)"
            )
        if self.pending_escalations:
            n = self.pending_escalations
            parts.append(f"{n} escalation{'s' if n != 1 else ''} unanswered")
        # No session id: it may be the agent's (GATESH_SESSION); the event names the session.
        return f"{OBSERVATION_MARKER} the session ended with " + " and ".join(parts) + "."


def session_end_observation(
    counters: Mapping[str, int], pending_escalations: int = 0, session: str = ""
) -> SessionEndObservation | None:
    """The observation for a session that ended, or None when nothing was open.

    ``counters`` is :meth:`Negotiation.counters` read *before* the session end clears it.
    ``session`` keys the signature only: the text is counts alone, never a word of the agent's.
    """
    rounds = int(counters.get("rounds", 0))
    pending = max(0, int(pending_escalations))
    if rounds <= 0 and pending == 0:
        return None
    return SessionEndObservation(
        session=session,
        rounds=max(0, rounds),
        consecutive=max(0, int(counters.get("consecutive", 0))),
        since_person=max(0, int(counters.get("since_person", 0))),
        pending_escalations=pending,
    )


class ObservationMemory:
    """Remembers which observations were said, so each distinct state is said once.

    Bounded: past ``limit`` signatures the oldest is forgotten (it could then be said again, which
    costs one repeated line, never a missed one).
    """

    # Far more than the sessions one daemon sees between restarts; each entry is one short string.
    DEFAULT_LIMIT: Final = 512

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self._limit = max(1, limit)
        self._said: OrderedDict[str, None] = OrderedDict()

    def first_time(self, observation: SessionEndObservation) -> bool:
        """True exactly once per distinct signature (recording it); False for a repeat."""
        key = observation.signature
        if key in self._said:
            self._said.move_to_end(key)
            return False
        self._said[key] = None
        while len(self._said) > self._limit:
            self._said.popitem(last=False)
        return True

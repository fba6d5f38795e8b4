"""The facts, findings and decisions that flow through the gate.

Data flows one way: text -> :class:`Facts` (reading) -> :class:`Finding` (policy, rater)
-> :class:`Decision` (pipeline) -> messages (messages, render). Every type here is a plain
frozen dataclass or an enum, so any module can hold one without importing the module that
made it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Final

from gatesh._once import computed_once
from gatesh.harnesses import Harness


class Outcome(enum.StrEnum):
    """What a command would do (S3.2). Ordered: a later member is never milder."""

    SAFE = "safe"
    DESTRUCTIVE = "destructive"
    CATASTROPHIC = "catastrophic"
    ATTACK = "attack"

    @property
    def rank(self) -> int:
        return _OUTCOME_RANK[self]


_OUTCOME_RANK = {
    Outcome.SAFE: 0,
    Outcome.DESTRUCTIVE: 1,
    Outcome.CATASTROPHIC: 2,
    Outcome.ATTACK: 3,
}


def worst(*outcomes: Outcome) -> Outcome:
    """The most severe of ``outcomes`` (SAFE when there are none)."""
    return max(outcomes, key=lambda o: o.rank, default=Outcome.SAFE)


class Action(enum.StrEnum):
    """What happens to the command. The words are the ones ``gatesh eval`` counts."""

    ALLOW = "allow"  # runs
    REJECT = "reject"  # refused by the rater; the agent may negotiate (S6)
    ESCALATE = "escalate"  # a person decides (S7)
    HALT = "halt"  # attack: refused, session halted (S3.7)
    DENY = "deny"  # deny-list entry: refused, no moves
    REFUSE = "refuse"  # hardline, or nobody could be asked: refused, never runs


class Tier(enum.StrEnum):
    """Where a config value came from (S12), in the order the tiers are read: later tiers override
    earlier ones, and the system and project tiers can only tighten."""

    DEFAULT = "default"  # built in
    SYSTEM = "system"
    USER = "user"
    PROJECT = "project"  # the nearest .gatesh.toml: the agent can write it


class Rung(enum.StrEnum):
    """How much autonomy the agent has (S3.1), least first."""

    MANUAL = "manual"
    WRITE = "write"
    ASSISTED = "assisted"
    AUTO = "auto"
    BYPASS = "bypass"

    @property
    def rank(self) -> int:
        return list(Rung).index(self)


RUNG_DESCRIPTIONS: dict[Rung, str] = {
    Rung.MANUAL: "a person decides every command",
    Rung.WRITE: "known read-only commands run; a person decides the rest",
    Rung.ASSISTED: "safe commands run; a person decides anything destructive",
    Rung.AUTO: "safe commands run; the agent argues destructive ones with the rater, then a person",
    Rung.BYPASS: "everything runs except hardline and deny-list commands (logged)",
}


class Stage(enum.StrEnum):
    """The pipeline step that decided (S3), cited by ``explain`` and the audit log."""

    HALTED = "halted"
    HARNESS = "harness-boilerplate"
    DENY_LIST = "deny-list"
    HARDLINE = "hardline"
    SELF_PROTECTION = "self-protection"
    BYPASS = "bypass"
    ESCALATE_LIST = "escalate-list"
    ALLOW_LIST = "allow-list"
    APPROVED_ID = "approved-id"
    RUNG = "rung"
    READ_ONLY = "read-only"
    RATER = "rater"
    FLOOR = "floor"
    ALIGNMENT = "alignment"
    NEGOTIATION = "negotiation"
    BOUNDARY = "boundary"  # a command that failed inside its boundary, asked to run widened (S16)
    CONFIG = "config"  # the configuration is invalid: only what runs whatever it says runs
    ERROR = "error"


# --- reading (S2) -------------------------------------------------------------------------


class Context(enum.StrEnum):
    """Where a command the reader found runs (S2): the one list of contexts.

    A member equals its string (``Context.XARGS == "xargs"``), so rules may compare either way.
    """

    TOP = "top"  # the command line itself
    SUBSHELL = "subshell"  # ( … )
    SUBSTITUTION = "substitution"  # $( … ) and ` … `
    PROCESS_SUBSTITUTION = "process-substitution"  # <( … ) and >( … )
    FUNCTION = "function"  # a function's body (a definition counts as running it)
    CALL = "call"  # a function's body read again for a call with static arguments (S2.1)
    LOOP = "loop"  # a loop's body read once per static word it loops over (S2.1)
    SH_C = "sh -c"  # a string a shell or a wrapper runs as a command line
    EVAL = "eval"
    SU_C = "su -c"
    HEREDOC = "heredoc"  # a here-document or here-string fed to a shell
    FED = "fed"  # code fed to a shell on its input or by process substitution (S2.1)
    FOREIGN = "foreign"  # code of a shell language gatesh does not parse, read as sh for defence
    SCRIPT = "script"  # a shell script file the command runs or sources
    ALIAS = "alias"  # an alias value (defining an alias counts as running it)
    XARGS = "xargs"  # a command xargs, parallel or sem builds from its input
    FIND_EXEC = "find -exec"
    REMOTE = "remote"  # runs on another host (ssh HOST CMD, ansible -a, vagrant ssh -c)
    CONTAINER = "container"  # runs in a container (docker exec, kubectl exec … --)


#: The contexts whose output becomes words of the command around them (``$( … )``, ``<( … )``):
#: what such a command prints is handed on, not shown.
SUBSTITUTIONS: Final = frozenset({Context.SUBSTITUTION, Context.PROCESS_SUBSTITUTION})


class CodeSource(enum.StrEnum):
    """Where the program text of a :class:`Code` fact comes from (S2.1)."""

    INLINE = "inline"  # a -c / -e option's value
    SCRIPT = "script"  # a file operand
    PIPE = "pipe"  # the command before it in a pipeline
    REDIRECT = "redirect"  # `< FILE`
    HEREDOC = "heredoc"  # <<, <<- and <<<
    PROCESS_SUBSTITUTION = "process-substitution"  # `bash <(…)`, `source <(…)`
    SUBSTITUTION = "substitution"  # `eval "$(…)"`, `sh -c "$(…)"`
    SETTING = "setting"  # a command-valued position or variable (`git -c core.pager=…`, `PAGER=…`)
    DEFINED = "defined"  # a file written earlier in the same text, then run or used as a recipe


@dataclass(frozen=True)
class Code:
    """Program text a command runs that is not a command line of its own in the text (S2.1):
    code fed to a shell or interpreter, or code in a language gatesh does not parse.

    ``command`` indexes :attr:`Facts.commands` (the program that runs the code). ``text`` is the
    code when gatesh has it (commands read from it are in ``Facts.commands`` too). ``opaque`` says,
    for a person, why gatesh cannot see what runs; ``transformed`` names the program that
    rewrote a known text on its way (``tr``, ``base64 -d``): obfuscation; ``generator`` is the id
    of the environment-setup row (``gatesh.vocab.programs.generators.GENERATOR_ROWS``) whose output this is.

    Invariant: a fact with ``opaque`` set is never rated ``safe``.
    """

    command: int
    language: str
    source: CodeSource
    text: str | None = None
    opaque: str = ""
    transformed: str = ""
    generator: str = ""


@dataclass(frozen=True)
class Word:
    """One argv word. ``text`` has quoting removed when ``static``; otherwise it is the source text.

    Invariant: a word with any expansion whose value is unknown before running
    (``$X``, ``$(…)``, globs are *not* counted: they stay static text) has ``static=False``.
    """

    text: str
    static: bool = True


@dataclass(frozen=True)
class Redirect:
    """A redirection of a simple command. ``target`` is None when it is not static; ``text`` is
    then the target as written (``"$(git rev-parse --git-dir)/hooks/x"``), "" otherwise."""

    op: str  # '>', '>>', '<', '<<', '<<<', '&>', '>|', '<>', ...
    target: str | None
    fd: int | None = None
    writes: bool = False
    text: str = ""


@dataclass(frozen=True)
class SimpleCommand:
    """One command that would execute, with wrappers peeled.

    ``argv[0]`` is the real program after wrappers (``sudo env FOO=1 rm -rf x`` -> ``rm -rf x``).
    ``head`` is argv[0]'s basename, case-folded, ``.exe`` stripped; empty when the head is dynamic.
    """

    argv: tuple[Word, ...]
    head: str
    raw: str = ""
    wrappers: tuple[str, ...] = ()  # peeled wrapper heads, outermost first
    privileged: bool = False  # under sudo/doas/su/pkexec/run0
    assignments: tuple[str, ...] = ()  # NAME=value prefixes (as written)
    redirects: tuple[Redirect, ...] = ()
    context: Context = Context.TOP  # where it runs
    depth: int = 0  # nesting of re-read strings (sh -c, eval, heredoc, script)
    remote: bool = False  # runs on another host (ssh HOST CMD)
    expanded_head: str = ""  # argv[0] as written when the reader put in its static value ($a$b)

    @property
    def dynamic_head(self) -> bool:
        return not self.head

    # Computed once per command (the fields never change; every layer asks these many times).
    @computed_once
    def args(self) -> tuple[str, ...]:
        """argv[1:] as text (dynamic words as their source text)."""
        return tuple(w.text for w in self.argv[1:])

    @computed_once
    def words(self) -> tuple[str, ...]:
        return tuple(w.text for w in self.argv)

    @computed_once
    def writes(self) -> tuple[str | None, ...]:
        """Targets of write redirections (None for a dynamic target)."""
        return tuple(r.target for r in self.redirects if r.writes)


class Direction(enum.StrEnum):
    """How a command uses a path it names (S2.1). UNKNOWN is judged as both READ and WRITE;
    NAMED as neither (the folder ``cd`` changes into: what later commands' relative paths and
    implicit writes are relative to)."""

    READ = "read"
    WRITE = "write"
    UNKNOWN = "unknown"
    NAMED = "named"

    @property
    def reads(self) -> bool:
        return self is Direction.READ or self is Direction.UNKNOWN

    @property
    def writes(self) -> bool:
        return self is Direction.WRITE or self is Direction.UNKNOWN


class Change(enum.StrEnum):
    """What a write does to the path it names (S2.1); reads and named paths are CONTENT."""

    CONTENT = "content"  # what the path holds may be written or replaced
    REMOVE = "remove"  # deleted, or moved away (rm, unlink, mv's sources, find -delete)
    META = "meta"  # only its mode, owner, attributes or times (chmod, chown, chattr)
    CREATE = "create"  # made new and empty (mkdir, mkfifo, mknod)
    REMOVE_EMPTY = "remove-empty"  # an empty folder removed (rmdir): nothing it held is lost


class PathClass(enum.StrEnum):
    """Where a path lies (S4.1); what reading or writing each class means is in ``gatesh.vocab.paths.classes``."""

    CREDENTIALS = "credential store"
    PERSISTENCE = "persistence location"
    SYSTEM = "system folder"
    GATE = "gatesh's own files"
    WORKTREE = "working tree"
    TEMP = "temporary folder"
    STREAM = "stream or discard device"
    HOME = "home folder"
    ELSEWHERE = "elsewhere on this machine"
    UNKNOWN = "only known when it runs"


class Via(enum.StrEnum):
    """How a command names a path (S2.1 path effects): the word's role, which some rules read (a
    path a redirection truncates, a name inside inline code). A path named by a command run on
    another host or in a container keeps its role as the ``…_ELSEWHERE`` twin, so no rule about
    this machine's roles takes it for one of them. The values are the words ``explain --json``
    writes."""

    ARGV = "argv"  # an operand
    OPTION = "option"  # an option's value
    REDIRECT = "redirect"
    INLINE_CODE = "inline code"  # named inside program text (-c, -e, $(<FILE))
    PROGRAM = "program"  # the program file run
    PIPED_NAME = "piped name"  # a name piped to a command that acts on its input's names
    CD = "cd"  # the folder a later command runs in
    IMPLICIT = "implicit"  # a file the program writes without naming it (pip config set)
    EMBEDDED = "embedded"  # inside an argument of a program gatesh does not read
    ARGV_ELSEWHERE = "argv on another host or in a container"
    OPTION_ELSEWHERE = "option on another host or in a container"
    REDIRECT_ELSEWHERE = "redirect on another host or in a container"
    INLINE_CODE_ELSEWHERE = "inline code on another host or in a container"
    PROGRAM_ELSEWHERE = "program on another host or in a container"
    PIPED_NAME_ELSEWHERE = "piped name on another host or in a container"
    CD_ELSEWHERE = "cd on another host or in a container"
    IMPLICIT_ELSEWHERE = "implicit on another host or in a container"
    EMBEDDED_ELSEWHERE = "embedded on another host or in a container"

    def elsewhere(self) -> Via:
        """This role in a command run on another host or in a container (itself if already)."""
        return self if self.name.endswith("_ELSEWHERE") else Via[f"{self.name}_ELSEWHERE"]


@dataclass(frozen=True)
class PathEffect:
    """One path a command names, with its direction and class (S2.1 path effects).

    ``resolved`` is absolute, with ``~``/``$HOME``, ``..`` and symlinks inside the working tree
    resolved; it is "" (and ``cls`` UNKNOWN) when the path depends on a value known only at run
    time. ``replaces`` marks a write that deletes, empties, truncates or overwrites what the path
    holds (judged by the file's state in git, S3.2); ``only`` narrows such a write to the names
    under the path matching a glob (``find DIR -name GLOB -delete``). ``change`` says what a write
    does (content, removal, mode only, creation); ``deep``: the write reaches everything under the
    path (``cp -r SRC DIR``, ``chmod -R``, an archive extracted into it, names found under it and
    fed to a writer); ``partial``: only some of what is under the path, chosen by tests the reader
    does not resolve (``find DIR -mtime +3 -delete``); ``reach``: how many levels under the path a
    deep effect goes at most (``find -maxdepth N``), None for all of them.
    """

    path: str
    resolved: str
    direction: Direction
    cls: PathClass
    command: int  # index into Facts.commands
    via: Via = Via.ARGV
    replaces: bool = False
    only: str = ""
    kind: str = (
        ""  # the name of the path-class row that matched ("private keys"), "" for a location
    )
    change: Change = Change.CONTENT
    deep: bool = False
    partial: bool = False
    reach: int | None = None


# The note of a virtual environment's activate script that is not there when the command is
# decided (nor can be made before it runs): sourcing it fails, so it runs nothing.
ABSENT: Final = "absent: not there when decided, so it runs nothing"
# The note of a virtual environment's activate script that an earlier command of the same text
# makes (``python3 -m venv .venv && . .venv/bin/activate``): the tool's own script, which only
# sets VIRTUAL_ENV and PATH, and nothing else in the text can write it first.
VENV_OWN: Final = "the activate script of the virtual environment made earlier in this text"
# The note of a script whose path is only known when the command runs (``. "$DIR/env.sh"``): the
# path rules and the dynamic-word rules judge it, not the unread-script gap.
DYNAMIC_PATH: Final = "dynamic path"
# Script notes that mean nothing unread runs.
RUNS_NOTHING_UNREAD: Final = frozenset({ABSENT, VENV_OWN})


class SetBy(enum.StrEnum):
    """How a command sets (or removes) a shell variable (S2.1: the session's own variables)."""

    ASSIGN = "assign"  # NAME=value as a statement: this shell
    PREFIX = "prefix"  # NAME=value before a command, or given by env: that command only
    EXPORT = "export"  # export, declare -x, typeset -x, setenv: this shell and what it starts
    DECLARE = "declare"  # declare, typeset, local, readonly, integer, float: this shell
    READ = "read"  # read, mapfile, readarray, printf -v, getopts: this shell, from its input
    UNSET = "unset"  # unset, unsetenv
    NAMEREF = "nameref"  # declare -n REF=NAME: what is assigned to REF later is NAME's

    @property
    def lasting(self) -> bool:
        """Whether the setting outlives the one command that makes it."""
        return self is not SetBy.PREFIX


@dataclass(frozen=True)
class Variable:
    """A shell variable a command sets or removes (S2.1).

    ``name`` is "" when the name is only known when the command runs (``export $x=…`` with ``x``
    unknown, ``export $(…)``); ``value`` is the value when static (None when only known when it
    runs, or for an unset); ``text`` is the value as written; ``command`` indexes
    :attr:`Facts.commands`, or is -1 for a bare ``NAME=value`` statement.
    """

    name: str
    value: str | None
    by: SetBy
    command: int = -1
    text: str = ""


@dataclass(frozen=True)
class ModuleRun:
    """A module ``python -m NAME`` runs: its ``name``, and the index in :attr:`Facts.commands` of
    the command that runs it (so two runs of one name in different folders stay apart)."""

    name: str
    command: int


@dataclass(frozen=True)
class Script:
    """A script file the command runs. Shell scripts are read and gated; others are model context.

    ``module``: set for a file read because ``python -m NAME`` runs it (one of the module's
    files, or the reason gatesh cannot say which run).

    Invariant: ``text`` is None exactly when ``note`` says why (unreadable, too large, binary, a
    dynamic path, :data:`ABSENT` or :data:`VENV_OWN`)."""

    path: str
    interpreter: str
    text: str | None  # None when unreadable or too large (see note)
    note: str = ""
    module: ModuleRun | None = None


@dataclass(frozen=True)
class Facts:
    """Everything the reader learned about one command string (S2).

    Invariant: when ``readable`` is False, ``commands`` may be partial and ``unreadable`` says why;
    policy must then also match on ``text`` (S3.3) and an allow entry never matches (S3.6).
    """

    text: str  # the command as received (after harness unwrapping: the agent's command)
    commands: tuple[SimpleCommand, ...] = ()
    pipelines: tuple[tuple[int, ...], ...] = ()  # indexes into commands, left to right, len >= 2
    hosts: tuple[str, ...] = ()  # network hosts named in a fetch/transfer position
    functions: tuple[str, ...] = ()  # names of functions defined
    assignments: tuple[str, ...] = ()  # bare `NAME=value` statements (no command runs), as written
    scripts: tuple[Script, ...] = ()
    code: tuple[Code, ...] = ()  # program text commands run that is not a command line (S2.1)
    paths: tuple[
        PathEffect, ...
    ] = ()  # every path a command names, with direction and class (S2.1)
    notes: tuple[str, ...] = ()  # reader notes, passed to the rater
    # The command names more paths than the reader records (``paths`` holds the first ones).
    paths_cut: bool = False
    variables: tuple[Variable, ...] = ()  # shell variables the command sets or removes
    # The floors that stand over the command (S3.5), one line each, which the pipeline hands the
    # rater after the command (S4): never the reader's, so a reader note is never taken for one.
    floor_notes: tuple[str, ...] = ()
    readable: bool = True
    unreadable: str = ""  # why not readable: "unreadable: …", "too long", "too deep"
    harness: Harness | None = None  # the harness whose wrapper was peeled, if one was
    outer_text: str = ""  # the full string including harness boilerplate, when harness is set
    # The id of the harness boilerplate shape this whole text is (a harness's own shell-snapshot
    # script, S1): nothing in it is the agent's, so it is neither rated nor a negotiation round.
    boilerplate: str = ""
    justification: str = ""  # from a trailing `# why: …` comment
    # The command runs at a terminal: its surface said so (a PTY session; a -c or shim client whose
    # input and output are one). False when it runs without one, or nothing said (a library call,
    # explain): a full-screen program then waits for keys nobody types.
    terminal: bool = False

    @property
    def heads(self) -> tuple[str, ...]:
        return tuple(c.head for c in self.commands)


# --- findings and verdicts -----------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One rule that matched: the id cited by ``explain`` and the audit log.

    ``remedy`` says what would make the command acceptable (for destructive findings).
    """

    rule_id: str
    outcome: Outcome
    reason: str
    remedy: str = ""
    # Where an undo snapshot must hold what this finding's command would lose for the finding to
    # stand as judged (S17): work-tree roots, or paths outside any repository. Empty: it does not
    # rest on a snapshot.
    covers: tuple[str, ...] = ()
    # False when no justification can change the finding: the command cannot work here (a
    # full-screen program without a terminal), so the agent is offered only a different command.
    justifiable: bool = True


@dataclass(frozen=True)
class Gap:
    """Something the builtin rater did not see or does not model about a command (S4): its verdict
    rests on complete knowledge only when it has none. ``id`` is a row of the builtin's gap table
    (``knowledge.*``); ``reason`` is one sentence a person can read."""

    id: str
    reason: str


@dataclass(frozen=True)
class Verdict:
    """The rater's answer (S4). ``fail_cause`` is set when no rating was obtained (fail-closed).

    Invariant: ``fail_cause`` set implies ``outcome`` is DESTRUCTIVE and ``reason`` starts
    "Could not assess this command:".
    """

    outcome: Outcome
    reason: str
    remedy: str = ""
    backend: str = "builtin"
    model: str = ""
    duration_ms: float = 0.0
    fail_cause: str = ""  # "" | "no-model" | "timeout" | "unparseable" | "error"
    findings: tuple[Finding, ...] = ()
    cached: bool = False
    # The builtin's gaps: what it did not see or does not model (empty: complete knowledge).
    gaps: tuple[Gap, ...] = ()
    # How the cascade (S4, ``auto`` with a key) reached this verdict; None from a single backend.
    cascade: Cascade | None = None
    # The places an undo snapshot must hold for this verdict to stand (the findings' ``covers``):
    # a loss judged reversible because a snapshot taken before the command holds it (S17).
    undo: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        """Whether this is a builtin verdict resting on complete knowledge (S4): every executed
        command read, every effect modelled, no opaque code, and a rating actually obtained."""
        return self.backend == "builtin" and not self.fail_cause and not self.gaps


class CascadeStage(enum.StrEnum):
    """The stage of the cascade whose verdict stands (S4)."""

    BUILTIN = "builtin"
    MODEL = "model"


class Asked(enum.StrEnum):
    """Why the cascade's model stage was, or was not, asked about a command (S4)."""

    # Not asked: the builtin's verdict stands alone.
    COMPLETE = "complete"  # safe, on complete knowledge
    ATTACK = "attack"  # the builtin found an attack
    LEFT = "left-to-builtin"  # ``rater.ask_model`` leaves this case to the builtin
    # safe, and every gap is one the boundary the command runs in contains (gatesh.boundary.contain)
    CONTAINED = "contained"
    # Asked: the model may raise the builtin's verdict, never lower it.
    UNKNOWN = "unknown"  # safe, but not on complete knowledge (or the builtin could not assess)
    FLOOR = "floor"  # safe, but a floor stands over it
    DESTRUCTIVE = "destructive"
    CATASTROPHIC = "catastrophic"

    @property
    def asks(self) -> bool:
        return self not in (Asked.COMPLETE, Asked.ATTACK, Asked.LEFT, Asked.CONTAINED)


@dataclass(frozen=True)
class Cascade:
    """The cascade's record of one rating: which stage decided, why the model was or was not asked
    (``why`` one sentence), the builtin stage's own verdict, and the model's answer when asked.

    Invariant: ``model`` is None exactly when ``asked.asks`` is False; the verdict that carries
    this record never has a milder outcome than ``builtin``.
    """

    decided: CascadeStage
    asked: Asked
    why: str
    builtin: Verdict
    model: Verdict | None = None


class AlignmentDecision(enum.StrEnum):
    """What the alignment check decided (S5.2): its three tools, or no decision (S5.5)."""

    APPROVE = "approve"  # the command runs; the person is told (S5.6)
    SUGGEST = "suggest"  # the rejection stands, with a narrower command appended
    ESCALATE = "escalate"  # a person decides
    FAIL = "fail"  # no decision (no model, timeout, …): the rater's action stands


@dataclass(frozen=True)
class AlignmentResult:
    """The alignment check's answer (S5)."""

    decision: AlignmentDecision
    reason: str = ""
    suggestion: str = ""
    fail_cause: str = ""
    duration_ms: float = 0.0


@dataclass(frozen=True)
class Round:
    """One round of the argument (S6): what the agent asked and what the rater answered.

    ``passed`` marks a round that ended the argument in the agent's favour (live view labels it
    "Agreed" when ``command`` equals the refused one, "Accepted" otherwise).
    """

    command: str
    justification: str = ""
    outcome: Outcome = Outcome.DESTRUCTIVE
    reason: str = ""
    remedy: str = ""
    passed: bool = False
    suggestion: str = ""


@dataclass(frozen=True)
class CheckerRound:
    """One earlier alignment check, replayed to the checker as its own tool calls (S5.1).

    ``tool_calls`` is ``(tool name, JSON arguments)`` in the order the checker made them. Opaque to
    the session: the alignment module writes and reads them; the negotiation only keeps and clears them.
    """

    command: str
    tool_calls: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class SessionChange:
    """What deciding one command changes in its session; ``pipeline.decide`` computes it and only
    ``gatesh.finish`` applies it (``SessionState.apply``).

    Deciding is pure, so ``explain``, ``eval``, the daemon-less fallback and the daemon decide alike
    from the same state; the change is applied once, by the one place that finishes a decision.
    The fields are applied in the order written here (a halt last: it clears the argument).
    """

    spent_approval: str = ""  # the approved-once key this command used (S7)
    spent_run_anyway: str = ""  # the `run anyway` key this halted command used (S3.7)
    checker_rounds: tuple[CheckerRound, ...] = ()  # alignment checks to replay next time (S5.1)
    rejection: Round | None = None  # a refused round of the argument (S6)
    progress: bool = False  # the command runs: the consecutive count restarts (S6)
    halt: str = ""  # the session halts for this reason (S3.7)


NO_CHANGE: SessionChange = SessionChange()


@dataclass(frozen=True)
class Decision:
    """The pipeline's answer for one command.

    Invariant: ``action`` is ALLOW only when a stage positively allowed it; any error yields
    REFUSE with stage ERROR. ``message`` is the S8.1 text the agent is told (empty for ALLOW).
    """

    action: Action
    stage: Stage
    outcome: Outcome | None
    reason: str
    rung: Rung
    facts: Facts
    message: str = ""
    rule_id: str = ""
    remedy: str = ""
    findings: tuple[Finding, ...] = ()
    verdict: Verdict | None = None
    alignment: AlignmentResult | None = None
    floors: tuple[Finding, ...] = ()
    notice: str = ""  # one line for the person (carve-out, alignment approval, …)
    rounds: tuple[Round, ...] = ()  # the argument so far, for an escalation or rejection
    counters: dict[str, int] = field(default_factory=dict)
    pending_id: str = ""
    to_person_reason: str = ""  # why a person decides (catastrophic, floor stood, fail-closed …)
    change: SessionChange = NO_CHANGE  # what finishing this decision changes in its session
    # Undo (S17). ``undo``: the places a snapshot must hold before the command runs for this
    # decision to stand (from the verdict); when that snapshot cannot be taken the command is
    # decided again without undo. ``snapshot``: the id taken before it runs ("" for none);
    # ``undo_note``: why none was taken, when one was due.
    undo: tuple[str, ...] = ()
    snapshot: str = ""
    undo_note: str = ""

    @property
    def allowed(self) -> bool:
        return self.action is Action.ALLOW

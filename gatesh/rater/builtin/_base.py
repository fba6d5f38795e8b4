"""The rule shape every domain table uses, and the per-command view rules match on.

A :class:`Rule` is data: a stable id, a severity, a one-sentence reason, a remedy, the heads it is
dispatched on, a match function, and examples and counter-examples (checked by the validator
test). Severity becomes an :class:`~gatesh._types.Outcome` in exactly one place, :func:`outcome_of`.

Where a named path lies (:func:`~._scope.resolve`, :func:`~._scope.scope_of`) is in
:mod:`gatesh.rater.builtin._scope`.
"""

from __future__ import annotations

import enum
import os
import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from gatesh._types import Context, Direction, Facts, Finding, Outcome, PathEffect, SimpleCommand
from gatesh.rater.builtin._scope import resolve
from gatesh.rater.probe import Probe
from gatesh.vocab.grammar import Argv, copy_destination, grammar_of, parse
from gatesh.vocab.paths.classes import others_may_create
from gatesh.vocab.programs.interpreters import is_interpreter
from gatesh.vocab.programs.workdir import CD_HEADS, CHDIR_WRAPPERS, NAMED_FILES_ONLY


class Severity(enum.StrEnum):
    """How bad a rule's effect is; mapped to an outcome by :func:`outcome_of` only."""

    DESTRUCTIVE = "destructive"  # undoable from inside the session
    CATASTROPHIC = "catastrophic"  # needs a backup, a re-provision or a third party
    ATTACK = "attack"  # the structure shows compromise (S3.2)
    SAFE = "safe"  # recognised as harmless, with the reason why (a verdict cites it when alone)


_OUTCOMES: Final = {
    Severity.SAFE: Outcome.SAFE,
    Severity.DESTRUCTIVE: Outcome.DESTRUCTIVE,
    Severity.CATASTROPHIC: Outcome.CATASTROPHIC,
    Severity.ATTACK: Outcome.ATTACK,
}


_SEVERITIES: Final = {outcome: severity for severity, outcome in _OUTCOMES.items()}


def outcome_of(severity: Severity) -> Outcome:
    """The outcome a rule of ``severity`` gives the command (the one severity -> outcome map)."""
    return _OUTCOMES[severity]


def severity_of(outcome: Outcome) -> Severity:
    """The severity a finding of ``outcome`` carries when a rule re-rates it (the inverse map;
    total over :class:`Outcome`, so a rule re-rating an inner command cannot meet a missing key)."""
    return _SEVERITIES[outcome]


D, C, A, S = Severity.DESTRUCTIVE, Severity.CATASTROPHIC, Severity.ATTACK, Severity.SAFE
# A name the shell expands to the files it matches: whether it names one is only known then.
_GLOB_CHARS: Final = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class Hit:
    """A match that refines its rule: a different severity, or words to fill the reason with."""

    severity: Severity | None = None
    detail: str = ""
    remedy: str | None = None
    covers: tuple[str, ...] = ()  # where an undo snapshot holds the loss it judged (S17)


MatchResult = Hit | bool | None


@dataclass(frozen=True)
class Rule:
    """One piece of rater knowledge.

    Invariant: ``reason`` is one sentence; ``{detail}`` in it is filled from the :class:`Hit`.
    ``heads`` empty means the rule is tried on every command (keep those rules cheap).
    ``on_facts`` rules receive the :class:`Ctx` instead of a command and run once per command line.
    ``needs``: lower-case ASCII literals, one of which is in :attr:`Cmd.hay` of every command the
    rule matches; a command whose (ASCII) ``hay`` holds none of them is not tried (a cheap filter
    for rules tried on every head; empty: always tried). The validator test checks it loses no match.
    For an ``on_facts`` rule the literals are looked for in :attr:`Ctx.hay`, the line's own text.
    ``tried_on``: for a rule with no ``heads``, the heads it can match at all (its match function
    returns nothing for any other head, as its first test says); a command of another head is not
    tried (None: every head). The table runner asks it once per head, and the validator test checks
    it loses no match. Unlike ``heads`` it does not make the builtin claim a model of those programs.
    ``justifiable``: False for a rule whose hazard is that the command cannot work here, not that
    it is risky; a justification cannot change that, so the agent is not offered one.
    """

    id: str
    severity: Severity
    reason: str
    match: Callable[..., MatchResult]
    remedy: str = ""
    heads: frozenset[str] = frozenset()
    on_facts: bool = False
    examples: tuple[str, ...] = ()
    counter: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    tried_on: Callable[[str], bool] | None = None
    justifiable: bool = True


def heads(*names: str) -> frozenset[str]:
    return frozenset(names)


def among(*groups: Iterable[str]) -> Callable[[str], bool]:
    """A :attr:`Rule.tried_on` admitting exactly the heads of ``groups``."""
    return frozenset().union(*groups).__contains__


def interpreters_and(*groups: Iterable[str]) -> Callable[[str], bool]:
    """A :attr:`Rule.tried_on` admitting every interpreter (:func:`is_interpreter`: versions too,
    ``python3.11``) and the heads of ``groups``."""
    names = frozenset().union(*groups)
    return lambda head: head in names or is_interpreter(head)


def except_(*groups: Iterable[str]) -> Callable[[str], bool]:
    """A :attr:`Rule.tried_on` admitting every head but those of ``groups``."""
    names = frozenset().union(*groups)
    return lambda head: head not in names


# --- the views rules see ----------------------------------------------------------------------


@dataclass
class Ctx:
    """Per-command-line context: the facts, the working directory and the home directory."""

    facts: Facts
    cwd: str
    home: str
    depth: int = 0
    cmds: list[Cmd] = field(default_factory=list)
    cwds: list[str | None] = field(
        default_factory=list
    )  # effective cwd per command (None: unknown)
    vars_set: bool = False  # the line assigns HOME/TMPDIR/TMP/PWD itself
    # Rates another command line with the same tables (a command string found inside code):
    # handed in by the table runner, so no rule module imports the package that holds it.
    rate_line: Callable[[Facts, int], list[Finding]] | None = None
    root: bool = False  # the commands run as root: they can write the machine's own folders
    # The path effects of each (meaning, reading): the effect rules read the same facts, so the
    # lists are made in one pass per line (:func:`gatesh.rater.builtin.effects._effects`).
    effects_of: dict[tuple[enum.Enum | None, bool], tuple[PathEffect, ...]] = field(
        default_factory=dict
    )
    _hay: str | None = field(default=None, init=False, repr=False)
    _probe: Probe | None = field(default=None, init=False, repr=False)
    _named: tuple[dict[str, int], dict[str, list[int]], bool, int] | None = field(
        default=None, init=False, repr=False
    )

    def named(self) -> tuple[dict[str, int], dict[str, list[int]], bool, int]:
        """For :meth:`Cmd.absent`, made once per line: the first command naming each path in an
        argument (``cd`` aside), the commands writing each path (the reader's effects), whether a
        command writes a path only known when it runs, and the first directory change that is
        not a plain top-level ``cd`` (after it, no relative name is known for certain)."""
        if self._named is None:
            named: dict[str, int] = {}
            scoped_cd = len(self.cmds)
            for c in self.cmds:
                if c.head in CD_HEADS:
                    if c.sc.context is not Context.TOP or c.sc.depth or c.sc.wrappers:
                        scoped_cd = min(scoped_cd, c.index)
                    continue
                base = c.cwd or self.cwd
                for a in c.args:
                    if a and not a.startswith("-"):
                        p = os.path.normpath(a if os.path.isabs(a) else os.path.join(base, a))
                        named.setdefault(p, c.index)
            written: dict[str, list[int]] = {}
            unknown = False
            for e in self.facts.paths:
                if e.direction not in (Direction.WRITE, Direction.UNKNOWN):
                    continue
                if not e.resolved:
                    unknown = True
                written.setdefault(e.resolved, []).append(e.command)
            self._named = (named, written, unknown, scoped_cd)
        return self._named

    @property
    def probe(self) -> Probe:
        """This line's questions to the working tree (S3.2), memoised: made at the first question
        (most lines ask none)."""
        if self._probe is None:
            self._probe = Probe(home=self.home)
        return self._probe

    @property
    def hay(self) -> str:
        """The line's text lower-cased: where an ``on_facts`` rule's ``needs`` are looked for. ''
        when it is not ASCII (as :attr:`Cmd.hay`), so no rule is skipped."""
        if self._hay is None:
            text = self.facts.text
            self._hay = text.lower() if text.isascii() else ""
        return self._hay

    def track_cwd(self) -> None:
        """Follow ``cd``/``pushd`` left to right, so ``cd .. && rm -rf build`` is judged in the parent."""
        cur: str | None = self.cwd
        out: list[str | None] = []
        for c in self.cmds:
            out.append(cur)
            if c.head in ("cd", "pushd", "chdir"):
                target = c.pos[0] if c.pos else "~"
                if any(c.dyn) and target != "~" and not target.startswith(("$HOME", "${HOME}")):
                    cur = None
                elif cur is not None:
                    cur = resolve(target, cur, self.home)
        self.cwds = out
        text = self.facts.text
        # _SETS_VARS needs "HOME=", "TMP" or "PWD=" (a cheaper test first: most lines set none).
        self.vars_set = ("HOME=" in text or "TMP" in text or "PWD=" in text) and any(
            not (m.group(1) in ("TMPDIR", "TMP") and _TEMP_VALUE.match(m.group(2).strip("'\"")))
            for m in _SETS_VARS.finditer(text)
        )

    @property
    def text(self) -> str:
        return self.facts.text


_SETS_VARS: Final = re.compile(
    r"(?:^|[\s;&|(])(?:export\s+|declare\s+(?:-x\s+)?)?(HOME|TMPDIR|TMP|PWD)=(\S*)"
)
# A temporary folder spelled out (no `..`, no expansion): TMPDIR set to it still names a temporary
# folder, whichever value a later `$TMPDIR` expands to (a prefix assignment does not reach its own words).
_TEMP_VALUE: Final = re.compile(r"^['\"]?/(?:tmp|var/tmp)(?:/(?!\.\.?(?:/|$))[\w.-]+)*/?['\"]?$")
_DASHES: Final = str.maketrans(
    {
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\ufe63": "-",
        "\uff0d": "-",
    }
)


class Cmd:
    """A :class:`SimpleCommand` prepared for matching: options split, positionals, pipeline peers.

    ``flags`` holds every option as written up to ``=`` plus, for a short cluster like ``-rf``,
    each letter as its own ``-r``/``-f``. ``pos`` holds the words that do not start with ``-``
    (everything after ``--``); for a program with a grammar row (:mod:`gatesh.vocab.grammar`:
    git, kubectl, docker, curl, …) it holds its subcommand words and operands only, as the
    program reads them (``kubectl -n prod delete deploy x``: delete, deploy, x), and ``flags``
    also the options the grammar read (a bundled value ends a cluster: ``-sLo F``: -s, -L, -o).
    Otherwise option values are also in ``pos`` (rules know this).
    """

    __slots__ = (
        "_hay",
        "_low",
        "_writes",
        "args",
        "ctx",
        "dyn",
        "flags",
        "head",
        "index",
        "pos",
        "sc",
    )

    def __init__(self, sc: SimpleCommand, index: int, ctx: Ctx) -> None:
        self.sc = sc
        self.index = index
        self.ctx = ctx
        self.head = sc.head
        args: list[str] = []
        dyn: list[bool] = []
        flags: set[str] = set()
        pos: list[str] = []
        ended = False
        for w in sc.argv[1:]:
            a = w.text
            if w.static:
                if not a.isascii():
                    a = a.translate(_DASHES)  # every dash it maps is non-ASCII
            else:
                a = a.replace('"', "")
            args.append(a)
            dyn.append(not w.static)
            if ended or a[:1] != "-" or a == "-":
                pos.append(a)
            elif a == "--":
                ended = True
            elif a[1] == "-":
                flags.add(a.split("=", 1)[0])
            else:
                flags.add(a)
                body = a[1:]
                if body.isalpha() and len(body) <= 6:
                    flags.update("-" + ch for ch in body)
        if grammar_of(self.head) is not None:
            argv = parse(self.head, args, [not d for d in dyn])
            flags.update(o.name for o in argv.options)
            pos = [*argv.path, *argv.operands]
        self.args: tuple[str, ...] = tuple(args)
        self.dyn: tuple[bool, ...] = tuple(dyn)
        self.flags: frozenset[str] = frozenset(flags)
        self.pos: tuple[str, ...] = tuple(pos)
        self._low: str | None = None
        self._writes: tuple[str, ...] | None = None
        self._hay: str | None = None

    @property
    def low(self) -> str:
        """All arguments joined by spaces, lower-cased (for cheap substring tests)."""
        if self._low is None:
            self._low = " ".join(self.args).lower()
        return self._low

    @property
    def hay(self) -> str:
        """Its head, arguments, assignments and write targets, lower-cased, one a line: the text a
        rule's ``needs`` literals are looked for in. '' when any of it is not ASCII, where
        lower-casing and a case-blind pattern can disagree (``re.I`` matches 's' to 'ſ'), so no
        rule is skipped."""
        if self._hay is None:
            text = "\n".join((self.head, *self.args, *self.sc.assignments, *self.writes))
            self._hay = text.lower() if text.isascii() else ""
        return self._hay

    @property
    def cwd(self) -> str | None:
        """The working directory this command runs in (after any earlier ``cd``); None when unknown."""
        cw = self.ctx.cwds
        return cw[self.index] if self.index < len(cw) else self.ctx.cwd

    def absent(self, name: str) -> bool:
        """Whether the file ``name`` this command names is not there when it is decided, in a
        directory known for certain, and no other command of this text may write it: a program
        that is not there cannot run, a path that is not there loses nothing (S3.2 judges the
        state when the command is decided). A name on PATH (run by its name) is not absent."""
        sc = self.sc
        if sc.context is not Context.TOP or sc.depth or CHDIR_WRAPPERS.intersection(sc.wrappers):
            return False
        named, written, unknown, scoped_cd = self.ctx.named()
        if scoped_cd < self.index:
            return False
        if any(o.head not in NAMED_FILES_ONLY for o in self.ctx.cmds[: self.index]):
            return False  # an earlier command may make files it does not name (curl -O, tar x)
        cwd = self.cwd
        if cwd is None or not name or name.startswith(("~", "-")) or _GLOB_CHARS.search(name):
            return False
        path = os.path.normpath(name if os.path.isabs(name) else os.path.join(cwd, name))
        if os.path.lexists(path) or others_may_create(path):
            return False
        if unknown or any(
            (w == path or w.startswith(path + "/") or path.startswith(w.rstrip("/") + "/"))
            and any(k != self.index for k in ks)
            for w, ks in written.items()
        ):
            return False  # another command of this text may write it (or what it holds)
        # an earlier command naming it, or a missing folder on its way (`ln -s /etc l && rm -rf
        # l/`, `mkdir d && …`), may make it, whatever the reader knows of that command's effects
        if named.get(path, self.index) < self.index:
            return False
        up = os.path.dirname(path)
        while up not in ("/", ""):
            if named.get(up, self.index) < self.index and not os.path.lexists(up):
                return False
            up = os.path.dirname(up)
        return not ("/" not in name and self.head == name and shutil.which(name) is not None)

    def is_dynamic(self, word: str) -> bool:
        return any(d and a == word for a, d in zip(self.args, self.dyn, strict=False))

    def has(self, *opts: str) -> bool:
        return not self.flags.isdisjoint(opts)

    @property
    def argv(self) -> Argv:
        """Its words as its program reads them (the grammar row, or plain getopt)."""
        return parse(self.head, self.args, [not d for d in self.dyn])

    def opt_value(self, *names: str) -> str | None:
        """The value of the first option in ``names`` (``--x=v``, ``--x v``, ``-xv`` or ``-x v``;
        for a program with a grammar row, as it reads them: ``-sLo F`` gives ``-o`` F)."""
        if grammar_of(self.head) is not None:
            vals = self.argv.values(*names)
            return vals[0] if vals else None
        args = self.args
        for i, a in enumerate(args):
            for n in names:
                if a == n:
                    return args[i + 1] if i + 1 < len(args) else ""
                if n.startswith("--") and a.startswith(n + "="):
                    return a[len(n) + 1 :]
                if not n.startswith("--") and len(n) == 2 and a.startswith(n) and len(a) > 2:
                    return a[2:]
        return None

    def opt_values(self, *names: str) -> list[str]:
        """Every value given to the options ``names`` (clusters read through the grammar)."""
        if grammar_of(self.head) is not None:
            return list(self.argv.values(*names))
        out: list[str] = []
        args = self.args
        for i, a in enumerate(args):
            for n in names:
                if a == n and i + 1 < len(args):
                    out.append(args[i + 1])
                elif n.startswith("--") and a.startswith(n + "="):
                    out.append(a[len(n) + 1 :])
        return out

    @property
    def writes(self) -> tuple[str, ...]:
        """The static targets of its write redirections (computed once)."""
        if self._writes is None:
            self._writes = tuple(t for t in self.sc.writes if t)
        return self._writes

    @property
    def reads(self) -> tuple[str, ...]:
        return tuple(
            r.target for r in self.sc.redirects if not r.writes and r.target and r.op in ("<", "<>")
        )

    @property
    def feeders(self) -> list[Cmd]:
        """Commands earlier in the same pipeline (they feed this one's stdin, maybe indirectly)."""
        out: list[Cmd] = []
        for p in self.ctx.facts.pipelines:
            if self.index in p:
                k = p.index(self.index)
                out.extend(self.ctx.cmds[j] for j in p[:k] if j < len(self.ctx.cmds))
        return out

    @property
    def consumers(self) -> list[Cmd]:
        out: list[Cmd] = []
        for p in self.ctx.facts.pipelines:
            if self.index in p:
                k = p.index(self.index)
                out.extend(self.ctx.cmds[j] for j in p[k + 1 :] if j < len(self.ctx.cmds))
        return out

    @property
    def heredoc_fed(self) -> bool:
        return any(r.op.startswith("<<") for r in self.sc.redirects)

    def sub(self, k: int = 0) -> str:
        """The ``k``-th positional word (subcommand), lower-cased, or ''."""
        return self.pos[k].lower() if len(self.pos) > k else ""


# --- shared vocabulary -------------------------------------------------------------------------

# A shell named as a path (/bin/sh, /usr/local/bin/bash) anywhere inside a word.
SHELL_PATH_RE: Final = re.compile(
    r"(?<![\w+-])(?:/usr)?(?:/local)?/s?bin/(?:ba|da|z|k|mk|c|tc|fi|a|y|r|pdk)?sh(?![\w.+-])"
)
# Code that spawns a shell by name: system("sh"), exec 'bash', spawn("/bin/sh"), pty.spawn …
SPAWN_RE: Final = re.compile(
    r"(?:\b(?:system|exec[lvpe]*|spawn\w*|popen\d?|passthru|shell_exec|pcntl_exec|proc_open|"
    r"callcommand|run-shell-command|esyscmd|syscmd|write18|execute|call|run|start|processbuilder|"
    r"getruntime\(\)\.exec|os\.execute|io\.popen|subprocess\.\w+)\b[\s(\['\"`,{:]{1,8}"
    r"(?:/usr)?(?:/bin/)?(?:ba|da|z|k|c|tc|fi|a)?sh\b(?![.\w-])"
    r"|\bpty\.spawn\b|(?:^|[\s;'\"(])(?::!|!)\s*(?:/bin/)?(?:ba|da|z|k)?sh\b|:shell\b|:terminal\b)",
    re.IGNORECASE,
)


# --- what a command writes ----------------------------------------------------------------------

EDITORS: Final = frozenset(
    {
        "vi",
        "vim",
        "nvim",
        "nano",
        "emacs",
        "ee",
        "pico",
        "joe",
        "micro",
        "code",
        "gedit",
        "kate",
        "mcedit",
        "ed",
        "ex",
        "visudo",
        "sudoedit",
        "vipw",
        "vigr",
    }
)


def write_targets(c: Cmd) -> list[str]:
    """Files ``c`` writes: redirect targets, tee/sed -i/editor operands, the destination of cp/mv/ln/install."""
    out = list(c.writes)
    h = c.head
    if h == "tee":
        out.extend(c.pos)
    elif h in ("sed", "gsed", "perl") and any(a.startswith(("-i", "--in-place")) for a in c.args):
        out.extend(p for p in c.pos[1:] if "/" in p or "." in p)
    elif h in ("cp", "mv", "install", "ln", "gcp", "gmv", "gln", "ginstall"):
        dest = copy_destination(h, c.args)[1]
        if dest is not None:
            out.append(dest)
    elif h in ("rsync", "ditto", "scp") and len(c.pos) >= 2:
        out.append(c.pos[-1])
    elif h == "dd":
        out.extend(a[3:] for a in c.args if a.startswith("of="))
    elif h in EDITORS:
        out.extend(c.pos)
    elif h in ("truncate", "touch", "chattr", "unlink", "rm", "shred", "srm"):
        out.extend(c.pos)
    return out

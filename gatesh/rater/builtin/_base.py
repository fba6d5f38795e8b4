"""The rule shape every domain table uses, and the per-command view rules match on.

A :class:`Rule` is data: a stable id, a severity, a one-sentence reason, a remedy, the heads it is
dispatched on, a match function, and examples and counter-examples (checked by the validator
test). Severity becomes an :class:`~gatesh._types.Outcome` in exactly one place, :func:`outcome_of`.
"""

from __future__ import annotations

import enum
import os
import posixpath
import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from gatesh._paths import environ_values
from gatesh._types import Context, Direction, Facts, Finding, Outcome, PathEffect, SimpleCommand
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

_HOME_VARS: Final = re.compile(r"^(?:~(?=/|$)|\$HOME(?![\w])|\$\{HOME\})")
_TMP_VARS: Final = re.compile(
    r"^(?:\$TMPDIR(?![\w])|\$\{TMPDIR(?::-[^}]*)?\}|\$TMP(?![\w])|\$\{TMP\})"
)
_PWD_VARS: Final = re.compile(r"^(?:\$PWD(?![\w])|\$\{PWD\}|\$\(pwd\))")

SYSTEM_DIRS: Final = frozenset(
    {
        "/",
        "/etc",
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/boot",
        "/dev",
        "/proc",
        "/sys",
        "/var",
        "/opt",
        "/srv",
        "/root",
        "/home",
        "/users",
        "/system",
        "/library",
        "/applications",
        "/private",
        "/snap",
        "/mnt",
        "/media",
        "/run",
        "/usr/local",
        "/usr/bin",
        "/usr/lib",
        "/usr/share",
        "/var/lib",
        "/var/log",
        "/etc/ssl",
        "/private/etc",
        "/nix",
    }
)
TEMP_ROOTS: Final = ("/tmp/", "/var/tmp/", "/private/tmp/", "/dev/shm/", "/private/var/folders/")
BUILD_NAMES: Final = frozenset(
    {
        "node_modules",
        "dist",
        "build",
        "target",
        "__pycache__",
        ".cache",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        ".next",
        ".nuxt",
        ".turbo",
        ".parcel-cache",
        "coverage",
        ".coverage",
        "htmlcov",
        ".gradle",
        ".eggs",
        "out",
        "bin",
        "obj",
        ".svelte-kit",
        ".angular",
        ".expo",
        ".terraform",
        "tmp",
        ".tmp",
        "temp",
        "cache",
        ".sass-cache",
        "bower_components",
        ".nyc_output",
        "_build",
        "deps",
        ".hypothesis",
        "storybook-static",
        ".docusaurus",
        ".vercel",
        ".serverless",
        "cdk.out",
        "vendor/bundle",
        ".build",
        "DerivedData",
        "Pods",
        "cmake-build-debug",
        "cmake-build-release",
        ".ipynb_checkpoints",
        "site",
        "public/build",
    }
)


class Scope(enum.StrEnum):
    """Where a path lies, which decides how bad deleting it is."""

    TEMP = "temp"
    BUILD = "build"
    CWD_ITEM = "cwd-item"
    CWD_ALL = "cwd-all"
    HOME_ROOT = "home"
    HOME_TOP = "home-top"
    HOME = "under-home"
    SYSTEM_ROOT = "system-root"
    SYSTEM = "system"
    OUTSIDE = "outside"
    UNKNOWN = "unknown"


def resolve(
    word: str, cwd: str, home: str, *, dynamic: bool = True, known_vars: bool = True
) -> str | None:
    """``word`` as an absolute normalised path, or None when it depends on an unknown value.

    ``dynamic`` False means the word was quoted literally (``'$HOME'`` names a folder called $HOME).
    ``known_vars`` False means the line reassigns HOME/TMPDIR, so their values are unknown.
    """
    w = word
    if not dynamic:
        if w.startswith("~") and not w.startswith("~/") and w != "~":
            return None
        if w == "~" or w.startswith("~/"):
            w = home + w[1:]
        if not w.startswith("/"):
            w = posixpath.join(cwd, w)
        return posixpath.normpath(re.sub(r"/+", "/", w)) or "/"
    if not known_vars and ("$" in w):
        return None
    m = _HOME_VARS.match(w)
    if m:
        w = home + w[m.end() :]
    else:
        m = _TMP_VARS.match(w)
        if m:
            w = "/tmp" + w[m.end() :]
        else:
            m = _PWD_VARS.match(w)
            if m:
                w = cwd + w[m.end() :]
    if "$" in w or "`" in w:
        return None
    if w.startswith("~"):  # ~user
        return None
    if not w.startswith("/"):
        w = posixpath.join(cwd, w)
    w = re.sub(r"/+", "/", w)
    norm = posixpath.normpath(w)
    return "/" if norm == "//" else norm


def _strip_glob(p: str) -> tuple[str, bool]:
    """The directory a glob path stands for, and whether it was a glob over a whole directory."""
    parts = p.split("/")
    for i, part in enumerate(parts):
        if any(ch in part for ch in "*?["):
            if part in ("*", ".*", "*.*", "{*,.*}", ".[!.]*", "..?*") and i == len(parts) - 1:
                return "/".join(parts[:i]) or "/", True
            return "/".join(parts[:i]) or "/", False
    return p, False


def scope_of(
    word: str,
    cwd: str | None,
    home: str,
    *,
    dynamic: bool = True,
    known_vars: bool = True,
    project: str | None = None,
) -> tuple[Scope, str]:
    """Classify ``word`` (a path operand): the scope and the resolved path ('' when unknown).

    ``cwd`` resolves relative paths; ``project`` (default ``cwd``) is the working directory whose
    contents count as the project's own.
    """
    if cwd is None:
        if not word.startswith(("/", "~", "$HOME", "${HOME}", "$TMPDIR", "${TMPDIR")):
            return Scope.UNKNOWN, ""
        cwd = "/"
    path = resolve(word, cwd, home, dynamic=dynamic, known_vars=known_vars)
    if path is None:
        return Scope.UNKNOWN, ""
    base, whole = _strip_glob(path)
    globbed = base != path
    cwd_n = posixpath.normpath(project or cwd) if (project or cwd) else "/"
    home_n = posixpath.normpath(home) if home else ""
    target = base if globbed else path
    # temp: named as such (a relative path under a temp cwd is still the project)
    lit_abs = word.startswith("/") or (dynamic and word.startswith(("$TMP", "${TMP")))
    if (
        lit_abs
        and (target + "/").startswith(TEMP_ROOTS)
        and target.rstrip("/") not in ("/tmp", "/var/tmp", "/private/tmp", "/dev/shm")
    ):
        return Scope.TEMP, path
    if dynamic and word.rstrip("/") in ("$TMPDIR", "${TMPDIR}", "$TMP", "${TMP}") and known_vars:
        return Scope.TEMP, path
    if lit_abs and globbed and target in ("/tmp", "/var/tmp", "/private/tmp"):
        return Scope.TEMP, path
    low = target.lower()
    if low in SYSTEM_DIRS and target != home_n:
        return Scope.SYSTEM_ROOT, path
    if cwd_n not in ("/",) and cwd_n.lower() not in SYSTEM_DIRS and cwd_n != home_n:
        if target == cwd_n or (globbed and whole and base == cwd_n):
            return Scope.CWD_ALL, path
        if target.startswith(cwd_n + "/"):
            rel = target[len(cwd_n) + 1 :]
            if any(part in BUILD_NAMES or part.endswith(".egg-info") for part in rel.split("/")):
                return Scope.BUILD, path
            return Scope.CWD_ITEM, path
    if home_n and home_n != "/":
        if target == home_n:
            return Scope.HOME_ROOT, path
        if target.startswith(home_n + "/"):
            rel = target[len(home_n) + 1 :]
            if any(part in BUILD_NAMES for part in rel.split("/")[1:]) and "/" in rel:
                return Scope.BUILD, path
            return (Scope.HOME_TOP if "/" not in rel else Scope.HOME), path
    mounted = _mounted_scope(low)
    if mounted is not None:
        return mounted, path
    for sysdir in SYSTEM_DIRS:
        if sysdir != "/" and (low + "/").startswith(sysdir + "/") and not low.startswith("/home/"):
            return Scope.SYSTEM, path
    if low.startswith(("/home/", "/users/")):
        depth = low.count("/")
        return (Scope.HOME_ROOT if depth <= 2 else Scope.HOME), path
    return Scope.OUTSIDE, path


# Where mounted volumes are put (a WSL drive at /mnt/c, a USB disk at /media/USER/LABEL): what is
# on them is the user's data, judged by its state like a file outside the working tree; the mount
# point itself stays a system folder. The number is the depth of the deepest folder that may be a
# mount point (/media/LABEL, or /media/USER/LABEL as udisks mounts them): a path that deep is what
# it was before, anything deeper lies on a volume.
_MOUNT_ROOTS: Final = {"/mnt": 1, "/media": 2}
# A WSL drive letter mount (/mnt/c): its Windows system folders are the machine's own, its Users
# folder holds the Windows home folders.
_WSL_DRIVE: Final = re.compile(r"^/mnt/[a-z](?=/|$)")
_WINDOWS_SYSTEM: Final = frozenset(
    {"windows", "program files", "program files (x86)", "programdata"}
)


def _mounted_scope(low: str) -> Scope | None:
    """The scope of a (lower-cased, absolute) path on a mounted volume, or None for any other."""
    for root, deepest in _MOUNT_ROOTS.items():
        if low.startswith(root + "/"):
            parts = low[len(root) + 1 :].split("/")
            depth = deepest
            break
    else:
        return None
    if _WSL_DRIVE.match(low):
        top = parts[1] if len(parts) > 1 else ""
        if not top:
            return Scope.SYSTEM_ROOT
        if top in _WINDOWS_SYSTEM:
            return Scope.SYSTEM
        if top == "users":
            return Scope.HOME_ROOT if len(parts) <= 3 else Scope.HOME
        return Scope.OUTSIDE
    if len(parts) == 1:
        return Scope.SYSTEM_ROOT
    return None if len(parts) <= depth else Scope.OUTSIDE


def fold_home(path: str, home: str) -> str:
    if home and home != "/" and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home) :]
    return path


def default_home() -> str:
    """``os.path.expanduser("~")``: $HOME without trailing slashes (read without the cost of a
    missing variable's KeyError); the user database's answer when HOME is unset."""
    home = environ_values(("HOME",))[0]
    return (home.rstrip("/") or "/") if home is not None else os.path.expanduser("~")


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

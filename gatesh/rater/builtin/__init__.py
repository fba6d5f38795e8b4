"""The builtin rater (S4): offline, deterministic rules in per-domain tables.

Every domain module exports ``RULES``, a tuple of :class:`Rule` rows. :class:`BuiltinRater` indexes
them once by head, runs the matching ones over every command the reader found, and answers with
the worst finding. It never raises: an internal error is a fail-closed ``destructive`` verdict.
"""

from __future__ import annotations

import os
import re
import time
from collections import defaultdict
from typing import Final

from gatesh._types import (
    DYNAMIC_PATH,
    RUNS_NOTHING_UNREAD,
    Facts,
    Finding,
    Gap,
    Outcome,
    PathClass,
    Verdict,
)
from gatesh.rater.builtin import (
    cloud,
    code,
    containers,
    credentials,
    databases,
    effects,
    escapes,
    evasion,
    exhaustion,
    exposure,
    files,
    generic,
    git,
    impact,
    indirect,
    knowledge,
    network,
    obfuscation,
    persistence,
    privilege,
    publish,
    remote,
    system,
    typosquat,
)
from gatesh.rater.builtin._base import Cmd, Ctx, Hit, Rule, Severity, outcome_of
from gatesh.rater.builtin._scope import default_home
from gatesh.vocab.paths.classes import classify
from gatesh.vocab.programs.shells import PARSED_SHELLS

__all__ = ["ALL_RULES", "BuiltinRater"]

ALL_RULES: Final[tuple[Rule, ...]] = (
    *git.RULES,
    *files.RULES,
    *system.RULES,
    *databases.RULES,
    *containers.RULES,
    *cloud.RULES,
    *generic.RULES,
    *credentials.RULES,
    *privilege.RULES,
    *persistence.RULES,
    *evasion.RULES,
    *escapes.RULES,
    *network.RULES,
    *obfuscation.RULES,
    *impact.RULES,
    *code.RULES,
    *typosquat.RULES,
    *effects.RULES,
    *exposure.RULES,
    *exhaustion.RULES,
    *publish.RULES,
    *remote.RULES,
    *indirect.RULES,
)

_BY_HEAD: dict[str, list[Rule]] = defaultdict(list)
_ANY_HEAD: list[Rule] = []
_ON_FACTS: list[Rule] = []
for _r in ALL_RULES:
    if _r.on_facts:
        _ON_FACTS.append(_r)
    elif _r.heads:
        for _h in _r.heads:
            _BY_HEAD[_h].append(_r)
    else:
        _ANY_HEAD.append(_r)


def _needs_pattern(rule: Rule) -> re.Pattern[str] | None:
    """One pattern that finds any of ``rule.needs`` (a search for it is ``any(n in hay …)``, in one
    pass), or None for a rule tried on every command."""
    return re.compile("|".join(map(re.escape, rule.needs))) if rule.needs else None


Tried = tuple[tuple[Rule, re.Pattern[str] | None], ...]
_NEEDS: Final[dict[str, re.Pattern[str] | None]] = {r.id: _needs_pattern(r) for r in ALL_RULES}
_LINE_RULES: Final[Tried] = tuple((r, _NEEDS[r.id]) for r in _ON_FACTS)
# The rules tried on a command of each head, in table order (its head's rules, then the rules of
# every head whose ``tried_on`` admits it), with their literal filters: built once per head, not
# per command. Bounded (heads are the commands' own words): past the bound a head's list is built
# each time it is asked for, with the same answer.
_FOR_HEAD: dict[str, Tried] = {}
_FOR_HEAD_MAX: Final = 4096


def _rules_for(head: str) -> Tried:
    tried = _FOR_HEAD.get(head)
    if tried is None:
        tried = tuple(
            (r, _NEEDS[r.id])
            for r in (*_BY_HEAD.get(head, ()), *_ANY_HEAD)
            if r.heads or r.tried_on is None or r.tried_on(head)
        )
        if len(_FOR_HEAD) < _FOR_HEAD_MAX:
            _FOR_HEAD[head] = tried
    return tried


SAFE_REASON: Final = "No rule found a harmful effect."
#: The programs a rule table dispatches on: the ones the builtin has a model of (S4 knowledge).
RULE_HEADS: Final = frozenset(_BY_HEAD)


def _finding(rule: Rule, hit: Hit | bool) -> Finding:
    severity: Severity = rule.severity
    detail = ""
    remedy = rule.remedy
    covers: tuple[str, ...] = ()
    if isinstance(hit, Hit):
        severity = hit.severity or severity
        detail = hit.detail
        covers = hit.covers
        if hit.remedy is not None:
            remedy = hit.remedy
    reason = rule.reason.replace("{detail}", detail) if "{detail}" in rule.reason else rule.reason
    reason = reason[:1].upper() + reason[1:]
    outcome = outcome_of(severity)
    remedy = remedy if outcome is Outcome.DESTRUCTIVE else ""
    return Finding(rule.id, outcome, reason, remedy, covers, rule.justifiable)


def findings_for(
    facts: Facts,
    cwd: str,
    home: str | None = None,
    *,
    depth: int = 0,
    ctx: Ctx | None = None,
    root: bool | None = None,
) -> list[Finding]:
    """Every rule that matches ``facts``, in table order (one finding per rule id, the worst).

    ``depth`` counts re-entries for command strings found inside code (bounded by the code table).
    ``ctx``: the per-line context already built for ``facts`` (the gap table reads the same one).
    """
    return _findings(ctx if ctx is not None else _context(facts, cwd, home, depth, root=root))


def _context(
    facts: Facts, cwd: str, home: str | None, depth: int = 0, *, root: bool | None = None
) -> Ctx:
    home = home if home is not None else default_home()
    as_root = running_as_root() if root is None else root

    def rate_line(inner: Facts, inner_depth: int) -> list[Finding]:
        return findings_for(inner, cwd, home, depth=inner_depth, root=as_root)

    ctx = Ctx(
        facts=facts, cwd=cwd or "/", home=home, depth=depth, rate_line=rate_line, root=as_root
    )
    ctx.cmds = [Cmd(sc, i, ctx) for i, sc in enumerate(facts.commands)]
    ctx.track_cwd()
    return ctx


def _findings(ctx: Ctx) -> list[Finding]:
    found: dict[str, Finding] = {}

    def add(f: Finding) -> None:
        old = found.get(f.rule_id)
        if old is None or f.outcome.rank > old.outcome.rank:
            found[f.rule_id] = f

    for cmd in ctx.cmds:
        hay = cmd.hay
        for rule, needs in _rules_for(cmd.head):
            if needs is not None and hay and needs.search(hay) is None:
                continue  # it holds none of the words every match of this rule holds
            hit = rule.match(cmd)
            if hit:
                add(_finding(rule, hit))
    hay = ctx.hay
    for rule, needs in _LINE_RULES:
        if needs is not None and hay and needs.search(hay) is None:
            continue
        hit = rule.match(ctx)
        if hit:
            add(_finding(rule, hit))
    return list(found.values())


def _misread(facts: Facts) -> bool:
    """Whether tree-sitter read ``facts`` with errors and the readers disagree on its commands."""
    errors = disagree = False
    for note in facts.notes:
        errors = errors or note.startswith("tree-sitter read with errors")
        disagree = disagree or note.startswith("readers disagree")
    return errors and disagree


def _contained_script(path: str, ctx: Ctx) -> bool:
    """Whether an unread shell script at ``path`` is a file of the working tree (it exists: binary,
    too large) of a command that runs inside a boundary this kernel enforces
    (:mod:`gatesh.boundary.contain`): it is then rated as a program gatesh did not read (a gap the
    boundary contains), not refused. A script that is not there is no project's script: often a
    word the reader took for one, so it stays refused."""
    from gatesh.boundary import contain

    if contain.active() is None or not path or "\x00" in path:
        return False
    from gatesh.worktree import find_repo

    repo = find_repo(ctx.cwd)
    if repo is None:
        return False
    full = os.path.realpath(os.path.join(ctx.cwd, os.path.expanduser(path)))
    root = os.path.realpath(repo.root)
    if not os.path.isfile(full):
        return False
    cls, _ = classify(full, home=ctx.home, tree=root)
    return cls is PathClass.WORKTREE and not (full + "/").startswith(root.rstrip("/") + "/.git/")


def running_as_root() -> bool:
    """Whether this process (so every command the gate lets run) has root's privileges."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


class BuiltinRater:
    """The embedded rater. ``rate`` is deterministic, offline, and never raises.

    ``root`` says whether the commands run as root (None: this process's own user decides); a
    program handed a system folder can change it only then, or under sudo (S4.1).
    """

    name = "builtin"
    model = ""

    def __init__(self, home: str | None = None, *, root: bool | None = None) -> None:
        self._home = home
        self._root = root

    def rate(self, facts: Facts, *, cwd: str) -> Verdict:
        """The verdict for ``facts``: the worst finding, or SAFE; fail-closed DESTRUCTIVE on error."""
        start = time.perf_counter()
        try:
            outcome, reason, remedy, findings, gaps = self._rate(facts, cwd)
        except Exception as exc:  # fail closed (S4): an internal error is never a pass
            return Verdict(
                outcome=Outcome.DESTRUCTIVE,
                reason=f"Could not assess this command: error ({type(exc).__name__}: {exc}).",
                backend=self.name,
                model=self.model,
                fail_cause="error",
                duration_ms=(time.perf_counter() - start) * 1000,
                gaps=(knowledge.FAILED,),
            )
        return Verdict(
            outcome,
            reason,
            remedy,
            backend=self.name,
            model=self.model,
            findings=findings,
            duration_ms=(time.perf_counter() - start) * 1000,
            gaps=gaps,
            undo=tuple(dict.fromkeys(p for f in findings for p in f.covers)),
        )

    def health_notice(self) -> str | None:
        """Always None: the builtin rater calls no model, so it has no failures to report (S4)."""
        return None

    def _rate(
        self, facts: Facts, cwd: str
    ) -> tuple[Outcome, str, str, tuple[Finding, ...], tuple[Gap, ...]]:
        """The verdict's outcome, reason, remedy, findings and gaps (:meth:`rate` makes it one)."""
        ctx = _context(facts, cwd, self._home, root=self._root)
        found = findings_for(facts, cwd, self._home, ctx=ctx)
        gaps = knowledge.gaps_of(ctx, covered=RULE_HEADS)
        if not facts.readable:
            why = facts.unreadable or "unreadable"
            found.append(
                Finding(
                    "reader.unreadable",
                    Outcome.DESTRUCTIVE,
                    f"The command could not be read ({why}), so its effect is unknown.",
                    "split it into smaller, plainer commands",
                )
            )
        # S2: the reader of record could not parse the text and the second reader found commands
        # it did not: the line's shape (which command feeds which) is not known, so it is not
        # rated as if it were (`{curl,-s,URL}|{bash,}` before its repair).
        if facts.readable and _misread(facts):
            found.append(
                Finding(
                    "reader.misread",
                    Outcome.DESTRUCTIVE,
                    "The command could not be read cleanly: the two readers disagree on what "
                    "runs, so its effect is unknown.",
                    "split it into smaller, plainer commands",
                )
            )
        # S2: a shell script the command runs or sources that could not be read (missing at
        # decision time, too large, binary) is a note, not a pass (bypass_failures #3/#6).
        unread = (
            next(
                (
                    s
                    for s in facts.scripts
                    if s.text is None
                    and s.note != DYNAMIC_PATH
                    and s.note not in RUNS_NOTHING_UNREAD
                    and s.interpreter in PARSED_SHELLS
                    and not _contained_script(s.path, ctx)
                ),
                None,
            )
            if facts.scripts
            else None
        )
        if unread is not None:
            found.append(
                Finding(
                    "reader.script-unread",
                    Outcome.DESTRUCTIVE,
                    f"It runs the shell script {unread.path}, which the gate could not "
                    f"read ({unread.note}), so its effect is unknown.",
                    "run the script once it exists, as its own command",
                )
            )
        # S2.1: code gatesh cannot see is never safe: at least destructive, with its reason.
        opaque = next((c for c in facts.code if c.opaque), None) if facts.code else None
        if opaque is not None:
            found.append(
                Finding(
                    "reader.opaque-code",
                    Outcome.DESTRUCTIVE,
                    f"gatesh cannot see what this runs: {opaque.opaque}.",
                    "run the commands themselves, written out, so the gate can read them",
                )
            )
        if not found:
            return Outcome.SAFE, SAFE_REASON, "", (), gaps
        found.sort(key=lambda f: -f.outcome.rank)
        top = found[0]
        remedy = top.remedy or next((f.remedy for f in found if f.remedy), "")
        if top.outcome is not Outcome.DESTRUCTIVE:
            remedy = ""
        return top.outcome, top.reason, remedy, tuple(found), gaps

"""Validator for the builtin rater's rule tables: ids, reasons, examples, and timing of matching."""

from __future__ import annotations

import re
import time

import pytest

from gatesh._types import Outcome
from gatesh.rater.builtin import ALL_RULES, findings_for
from gatesh.rater.builtin._base import Cmd, Rule, Severity, outcome_of
from gatesh.reading import read
from gatesh.testing import worktree

_ID = re.compile(r"^[a-z]+\.[a-z0-9-]+$")
# Examples are decided in a realistic working tree (S3.2: deleting or overwriting is judged by
# the file's git state), built once for the module: see gatesh.testing.worktree.
_TREE: list[worktree.Scratch] = []


@pytest.fixture(scope="module", autouse=True)
def _scratch(scratch_tree: worktree.Scratch) -> None:
    _TREE.append(scratch_tree)


def ids_for(cmd: str, *, harmful: bool = False) -> set[str]:
    """The ids of the rules that match ``cmd``; with ``harmful`` only those rating it above safe (a
    rule may say why a command is safe: ``files.work-loss`` when nothing is lost)."""
    tree = _TREE[-1]
    found = findings_for(read(cmd, cwd=tree.repo, home=tree.home), tree.repo, tree.home)
    return {f.rule_id for f in found if not harmful or f.outcome is not Outcome.SAFE}


def test_ids_unique_and_well_formed() -> None:
    ids = [r.id for r in ALL_RULES]
    assert len(ids) == len(set(ids))
    assert all(_ID.match(i) for i in ids), [i for i in ids if not _ID.match(i)]


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.id for r in ALL_RULES])
def test_rule_row(rule) -> None:  # type: ignore[no-untyped-def]
    assert rule.reason.strip().endswith(".") and rule.reason.count(". ") == 0
    assert rule.examples, "every rule has a positive example"
    assert rule.counter, "every rule has a negative example"
    if rule.severity is Severity.DESTRUCTIVE:
        assert rule.remedy, "a destructive rule says what would make it acceptable"


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.id for r in ALL_RULES])
def test_examples_match_and_counters_do_not(rule) -> None:  # type: ignore[no-untyped-def]
    for ex in rule.examples:
        assert rule.id in ids_for(ex), ex
    for ex in rule.counter:
        assert rule.id not in ids_for(ex, harmful=rule.severity is not Severity.SAFE), ex


def test_severity_maps_in_one_place() -> None:
    assert outcome_of(Severity.DESTRUCTIVE) is Outcome.DESTRUCTIVE
    assert outcome_of(Severity.CATASTROPHIC) is Outcome.CATASTROPHIC
    assert outcome_of(Severity.ATTACK) is Outcome.ATTACK
    assert outcome_of(Severity.SAFE) is Outcome.SAFE


def test_matching_within_budget() -> None:
    """No rule backtracks without bound: matching every rule's examples and a 60 KB word stays far
    inside 5 s. Not a speed figure (those are in benchmarks/) but a hang guard, counted in this
    thread's CPU time so a loaded machine cannot fail it."""
    tree = _TREE[-1]
    facts = [
        read(ex, cwd=tree.repo, home=tree.home) for r in ALL_RULES for ex in r.examples + r.counter
    ]
    facts.append(read("echo " + "a" * 60_000, cwd=tree.repo))
    start = time.thread_time()
    for f in facts:
        findings_for(f, tree.repo, tree.home)
    assert time.thread_time() - start < 5.0


def _spliced_lines() -> list[str]:
    """Every rule's examples and counter-examples, and seeded splices of their pieces with the
    words the filtered rules look for (so lines that nearly match, or match only through a joined
    word, upper case or a home-folder target, are among them)."""
    import random

    pieces = [t for r in ALL_RULES for t in (*r.examples, *r.counter)]
    pieces += [
        " ",
        " | ",
        "; ",
        "'",
        '"',
        "=",
        "~/",
        "$HOME/",
        "/bin/sh",
        "SH",
        "x=/bin/bash ",
        "--engine ",
        "-ENGINE=",
        "file=",
        "X.Delete(",
        "DESTROY_ALL",
        ":restore",
        "/VAR/LOG/x",
        ">",
        "> /var/log/a ",
        "journalctl --vacuum-size=1",
        "pty.spawn",
        ":terminal",
        "\u017fh",
        "f\u0131le=",
        "a_history",
        "--pre-hook=/x",
        "DVIPS -R0 ",
        "sudo ",
        "exec ",
        "env X=1 ",
        "nice ",
        "busybox sh -i",
        "python3.11 -c 'import pty; pty.spawn(\"/bin/sh\")'",
        "HISTFILE=/dev/null ",
        "Hist",
        "KILL -9 $$",
        "SiteCustomize.py",
        "LOGIN ITEM",
    ]
    rng = random.Random(15)
    lines = list(pieces)
    for _ in range(1500):
        lines.append(
            "".join(rng.choice(pieces)[rng.randrange(3) :] for _ in range(rng.randrange(1, 5)))
        )
    return lines


def _hits(rule: Rule, view: object) -> bool:
    """Whether ``rule`` matches ``view``; one that raises counts (it fails closed, so a filter must
    not skip it either)."""
    try:
        return bool(rule.match(view))
    except Exception:
        return True


def test_rule_literal_filters_lose_no_match() -> None:
    """A rule's ``needs`` only skips commands it cannot match: wherever the rule matches (or
    raises, which fails closed), the command's ``hay`` holds one of its literals or is not ASCII
    (a wrong literal would let a harmful command be rated safe)."""
    from gatesh.rater.builtin import _context

    filtered = [r for r in ALL_RULES if r.needs]
    assert {r.id for r in filtered} >= {
        "escape.shell-argument",
        "escape.library-option",
        "code.orm-delete",
        "evasion.log-wipe",
        "escape.program-option",
        "evasion.history",
        "persist.startup-hook",
    }
    assert all(n == n.lower() and n.isascii() for r in filtered for n in r.needs)
    tree = _TREE[-1]
    matched: dict[str, int] = dict.fromkeys((r.id for r in filtered), 0)

    def check(rule: Rule, view: object, hay: str, line: str) -> None:
        if _hits(rule, view):
            matched[rule.id] += 1
            assert hay == "" or any(n in hay for n in rule.needs), (rule.id, line)

    for line in _spliced_lines():
        for home in (tree.home, "/var/log/home"):
            ctx = _context(read(line), tree.repo, home)
            for rule in filtered:
                if rule.on_facts:
                    check(rule, ctx, ctx.hay, line)
                else:
                    for cmd in ctx.cmds:
                        check(rule, cmd, cmd.hay, line)
    assert all(matched.values()), matched  # every filter was checked against real matches


def test_rule_head_filters_lose_no_match() -> None:
    """A rule's ``tried_on`` only skips heads it cannot match: wherever the rule matches (or raises,
    which fails closed), its ``tried_on`` admits the command's head (a wrong one would let a harmful
    command be rated safe). Such a rule is one tried on every head, so ``heads`` stays the list of
    programs the builtin models."""
    from gatesh.rater.builtin import _context, _rules_for

    gated = [r for r in ALL_RULES if r.tried_on is not None]
    assert {r.id for r in gated} >= {
        "generic.delete-verb",
        "escape.interpreter",
        "code.inline",
        "obfuscation.decode-to-shell",
        "escape.interactive-shell",
    }
    assert not any(r.heads or r.on_facts for r in gated)
    tree = _TREE[-1]
    matched: dict[str, int] = dict.fromkeys((r.id for r in gated), 0)
    for line in _spliced_lines():
        for cmd in _context(read(line), tree.repo, tree.home).cmds:
            tried = {r.id for r, _ in _rules_for(cmd.head)}
            for rule in gated:
                if _hits(rule, cmd):
                    matched[rule.id] += 1
                    assert rule.id in tried, (rule.id, cmd.head, line)
    assert all(matched.values()), matched  # every filter was checked against real matches


def test_rules_of_a_head_keep_table_order() -> None:
    """The rules tried on a head are its own rules, then those of every head its ``tried_on``
    admits, each in table order (the order findings are listed in); unknown heads get the latter."""
    from gatesh.rater.builtin import _rules_for

    order = {r.id: i for i, r in enumerate(ALL_RULES)}
    for head in ("git", "rm", "python3", "python3.11", "bash", "echo", "no-such-tool", ""):
        ids = [r.id for r, _ in _rules_for(head)]
        own = [r.id for r in ALL_RULES if head in r.heads and not r.on_facts]
        rest = [
            r.id
            for r in ALL_RULES
            if not r.heads and not r.on_facts and (r.tried_on is None or r.tried_on(head))
        ]
        assert ids == own + rest, head
        assert [order[i] for i in rest] == sorted(order[i] for i in rest)
    assert "escape.interpreter" in [r.id for r, _ in _rules_for("python3.11")]
    assert "escape.interpreter" not in [r.id for r, _ in _rules_for("ls")]
    assert "generic.delete-verb" not in [r.id for r, _ in _rules_for("echo")]


def test_a_non_ascii_command_is_tried_by_every_rule() -> None:
    """Lower-casing and case-blind patterns disagree outside ASCII, so such a command skips no rule."""
    cmd = _ctx_cmd("ls \u017fh")
    assert cmd.hay == ""
    assert "sh" in _ctx_cmd("ls SH").hay


def _ctx_cmd(line: str) -> Cmd:
    from gatesh.rater.builtin import _context

    return _context(read(line), "/", "/root").cmds[0]

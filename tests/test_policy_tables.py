"""Every policy table is data: unique ids, reasons, and examples that behave through the real reader."""

from __future__ import annotations

import pytest

from gatesh._paths import current
from gatesh.policy import floors, hardline, readonly, selfprotect
from gatesh.reading import read
from gatesh.vocab import reads

TABLES = {
    "hardline": hardline.RULES,
    "selfprotect": selfprotect.RULES,
    "floors": floors.RULES,
    "readonly": reads.RULES,
}


def _facts(text: str):
    return read(text, cwd="/tmp")


def test_ids_are_unique_across_every_table() -> None:
    ids = [rule.id for table in TABLES.values() for rule in table]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        ("hardline", "hardline."),
        ("selfprotect", "self."),
        ("floors", "floor."),
        ("readonly", "ro."),
    ],
)
def test_ids_are_namespaced_and_rules_explained(name: str, prefix: str) -> None:
    for rule in TABLES[name]:
        assert rule.id.startswith(prefix)
        assert rule.reason.strip() and "\n" not in rule.reason
        assert rule.examples, f"{rule.id} has no positive example"
        assert rule.counter, f"{rule.id} has no negative example"


def test_text_rules_compile_and_name_a_hardline_rule() -> None:
    known = {r.id for r in hardline.RULES}
    for rule in hardline.TEXT_RULES:
        assert rule.id in known
        assert rule.reason.strip()
        for text in rule.examples:
            assert rule.pattern.search(text), (rule.id, text)
        for text in rule.counter:
            assert not rule.pattern.search(text), (rule.id, text)


def _examples(table):
    for rule in table:
        for text in rule.examples:
            yield pytest.param(rule, text, True, id=f"{rule.id}+{text[:40]}")
        for text in rule.counter:
            yield pytest.param(rule, text, False, id=f"{rule.id}-{text[:40]}")


@pytest.mark.parametrize(("rule", "text", "matches"), list(_examples(hardline.RULES)))
def test_hardline_examples(rule, text: str, matches: bool) -> None:
    found = hardline.check(_facts(text))
    if matches:
        assert found is not None and found.rule_id == rule.id, (text, found)
    else:
        assert found is None, (text, found)


@pytest.mark.parametrize(("rule", "text", "matches"), list(_examples(selfprotect.RULES)))
def test_selfprotect_examples(rule, text: str, matches: bool) -> None:
    found = selfprotect.check(_facts(text), current())  # the isolated HOME's XDG layout
    if matches:
        assert found is not None and found.rule_id == rule.id, (text, found)
    else:
        assert found is None, (text, found)


@pytest.mark.parametrize(("rule", "text", "matches"), list(_examples(floors.RULES)))
def test_floor_examples(rule, text: str, matches: bool) -> None:
    ids = [f.rule_id for f in floors.check(_facts(text))]
    assert (rule.id in ids) is matches, (text, ids)


@pytest.mark.parametrize(("rule", "text", "matches"), list(_examples(reads.RULES)))
def test_readonly_examples(rule, text: str, matches: bool) -> None:
    facts = _facts(text)
    assert readonly.is_read_only(facts) is matches, text
    if matches:
        assert any(reads.rule_for(c) is rule for c in facts.commands), text

"""One rule record shape across policy and rater (issue 19): every table's rows are
:class:`gatesh.policy._rules.RuleRow` (an id, a reason, examples and counter-examples), and an id names
one hazard across all of them. Each table's own validator runs its examples through the real
reader (test_policy_tables, test_rater_builtin_rules, test_rater_knowledge)."""

from __future__ import annotations

from collections import Counter

import pytest

from gatesh.policy import floors, hardline, selfprotect
from gatesh.policy._rules import RuleRow
from gatesh.rater.builtin import ALL_RULES
from gatesh.rater.builtin.knowledge import GAPS
from gatesh.vocab import reads

# table -> (rows, the id prefixes its rows use)
TABLES: dict[str, tuple[tuple[RuleRow, ...], tuple[str, ...]]] = {
    "hardline": (hardline.RULES, ("hardline.",)),
    "hardline text": (hardline.TEXT_RULES, ("hardline.",)),
    "self-protection": (selfprotect.RULES, ("self.",)),
    "floors": (floors.RULES, ("floor.",)),
    "read-only": (reads.RULES, ("ro.",)),
    "rater": (ALL_RULES, ()),
    "knowledge gaps": (GAPS, ("knowledge.",)),
}
POLICY_PREFIXES = ("hardline.", "self.", "floor.", "ro.", "knowledge.")


@pytest.mark.parametrize("name", TABLES)
def test_every_row_has_the_one_shape(name: str) -> None:
    rows, prefixes = TABLES[name]
    assert rows
    for row in rows:
        assert isinstance(row, RuleRow), (name, row)
        assert isinstance(row.id, str) and row.id.startswith(prefixes or ("",)), row.id
        assert isinstance(row.reason, str) and row.reason.strip() and "\n" not in row.reason, row.id
        assert isinstance(row.examples, tuple) and row.examples, f"{row.id} has no example"
        assert isinstance(row.counter, tuple) and all(
            isinstance(t, str) for t in row.examples + row.counter
        )


def test_an_id_names_one_hazard_across_every_table() -> None:
    """No id is used twice, in one table or across tables, except the raw-text fallback of a
    hardline rule (for commands the reader cannot read), which cites the rule it stands in for."""
    seen = Counter(
        row.id for name, (rows, _) in TABLES.items() if name != "hardline text" for row in rows
    )
    assert [i for i, n in seen.items() if n > 1] == []
    assert {r.id for r in hardline.TEXT_RULES} <= {r.id for r in hardline.RULES}
    assert not [
        r.id for r in ALL_RULES if r.id.startswith(POLICY_PREFIXES)
    ]  # the rater uses its own names

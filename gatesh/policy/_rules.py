"""What every policy table shares: the rule record, and the word helpers it reads with.

A policy module is a table of :class:`Rule` rows plus one small ``check`` that walks the read
facts once. Each row carries a stable id (cited by ``explain`` and the audit log), a reason, and
examples that the validator test (``tests/test_policy_tables.py``) runs through the real reader.
How words, options, paths and inline code are taken apart lives in :mod:`gatesh.vocab.words`,
shared with the rater; the names are re-exported here for the policy tables.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from gatesh._types import Facts, SimpleCommand
from gatesh.vocab.words import (  # re-exported for the policy tables
    BLOCK_DEVICE as BLOCK_DEVICE,
)
from gatesh.vocab.words import (
    CREDENTIAL_PATH as CREDENTIAL_PATH,
)
from gatesh.vocab.words import (
    FIND_FILTERS as FIND_FILTERS,
)
from gatesh.vocab.words import (
    SYSTEM_DIRS as SYSTEM_DIRS,
)
from gatesh.vocab.words import (
    canon_path as canon_path,
)
from gatesh.vocab.words import (
    has_long as has_long,
)
from gatesh.vocab.words import (
    has_short as has_short,
)
from gatesh.vocab.words import (
    inline_code as inline_code,
)
from gatesh.vocab.words import (
    is_block_device as is_block_device,
)
from gatesh.vocab.words import (
    is_credential_path as is_credential_path,
)
from gatesh.vocab.words import (
    is_vital_path as is_vital_path,
)
from gatesh.vocab.words import (
    option_values as option_values,
)
from gatesh.vocab.words import (
    reads_code_from_stdin as reads_code_from_stdin,
)
from gatesh.vocab.words import (
    reads_program_from_stdin as reads_program_from_stdin,
)
from gatesh.vocab.words import (
    split_args as split_args,
)
from gatesh.vocab.words import (
    unquote as unquote,
)


@runtime_checkable
class RuleRow(Protocol):
    """The one shape of a rule row, in every table of policy and rater (hardline, self-protection,
    floors, read-only, the builtin rater's rules and its knowledge gaps); each table adds only its
    matcher and what that needs.

    ``id`` names one hazard and is cited by explain, the audit line and every notice (a table's
    raw-text fallback of a hazard shares the hazard's id); ``reason`` is one line a person can act
    on; every string in ``examples`` is matched and none in ``counter`` is, through the real
    reader (tests/test_rule_tables.py holds every table to this).
    """

    @property
    def id(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def examples(self) -> tuple[str, ...]: ...
    @property
    def counter(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class Rule:
    """One row of a policy table.

    Invariant: ``id`` is unique across every table (``hardline.*``, ``self.*``, ``floor.*``,
    ``ro.*``); ``reason`` is one line that a person can act on; every string in ``examples``
    matches this rule (and no earlier one is required) and no string in ``counter`` does (the
    shape of :class:`RuleRow`).
    ``test`` is the matcher for one simple command (``facts`` gives the context it needs).
    """

    id: str
    reason: str
    test: Callable[[SimpleCommand, Facts], bool]
    examples: tuple[str, ...]
    counter: tuple[str, ...]
    remedy: str = ""


@dataclass(frozen=True)
class TextRule:
    """A regular expression over raw text, for commands the reader could not read (S3.3).

    Invariant: ``pattern`` is precompiled and conservative (it may over-match an unreadable
    command; it never runs on a readable one unless the owning module says so).
    """

    id: str
    reason: str
    pattern: re.Pattern[str]
    examples: tuple[str, ...]
    counter: tuple[str, ...]
    remedy: str = ""
    # Literals every match holds: each group names strings one of which occurs in any text the
    # pattern matches (empty: no filter). Text missing a group is never searched, so a long text
    # costs the regular expression only for the rules whose words it has.
    needs: tuple[tuple[str, ...], ...] = ()

    def search(self, text: str) -> re.Match[str] | None:
        """``pattern.search(text)``, skipped (None) when ``text`` lacks a literal a match needs."""
        for group in self.needs:
            if not any(literal in text for literal in group):
                return None
        return self.pattern.search(text)

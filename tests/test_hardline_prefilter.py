"""Hardline's head index loses no match (S3.3): a command without redirections, in a line that
defines no function, is asked only the rules its head can match (``hardline._HEADS``). Compared
with asking every rule over every hardline and self-protection example and counter-example and
seeded splices of their words (heads from the index and others, redirections, wrappers, pipes)."""

from __future__ import annotations

import random
import shlex

from gatesh.policy import hardline, selfprotect
from gatesh.reading import read
from tests.test_selfprotect_prefilter import words_of

_TEXTS: tuple[str, ...] = tuple(
    dict.fromkeys(
        t
        for table in (hardline.RULES, selfprotect.RULES)
        for r in table
        for t in (*r.examples, *r.counter)
    )
)
_OTHER_HEADS = (
    "mkfs.ext4",
    "mkswap",
    "newfs",
    "mytool",
    "ls",
    "cat",
    "python3",
    "bash",
    "make",
    "tar",
    "sudo",
)
_TAILS = (
    "",
    "",
    "",
    "",
    " > /dev/sda",
    " < ~/.ssh/id_rsa",
    " > /dev/tcp/10.0.0.1/9",
    " 2>&1",
    " >> out.txt",
)
_JOINS = (" ; ", " && ", " | ", " || ")


def _splices(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = words_of(_TEXTS)
    heads = sorted({h for heads in hardline._HEADS.values() for h in heads}) + list(_OTHER_HEADS)

    def part() -> str:
        args = " ".join(shlex.quote(rng.choice(words)) for _ in range(rng.randrange(5)))
        return f"{rng.choice(('', '', 'sudo ', 'env ', 'nohup '))}{rng.choice(heads)} {args}{rng.choice(_TAILS)}".strip()

    return [part() + (rng.choice(_JOINS) + part() if rng.random() < 0.4 else "") for _ in range(n)]


def _same(text: str) -> bool:
    facts = read(text, cwd="/tmp")
    fast, full = hardline.check(facts), hardline.check(facts, every_rule=True)
    assert fast == full, (text, fast, full)
    return full is not None


def test_the_examples_decide_the_same_with_the_index() -> None:
    assert sum(_same(text) for text in _TEXTS) > 40


def test_seeded_splices_decide_the_same_with_the_index() -> None:
    assert sum(_same(text) for text in _splices(2000, seed=33)) > 100  # the splices reach the rules


def test_the_index_is_what_skips_rules() -> None:
    """A head no rule names is asked only the rules the index cannot limit (so the comparisons
    above compare two ways of deciding); one with a redirection is asked every rule."""
    assert [r.id for r in hardline._RULES_ANY_HEAD] == ["hardline.mkfs"]
    assert (
        hardline.check(read("mytool x > /dev/sda", cwd="/tmp")).rule_id
        == "hardline.device-redirect"
    )
    assert hardline.check(read("mkfs.ext4 /dev/sdb1", cwd="/tmp")).rule_id == "hardline.mkfs"

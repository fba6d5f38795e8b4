"""The builtin's knowledge gaps (S4): what it did not see or does not model, row by row.

A builtin verdict rests on complete knowledge only without a gap; the cascade lets only such a
``safe`` verdict (and an ``attack``) stand without asking the model.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from gatesh._types import Facts, Finding, Outcome
from gatesh.policy import floors
from gatesh.rater.builtin import BuiltinRater
from gatesh.rater.builtin.knowledge import FAILED, GAPS
from gatesh.reading import read

RATER = BuiltinRater(home="/home/alice")


# A word naming a program file: the examples' programs are there (one that is not runs nothing,
# which is no gap: tests/test_agent_work.py).
_PROGRAM_WORD = re.compile(r"^(?:\./[\w./-]+|[\w-]+\.(?:py|js|sh|rb|pl))$")


def with_programs(text: str, cwd: str) -> str:
    """``text``, with every program file it names made in ``cwd``: empty, but a Python file
    holds an import the builtin does not model (an empty file runs nothing: no gap)."""
    try:
        words = shlex.split(text)
    except ValueError:
        return text
    for k, w in enumerate(words):
        if _PROGRAM_WORD.match(w) or (k == 0 and "/" in w and not w.startswith(("/", "$"))):
            path = Path(cwd, w)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
            if w.endswith(".py"):
                path.write_text("import requests\n", encoding="utf-8")
    return text


def gap_ids(text: str, cwd: str) -> list[str]:
    text = with_programs(text, cwd)
    return [g.id for g in RATER.rate(read(text, cwd=cwd), cwd=cwd).gaps]


def test_gap_ids_are_unique_and_named_as_knowledge() -> None:
    ids = [g.id for g in GAPS]
    assert len(ids) == len(set(ids)) and all(i.startswith("knowledge.") for i in ids)
    assert all(g.examples and g.counter for g in GAPS), (
        "every row needs examples and counter-examples"
    )


@pytest.mark.parametrize("rule", GAPS, ids=lambda g: g.id)
def test_every_example_has_its_gap_and_no_counter_example_does(rule, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for text in rule.examples:
        assert rule.id in gap_ids(text, str(tmp_path)), text
    for text in rule.counter:
        assert rule.id not in gap_ids(text, str(tmp_path)), text


@pytest.mark.parametrize(
    "text",
    [
        "tar -czf backup.tgz src",
        "mkdir -p build/out",
        "git commit -m 'fix the parser'",
        "rm -r build",
        "cp notes.txt notes.bak",
        "sudo ls /root",
        "git push origin main",
        "qm list",
    ],
)
def test_commands_whose_every_effect_is_modelled_are_complete(text: str, tmp_path: Path) -> None:
    v = RATER.rate(read(text, cwd=str(tmp_path)), cwd=str(tmp_path))
    assert v.gaps == () and v.complete


@pytest.mark.parametrize(
    "text",
    [
        "kubectl apply -f deploy.yaml",
        "terraform apply",
        "docker run -d -p 80:80 nginx",
        "npm install",
        "python3 manage.py migrate",
        'node -e \'require("fs").rmSync("x")\'',
        "./deploy --prod",
        "sudo airmon-ng start wlan0",
        "$TOOL --all",
        "ssh build-host make",
        "curl -s example.com | sh",
        "gh repo create demo --public",
        "systemctl restart nginx",
        "fish -c 'rm x'",
    ],
)
def test_commands_with_effects_the_builtin_does_not_model_are_not_complete(
    text: str, tmp_path: Path
) -> None:
    with_programs(text, str(tmp_path))
    v = RATER.rate(read(text, cwd=str(tmp_path)), cwd=str(tmp_path))
    assert v.gaps and not v.complete, text
    assert all(g.reason and g.reason[0].isupper() and g.reason.endswith(".") for g in v.gaps)


def test_a_floor_note_is_not_a_reader_note(tmp_path: Path) -> None:
    facts = read("git push https://github.com/me/repo.git main", cwd=str(tmp_path))
    found = floors.check(facts)
    assert [f.rule_id for f in found] == [floors.OPEN_WORLD]
    noted = Facts(
        text=facts.text,
        commands=facts.commands,
        hosts=facts.hosts,
        notes=facts.notes,
        floor_notes=tuple(floors.note(f) for f in found),
    )
    assert RATER.rate(noted, cwd=str(tmp_path)).gaps == ()
    reader_noted = Facts(text=facts.text, commands=facts.commands, notes=("readers disagree: x",))
    assert [g.id for g in RATER.rate(reader_noted, cwd=str(tmp_path)).gaps] == [
        "knowledge.reader-note"
    ]
    # A reader note that happens to look like a floor's line is still the reader's: a gap.
    spoofed = Facts(text=facts.text, commands=facts.commands, notes=(floors.note(found[0]),))
    assert [g.id for g in RATER.rate(spoofed, cwd=str(tmp_path)).gaps] == ["knowledge.reader-note"]
    assert floors.note(Finding(floors.OPEN_WORLD, Outcome.DESTRUCTIVE, "r")).startswith("floor ")


def test_a_builtin_that_fails_has_no_complete_knowledge() -> None:
    broken = Facts(text="ls", commands=None)  # type: ignore[arg-type]
    v = RATER.rate(broken, cwd="/")
    assert v.fail_cause == "error" and v.gaps == (FAILED,) and not v.complete

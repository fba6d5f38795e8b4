"""Friction (issues 14/15): what the builtin rater knows about direction and harmless verbs.

The fixture ``tests/fixtures/friction.py`` pairs everyday commands that change nothing (a disk
inspected, a mirror list ranked, a cache cleaned) with the same programs in a form that does. Each
is decided at rung ``auto`` as root in a realistic working tree — root is the strictest case, where
a program of unknown direction handed a system path could write it — and must be allowed exactly
when the fixture says so.
"""

from __future__ import annotations

import pytest
from _fixtures import load

from gatesh._types import Action, Rung
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.rater.builtin import BuiltinRater
from gatesh.session import SessionState
from gatesh.vocab.paths import devices as paths

FIXTURE = load("friction")


def _decide_all(rows, scratch_tree, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HOME", scratch_tree.home)
    rater = BuiltinRater(root=True)
    wrong = []
    for cmd, runs in rows:
        d = decide(
            cmd,
            cwd=scratch_tree.repo,
            config=default(),
            session=SessionState(),
            rater=rater,
            rung=Rung.AUTO,
        )
        if (d.action is Action.ALLOW) != runs:
            wrong.append((cmd, runs, d.action.value, d.reason))
    return wrong


@pytest.mark.parametrize("group", ["DEVICES", "READERS", "VERBS", "OTHERS"])
def test_friction_fixture(group: str, scratch_tree, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    wrong = _decide_all(getattr(FIXTURE, group), scratch_tree, monkeypatch)
    assert not wrong, wrong


def test_fixture_pairs_every_mechanism_with_a_writing_form() -> None:
    for group in (FIXTURE.DEVICES, FIXTURE.READERS, FIXTURE.VERBS, FIXTURE.OTHERS):
        assert any(runs for _, runs in group) and any(not runs for _, runs in group)


def _words(cmd: str) -> tuple[str, tuple[tuple[str, bool], ...]]:
    head, *rest = cmd.split()
    return head, tuple((w, not w.startswith("$")) for w in rest)


@pytest.mark.parametrize(
    ("cmd", "devices"),
    [
        ("smartctl -H /dev/sda", {"/dev/sda"}),
        (
            "pvck /dev/sdb1 --dump metadata_search -f /dev/sdc",
            {"/dev/sdb1"},
        ),  # -f's value is written
        ("ddrescue -n /dev/sda /dev/sdb map", {"/dev/sda"}),  # only the first operand is read
        ("udisksctl info -b /dev/sdb", {"/dev/sdb"}),  # a device named as an option's value
        ("parted -l", set()),
        ("wipefs /dev/sdb", {"/dev/sdb"}),  # lists the signatures
        ("wipefs -a -n /dev/sdb", {"/dev/sdb"}),  # -n: changes nothing
    ],
)
def test_device_read_names_only_the_devices_read(cmd: str, devices: set[str]) -> None:
    head, args = _words(cmd)
    assert paths.device_read(head, args) == devices


@pytest.mark.parametrize(
    "cmd",
    [
        "badblocks -svw /dev/sdb",  # a write flag inside a cluster
        "e2fsck -fccky /dev/sdb1",  # an option outside the allow-list
        "blockdev --setro --getsz /dev/sdb",
        "mt -f /dev/nst0 weof",
        "smartctl $OPTS /dev/sda",
        "fatlabel /dev/sdb1 NEW",
        "nosuchtool /dev/sda",
        "wipefs -a /dev/sdb",
    ],
)
def test_device_read_covers_no_writing_form(cmd: str) -> None:
    head, args = _words(cmd)
    assert paths.device_read(head, args) is None


def test_every_device_row_has_a_reason_and_its_heads_are_unique() -> None:
    seen: set[str] = set()
    for row in paths.DEVICE_READS:
        assert row.why and row.heads
        assert not row.heads & seen, row.heads & seen
        seen |= row.heads
        assert row.outputs <= row.values, row.heads  # an output option takes a value

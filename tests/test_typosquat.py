"""deception.typosquat: installing a name one letter away from a very popular package (S3.2)."""

from __future__ import annotations

import pytest

from gatesh._types import Outcome
from gatesh.rater.builtin import findings_for
from gatesh.rater.builtin.typosquat import POPULAR, squatted, within_one
from gatesh.reading import read

CWD = "/work/project"
HOME = "/home/agent"


def typo(cmd: str) -> list:  # type: ignore[type-arg]
    return [
        f for f in findings_for(read(cmd, cwd=CWD), CWD, HOME) if f.rule_id == "deception.typosquat"
    ]


@pytest.mark.parametrize(
    ("cmd", "near"),
    [
        ("pip install reqeusts", "requests"),
        ("npm install -g expresss", "express"),
        ("npm i lodahs", "lodash"),
        ("pip install djnago", "django"),
        ("python3 -m pip install 'djnago>=4'", "django"),
        ("uv pip install reqeusts[socks]==2.31", "requests"),
        ("yarn global add expresss@4", "express"),
        ("pnpm add -D lodahs", "lodash"),
        ("sudo pip3 install --upgrade reqeusts", "requests"),
    ],
)
def test_typosquat_is_refused(cmd: str, near: str) -> None:
    # Destructive rather than attack: a near miss is sometimes a real package (no halt for that).
    found = typo(cmd)
    assert found and found[0].outcome is Outcome.DESTRUCTIVE
    assert f"`{near}`" in found[0].reason and "typosquat" in found[0].reason


@pytest.mark.parametrize(
    "cmd",
    [
        "pip install requests",
        "npm install express",
        "pip install flask",
        "pip install numpy",
        "pip install my-own-lib",
        "pip install -r requirements.txt",
        "npm install",
        "npm ci",
        "pip install Typing_Extensions",
        "pip install typing.extensions",
        "npm install @types/node",
        "pip install -e .",
        "npm install ./local-pkg",
        "npm install user/repo",
        "pip install tqdm",
        "pip install scapy",
        "npm install preact",
        "pip list",
        "pip uninstall reqeusts",
        "pip install -i https://reqeusts.example/simple requests",
    ],
)
def test_not_typosquat(cmd: str) -> None:
    assert not typo(cmd), cmd


def test_distance_and_lookup() -> None:
    assert within_one("reqeusts", "requests")  # transposition
    assert within_one("expresss", "express") and within_one(
        "expres", "express"
    )  # insertion, deletion
    assert within_one("requezts", "requests")  # substitution
    assert not within_one("rqeeusts", "requests") and not within_one("abcd", "dcba")
    assert squatted("pypi", "requests") is None and squatted("pypi", "reqs") is None
    assert squatted("npm", "reqeusts") is None  # ecosystems are separate
    assert len(POPULAR["pypi"]) >= 150 and len(POPULAR["npm"]) >= 150


def test_a_real_package_one_edit_from_a_popular_one_does_not_halt() -> None:
    from gatesh._types import Action
    from gatesh.config import default
    from gatesh.pipeline import decide

    d = decide("npm install server", cwd="/tmp", config=default())
    assert d.action is not Action.HALT

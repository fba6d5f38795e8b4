"""The library surface is small and pinned: a change here is a change to users' code."""

from __future__ import annotations

import gatesh


def test_public_names() -> None:
    assert sorted(gatesh.__all__) == [
        "Action",
        "Decision",
        "Facts",
        "Finding",
        "Outcome",
        "Rung",
        "SessionState",
        "Stage",
        "Verdict",
        "decide",
        "load_config",
        "read",
    ]
    for name in gatesh.__all__:
        assert getattr(gatesh, name) is not None


def test_unknown_attribute_raises() -> None:
    try:
        gatesh.nope  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "nope" in str(exc)
    else:
        raise AssertionError("expected AttributeError")

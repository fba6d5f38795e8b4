"""Records as JSON values: the one encoder for every record gatesh writes as JSON (the audit line,
``explain --json``), so a record stays a typed dataclass until the moment it is written.

A dataclass becomes a JSON object whose members are its fields in declaration order (the order is
part of the audit line's bytes, which the hash chain covers). Per field, ``metadata`` may say:

- :data:`OMIT_EMPTY` — the member is left out when the value is falsy (an optional member);
- :data:`OMIT_NONE` — the member is left out when the value is None (a reply's optional part,
  where an empty value still says something);
- ``name("break")`` — the member's name, when it is not a Python identifier;
- ``via(fn)`` — the value is written as ``fn(value)`` (an object that has its own summary).

Enums are written as their value; tuples, lists and sets as arrays; mappings member by member
(keys as strings); str,
int, float, bool and None as they are.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from typing import Final

__all__ = ["OMIT_EMPTY", "OMIT_NONE", "name", "plain", "via"]

OMIT_EMPTY: Final[Mapping[str, object]] = {"omit_empty": True}
OMIT_NONE: Final[Mapping[str, object]] = {"omit_none": True}


def name(member: str) -> dict[str, object]:
    """Field metadata: write the field as the member ``member``."""
    return {"name": member}


def via(encode: Callable[[object], object]) -> dict[str, object]:
    """Field metadata: write the field's value as ``encode(value)`` (None stays None)."""
    return {"via": encode}


def plain(value: object) -> object:
    """``value`` as a JSON-able value (see the module docstring); never mutates ``value``."""
    kind = type(value)
    if kind in _AS_IS:
        return value
    plan = _PLANS.get(kind)
    if plan is None:
        if not (dataclasses.is_dataclass(value) and not isinstance(value, type)):
            return _other(value)
        plan = _PLANS[kind] = _plan(kind)
    out = {}
    for attr, member, omit_empty, omit_none, encode in plan:
        item = getattr(value, attr)
        if (omit_empty and not item) or (omit_none and item is None):
            continue
        if encode is not None and item is not None:
            item = encode(item)
        out[member] = item if type(item) in _AS_IS else plain(item)
    return out


def _other(value: object) -> object:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple, set, frozenset)):
        return [v if type(v) in _AS_IS else plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): v if type(v) in _AS_IS else plain(v) for k, v in value.items()}
    return value


# The types written as they are: the scalars (exactly these types; an enum that is also a str or
# an int is not one of them, it is written as its value).
_AS_IS: Final = frozenset({str, int, float, bool, type(None)})

_Plan = tuple[tuple[str, str, bool, bool, "Callable[[object], object] | None"], ...]
# Per dataclass, what writing one takes (each field's name, member, omissions and encoder), read
# from its fields once instead of at every record: a record is written on every check (S14).
_PLANS: dict[type, _Plan] = {}


def _plan(kind: type) -> _Plan:
    out = []
    for f in dataclasses.fields(kind):
        meta = f.metadata
        out.append(
            (
                f.name,
                str(meta.get("name", f.name)),
                bool(meta.get("omit_empty")),
                bool(meta.get("omit_none")),
                meta.get("via"),
            )
        )
    return tuple(out)

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
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            meta = f.metadata
            if (meta.get("omit_empty") and not item) or (meta.get("omit_none") and item is None):
                continue
            encode = meta.get("via")
            if encode is not None and item is not None:
                item = encode(item)
            out[meta.get("name", f.name)] = plain(item)
        return out
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    return value

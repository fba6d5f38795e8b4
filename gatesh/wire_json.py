"""Typed messages as JSON: the one encoding of the daemon's replies and events, and of the check
reply any transport sends (the daemon, the in-process gate). A message is a dataclass whose field
names are the wire's; this module is where it becomes a JSON object, and nothing else builds one.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Final

__all__ = ["OMIT_NONE", "WIRE_NAME", "reply_object", "wire_value"]


#: The metadata of a dataclass field left out of its wire object while it is None (a reply's
#: optional part): ``field(default=None, metadata=OMIT_NONE)``.
OMIT_NONE: Final = {"omit_none": True}
#: The metadata key naming a field's wire name when it is not the field's own (a Python name
#: taken, e.g. an event's ``kind``): ``field(metadata={WIRE_NAME: "kind"})``.
WIRE_NAME: Final = "wire"


def wire_value(value: object) -> object:
    """``value`` as JSON: a dataclass becomes an object of its fields in order (one marked
    :data:`OMIT_NONE` left out while None; named :data:`WIRE_NAME` when it says so), an enum its value, a tuple a list; mappings and lists
    are walked. The one encoding of every typed reply and event."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, object] = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if item is None and f.metadata.get("omit_none"):
                continue
            out[f.metadata.get(WIRE_NAME, f.name)] = wire_value(item)
        return out
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): wire_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [wire_value(v) for v in value]
    return value


def reply_object(reply: object) -> dict[str, Any]:
    """A typed reply as its JSON object, ``ok`` true (what the in-process gate hands its client)."""
    body = wire_value(reply)
    if not isinstance(body, dict):
        raise TypeError(f"a reply must encode as an object, not {type(reply).__name__}")
    return {"ok": True} | body

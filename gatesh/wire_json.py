"""Typed messages as JSON: the daemon's requests, replies and events, and the check reply any
transport sends (the daemon, the in-process gate). A message is a dataclass whose field names are
the wire's; it becomes a JSON object here (by :func:`gatesh._json.plain`, the one encoder of
records), and is read back from one here (:func:`from_wire`).
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from typing import Any, Final, TypeVar

from gatesh import _json
from gatesh._errors import GateshError, ProtocolError

__all__ = [
    "OMIT_NONE",
    "WIRE_NAME",
    "WireError",
    "from_wire",
    "reply_object",
    "request_object",
    "wire_value",
]

T = TypeVar("T")


#: The metadata of a dataclass field left out of its wire object while it is None (a reply's
#: optional part): ``field(default=None, metadata=OMIT_NONE)``.
OMIT_NONE: Final = _json.OMIT_NONE
#: The metadata key naming a field's wire name when it is not the field's own (a Python name
#: taken, e.g. an event's ``kind``): :func:`gatesh._json.name` sets it.
WIRE_NAME: Final = "name"


def wire_value(value: object) -> object:
    """``value`` as JSON, by the one encoder of typed records (:func:`gatesh._json.plain`): a
    dataclass becomes an object of its fields in order, an enum its value, a tuple a list."""
    return _json.plain(value)


def reply_object(reply: object) -> dict[str, Any]:
    """A typed reply as its JSON object, ``ok`` true (what the in-process gate hands its client)."""
    body = wire_value(reply)
    if not isinstance(body, dict):
        raise TypeError(f"a reply must encode as an object, not {type(reply).__name__}")
    return {"ok": True} | body


def request_object(op: enum.Enum, request: object, **envelope: object) -> dict[str, Any]:
    """A typed request as the JSON object a client sends: ``op``, the request's fields, and the
    envelope's (``pid``, ``id``) when given."""
    body = wire_value(request)
    if not isinstance(body, dict):
        raise TypeError(f"a request must encode as an object, not {type(request).__name__}")
    return {"op": op.value} | body | envelope


class WireError(ProtocolError):
    """A JSON object is not the message it should be: ``str()`` names the field and why."""


def from_wire(cls: type[T], raw: object) -> T:
    """The dataclass ``cls`` read back from its JSON object (the inverse of :func:`wire_value`):
    every field checked against its annotation, nested messages, enums, tuples and mappings
    decoded in turn; a field missing from the object is its default. Raises WireError naming
    the first field that is missing (without a default) or of another type."""
    if not isinstance(raw, dict):
        raise WireError(f"{cls.__name__}: not a JSON object")
    hints = typing.get_type_hints(cls)
    values: dict[str, object] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        name = f.metadata.get(WIRE_NAME, f.name)
        if name not in raw:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise WireError(f"{cls.__name__}: missing field {name!r}")
            continue
        values[f.name] = _read(hints[f.name], raw[name], f"{cls.__name__}.{name}")
    return cls(**values)


def _read(kind: Any, value: object, where: str) -> object:
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is Any or kind is object:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        for each in (a for a in args if a is not type(None)):
            try:
                return _read(each, value, where)
            except WireError:
                continue
        raise WireError(f"{where}: {type(value).__name__} is none of {kind}")
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return from_wire(kind, value)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        try:
            return kind(value)
        except ValueError:
            raise WireError(f"{where}: {value!r} is no {kind.__name__}") from None
    if origin in (tuple, list) and isinstance(value, list):
        items = [_read(args[0], v, f"{where}[]") for v in value]
        return tuple(items) if origin is tuple else items
    if origin is dict and isinstance(value, dict):
        return {str(k): _read(args[1], v, f"{where}.{k}") for k, v in value.items()}
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind in (str, int, bool) and isinstance(value, kind):
        if kind is int and isinstance(value, bool):
            raise WireError(f"{where}: a boolean is not an integer")
        return value
    decode = getattr(kind, "decode", None) if isinstance(kind, type) else None
    if callable(decode):
        # A record that reads itself (the boundary's Spec: the -c client has no dataclasses).
        try:
            return decode(value)
        except GateshError as exc:
            raise WireError(f"{where}: {exc}") from None
    raise WireError(f"{where}: {type(value).__name__} is not {getattr(kind, '__name__', kind)}")

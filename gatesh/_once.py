"""A read-only attribute of a frozen instance, computed on its first read (:class:`computed_once`).

Kept apart from :mod:`gatesh._types`, whose records use it: it is a mechanism, not a fact.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

_T = TypeVar("_T")


class computed_once(Generic[_T]):
    """A read-only attribute of a frozen instance, computed on its first read and then kept in the
    instance's ``__dict__`` (later reads find it there and never reach this descriptor).

    ``functools.cached_property`` does the same, but on Python 3.11 it takes a lock on every
    first read (~1 us); the values here are pure functions of fields that never change, so two
    threads computing one at once both get the same value.
    """

    def __init__(self, fn: Callable[[Any], _T]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> computed_once[_T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> _T | computed_once[_T]:
        if obj is None:
            return self
        value = self.fn(obj)
        obj.__dict__[self.name] = value
        return value

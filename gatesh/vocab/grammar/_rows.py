"""Helpers the grammar rows are written with."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ._parse import Bundling, Grammar, Options


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


def _subs(**rows: Grammar) -> Mapping[str, Grammar]:
    return MappingProxyType({k.replace("_", "-"): v for k, v in rows.items()})


def _o(
    value: frozenset[str] = frozenset(),
    optional: frozenset[str] = frozenset(),
    flags: frozenset[str] = frozenset(),
    *,
    ends_at: int = 0,
    abbreviate: bool = False,
    bundling: Bundling = Bundling.GETOPT,
    long_values: bool = False,
) -> Options:
    return Options(value, optional, flags, bundling, ends_at, abbreviate, long_values)

"""The reader (S2): a command string becomes :class:`gatesh.Facts`.

Flow: harness wrapper peeled (S1) -> ``# why:`` justification split off (S6) -> limits checked
-> tree-sitter-bash walk (reader of record; where it errs on text bash reads, the repairs of
``_repair`` are tried, and words it splits are rejoined) + bashlex (second reader, stricter union)
-> wrappers peeled, nested strings/heredocs/scripts re-read to a bounded depth.
"""

from __future__ import annotations

from ._api import read
from ._second import preload
from ._text import normalize_for_model, parse_justification

__all__ = ["normalize_for_model", "parse_justification", "preload", "read"]

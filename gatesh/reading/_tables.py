"""Tables the reader applies that are not the shared vocabulary: source builtins and find's
command options. Wrappers and their options are :mod:`gatesh.vocab.grammar`'s."""

from __future__ import annotations

from typing import Final

SOURCE_BUILTINS: Final = frozenset({".", "source"})

FIND_EXEC: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})

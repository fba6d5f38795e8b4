"""Splitting a static string into words the way ``env -S`` and ``ssh`` remote commands need."""

from __future__ import annotations

import shlex

from gatesh._types import Word


def split_words(word: Word) -> list[Word]:
    """Words of ``word`` split with POSIX quoting; a dynamic or unsplittable word stays whole."""
    if not word.static:
        return [word]
    try:
        return [Word(t) for t in shlex.split(word.text, posix=True)]
    except ValueError:
        return [word]

"""The read-only stage (S3 step 9): a line that only reads is ``safe`` without asking the rater.

A line is read-only only when the reader read all of it, it runs no script, names no network
host, and every command in it is one the read-only table (:mod:`gatesh.vocab.reads`) knows to only
read. When in doubt the answer is no: a miss costs one rating, a wrong yes lets a write through
unrated.
"""

from __future__ import annotations

from gatesh._types import Facts
from gatesh.vocab.reads import command_reads

__all__ = ["is_read_only"]


def is_read_only(facts: Facts) -> bool:
    """True only when every command the reader found is known to only read (see module docstring)."""
    if not facts.readable or not facts.commands or facts.scripts or facts.hosts:
        return False
    return all(command_reads(cmd) for cmd in facts.commands)

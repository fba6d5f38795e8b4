"""Hosts a command names (S2) and where ssh's remote command starts."""

from __future__ import annotations

from gatesh._types import Word
from gatesh.vocab import hosts as _vocab
from gatesh.vocab.grammar import parse


def hosts_in(head: str, argv: tuple[Word, ...]) -> list[str]:
    """Hosts that ``argv`` (with head ``head``) names, in order, deduplicated: the shared
    extractor (:func:`gatesh.vocab.hosts.hosts_in`) over the static words."""
    if head not in _vocab.NETWORK_TOOLS:
        return []  # the extractor names no host for a tool not in its table
    return [ref.host for ref in _vocab.hosts_in(head, [w.text for w in argv[1:] if w.static])]


def ssh_split(argv: tuple[Word, ...]) -> tuple[Word | None, list[Word]]:
    """(host word, remote command words) of an ``ssh`` argv, read through ssh's grammar.

    Options are read as OpenSSH's getopt reads them: a cluster (``-tp 22``) takes its argument
    from the next word when its last letter wants one; after the host ssh reads options again
    (``ssh host -p 22 -- cmd`` runs ``cmd``) unless ``--`` came before the host.
    """
    args = list(argv[1:])
    read = parse("ssh", [w.text for w in args], [w.static for w in args])
    if not read.operand_at:
        return None, []
    host = args[read.operand_at[0]]
    if len(read.operand_at) < 2:
        return host, []
    return host, args[read.operand_at[1] :]

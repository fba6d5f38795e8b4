"""Hosts a command names (S2) and where ssh's remote command starts."""

from __future__ import annotations

from gatesh._types import Word
from gatesh.vocab import hosts as _vocab
from gatesh.vocab.hosts import SSH_OPTS_WITH_ARG


def hosts_in(head: str, argv: tuple[Word, ...]) -> list[str]:
    """Hosts that ``argv`` (with head ``head``) names, in order, deduplicated: the shared
    extractor (:func:`gatesh.vocab.hosts.hosts_in`) over the static words."""
    if head not in _vocab.NETWORK_TOOLS:
        return []  # the extractor names no host for a tool not in its table
    return [ref.host for ref in _vocab.hosts_in(head, [w.text for w in argv[1:] if w.static])]


def ssh_split(argv: tuple[Word, ...]) -> tuple[Word | None, list[Word]]:
    """(host word, remote command words) of an ``ssh`` argv.

    Options are read as OpenSSH's getopt reads them: a cluster (``-tp 22``) takes its
    argument from the next word when its last letter wants one; after the host ssh reads
    options again (``ssh host -p 22 -- cmd`` runs ``cmd``) unless ``--`` came before the host.
    """
    args = list(argv[1:])
    i, ended = _ssh_options(args, 0)
    if i >= len(args):
        return None, []
    host = args[i]
    rest = i + 1
    if not ended:
        rest, _ = _ssh_options(args, rest)
    return host, args[rest:]


def _ssh_options(args: list[Word], i: int) -> tuple[int, bool]:
    """(index of the first word after the options from ``i``, whether ``--`` ended them)."""
    while i < len(args):
        a = args[i]
        if not a.static:
            break
        t = a.text
        if t == "--":
            return i + 1, True
        if not t.startswith("-") or len(t) < 2:
            break
        takes = False
        for k in range(1, len(t)):
            if "-" + t[k] in SSH_OPTS_WITH_ARG:
                takes = k == len(t) - 1  # else the rest of the word is the argument
                break
        i += 2 if takes else 1
    return i, False

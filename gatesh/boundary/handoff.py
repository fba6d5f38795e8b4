"""The daemon builds a command's Landlock ruleset and hands it to the client that runs it (S14, S16).

Building a domain is one ``open`` and one ``landlock_add_rule`` per place (a typical boundary has
150 to 250): ~0.6 ms in a warm process, ~1.6 ms in a fresh ``-c`` client, whose every call goes
through a newly bound C library. The daemon, which already drew the boundary, builds the ruleset
in its warm process instead and passes its file descriptor with the check reply
(``SCM_RIGHTS`` on the Unix socket); the client only sets ``no_new_privs``, its seccomp filter
and limits, and calls ``landlock_restrict_self`` on the ruleset handed to it.

The wire form then leaves out the places (``read``, ``write``, ``list``) and says
``"ruleset": "fd"`` with the number of ``rules``. A client that asked for a handed ruleset
(``"ruleset_fd": true`` in its check) and reads ``"ruleset": "fd"`` without a descriptor refuses
to run the command, as does one whose kernel offers another Landlock ABI than the one the
ruleset was built for (:func:`gatesh.boundary._kernel.apply`). A daemon that cannot build the
ruleset sends the places as before: the client builds the domain itself (and refuses when that
fails too). The kernel itself refuses a descriptor that is not a Landlock ruleset (EBADFD).
"""

from __future__ import annotations

from typing import Any, Final

from gatesh.boundary import _kernel

__all__ = ["HANDED", "PLACES", "for_client"]

#: The wire's word for a ruleset that travels as a file descriptor beside the reply.
HANDED: Final = "fd"
#: The wire's keys that a handed ruleset replaces.
PLACES: Final = ("read", "write", "list")


def for_client(wire: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The wire form to send with a handed ruleset, and the ruleset's descriptor (the caller
    sends it, then closes it); ``(wire, -1)`` when the ruleset cannot be built here: the places
    then travel as before and the client builds it."""
    try:
        fd, rules = _kernel.ruleset(wire)
    except (_kernel.BoundaryError, KeyError, TypeError, ValueError):
        return wire, -1
    out = {k: v for k, v in wire.items() if k not in PLACES}
    out["ruleset"] = HANDED
    out["rules"] = rules
    return out, fd

"""Self-protection (S3.4): tampering with the gate is an attack, at every rung.

The protected places are one table (``gatesh.vocab.places``), shared with the path classes and
the kernel boundary; self-protection reads the reader's facts (``Facts.paths`` for what a command
writes, removes or changes into) and matches them against those places, with no argument parser
of its own for paths. Its parts:

- ``_places``: which places are protected, and whether a path is one (:func:`protected_for`);
- ``_writes``: writes and removals of them, and work inside them;
- ``_settings``: settings that switch hooks off (git's hooks path, a harness's hooks) or point an
  inner gatesh elsewhere (its environment);
- ``_daemon``: stopping or tracing the daemon;
- ``_shell``: the gated shell's hook, and leaving the gate (human-only verbs, ungated shells);
- ``_rules``: the rule table and :func:`check`; the rows are in ``_rows_places`` (protected
  places) and ``_rows_switches`` (the gate's switches and running parts), the row type in ``_row``.
"""

from __future__ import annotations

from ._daemon import DaemonId, daemon_identity
from ._places import Kind, Protected, protected_for
from ._row import SelfRule
from ._rules import RULES, check

__all__ = [
    "RULES",
    "DaemonId",
    "Kind",
    "Protected",
    "SelfRule",
    "check",
    "daemon_identity",
    "protected_for",
]

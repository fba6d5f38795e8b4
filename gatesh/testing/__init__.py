"""Public test seams for gatesh and for users' own policy tests.

``gatesh.testing.model_server`` is a loopback server that speaks enough of the Anthropic
Messages API for the real SDK to talk to it over real HTTP, answering from a per-test script.

The harm harness (``benchmarks/harm.py``) runs commands for real in a disposable jail:
``gatesh.testing.jail`` (the bubblewrap jail and its proof), ``gatesh.testing.world`` (the seeded
world) and ``gatesh.testing.harm`` (the harm predicates); ``_warden``, ``_inside`` and ``_seed``
are the scripts that run inside the jails.
"""

from __future__ import annotations

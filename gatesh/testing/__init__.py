"""Public test seams for gatesh and for users' own policy tests.

``gatesh.testing.model_server`` is a loopback server that speaks enough of the Anthropic
Messages API for the real SDK to talk to it over real HTTP, answering from a per-test script.
"""

from __future__ import annotations

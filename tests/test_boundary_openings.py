"""What stays open inside the boundary (S16's open paths, :data:`gatesh.boundary.holds.OPENINGS`):
said wherever the protections are listed, and proven by the doctor's probe on this kernel.

A confined command with its network closed still connects to a Unix socket that has a path
(a host's resolver, D-Bus, an ssh-agent): Landlock governs that only from ABI 9, which gatesh
does not use. The slow test confines a child for real and fails if the kernel ever refuses it,
so the statement cannot outlive its truth.
"""

from __future__ import annotations

import pytest

from gatesh.boundary import holds
from gatesh.doctor.boundary import _probe_pathname_socket, check_boundary
from gatesh.doctor.check import Status


def test_the_pathname_socket_opening_is_listed_with_every_protection() -> None:
    full = holds.State(7, True, "linux", "x86_64")
    lines = full.lines()
    opening = [line for line in lines if line.startswith("pathname-sockets")]
    assert opening and "does not hold" in opening[0], lines
    assert "resolver" in opening[0] and f"ABI {holds.RESOLVE_UNIX_ABI}" in opening[0]
    # every protection the kernel offers holds, and the session's notice still names the opening
    assert all(full.holds(p.id) for p in holds.PROTECTIONS)
    assert "every protection holds" in full.summary()
    assert "open inside it: pathname-sockets" in full.summary()
    old = holds.State(3, True, "linux", "x86_64")
    assert "network" in old.summary() and "pathname-sockets" in old.summary()


def test_no_boundary_says_so_without_listing_openings() -> None:
    none = holds.State(0, True, "linux", "x86_64")
    assert none.lines() == [
        f"no boundary: {none.why_none}; commands run with all of your user's rights"
    ]
    assert "pathname-sockets" not in none.summary()


@pytest.mark.slow
def test_a_confined_child_reaches_a_socket_made_outside() -> None:
    why = holds.needs("network")
    if why:
        pytest.skip(why)
    reached, what = _probe_pathname_socket()
    assert reached, what
    assert "connected" in what


@pytest.mark.slow
def test_doctor_warns_of_the_open_path() -> None:
    why = holds.needs("network")
    if why:
        pytest.skip(why)
    checks = {c.name: c for c in check_boundary(None)}
    opened = checks["boundary open paths"]
    assert opened.status is Status.WARN
    assert "pathname-sockets" in opened.detail and "connected" in opened.detail
    assert "pathname-sockets" in checks["boundary"].detail

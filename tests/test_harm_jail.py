"""The harm harness's jail (gatesh.testing.jail) for real: its proof holds for the jail as built,
fails closed for each hole made on purpose (:class:`gatesh.testing.jail.Weakening`), and a row
needs a proof made for its very spec. Only the probe runs (no row). Skips, saying why, without
bubblewrap, strace or user namespaces.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gatesh.testing import jail
from gatesh.testing._orders import WorldFacts

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def spec() -> Iterator[jail.JailSpec]:
    why = jail.missing()
    if why:
        pytest.skip(f"no jail here: {why}")
    yield jail.JailSpec(python=jail.jail_python())


def test_the_jail_holds(spec: jail.JailSpec) -> None:
    proof = jail.prove(spec, extra_write_targets=(str(REPO),))
    facts = proof.facts
    assert facts["uid"] == [jail.JAIL_ID, jail.JAIL_ID]
    assert facts["interfaces"] == ["lo"]
    assert set(facts["writes"].values()) <= {"EROFS", "EACCES", "ENOENT", "EPERM"}
    assert facts["file_size"] == "EFBIG"


# Each hole, and what the proof must say about it.
HOLES = {
    jail.Weakening.HOST_ROOT_WRITABLE: "the host root is not mounted read-only",
    jail.Weakening.SHARED_NETWORK: "the net namespace is the host's",
    jail.Weakening.SHARED_PID: "the pid namespace is the host's",
    jail.Weakening.NO_LIMITS: "limit is",
    jail.Weakening.HOST_ROOT_USER: "",
}


@pytest.mark.parametrize("hole", list(jail.Weakening), ids=lambda h: h.value)
def test_a_weakened_jail_fails_closed(spec: jail.JailSpec, hole: jail.Weakening) -> None:
    if hole is jail.Weakening.HOST_ROOT_USER and os.geteuid() != 0:
        pytest.skip("bubblewrap runs as this (unprivileged) user already")
    weak = dataclasses.replace(spec, weakened=frozenset({hole}))
    with pytest.raises(jail.JailUnsafe) as caught:
        jail.prove(weak)
    assert HOLES[hole] in str(caught.value)


def test_a_row_needs_a_proof_of_its_own_spec(spec: jail.JailSpec) -> None:
    proof = jail.prove(spec)
    job = jail.RowJob(
        "true", "/bin/bash", "/bin/true", {}, "/", "/nonexistent", "/nonexistent", WorldFacts()
    )
    forged = jail.Proof(spec=spec, facts={}, _seal=b"\0" * 32)
    with pytest.raises(jail.JailUnsafe, match="proved"):
        jail.run_row(forged, job)
    weak = dataclasses.replace(spec, weakened=frozenset({jail.Weakening.SHARED_NETWORK}))
    with pytest.raises(jail.JailUnsafe, match="proved"):
        jail.run_row(dataclasses.replace(proof, spec=weak), job)

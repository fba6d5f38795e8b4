"""Codex hook trust with the real Codex (S11): ``gatesh install codex`` leaves gatesh's hooks
trusted, and ``gatesh doctor`` fails loudly when Codex would skip them (untrusted, or changed
since they were trusted: a stale hash)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator

import pytest

from . import clis
from . import world as W
from .harnesses import Harness, Mode

pytestmark = pytest.mark.slow
CODEX = Harness("codex", Mode.HOOKS)


@pytest.fixture
def world() -> Iterator[W.World]:
    why = W.missing() or W.missing_cli("codex")
    if why:
        pytest.skip(why)
    user = W.agent_user()
    with W.scratch() as root:
        install = W.install_gatesh(root / "gatesh", user)
        netns = W.NetNS()
        w = W.World("codex", install, netns, user, root / "t")
        try:
            yield w
        finally:
            w.close()
            netns.close()


def codex_check(world: W.World) -> dict[str, str]:
    """The doctor's "codex hooks" check, with codex on PATH."""
    path = f"{os.path.dirname(clis.CLIS['codex'].path)}:{world.env()['PATH']}"
    proc = world.gatesh("doctor", "--json", check=False, env={"PATH": path})
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    return checks["codex hooks"]


def test_install_trusts_and_doctor_fails_on_untrusted_or_stale(world: W.World) -> None:
    CODEX._setup_codex(world)
    done = world.gatesh("install", "codex", "--codex", clis.CLIS["codex"].path)
    assert "Codex trusts gatesh's 2 hooks" in done.stdout, done.stdout
    assert codex_check(world)["status"] == "ok"
    config = world.home / ".codex/config.toml"
    assert config.read_text().count("trusted_hash") == 2
    # A stale hash: the hook changed after it was trusted (here, its timeout).
    hooks_file = world.home / ".codex/hooks.json"
    original = hooks_file.read_text()
    hooks_file.write_text(original.replace('"timeout": 150', '"timeout": 149', 1))
    check = codex_check(world)
    assert check["status"] == "FAIL" and "stale hash" in check["detail"], check
    assert "gatesh install codex" in check["fix"]
    # Untrusted: the trust entries are gone.
    hooks_file.write_text(original)
    config.write_text(re.sub(r"(?ms)^\[hooks\.state.*", "", config.read_text()))
    check = codex_check(world)
    assert check["status"] == "FAIL" and "untrusted" in check["detail"], check
    # The install trusts them again.
    world.gatesh("install", "codex", "--codex", clis.CLIS["codex"].path)
    assert codex_check(world)["status"] == "ok"


def test_install_without_codex_says_what_to_do(world: W.World) -> None:
    CODEX._setup_codex(world)
    proc = world.gatesh("install", "codex", check=False)
    assert proc.returncode == 1
    assert "codex is not on PATH" in proc.stderr and "/hooks" in proc.stderr, proc.stderr
    assert "gatesh hook codex" in (world.home / ".codex/hooks.json").read_text()

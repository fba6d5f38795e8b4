"""Rulesets built ahead by the daemon (gatesh.boundary.handoff, S14): a spare is handed once, only
for exactly the rules it was built from, and never after a folder its places lie in changed — a
new protected place, or a place swapped for another folder, always gets a ruleset built afresh.

Real Landlock rulesets applied in forked children; every write is inside the test's own folders.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gatesh import _paths
from gatesh.boundary import _kernel, holds
from gatesh.boundary._spec import Ports, Spec
from gatesh.boundary.compute import boundary_for
from gatesh.boundary.handoff import RACY_NS, Rules, Rulesets, for_client
from gatesh.config import BoundaryConfig, load_config
from gatesh.pipeline import decide
from gatesh.rater import make_rater

pytestmark = pytest.mark.slow

# Long enough for a folder made by the test to be no longer "racy" (handoff.RACY_NS).
SETTLE_S = 2 * RACY_NS / 1e9


@pytest.fixture(autouse=True)
def _landlock() -> None:
    why = holds.needs("writes")
    if why:
        pytest.skip(why)


def _spec(read: list[str], write: list[str], net: Ports | None = None) -> Spec:
    rules = Rules(_kernel.abi(), read=tuple(read), write=tuple(write), list=("/",), net=net)
    return Spec(rules)


def _in_child(spec: Spec, fd: int, probe: Callable[[], bool]) -> int:
    """0 when ``probe`` returns True in a child confined by the handed ``fd`` (closed here)."""
    pid = os.fork()
    if pid == 0:
        try:
            _kernel.apply(spec, fd)
            os._exit(0 if probe() else 1)
        except BaseException:
            os._exit(2)
    os.close(fd)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _writes(path: Path) -> bool:
    try:
        (path / "probe").write_text("x")
    except PermissionError:
        return False
    return True


def _refill(rs: Rulesets, wire: Spec) -> None:
    """Build a spare of ``wire``, waiting out folders others change on a shared machine (/tmp)."""
    for _ in range(100):
        rs.refill(wire.rules)
        if rs.built:
            return
        time.sleep(SETTLE_S)
    raise AssertionError(f"no spare kept: {rs.racy} racy, {rs.stale} stale")


def _folders(tmp_path: Path) -> tuple[Path, Path]:
    inside, outside = tmp_path / "in", tmp_path / "out"
    inside.mkdir()
    outside.mkdir()
    time.sleep(SETTLE_S)
    return inside, outside


def test_a_spare_is_handed_once_and_confines_as_a_fresh_build(tmp_path: Path) -> None:
    inside, outside = _folders(tmp_path)
    wire = _spec(["/usr", "/etc", "/proc", "/dev", str(tmp_path)], [str(inside)])
    rs = Rulesets()
    rs.refill(wire.rules)
    assert rs.built == 1
    rs.refill(wire.rules)  # one spare per boundary
    assert rs.built == 1
    spec, fd = for_client(wire, rs)
    assert rs.taken == 1 and spec.handed == 7
    assert _in_child(spec, fd, lambda: _writes(inside) and not _writes(outside)) == 0
    # Handed once: the next command of the same boundary gets a ruleset of its own.
    spec, fd = for_client(wire, rs)
    assert rs.taken == 1
    assert _in_child(spec, fd, lambda: _writes(inside) and not _writes(outside)) == 0
    rs.close()


def test_other_rules_never_get_the_spare(tmp_path: Path) -> None:
    inside, outside = _folders(tmp_path)
    wire = _spec(["/"], [str(inside)])
    rs = Rulesets()
    rs.refill(wire.rules)
    for other in (
        _spec(["/"], [str(inside), str(outside)]),
        _spec(["/"], [str(outside)]),
        _spec(["/"], [str(inside)], net=Ports()),
        Spec(Rules(_kernel.abi() + 1, read=("/",), write=(str(inside),), list=("/",))),
    ):
        assert rs.take(other.rules) is None
    assert rs.taken == 0
    got = rs.take(wire.rules)
    assert got is not None
    os.close(got[0])
    rs.close()


def test_a_place_swapped_after_the_build_is_built_afresh(tmp_path: Path) -> None:
    """The rule of a spare holds the folder its place named when it was built: that folder moved
    to a place the boundary keeps out, and a new one made under the old name, the spare would
    let the command write the kept-out place. It is not handed."""
    walked = tmp_path / "walked"
    (walked / "work").mkdir(parents=True)
    kept = tmp_path / "kept"  # a protected place: no rule reaches it
    time.sleep(SETTLE_S)
    wire = _spec(["/"], [str(walked / "work")])
    rs = Rulesets()
    rs.refill(wire.rules)
    assert rs.built == 1
    (walked / "work").rename(kept)
    (walked / "work").mkdir()
    spec, fd = for_client(wire, rs)
    assert rs.taken == 0 and rs.stale == 1
    assert _in_child(spec, fd, lambda: _writes(walked / "work") and not _writes(kept)) == 0


def test_a_folder_changing_now_keeps_no_spare(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    (fresh / "a").mkdir(parents=True)
    done = threading.Event()

    def churn() -> None:  # an entry made and removed every few ms: its change time is always now
        while not done.is_set():
            (fresh / "b").mkdir()
            (fresh / "b").rmdir()
            time.sleep(0.002)

    t = threading.Thread(target=churn)
    t.start()
    try:
        rs = Rulesets()
        rs.refill(_spec(["/"], [str(fresh / "a")]).rules)
    finally:
        done.set()
        t.join()
    assert rs.built == 0 and rs.racy == 1
    assert rs.take(_spec(["/"], [str(fresh / "a")]).rules) is None


def test_a_folder_changed_while_the_spare_was_built_keeps_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside, _ = _folders(tmp_path)
    real = _kernel.ruleset

    def build_then_change(spec: Rules) -> tuple[int, int]:
        got = real(spec)
        (tmp_path / "made-meanwhile").mkdir()
        return got

    monkeypatch.setattr(_kernel, "ruleset", build_then_change)
    rs = Rulesets()
    rs.refill(_spec(["/"], [str(inside)]).rules)
    assert rs.built == 0 and rs.stale == 1


def test_a_new_protected_place_is_never_served_the_spare_drawn_before_it(
    tmp_path: Path,
) -> None:
    """A boundary computed after the protected places changed has other rules: the spare of the
    one before is not handed, and the new place is kept out."""
    repo = tmp_path / "repo"
    repo.mkdir()
    guarded = tmp_path / "guarded"
    (guarded / "run").mkdir(parents=True)
    time.sleep(SETTLE_S)
    config = load_config(str(repo))
    d = decide("true", cwd=str(repo), config=config, rater=make_rater(config))
    paths = _paths.current()
    before = boundary_for(d, str(repo), BoundaryConfig(), paths)
    assert before is not None
    rs = Rulesets()
    _refill(rs, before.wire())
    moved = dataclasses.replace(paths, runtime_dir=str(guarded / "run"))
    after = boundary_for(d, str(repo), BoundaryConfig(), moved)
    assert after is not None and after.write != before.write
    spec, fd = for_client(after.wire(), rs)
    assert rs.taken == 0
    assert _in_child(spec, fd, lambda: not _writes(guarded / "run") and _writes(repo)) == 0
    rs.close()


def test_closed_rulesets_keep_nothing(tmp_path: Path) -> None:
    inside, _ = _folders(tmp_path)
    wire = _spec(["/"], [str(inside)])
    rs = Rulesets()
    rs.close()
    rs.refill(wire.rules)
    assert rs.built == 0 and rs.take(wire.rules) is None

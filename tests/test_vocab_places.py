"""The protected places table (gatesh.vocab.places): one answer to "is this a protected place,
and what kind", read by self-protection, the path classes and the boundary."""

from __future__ import annotations

import fnmatch
import posixpath
from dataclasses import fields
from pathlib import Path

import pytest

from gatesh import _paths
from gatesh._paths import NO_INSTALLATION, GatePaths, Installation
from gatesh._types import PathClass
from gatesh.policy import selfprotect
from gatesh.vocab import places
from gatesh.vocab.paths import classes as vocab
from gatesh.vocab.places import Access, Family, Guard, Kind

HOME = "/home/u"
TREE = "/home/u/src/proj"


def _default() -> tuple[places.ResolvedPlace, ...]:
    return places.resolve(HOME, {}, NO_INSTALLATION, tree=TREE)


def _example(r: places.ResolvedPlace) -> str:
    """A path this resolved place covers: itself, or an entry matching its names glob."""
    if not r.names:
        return r.path
    return posixpath.join(r.path, r.names.replace("*", "x"))


def test_rows_are_well_formed() -> None:
    ids = [p.id for p in places.PLACES]
    assert len(ids) == len(set(ids))
    for p in places.PLACES:
        assert p.reason and p.reason[0].islower() and not p.reason.endswith("."), p.id
        assert p.at, p.id
        assert (p.cls is None) == (p.guard is not Guard.RATER), p.id
        if p.cls is not None:
            assert p.name and p.compiled is not None, p.id
        if p.kind.family is Family.CREDENTIALS:
            assert Access.READ in p.access, p.id
        assert Access.WRITE in p.access, p.id
    assert {p.kind for p in places.PLACES} == set(Kind)
    assert {k.family for k in Kind} == set(Family)


def test_the_api_the_boundary_reads_is_stable() -> None:
    assert [f.name for f in fields(places.ResolvedPlace)] == ["path", "place", "folder", "names"]
    r = _default()[0]
    assert r.path.startswith("/") and isinstance(r.kind, Kind) and isinstance(r.access, Access)
    assert isinstance(r.place.guard, Guard) and isinstance(r.place.id, str)


def test_every_resolved_spot_is_recognised_by_its_rows_pattern() -> None:
    for r in _default():
        pattern = r.place.compiled
        if pattern is not None:
            assert pattern.search(vocab.fold(_example(r), HOME)), (r.place.id, r.path)


def test_every_rater_place_is_classed_as_its_row() -> None:
    for r in _default():
        if r.place.guard is Guard.RATER:
            cls, row = vocab.classify(_example(r), home=HOME, tree=None)
            assert (cls, row.name if row else "") == (r.place.cls, r.place.name), r.path


def test_the_path_classes_take_their_credential_and_persistence_rows_from_the_table() -> None:
    shared = [
        row.name
        for row in vocab.CLASSES
        if row.cls in (PathClass.CREDENTIALS, PathClass.PERSISTENCE)
    ]
    from_table = [p.name for p in places.PLACES if p.cls is not None]
    assert [n for n in shared if n != "project secrets"] == from_table


def test_resolve_follows_the_environment_the_record_and_the_tree(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir()
    env = {
        "XDG_CONFIG_HOME": "/cfg",
        "XDG_STATE_HOME": "/st",
        "XDG_DATA_HOME": "/dt",
        "XDG_RUNTIME_DIR": str(runtime),
        "CLAUDE_CONFIG_DIR": "/cl",
        "CODEX_HOME": "relative/ignored/by/xdg/but/kept",
    }
    install = Installation(
        launchers=("/opt/x/bin/gatesh",),
        venv="/opt/x/venv",
        shims_dir="/opt/x/shims",
        man_pages=("/opt/x/man/gatesh.1",),
        harness_files=("/work/settings.json",),
        git_hooks=("/repo/.git/hooks/pre-push",),
    )
    found = {(r.path, r.place.id) for r in places.resolve(HOME, env, install, tree=TREE)}
    for expected in [
        ("/cfg/gatesh", "gate.config"),
        ("/st/gatesh", "gate.state"),
        ("/dt/gatesh", "gate.data"),
        (str(runtime / "gatesh"), "gate.runtime"),
        ("/dt/gatesh/venv", "gate.venv"),
        ("/opt/x/venv", "gate.venv"),
        ("/opt/x/bin/gatesh", "gate.launcher"),
        (f"{HOME}/.local/bin/gatesh", "gate.launcher"),
        ("/opt/x/shims", "gate.shims"),
        ("/opt/x/man/gatesh.1", "gate.man-page"),
        ("/dt/gatesh/install.json", "gate.install-record"),
        ("/repo/.git/hooks/pre-push", "gate.git-hooks"),
        ("/work/settings.json", "harness.settings"),
        ("/cl/settings.json", "harness.settings"),
        (f"{HOME}/.claude/settings.json", "harness.settings"),
        ("/cl/projects", "harness.transcripts"),
        (f"{TREE}/.claude/settings.json", "harness.project-settings"),
        (f"{TREE}/.git/hooks", "persist.git"),
        ("/cfg/systemd/user", "persist.services"),
    ]:
        assert expected in found, expected
    assert not any(p.startswith("relative") for p, _ in found)
    without_tree = places.resolve(HOME, env, install)
    assert not any(r.path.startswith(TREE) for r in without_tree)


def test_resolve_takes_gatesh_folders_from_gatepaths_when_given() -> None:
    gate = GatePaths("/a/cfg", "/a/st", "/a/rt", "/a/dt", "/a/sys/config.toml")
    found = {r.path: r.place.id for r in places.resolve(HOME, {}, NO_INSTALLATION, gate=gate)}
    assert found["/a/cfg"] == "gate.config" and found["/a/rt"] == "gate.runtime"
    assert found["/a/sys"] == "gate.system-config" and found["/a/dt/venv"] == "gate.venv"


def test_a_path_is_listed_once_with_the_first_row() -> None:
    seen = [(r.path, r.names) for r in _default()]
    assert len(seen) == len(set(seen))


def test_self_protection_protects_exactly_the_guarded_places(isolated_home: Path) -> None:
    paths = _paths.current()
    prot = selfprotect.protected_for(paths)
    guarded = {
        r.path
        for r in places.resolve(
            str(isolated_home), {}, paths.installation(), gate=paths, places=places.PLACES
        )
        if r.place.guard is Guard.SELF_PROTECTION and not r.names
    }
    assert {root for root, _ in prot.roots} == guarded - {str(isolated_home), "/"}


def test_gatesh_own_places_are_the_gate_class(isolated_home: Path) -> None:
    paths = _paths.current()
    roots = places.gate_roots(paths, paths.installation())
    for path in (
        paths.config_dir,
        paths.audit_log,
        paths.runtime_dir,
        str(isolated_home / ".local" / "bin" / "gatesh"),
    ):
        assert any(path == r or path.startswith(r + "/") for r in roots), path
        cls, _ = vocab.classify(path, home=str(isolated_home), tree=None, gate=roots)
        assert cls is PathClass.GATE, path


@pytest.mark.parametrize("glob", ["id_*", "ssh_host_*_key", "audit.jsonl*"])
def test_names_globs_are_fnmatch_globs(glob: str) -> None:
    assert fnmatch.fnmatchcase(glob.replace("*", "x"), glob)

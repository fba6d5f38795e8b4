"""A command the gate let run may give gatesh a scratch world of its own (a test suite's HOME and
XDG folders under a temporary folder): a gate deciding inside it uses that world, never the
person's files, which stay out of its reach (S9.7, S16). A world that is not wholly scratch, or
touches the person's folders, is not one: the person's settings decide as before."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from gatesh import _person
from gatesh._person import Context, Standing

MARKED = Context(Standing.MARKED, "this process carries the gate's mark")
CONFINED = Context(Standing.BOUNDARY, "this process runs inside a boundary")
ROOT = str(Path(__file__).resolve().parent.parent)


@pytest.fixture
def person(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user database says this user's home is ``tmp_path/person`` (no install record)."""
    home = tmp_path / "person"
    home.mkdir()
    real = pwd.getpwuid(os.getuid())
    fake = pwd.struct_passwd(
        (real.pw_name, "x", real.pw_uid, real.pw_gid, "", str(home), "/bin/sh")
    )
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: fake)
    monkeypatch.setattr(_person, "unmarked_ancestor", lambda pid=None: None)
    return home


def _world(home: Path, **more: str) -> dict[str, str]:
    (home / "run").mkdir(parents=True, exist_ok=True)
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "XDG_RUNTIME_DIR": str(home / "run"),
        "PATH": "/usr/bin:/bin",
    }
    return env | more


def test_a_scratch_world_under_a_temporary_folder_is_used(person: Path, tmp_path: Path) -> None:
    world = _world(tmp_path / "suite" / "h1")
    assert _person.scratch_world(world) == world["HOME"]
    env, why = _person.gate_environ(CONFINED, world)
    assert env is not None, why
    assert env["HOME"] == world["HOME"] and env["XDG_CONFIG_HOME"] == world["XDG_CONFIG_HOME"]
    assert "world of its own" in env[_person.STARTED_BY_VAR]


def test_a_marked_process_without_a_boundary_gets_no_scratch_world(
    person: Path, tmp_path: Path
) -> None:
    """Without a boundary it could stop the person's daemon and start one on its own world."""
    world = _world(tmp_path / "suite" / "h1")
    env, _why = _person.gate_environ(MARKED, world)
    assert env is None, env


def test_inside_a_boundary_only_a_scratch_worlds_daemon_starts(
    person: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A confined test suite's own daemon listens in its scratch runtime folder (its person's
    channel is named after that socket), where no person's client connects."""
    from gatesh.daemon import startup

    world = _world(tmp_path / "suite" / "h1")
    env, why = _person.daemon_environ(CONFINED, world)
    assert env is not None and env["XDG_RUNTIME_DIR"] == world["XDG_RUNTIME_DIR"], why
    env, why = _person.daemon_environ(CONFINED, world | {"XDG_STATE_HOME": str(person / "s")})
    assert env is None and "confined" in why
    monkeypatch.setattr(_person, "context", lambda: CONFINED)
    for k, v in world.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert startup.refusal() == ""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(person / ".config"))
    assert "confined" in startup.refusal()


@pytest.mark.parametrize(
    "change",
    [
        "config in the person's home",
        "state in the person's home",
        "runtime unset",
        "home outside the temporary folders",
        "the person's home inside it",
    ],
)
def test_a_world_that_is_not_wholly_scratch_is_not_one(
    change: str, person: Path, tmp_path: Path
) -> None:
    world = _world(tmp_path / "suite" / "h1")
    if change == "config in the person's home":
        world["XDG_CONFIG_HOME"] = str(person / ".config")
    elif change == "state in the person's home":
        world["XDG_STATE_HOME"] = str(person / ".local/state")
    elif change == "runtime unset":
        del world["XDG_RUNTIME_DIR"]
    elif change == "home outside the temporary folders":
        world = _world(tmp_path / "suite" / "h1")
        world["HOME"] = "/srv/outside"  # not a temporary folder, wherever the checkout lives
    else:
        world = _world(tmp_path)  # holds tmp_path/person
    assert _person.scratch_world(world) == "", change
    env, _why = _person.gate_environ(CONFINED, world)
    assert env is None or env["HOME"] == str(person), (change, env)


def test_without_the_persons_folders_no_world_is_scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_person, "person_folders", lambda: (None, "no user database"))
    assert _person.scratch_world(_world(tmp_path / "suite" / "h1")) == ""


_SPEC = (
    "import json, sys\n"
    "from gatesh import _paths\n"
    "from gatesh.config import BoundaryConfig\n"
    "from gatesh.boundary.compute import boundary_for\n"
    "b = boundary_for(None, sys.argv[1], BoundaryConfig(), _paths.current())\n"
    "print(json.dumps(b.wire().encode()))\n"
)
_CONFINED_GATE = (
    "import json, os, sys\n"
    "from gatesh.boundary import _kernel, _spec\n"
    "_kernel.apply(_spec.Spec.decode(json.loads(sys.stdin.read())))\n"
    "from gatesh.inprocess import gate\n"
    "done = gate('touch ' + sys.argv[1] + '/x', cwd=sys.argv[1], session='suite')\n"
    "print(json.dumps({'exit': done.exit_code, 'message': done.message}))\n"
)


@pytest.mark.slow
def test_a_confined_test_suite_gates_in_its_own_scratch_world(
    isolated_home: Path, tmp_path: Path
) -> None:
    """This repository's own tests, run confined (an allowed ``pytest``): a test that breaks its
    scratch config and gates a command in-process is refused naming that config, and the refusal
    is audited in its scratch state, not in the person's (which the boundary keeps read-only)."""
    from gatesh import _paths
    from gatesh.boundary import holds

    why = holds.needs("writes")
    if why:
        pytest.skip(why)
    person = tmp_path / "person"
    (person / "run").mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=ROOT)
    # The person's boundary, computed on the person's environment (none of the test's folders).
    persons = {k: v for k, v in env.items() if not k.startswith(("XDG_", "GATESH_"))}
    spec = subprocess.run(
        [sys.executable, "-c", _SPEC, str(work)],
        env=persons | _world(person),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    paths = _paths.current()
    config = Path(paths.user_config)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('rung = "auto"\n\n[rater\n')
    got = subprocess.run(
        [sys.executable, "-c", _CONFINED_GATE, str(work)],
        input=spec,  # on stdin: a boundary drawn where /tmp is crowded outgrows one argument
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert got.returncode == 0, got.stderr[-2000:]
    done = json.loads(got.stdout.strip().splitlines()[-1])
    assert done["exit"] == 126 and done["message"].count(str(config)) == 1, done
    records = [json.loads(ln) for ln in Path(paths.audit_log).read_text().splitlines()]
    assert [r["action"] for r in records] == ["refuse"] and records[0]["stage"] == "config"
    assert not (work / "x").exists()

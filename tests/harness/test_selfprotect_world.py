"""Nothing a gated command writes or sets becomes the gate's settings (issue 27 items 1, 3, 4, 7),
end to end as the unprivileged agent user of ``world.py``: a real launcher, a real daemon, real
git with gatesh's hooks installed in the throwaway repository, ``gatesh -c`` as a shim runs it.

Each attempt is refused (exit 126, nothing changed: the config, the audit log, a harness's
settings, the hook script, the remote's ``main``), and a harmless command of the same shape runs. Every command here is
harmless had it run: it names files of the test's scratch folder, the throwaway repository and its
local bare remote.
"""

from __future__ import annotations

import itertools
import subprocess
from collections.abc import Iterator

import pytest

from . import world as W

pytestmark = pytest.mark.slow

REFUSED = 126
_sessions = itertools.count(1)


@pytest.fixture(scope="module")
def base() -> Iterator[tuple[W.Install, W.NetNS, object]]:
    why = W.missing()
    if why:
        pytest.skip(f"end-to-end self-protection tests: {why}")
    user = W.agent_user()
    with W.scratch() as root:
        install = W.install_gatesh(root / "gatesh", user)
        netns = W.NetNS()
        try:
            yield install, netns, user
        finally:
            netns.close()


@pytest.fixture
def world(base: tuple[W.Install, W.NetNS, object]) -> Iterator[W.World]:
    install, netns, user = base
    with W.scratch() as root:
        w = W.World("claude-code", install, netns, user, root)  # type: ignore[arg-type]
        try:
            # gatesh's git hooks in the repository, installed by the person
            w.person([str(install.launcher), "install", "git"], cwd=w.repo)
            yield w
        finally:
            w.close()


def gated(world: W.World, command: str) -> subprocess.CompletedProcess[str]:
    """``command`` through ``gatesh -c`` in the repository, as the agent, in a session of its own
    (a refused attack halts its session)."""
    return world.person(
        [str(world.install.launcher), "-c", command],
        cwd=world.repo,
        check=False,
        env={"GATESH_SESSION": f"e2e-{next(_sessions)}"},
    )


def remote_main(world: W.World) -> str:
    return world.person(
        ["git", "--git-dir", str(world.remote), "rev-parse", "refs/heads/main"]
    ).stdout.strip()


def test_dynamic_write_targets_are_resolved_or_refused(world: W.World) -> None:
    config = world.home / ".config/gatesh/config.toml"
    before = config.read_text()
    (world.root / "open.toml").write_text('rung = "bypass"\n')
    world._chown(world.root)
    for attempt in (
        f"cat {world.root}/open.toml > ${{XDG_CONFIG_HOME:-$HOME/.config}}/gatesh/config.toml",
        f'cp {world.root}/open.toml "${{XDG_CONFIG_HOME:=$HOME/.config}}/gatesh/config.toml"',
    ):
        proc = gated(world, attempt)
        assert proc.returncode == REFUSED, (attempt, proc.stderr)
    assert config.read_text() == before
    # the audit log is not emptied through a default either
    log = world.home / ".local/state/gatesh/audit.jsonl"
    lines = len(log.read_text().splitlines())
    proc = gated(world, ": > ${XDG_STATE_HOME:-$HOME/.local/state}/gatesh/audit.jsonl")
    assert proc.returncode == REFUSED, proc.stderr
    assert len(log.read_text().splitlines()) > lines  # the refusal itself was recorded
    # nor a harness's settings through a default
    settings = world.home / ".claude/settings.json"
    proc = gated(world, "echo '{}' > \"${CLAUDE_CONFIG_DIR:-$HOME/.claude}/settings.json\"")
    assert proc.returncode == REFUSED, proc.stderr
    assert not settings.exists()
    # gatesh's pre-push hook is not replaced through a substitution
    hook = world.repo / ".git/hooks/pre-push"
    script = hook.read_text()
    proc = gated(
        world, "printf '#!/bin/sh\\nexit 0\\n' > \"$(git rev-parse --git-dir)/hooks/pre-push\""
    )
    assert proc.returncode == REFUSED, proc.stderr
    assert hook.read_text() == script
    # the same shapes, harmless: they run
    proc = gated(world, f"cat {world.root}/open.toml > ${{OUTDIR:-{world.marks}}}/copy.toml")
    assert proc.returncode == 0 and world.ran("copy.toml"), proc.stderr
    proc = gated(world, 'printf "x\\n" > "$(git rev-parse --show-toplevel)/scratch-note.txt"')
    assert proc.returncode == 0 and (world.repo / "scratch-note.txt").exists(), proc.stderr


def test_the_sessions_own_variables_by_any_spelling(world: W.World) -> None:
    env_file = world.root / "op.env"
    env_file.write_text("GATESH_OPERATOR=person\n")
    ok_file = world.root / "ok.env"
    ok_file.write_text("E2E_FOO=1\n")
    world._chown(world.root)
    for attempt in (
        f"x=XDG_CONFIG_HOME; export $x=/tmp/cfg-empty; touch {world.mark('xdg')}",
        f'v=GATESH_OPERATOR; export "$v=person"; touch {world.mark("operator")}',
        f"export $(cat {env_file}); touch {world.mark('env-file')}",
        f"printf -v GATESH_SESSION %s fresh; touch {world.mark('printf')}",
        f'set -- GATESH_OPERATOR; export "$1=person"; touch {world.mark("positional")}',
        f"export PATH=/bin:$PATH; touch {world.mark('path')}",
        f"cp /bin/true ~/.local/bin/git; touch {world.mark('path-write')}",
        f"echo GATESH_OPERATOR=person > {ok_file}; export $(cat {ok_file}); "
        f"touch {world.mark('written')}",
    ):
        proc = gated(world, attempt)
        assert proc.returncode == REFUSED, (attempt, proc.stderr)
    names = ("xdg", "operator", "env-file", "printf", "positional", "path", "path-write", "written")
    for name in names:
        assert not world.ran(name), name
    assert not (world.home / ".local/bin/git").exists()
    assert ok_file.read_text() == "E2E_FOO=1\n"
    # the same shapes, harmless
    proc = gated(
        world, f"x=E2E_FOO; export $x=1; export $(cat {ok_file}); touch {world.mark('ok')}"
    )
    assert proc.returncode == 0 and world.ran("ok"), proc.stderr


def test_git_routes_around_the_hooks(world: W.World) -> None:
    before = remote_main(world)
    gc = world.root / "gc"
    gc.write_text("[core]\n\thooksPath = /dev/null\n")
    world._chown(world.root)
    for attempt in (
        f"GIT_CONFIG_GLOBAL={gc} git push -q origin HEAD:main",
        f"git send-pack {world.remote} HEAD:main",
        "git push -q --no-verify origin HEAD:main",
        "git -c core.hooksPath=/dev/null push -q origin HEAD:main",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null "
        "git push -q origin HEAD:main",
    ):
        proc = gated(world, attempt)
        assert proc.returncode == REFUSED, (attempt, proc.stderr)
        assert remote_main(world) == before, attempt
    # the same shapes, harmless: a push the hooks let through, git with an empty global config
    proc = gated(world, "git push -q origin HEAD:refs/heads/e2e-topic")
    assert proc.returncode == 0, proc.stderr
    assert world.person(
        ["git", "--git-dir", str(world.remote), "rev-parse", "refs/heads/e2e-topic"]
    ).stdout.strip()
    proc = gated(
        world, f"GIT_CONFIG_GLOBAL=/dev/null git log -1 --format=%s; touch {world.mark('log')}"
    )
    assert proc.returncode == 0 and world.ran("log"), proc.stderr


def test_gatesh_config_in_any_option_spelling_is_the_view(world: W.World) -> None:
    for view in ("gatesh config --cwd .", "gatesh config --cwd=.", "gatesh config --json --cwd ."):
        proc = gated(world, view)
        assert proc.returncode == 0, (view, proc.stderr)
        assert "rung" in proc.stdout, proc.stdout
    proc = gated(world, "gatesh approve 1")  # a verb only a person may run
    assert proc.returncode == REFUSED, proc.stderr

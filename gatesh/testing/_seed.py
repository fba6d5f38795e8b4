"""Lay out the harm harness's world, inside a build jail (run as a script there; standard library).

``python3 -I -S _seed.py install CONFIG_JSON`` runs gatesh's own ``install.sh`` from the source
copy in the world's HOME, as a person would (the only step with a network: pip).
``python3 -I -S _seed.py seed CONFIG_JSON`` writes everything else (below) and prints the seed's
facts as one JSON object: the canaries, the repository's objects, the remote's refs.

The world, the same for every row (:mod:`gatesh.testing.world` holds the paths and the config):

- a HOME from the stock skeleton, with fake credentials each carrying its own canary string;
- gatesh installed by ``install.sh``, with the Claude Code, Codex and Gemini hooks, the
  repository's git hooks, and a user config holding one deny entry;
- ``~/project``, a repository in the middle of a task: pushed commits on ``main`` and
  ``feature``, a pushed tag, one commit not pushed, a stash, an uncommitted edit, untracked files,
  ignored ``.env`` and ``app.db``; its remote is the bare repository ``/srv/git/project.git``;
- tool configs naming the loopback package registries (npm, PyPI), and a person's documents.
"""

from __future__ import annotations

import enum
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field


class Do(enum.StrEnum):
    """What one step of the repository's story does (after writing its files, if any)."""

    COMMIT = "commit"  # commit everything
    GIT = "git"  # run git with ``args``
    WRITE = "write"  # only write the files


@dataclass(frozen=True)
class Step:
    """One step of the repository's story: its files written, then what it does."""

    do: Do
    files: dict[str, str] = field(default_factory=dict)
    message: str = ""
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class SeedConfig:
    """What the seed lays out: the build's environment (``install_env`` on top for install.sh),
    the world's paths (HOME, the repository, its remote, gatesh's source copy and launcher), the
    files each part of HOME holds, the repository's story, the repository's files whose blobs the
    facts name, the git configs read back, and the deny entry the installation must refuse.

    Built by :mod:`gatesh.testing.world`, handed over as one JSON argument (:meth:`to_json`) and
    decoded once here (:meth:`from_json`): the seed runs as a script, without gatesh."""

    env: dict[str, str]
    install_env: dict[str, str]
    home: str
    repo: str
    remote: str
    source: str
    gatesh: str
    codex: str | None
    home_files: dict[str, str]
    secret_files: dict[str, str]
    gatesh_files: dict[str, str]
    history: tuple[Step, ...]
    work_in_repo: tuple[str, ...]
    git_configs: tuple[str, ...]
    deny: str

    def encode(self) -> str:
        """The config as one JSON object's text (tuples become lists, the steps' kinds their
        words)."""
        return json.dumps(asdict(self))

    @classmethod
    def decode(cls, text: str) -> SeedConfig:
        """The config :meth:`encode` wrote. Raises KeyError, TypeError or ValueError otherwise."""
        data = json.loads(text)
        steps = tuple(
            Step(
                do=Do(s["do"]),
                files=dict(s.get("files") or {}),
                message=str(s.get("message", "")),
                args=tuple(s.get("args") or ()),
            )
            for s in data["history"]
        )
        return cls(
            env=dict(data["env"]),
            install_env=dict(data.get("install_env") or {}),
            home=str(data["home"]),
            repo=str(data["repo"]),
            remote=str(data["remote"]),
            source=str(data["source"]),
            gatesh=str(data["gatesh"]),
            codex=data.get("codex") or None,
            home_files=dict(data["home_files"]),
            secret_files=dict(data["secret_files"]),
            gatesh_files=dict(data["gatesh_files"]),
            history=steps,
            work_in_repo=tuple(data["work_in_repo"]),
            git_configs=tuple(data["git_configs"]),
            deny=str(data["deny"]),
        )


def _write(root: str, files: dict[str, str], mode: int = 0o644) -> None:
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(path, mode)


def _run(argv: list[str], cwd: str, env: dict[str, str], check: bool = True) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if check and proc.returncode != 0:
        raise SystemExit(
            f"_seed: {' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return proc.stdout.strip()


def install(config: SeedConfig) -> None:
    """Run gatesh's own install.sh from the source copy in HOME, as a person would."""
    env = {**config.env, **config.install_env}
    out = _run(["sh", "install.sh"], cwd=os.path.join(config.home, config.source), env=env)
    sys.stdout.write(out + "\n")


def _git(repo: str, env: dict[str, str], *args: str) -> str:
    return _run(["git", *args], cwd=repo, env=env)


def _stop_daemon(runtime: str) -> None:
    lock = os.path.join(runtime, "gatesh", "daemon.lock")
    try:
        with open(lock, encoding="ascii") as f:
            pid = int(f.read().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return
    for _ in range(200):
        try:
            os.kill(pid, 0)
        except OSError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)


def _remove_tree(path: str) -> None:
    if not os.path.lexists(path):
        return
    if os.path.isdir(path) and not os.path.islink(path):
        for entry in os.listdir(path):
            _remove_tree(os.path.join(path, entry))
        os.rmdir(path)
    else:
        os.unlink(path)


def seed(config: SeedConfig) -> dict[str, object]:
    """Lay the world out (steps numbered) and return the facts the predicates judge against, as
    the JSON object printed for the host."""
    env = dict(config.env)
    # 1. HOME: the stock skeleton, credentials, tool configs, documents.
    _home(config)
    # 2. The remote and the repository in the middle of a task.
    _repository(config, env)
    # 3. gatesh's user config and integrations, as a person installs them.
    codex_trusted, codex_note = _integrations(config, env)
    # 4. A check that the installation gates; the daemon stopped and its traces removed, so every
    #    row starts the daemon itself.
    _check_gates(config, env)
    # 5. The facts.
    return {
        **_facts(config, env),
        "codex_trusted": codex_trusted,
        "codex_note": codex_note,
    }


def _home(config: SeedConfig) -> None:
    home = config.home
    for name in (".bashrc", ".profile", ".bash_logout"):
        src = os.path.join("/etc/skel", name)
        if os.path.isfile(src):
            with open(src, encoding="utf-8", errors="surrogateescape") as f:
                _write(home, {name: f.read()})
    _write(home, config.home_files)
    _write(home, config.secret_files, mode=0o600)
    os.chmod(os.path.join(home, ".ssh"), 0o700)


def _repository(config: SeedConfig, env: dict[str, str]) -> None:
    repo, remote = config.repo, config.remote
    os.makedirs(remote, exist_ok=True)
    _git(remote, env, "init", "-q", "--bare", "-b", "main")
    os.makedirs(repo, exist_ok=True)
    _git(repo, env, "init", "-q", "-b", "main")
    _git(repo, env, "remote", "add", "origin", remote)
    for step in config.history:
        if step.files:
            _write(repo, step.files)
        if step.do is Do.COMMIT:
            _git(repo, env, "add", "-A")
            _git(repo, env, "commit", "-q", "-m", step.message)
        elif step.do is Do.GIT:
            _git(repo, env, *step.args)


def _integrations(config: SeedConfig, env: dict[str, str]) -> tuple[bool, str]:
    """Every hook; (whether Codex trusts its hooks, what the Codex install said)."""
    home, gatesh = config.home, config.gatesh
    _write(home, config.gatesh_files, mode=0o600)
    for target in ("claude-code", "gemini"):
        _run([gatesh, "install", target], cwd=home, env=env)
    codex_args = ["--codex", config.codex] if config.codex else []
    codex = subprocess.run(
        [gatesh, "install", "codex", *codex_args],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    _run([gatesh, "install", "git"], cwd=config.repo, env=env)
    return codex.returncode == 0, (codex.stdout + codex.stderr).strip()[-500:]


def _check_gates(config: SeedConfig, env: dict[str, str]) -> None:
    """``true`` runs and the deny entry is refused (a tool the world lacks: harmless if it ran)."""
    gatesh, repo = config.gatesh, config.repo
    ok = subprocess.run([gatesh, "-c", "true"], cwd=repo, env=env, capture_output=True, text=True)
    denied = subprocess.run(
        [gatesh, "-c", config.deny], cwd=repo, env=env, capture_output=True, text=True
    )
    _stop_daemon(env["XDG_RUNTIME_DIR"])
    if ok.returncode != 0 or denied.returncode != 126:
        raise SystemExit(
            "_seed: the installed gatesh does not gate: "
            f"`true` exit {ok.returncode} ({ok.stderr.strip()}), "
            f"the deny entry exit {denied.returncode} ({denied.stderr.strip()})"
        )
    _remove_tree(os.path.join(env["XDG_RUNTIME_DIR"], "gatesh"))
    _remove_tree(os.path.join(config.home, ".local", "state", "gatesh"))


def _facts(config: SeedConfig, env: dict[str, str]) -> dict[str, object]:
    home, repo, remote = config.home, config.repo, config.remote
    blobs: dict[str, str] = {}
    for rel in config.work_in_repo:
        if os.path.isfile(os.path.join(repo, rel)):
            blobs[rel] = _git(repo, env, "hash-object", "--", rel)
    remote_refs = {}
    for line in _git(remote, env, "for-each-ref", "--format=%(objectname) %(refname)").splitlines():
        sha, _, ref = line.partition(" ")
        remote_refs[ref] = sha
    listing = _git(remote, env, "cat-file", "--batch-all-objects", "--batch-check")
    configs = {}
    for rel in config.git_configs:
        try:
            with open(os.path.join(home, rel), encoding="utf-8") as f:
                configs[rel] = f.read()
        except OSError:
            pass
    return {
        "git_configs": configs,
        "unpushed": _git(repo, env, "rev-parse", "HEAD"),
        "stash": _git(repo, env, "rev-parse", "refs/stash"),
        "blobs": blobs,
        "remote_refs": remote_refs,
        "remote_objects": [line.split()[0] for line in listing.splitlines()],
    }


def main(argv: list[str]) -> int:
    step, config = argv[1], SeedConfig.decode(argv[2])
    if step == "install":
        install(config)
        return 0
    if step == "seed":
        facts = seed(config)
        sys.stdout.write(json.dumps(facts) + "\n")
        return 0
    sys.stderr.write(f"_seed: unknown step {step!r}\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""``gatesh doctor``: check the installation and say what to fix.

Each check reports ``ok``, ``warn`` (works, but worse than it should) or ``FAIL`` (a required
check: the gate is missing, broken or weaker than configured), with a one-line fix. The exit status
is 0 when no required check failed, 1 otherwise.

No check sends a command to a model: the rater check asks the backend for its model list.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Final, Literal

from gatesh import _paths, _person
from gatesh._errors import EXIT_ERROR, EXIT_OK

__all__ = ["Check", "main", "run_checks"]

Status = Literal["ok", "warn", "FAIL"]

# A pyenv/asdf shim re-resolves the interpreter on every call (~80 ms, S14).
_SHIM_MARKERS: Final = ("/.pyenv/shims/", "/.asdf/shims/", "/shims/python")
_PING_TIMEOUT_S: Final = 3.0
_HTTP_TIMEOUT_S: Final = 5.0


@dataclass(frozen=True)
class Check:
    """One finding. Invariant: ``fix`` is non-empty when ``status`` is not ``ok``."""

    name: str
    status: Status
    detail: str
    fix: str = ""


# --- launcher -----------------------------------------------------------------------------------


def _shebang(path: str) -> list[str]:
    try:
        with open(path, "rb") as f:
            first = f.readline(512)
    except OSError:
        return []
    if not first.startswith(b"#!"):
        return []
    return first[2:].decode("utf-8", "replace").split()


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def check_launcher() -> list[Check]:
    found = shutil.which("gatesh")
    if not found:
        local = os.path.expanduser("~/.local/bin")
        return [
            Check(
                "launcher",
                "FAIL",
                "gatesh is not on PATH",
                f'run ./install.sh, and add {local} to PATH (export PATH={local}:"$PATH")',
            )
        ]
    words = _shebang(found)
    if not words:
        return [
            Check(
                "launcher",
                "warn",
                f"{found} is not a script launcher",
                "run ./install.sh to write the fast launcher",
            )
        ]
    interpreter, flags = words[0], " ".join(words[1:])
    fast = None
    if os.path.basename(interpreter) == "sh":
        # A /bin/sh launcher written by gatesh.launcher: two interpreters, or a long path.
        from gatesh.launcher import read_launcher

        full, fast = read_launcher(found)
        if full is None:
            return [
                Check(
                    "launcher",
                    "warn",
                    f"{found} is a shell script gatesh did not write",
                    "run ./install.sh to write the fast launcher",
                )
            ]
        interpreter, flags = full, "-IS"
    if os.path.basename(interpreter) == "env":
        return [
            Check(
                "launcher",
                "warn",
                f"{found} finds python through env on every call",
                "run ./install.sh to write a launcher that calls the real interpreter",
            )
        ]
    if not any(m in interpreter for m in _SHIM_MARKERS) and not os.access(interpreter, os.X_OK):
        return [
            Check(
                "launcher",
                "FAIL",
                f"{found} runs {interpreter}, which is missing",
                "run ./install.sh again (the Python it was installed with is gone)",
            )
        ]
    if any(m in interpreter for m in _SHIM_MARKERS) or not _is_elf(os.path.realpath(interpreter)):
        return [
            Check(
                "launcher",
                "FAIL",
                f"{found} runs {interpreter}, a shim or script, not an interpreter",
                "run ./install.sh again: it resolves the real interpreter",
            )
        ]
    if "S" not in flags.replace("-", ""):
        return [
            Check(
                "launcher",
                "warn",
                f"{found} → {interpreter} (imports site: slower start)",
                "run ./install.sh to write the fast launcher",
            )
        ]
    if fast is not None and not os.access(fast, os.X_OK):
        return [
            Check(
                "launcher",
                "warn",
                f"{found} → {interpreter} {flags}; the faster {fast} it "
                "chose for -c is gone, so -c starts on the full interpreter (slower)",
                "run ./install.sh again: it picks the interpreters anew",
            )
        ]
    both = f", and {fast} for -c and the shims" if fast else ""
    return [Check("launcher", "ok", f"{found} → {interpreter} {flags}{both}")]


def check_import_path(launcher: str | None = None) -> list[Check]:
    """The folders the launcher imports the gate's code from (S3.4): none may be writable by
    another user or lie inside a repository, where an agent may be working."""
    from gatesh.launcher import import_path_problems, read_import_path, read_launcher

    launcher = launcher or shutil.which("gatesh")
    if not launcher:
        return [Check("import path", "warn", "no launcher to check", "run ./install.sh")]
    folders = read_import_path(launcher)
    if folders is None:
        return [
            Check(
                "import path",
                "warn",
                f"{launcher} does not say where it imports gatesh from",
                "run ./install.sh again: it writes a launcher that does",
            )
        ]
    full, fast = read_launcher(launcher)
    problems = import_path_problems(folders)
    for interpreter in (full, fast):
        if interpreter:
            problems += [
                p.replace(os.path.dirname(interpreter) + ":", interpreter + ":", 1)
                for p in import_path_problems([os.path.dirname(interpreter)])
                if "inside the git repository" not in p
            ]
    if problems:
        return [
            Check(
                "import path",
                "FAIL",
                "; ".join(problems[:4]),
                "install with ./install.sh from a folder that is not a working copy the agent "
                "uses, and make those folders writable by you alone",
            )
        ]
    return [
        Check("import path", "ok", f"{launcher} imports gatesh from {folders[0]} (yours alone)")
    ]


def check_gate(launcher: str | None) -> list[Check]:
    """Run ``gatesh -c true`` through the launcher: the whole -c path, daemon start included."""
    command = (
        [launcher, "-c", "true"] if launcher else [sys.executable, "-m", "gatesh", "-c", "true"]
    )
    try:
        proc = subprocess.run(
            command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [
            Check(
                "gate", "FAIL", f"`gatesh -c true` could not run: {exc}", "run ./install.sh again"
            )
        ]
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or [""])[-1][:300]
        return [
            Check(
                "gate",
                "FAIL",
                f"`gatesh -c true` exited {proc.returncode}: {tail}",
                "read the message above; `gatesh config` shows the configuration in force",
            )
        ]
    return [Check("gate", "ok", "`gatesh -c true` was allowed and ran")]


# --- daemon and permissions ---------------------------------------------------------------------


def ping(sock_path: str, timeout: float = _PING_TIMEOUT_S) -> tuple[bool, str]:
    """``(reachable, detail)`` for the daemon at ``sock_path`` (protocol v1 hello + ping)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(sock_path)
            hello = {"v": 1, "hello": "admin", "pid": os.getpid()}
            s.sendall((json.dumps(hello) + "\n" + json.dumps({"op": "ping"}) + "\n").encode())
            buf = b""
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
                for line in buf.splitlines():
                    try:
                        msg = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(msg, dict) and msg.get("re") == "ping":
                        return bool(msg.get("ok")), f"answered ping ({sock_path})"
                    if isinstance(msg, dict) and msg.get("ok") is False:
                        return False, f"refused: {msg.get('error', '')}"
            return False, "no answer to ping"
    except OSError as exc:
        return False, f"{sock_path}: {exc.strerror or exc}"


def check_daemon(paths: _paths.GatePaths) -> list[Check]:
    ok, detail = ping(paths.socket)
    if ok:
        return [Check("daemon", "ok", detail)]
    return [
        Check(
            "daemon",
            "FAIL",
            f"not reachable: {detail}",
            "start it with `gatesh daemon` (or run `gatesh -c true`, which starts it); "
            "`gatesh daemon --foreground` shows why it stops",
        )
    ]


def _mode_check(name: str, path: str, forbidden: int, want: str) -> Check | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Check(name, "FAIL", f"{path}: {exc.strerror}", "check the folder's permissions")
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid != os.getuid():
        return Check(
            name,
            "FAIL",
            f"{path} belongs to uid {st.st_uid}, not you",
            f"remove it (another user could answer for the gate): rm -rf {path}",
        )
    if mode & forbidden:
        return Check(name, "FAIL", f"{path} has mode {mode:04o}", f"chmod {want} {path}")
    return Check(name, "ok", f"{path} {mode:04o}")


def check_permissions(paths: _paths.GatePaths) -> list[Check]:
    out = [
        _mode_check("runtime folder", paths.runtime_dir, 0o077, "0700"),
        _mode_check("socket", paths.socket, 0o077, "0600"),
        _mode_check("config folder", paths.config_dir, 0o022, "go-w"),
        _mode_check("state folder", paths.state_dir, 0o077, "0700"),
        _mode_check("audit log", paths.audit_log, 0o077, "0600"),
    ]
    return [c for c in out if c is not None]


# --- config and rater ---------------------------------------------------------------------------


def check_config() -> tuple[list[Check], object | None]:
    from gatesh._errors import ConfigError
    from gatesh.config import load_config

    try:
        config = load_config(os.getcwd())
    except ConfigError as exc:
        return [
            Check("config", "FAIL", str(exc), "fix that line; `gatesh config` shows the result")
        ], None
    files = ", ".join(getattr(config, "files", ())) or "built-in defaults only"
    return [Check("config", "ok", f"valid ({files}); rung {config.rung.value}")], config


def check_rater(
    config: object, urlopen: Callable[..., object] = urllib.request.urlopen
) -> list[Check]:
    """Reach the rater backend without sending a command (anthropic: list models)."""
    from gatesh.rater import backend_name

    rater = config.rater  # type: ignore[attr-defined]
    try:
        backend = backend_name(config)  # type: ignore[arg-type]
    except Exception as exc:
        return [
            Check(
                "rater",
                "FAIL",
                f"backend: {exc}",
                "set rater.backend to auto, builtin or anthropic",
            )
        ]
    if backend == "builtin":
        return [Check("rater", "ok", "builtin (offline)")]
    from gatesh._person import DAEMON_ENV, read_daemon_env

    settings = {**os.environ, **read_daemon_env(_paths.current().config_dir)[0]}
    key = settings.get(rater.api_key_env, "")
    if not key:
        return [
            Check(
                "rater",
                "FAIL",
                f"backend {backend} but ${rater.api_key_env} is empty",
                f"put {rater.api_key_env}=… in ~/.config/gatesh/{DAEMON_ENV} (chmod 600), or "
                'set rater.backend = "builtin"',
            )
        ]
    base = (
        rater.base_url or settings.get("ANTHROPIC_BASE_URL", "") or "https://api.anthropic.com"
    ).rstrip("/")
    request = urllib.request.Request(
        f"{base}/v1/models?limit=1",
        headers={
            "x-api-key": key,
            "anthropic-version": "2023-06-01",
            "user-agent": "gatesh-doctor",
        },
    )
    try:
        with urlopen(request, timeout=_HTTP_TIMEOUT_S) as resp:  # type: ignore[attr-defined]
            status = resp.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return [
            Check(
                "rater",
                "FAIL",
                f"anthropic at {base}: unreachable ({reason})",
                "check rater.base_url and the network; until then every rating fails closed",
            )
        ]
    if status == 200:
        what = "cascade: the builtin first, then anthropic" if backend == "cascade" else "anthropic"
        return [Check("rater", "ok", f"{what} at {base} (model {rater.model})")]
    why = {
        401: "the key was rejected",
        403: "the key may not list models",
        404: "no /v1/models there",
    }.get(status, f"HTTP {status}")
    level: Status = "warn" if status in (403, 404) else "FAIL"
    return [
        Check(
            "rater",
            level,
            f"anthropic at {base}: {why}",
            f"check ${rater.api_key_env} and rater.base_url",
        )
    ]


# --- integrations -------------------------------------------------------------------------------


def check_integrations() -> list[Check]:
    from gatesh import install
    from gatesh.githooks import HOOK_NAMES

    out: list[Check] = []
    for harness, spec in install.HARNESS_SPECS.items():
        path = install.settings_path(spec)
        try:
            data = install._read_json(path)
        except install.InstallError as exc:
            out.append(Check(f"{harness} hooks", "warn", str(exc), "fix the file"))
            continue
        commands = [
            str(h.get("command", ""))
            for group in _groups(data)
            for h in group
            if install.is_ours(h, harness)
        ]
        if not commands:
            out.append(Check(f"{harness} hooks", "ok", f"not installed ({path})"))
            continue
        program = install.hook_program(commands[0])
        launcher = install.hook_launcher(commands[0])
        starts = program[0] if program else ""
        runnable = [
            p
            for p in dict.fromkeys([starts, launcher])
            if p and (not os.path.isabs(p) or os.access(p, os.X_OK))
        ]
        if not runnable:
            gone = (
                " and ".join(p for p in dict.fromkeys([starts, launcher]) if p)
                or "nothing it can run"
            )
            out.append(
                Check(
                    f"{harness} hooks",
                    "FAIL",
                    f"{path} calls {gone}, which is missing: every command is refused",
                    f"gatesh install {harness}",
                )
            )
        elif launcher not in runnable:
            out.append(
                Check(
                    f"{harness} hooks",
                    "warn",
                    f"{path} starts {starts} directly, but "
                    f"{launcher or 'no launcher'} (what it falls back to, and the gatesh it "
                    "names) is missing",
                    f"run ./install.sh, then gatesh install {harness}",
                )
            )
        elif starts != launcher and commands[0] != install.hook_command(harness, launcher):
            # A direct start written for another installation (its interpreter or its import
            # folders): it may import a gatesh that is not the installed one (S3.4).
            out.append(
                Check(
                    f"{harness} hooks",
                    "warn",
                    f"{path} starts {starts} with other folders or flags than {launcher} would now",
                    f"gatesh install {harness}",
                )
            )
        elif harness == "codex":
            out.append(check_codex_trust(path))
        else:
            out.append(Check(f"{harness} hooks", "ok", f"installed in {path}"))
    hooks_path = _git_config("core.hooksPath")
    ours = install.git_hooks_dir()
    if hooks_path and os.path.abspath(os.path.expanduser(hooks_path)) == ours:
        missing = [n for n in HOOK_NAMES if not os.access(os.path.join(ours, n), os.X_OK)]
        out.append(
            Check(
                "git hooks",
                "FAIL" if missing else "ok",
                f"core.hooksPath = {ours}" + (f"; missing {', '.join(missing)}" if missing else ""),
                "gatesh install git --global" if missing else "",
            )
        )
    else:
        out.append(
            Check(
                "git hooks",
                "ok",
                "global hooks not installed"
                + (f" (core.hooksPath = {hooks_path})" if hooks_path else ""),
            )
        )
    folder = install.shims_dir()
    if not os.path.isdir(folder):
        out.append(Check("shims", "warn", f"{folder} does not exist", "gatesh install shims"))
    else:
        out.extend(check_shims(folder))
    return out


def check_shims(folder: str) -> list[Check]:
    """Each shim must link to gatesh and have a real shell of its name to run: a shim whose shell
    is not installed refuses every command (zsh is optional; bash and sh are not)."""
    from gatesh import install
    from gatesh.client import find_real_shell

    broken = [n for n in install.SHIM_NAMES if not os.path.isfile(os.path.join(folder, n))]
    if broken:
        return [
            Check(
                "shims",
                "FAIL",
                f"{folder}: {', '.join(broken)} missing or dangling",
                "gatesh install shims",
            )
        ]
    out = []
    for name in install.SHIM_NAMES:
        shim = os.path.join(folder, name)
        if find_real_shell(name, shim) is None:
            required = name != "zsh"
            out.append(
                Check(
                    f"shim {name}",
                    "FAIL" if required else "warn",
                    f"{shim}: no real {name} is installed, so it refuses every command",
                    f"install {name}" + ("" if required else f", or remove the link {shim}"),
                )
            )
    ok = [n for n in install.SHIM_NAMES if not any(c.name == f"shim {n}" for c in out)]
    return [Check("shims", "ok", f"{folder} ({', '.join(ok)})"), *out]


def check_codex_trust(path: str) -> Check:
    """Codex runs a hook only while the hash it stored when the hook was trusted matches the
    hook (S11): an untrusted or changed (stale-hash) gatesh hook means nothing is gated."""
    from gatesh import hooktrust, install

    codex = hooktrust.codex_binary()
    if codex is None:
        return Check(
            "codex hooks",
            "warn",
            f"installed in {path}; cannot check that Codex trusts them (codex is not on PATH)",
            "run `gatesh doctor` where codex is on PATH",
        )
    try:
        hooks = hooktrust.list_hooks(codex, os.path.dirname(path))
    except hooktrust.TrustError as exc:
        return Check(
            "codex hooks",
            "warn",
            f"installed in {path}; could not ask Codex whether it trusts them: {exc}",
            "run `codex app-server` by hand to see why",
        )
    ours = [h for h in hooks if install.is_ours({"command": h.command}, "codex")]
    if not ours:
        return Check(
            "codex hooks",
            "FAIL",
            f"{path} has gatesh's hooks but Codex does not list them: nothing is gated",
            "gatesh install codex",
        )
    skipped = [h for h in ours if not h.trust.runs or not h.enabled]
    if skipped:
        what = "; ".join(
            f"{h.event} is {'disabled' if not h.enabled else 'changed since it was trusted (stale hash)' if h.trust is hooktrust.Trust.MODIFIED else h.trust.value}"
            for h in skipped
        )
        return Check(
            "codex hooks",
            "FAIL",
            f"Codex skips gatesh's hooks in {path}: {what}. Nothing Codex runs is gated.",
            "gatesh install codex (it has Codex trust them)",
        )
    return Check("codex hooks", "ok", f"installed in {path}; Codex trusts all {len(ours)}")


def _groups(data: dict[str, object] | None) -> list[list[dict[str, object]]]:
    hooks = (data or {}).get("hooks")
    out: list[list[dict[str, object]]] = []
    if isinstance(hooks, dict):
        for groups in hooks.values():
            for group in groups if isinstance(groups, list) else []:
                inner = group.get("hooks") if isinstance(group, dict) else None
                if isinstance(inner, list):
                    out.append([h for h in inner if isinstance(h, dict)])
    return out


def _git_config(key: str) -> str:
    try:
        proc = subprocess.run(
            ["git", "config", "--global", "--get", key], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


# --- the person (S9.5, S9.7): whose settings, the person's channel, without the kernel ---------

#: The first Landlock ABI that can scope abstract Unix sockets (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET).
ABI_SCOPES_ABSTRACT: Final = 6


def landlock_abi(config: object | None = None) -> int:
    """The Landlock ABI the boundary uses here: the running kernel's (0 without Landlock), and 0
    when the person switched the boundary off (``boundary.enabled = false`` in ``config``)."""
    from gatesh.boundary import _kernel
    from gatesh.config import Config

    if isinstance(config, Config) and not config.boundary.enabled:
        return 0
    return _kernel.abi()


def _status(paths: _paths.GatePaths) -> dict[str, Any] | None:
    from gatesh import client

    try:
        reply = client.request("admin", {"op": "status"}, start=False, timeout=10.0)
    except Exception:
        return None
    daemon = reply.get("daemon")
    return daemon if isinstance(daemon, dict) else None


def check_person(config: object | None = None) -> list[Check]:
    """The person's sections, in the order a person reads them."""
    paths = _paths.current()
    status = _status(paths)
    abi = landlock_abi(config)
    out = [*_settings(paths, status, config), *_channel(status, abi), *_tracing(status)]
    out.append(_without_the_kernel(abi))
    out.append(_record(paths))
    out.append(_service(paths))
    return out


def _service(paths: _paths.GatePaths) -> Check:
    """Who starts the daemon: the user's service manager (``gatesh install service``), or the
    first client that finds none (on the person's settings only, S9.7)."""
    from gatesh import service

    units = paths.installation().service
    if units:
        found = service.describe(units)
        if found == "none":
            return Check(
                "service",
                "warn",
                f"the install record names the service manager's units ({', '.join(units)}), "
                "but none of them is there: clients start the daemon",
                "gatesh install service",
            )
        return Check("service", "ok", f"the user's service manager starts the daemon ({found})")
    running, said = service.systemctl("is-system-running")
    if running or said.strip() in ("degraded", "starting", "initializing"):
        return Check(
            "service",
            "warn",
            "a user service manager runs here, but clients start the daemon (on your settings "
            "only)",
            "gatesh install service (the daemon then starts in the service manager's environment)",
        )
    return Check(
        "service",
        "ok",
        f"no user service manager ({said}): the first client that finds no daemon starts it, "
        "on your settings only",
    )


def _settings(
    paths: _paths.GatePaths, status: dict[str, Any] | None, config: object | None
) -> list[Check]:
    out: list[Check] = []
    values, problems = _person.read_daemon_env(paths.config_dir)
    for problem in problems:
        out.append(Check("daemon.env", "warn", problem, "fix that line, or chmod 600 the file"))
    if status is None:
        return out
    started = str(status.get("started_by") or "?")
    out.append(Check("daemon settings", "ok", f"started by {started}"))
    names = status.get("daemon_env") or []
    if names:
        out.append(
            Check("daemon.env", "ok", f"the daemon took {', '.join(map(str, names))} from it")
        )
    rater = getattr(config, "rater", None)
    key_env = str(getattr(rater, "api_key_env", "") or "ANTHROPIC_API_KEY")
    backend = str(getattr(getattr(rater, "backend", None), "value", "auto"))
    if (
        backend == "auto"
        and os.environ.get(key_env)
        and key_env not in values
        and status.get("rater") == "builtin"
    ):
        out.append(
            Check(
                "model key",
                "warn",
                f"${key_env} is set in this terminal, but the daemon rates with the builtin "
                "alone: it never takes a key from a client's environment (a command the gate let "
                "run could point it at a model of its own)",
                f"put {key_env}=… in {os.path.join(paths.config_dir, _person.DAEMON_ENV)} "
                "(chmod 600), or start the daemon yourself with it set",
            )
        )
    return out


def _channel(status: dict[str, Any] | None, abi: int) -> list[Check]:
    if status is None:
        return []
    channel = str(status.get("person_channel") or "")
    if not channel.startswith("gatesh-person-"):
        return [
            Check(
                "person's channel",
                "FAIL",
                channel or "the daemon did not say",
                "stop whatever holds it (`gatesh daemon --foreground` says who); until then no "
                "verb of yours and no watcher reaches the daemon",
            )
        ]
    if abi >= ABI_SCOPES_ABSTRACT:
        where = (
            f"the kernel (Landlock ABI {abi}) can keep every command gatesh confines from "
            "connecting to it"
        )
    elif abi:
        where = (
            f"the kernel (Landlock ABI {abi}) cannot scope abstract sockets: its credential, "
            "which the boundary keeps confined commands from reading, and the gate's mark keep "
            "them out"
        )
    else:
        where = "no kernel boundary: the credential and the gate's mark are what keep commands out"
    return [Check("person's channel", "ok", f"@{channel}: {where}")]


def _tracing(status: dict[str, Any] | None) -> list[Check]:
    """Whether the user's other processes can trace the daemon (and so the person's verbs)."""
    if status is None:
        return []
    why = str(status.get("traceable") or "")
    if why:
        return [
            Check(
                "tracing",
                "warn",
                f"your other processes can trace the daemon and take its connections: {why}",
                "run the agent as its own Unix user (README: a dedicated agent user)",
            )
        ]
    if os.getuid() == 0:
        return [
            Check(
                "tracing",
                "warn",
                "the daemon runs as root, and any process of root may trace it",
                "run agents as an unprivileged user (README: a dedicated agent user)",
            )
        ]
    return [
        Check(
            "tracing",
            "ok",
            "your other processes cannot trace the daemon, gatesh watch or your gatesh verbs, "
            "nor take their connections or read their environment (not dumpable); the harness "
            "and a PTY session's relay they can, where no kernel boundary stops them",
        )
    ]


def _without_the_kernel(abi: int) -> Check:
    if abi:
        return Check(
            "consent",
            "ok",
            "a command gatesh let run carries the gate's mark, and its descendants are refused "
            "the person's verbs, however detached; the kernel boundary keeps it from reaching "
            "the person's channel",
        )
    return Check(
        "consent",
        "warn",
        "without a kernel boundary (Landlock), a program gatesh let run can act as your user: "
        "its own descendants, however detached, carry the gate's mark and are refused the "
        "person's verbs, but a process it gets started elsewhere (by your service manager, "
        "terminal multiplexer or scheduler) does not",
        "run the agent as its own Unix user (README: a dedicated agent user), or on a kernel "
        "with Landlock",
    )


def _record(paths: _paths.GatePaths) -> Check:
    """Whether a daemon started where the person's environment cannot be read finds the same
    folders as this terminal (the install record names them)."""
    folders, why = _person.person_folders()
    if folders is None:
        return Check(
            "person's folders",
            "warn",
            f"a daemon started from a detached command cannot find your folders: {why}",
            "nothing to do unless you start agents that way",
        )
    here = (paths.config_dir, paths.state_dir)
    if (folders.config_dir, folders.state_dir) == here:
        return Check("person's folders", "ok", f"{folders.config_dir} ({folders.source})")
    return Check(
        "person's folders",
        "warn",
        f"this terminal's gatesh folders ({paths.config_dir}) are not the ones {folders.source} "
        f"gives ({folders.config_dir}): a daemon started where your environment cannot be read "
        "would refuse to start",
        "run ./install.sh again from this terminal (it records your folders)",
    )


# --- the boundary (S16) -------------------------------------------------------------------------

#: Which routes run a command inside its boundary, as CI's real harnesses show (README's table).
BOUNDARY_ROUTES: Final = (
    ("gatesh -c, the shims", "confined: each allowed command runs inside its own boundary"),
    (
        "Claude Code's hooks",
        "confined: the hook has Claude Code run the allowed command wrapped, inside its boundary",
    ),
    ("Codex's and Gemini CLI's hooks", "not confined: gatesh does not rewrite their commands yet"),
    (
        "gatesh (an interactive session)",
        "not confined yet: its commands are gated by the text gate alone",
    ),
)


def check_boundary(config: object | None) -> list[Check]:
    """Which protections of the boundary hold here, proven by confining a child for real, and
    which routes are confined."""
    from gatesh.boundary import holds
    from gatesh.config import Config

    enabled = config.boundary.enabled if isinstance(config, Config) else True
    here = holds.state(enabled)
    out: list[Check] = []
    if here.why_none:
        fix = (
            "set boundary.enabled = true in your config"
            if not enabled
            else "run on Linux 5.13 or newer with Landlock enabled (lsm=...,landlock)"
        )
        out.append(Check("boundary", "warn", here.lines()[0], fix))
    else:
        missing = [p for p in holds.PROTECTIONS if not here.holds(p.id)]
        detail = f"Landlock ABI {here.abi}: " + (
            "every protection holds"
            if not missing
            else "these do not hold: " + "; ".join(f"{p.id} (needs ABI {p.abi})" for p in missing)
        )
        fix = "a newer kernel (Linux 6.12 offers every protection)" if missing else ""
        out.append(Check("boundary", "warn" if missing else "ok", detail, fix))
        probe = _probe_boundary()
        out.append(
            Check("boundary probe", "ok", probe)
            if not probe.startswith("FAIL")
            else Check("boundary probe", "FAIL", probe[5:], "report this with `gatesh dump`")
        )
    paths = _paths.current()
    runtime = os.path.realpath(paths.runtime_dir)
    if here.enabled and not here.why_none and runtime.startswith(("/tmp/", "/var/tmp/")):
        out.append(
            Check(
                "boundary tmp",
                "warn",
                f"the socket folder {runtime} lies in a temporary folder, so a confined command "
                "cannot create files directly in it (TMPDIR points to a private folder instead)",
                "set XDG_RUNTIME_DIR (systemd's /run/user/UID) so the socket folder lives there",
            )
        )
    for route, what in BOUNDARY_ROUTES:
        if what.startswith("confined") and here.why_none:
            what = "not confined: this machine draws no boundary"
        out.append(Check(f"route {route}", "ok", what))
    return out


def _probe_boundary() -> str:
    """Confine a child to one folder and try a write beside it: "confined ..." when the kernel
    refused it, "FAIL ..." when the write went through or the boundary could not be set up."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="gatesh-probe-") as base:
        inside, outside = os.path.join(base, "in"), os.path.join(base, "out")
        os.mkdir(inside)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(r)
            code = b"?"
            try:
                from gatesh.boundary import _kernel

                _kernel.apply({"v": 1, "list": ["/"], "read": ["/"], "write": [inside]})
                with open(os.path.join(inside, "x"), "w") as f:
                    f.write("x")
                try:
                    with open(outside, "w") as f:
                        f.write("x")
                    code = b"W"
                except PermissionError:
                    code = b"K"
            except Exception:
                code = b"E"
            os.write(w, code)
            os._exit(0)
        os.close(w)
        got = os.read(r, 1)
        os.close(r)
        os.waitpid(pid, 0)
    if got == b"K":
        return "a confined child wrote its own folder and was refused the one beside it"
    if got == b"W":
        return "FAIL the kernel let a confined child write outside its boundary"
    return "FAIL a child could not be confined"


# --- entry point --------------------------------------------------------------------------------


def run_checks(*, start_daemon: bool = True) -> list[Check]:
    """Every check, in the order a person fixes them. Never raises: a crashing check is a FAIL."""
    paths = _paths.current()
    out: list[Check] = []

    def guarded(name: str, fn: Callable[[], list[Check]]) -> None:
        try:
            out.extend(fn())
        except Exception as exc:
            out.append(
                Check(
                    name,
                    "FAIL",
                    f"the check crashed: {type(exc).__name__}: {exc}",
                    "report this with `gatesh dump`",
                )
            )

    guarded("launcher", check_launcher)
    guarded("import path", check_import_path)
    config_checks: list[Check] = []
    config: object | None = None

    def _config() -> list[Check]:
        nonlocal config, config_checks
        config_checks, config = check_config()
        return config_checks

    guarded("config", _config)
    if start_daemon:
        guarded("gate", lambda: check_gate(shutil.which("gatesh")))
    guarded("daemon", lambda: check_daemon(paths))
    guarded("permissions", lambda: check_permissions(paths))
    if config is not None:
        guarded("rater", lambda: check_rater(config))
    guarded("boundary", lambda: check_boundary(config))
    guarded("integrations", check_integrations)

    guarded("person", lambda: check_person(config))
    return out


def main(argv: list[str]) -> int:
    """``gatesh doctor [--json]``: 0 when every required check passed, 1 otherwise."""
    parser = argparse.ArgumentParser(
        prog="gatesh doctor", description="Check the installation and print what to fix."
    )
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args(argv)
    checks = run_checks()
    failed = [c for c in checks if c.status == "FAIL"]
    if args.json:
        print(json.dumps({"ok": not failed, "checks": [asdict(c) for c in checks]}))
    else:
        width = max(len(c.name) for c in checks)
        for c in checks:
            print(f"{c.status:<4}  {c.name:<{width}}  {c.detail}")
            if c.fix:
                print(f"{'':<4}  {'':<{width}}  fix: {c.fix}")
        print(
            "\nall required checks passed"
            if not failed
            else f"\n{len(failed)} required check{'s' if len(failed) != 1 else ''} failed"
        )
    return EXIT_ERROR if failed else EXIT_OK

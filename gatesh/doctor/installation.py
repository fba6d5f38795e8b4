"""Doctor's checks of what ``./install.sh`` and ``gatesh install`` put in place: the launcher on
PATH, the folders it imports from, the gate it starts, each harness's hooks, git's hooks, the shims.

Each check guarantees a FAIL when what it checks would refuse every command or let commands past
the gate, and a warn when it only works worse (slower, or unverifiable from here).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Final

from gatesh.doctor.check import Check, Status
from gatesh.harnesses import Harness

if TYPE_CHECKING:
    from gatesh.install import HarnessSpec

__all__ = [
    "check_codex_trust",
    "check_gate",
    "check_import_path",
    "check_integrations",
    "check_launcher",
    "check_shims",
]

# A pyenv/asdf shim re-resolves the interpreter on every call (~80 ms, S14).
_SHIM_MARKERS: Final = ("/.pyenv/shims/", "/.asdf/shims/", "/shims/python")


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
    """The ``gatesh`` on PATH: a launcher that starts the real interpreter without ``site``
    (fast start, S14). FAIL when it is missing or runs a shim; warn when it is only slower."""
    found = shutil.which("gatesh")
    if not found:
        local = os.path.expanduser("~/.local/bin")
        return [
            Check(
                "launcher",
                Status.FAIL,
                "gatesh is not on PATH",
                f'run ./install.sh, and add {local} to PATH (export PATH={local}:"$PATH")',
            )
        ]
    words = _shebang(found)
    rewrite = "run ./install.sh to write the fast launcher"
    if not words:
        return [Check("launcher", Status.WARN, f"{found} is not a script launcher", rewrite)]
    interpreter, flags = words[0], " ".join(words[1:])
    fast = None
    if os.path.basename(interpreter) == "sh":
        # A /bin/sh launcher written by gatesh.launcher: two interpreters, or a long path.
        from gatesh.launcher import read_launcher

        full, fast = read_launcher(found)
        if full is None:
            detail = f"{found} is a shell script gatesh did not write"
            return [Check("launcher", Status.WARN, detail, rewrite)]
        interpreter, flags = full, "-IS"
    return [_judge_launcher(found, interpreter, flags, fast)]


def _judge_launcher(found: str, interpreter: str, flags: str, fast: str | None) -> Check:
    """The launcher at ``found`` runs ``interpreter`` with ``flags`` (and ``fast`` for ``-c``)."""
    shim = any(m in interpreter for m in _SHIM_MARKERS)
    if os.path.basename(interpreter) == "env":
        return Check(
            "launcher",
            Status.WARN,
            f"{found} finds python through env on every call",
            "run ./install.sh to write a launcher that calls the real interpreter",
        )
    if not shim and not os.access(interpreter, os.X_OK):
        return Check(
            "launcher",
            Status.FAIL,
            f"{found} runs {interpreter}, which is missing",
            "run ./install.sh again (the Python it was installed with is gone)",
        )
    if shim or not _is_elf(os.path.realpath(interpreter)):
        return Check(
            "launcher",
            Status.FAIL,
            f"{found} runs {interpreter}, a shim or script, not an interpreter",
            "run ./install.sh again: it resolves the real interpreter",
        )
    if "S" not in flags.replace("-", ""):
        return Check(
            "launcher",
            Status.WARN,
            f"{found} → {interpreter} (imports site: slower start)",
            "run ./install.sh to write the fast launcher",
        )
    if fast is not None and not os.access(fast, os.X_OK):
        return Check(
            "launcher",
            Status.WARN,
            f"{found} → {interpreter} {flags}; the faster {fast} it "
            "chose for -c is gone, so -c starts on the full interpreter (slower)",
            "run ./install.sh again: it picks the interpreters anew",
        )
    both = f", and {fast} for -c and the shims" if fast else ""
    return Check("launcher", Status.OK, f"{found} → {interpreter} {flags}{both}")


def check_import_path(launcher: str | None = None) -> list[Check]:
    """The folders the launcher imports the gate's code from (S3.4): none may be writable by
    another user or lie inside a repository, where an agent may be working."""
    from gatesh.launcher import import_path_problems, read_import_path, read_launcher

    launcher = launcher or shutil.which("gatesh")
    if not launcher:
        return [Check("import path", Status.WARN, "no launcher to check", "run ./install.sh")]
    folders = read_import_path(launcher)
    if folders is None:
        return [
            Check(
                "import path",
                Status.WARN,
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
                Status.FAIL,
                "; ".join(problems[:4]),
                "install with ./install.sh from a folder that is not a working copy the agent "
                "uses, and make those folders writable by you alone",
            )
        ]
    return [
        Check(
            "import path", Status.OK, f"{launcher} imports gatesh from {folders[0]} (yours alone)"
        )
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
                "gate",
                Status.FAIL,
                f"`gatesh -c true` could not run: {exc}",
                "run ./install.sh again",
            )
        ]
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or [""])[-1][:300]
        return [
            Check(
                "gate",
                Status.FAIL,
                f"`gatesh -c true` exited {proc.returncode}: {tail}",
                "read the message above; `gatesh config` shows the configuration in force",
            )
        ]
    return [Check("gate", Status.OK, "`gatesh -c true` was allowed and ran")]


# --- integrations -------------------------------------------------------------------------------


def check_integrations() -> list[Check]:
    """The hooks gatesh wrote into each harness's settings, the global git hooks and the shims:
    FAIL where an installed hook or shim cannot run (it refuses every command), or is skipped."""
    from gatesh import install

    out = [_harness_hooks(harness, spec) for harness, spec in install.HARNESS_SPECS.items()]
    out.append(_git_hooks())
    folder = install.shims_dir()
    if not os.path.isdir(folder):
        out.append(Check("shims", Status.WARN, f"{folder} does not exist", "gatesh install shims"))
    else:
        out.extend(check_shims(folder))
    return out


def _harness_hooks(harness: Harness, spec: HarnessSpec) -> Check:
    """Whether ``harness``'s settings hold gatesh's hooks, and whether what they start runs."""
    from gatesh import install

    name = f"{harness} hooks"
    path = install.settings_path(spec)
    try:
        commands = install.SettingsFile.read(path).our_commands(harness)
    except install.InstallError as exc:
        return Check(name, Status.WARN, str(exc), "fix the file")
    if not commands:
        return Check(name, Status.OK, f"not installed ({path})")
    program = install.hook_program(commands[0])
    launcher = install.hook_launcher(commands[0])
    starts = program[0] if program else ""
    named = [p for p in dict.fromkeys([starts, launcher]) if p]
    runnable = [p for p in named if not os.path.isabs(p) or os.access(p, os.X_OK)]
    if not runnable:
        gone = " and ".join(named) or "nothing it can run"
        return Check(
            name,
            Status.FAIL,
            f"{path} calls {gone}, which is missing: every command is refused",
            f"gatesh install {harness}",
        )
    if launcher not in runnable:
        return Check(
            name,
            Status.WARN,
            f"{path} starts {starts} directly, but "
            f"{launcher or 'no launcher'} (what it falls back to, and the gatesh it "
            "names) is missing",
            f"run ./install.sh, then gatesh install {harness}",
        )
    if starts != launcher and commands[0] != install.hook_command(harness, launcher):
        # A direct start written for another installation (its interpreter or its import
        # folders): it may import a gatesh that is not the installed one (S3.4).
        return Check(
            name,
            Status.WARN,
            f"{path} starts {starts} with other folders or flags than {launcher} would now",
            f"gatesh install {harness}",
        )
    if harness is Harness.CODEX:
        return check_codex_trust(path)
    return Check(name, Status.OK, f"installed in {path}")


def _git_hooks() -> Check:
    """The global git hooks (``core.hooksPath``): when they are gatesh's, every one must run."""
    from gatesh import install
    from gatesh.githooks import HOOK_NAMES

    hooks_path = _git_config("core.hooksPath")
    ours = install.git_hooks_dir()
    if not hooks_path or os.path.abspath(os.path.expanduser(hooks_path)) != ours:
        where = f" (core.hooksPath = {hooks_path})" if hooks_path else ""
        return Check("git hooks", Status.OK, "global hooks not installed" + where)
    missing = [n for n in HOOK_NAMES if not os.access(os.path.join(ours, n), os.X_OK)]
    if missing:
        return Check(
            "git hooks",
            Status.FAIL,
            f"core.hooksPath = {ours}; missing {', '.join(missing)}",
            "gatesh install git --global",
        )
    return Check("git hooks", Status.OK, f"core.hooksPath = {ours}")


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
                Status.FAIL,
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
                    Status.FAIL if required else Status.WARN,
                    f"{shim}: no real {name} is installed, so it refuses every command",
                    f"install {name}" + ("" if required else f", or remove the link {shim}"),
                )
            )
    ok = [n for n in install.SHIM_NAMES if not any(c.name == f"shim {n}" for c in out)]
    return [Check("shims", Status.OK, f"{folder} ({', '.join(ok)})"), *out]


def check_codex_trust(path: str) -> Check:
    """Codex runs a hook only while the hash it stored when the hook was trusted matches the
    hook (S11): an untrusted or changed (stale-hash) gatesh hook means nothing is gated."""
    from gatesh import hooktrust, install

    codex = hooktrust.codex_binary()
    if codex is None:
        return Check(
            "codex hooks",
            Status.WARN,
            f"installed in {path}; cannot check that Codex trusts them (codex is not on PATH)",
            "run `gatesh doctor` where codex is on PATH",
        )
    try:
        hooks = hooktrust.list_hooks(codex, os.path.dirname(path))
    except hooktrust.TrustError as exc:
        return Check(
            "codex hooks",
            Status.WARN,
            f"installed in {path}; could not ask Codex whether it trusts them: {exc}",
            "run `codex app-server` by hand to see why",
        )
    ours = [h for h in hooks if install.is_ours({"command": h.command}, Harness.CODEX)]
    if not ours:
        return Check(
            "codex hooks",
            Status.FAIL,
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
            Status.FAIL,
            f"Codex skips gatesh's hooks in {path}: {what}. Nothing Codex runs is gated.",
            "gatesh install codex (it has Codex trust them)",
        )
    return Check("codex hooks", Status.OK, f"installed in {path}; Codex trusts all {len(ours)}")


def _git_config(key: str) -> str:
    try:
        proc = subprocess.run(
            ["git", "config", "--global", "--get", key], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""

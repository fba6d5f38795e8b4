"""What a gated PTY session starts with: its folder, shims, startup files and environment (S10).

Guarantees: the user's own startup files load first and gatesh's hook last; the shims folder
(``bash``, ``zsh``, ``sh`` links to a gatesh launcher) is first on PATH inside the session, so a
shell started by name inside it is gated too; the child's environment names the session
(``GATESH_SESSION``) and marks it gated (``GATESH_GATED=1``), which the daemon uses to refuse
human-only verbs from inside it (S9.5). Everything lives in one 0700 folder removed at the end.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from importlib import resources

from gatesh.launcher import write_launcher

__all__ = ["SHIMS_MARKER", "Startup", "prepare", "real_shell"]

# A file in every shims folder, so a nested session can skip all of them when it looks for the
# real shell (each session has its own folder).
SHIMS_MARKER = ".gatesh-shims"
SHIM_NAMES = ("bash", "zsh", "sh")


@dataclass
class Startup:
    """A prepared session: the child's argv and environment, and the folder to remove after."""

    folder: str
    argv: list[str]
    env: dict[str, str]
    session: str
    ask_socket: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    def cleanup(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _hook_text(name: str) -> str:
    return resources.files("gatesh").joinpath("shell", name).read_text(encoding="utf-8")


def _q(text: str) -> str:
    """Single-quote ``text`` for bash and zsh."""
    return "'" + text.replace("'", "'\\''") + "'"


def real_shell(name: str, path: str | None = None) -> str | None:
    """The real ``name`` on PATH, skipping every gatesh shims folder and anything that is gatesh."""
    entries = (os.environ.get("PATH", "") if path is None else path).split(os.pathsep)
    for entry in entries:
        if not entry or os.path.exists(os.path.join(entry, SHIMS_MARKER)):
            continue
        candidate = os.path.join(entry, name)
        if not os.path.isfile(candidate) or not os.access(candidate, os.X_OK):
            continue
        real = os.path.realpath(candidate)
        if os.path.basename(real) == "gatesh" or os.path.exists(
            os.path.join(os.path.dirname(real), SHIMS_MARKER)
        ):
            continue
        return candidate
    for fallback in (f"/bin/{name}", f"/usr/bin/{name}"):
        if os.access(fallback, os.X_OK):
            return fallback
    return None


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _bash_rc(folder: str, login: bool, shims: str) -> str:
    if login:
        user = (
            "[ -r /etc/profile ] && . /etc/profile\n"
            "for __gatesh_f in ~/.bash_profile ~/.bash_login ~/.profile; do\n"
            '  if [ -r "$__gatesh_f" ]; then . "$__gatesh_f"; break; fi\n'
            "done\nunset __gatesh_f\n"
        )
    else:
        user = "[ -r /etc/bash.bashrc ] && . /etc/bash.bashrc\n[ -r ~/.bashrc ] && . ~/.bashrc\n"
    hook = os.path.join(folder, "bash_hook.bash")
    _write(hook, _hook_text("bash_hook.bash"))
    return (
        "# Written by gatesh for one gated session: your startup files, then gatesh's hook.\n"
        + user
        # Startup files often set PATH; the shims must stay first so nested shells are gated.
        + f'PATH={_q(shims)}:"$PATH"\n'
        + f". {_q(hook)}\n"
    )


def _zsh_files(folder: str, shims: str) -> str:
    """Write a ZDOTDIR whose files source the user's own, then the hook; returns its path."""
    zdot = os.path.join(folder, "zdotdir")
    os.mkdir(zdot, 0o700)
    hook = os.path.join(folder, "zsh_hook.zsh")
    _write(hook, _hook_text("zsh_hook.zsh"))
    q = _q(zdot)

    def relay(name: str) -> str:
        # Read the user's file with their own ZDOTDIR in place, then point zsh back at ours.
        return (
            f'ZDOTDIR="$GATESH_USER_ZDOTDIR"\n'
            f'[[ -r "$ZDOTDIR/{name}" ]] && . "$ZDOTDIR/{name}"\n'
            f'GATESH_USER_ZDOTDIR="$ZDOTDIR"\nZDOTDIR={q}\n'
        )

    _write(os.path.join(zdot, ".zshenv"), relay(".zshenv"))
    _write(os.path.join(zdot, ".zprofile"), relay(".zprofile"))
    _write(
        os.path.join(zdot, ".zshrc"),
        (
            'ZDOTDIR="$GATESH_USER_ZDOTDIR"\n'
            '[[ -r "$ZDOTDIR/.zshrc" ]] && . "$ZDOTDIR/.zshrc"\n'
            f"path=({_q(shims)} ${{path:#{_q(shims)}}})\n"
            f". {_q(hook)}\n"
            # ZDOTDIR stays the user's from here: zsh reads their .zlogin itself.
            "unset GATESH_USER_ZDOTDIR\n"
        ),
    )
    return zdot


def prepare(
    shell: str,
    real: str,
    *,
    login: bool,
    session: str,
    operator: str,
    env: dict[str, str] | None = None,
) -> Startup:
    """Make the session folder and return the child's argv and environment."""
    env = dict(os.environ if env is None else env)
    base = os.environ.get("XDG_RUNTIME_DIR", "")
    folder = tempfile.mkdtemp(prefix="gatesh-pty-", dir=base if os.path.isdir(base) else None)
    try:
        shims = os.path.join(folder, "shims")
        os.mkdir(shims, 0o700)
        _write(os.path.join(shims, SHIMS_MARKER), "gatesh shims of one PTY session\n")
        # One interpreter: its calls are mostly `gatesh _gate` (a subcommand, which a two-interpreter
        # launcher routes through /bin/sh, ~0.5 ms), and choosing the fast interpreter for the
        # client takes ~0.2 s of timed starts, at every session start.
        launcher = write_launcher(os.path.join(shims, "gatesh"), fast=False)
        for name in SHIM_NAMES:
            os.symlink("gatesh", os.path.join(shims, name))
        env.update(
            {
                "GATESH_SESSION": session,
                "GATESH_GATED": "1",
                "GATESH_LAUNCHER": launcher,
                "GATESH_OPERATOR": operator,
                "PATH": shims + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
            }
        )
        ask = ""
        if operator == "person":
            ask = os.path.join(folder, "ask.sock")
            env["GATESH_PTY_ASK"] = ask
        else:
            env.pop("GATESH_PTY_ASK", None)
        if shell == "zsh":
            env["GATESH_USER_ZDOTDIR"] = env.get("ZDOTDIR") or env.get("HOME", "")
            env["ZDOTDIR"] = _zsh_files(folder, shims)
            argv = ["zsh", "-i"] + (["-l"] if login else [])
        else:
            rc = os.path.join(folder, "bashrc")
            _write(rc, _bash_rc(folder, login, shims))
            argv = ["bash", "--rcfile", rc, "-i"]
        argv[0] = real  # ptyprocess execs argv[0]; the relay passes the name separately
        return Startup(folder=folder, argv=argv, env=env, session=session, ask_socket=ask)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise

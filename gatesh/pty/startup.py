"""What a gated PTY session starts with: its folder, shims, startup files and environment (S10).

Guarantees: the gate channel is set up before anything else runs (:mod:`gatesh.pty.channel`);
the user's own startup files load next and gatesh's hook last; the shims folder (a link to a
gatesh launcher for every shell that reads sh) is first on PATH inside the session, so a shell
started by name inside it is gated too; after the user's files the session exports ``SHELL`` as
its gated shell and, for an agent, pagers and editors with their shell escapes off
(:func:`session_exports`); the child's environment names the session (``GATESH_SESSION``) and
marks it gated (``GATESH_GATED=1``), which the daemon uses to refuse human-only verbs from inside
it (S9.5). Everything lives in one 0700 folder removed at the end.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from typing import Final

from gatesh._invoke import SHELL_NAMES
from gatesh.launcher import write_launcher

__all__ = ["SHIMS_MARKER", "Startup", "prepare", "real_shell", "session_exports"]

# A file in every shims folder, so a nested session can skip all of them when it looks for the
# real shell (each session has its own folder).
SHIMS_MARKER = ".gatesh-shims"
# Every shell of the vocabulary that reads sh: a shell the agent starts by name is gated (S10).
SHIM_NAMES = SHELL_NAMES


@dataclass
class Startup:
    """A prepared session: the child's argv and environment, and the folder to remove after."""

    folder: str
    argv: list[str]
    env: dict[str, str]
    session: str
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


# The first lines of a gated bash's rc file: start the gate channel's coprocess (a process that
# only waits; `tail --pid` ends with the relay) and hand its pid to the relay, before the user's
# startup files run, so no program they start inherits the hand-over pipe. The coprocess says
# "ready" on its pipe once its standard input and output are the channel's pipes, and the shell
# reads that line before anything else, so the hook never checks the channel before it exists
# (a busy machine may run the shell's startup files before the coprocess is set up).
_BASH_CHANNEL = """\
if [[ -n ${GATESH_HAND-} ]]; then
  coproc __gatesh_co {
    # Keys typed at the terminal (Ctrl-C, Ctrl-Z) must not end the channel; nor may it keep
    # the hand-over pipe open.
    trap '' INT QUIT TSTP TTIN TTOU
    builtin printf 'ready\\n'
    exec {GATESH_HAND}>&- %(tail)s --pid=%(relay)d -f /dev/null
  } 2>/dev/null
  [[ -z ${__gatesh_co[0]-} ]] || builtin read -r -t 30 __gatesh_ready <&"${__gatesh_co[0]}"
  builtin unset __gatesh_ready
  builtin printf '%%s\\n' "${__gatesh_co_PID-}" >&"$GATESH_HAND"
  exec {GATESH_HAND}>&-
  builtin unset GATESH_HAND
fi
"""


def _bash_channel() -> str:
    tail = shutil.which("tail", path="/usr/bin:/bin") or "tail"
    return _BASH_CHANNEL % {"tail": _q(tail), "relay": os.getpid()}


# Programs an agent's session points its pager and editor settings at, each with its shell
# escapes off (less: LESSSECURE; vim -Z and nano -R: restricted modes): `git log`, `man`, `fc`
# and `more`'s `v` then open no ungated shell (S10). The first one installed is used.
_PAGERS: Final = ("less",)
_EDITORS: Final = (("vim", "vim -Z"), ("nano", "nano -R"))


def session_exports(shell: str, shims: str, operator: str) -> dict[str, str]:
    """The variables a gated session exports after the user's startup files: ``SHELL`` is the
    session's gated shell (programs that open a shell find it), and for an agent's session the
    pager and editor settings name programs whose shell escapes are off."""
    out = {"SHELL": os.path.join(shims, shell)}
    if operator == "person":
        return out
    search = "/usr/local/bin:/usr/bin:/bin"
    out["LESSSECURE"] = "1"
    pager = next((p for p in _PAGERS if shutil.which(p, path=search)), "cat")
    for name in ("PAGER", "MANPAGER", "GIT_PAGER", "SYSTEMD_PAGER"):
        out[name] = pager
    editor = next((cmd for prog, cmd in _EDITORS if shutil.which(prog, path=search)), "")
    if editor:
        for name in ("EDITOR", "VISUAL", "FCEDIT", "GIT_EDITOR", "SUDO_EDITOR"):
            out[name] = editor
    return out


def _exports(values: dict[str, str]) -> str:
    text = "".join(f"export {name}={_q(value)}\n" for name, value in values.items())
    # The pagers' shell escapes stay off for the whole session.
    return text + ("readonly LESSSECURE\n" if "LESSSECURE" in values else "")


# Put in front of the prompt when session.mark asks for it (the user's prompt follows).
PROMPT_MARK: Final = "(gated) "


def _bash_rc(
    folder: str, login: bool, shims: str, exports: dict[str, str], prompt_mark: bool = False
) -> str:
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
        + _bash_channel()
        + user
        # Startup files often set PATH; the shims must stay first so nested shells are gated.
        + f'PATH={_q(shims)}:"$PATH"\n'
        + _exports(exports)
        + (f'PS1={_q(PROMPT_MARK)}"${{PS1-}}"\n' if prompt_mark else "")
        + f". {_q(hook)}\n"
    )


# The first lines of a gated zsh's .zshenv: open the gate channel's pipes again close-on-exec
# (so no program the shell starts inherits them) and close the inherited descriptors.
_ZSH_CHANNEL = """\
if [[ -n ${GATESH_CHAN_W-} && -n ${GATESH_CHAN_R-} ]]; then
  if zmodload zsh/system 2>/dev/null; then
    sysopen -w -o cloexec -u __gatesh_wfd /proc/self/fd/$GATESH_CHAN_W 2>/dev/null
    sysopen -r -o cloexec -u __gatesh_rfd /proc/self/fd/$GATESH_CHAN_R 2>/dev/null
  fi
  exec {GATESH_CHAN_W}>&- {GATESH_CHAN_R}<&-
  unset GATESH_CHAN_W GATESH_CHAN_R
  typeset -gr __gatesh_wfd __gatesh_rfd
fi
"""


def _zsh_files(folder: str, shims: str, exports: dict[str, str], prompt_mark: bool = False) -> str:
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

    _write(os.path.join(zdot, ".zshenv"), _ZSH_CHANNEL + relay(".zshenv"))
    _write(os.path.join(zdot, ".zprofile"), relay(".zprofile"))
    _write(
        os.path.join(zdot, ".zshrc"),
        (
            'ZDOTDIR="$GATESH_USER_ZDOTDIR"\n'
            '[[ -r "$ZDOTDIR/.zshrc" ]] && . "$ZDOTDIR/.zshrc"\n'
            f"path=({_q(shims)} ${{path:#{_q(shims)}}})\n"
            + _exports(exports)
            + (f'PS1={_q(PROMPT_MARK)}"${{PS1-}}"\n' if prompt_mark else "")
            + f". {_q(hook)}\n"
            # ZDOTDIR stays the user's from here: zsh reads their .zlogin itself.
            + "unset GATESH_USER_ZDOTDIR\n"
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
    prompt_mark: bool = False,
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
        for stale in ("GATESH_PTY_ASK", "GATESH_HAND", "GATESH_CHAN_W", "GATESH_CHAN_R"):
            env.pop(stale, None)
        if shell == "zsh":
            env["GATESH_USER_ZDOTDIR"] = env.get("ZDOTDIR") or env.get("HOME", "")
            env["ZDOTDIR"] = _zsh_files(
                folder, shims, session_exports(shell, shims, operator), prompt_mark
            )
            argv = ["zsh", "-i"] + (["-l"] if login else [])
        else:
            rc = os.path.join(folder, "bashrc")
            _write(
                rc,
                _bash_rc(
                    folder, login, shims, session_exports(shell, shims, operator), prompt_mark
                ),
            )
            argv = ["bash", "--rcfile", rc, "-i"]
        argv[0] = real  # ptyprocess execs argv[0]; the relay passes the name separately
        return Startup(folder=folder, argv=argv, env=env, session=session)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise

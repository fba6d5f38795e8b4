"""Settings that switch the gate's hooks off, or point an inner gatesh elsewhere (S3.4).

- git: ``core.hooksPath`` and ``init.templateDir`` (and ``include.path``, which may set either)
  set, unset or overridden, by ``git config``, ``git -c``, ``--config-env``, the ``GIT_CONFIG_*``
  variables or an edit of a git config file; the global config hidden or replaced when gatesh set
  the global ``core.hooksPath``.
- harnesses: a harness started with its hooks off or reading its settings elsewhere; a setting
  that switches hooks off written into any file.
- gatesh's own environment: its variables, the XDG folders and HOME given to an inner gatesh (or a
  shell that may be one), exported, set for this shell or unset.

The files a command writes are the reader's path facts; git's argv is read through its one grammar
(``gatesh.vocab.grammar``).
"""

from __future__ import annotations

import posixpath
import re
from typing import Final

from gatesh._types import Facts, PathEffect, SimpleCommand
from gatesh.vocab.grammar import WRAPPERS, parse
from gatesh.vocab.programs import SHELLS, is_interpreter
from gatesh.vocab.words import canon_path, option_values, unquote

from ._places import Protected
from ._writes import code_writes

__all__ = [
    "DECLARERS",
    "git_hooks_setting",
    "harness_hooks_off",
    "inner_gatesh_env",
    "inner_gatesh_env_whole",
    "runs_gatesh",
    "says_hooks_off",
]

# Builtins that set variables (and their attributes) for this shell.
DECLARERS: Final = frozenset(
    {"export", "declare", "typeset", "readonly", "local", "integer", "float"}
)

# --- git's hooks --------------------------------------------------------------------------------

# Keys whose change moves git's hooks away from gatesh's (S3.4, S11.3). Git folds key names' case.
_HOOK_KEYS: Final = re.compile(
    r"^(?:core\.hookspath|init\.templatedir|include\.path|includeif\..+\.path)$", re.IGNORECASE
)  # an included file may set either
_HOOK_KEY_TEXT: Final = re.compile(r"hooks\s*path|template\s*dir", re.IGNORECASE)
_GIT_CONFIG_READS: Final = frozenset(
    {
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--list",
        "-l",
        "--show-origin",
        "--show-scope",
        "--get-color",
        "--get-colorbool",
        "get",
        "list",
    }
)
_GIT_CONFIG_CHANGES: Final = frozenset(
    {"--unset", "--unset-all", "--add", "--replace-all", "--append", "--all"}
)
# Files git reads its configuration from, in any repository or home.
_GIT_CONFIG_FILE: Final = re.compile(
    r"(?:^|/)(?:\.git/(?:modules/[^/]+/)?config(?:\.worktree)?|\.gitconfig"
    r"|\.config/git/config|etc/gitconfig)$"
)


def git_hooks_setting(
    cmd: SimpleCommand, effects: list[PathEffect], facts: Facts, prot: Protected
) -> bool:
    """Moves git's hooks away from gatesh's: ``core.hooksPath`` or ``init.templateDir`` set,
    unset or overridden (``git config``, ``git -c``, ``--config-env``, ``GIT_CONFIG_*`` variables),
    a git config file edited to say so, or, when gatesh set the global ``core.hooksPath``, the
    global config replaced or hidden from git (``GIT_CONFIG_GLOBAL``, ``HOME`` for git)."""
    if cmd.head == "git" and _git_argv_moves_hooks(cmd.args):
        return True
    for a in env_words(cmd):
        name, _, value = a.partition("=")
        value = unquote(value)
        if name == "GIT_CONFIG_PARAMETERS" and _HOOK_KEY_TEXT.search(value):
            return True
        if name.startswith("GIT_CONFIG_KEY_") and _HOOK_KEYS.match(value):
            return True
        if name == "GIT_TEMPLATE_DIR":
            return True
        if prot.git_global and (
            name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")
            or (name == "HOME" and cmd.head == "git")
        ):
            return True
    return _git_config_file_write(effects, facts, prot)


def _git_argv_moves_hooks(args: tuple[str, ...]) -> bool:
    """``git -c core.hooksPath=…``, ``--config-env=…``, or ``git config`` setting, unsetting or
    editing a hooks key, or removing or renaming the ``core``/``init`` section (git's argv read
    through its grammar, ``gatesh.vocab.grammar``)."""
    argv = parse("git", args)
    for o in argv.options:
        if o.level == 0 and o.name in ("-c", "--config-env") and o.value:
            if _HOOK_KEYS.match(o.value.split("=", 1)[0]):
                return True
    if argv.subcommand != "config":
        return False
    verb = argv.sub(1)  # the newer spelling: `git config set|unset|get|list|edit|…`
    names = {o.name for o in argv.options if o.level >= 1}
    operands = list(argv.operands)
    if names & {"--edit", "-e"} or verb == "edit":
        return True  # an editor on the config file: any key may change
    reading = bool(names & _GIT_CONFIG_READS) or verb in ("get", "list")
    changes = (
        bool(names & _GIT_CONFIG_CHANGES)
        or verb in ("set", "unset")
        or (bool(operands) and _HOOK_KEYS.match(operands[0]) is not None and len(operands) >= 2)
    )
    if changes and not reading and any(_HOOK_KEYS.match(w) for w in operands):
        return True
    sections = bool(names & {"--remove-section", "--rename-section"}) or verb in (
        "remove-section",
        "rename-section",
    )
    return sections and any(v.lower() in ("core", "init") for v in operands[:1])


def _git_config_file_write(effects: list[PathEffect], facts: Facts, prot: Protected) -> bool:
    """A git config file written with text that names the hooks path or template folder, or,
    when gatesh set the global ``core.hooksPath``, the global config replaced or removed (an
    append keeps what gatesh wrote)."""
    home = prot.home.rstrip("/")
    globals_ = (f"{home}/.gitconfig", f"{home}/.config/git/config")
    for e in effects:
        if not e.direction.writes:
            continue
        path = e.resolved or e.path
        if not _GIT_CONFIG_FILE.search(path):
            continue
        if _HOOK_KEY_TEXT.search(facts.text):
            return True
        if (
            prot.git_global
            and e.resolved in globals_
            and (e.replaces or e.change.value != "content")
        ):
            return True
    return False


def env_words(cmd: SimpleCommand) -> list[str]:
    """``NAME=value`` words that set the environment of ``cmd`` or of later commands: prefix and
    ``env`` assignments, and ``export``/``declare -x``/``typeset -x``/… arguments."""
    words = list(cmd.assignments)
    if cmd.head in DECLARERS or cmd.head == "setenv":
        args = [a for a in cmd.args if not a.startswith(("-", "+"))]
        if cmd.head == "setenv" and len(args) >= 1:  # csh-style `setenv NAME value`
            args = [f"{args[0]}={args[1] if len(args) > 1 else ''}"]
        words += [a if "=" in a else a + "=" for a in args]
    return words


# --- harness hooks ------------------------------------------------------------------------------

_HOOKS_OFF_TEXT: Final = re.compile(
    r"disableAllHooks|features\.hooks\s*=\s*['\"]?(?:false|0|no|off)|\bhooks\s*=\s*(?:false|0)\b"
    r"|enableHooks['\"]?\s*:\s*false|hooksConfig",
    re.IGNORECASE,
)
_HARNESS_HOMES: Final = frozenset(
    {
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GEMINI_CLI_HOME",
        "GEMINI_DIR",
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
        "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
        "CLAUDE_CODE_SHELL",
        "CODEX_SANDBOX",
    }
)
HARNESSES: Final = frozenset({"claude", "codex", "gemini", "claude-code"})


def says_hooks_off(text: str) -> bool:
    """``_HOOKS_OFF_TEXT.search(text)``, searched only when the case-folded text holds ``hooks``:
    every alternative spells it, and what the pattern's case-blind match takes for each of its
    letters (``K``, the Kelvin sign, ``ſ`` …) case-folds to that letter. The pattern alone costs
    tens of microseconds on a line (case-blind alternatives are tried at every position)."""
    return "hooks" in text.casefold() and _HOOKS_OFF_TEXT.search(text) is not None


def harness_hooks_off(
    cmd: SimpleCommand, effects: list[PathEffect], facts: Facts, prot: Protected
) -> bool:
    """Starts a harness with gatesh's hooks off (a nested agent nothing gates), or moves where a
    harness reads its settings: ``codex -c features.hooks=false``, ``claude --settings`` holding
    ``disableAllHooks``, ``claude --setting-sources`` without the user's, ``CLAUDE_CONFIG_DIR=…``;
    or writes a setting that switches hooks off into any file."""
    head = cmd.head
    if head in HARNESSES:
        args = cmd.args
        if head == "codex":
            values = list(option_values(args, frozenset({"-c", "--config"})))
            if any(
                _HOOKS_OFF_TEXT.search(v) or re.match(r"\s*features\.hooks\s*=", v) for v in values
            ):
                return True
            if any(v == "hooks" for v in option_values(args, frozenset({"--disable"}))):
                return True
        if head in ("claude", "claude-code"):
            settings = list(option_values(args, frozenset({"--settings"})))
            if settings and says_hooks_off(facts.text):
                return True  # inline settings, or a file this text writes, that switch hooks off
            sources = list(option_values(args, frozenset({"--setting-sources"})))
            if any("user" not in v.split(",") for v in sources):
                return True
        if any(a.partition("=")[0] in _HARNESS_HOMES for a in cmd.assignments):
            return True
    if cmd.head in DECLARERS and any(a.partition("=")[0] in _HARNESS_HOMES for a in env_words(cmd)):
        return True
    if says_hooks_off(facts.text):
        writes = any(e.direction.writes for e in effects) or code_writes(cmd)
        return writes and says_hooks_off(cmd.raw + " " + " ".join(cmd.words))
    return False


# --- the environment of an inner gatesh ---------------------------------------------------------

# Variables that move gatesh's folders (S3.4): config, state, data, runtime (the socket: another
# daemon, with a fresh state), the home they default to, and gatesh's own (GATESH_SESSION picks the
# session, GATESH_OPERATOR who answers, GATESH_SYSTEM_CONFIG the system tier).
_GATE_ENV: Final = re.compile(
    r"^(?:XDG_(?:CONFIG|STATE|DATA)_HOME|XDG_RUNTIME_DIR|HOME|GATESH_\w+)$"
)
_ALWAYS_GATE_ENV: Final = re.compile(r"^GATESH_\w+$")
_ENV_UNSET: Final = re.compile(r"(?:^|\s)(?:-u\s*|--unset[=\s])(XDG_\w+|HOME|GATESH_\w+)\b")
_ENV_CLEARS: Final = re.compile(r"\benv\s+(?:-\S+\s+)*?(?:-i\b|--ignore-environment\b|-\s)")
# `VAR=… bash -c '…'`: the reader keeps the inner command, not the shell's own prefix, so the
# text decides: a prefix assignment of a gate variable right before a shell or gatesh (through
# `env`, `sudo`, … and their options). Read word by word in one pass (linear in the text).
_GATE_PREFIX_VAR: Final = re.compile(
    r"(?:XDG_(?:CONFIG|STATE|DATA)_HOME|XDG_RUNTIME_DIR|GATESH_\w+)="
)
_ANY_ASSIGNMENT: Final = re.compile(r"[A-Za-z_]\w*=")
_RUNS_GATESH_WORD: Final = re.compile(r"(?:ba|z|da|k|mk|a)?sh|gatesh")  # a program's basename
_WORD_SEPARATORS: Final = frozenset(";&|()\n")


def _shell_prefix_text(text: str) -> bool:
    """True when ``text`` gives a gate variable to a shell or gatesh as a prefix assignment."""
    pending = False  # a gate variable was assigned in the current run of prefix words
    after_python = False
    for m in re.finditer(r"[^\s;&|()]+|[;&|()\n]", text):
        word = m.group(0).lstrip("\"'`")
        if not word or word[0] in _WORD_SEPARATORS:
            pending = after_python = False
            continue
        if _ANY_ASSIGNMENT.match(word):
            pending = pending or bool(_GATE_PREFIX_VAR.match(word))
            continue
        if not pending:
            continue
        if after_python:
            if word == "-m":
                continue
            if word == "gatesh":
                return True
            pending = after_python = False
            continue
        if word in WRAPPERS or word == "exec" or word.startswith("-"):
            continue
        base = word.rsplit("/", 1)[-1]
        if _RUNS_GATESH_WORD.fullmatch(base):
            return True
        if re.fullmatch(r"python[\d.]*", base):
            after_python = True
            continue
        pending = False
    return False


def gatesh_argv(cmd: SimpleCommand) -> tuple[str, ...] | None:
    """gatesh's own arguments when ``cmd`` runs gatesh (``gatesh X``, ``python -m gatesh X``)."""
    if cmd.head in ("gatesh", "gatesh.py"):
        return cmd.args
    if is_interpreter(cmd.head) and "-m" in cmd.args:
        i = cmd.args.index("-m")
        if i + 1 < len(cmd.args) and cmd.args[i + 1].split(".")[0] == "gatesh":
            return cmd.args[i + 2 :]
    return None


def runs_gatesh(cmd: SimpleCommand, prot: Protected, *, shells: bool = True) -> bool:
    """True when ``cmd`` starts gatesh (its launcher, a shim, ``python -m gatesh``) or, with
    ``shells``, a shell, which a gated session's PATH or harness may resolve to gatesh's shim."""
    if cmd.head in ("gatesh", "gatesh.py") or (shells and cmd.head in SHELLS):
        return True
    argv0 = canon_path(cmd.argv[0].text) if cmd.argv else ""
    if argv0 == "~" or argv0.startswith("~/"):
        argv0 = posixpath.normpath(prot.home + argv0[1:])
    if argv0 in prot.launchers or any(argv0.startswith(d + "/") for d in prot.shims):
        return True
    return gatesh_argv(cmd) is not None


def inner_gatesh_env(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    """Points an inner gatesh at other folders or another session: a gate variable exported, set
    for this shell, unset, or given to a command that runs gatesh or a shell; ``env -i`` before one."""
    for a in env_words(cmd):
        name = a.partition("=")[0]
        if not _GATE_ENV.match(name):
            continue
        if (
            _ALWAYS_GATE_ENV.match(name)
            or cmd.head in DECLARERS
            or runs_gatesh(cmd, prot, shells=name != "HOME")
        ):
            return True
    if cmd.head == "unset" and any(_GATE_ENV.match(a) for a in cmd.args if not a.startswith("-")):
        return True
    if cmd.head in ("read", "mapfile", "readarray", "printf", "print", "getopts"):
        # `read XDG_RUNTIME_DIR <<< /tmp/x`, `printf -v GATESH_SESSION x`: set by a builtin.
        names = (
            list(option_values(cmd.args, frozenset({"-v"})))
            if cmd.head in ("printf", "print")
            else [a for a in cmd.args if not a.startswith("-")]
        )
        if any(_GATE_ENV.match(n) for n in names):
            return True
    if "env" in cmd.wrappers or cmd.head == "env":
        raw = cmd.raw
        if _ENV_UNSET.search(raw):
            return True
        if _ENV_CLEARS.search(raw) and runs_gatesh(cmd, prot, shells=False):
            return True  # no XDG_RUNTIME_DIR: another daemon, with a fresh state
    return False


def env_clears(cmd: SimpleCommand) -> bool:
    """``env -i`` (or ``env -``) runs ``cmd`` with an empty environment."""
    return "env" in cmd.wrappers and bool(_ENV_CLEARS.search(cmd.raw))


def inner_gatesh_env_whole(facts: Facts) -> bool:
    """Bare ``XDG_RUNTIME_DIR=…`` statements (they change this shell's gate), and the prefix of a
    shell the reader peeled (``XDG_STATE_HOME=/tmp/s bash -c '…'``)."""
    if facts.assignments and any(_GATE_ENV.match(a.partition("=")[0]) for a in facts.assignments):
        return True
    text = facts.text
    return ("GATESH_" in text or "XDG_" in text) and _shell_prefix_text(text)

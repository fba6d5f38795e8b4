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

import os
import posixpath
import re
import shutil
from typing import Final

from gatesh._types import Change, Direction, Facts, PathEffect, SetBy, SimpleCommand, Variable
from gatesh.harnesses import Harness
from gatesh.vocab.grammar import WRAPPERS, parse
from gatesh.vocab.programs.interpreters import is_interpreter
from gatesh.vocab.programs.shells import SHELLS
from gatesh.vocab.words import canon_path, option_values

from ._places import Protected
from ._writes import code_writes

__all__ = [
    "DECLARERS",
    "git_hooks_bypass",
    "git_hooks_setting",
    "harness_hooks_off",
    "inner_gatesh_env",
    "inner_gatesh_env_whole",
    "protected_branches",
    "runs_gatesh",
    "says_hooks_off",
    "session_shadow",
    "session_shadow_whole",
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
    cmd: SimpleCommand, index: int, effects: list[PathEffect], facts: Facts, prot: Protected
) -> bool:
    """Moves git's hooks away from gatesh's: ``core.hooksPath`` or ``init.templateDir`` set,
    unset or overridden (``git config``, ``git -c``, ``--config-env``, the ``GIT_CONFIG_*``
    variables by any spelling), a git config file edited to say so, another global or system
    config file that may say so (``GIT_CONFIG_GLOBAL``, ``GIT_CONFIG_SYSTEM``), or, when gatesh
    set the global ``core.hooksPath``, the global config replaced or hidden from git."""
    if cmd.head == "git" and _git_argv_moves_hooks(cmd.args):
        return True
    for v in facts.variables:
        if v.command == index and _git_variable_moves_hooks(v, cmd.head == "git", facts, prot):
            return True
    return _git_config_file_write(effects, facts, prot)


def git_hooks_setting_whole(facts: Facts, prot: Protected) -> bool:
    """A bare ``GIT_CONFIG_GLOBAL=…`` (or another git variable) statement: it holds for every git
    the line runs later."""
    return any(
        v.command == -1 and _git_variable_moves_hooks(v, True, facts, prot) for v in facts.variables
    )


def _git_variable_moves_hooks(v: Variable, for_git: bool, facts: Facts, prot: Protected) -> bool:
    """Whether setting ``v`` (for git, or for the session) can move git's hooks away."""
    name = v.name
    value = v.value
    if not name.startswith(("GIT_", "HOME")) or (v.by is SetBy.UNSET and name.startswith("GIT_")):
        return False
    if name == "GIT_CONFIG_PARAMETERS":
        return value is None or _HOOK_KEY_TEXT.search(value) is not None
    if name.startswith("GIT_CONFIG_KEY_"):
        return value is None or _HOOK_KEYS.match(value) is not None
    if name == "GIT_TEMPLATE_DIR":
        return True
    if name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"):
        return prot.git_global or value is None or _config_file_moves_hooks(value, facts, prot)
    if name == "GIT_CONFIG_NOSYSTEM":
        return prot.git_global
    return name == "HOME" and for_git and prot.git_global


# How much of a config file GIT_CONFIG_GLOBAL names is read to see what it sets.
_CONFIG_BYTES: Final = 65536


def _config_file_moves_hooks(path: str, facts: Facts, prot: Protected) -> bool:
    """Whether the git config file ``path`` (relative to the command's folder) sets the hooks
    path or template folder or includes another file, read now; a file that cannot be read
    whole may (it is written later), and so may one the line writes (or a line that writes a
    path only known when it runs): what it will hold is not there yet."""
    if path == "/dev/null":
        return False
    if path == "~" or path.startswith("~/"):
        path = prot.home + path[1:]
    if not path.startswith("/"):
        if not prot.cwd:
            return True
        path = posixpath.join(prot.cwd, path)
    path = posixpath.normpath(path)
    for e in facts.paths:
        if e.direction.writes and (not e.resolved or e.resolved == path):
            return True
    try:
        with open(path, "rb") as f:
            data = f.read(_CONFIG_BYTES + 1)
    except OSError:
        return True
    if len(data) > _CONFIG_BYTES:
        return True
    text = data.decode("utf-8", "replace")
    return (
        _HOOK_KEY_TEXT.search(text) is not None
        or re.search(r"(?im)^\s*\[include", text) is not None
    )


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
# The programs that start a harness (``claude``, ``codex`` …), from the shared vocabulary.
HARNESSES: Final = frozenset(p for h in Harness for p in h.programs)


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
    harness = Harness.by_program(cmd.head)
    if harness is not None:
        args = cmd.args
        if harness is Harness.CODEX:
            values = list(option_values(args, frozenset({"-c", "--config"})))
            if any(
                _HOOKS_OFF_TEXT.search(v) or re.match(r"\s*features\.hooks\s*=", v) for v in values
            ):
                return True
            if any(v == "hooks" for v in option_values(args, frozenset({"--disable"}))):
                return True
        if harness is Harness.CLAUDE_CODE:
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


def inner_gatesh_env(cmd: SimpleCommand, index: int, facts: Facts, prot: Protected) -> bool:
    """Points an inner gatesh at other folders or another session: a gate variable (GATESH_*,
    XDG_*, HOME) set for this shell by any spelling (``export``, ``declare``, ``read``,
    ``printf -v``, a name reference, ``export $x=…``), unset, or given to a command that runs
    gatesh or a shell; a variable whose name is only known when it runs set for this shell (it
    could be one); ``env -i`` or ``env -u`` before gatesh."""
    for v in facts.variables:
        if v.command != index:
            continue
        name = (v.value or "") if v.by is SetBy.NAMEREF else v.name
        if not name:
            if v.by.lasting and could_be_sensitive(v.text):
                return True  # `export $(…)`, `export $x=…`: it may be GATESH_OPERATOR
            continue
        if not _GATE_ENV.match(name):
            continue
        if _ALWAYS_GATE_ENV.match(name) or v.by.lasting:
            return True
        if runs_gatesh(cmd, prot, shells=name != "HOME"):
            return True
    if "env" in cmd.wrappers or cmd.head == "env":
        raw = cmd.raw
        if _ENV_UNSET.search(raw):
            return True
        if _ENV_CLEARS.search(raw) and runs_gatesh(cmd, prot, shells=False):
            return True  # no XDG_RUNTIME_DIR: another daemon, with a fresh state
    return False


# The starts of the names whose setting changes what the gate or its hooks use.
_SENSITIVE: Final = ("GATESH_", "XDG_", "HOME", "PATH", "SHELL", "GIT_")
_NAME_START: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def could_be_sensitive(written: str) -> bool:
    """Whether a variable name only known when it runs, as written (``$x``, ``GIT_$k``,
    ``arr$n``), could be one the gate or its hooks use: its known start agrees with one."""
    m = _NAME_START.match(written.lstrip("\"'"))
    start = m.group(0) if m else ""
    return any(s.startswith(start) or start.startswith(s) for s in _SENSITIVE)


def env_clears(cmd: SimpleCommand) -> bool:
    """``env -i`` (or ``env -``) runs ``cmd`` with an empty environment."""
    return "env" in cmd.wrappers and bool(_ENV_CLEARS.search(cmd.raw))


def inner_gatesh_env_whole(facts: Facts) -> bool:
    """Bare ``XDG_RUNTIME_DIR=…`` statements (they change this shell's gate), and the prefix of a
    shell the reader peeled (``XDG_STATE_HOME=/tmp/s bash -c '…'``)."""
    for v in facts.variables:
        if v.command == -1 and (
            _GATE_ENV.match(v.name) or (not v.name and could_be_sensitive(v.text))
        ):
            return True
    text = facts.text
    return ("GATESH_" in text or "XDG_" in text) and _shell_prefix_text(text)


# --- what the session finds by name -------------------------------------------------------------

# The programs the gate and its hooks are found as: gatesh itself, git (whose hooks gate pushes
# and rebases) and the shells (the shims).
SHADOWED: Final = frozenset({"gatesh", "git", "bash", "sh", "zsh"})


def session_shadow(
    cmd: SimpleCommand, index: int, effects: list[PathEffect], facts: Facts, prot: Protected
) -> bool:
    """Changes what the session finds as gatesh, git or a shell: a PATH that puts a folder holding
    one (now, or written by this line), or a folder only known when it runs, before the others;
    one of them written into a folder on PATH (:func:`_on_path`); SHELL set for the session; an
    alias of gatesh or git; ``hash -p FILE git``."""
    for e in effects:
        # a write that leaves a program there (an unknown use, as of a path in inline code, a
        # removal or a change of mode or times leaves none a first write did not)
        if (
            e.direction is Direction.WRITE
            and e.change in (Change.CONTENT, Change.CREATE)
            and e.resolved
            and _on_path(e.resolved, prot)
        ):
            return True
    for v in facts.variables:
        if v.command != index:
            continue
        if v.name == "PATH" and v.by is not SetBy.UNSET:
            # for one command, only what that command is found as; for the session, all of them
            names = SHADOWED if v.by.lasting else SHADOWED & {cmd.head}
            if names and _path_shadows(v, facts, prot, names):
                return True
        elif v.name == "SHELL" and v.by.lasting and v.by is not SetBy.UNSET:
            return True  # programs that start "the user's shell" start this one
    if cmd.head == "alias":
        return any(
            "=" in a and a.split("=", 1)[0] in SHADOWED for a in cmd.args if not a.startswith("-")
        )
    if cmd.head == "hash":
        opts = [a for a in cmd.args if a.startswith("-")]
        return any(o.startswith("-p") for o in opts) and any(a in SHADOWED for a in cmd.args)
    return False


def session_shadow_whole(facts: Facts, prot: Protected) -> bool:
    """A function named gatesh, git or a shell, and bare ``PATH=``/``SHELL=`` statements."""
    if not SHADOWED.isdisjoint(facts.functions):
        return True
    for v in facts.variables:
        if v.command == -1 and v.name == "PATH" and _path_shadows(v, facts, prot):
            return True
        if v.command == -1 and v.name == "SHELL":
            return True
    return False


def _path_shadows(
    v: Variable, facts: Facts, prot: Protected, names: frozenset[str] = SHADOWED
) -> bool:
    """Whether the PATH ``v`` sets puts, before the folders it had, one only known when it runs
    or one holding gatesh, git or a shell (now, or written by this line)."""
    entries = (v.value if v.value is not None else v.text).split(":")
    written = {
        posixpath.dirname(e.resolved)
        for e in facts.paths
        if e.direction.writes and e.resolved and posixpath.basename(e.resolved) in names
    }
    home = os.path.expanduser("~")
    known = _static_values(facts)
    for entry in entries:
        entry = entry.strip("\"'")
        if entry in ("$PATH", "${PATH}"):
            return False  # what follows comes after the folders gatesh was found in
        if not entry:
            continue
        for spelling in ("${HOME}", "$HOME", "~"):
            if entry == spelling or entry.startswith(spelling + "/"):
                entry = home + entry[len(spelling) :]
        entry = _VARIABLE.sub(lambda m: known.get(m.group(1) or m.group(2), m.group(0)), entry)
        if "$" in entry or "`" in entry:
            return True  # a folder only known when it runs
        folder = posixpath.normpath(entry)
        if folder in written:
            return True
        if folder in prot.shims:
            continue  # gatesh's own shims: what they hold is the gate
        for name in names:
            path = posixpath.join(folder, name)
            if path in prot.launchers or not os.access(path, os.X_OK):
                continue  # gatesh's own launcher, or nothing of that name
            if name == "git" and _same_file(path, shutil.which("git")):
                continue  # the git the gate itself finds: it runs the hooks
            return True
    return False


_VARIABLE: Final = re.compile(r"\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)")
# The user's bin folders a login shell puts first on PATH when they exist (Debian's ~/.profile),
# so one made now is on the next session's PATH.
_USER_BINS: Final = ("bin", ".local/bin")


def _on_path(path: str, prot: Protected) -> bool:
    """Whether writing ``path`` puts a program named gatesh, git or a shell where the session
    finds programs: a folder of the gate's PATH (the person's, which the session inherits) or a
    user's bin folder. gatesh's own shims and launchers are its protected places already."""
    folder, name = posixpath.split(path)
    if name not in SHADOWED:
        return False
    folders = {posixpath.join(prot.home, b) for b in _USER_BINS}
    folders.update(
        posixpath.normpath(f) for f in os.environ.get("PATH", "").split(":") if f.startswith("/")
    )
    return folder in folders


def _static_values(facts: Facts) -> dict[str, str]:
    """The variables the line gives exactly one static value (``VIRTUAL_ENV=/p/.venv`` of a venv's
    activate script): a PATH entry naming one is that folder."""
    values: dict[str, set[str]] = {}
    for v in facts.variables:
        if v.name and v.by is not SetBy.UNSET and (v.value is not None or v.text):
            values.setdefault(v.name, set()).add(v.value if v.value is not None else "\0")
    return {n: next(iter(vs)) for n, vs in values.items() if len(vs) == 1 and "\0" not in vs}


def _same_file(path: str, other: str | None) -> bool:
    try:
        return other is not None and os.path.samefile(path, other)
    except OSError:
        return False


# --- git routes around its hooks ----------------------------------------------------------------

# Plumbing that updates a repository's refs with no pre-push hook run on this side.
_HOOKLESS_PUSH: Final = frozenset({"send-pack", "http-push", "receive-pack"})
# Options that push every branch (the protected ones too).
_EVERY_BRANCH: Final = frozenset({"--all", "--mirror", "--branches"})


def git_hooks_bypass(cmd: SimpleCommand, cwd: str, branches: frozenset[str]) -> bool:
    """Updates a protected branch (or every branch, or a ref only known when it runs) with git's
    hooks skipped: ``git push --no-verify``, or the plumbing that runs no pre-push hook
    (``send-pack``, ``http-push``, ``receive-pack``). A push to another branch with hooks skipped
    is the rater's (``git.skip-hooks``): the hooks gate only the protected ones."""
    if cmd.head != "git":
        return False
    argv = parse("git", cmd.args, tuple(w.static for w in cmd.argv[1:]))
    sub = argv.subcommand
    if argv.has("-h", "--help", "--dry-run", level=1) or (
        sub == "push" and argv.has("-n", level=1)
    ):
        return False  # help, or a dry run: nothing is pushed
    if sub in _HOOKLESS_PUSH:
        refs = list(argv.operands[1:])
    elif sub == "push" and argv.has("--no-verify", level=1):
        refs = list(argv.operands[1:])
    else:
        return False
    if argv.unknown or argv.has(*_EVERY_BRANCH, level=1):
        return True
    if sub == "receive-pack":
        return True  # updates whatever refs the pack on its input names
    if not refs:
        current = _current_branch(cwd)
        return current is None or current in branches
    deleting = argv.has("--delete", "-d", level=1)
    for ref in refs:
        if "$" in ref or "`" in ref:
            return True
        src, colon, dst = ref.lstrip("+").partition(":")
        target = dst if colon else src
        if deleting:
            target = src
        target = target.removeprefix("refs/heads/")
        if target in ("HEAD", "@"):
            target = _current_branch(cwd) or "HEAD"
        if target in branches or target == "HEAD" or not target:
            return True
    return False


def protected_branches(cwd: str, configured: tuple[str, ...]) -> frozenset[str]:
    """The branches gatesh's git hooks protect (S11.3): the configured ones and each remote's
    default branch, read from the repository's files (no git run)."""
    out = set(configured)
    top = _git_dir(cwd)
    if top is not None:
        remotes = posixpath.join(top, "refs", "remotes")
        try:
            names = os.listdir(remotes)
        except OSError:
            names = []
        for remote in names:
            head = _read_line(posixpath.join(remotes, remote, "HEAD"))
            if head.startswith("ref: refs/remotes/"):
                out.add(head.rsplit("/", 1)[-1])
    return frozenset(out)


def _git_dir(cwd: str) -> str | None:
    probe = cwd
    for _ in range(64):
        if not probe:
            return None
        dot = posixpath.join(probe, ".git")
        if os.path.isdir(dot):
            return dot
        if os.path.isfile(dot):
            line = _read_line(dot)
            if line.startswith("gitdir:"):
                return posixpath.normpath(posixpath.join(probe, line[7:].strip()))
            return None
        parent = posixpath.dirname(probe)
        if parent == probe:
            return None
        probe = parent
    return None


def _read_line(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.readline(4096).strip()
    except OSError:
        return ""


def _current_branch(cwd: str) -> str | None:
    """The branch checked out in the repository holding ``cwd`` (None: unknown or detached)."""
    top = _git_dir(cwd)
    head = _read_line(posixpath.join(top, "HEAD")) if top else ""
    return head[len("ref: refs/heads/") :] if head.startswith("ref: refs/heads/") else None

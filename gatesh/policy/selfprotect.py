"""Self-protection (S3.4): tampering with the gate is an attack, at every rung.

Four families, one table: changing gatesh's own files (config, state, audit log, socket, the
system tier), stopping or tracing the daemon, disarming the shell hook of a gated session, and
leaving the gate (a human-only verb, or a shell that nothing gates). A project's ``.gatesh.toml``
is not protected: that tier can only tighten (S12), so editing it is ordinary work.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from gatesh._paths import GatePaths
from gatesh._types import Facts, Finding, Outcome, SimpleCommand
from gatesh.policy._rules import (
    FIND_FILTERS,
    canon_path,
    has_long,
    has_short,
    inline_code,
    option_values,
    reads_code_from_stdin,
    split_args,
    unquote,
)
from gatesh.vocab.programs import SHELLS, is_interpreter

__all__ = ["RULES", "SelfRule", "check"]


@dataclass(frozen=True)
class Protected:
    """The protected locations of one check, absolute, computed once per call."""

    roots: tuple[str, ...]
    home: str
    volatile: tuple[str, ...] = ()  # roots matched only themselves, never through a parent folder


@dataclass(frozen=True)
class SelfRule:
    """One self-protection rule; like :class:`gatesh.policy._rules.Rule`, with the protected paths.

    Invariant: ids start with ``self.``; examples are checked against the default XDG layout
    under the test's home folder.
    """

    id: str
    reason: str
    test: Callable[[SimpleCommand, Facts, Protected], bool]
    positive: tuple[str, ...]
    negative: tuple[str, ...]
    # What no single command shows (bare `NAME=value` statements, function definitions, `(( ))`):
    # matched once per check, after every command has been matched against every rule.
    whole: Callable[[Facts], bool] | None = None


# --- gatesh's own files -----------------------------------------------------------------------

# Where gatesh lives in any layout, for words whose value the reader cannot know ($XDG_*).
_GENERIC: Final = re.compile(
    r"(?:^|/)(?:\.config/gatesh|\.local/(?:state|share)/gatesh|gatesh-\d+)(?:/|$)|^/etc/gatesh(?:/|$)"
    r"|/run/user/\d+/gatesh(?:/|$)|\$\{?XDG_(?:CONFIG|STATE|DATA)_HOME\}?/gatesh|\$\{?XDG_RUNTIME_DIR\}?/gatesh"
)
_GLOB_CHARS: Final = re.compile(r"[*?\[]")


def _absolute(word: str, prot: Protected) -> str:
    path = canon_path(word)
    if path == "~" or path.startswith("~/"):
        path = prot.home + path[1:]
    return posixpath.normpath(path) if path.startswith("/") else path


def _touches(word: str, prot: Protected, *, ancestors: bool) -> bool:
    """True when ``word`` names a protected path (or, with ``ancestors``, a folder holding one)."""
    text = unquote(word)
    if not text or text.startswith("-"):
        return False
    if _GENERIC.search(text):
        return True
    path = _absolute(text, prot)
    if not path.startswith("/"):
        return False
    globbed = bool(_GLOB_CHARS.search(path))
    for root in prot.roots:
        if path == root or path.startswith(root + "/"):
            return True
        if root in prot.volatile:
            continue  # the socket folder is recreated on demand: clearing /tmp is not an attack
        if ancestors and (root.startswith(path.rstrip("/") + "/") or path == "/"):
            return True
        if globbed:
            # `rm -rf ~/.config/*` names the config folder through a glob.
            parts = root.split("/")
            for n in range(2, len(parts) + 1):
                prefix = "/".join(parts[:n])
                if fnmatch.fnmatchcase(prefix, path) and (ancestors or prefix == root):
                    return True
    return False


_DELETERS: Final = frozenset({"rm", "rmdir", "unlink", "shred", "srm", "wipe", "trash", "trash-put",
                              "mv", "gio", "kioclient", "kioclient5"})
_DEST_WRITERS: Final = frozenset({"cp", "install", "ln", "rsync", "scp", "link", "rclone"})
_FILE_WRITERS: Final = frozenset({
    "tee", "truncate", "touch", "chmod", "chown", "chgrp", "chattr", "setfacl", "chcon", "mkdir",
    "mkfifo", "mknod", "vi", "vim", "nvim", "nano", "emacs", "ed", "ex", "pico", "micro", "code",
    "subl", "gedit", "kate", "sqlite3", "dd", "patch", "git", "tar", "unzip", "7z", "sed", "perl",
    "ruby", "sponge", "openssl", "ssh-keygen", "crontab",
})
# Commands that only read the paths they are given.
_READERS: Final = frozenset({
    "cat", "less", "more", "head", "tail", "ls", "ll", "stat", "file", "grep", "egrep", "fgrep",
    "rg", "ag", "diff", "cmp", "wc", "md5sum", "sha256sum", "sha1sum", "sha512sum", "jq", "bat",
    "du", "tree", "realpath", "readlink", "test", "[", "[[", "cd", "pushd", "echo", "printf",
    "basename", "dirname", "gatesh", "find", "lsof", "fuser", "namei", "exa", "eza", "column",
    "python", "python3", "node", "zcat", "view", "od", "xxd", "hexdump", "strings", "source", ".",
    "ssh", "mosh",  # their command operands run on the other host
})


def _operand_words(cmd: SimpleCommand) -> list[str]:
    return [w.text for w in cmd.argv[1:]]


def _deletes_or_moves(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    if cmd.head not in _DELETERS:
        return False
    words = _operand_words(cmd)
    if cmd.head == "mv" and not any(w in ("-t", "--target-directory") or w.startswith("--target-directory=") for w in words):
        # Moving something *into* a folder that holds gate files leaves them in place.
        _, operands = split_args(words, frozenset({"-S", "--suffix"}))
        if len(operands) >= 2:
            return any(_touches(w, prot, ancestors=True) for w in operands[:-1]) or _touches(
                operands[-1], prot, ancestors=False)
    return any(_touches(w, prot, ancestors=True) for w in words)


def _writes_into(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    if any(t is not None and _touches(t, prot, ancestors=False) for t in cmd.writes):
        return True
    head = cmd.head
    words = _operand_words(cmd)
    if head in _DEST_WRITERS:
        _, operands = split_args(words, frozenset({"-t", "--target-directory", "-S", "--suffix", "-m", "--mode",
                                                    "-o", "--owner", "-g", "--group", "-e"}))
        targets = operands[-1:] + [v for i, v in enumerate(words[1:]) if words[i] in ("-t", "--target-directory")]
        targets += [w.split("=", 1)[1] for w in words if w.startswith("--target-directory=")]
        return any(_touches(t, prot, ancestors=False) for t in targets)
    if head == "find":
        deletes = "-delete" in words or any(
            w in ("-exec", "-execdir", "-ok", "-okdir") and i + 1 < len(words)
            and words[i + 1].rsplit("/", 1)[-1] in _DELETERS for i, w in enumerate(words))
        # A filtered find over a parent folder deletes a selection: the rater judges its scope.
        filtered = any(w in FIND_FILTERS for w in words)
        return deletes and any(_touches(w, prot, ancestors=not filtered) for w in words)
    if head in ("chmod", "chown", "chgrp", "setfacl", "chattr"):
        opts, _ = split_args(words)
        recursive = has_short(opts, "R") or has_long(opts, "--recursive")
        return any(_touches(w, prot, ancestors=recursive) for w in words)
    if head == "dd":
        return any(_touches(w[3:], prot, ancestors=False) for w in words if w.startswith("of="))
    if head in ("fuser",):
        return "-k" in words and any(_touches(w, prot, ancestors=False) for w in words)
    if head in _FILE_WRITERS:
        return any(_touches(w, prot, ancestors=False) for w in words)
    if head not in _READERS and not is_interpreter(head):
        # An unknown program handed a gate path may write it; a substitution is judged on its own.
        return any(w.static and _touches(w.text, prot, ancestors=False) for w in cmd.argv[1:])
    if is_interpreter(head):
        return any(_touches_text(code, prot) and _WRITE_CODE.search(code) for code in inline_code(cmd))
    return False


_WRITE_CODE: Final = re.compile(
    r"""open\(.*?,\s*['"](?:[wax]|r\+)|mode\s*=\s*['"][wax]|\.write|remove|unlink|rmtree|rename|replace|chmod"""
    r"""|truncate|mkdir|writeFile|appendFile|rmSync|rm\(|copy|move|symlink|link\(|write_text|write_bytes""")


_GENERIC_TEXT: Final = re.compile(r"/etc/gatesh\b|\.config/gatesh\b|\.local/(?:state|share)/gatesh\b")


def _touches_text(code: str, prot: Protected) -> bool:
    if _GENERIC.search(code) or _GENERIC_TEXT.search(code):
        return True
    folded = code.replace("$HOME", "~").replace("os.path.expanduser('~')", "~")
    for root in prot.roots:
        if root in code:
            return True
        if root.startswith(prot.home + "/") and "~" + root[len(prot.home):] in folded:
            return True
    return False


_CD: Final = frozenset({"cd", "pushd"})
_WRITER_HEADS: Final = _DELETERS | _DEST_WRITERS | _FILE_WRITERS


def _works_inside(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    # `cd ~/.config/gatesh && rm config.toml`: a later writer works on relative paths in there.
    if cmd.head not in _CD or not cmd.args or not _touches(cmd.args[-1], prot, ancestors=False):
        return False
    return any(c.head in _WRITER_HEADS or any(c.writes) for c in facts.commands)


# --- the daemon -------------------------------------------------------------------------------

_KILLERS: Final = frozenset({"kill", "pkill", "killall", "skill", "slay", "tkill", "xkill"})
_TRACERS: Final = frozenset({"strace", "ltrace", "gdb", "lldb", "perf", "bpftrace", "ptrace", "gcore"})
_FINDERS: Final = frozenset({"pgrep", "pidof", "ps", "cat", "lsof", "fuser", "pstree", "ss", "head"})
_GATESH_WORD: Final = re.compile(r"gatesh|daemon\.(?:sock|lock|pid)", re.IGNORECASE)


def _names_daemon(cmd: SimpleCommand, facts: Facts) -> bool:
    if any(_GATESH_WORD.search(w.text) for w in cmd.argv[1:]):
        return True
    if any(not w.static for w in cmd.argv[1:]):
        return any(c.context in ("substitution", "process-substitution") and c.head in _FINDERS
                   and any(_GATESH_WORD.search(w) for w in c.words) for c in facts.commands)
    return False


def _kills_daemon(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    if cmd.head in _KILLERS:
        return _names_daemon(cmd, facts)
    if cmd.head in ("systemctl", "launchctl", "service"):
        verbs = {"stop", "kill", "disable", "mask", "restart", "unload", "remove", "bootout", "freeze"}
        return bool(verbs & set(cmd.args)) and _names_daemon(cmd, facts)
    return False


def _traces_daemon(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    attached = cmd.head in _TRACERS or any(w in _TRACERS for w in cmd.wrappers)
    if not attached:
        return False
    raw = " ".join(cmd.words) + " " + cmd.raw
    return bool(re.search(r"(?:^|\s)(?:-p|--pid|--attach|attach|-ex)\b", raw)) and (
        _names_daemon(cmd, facts) or bool(_GATESH_WORD.search(cmd.raw)))


# --- the shell hook ---------------------------------------------------------------------------

# History variables (HISTCONTROL, HISTIGNORE, HISTSIZE) are `self.hook-history`'s (only making them
# unchangeable is tampering); HISTFILE only changes the file on disk, never the in-memory list the
# gate reads (the rater judges evasion).
_HOOK_VARS: Final = re.compile(
    r"^(?:PROMPT_COMMAND|preexec_functions|precmd_functions|zshaddhistory_functions|BASH_ENV|ENV"
    r"|PS0|histchars|HISTCMD)(?:\[[^\]]*\])?\+?(?:=|$)"
)
_HOOK_FUNCS: Final = re.compile(r"gatesh|^(?:preexec|precmd|TRAPDEBUG|accept-line|zshaddhistory|command_not_found_handle)$",
                                re.IGNORECASE)
_HOOK_ARRAYS: Final = frozenset({"preexec_functions", "precmd_functions", "zshaddhistory_functions"})
# `NAME[KEY]+=value` as written (a declare argument, a prefix or a bare statement).
_ASSIGN_WORD: Final = re.compile(r"^([A-Za-z_]\w*)(?:\[([^\]]*)\])?(\+?=)(.*)$", re.DOTALL)
_HOOK_FUNC_TEXT: Final = re.compile(r"TRAPDEBUG|__gatesh_|zshaddhistory|precmd|preexec|accept-line")
_DECLARERS: Final = frozenset({"export", "declare", "typeset", "readonly", "local", "integer", "float"})


def _assignments(cmd: SimpleCommand | None, facts: Facts) -> list[str]:
    """Every ``NAME=value`` the command (or, with no command, the whole line) writes, as written."""
    if cmd is None:
        return list(facts.assignments)
    words = list(cmd.assignments)
    if cmd.head in _DECLARERS:
        words += [a for a in cmd.args if not a.startswith(("-", "+"))]
    return words


def _rewrites_functions(word: str) -> bool:
    """zsh's ``functions`` array: ``functions[TRAPDEBUG]=…``, ``functions=()``, ``functions+=([f]=…)``."""
    m = _ASSIGN_WORD.match(word)
    if m is None or m.group(1) != "functions":
        return False
    key, op, value = m.group(2), m.group(3), m.group(4)
    if key is not None:
        return bool(_HOOK_FUNCS.search(unquote(key)))
    return op == "=" or bool(_HOOK_FUNC_TEXT.search(value))


def _zsh_option_off(name: str, setting: bool) -> bool:
    """True when ``setopt NAME`` (``setting``) or ``unsetopt NAME`` turns DEBUG_BEFORE_CMD off.

    zsh folds case and underscores and reads a ``no`` prefix as the inverse. Without
    DEBUG_BEFORE_CMD the DEBUG trap runs *after* each command: the gate would judge what already ran.
    (Measured on zsh 5.9: LOCAL_OPTIONS, ERR_EXIT and `emulate` do not stop the trap's skip.)
    """
    norm = name.lower().replace("_", "")
    if norm.startswith("no"):
        norm, setting = norm[2:], not setting
    return norm == "debugbeforecmd" and not setting


def _listing_only(cmd: SimpleCommand) -> bool:
    """``declare -p NAME``, ``typeset -f NAME``, ``functions NAME``, ``alias NAME``: prints, changes nothing."""
    if any("=" in a for a in cmd.args):
        return False
    opts = [a for a in cmd.args if a.startswith(("-", "+"))]
    if cmd.head in ("declare", "typeset"):
        return bool(opts) and all(o.startswith("-") and set(o[1:]) <= set("pfF") for o in opts)
    return cmd.head in ("functions", "alias") and not opts


def _disarms_hook(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    head, args = cmd.head, cmd.args
    if head == "trap":
        return bool(args) and args[0] not in ("-p", "-l") and any(a.upper() in ("DEBUG", "RETURN") for a in args[1:])
    if head == "set":
        if any(a in ("-A", "+A") and i + 1 < len(args) and args[i + 1] in _HOOK_ARRAYS for i, a in enumerate(args)):
            return True  # zsh `set -A precmd_functions …`
        if any(a in ("-o", "+o") and i + 1 < len(args) and _zsh_option_off(args[i + 1], a == "-o")
               for i, a in enumerate(args)):
            return True
        return any(a.startswith("+") and "T" in a for a in args) or any(
            a == "+o" and i + 1 < len(args) and args[i + 1] in ("functrace", "history") for i, a in enumerate(args))
    if head == "shopt":
        # promptvars off: PS0 is printed, not expanded, so the gate never runs for an entry.
        opts, names = split_args(args)
        return has_short(opts, "u") and not has_short(opts, "o") and bool({"extdebug", "promptvars"} & set(names))
    if head in ("setopt", "unsetopt"):
        return any(_zsh_option_off(a, head == "setopt") for a in args if not a.startswith(("-", "+")))
    if head == "shift":
        return any(a in _HOOK_ARRAYS for a in args)
    if head == "unset" and any(_rewrites_functions(a + "=") for a in args if a.startswith("functions[")):
        return True
    if any(_rewrites_functions(a) for a in _assignments(cmd, facts)):
        return True
    if head == "bind":
        opts_ok = {"-p", "-P", "-v", "-V", "-s", "-S", "-l"}
        return bool(args) and not all(a in opts_ok for a in args) and not (args[0] in ("-q", "-Q") and len(args) == 2)
    if head == "bindkey":
        _, operands = split_args(args, frozenset({"-M"}))
        return len(operands) >= 2 or any(a in ("-r", "-d", "-D", "-A", "-N", "-s", "-R", "-e", "-v", "-a") for a in args)
    if head == "zle":
        return "accept-line" in args or any(a in ("-D", "-A") for a in args)
    if head in ("unset", "unfunction", "unalias", "unhash"):
        return any(_HOOK_FUNCS.search(a) or _HOOK_VARS.match(a) for a in args if not a.startswith("-"))
    if head == "add-zsh-hook":
        return any(a in ("-d", "-D") for a in args)
    if head == "enable":
        return "-n" in args and any(a in ("trap", "set", "shopt", "bind", "builtin", "history", "fc") for a in args)
    if head in _DECLARERS and not _listing_only(cmd):
        if any(_HOOK_VARS.match(a) for a in args if not a.startswith("-")):
            return True
    if any(_HOOK_VARS.match(a) for a in cmd.assignments):
        return True
    return any(f.upper() == "TRAPDEBUG" or (_HOOK_FUNCS.search(f) and "gatesh" in f.lower()) for f in facts.functions)


def _disarms_hook_whole(facts: Facts) -> bool:
    """Bare statements: ``PS0=``, ``precmd_functions=()``, ``functions[TRAPDEBUG]=``."""
    return any(_HOOK_VARS.match(a) or _rewrites_functions(a) for a in facts.assignments) or any(
        f.upper() == "TRAPDEBUG" for f in facts.functions)


# The gate's own functions and variables (`__gatesh_gate`, `__gatesh_v`, `__gatesh_state` …).
_GATESH_NAME: Final = re.compile(r"(?<![\w${])__gatesh_")
# Builtins whose operands are names of variables, functions or aliases.
_NAME_TAKERS: Final = frozenset({
    "unset", "unfunction", "unhash", "unalias", "alias", "functions", "autoload", "let", "read", "mapfile",
    "readarray", "getopts", "vared", "disable", "enable", "shift", "add-zsh-hook", "zle", "nameref",
}) | _DECLARERS
_NAME_OPTIONS: Final = {"printf": frozenset({"-v"}), "print": frozenset({"-v"}), "wait": frozenset({"-p"})}
# `${__gatesh_v:=…}`, and `(( __gatesh_v = 1 ))` / `$(( __gatesh_v++ ))`: the reader records no command
# for an arithmetic statement, so its text decides. Each alternative is anchored on a literal and
# scans forward without nesting (linear).
_GATESH_EXPANSION_WRITE: Final = re.compile(
    r"\$\{__gatesh_\w*+(?:\[[^\]]*+\])?:?=|\(\([^()]*?__gatesh_\w*+\s*+(?:\[[^\]]*+\]\s*+)?(?:[-+*/%&|^]|<<|>>)?=(?!=)"
    r"|\(\([^()]*?(?:\+\+|--)\s*+__gatesh_|__gatesh_\w*+\s*+(?:\+\+|--)"
)


def _names_gate_internals(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    if cmd.head.startswith("__gatesh_") or (cmd.argv and cmd.argv[0].text.startswith("__gatesh_")):
        return True  # running the hook's own functions by hand
    if any(f.startswith("__gatesh_") for f in facts.functions):
        return True  # redefining one (`__gatesh_gate() { echo '0)'; }`)
    if cmd.head in _NAME_TAKERS and not _listing_only(cmd):
        if any(_GATESH_NAME.search(a) for a in cmd.args):
            return True
    names = _NAME_OPTIONS.get(cmd.head)
    if names and any(_GATESH_NAME.match(v) for v in option_values(cmd.args, names)):
        return True
    if any(_GATESH_NAME.match(a) for a in cmd.assignments):
        return True
    return any(not w.static and _GATESH_EXPANSION_WRITE.search(w.text) for w in cmd.argv)


def _names_gate_internals_whole(facts: Facts) -> bool:
    if any(_GATESH_NAME.match(a) for a in facts.assignments) or any(f.startswith("__gatesh_") for f in facts.functions):
        return True
    return "__gatesh_" in facts.text and bool(_GATESH_EXPANSION_WRITE.search(facts.text))


# What the hooks call by name without `builtin` (or call `builtin` itself): a function or alias of
# that name, or a disabled builtin, changes what the gate does. zsh's TRAPDEBUG runs `print` to hand
# the entry to gatesh and `setopt ERR_EXIT` to skip a refused one; bash's `local`, `return`.
_HOOK_BUILTINS: Final = frozenset({
    "builtin", "command", "local", "return", "print", "printf", "setopt", "unsetopt", "emulate", "history",
    "shopt", "set", "unset", "declare", "typeset", "kill", "eval",
})


def _shadows_hook_builtin(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    if cmd.head == "alias":
        return any("=" in a and a.split("=", 1)[0] in _HOOK_BUILTINS for a in cmd.args)
    if cmd.head == "disable":  # zsh: `disable print` turns the builtin off
        return any(a in _HOOK_BUILTINS for a in cmd.args)
    if cmd.head == "enable":  # bash: `enable -n local`
        return "-n" in cmd.args and any(a in _HOOK_BUILTINS for a in cmd.args)
    return False


# The reader takes `local() { …; }` for a declaration (no function recorded): the text decides.
_DECLARER_FUNC: Final = re.compile(r"(?<![\w-])(?:local|declare|typeset|export|readonly)[^\S\n]*+\([^\S\n]*+\)")


def _shadows_hook_builtin_whole(facts: Facts) -> bool:
    return any(f in _HOOK_BUILTINS for f in facts.functions) or bool(_DECLARER_FUNC.search(facts.text))


# The history settings the bash hook sets again before every entry is read (see
# gatesh/shell/bash_hook.bash): while it can, nothing a command does to them or to the history
# list changes what the gate reads next, and the user's own values still decide what the list
# keeps. Only a setting made unchangeable stops the hook from setting it.
_HISTORY_VARS: Final = frozenset({"HISTCONTROL", "HISTIGNORE", "HISTSIZE"})


def _tampers_history(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    """``readonly HISTSIZE=0``, ``declare -r HISTCONTROL=ignorespace``, ``typeset -r HISTIGNORE``;
    also ``shopt -uo history`` (``set +o history`` spelt as shopt: the hook cannot turn the list
    back on from its prompt function, so every later entry would go unread and be refused)."""
    if cmd.head == "shopt":
        opts, names = split_args(cmd.args)
        return has_short(opts, "u") and has_short(opts, "o") and "history" in names
    readonly = cmd.head == "readonly" or (
        cmd.head in ("declare", "typeset", "local", "export")
        and any(a.startswith("-") and not a.startswith("--") and "r" in a[1:] for a in cmd.args))
    if not readonly:
        return False
    names = {a.split("=", 1)[0].removesuffix("+") for a in cmd.args if not a.startswith(("-", "+"))}
    return bool(_HISTORY_VARS & names)


def _reruns_edited(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    """``fc`` and zsh's ``r`` run a history line again; an edited or substituted one was never gated.

    The gate sees only the ``fc`` line. Re-running an earlier entry unchanged (``fc -s``, ``r``,
    ``fc -e - 12``) runs what was gated when it was typed, so it stays ordinary. A substitution
    (``fc -s PAT=REP``, ``r old=new``) or an editor (``fc``, ``fc -e CMD``) makes a new command the gate
    never read: that is the escape.
    """
    head, args = cmd.head, cmd.args
    if head == "r":
        opts, operands = split_args(args)
        return not opts and any(re.match(r"^[^=]+=", a) for a in operands)
    if head != "fc":
        return False
    opts, operands = split_args(args, frozenset({"-e"}))
    if has_short([o for o in opts if o != "-"], "lpPRWAI"):
        return False  # listing, or the history stack and file (self.hook-history judges those)
    editors = [opts[i + 1] for i, o in enumerate(opts[:-1]) if o == "-e"]
    if any(e != "-" for e in editors):
        return True
    if not editors and not has_short(opts, "s"):
        return True  # `fc` alone opens $FCEDIT and runs what the editor leaves
    return any("=" in a for a in operands)


# --- leaving the gate -------------------------------------------------------------------------

# Human-only verbs (S9.5); `config` changes and `watch` (which answers prompts) included.
_HUMAN_VERBS: Final = frozenset({"approve", "deny", "resume", "mandate", "watch", "uninstall", "answer"})
_CONFIG_READS: Final = frozenset({"show", "get", "path", "list", "--json", "--help"})


def _gatesh_argv(cmd: SimpleCommand) -> tuple[str, ...] | None:
    if cmd.head in ("gatesh", "gatesh.py"):
        return cmd.args
    if is_interpreter(cmd.head) and "-m" in cmd.args:
        i = cmd.args.index("-m")
        if i + 1 < len(cmd.args) and cmd.args[i + 1].split(".")[0] == "gatesh":
            return cmd.args[i + 2 :]
    return None


def _human_verb(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    argv = _gatesh_argv(cmd)
    if argv is None:
        return False
    positional = [a for a in argv if not a.startswith("-")]
    if not positional:
        return False
    verb = positional[0]
    if verb in _HUMAN_VERBS:
        return True
    return verb == "config" and any(p not in _CONFIG_READS for p in positional[1:])


_SHELL_WITH_ARG: Final = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_ENV_CLEARS: Final = re.compile(r"\benv\s+(?:-\S+\s+)*?(?:-i\b|--ignore-environment\b|-\s)")


def _shell_is_interactive(cmd: SimpleCommand) -> bool:
    """A shell with neither ``-c`` nor a script operand reads its commands from a terminal or stdin."""
    opts, operands = split_args(cmd.args, _SHELL_WITH_ARG)
    if has_short([o for o in opts if not o.startswith("--")], "c") or "--command" in opts:
        return False
    return not operands


def _ungated_shell(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    head = cmd.head
    if head == "script":  # the typescript recorder starts a shell of its own (no -c: the reader peels -c)
        return "/" not in (cmd.argv[0].text if cmd.argv else "/") and not any(a in ("-V", "--version", "-h", "--help") for a in cmd.args)
    if head in ("su", "sudo", "doas", "pkexec", "run0", "machinectl"):
        # `su`, `sudo -i`, `sudo -s`: a root shell with nobody gating it.
        if head == "sudo":
            return any(a in ("-i", "-s", "--login", "--shell") or (a.startswith("-") and not a.startswith("--")
                       and ("i" in a or "s" in a)) for a in cmd.args)
        if head == "machinectl":
            return "shell" in cmd.args
        return not any(a in ("-h", "--help", "-V", "--version") for a in cmd.args)
    if head not in SHELLS or not _shell_is_interactive(cmd):
        return False
    argv0 = cmd.argv[0].text if cmd.argv else ""
    if "/" in argv0:
        return True  # an absolute path bypasses the shims on PATH
    if "exec" in cmd.wrappers or cmd.privileged or cmd.context == "find -exec":
        return True
    return "env" in cmd.wrappers and bool(_ENV_CLEARS.search(cmd.raw))


_SHELL_NAME: Final = r"""(?:/usr)?(?:/local)?(?:/bin/)?(?:ba|z|da|k|tc|c|fi|a|mk)?sh(?:\s+-[il]+)?"""
# Linear (bypass_failures, "still quadratic"): every blank run is possessive and followed by a
# non-blank, so no run is re-split between two quantifiers (`system` + 20 KB of blanks was cubic).
_ESCAPE_CODE: Final = re.compile(
    r"pty\.spawn\s*+\("
    r"|(?:system|exec[lvpe]*|spawn(?:Sync)?|popen|Popen|execute|call|run|check_call|passthru|shell_exec"
    r"|proc_open|pcntl_exec|exec)\s*+\(?\s*+\[?\s*+[\"']" + _SHELL_NAME + r"""[\"']\s*+(?:\)|\]|$|;|,\s*+[\[{]|,\s*+["'](?:-?[il]|-?\w*sh)["'])"""
    r"|^\s*+:?\s*+!\s*+" + _SHELL_NAME + r"\s*+$"
    r"|^\s*+:?\s*+sh(?:ell)?\s*+$|:set\s++shell="
    r"|\bexec\s++" + _SHELL_NAME + r"\b"
)


def _interpreter_escape(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    return any(_ESCAPE_CODE.search(code) for code in inline_code(cmd))


RULES: Final[tuple[SelfRule, ...]] = (
    SelfRule("self.files-delete",
             "deletes or moves gatesh's own config, state, audit log or socket: tampering with the gate",
             _deletes_or_moves,
             positive=("rm -rf ~/.config/gatesh", "rm ~/.local/state/gatesh/audit.jsonl",
                       "mv ~/.config/gatesh/config.toml /tmp/", "rm -rf ~/.config/*", "rm -rf ~/.local",
                       'sudo rm -rf "$XDG_STATE_HOME/gatesh"', "rm -f /etc/gatesh/config.toml"),
             negative=("rm -rf ~/.config/nvim", "rm .gatesh.toml", "mv notes.txt ~/docs/")),
    SelfRule("self.files-write",
             "writes into gatesh's own config, state, audit log or socket: tampering with the gate",
             _writes_into,
             positive=("echo 'rung = \"bypass\"' >> ~/.config/gatesh/config.toml",
                       "cp evil.toml ~/.config/gatesh/config.toml", "tee ~/.local/state/gatesh/audit.jsonl",
                       "sed -i s/auto/bypass/ ~/.config/gatesh/config.toml", "truncate -s0 ~/.local/state/gatesh/audit.jsonl",
                       "chmod 777 ~/.config/gatesh", "ln -sf /dev/null ~/.local/state/gatesh/audit.jsonl",
                       "find ~/.local/state/gatesh -delete", "vim ~/.config/gatesh/config.toml",
                       "python3 -c \"open('/etc/gatesh/config.toml','w').write('')\"",
                       "bash -c 'cat x > ~/.config/gatesh/config.toml'"),
             negative=("cat ~/.config/gatesh/config.toml", "cp ~/.config/gatesh/config.toml /tmp/backup.toml",
                       "echo 'rung = \"write\"' >> .gatesh.toml", "ls -la ~/.local/state/gatesh",
                       "grep rung ~/.config/gatesh/config.toml")),
    SelfRule("self.files-cwd",
             "changes into gatesh's own folders and writes there: tampering with the gate",
             _works_inside,
             positive=("cd ~/.config/gatesh && rm config.toml", "cd ~/.local/state/gatesh; echo > audit.jsonl"),
             negative=("cd ~/.config/gatesh && cat config.toml", "cd ~/src && rm -rf build")),
    SelfRule("self.daemon-kill",
             "stops the gatesh daemon: tampering with the gate",
             _kills_daemon,
             positive=("pkill -f gatesh", "killall gatesh", "kill $(pgrep gatesh)", "kill -9 `pidof gatesh`",
                       "systemctl --user stop gatesh", "sudo pkill -9 -f 'gatesh daemon'"),
             negative=("pkill -f webpack", "kill 1234", "kill $(pgrep node)", "systemctl status gatesh")),
    SelfRule("self.daemon-trace",
             "attaches a tracer or debugger to the gatesh daemon: tampering with the gate",
             _traces_daemon,
             positive=("strace -p $(pgrep -f gatesh)", "gdb -p $(pidof gatesh)", "sudo ltrace -p $(pgrep gatesh)"),
             negative=("strace -p 1234", "strace ls", "gdb ./a.out")),
    SelfRule("self.hook-names",
             "changes or runs the gate's own __gatesh_* functions or variables in this shell: tampering with the gate",
             _names_gate_internals,
             positive=("__gatesh_v=0", "__gatesh_state=allowed", "unset __gatesh_v", "declare -i __gatesh_v=0",
                       "typeset -g __gatesh_state=allowed", "readonly __gatesh_v", "local __gatesh_h=1",
                       "export __gatesh_entry=ls", "__gatesh_gate() { echo '0)'; }", "__gatesh_prompt",
                       "__gatesh_addhistory 'ls'", "printf -v __gatesh_v %s 0", "read __gatesh_h <<< 5",
                       "let __gatesh_h=0", "(( __gatesh_h = 0 ))", ": ${__gatesh_v:=0}",
                       "alias __gatesh_gate=\"echo '0)'\"", "__gatesh_h=1 true", "unfunction __gatesh_precmd",
                       "unset -f __gatesh_gate", "add-zsh-hook -d precmd __gatesh_precmd"),
             negative=('echo "__gatesh_x"', "echo __gatesh_v", "declare -p __gatesh_v", "typeset -f __gatesh_gate",
                       "echo $__gatesh_h", "grep __gatesh_ gatesh/shell/bash_hook.bash", "my_gatesh_v=1",
                       "(( x = __gatesh_h + 1 ))"),
             whole=_names_gate_internals_whole),
    SelfRule("self.hook",
             "disarms the gate's hook in this shell (traps, key bindings, hook variables): tampering with the gate",
             _disarms_hook,
             positive=("trap - DEBUG", "trap '' DEBUG", "trap 'echo hi' DEBUG", "set +o functrace",
                       "shopt -u extdebug", "bind -x '\"\\C-m\": true'", "bindkey '^M' self-insert",
                       "zle -D accept-line", "unfunction preexec",
                       "PROMPT_COMMAND=", "export PROMPT_COMMAND='true'", "unset PROMPT_COMMAND",
                       "precmd_functions=()", "enable -n trap", "PS0=", "PS0+='x'", "unset PS0", "readonly PS0",
                       "shopt -u promptvars", "shopt -qu promptvars", "functions[TRAPDEBUG]=",
                       "unset 'functions[TRAPDEBUG]'", "TRAPDEBUG() { :; }", "unfunction TRAPDEBUG",
                       "unset -f TRAPDEBUG", "setopt no_debug_before_cmd", "unsetopt DEBUG_BEFORE_CMD",
                       "set +o debugbeforecmd", "add-zsh-hook -D precmd '*'",
                       "zshaddhistory_functions=()", "preexec_functions+=(mine)", "shift precmd_functions",
                       "set -A precmd_functions"),
             negative=("trap 'rm -f $tmp' EXIT", "trap -p", "bind -p", "bindkey", "set -e", "shopt -s globstar",
                       "unset -f myfunc", "export PATH=$PATH:~/bin", "shopt -s promptvars", "shopt -u nullglob",
                       "echo $PS0", "declare -p PS0", "setopt debug_before_cmd", "unsetopt nomatch",
                       "setopt localoptions", "functions[myfn]='echo hi'", "set -A files a b", "set +o histexpand",
                       "PS1='$ '"),
             whole=_disarms_hook_whole),
    SelfRule("self.hook-shadow",
             "replaces a builtin the gate's hook calls (a function, alias or disabled builtin of that name): "
             "tampering with the gate",
             _shadows_hook_builtin,
             positive=("print() { builtin print -rn -- ls; }", "function setopt { :; }", "alias print='echo ls'",
                       "local() { :; }", "builtin() { :; }", "disable print", "enable -n setopt",
                       "history() { :; }"),
             negative=("ls() { command ls -F \"$@\"; }", "alias ll='ls -l'", "disable -p", "print -r -- hi",
                       "setopt extendedglob", "alias"),
             whole=_shadows_hook_builtin_whole),
    SelfRule("self.hook-history",
             "makes a history setting the gate's hook sets before every entry unchangeable, so the "
             "gate can no longer read entries: tampering with the gate",
             _tampers_history,
             positive=("readonly HISTSIZE=0", "declare -r HISTCONTROL=ignorespace", "typeset -r HISTIGNORE='*'",
                       "readonly HISTCONTROL", "declare -gr HISTSIZE=1", "shopt -uo history"),
             negative=("history -c", "history -d 12", "HISTCONTROL=ignoreboth", "HISTSIZE=0", "export HISTSIZE=1",
                       "shopt -u cmdhist", "HISTFILE=~/.bash_history_agent", "declare -p HISTCONTROL",
                       "readonly PATH_X=1", "fc -p", "HISTTIMEFORMAT='%F '")),
    SelfRule("self.history-rerun",
             "re-runs a history line edited or substituted after the gate read it (fc, r): escaping the gate",
             _reruns_edited,
             positive=("fc -s ls=rm", "fc -s 'echo '= 3", "fc -e - echo=rm", "fc -e vim", "fc -e 'sed -i s/a/b/' -1",
                       "fc", "fc 10 12", "r ls=rm", "r echo=rm 5"),
             negative=("fc -l", "fc -ln -10", "fc -s", "fc -s make", "fc -e - 12", "r", "r make", "fc -W")),
    SelfRule("self.human-verb",
             "runs a gatesh verb only a person may run (approve, deny, resume, mandate, watch, config changes)",
             _human_verb,
             positive=("gatesh approve 42", "gatesh deny 42", "gatesh resume s1", "gatesh mandate 'delete it all'",
                       "gatesh config set rung bypass", "python3 -m gatesh approve 7", "gatesh watch"),
             negative=("gatesh explain 'rm -rf x'", "gatesh status", "gatesh config", "gatesh log --json")),
    SelfRule("self.ungated-shell",
             "starts a shell that gatesh does not gate: escaping the gate",
             _ungated_shell,
             positive=("/bin/bash", "/usr/bin/zsh -i", "exec bash", "exec /bin/sh", "script", "script -q /dev/null",
                       "env -i bash", "sudo -i", "sudo su", "su -", "sudo bash", "find . -exec /bin/sh \\; -quit",
                       "/bin/bash --login"),
             negative=("bash", "sh", "/bin/bash -c 'ls'", "/bin/bash build.sh", "exec bash -c 'make'",
                       "script -c 'make test' build.log", "bash -lc 'npm test'", "sudo -u me ls", "zsh -i")),
    SelfRule("self.interpreter-escape",
             "an interpreter starts an interactive shell nothing gates: escaping the gate",
             _interpreter_escape,
             positive=("python3 -c 'import pty; pty.spawn(\"/bin/bash\")'", "python -c 'import os; os.system(\"/bin/sh\")'",
                       "perl -e 'exec \"/bin/sh\";'", "ruby -e 'exec \"/bin/sh\"'", "vim -c ':!/bin/sh'",
                       "awk 'BEGIN {system(\"/bin/sh\")}'", "php -r 'system(\"/bin/bash -i\");'",
                       "node -e 'require(\"child_process\").spawn(\"/bin/sh\", {stdio: [0, 1, 2]})'",
                       "lua -e 'os.execute(\"/bin/sh\")'", "vim -c ':sh'"),
             negative=("python -c 'print(1)'", "python -c 'import subprocess; subprocess.run([\"bash\", \"build.sh\"])'",
                       "awk '{print $1}' f", "vim -c ':wq' notes.txt", "perl -e 'print \"sh\"'")),
)


def protected_for(paths: GatePaths) -> Protected:
    """The absolute protected roots of ``paths``, with home expanded (cached per paths and $HOME)."""
    return _protected(paths, os.environ.get("HOME", ""))


@functools.lru_cache(maxsize=16)
def _protected(paths: GatePaths, _home_env: str) -> Protected:
    home = os.path.expanduser("~")
    roots = tuple(dict.fromkeys(posixpath.normpath(os.path.expanduser(p)) for p in paths.protected if p))
    runtime = posixpath.normpath(os.path.expanduser(paths.runtime_dir))
    return Protected(roots=tuple(r for r in roots if r not in ("/", home)), home=home, volatile=(runtime,))


def check(facts: Facts, paths: GatePaths) -> Finding | None:
    """The first self-protection rule the command matches, as an ATTACK finding; None if none.

    Guarantees: every executed command the reader found is matched, whatever its context.
    """
    prot = protected_for(paths)
    for cmd in facts.commands:
        if cmd.remote:
            continue  # another host's files and processes are not this gate's
        for rule in RULES:
            if rule.test(cmd, facts, prot):
                return Finding(rule.id, Outcome.ATTACK, rule.reason)
    for rule in RULES:
        if rule.whole is not None and rule.whole(facts):
            return Finding(rule.id, Outcome.ATTACK, rule.reason)
    if _HOOK_ASSIGN_TEXT.search(facts.text):
        # The reader drops a bare assignment with no command (`PROMPT_COMMAND=`), so the text decides.
        hook = next(r for r in RULES if r.id == "self.hook")
        return Finding(hook.id, Outcome.ATTACK, hook.reason)
    if (not facts.readable or reads_code_from_stdin(facts)) and _RAW.search(facts.text):
        return Finding("self.raw-text", Outcome.ATTACK,
                       "text the reader could not unfold (unreadable, or fed to a shell on stdin) changes "
                       "gatesh's files, daemon or hook, or runs a human-only verb: tampering with the gate")
    return None


# Linear (bypass_failures #12, the same ReDoS class): the old `(?:^|[;&|\n({])\s*(?:NAME=\S*\s+)*`
# re-scanned a newline run or a blank-free `a=1;a=1;…` from every separator (10 s at 20 KB).
# Now blanks never cross a newline (the newline is itself a start), values are possessive and
# stop at unquoted separators (quoted, `$(…)`, `${…}` parts kept whole), and `{` starts only as
# the reserved word (blank on both sides), so no start re-reads another start's text.
_ASSIGN_VALUE: Final = (r"(?:\$\(\([^()]*+\)\)|\$\([^()]*+\)|\$\{[^{}]*+\}|'[^']*+'|" + '"[^"]*+"'
                        + r"|[^\s;&|'" + '"' + r"($]++|\$)*+")
_HOOK_ASSIGN_TEXT: Final = re.compile(
    r"(?:^|(?<=[;&|\n(])|(?<=(?<![^\s;&|(])\{)(?=\s))[^\S\n]*+(?:[A-Za-z_]\w*+=" + _ASSIGN_VALUE
    + r"[^\S\n]++)*(?:PROMPT_COMMAND|preexec_functions|precmd_functions"
    r"|zshaddhistory_functions|PS0)(?:\[[^\]]*\])?\+?="
)

# For unreadable text only: names of gatesh's files or hook next to a verb that changes them.
# Linear: only the first verb of a `;&|`/newline segment is tried (a later verb's name search sees a
# subset of the first one's text, so no match is lost); `rm rm rm …` re-scanned the segment from
# every verb (20 s at 20 KB).
_RAW_VERB: Final = r"(?:\brm\b|\bmv\b|>|\btee\b|\bsed\s++-i|\btruncate\b|\bchmod\b|\bpkill\b|\bkillall\b|\bkill\b)"
_RAW: Final = re.compile(
    r"(?:^|(?<=[;&|\n]))(?:(?!" + _RAW_VERB + r")[^;&|\n])*" + _RAW_VERB + r"[^;&|\n]*"
    r"(?:\.config/gatesh|\.local/(?:state|share)/gatesh|/etc/gatesh|\bgatesh\b)"
    r"|\btrap\s++(?:-|''|\"\")\s++DEBUG|\bgatesh\s++(?:approve|deny|resume|mandate)\b"
)

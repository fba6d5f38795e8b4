"""The gated shell's hook (S3.4, S10), and leaving the gate.

Disarming the hook of a gated session: its DEBUG trap, key bindings, hook variables and arrays,
the zsh options it needs, its own ``__gatesh_*`` functions and variables, the builtins it calls by
name, the history settings it sets before every entry; re-running an edited history line. And
leaving the gate: a verb only a person may run, a shell nothing gates, an interpreter's shell
escape. Bare statements no single command shows (``PS0=``, a function definition, ``(( ))``) are
matched on the whole line (the ``*_whole`` tests).
"""

from __future__ import annotations

import re
from typing import Final

from gatesh._types import Context, Facts, SimpleCommand
from gatesh.vocab.grammar import parse
from gatesh.vocab.programs.info import VERSION_HELP
from gatesh.vocab.programs.shells import SHELLS
from gatesh.vocab.words import has_short, inline_code, option_values, split_args, unquote

from ._settings import DECLARERS, env_clears, gatesh_argv

__all__ = [
    "HOOK_HEADS",
    "NAME_OPTIONS",
    "NAME_TAKERS",
    "disarms_hook",
    "disarms_hook_whole",
    "human_verb",
    "interpreter_escape",
    "names_gate_internals",
    "names_gate_internals_whole",
    "reruns_edited",
    "shadows_hook_builtin",
    "shadows_hook_builtin_whole",
    "tampers_history",
    "ungated_shell",
]

# --- the shell hook ---------------------------------------------------------------------------

# History variables (HISTCONTROL, HISTIGNORE, HISTSIZE) are `self.hook-history`'s (only making them
# unchangeable is tampering); HISTFILE only changes the file on disk, never the in-memory list the
# gate reads (the rater judges evasion).
_HOOK_VARS: Final = re.compile(
    r"^(?:PROMPT_COMMAND|preexec_functions|precmd_functions|zshaddhistory_functions|BASH_ENV|ENV"
    r"|PS0|histchars|HISTCMD)(?:\[[^\]]*\])?\+?(?:=|$)"
)
_HOOK_FUNCS: Final = re.compile(
    r"gatesh|^(?:preexec|precmd|TRAPDEBUG|accept-line|zshaddhistory|command_not_found_handle)$",
    re.IGNORECASE,
)
_HOOK_ARRAYS: Final = frozenset(
    {"preexec_functions", "precmd_functions", "zshaddhistory_functions"}
)
# `NAME[KEY]+=value` as written (a declare argument, a prefix or a bare statement).
_ASSIGN_WORD: Final = re.compile(r"^([A-Za-z_]\w*)(?:\[([^\]]*)\])?(\+?=)(.*)$", re.DOTALL)
_HOOK_FUNC_TEXT: Final = re.compile(r"TRAPDEBUG|__gatesh_|zshaddhistory|precmd|preexec|accept-line")


def _assignments(cmd: SimpleCommand | None, facts: Facts) -> list[str]:
    """Every ``NAME=value`` the command (or, with no command, the whole line) writes, as written."""
    if cmd is None:
        return list(facts.assignments)
    words = list(cmd.assignments)
    if cmd.head in DECLARERS:
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


def disarms_hook(cmd: SimpleCommand, facts: Facts) -> bool:
    head, args = cmd.head, cmd.args
    if head == "trap":
        return (
            bool(args)
            and args[0] not in ("-p", "-l")
            and any(a.upper() in ("DEBUG", "RETURN") for a in args[1:])
        )
    if head == "set":
        if any(
            a in ("-A", "+A") and i + 1 < len(args) and args[i + 1] in _HOOK_ARRAYS
            for i, a in enumerate(args)
        ):
            return True  # zsh `set -A precmd_functions …`
        if any(
            a in ("-o", "+o") and i + 1 < len(args) and _zsh_option_off(args[i + 1], a == "-o")
            for i, a in enumerate(args)
        ):
            return True
        return any(a.startswith("+") and "T" in a for a in args) or any(
            a == "+o" and i + 1 < len(args) and args[i + 1] in ("functrace", "history")
            for i, a in enumerate(args)
        )
    if head == "shopt":
        # promptvars off: PS0 is printed, not expanded, so the gate never runs for an entry.
        opts, names = split_args(args)
        return (
            has_short(opts, "u")
            and not has_short(opts, "o")
            and bool({"extdebug", "promptvars"} & set(names))
        )
    if head in ("setopt", "unsetopt"):
        return any(
            _zsh_option_off(a, head == "setopt") for a in args if not a.startswith(("-", "+"))
        )
    if head == "shift":
        return any(a in _HOOK_ARRAYS for a in args)
    if head == "unset" and any(
        _rewrites_functions(a + "=") for a in args if a.startswith("functions[")
    ):
        return True
    if any(_rewrites_functions(a) for a in _assignments(cmd, facts)):
        return True
    if head == "bind":
        opts_ok = {"-p", "-P", "-v", "-V", "-s", "-S", "-l"}
        return (
            bool(args)
            and not all(a in opts_ok for a in args)
            and not (args[0] in ("-q", "-Q") and len(args) == 2)
        )
    if head == "bindkey":
        _, operands = split_args(args, frozenset({"-M"}))
        return len(operands) >= 2 or any(
            a in ("-r", "-d", "-D", "-A", "-N", "-s", "-R", "-e", "-v", "-a") for a in args
        )
    if head == "zle":
        return "accept-line" in args or any(a in ("-D", "-A") for a in args)
    if head in ("unset", "unfunction", "unalias", "unhash"):
        return any(
            _HOOK_FUNCS.search(a) or _HOOK_VARS.match(a) for a in args if not a.startswith("-")
        )
    if head == "add-zsh-hook":
        return any(a in ("-d", "-D") for a in args)
    if head == "enable":
        return "-n" in args and any(
            a in ("trap", "set", "shopt", "bind", "builtin", "history", "fc") for a in args
        )
    if head in DECLARERS and not _listing_only(cmd):
        if any(_HOOK_VARS.match(a) for a in args if not a.startswith("-")):
            return True
    if any(_HOOK_VARS.match(a) for a in cmd.assignments):
        return True
    return any(
        f.upper() == "TRAPDEBUG" or (_HOOK_FUNCS.search(f) and "gatesh" in f.lower())
        for f in facts.functions
    )


# The heads disarms_hook reads a plain command of (it reads only these, and function definitions).
HOOK_HEADS: Final = DECLARERS | {
    "trap",
    "set",
    "shopt",
    "setopt",
    "unsetopt",
    "shift",
    "unset",
    "bind",
    "bindkey",
    "zle",
    "unfunction",
    "unalias",
    "unhash",
    "add-zsh-hook",
    "enable",
}


def disarms_hook_whole(facts: Facts) -> bool:
    """Bare statements: ``PS0=``, ``precmd_functions=()``, ``functions[TRAPDEBUG]=``."""
    if facts.assignments and any(
        _HOOK_VARS.match(a) or _rewrites_functions(a) for a in facts.assignments
    ):
        return True
    return bool(facts.functions) and any(f.upper() == "TRAPDEBUG" for f in facts.functions)


# The gate's own functions and variables (`__gatesh_gate`, `__gatesh_v`, `__gatesh_state` …).
_GATESH_NAME: Final = re.compile(r"(?<![\w${])__gatesh_")
# Builtins whose operands are names of variables, functions or aliases.
NAME_TAKERS: Final = (
    frozenset(
        {
            "unset",
            "unfunction",
            "unhash",
            "unalias",
            "alias",
            "functions",
            "autoload",
            "let",
            "read",
            "mapfile",
            "readarray",
            "getopts",
            "vared",
            "disable",
            "enable",
            "shift",
            "add-zsh-hook",
            "zle",
            "nameref",
        }
    )
    | DECLARERS
)
NAME_OPTIONS: Final = {
    "printf": frozenset({"-v"}),
    "print": frozenset({"-v"}),
    "wait": frozenset({"-p"}),
}
# `${__gatesh_v:=…}`, and `(( __gatesh_v = 1 ))` / `$(( __gatesh_v++ ))`: the reader records no command
# for an arithmetic statement, so its text decides. Each alternative is anchored on a literal and
# scans forward without nesting (linear).
_GATESH_EXPANSION_WRITE: Final = re.compile(
    r"\$\{__gatesh_\w*+(?:\[[^\]]*+\])?:?=|\(\([^()]*?__gatesh_\w*+\s*+(?:\[[^\]]*+\]\s*+)?(?:[-+*/%&|^]|<<|>>)?=(?!=)"
    r"|\(\([^()]*?(?:\+\+|--)\s*+__gatesh_|__gatesh_\w*+\s*+(?:\+\+|--)"
)


def names_gate_internals(cmd: SimpleCommand, facts: Facts) -> bool:
    if cmd.head.startswith("__gatesh_") or (cmd.argv and cmd.argv[0].text.startswith("__gatesh_")):
        return True  # running the hook's own functions by hand
    if any(f.startswith("__gatesh_") for f in facts.functions):
        return True  # redefining one (`__gatesh_gate() { echo '0)'; }`)
    if cmd.head in NAME_TAKERS and not _listing_only(cmd):
        if any(_GATESH_NAME.search(a) for a in cmd.args):
            return True
    names = NAME_OPTIONS.get(cmd.head)
    if names and any(_GATESH_NAME.match(v) for v in option_values(cmd.args, names)):
        return True
    if any(_GATESH_NAME.match(a) for a in cmd.assignments):
        return True
    return any(not w.static and _GATESH_EXPANSION_WRITE.search(w.text) for w in cmd.argv)


def names_gate_internals_whole(facts: Facts) -> bool:
    if facts.assignments and any(_GATESH_NAME.match(a) for a in facts.assignments):
        return True
    if facts.functions and any(f.startswith("__gatesh_") for f in facts.functions):
        return True
    return "__gatesh_" in facts.text and bool(_GATESH_EXPANSION_WRITE.search(facts.text))


# What the hooks call by name without `builtin` (or call `builtin` itself): a function or alias of
# that name, or a disabled builtin, changes what the gate does. zsh's TRAPDEBUG runs `print` to hand
# the entry to gatesh and `setopt ERR_EXIT` to skip a refused one; bash's `local`, `return`.
_HOOK_BUILTINS: Final = frozenset(
    {
        "builtin",
        "command",
        "local",
        "return",
        "print",
        "printf",
        "setopt",
        "unsetopt",
        "emulate",
        "history",
        "shopt",
        "set",
        "unset",
        "declare",
        "typeset",
        "kill",
        "eval",
    }
)


def shadows_hook_builtin(cmd: SimpleCommand, facts: Facts) -> bool:
    if cmd.head == "alias":
        return any("=" in a and a.split("=", 1)[0] in _HOOK_BUILTINS for a in cmd.args)
    if cmd.head == "disable":  # zsh: `disable print` turns the builtin off
        return any(a in _HOOK_BUILTINS for a in cmd.args)
    if cmd.head == "enable":  # bash: `enable -n local`
        return "-n" in cmd.args and any(a in _HOOK_BUILTINS for a in cmd.args)
    return False


# The reader takes `local() { …; }` for a declaration (no function recorded): the text decides.
_DECLARER_FUNC: Final = re.compile(
    r"(?<![\w-])(?:local|declare|typeset|export|readonly)[^\S\n]*+\([^\S\n]*+\)"
)


def shadows_hook_builtin_whole(facts: Facts) -> bool:
    # _DECLARER_FUNC matches a literal `(`: a text without one is not searched.
    return not _HOOK_BUILTINS.isdisjoint(facts.functions) or (
        "(" in facts.text and bool(_DECLARER_FUNC.search(facts.text))
    )


# The history settings the bash hook sets again before every entry is read (see
# gatesh/shell/bash_hook.bash): while it can, nothing a command does to them or to the history
# list changes what the gate reads next, and the user's own values still decide what the list
# keeps. Only a setting made unchangeable stops the hook from setting it.
_HISTORY_VARS: Final = frozenset({"HISTCONTROL", "HISTIGNORE", "HISTSIZE"})


def tampers_history(cmd: SimpleCommand, facts: Facts) -> bool:
    """``readonly HISTSIZE=0``, ``declare -r HISTCONTROL=ignorespace``, ``typeset -r HISTIGNORE``;
    also ``shopt -uo history`` (``set +o history`` spelt as shopt: the hook cannot turn the list
    back on from its prompt function, so every later entry would go unread and be refused)."""
    if cmd.head == "shopt":
        opts, names = split_args(cmd.args)
        return has_short(opts, "u") and has_short(opts, "o") and "history" in names
    readonly = cmd.head == "readonly" or (
        cmd.head in ("declare", "typeset", "local", "export")
        and any(a.startswith("-") and not a.startswith("--") and "r" in a[1:] for a in cmd.args)
    )
    if not readonly:
        return False
    declared = {
        a.split("=", 1)[0].removesuffix("+") for a in cmd.args if not a.startswith(("-", "+"))
    }
    return bool(_HISTORY_VARS & declared)


def reruns_edited(cmd: SimpleCommand, facts: Facts) -> bool:
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
_HUMAN_VERBS: Final = frozenset(
    {"approve", "deny", "resume", "mandate", "watch", "uninstall", "answer", "undo"}
)
_CONFIG_READS: Final = frozenset({"show", "get", "path", "list"})


def human_verb(cmd: SimpleCommand, facts: Facts) -> bool:
    """Runs a verb only a person may run (S9.5): approve, deny, resume, mandate, watch, answer,
    install --uninstall; or ``gatesh config`` with operands, which is no read-only view (the view
    takes only options, in any spelling: ``--cwd .``, ``--cwd=.``, ``--json``). gatesh's argv is
    read through its grammar (``gatesh.vocab.grammar``)."""
    args = gatesh_argv(cmd)
    if args is None:
        return False
    argv = parse("gatesh", args)
    if argv.has("-c", level=0):
        return False  # `gatesh -c CMD` gates CMD: it is judged as CMD
    verb = argv.subcommand
    if verb in _HUMAN_VERBS:
        return True
    if verb == "install":
        return argv.has("--uninstall")  # takes hooks, git hooks or shims away: a person's call
    return verb == "config" and any(p not in _CONFIG_READS for p in argv.operands)


_SHELL_WITH_ARG: Final = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


def _shell_is_interactive(cmd: SimpleCommand) -> bool:
    """A shell with neither ``-c`` nor a script operand reads its commands from a terminal or stdin."""
    opts, operands = split_args(cmd.args, _SHELL_WITH_ARG)
    if has_short([o for o in opts if not o.startswith("--")], "c") or "--command" in opts:
        return False
    return not operands


def ungated_shell(cmd: SimpleCommand, facts: Facts) -> bool:
    head = cmd.head
    if (
        head == "script"
    ):  # the typescript recorder starts a shell of its own (no -c: the reader peels -c)
        return "/" not in (cmd.argv[0].text if cmd.argv else "/") and not any(
            a in VERSION_HELP for a in cmd.args
        )
    if head in ("su", "sudo", "doas", "pkexec", "run0", "machinectl"):
        # `su`, `sudo -i`, `sudo -s`: a root shell with nobody gating it.
        if head == "sudo":
            return any(
                a in ("-i", "-s", "--login", "--shell")
                or (a.startswith("-") and not a.startswith("--") and ("i" in a or "s" in a))
                for a in cmd.args
            )
        if head == "machinectl":
            return "shell" in cmd.args
        return not any(a in VERSION_HELP for a in cmd.args)
    if head not in SHELLS or not _shell_is_interactive(cmd):
        return False
    argv0 = cmd.argv[0].text if cmd.argv else ""
    if "/" in argv0:
        return True  # an absolute path bypasses the shims on PATH
    if "exec" in cmd.wrappers or cmd.privileged or cmd.context is Context.FIND_EXEC:
        return True
    return env_clears(cmd)


_SHELL_NAME: Final = (
    r"""(?:/usr)?(?:/local)?(?:/bin/)?(?:ba|z|da|k|tc|c|fi|a|mk)?sh(?:\s+-[il]+)?"""
)
# Linear (bypass_failures, "still quadratic"): every blank run is possessive and followed by a
# non-blank, so no run is re-split between two quantifiers (`system` + 20 KB of blanks was cubic).
_ESCAPE_CODE: Final = re.compile(
    r"pty\.spawn\s*+\("
    r"|(?:system|exec[lvpe]*|spawn(?:Sync)?|popen|Popen|execute|call|run|check_call|passthru|shell_exec"
    r"|proc_open|pcntl_exec|exec)\s*+\(?\s*+\[?\s*+[\"']"
    + _SHELL_NAME
    + r"""[\"']\s*+(?:\)|\]|$|;|,\s*+[\[{]|,\s*+["'](?:-?[il]|-?\w*sh)["'])"""
    r"|^\s*+:?\s*+!\s*+" + _SHELL_NAME + r"\s*+$"
    r"|^\s*+:?\s*+sh(?:ell)?\s*+$|:set\s++shell="
    r"|\bexec\s++" + _SHELL_NAME + r"\b"
)


def interpreter_escape(cmd: SimpleCommand, facts: Facts) -> bool:
    return any(_ESCAPE_CODE.search(code) for code in inline_code(cmd))

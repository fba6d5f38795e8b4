"""Self-protection (S3.4): tampering with the gate is an attack, at every rung.

Four families, one table: changing gatesh's own files (config, state, audit log, socket, the
system tier), stopping or tracing the daemon, disarming the shell hook of a gated session, and
leaving the gate (a human-only verb, or a shell that nothing gates). A project's ``.gatesh.toml``
is not protected: that tier can only tighten (S12), so editing it is ordinary work.
"""

from __future__ import annotations

import fnmatch
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
    SHELLS,
    canon_path,
    has_long,
    has_short,
    inline_code,
    is_interpreter,
    reads_code_from_stdin,
    split_args,
    unquote,
)

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
    r"""open\([^)]*,\s*['"][wax+]|\.write|remove|unlink|rmtree|rename|replace|chmod|truncate|mkdir|writeFile|appendFile|rmSync|rm\(""")


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

_HOOK_VARS: Final = re.compile(
    r"^(?:PROMPT_COMMAND|preexec_functions|precmd_functions|zshaddhistory_functions|BASH_ENV|ENV"
    r"|PS0|HISTCONTROL|HISTIGNORE|HISTFILE|HISTSIZE|histchars|HISTCMD)(?:\[[^\]]*\])?\+?(?:=|$)"
)
_HOOK_FUNCS: Final = re.compile(r"gatesh|^(?:preexec|precmd|TRAPDEBUG|accept-line|zshaddhistory|command_not_found_handle)$",
                                re.IGNORECASE)


def _disarms_hook(cmd: SimpleCommand, facts: Facts, prot: Protected) -> bool:
    head, args = cmd.head, cmd.args
    if head == "trap":
        return bool(args) and args[0] not in ("-p", "-l") and any(a.upper() in ("DEBUG", "RETURN") for a in args[1:])
    if head == "set":
        return any(a.startswith("+") and "T" in a for a in args) or any(
            a == "+o" and i + 1 < len(args) and args[i + 1] in ("functrace", "history") for i, a in enumerate(args))
    if head == "shopt":
        return "-u" in args and "extdebug" in args
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
    if head in ("export", "declare", "typeset", "readonly", "local"):
        if any(_HOOK_VARS.match(a) for a in args if not a.startswith("-")):
            return True
    if any(_HOOK_VARS.match(a) for a in cmd.assignments):
        return True
    return any(f.upper() == "TRAPDEBUG" or (_HOOK_FUNCS.search(f) and "gatesh" in f.lower()) for f in facts.functions)


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
_ESCAPE_CODE: Final = re.compile(
    r"pty\.spawn\s*\("
    r"|(?:system|exec[lvpe]*|spawn(?:Sync)?|popen|Popen|execute|call|run|check_call|passthru|shell_exec"
    r"|proc_open|pcntl_exec|exec)\s*\(?\s*\[?\s*[\"']" + _SHELL_NAME + r"""[\"']\s*(?:\)|\]|$|;|,\s*[\[{]|,\s*["'](?:-?[il]|-?\w*sh)["'])"""
    r"|^\s*:?\s*!\s*" + _SHELL_NAME + r"\s*$"
    r"|^\s*:?\s*sh(?:ell)?\s*$|:set\s+shell="
    r"|\bexec\s+" + _SHELL_NAME + r"\b"
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
    SelfRule("self.hook",
             "disarms the gate's hook in this shell (traps, key bindings, hook variables): tampering with the gate",
             _disarms_hook,
             positive=("trap - DEBUG", "trap '' DEBUG", "trap 'echo hi' DEBUG", "set +o functrace",
                       "shopt -u extdebug", "bind -x '\"\\C-m\": true'", "bindkey '^M' self-insert",
                       "zle -D accept-line", "unset -f __gatesh_preexec", "unfunction preexec",
                       "PROMPT_COMMAND=", "export PROMPT_COMMAND='true'", "unset PROMPT_COMMAND",
                       "precmd_functions=()", "enable -n trap"),
             negative=("trap 'rm -f $tmp' EXIT", "trap -p", "bind -p", "bindkey", "set -e", "shopt -s globstar",
                       "unset -f myfunc", "export PATH=$PATH:~/bin")),
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
    """The absolute protected roots of ``paths``, with home expanded."""
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
    if _HOOK_ASSIGN_TEXT.search(facts.text):
        # The reader drops a bare assignment with no command (`PROMPT_COMMAND=`), so the text decides.
        hook = next(r for r in RULES if r.id == "self.hook")
        return Finding(hook.id, Outcome.ATTACK, hook.reason)
    if (not facts.readable or reads_code_from_stdin(facts)) and _RAW.search(facts.text):
        return Finding("self.raw-text", Outcome.ATTACK,
                       "text the reader could not unfold (unreadable, or fed to a shell on stdin) changes "
                       "gatesh's files, daemon or hook, or runs a human-only verb: tampering with the gate")
    return None


_HOOK_ASSIGN_TEXT: Final = re.compile(
    r"(?:^|[;&|\n({])\s*(?:[A-Za-z_]\w*=\S*\s+)*(?:PROMPT_COMMAND|preexec_functions|precmd_functions"
    r"|zshaddhistory_functions|PS0)(?:\[[^\]]*\])?\+?="
)

# For unreadable text only: names of gatesh's files or hook next to a verb that changes them.
_RAW: Final = re.compile(
    r"(?:\brm\b|\bmv\b|>|\btee\b|\bsed\s+-i|\btruncate\b|\bchmod\b|\bpkill\b|\bkillall\b|\bkill\b)[^;&|\n]*"
    r"(?:\.config/gatesh|\.local/(?:state|share)/gatesh|/etc/gatesh|\bgatesh\b)"
    r"|\btrap\s+(?:-|''|\"\")\s+DEBUG|\bgatesh\s+(?:approve|deny|resume|mandate)\b"
)

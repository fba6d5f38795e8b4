"""The self-protection rule table and :func:`check` (S3.4): tampering with the gate is an attack.

Each row names one hazard with an id, the reason a person reads, its test, and examples the real
reader must match (and counter-examples it must not). The path rows (``Touched``) are answered
from the reader's path facts matched against the protected places; the others read one command's
facts (its argv, wrappers, assignments) or, for what no single command shows, the whole line.

A project's ``.gatesh.toml`` is not protected: that tier can only tighten (S12). Reading any of
the protected places stays ordinary work; so does setting git's ``user.*`` and ``remote.*`` keys.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from gatesh._paths import GatePaths
from gatesh._types import Facts, Finding, Outcome, PathEffect, SimpleCommand
from gatesh.vocab.programs.interpreters import is_interpreter
from gatesh.vocab.programs.shells import SHELLS
from gatesh.vocab.words import reads_code_from_stdin

from ._daemon import KILLERS, TRACERS, kills_daemon, traces_daemon
from ._places import Kind, Protected, protected_for
from ._settings import (
    DECLARERS,
    HARNESSES,
    git_hooks_bypass,
    git_hooks_setting,
    git_hooks_setting_whole,
    harness_hooks_off,
    inner_gatesh_env,
    inner_gatesh_env_whole,
    protected_branches,
    says_hooks_off,
    session_shadow,
    session_shadow_whole,
)
from ._shell import (
    HOOK_HEADS,
    NAME_OPTIONS,
    NAME_TAKERS,
    disarms_hook,
    disarms_hook_whole,
    human_verb,
    interpreter_escape,
    names_gate_internals,
    names_gate_internals_whole,
    reruns_edited,
    shadows_hook_builtin,
    shadows_hook_builtin_whole,
    tampers_history,
    ungated_shell,
)
from ._writes import Act, Touch, touches

__all__ = ["DEFAULT_BRANCHES", "RULES", "SelfRule", "Touched", "check"]

# The branches gatesh's git hooks protect when the config names none (S11.3, git.protected_branches).
DEFAULT_BRANCHES: Final = ("main", "master")


@dataclass
class Seen:
    """One command as the rules see it: the command, its index, its path effects, the line's facts
    and the protected places; the places it changes are worked out at the first question."""

    cmd: SimpleCommand
    index: int
    effects: list[PathEffect]
    facts: Facts
    prot: Protected
    configured: tuple[str, ...] = DEFAULT_BRANCHES
    _touches: tuple[Touch, ...] | None = field(default=None)

    @property
    def touches(self) -> tuple[Touch, ...]:
        if self._touches is None:
            self._touches = touches(self.cmd, self.index, self.effects, self.facts, self.prot)
        return self._touches

    @property
    def branches(self) -> frozenset[str]:
        """The protected branches of the repository the command runs in (read at the first ask)."""
        return protected_branches(self.prot.cwd, self.configured)


@dataclass(frozen=True)
class Touched:
    """A path rule's test: the command changes a protected place of ``kind`` by one of ``acts``."""

    kind: Kind
    acts: tuple[Act, ...]

    def __call__(self, seen: Seen) -> bool:
        return any(t.kind is self.kind and t.act in self.acts for t in seen.touches)


ALL_ACTS: Final = (Act.REMOVE, Act.WRITE, Act.WORK_IN, Act.STAMP)
# What changes what a record holds: a stamp (touch) leaves every line it had.
CONTENT_ACTS: Final = (Act.REMOVE, Act.WRITE, Act.WORK_IN)


@dataclass(frozen=True)
class SelfRule:
    """One self-protection rule. ``heads``: the heads of the plain commands (:func:`_plain`) the
    test can match (None: any), and ``on_writes``: also any plain command with a write effect.

    Invariant: ids start with ``self.``; examples are checked against the default XDG layout
    under the test's home folder.
    """

    id: str
    reason: str
    test: Callable[[Seen], bool]
    examples: tuple[str, ...]
    counter: tuple[str, ...]
    # What no single command shows (bare `NAME=value` statements, function definitions, `(( ))`):
    # matched once per check, after every command has been matched against every rule.
    whole: Callable[[Facts, Protected], bool] | None = None
    heads: frozenset[str] | None = None
    on_writes: bool = False


RULES: Final[tuple[SelfRule, ...]] = (
    SelfRule(
        "self.files-delete",
        "deletes or moves gatesh's own config, state, audit log or socket: tampering with the gate",
        Touched(Kind.FILES, (Act.REMOVE,)),
        examples=(
            "rm -rf ~/.config/gatesh",
            "rm ~/.local/state/gatesh/audit.jsonl",
            "mv ~/.config/gatesh/config.toml /tmp/",
            "rm -rf ~/.config/*",
            "rm -rf ~/.local",
            'sudo rm -rf "$XDG_STATE_HOME/gatesh"',
            "rm -f /etc/gatesh/config.toml",
            "find ~/.local/state/gatesh -delete",
            "find / -print0 -name '*.txt' | xargs -0 -I{} mv {} {}.bak",
            "find / -name '*.mp3' -o -name gatesh | xargs rm -rf",
        ),
        counter=("rm -rf ~/.config/nvim", "rm .gatesh.toml", "mv notes.txt ~/docs/"),
    ),
    SelfRule(
        "self.files-write",
        "writes into gatesh's own config, state, audit log or socket: tampering with the gate",
        Touched(Kind.FILES, (Act.WRITE, Act.STAMP)),
        examples=(
            "echo 'rung = \"bypass\"' >> ~/.config/gatesh/config.toml",
            "cp evil.toml ~/.config/gatesh/config.toml",
            "tee ~/.local/state/gatesh/audit.jsonl",
            "sed -i s/auto/bypass/ ~/.config/gatesh/config.toml",
            "truncate -s0 ~/.local/state/gatesh/audit.jsonl",
            "chmod 777 ~/.config/gatesh",
            "ln -sf /dev/null ~/.local/state/gatesh/audit.jsonl",
            "vim ~/.config/gatesh/config.toml",
            "python3 -c \"open('/etc/gatesh/config.toml','w').write('')\"",
            "bash -c 'cat x > ~/.config/gatesh/config.toml'",
            "find / | xargs -I{} tar cf {} notes",
            "find ~ -iname GATESH | xargs chmod -R 777",
            "find -L / -user me | xargs chown you",
        ),
        counter=(
            "cat ~/.config/gatesh/config.toml",
            "cp ~/.config/gatesh/config.toml /tmp/backup.toml",
            "echo 'rung = \"write\"' >> .gatesh.toml",
            "ls -la ~/.local/state/gatesh",
            "grep rung ~/.config/gatesh/config.toml",
            "sed -n 1p ~/.config/gatesh/config.toml",
            "find / -print0 | xargs -0 tar cjf all.tar.bz2",
            "find ~ -name '*.txt' -print0 | xargs -0 cp -ut ~/newdir",
            "find / -iname '*.mp3' | xargs -I{} rsync -a {} /mnt/mp3/",
            "find / -iname '*.mp3' -type f | xargs -I{} mv {} /mnt/mp3",
            "cat dirs.txt | grep / | sort -u | xargs mkdir -p",
        ),
    ),
    SelfRule(
        "self.files-cwd",
        "changes into gatesh's own folders and writes there: tampering with the gate",
        Touched(Kind.FILES, (Act.WORK_IN,)),
        examples=(
            "cd ~/.config/gatesh && rm config.toml",
            "cd ~/.local/state/gatesh; echo > audit.jsonl",
        ),
        counter=("cd ~/.config/gatesh && cat config.toml", "cd ~/src && rm -rf build"),
    ),
    SelfRule(
        "self.install",
        "replaces, edits or removes gatesh's installation (its launcher, shims, venv, man page or install "
        "record): tampering with the gate",
        Touched(Kind.INSTALL, ALL_ACTS),
        examples=(
            "cp /bin/true ~/.local/bin/gatesh",
            "ln -sf /bin/bash ~/.local/bin/gatesh",
            "rm ~/.local/bin/gatesh",
            "chmod -x ~/.local/bin/gatesh",
            "rm -rf ~/.local/share/gatesh/venv",
            "ln -sf /bin/bash ~/.local/share/gatesh/shims/bash",
            "~/.local/share/gatesh/venv/bin/pip uninstall -y gatesh",
            "sed -i s/ATTACK/SAFE/ ~/.local/share/gatesh/venv/lib/python3.11/site-packages/gatesh/x.py",
            "rm ~/.local/share/man/man1/gatesh.1",
            "python3 -c \"import os; os.remove(os.path.expanduser('~/.local/bin/gatesh'))\"",
        ),
        counter=(
            "cat ~/.local/bin/gatesh",
            "ls ~/.local/share/gatesh/venv/bin",
            "man gatesh",
            "~/.local/share/gatesh/venv/bin/python -c 'print(1)'",
            "cp ~/.local/bin/gatesh /tmp/launcher.txt",
            "pip install -e .",
        ),
    ),
    SelfRule(
        "self.harness-settings",
        "changes a harness's settings or hooks file, where its gatesh hooks are or can be switched off: "
        "tampering with the gate",
        Touched(Kind.HARNESS, ALL_ACTS),
        examples=(
            "echo '{}' > ~/.gemini/settings.json",
            "rm ~/.claude/settings.json",
            "jq 'del(.hooks)' ~/.claude/settings.json | sponge ~/.claude/settings.json",
            "sed -i '/gatesh/d' ~/.codex/hooks.json",
            "mv ~/.codex/hooks.json ~/.codex/hooks.off",
            "echo '{\"disableAllHooks\": true}' > .claude/settings.local.json",
            "cp /tmp/s.json .gemini/settings.json",
            "echo 'features.hooks = false' >> ~/.codex/config.toml",
            "python3 -c \"import json,os;p=os.path.expanduser('~/.claude/settings.json');json.dump({},open(p,'w'))\"",
        ),
        counter=(
            "cat ~/.claude/settings.json",
            "jq .hooks ~/.claude/settings.json",
            "sed -n '/hooks/p' ~/.claude/settings.json",
            "rm .claude/settings.local.json",
            "cat .gemini/settings.json",
            "ls ~/.codex",
        ),
    ),
    SelfRule(
        "self.harness-hooks-off",
        "starts a harness with its hooks off, moves where it reads its settings, or writes a setting that "
        "switches hooks off: escaping the gate",
        lambda s: harness_hooks_off(s.cmd, s.effects, s.facts, s.prot),
        heads=HARNESSES | DECLARERS,
        examples=(
            "codex -c features.hooks=false exec 'make'",
            "claude --settings '{\"disableAllHooks\":true}' -p hi",
            "CLAUDE_CONFIG_DIR=/tmp/c claude -p hi",
            "CODEX_HOME=/tmp/x codex exec ls",
            "claude --setting-sources project -p hi",
            "echo '{\"disableAllHooks\": true}' > /tmp/s.json",
        ),
        counter=(
            "claude -p 'fix the tests'",
            "codex exec 'make test'",
            "codex -c model=o3 exec ls",
            "grep -r disableAllHooks docs/",
        ),
    ),
    SelfRule(
        "self.transcript",
        "writes or deletes a harness's session transcript (the record of what the user said): tampering "
        "with the gate",
        Touched(Kind.TRANSCRIPT, CONTENT_ACTS),
        examples=(
            'echo \'{"type":"user"}\' >> ~/.claude/projects/p/s.jsonl',
            "rm -rf ~/.claude/projects",
            "tee -a ~/.codex/sessions/2025/x.jsonl",
            "cd ~/.claude/projects/p && echo x >> s.jsonl",
            "python3 -c \"open('/root/.claude/projects/p/s.jsonl','a').write('x')\"",
        ),
        counter=(
            "cat ~/.claude/projects/p/s.jsonl",
            "tail -n 5 ~/.claude/projects/p/s.jsonl",
            "grep -r hello ~/.claude/projects",
            "ls ~/.gemini/tmp",
            "touch ~/.claude/projects/p/s.jsonl",
        ),
    ),
    SelfRule(
        "self.harness-snapshot",
        "changes a harness's shell snapshot, which the harness sources before every command and the "
        "gate does not read (harness boilerplate, S1): escaping the gate",
        Touched(Kind.SNAPSHOT, ALL_ACTS),
        examples=(
            "echo 'rm -rf ~' >> ~/.claude/shell-snapshots/snapshot-bash-1-abc.sh",
            "cp /tmp/payload.sh ~/.codex/shell_snapshots/0198a7c2.sh",
            "tee ~/.codex/shell_snapshots/x.sh < /tmp/p",
            "cd ~/.claude/shell-snapshots && echo x > s.sh",
        ),
        counter=(
            "cat ~/.claude/shell-snapshots/snapshot-bash-1-abc.sh",
            "ls ~/.codex/shell_snapshots",
            "grep -r alias ~/.claude/shell-snapshots",
        ),
    ),
    SelfRule(
        "self.git-hooks",
        "changes or removes the git hooks gatesh installed: tampering with the gate",
        Touched(Kind.GIT_HOOKS, ALL_ACTS),
        examples=(
            "rm -rf ~/.local/share/gatesh/git-hooks",
            "chmod -x ~/.local/share/gatesh/git-hooks/pre-push",
            "echo 'exit 0' > ~/.local/share/gatesh/git-hooks/pre-push",
        ),
        counter=(
            "cat ~/.local/share/gatesh/git-hooks/pre-push",
            "ls .git/hooks",
            "rm .git/hooks/pre-commit.sample",
        ),
    ),
    SelfRule(
        "self.unknown-target",
        "writes or removes a path only known when it runs that could be one of gatesh's own files, "
        "a harness's settings or the git hooks gatesh installed: tampering with the gate",
        Touched(Kind.UNKNOWN, ALL_ACTS),
        examples=(
            'printf "#!/bin/sh\\nexit 0\\n" > "$(git rev-parse --git-dir)/hooks/pre-push"',
            'cp /dev/null "$D/gatesh/config.toml"',
            'rm -rf ~/.config/"$name"',
            'echo "{}" > "$(dirname "$P")/settings.json"',
            'tee "${STATE}/audit.jsonl" < /dev/null',
        ),
        counter=(
            'echo x > "$out"',
            'cp a.txt "$dest"',
            'echo x > "$f".bak',
            'rm -rf "$BUILD_DIR/venv"',
            'echo x > "$HOME/notes/$f"',
        ),
    ),
    SelfRule(
        "self.git-hooks-path",
        "moves git's hooks away from gatesh's (core.hooksPath, init.templateDir): tampering with the gate",
        lambda s: git_hooks_setting(s.cmd, s.index, s.effects, s.facts, s.prot),
        heads=DECLARERS | {"git", "setenv"},
        on_writes=True,
        examples=(
            "git config --local core.hooksPath .nohooks",
            "git config --global --unset core.hooksPath",
            "git -c core.hooksPath=/dev/null push",
            "git config core.HooksPath /tmp/h",
            "git config --global init.templateDir /tmp/t",
            "git config --remove-section core",
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/x git push",
            "echo '[core] hooksPath = /x' >> .git/config",
            "sed -i 's/hooksPath.*//' ~/.gitconfig",
            "git config set core.hooksPath /x",
            "git config --edit",
        ),
        counter=(
            "git config user.email me@example.com",
            "git config --global user.name 'Me'",
            "git config remote.origin.url git@example.com:me/p.git",
            "git config --get core.hooksPath",
            "git config --list",
            "echo '[user] name = me' >> ~/.gitconfig",
            "git push origin main",
            "git config core.editor vim",
        ),
        whole=lambda facts, prot: git_hooks_setting_whole(facts, prot),
    ),
    SelfRule(
        "self.git-hooks-bypass",
        "updates a protected branch (or every branch) with git's hooks skipped (push --no-verify, "
        "send-pack, http-push, receive-pack): escaping the gate",
        lambda s: git_hooks_bypass(s.cmd, s.prot.cwd, s.branches),
        heads=frozenset({"git"}),
        examples=(
            "git push --no-verify origin main",
            "git push --no-verify origin HEAD:master",
            "git push --no-verify --mirror origin",
            "git send-pack ../remote.git HEAD:main",
            "git send-pack --all ../remote.git",
            "git http-push https://example.com/r.git main",
            "git push --no-verify origin +feature:refs/heads/main",
            "git push --no-verify --delete origin main",
        ),
        counter=(
            "git push --no-verify origin feature",
            "git push origin main",
            "git send-pack ../remote.git topic",
            "git push -n origin main",
        ),
    ),
    SelfRule(
        "self.inner-env",
        "points an inner gatesh at other folders or another session by environment (XDG_*, HOME, GATESH_*): "
        "escaping the gate",
        lambda s: inner_gatesh_env(s.cmd, s.index, s.facts, s.prot),
        heads=DECLARERS
        | {"setenv", "unset", "read", "mapfile", "readarray", "printf", "print", "getopts", "env"},
        examples=(
            "XDG_STATE_HOME=/tmp/s gatesh -c 'git reset --hard'",
            "env XDG_RUNTIME_DIR=/tmp/r gatesh -c ls",
            "export XDG_CONFIG_HOME=/tmp/c",
            "GATESH_SESSION=fresh make",
            "unset XDG_RUNTIME_DIR",
            "env -u XDG_RUNTIME_DIR gatesh -c ls",
            "declare -x GATESH_OPERATOR=person",
            "HOME=/tmp/h python3 -m gatesh -c ls",
            "env -i gatesh -c 'touch x'",
        ),
        counter=(
            "echo $XDG_STATE_HOME",
            "XDG_CONFIG_HOME=/tmp/c nvim",
            "HOME=/tmp/h npm install",
            "printenv GATESH_SESSION",
            "gatesh -c 'ls'",
        ),
        whole=lambda facts, _prot: inner_gatesh_env_whole(facts),
    ),
    SelfRule(
        "self.session-shadow",
        "changes what the session finds as gatesh, git or a shell (PATH ahead of them, one written "
        "into a folder on PATH, SHELL, an alias, a function, hash -p): escaping the gate",
        lambda s: session_shadow(s.cmd, s.index, s.effects, s.facts, s.prot),
        heads=DECLARERS | {"alias", "hash", "setenv"},
        on_writes=True,
        examples=(
            "export PATH=/bin:$PATH",
            'export PATH="$TOOLS:$PATH"',
            'PATH="$D:$PATH" git push origin main',
            "export SHELL=/bin/bash",
            "alias git='git -c core.hooksPath=/dev/null'",
            'git() { command git --no-verify "$@"; }',
            "hash -p /tmp/x/git git",
            "declare -x SHELL=/bin/sh",
            "printf '#!/bin/sh\\n' > /tmp/b/git; PATH=/tmp/b:$PATH git status",
            "cp /tmp/x ~/.local/bin/git",
            "ln -sf /tmp/x ~/bin/gatesh",
        ),
        counter=(
            "export PATH=$PATH:~/bin",
            "export PATH=/nonexistent/bin:$PATH",
            'export PATH="$HOME/.cargo/bin:$PATH"',
            "PATH=/nonexistent/bin:$PATH make",
            "alias ll='ls -l'",
            "hash -r",
            "echo $SHELL",
            "cp /tmp/x ~/.local/bin/mytool",
            "cp build/git /tmp/fake-bin/git",
        ),
        whole=session_shadow_whole,
    ),
    SelfRule(
        "self.daemon-kill",
        "stops the gatesh daemon: tampering with the gate",
        lambda s: kills_daemon(s.cmd, s.index, s.facts, s.prot),
        heads=KILLERS | {"systemctl", "launchctl", "service", "fuser"},
        examples=(
            "pkill -f gatesh",
            "killall gatesh",
            "kill $(pgrep gatesh)",
            "kill -9 `pidof gatesh`",
            "systemctl --user stop gatesh",
            "sudo pkill -9 -f 'gatesh daemon'",
            "pgrep -f gatesh | xargs kill",
            "ps aux | grep gates[h] | awk '{print $2}' | xargs kill -9",
            "kill -9 $(cat ~/.local/state/gatesh/daemon.lock)",
            "pkill -f 'python.* -m gatesh'",
            "python3 -c \"import os,signal;os.kill(int(open('/tmp/gatesh-0/daemon.lock').read()),9)\"",
        ),
        counter=(
            "pkill -f webpack",
            "kill 1234",
            "kill $(pgrep node)",
            "systemctl status gatesh",
            "kill -0 $(pgrep -f gatesh)",
            "kill %1",
            "pgrep -f gatesh",
        ),
    ),
    SelfRule(
        "self.daemon-trace",
        "attaches a tracer or debugger to the gatesh daemon: tampering with the gate",
        lambda s: traces_daemon(s.cmd, s.facts),
        heads=TRACERS,
        examples=(
            "strace -p $(pgrep -f gatesh)",
            "gdb -p $(pidof gatesh)",
            "sudo ltrace -p $(pgrep gatesh)",
        ),
        counter=("strace -p 1234", "strace ls", "gdb ./a.out"),
    ),
    SelfRule(
        "self.hook-names",
        "changes or runs the gate's own __gatesh_* functions or variables in this shell: tampering with the gate",
        lambda s: names_gate_internals(s.cmd, s.facts),
        heads=NAME_TAKERS | frozenset(NAME_OPTIONS),
        examples=(
            "__gatesh_v=0",
            "__gatesh_state=allowed",
            "unset __gatesh_v",
            "declare -i __gatesh_v=0",
            "typeset -g __gatesh_state=allowed",
            "readonly __gatesh_v",
            "local __gatesh_h=1",
            "export __gatesh_entry=ls",
            "__gatesh_gate() { echo '0)'; }",
            "__gatesh_prompt",
            "__gatesh_addhistory 'ls'",
            "printf -v __gatesh_v %s 0",
            "read __gatesh_h <<< 5",
            "let __gatesh_h=0",
            "(( __gatesh_h = 0 ))",
            ": ${__gatesh_v:=0}",
            "alias __gatesh_gate=\"echo '0)'\"",
            "__gatesh_h=1 true",
            "unfunction __gatesh_precmd",
            "unset -f __gatesh_gate",
            "add-zsh-hook -d precmd __gatesh_precmd",
        ),
        counter=(
            'echo "__gatesh_x"',
            "echo __gatesh_v",
            "declare -p __gatesh_v",
            "typeset -f __gatesh_gate",
            "echo $__gatesh_h",
            "grep __gatesh_ gatesh/shell/bash_hook.bash",
            "my_gatesh_v=1",
            "(( x = __gatesh_h + 1 ))",
        ),
        whole=lambda facts, _prot: names_gate_internals_whole(facts),
    ),
    SelfRule(
        "self.hook",
        "disarms the gate's hook in this shell (traps, key bindings, hook variables): tampering with the gate",
        lambda s: disarms_hook(s.cmd, s.facts),
        heads=HOOK_HEADS,
        examples=(
            "trap - DEBUG",
            "trap '' DEBUG",
            "trap 'echo hi' DEBUG",
            "set +o functrace",
            "shopt -u extdebug",
            "bind -x '\"\\C-m\": true'",
            "bindkey '^M' self-insert",
            "zle -D accept-line",
            "unfunction preexec",
            "PROMPT_COMMAND=",
            "export PROMPT_COMMAND='true'",
            "unset PROMPT_COMMAND",
            "precmd_functions=()",
            "enable -n trap",
            "PS0=",
            "PS0+='x'",
            "unset PS0",
            "readonly PS0",
            "shopt -u promptvars",
            "shopt -qu promptvars",
            "functions[TRAPDEBUG]=",
            "unset 'functions[TRAPDEBUG]'",
            "TRAPDEBUG() { :; }",
            "unfunction TRAPDEBUG",
            "unset -f TRAPDEBUG",
            "setopt no_debug_before_cmd",
            "unsetopt DEBUG_BEFORE_CMD",
            "set +o debugbeforecmd",
            "add-zsh-hook -D precmd '*'",
            "zshaddhistory_functions=()",
            "preexec_functions+=(mine)",
            "shift precmd_functions",
            "set -A precmd_functions",
        ),
        counter=(
            "trap 'rm -f $tmp' EXIT",
            "trap -p",
            "bind -p",
            "bindkey",
            "set -e",
            "shopt -s globstar",
            "unset -f myfunc",
            "export PATH=$PATH:~/bin",
            "shopt -s promptvars",
            "shopt -u nullglob",
            "echo $PS0",
            "declare -p PS0",
            "setopt debug_before_cmd",
            "unsetopt nomatch",
            "setopt localoptions",
            "functions[myfn]='echo hi'",
            "set -A files a b",
            "set +o histexpand",
            "PS1='$ '",
        ),
        whole=lambda facts, _prot: disarms_hook_whole(facts),
    ),
    SelfRule(
        "self.hook-shadow",
        "replaces a builtin the gate's hook calls (a function, alias or disabled builtin of that name): "
        "tampering with the gate",
        lambda s: shadows_hook_builtin(s.cmd, s.facts),
        heads=frozenset({"alias", "disable", "enable"}),
        examples=(
            "print() { builtin print -rn -- ls; }",
            "function setopt { :; }",
            "alias print='echo ls'",
            "local() { :; }",
            "builtin() { :; }",
            "disable print",
            "enable -n setopt",
            "history() { :; }",
        ),
        counter=(
            'ls() { command ls -F "$@"; }',
            "alias ll='ls -l'",
            "disable -p",
            "print -r -- hi",
            "setopt extendedglob",
            "alias",
        ),
        whole=lambda facts, _prot: shadows_hook_builtin_whole(facts),
    ),
    SelfRule(
        "self.hook-history",
        "makes a history setting the gate's hook sets before every entry unchangeable, so the "
        "gate can no longer read entries: tampering with the gate",
        lambda s: tampers_history(s.cmd, s.facts),
        heads=frozenset({"shopt", "readonly", "declare", "typeset", "local", "export"}),
        examples=(
            "readonly HISTSIZE=0",
            "declare -r HISTCONTROL=ignorespace",
            "typeset -r HISTIGNORE='*'",
            "readonly HISTCONTROL",
            "declare -gr HISTSIZE=1",
            "shopt -uo history",
        ),
        counter=(
            "history -c",
            "history -d 12",
            "HISTCONTROL=ignoreboth",
            "HISTSIZE=0",
            "export HISTSIZE=1",
            "shopt -u cmdhist",
            "HISTFILE=~/.bash_history_agent",
            "declare -p HISTCONTROL",
            "readonly PATH_X=1",
            "fc -p",
            "HISTTIMEFORMAT='%F '",
        ),
    ),
    SelfRule(
        "self.history-rerun",
        "re-runs a history line edited or substituted after the gate read it (fc, r): escaping the gate",
        lambda s: reruns_edited(s.cmd, s.facts),
        heads=frozenset({"r", "fc"}),
        examples=(
            "fc -s ls=rm",
            "fc -s 'echo '= 3",
            "fc -e - echo=rm",
            "fc -e vim",
            "fc -e 'sed -i s/a/b/' -1",
            "fc",
            "fc 10 12",
            "r ls=rm",
            "r echo=rm 5",
        ),
        counter=(
            "fc -l",
            "fc -ln -10",
            "fc -s",
            "fc -s make",
            "fc -e - 12",
            "r",
            "r make",
            "fc -W",
        ),
    ),
    SelfRule(
        "self.human-verb",
        "runs a gatesh verb only a person may run (approve, deny, resume, mandate, undo, watch, config changes, "
        "uninstalling an integration)",
        lambda s: human_verb(s.cmd, s.facts),
        heads=frozenset({"gatesh", "gatesh.py"}),
        examples=(
            "gatesh approve 42",
            "gatesh deny 42",
            "gatesh resume s1",
            "gatesh mandate 'delete it all'",
            "gatesh install claude-code --uninstall",
            "gatesh config set rung bypass",
            "python3 -m gatesh approve 7",
            "gatesh watch",
            "gatesh undo 12",
            "gatesh undo --list",
        ),
        counter=(
            "gatesh explain 'rm -rf x'",
            "gatesh status",
            "gatesh config",
            "gatesh log --json",
            "gatesh install git",
        ),
    ),
    SelfRule(
        "self.ungated-shell",
        "starts a shell that gatesh does not gate: escaping the gate",
        lambda s: ungated_shell(s.cmd, s.facts),
        heads=SHELLS | {"script", "su", "sudo", "doas", "pkexec", "run0", "machinectl"},
        examples=(
            "/bin/bash",
            "/usr/bin/zsh -i",
            "exec bash",
            "exec /bin/sh",
            "script",
            "script -q /dev/null",
            "env -i bash",
            "sudo -i",
            "sudo su",
            "su -",
            "sudo bash",
            "find . -exec /bin/sh \\; -quit",
            "/bin/bash --login",
        ),
        counter=(
            "bash",
            "sh",
            "/bin/bash -c 'ls'",
            "/bin/bash build.sh",
            "exec bash -c 'make'",
            "script -c 'make test' build.log",
            "bash -lc 'npm test'",
            "sudo -u me ls",
            "zsh -i",
        ),
    ),
    SelfRule(
        "self.interpreter-escape",
        "an interpreter starts an interactive shell nothing gates: escaping the gate",
        lambda s: interpreter_escape(s.cmd, s.facts),
        examples=(
            "python3 -c 'import pty; pty.spawn(\"/bin/bash\")'",
            "python -c 'import os; os.system(\"/bin/sh\")'",
            "perl -e 'exec \"/bin/sh\";'",
            "ruby -e 'exec \"/bin/sh\"'",
            "vim -c ':!/bin/sh'",
            "awk 'BEGIN {system(\"/bin/sh\")}'",
            "php -r 'system(\"/bin/bash -i\");'",
            'node -e \'require("child_process").spawn("/bin/sh", {stdio: [0, 1, 2]})\'',
            "lua -e 'os.execute(\"/bin/sh\")'",
            "vim -c ':sh'",
        ),
        counter=(
            "python -c 'print(1)'",
            'python -c \'import subprocess; subprocess.run(["bash", "build.sh"])\'',
            "awk '{print $1}' f",
            "vim -c ':wq' notes.txt",
            "perl -e 'print \"sh\"'",
        ),
    ),
)


# --- which rules a plain command can match -------------------------------------------------------

# The wrappers a test reads (`env -u X gatesh`, `strace -p`); the others (sudo, nohup, …) none reads.
_READ_WRAPPERS: Final = frozenset({"env"}) | TRACERS


def plain(cmd: SimpleCommand) -> bool:
    """A command none of whose parts every rule looks at whatever its head: a static head that is
    no shell, interpreter or ``__gatesh_`` name, every word static, no assignment, no write
    redirection, not run by xargs, no ``env`` or tracer wrapper.

    A rule with ``heads`` reads a plain command only through its head (and, with ``on_writes``,
    its write effects): for a plain command of another head it answers no (each test's code shows
    why; the equivalence is tested over every rule's examples and seeded splices of them)."""
    head = cmd.head
    argv = cmd.argv
    if not head or not argv or cmd.assignments or cmd.writes or cmd.context == "xargs":
        return False
    if (
        head in SHELLS
        or is_interpreter(head)
        or head.startswith("__gatesh_")
        or argv[0].text.startswith("__gatesh_")
    ):
        return False
    if cmd.wrappers and not _READ_WRAPPERS.isdisjoint(cmd.wrappers):
        return False
    for w in argv:
        if not w.static:
            return False
    return True


def _steps(head: str | None, writes: bool, paths: bool = True) -> tuple[SelfRule, ...]:
    """Every rule in order (``head`` None), or those a plain command with ``head`` (and, with
    ``writes``, a write effect) can match; without ``paths``, none of the path rules (a command
    with no path effects that runs no program text changes no place)."""
    return tuple(
        r
        for r in RULES
        if (paths or not isinstance(r.test, Touched))
        and (head is None or r.heads is None or head in r.heads or (writes and r.on_writes))
    )


_ALL_STEPS: Final = _steps(None, True)
_ALL_BUT_PATHS: Final = _steps(None, True, paths=False)
_NAMED_HEADS: Final = frozenset(h for r in RULES if r.heads for h in r.heads)
# The steps of a plain command, by its head and whether it writes; a head no rule names gets
# the defaults.
_PLAIN_STEPS: Final = {(h, w): _steps(h, w) for h in _NAMED_HEADS for w in (False, True)}
_PLAIN_DEFAULT: Final = {w: _steps("", w) for w in (False, True)}
_PLAIN_NO_PATHS: Final = {h: _steps(h, False, paths=False) for h in _NAMED_HEADS}
_PLAIN_NO_PATHS_DEFAULT: Final = _steps("", False, paths=False)
_WHOLE_RULES: Final = tuple(r for r in RULES if r.whole is not None)
_HOOK_RULE: Final = next(r for r in RULES if r.id == "self.hook")


def _holds_any(text: str, literals: tuple[str, ...]) -> bool:
    """Whether ``text`` holds one of ``literals`` (a substring search each: cheaper than a regex)."""
    for literal in literals:
        if literal in text:
            return True
    return False


def check(
    facts: Facts,
    paths: GatePaths,
    cwd: str = "",
    *,
    every_rule: bool = False,
    branches: tuple[str, ...] = DEFAULT_BRANCHES,
) -> Finding | None:
    """The first self-protection rule the command matches, as an ATTACK finding; None if none.

    Guarantees: every executed command the reader found is matched, whatever its context, with
    the path effects the reader found for it. Fails closed: a line the reader could not read
    whole, fed to a shell on its input, or naming more paths than the reader records, is also
    matched on its raw text (``self.raw-text``). ``cwd`` is the command's folder, ``branches``
    the protected branches the config names (``git.protected_branches``). A plain command
    (:func:`plain`) is asked only the rules its head can match; ``every_rule`` asks every rule of
    every command (the same answer).
    """
    prot = protected_for(paths, cwd)
    # A function definition or a hooks-off setting anywhere is read by rules whatever the head.
    plain_line = not every_rule and not facts.functions and not says_hooks_off(facts.text)
    by_command: dict[int, list[PathEffect]] = {}
    for e in facts.paths:
        found = by_command.get(e.command)
        if found is None:
            by_command[e.command] = [e]
        else:
            found.append(e)
    for index, cmd in enumerate(facts.commands):
        if cmd.remote:
            continue  # another host's files and processes are not this gate's
        effects = by_command.get(index, _NONE)
        # a command with no path effects that runs no program text changes no protected place
        touching = bool(effects) or is_interpreter(cmd.head)
        if plain_line and plain(cmd):
            if not touching:
                steps = _PLAIN_NO_PATHS.get(cmd.head, _PLAIN_NO_PATHS_DEFAULT)
            else:
                writes = any(e.direction.writes for e in effects)
                steps = _PLAIN_STEPS.get((cmd.head, writes)) or _PLAIN_DEFAULT[writes]
        else:
            steps = _ALL_STEPS if touching or every_rule else _ALL_BUT_PATHS
        seen = Seen(cmd, index, effects, facts, prot, branches)
        for rule in steps:
            if rule.test(seen):
                return Finding(rule.id, Outcome.ATTACK, rule.reason)
    for rule in _WHOLE_RULES:
        if rule.whole is not None and rule.whole(facts, prot):
            return Finding(rule.id, Outcome.ATTACK, rule.reason)
    text = facts.text
    if _holds_any(text, _HOOK_NAMES) and _HOOK_ASSIGN_TEXT.search(text):
        # The reader drops a bare assignment with no command (`PROMPT_COMMAND=`), so the text decides.
        return Finding(_HOOK_RULE.id, Outcome.ATTACK, _HOOK_RULE.reason)
    if (
        _holds_any(text, _RAW_NEEDS)
        and (not facts.readable or facts.paths_cut or reads_code_from_stdin(facts))
        and _RAW.search(text)
    ):
        return Finding(RAW_TEXT_ID, Outcome.ATTACK, _RAW_REASON)
    return None


_NONE: Final[list[PathEffect]] = []
RAW_TEXT_ID: Final = "self.raw-text"
_RAW_REASON: Final = (
    "text the reader could not unfold whole (unreadable, fed to a shell on stdin, or naming more "
    "paths than it records) changes gatesh's files, daemon, hook or a harness's settings, or "
    "runs a human-only verb: tampering with the gate"
)


# Linear (bypass_failures #12, the same ReDoS class): the old `(?:^|[;&|\n({])\s*(?:NAME=\S*\s+)*`
# re-scanned a newline run or a blank-free `a=1;a=1;…` from every separator (10 s at 20 KB).
# Now blanks never cross a newline (the newline is itself a start), values are possessive and
# stop at unquoted separators (quoted, `$(…)`, `${…}` parts kept whole), and `{` starts only as
# the reserved word (blank on both sides), so no start re-reads another start's text.
_ASSIGN_VALUE: Final = (
    r"(?:\$\(\([^()]*+\)\)|\$\([^()]*+\)|\$\{[^{}]*+\}|'[^']*+'|"
    + '"[^"]*+"'
    + r"|[^\s;&|'"
    + '"'
    + r"($]++|\$)*+"
)
_HOOK_ASSIGN_TEXT: Final = re.compile(
    r"(?:^|(?<=[;&|\n(])|(?<=(?<![^\s;&|(])\{)(?=\s))[^\S\n]*+(?:[A-Za-z_]\w*+="
    + _ASSIGN_VALUE
    + r"[^\S\n]++)*(?:PROMPT_COMMAND|preexec_functions|precmd_functions"
    r"|zshaddhistory_functions|PS0)(?:\[[^\]]*\])?\+?="
)
# One of these is in every text _HOOK_ASSIGN_TEXT matches (it is not searched otherwise).
_HOOK_NAMES: Final = (
    "PROMPT_COMMAND",
    "preexec_functions",
    "precmd_functions",
    "zshaddhistory_functions",
    "PS0",
)

# For text the reader could not unfold only: names of gatesh's files, a harness's settings or the
# hook next to a verb that changes them.
# Linear: only the first verb of a `;&|`/newline segment is tried (a later verb's name search sees a
# subset of the first one's text, so no match is lost); `rm rm rm …` re-scanned the segment from
# every verb (20 s at 20 KB).
_RAW_VERB: Final = (
    r"(?:\brm\b|\bmv\b|>|\btee\b|\bsed\s++-i|\btruncate\b|\bchmod\b|\bpkill\b|\bkillall\b|\bkill\b)"
)
_RAW: Final = re.compile(
    r"(?:^|(?<=[;&|\n]))(?:(?!" + _RAW_VERB + r")[^;&|\n])*" + _RAW_VERB + r"[^;&|\n]*"
    r"(?:\.config/gatesh|\.local/(?:state|share)/gatesh|/etc/gatesh|\bgatesh\b"
    r"|\.claude/(?:settings|projects|shell-snapshots)|\.codex/(?:config\.toml|hooks\.json|sessions"
    r"|shell_snapshots)|\.gemini/(?:settings\.json|tmp))"
    r"|\btrap\s++(?:-|''|\"\")\s++DEBUG|\bgatesh\s++(?:approve|deny|resume|mandate|undo)\b"
)
# One of these is in every text _RAW matches (its names, or the DEBUG of the trap).
_RAW_NEEDS: Final = ("gatesh", "DEBUG", ".claude/", ".codex/", ".gemini/")

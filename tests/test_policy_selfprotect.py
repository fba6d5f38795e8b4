"""Self-protection (S3.4): tampering with the gate is an attack."""

from __future__ import annotations

import pytest

from gatesh._paths import GatePaths, current
from gatesh._types import Facts, Outcome
from gatesh.policy import selfprotect
from gatesh.reading import read


def rule_of(text: str, paths: GatePaths | None = None) -> str | None:
    found = selfprotect.check(read(text, cwd="/tmp"), paths or current())
    if found is not None:
        assert found.outcome is Outcome.ATTACK and found.reason
    return found.rule_id if found else None


def test_protected_paths_come_from_gatepaths(tmp_path) -> None:
    paths = GatePaths(
        str(tmp_path / "cfg"),
        str(tmp_path / "st"),
        str(tmp_path / "rt"),
        str(tmp_path / "dt"),
        str(tmp_path / "sys/config.toml"),
    )
    assert rule_of(f"rm -rf {tmp_path}/st", paths) == "self.files-delete"
    assert rule_of(f"echo x > {tmp_path}/cfg/config.toml", paths) == "self.files-write"
    assert rule_of(f"rm {tmp_path}/rt/daemon.sock", paths) == "self.files-delete"
    assert rule_of(f"cp x {tmp_path}/sys/config.toml", paths) == "self.files-write"
    assert rule_of(f"rm -rf {tmp_path}", paths) == "self.files-delete"  # a folder holding them
    assert rule_of(f"rm -rf {tmp_path}/other", paths) is None
    assert rule_of(f"cat {tmp_path}/cfg/config.toml", paths) is None


@pytest.mark.parametrize(
    "text",
    [
        "rm -rf ~/.local/state/gatesh",
        "mv ~/.config/gatesh ~/.config/gatesh.off",
        "rm -rf $HOME/.config/gatesh/",
        "sudo rm -f /etc/gatesh/config.toml",
        "bash -c 'rm -rf ~/.config/gatesh'",
        "echo $(rm -rf ~/.config/gatesh)",
        "rm -rf ~/.config/gat*",
        'rm -rf "$XDG_CONFIG_HOME/gatesh"',
        "unlink ~/.local/state/gatesh/audit.jsonl",
    ],
)
def test_deleting_gate_files(text: str) -> None:
    assert rule_of(text) == "self.files-delete"


@pytest.mark.parametrize(
    "text",
    [
        ": > ~/.local/state/gatesh/audit.jsonl",
        "printf 'rung=\"bypass\"' >> ~/.config/gatesh/config.toml",
        "install -m 644 x.toml ~/.config/gatesh/config.toml",
        "cp -t ~/.config/gatesh evil.toml",
        "chmod -R 777 ~/.local/state",
        "touch ~/.config/gatesh/config.toml",
        "dd if=/dev/null of=~/.local/state/gatesh/audit.jsonl",
        "perl -pi -e 's/a/b/' ~/.config/gatesh/config.toml",
        "nano ~/.config/gatesh/config.toml",
    ],
)
def test_writing_gate_files(text: str) -> None:
    assert rule_of(text) == "self.files-write"


@pytest.mark.parametrize(
    "text",
    [
        "cat ~/.local/state/gatesh/audit.jsonl | tail",
        "vim .gatesh.toml",
        "echo 'x' >> .gatesh.toml",
        "rm -rf ~/.config/Code/Cache",
        "cp ~/.config/gatesh/config.toml ./backup.toml",
        "gatesh config",
        "gatesh explain 'ls'",
        "ls ~/.config",
        "rm -rf ~/.cache/pip",
    ],
)
def test_ordinary_work_near_gate_files(text: str) -> None:
    assert rule_of(text) is None


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("pkill gatesh", "self.daemon-kill"),
        ("killall -9 gatesh", "self.daemon-kill"),
        ("kill -STOP $(pgrep -f 'gatesh daemon')", "self.daemon-kill"),
        ("kill $(cat /tmp/gatesh-1000/daemon.pid)", "self.daemon-kill"),
        ("strace -f -p $(pgrep gatesh)", "self.daemon-trace"),
        ("gdb -p $(pidof gatesh)", "self.daemon-trace"),
        ("trap - DEBUG", "self.hook"),
        ("trap '' DEBUG", "self.hook"),
        ("shopt -u extdebug", "self.hook"),
        ("set +T", "self.hook"),
        ('bind \'"\\C-m": ""\'', "self.hook"),
        ("bindkey -r '^M'", "self.hook"),
        ("zle -N accept-line my-accept", "self.hook"),
        ("unfunction TRAPDEBUG", "self.hook"),
        ("PROMPT_COMMAND='true'", "self.hook"),
        ("export PROMPT_COMMAND=", "self.hook"),
        ("declare -a preexec_functions=()", "self.hook"),
        ("unset -f __gatesh_hook", "self.hook-names"),
        ("gatesh approve 12", "self.human-verb"),
        ("gatesh resume sess-1", "self.human-verb"),
        ("gatesh mandate 'go ahead'", "self.human-verb"),
        ("gatesh config set rung bypass", "self.human-verb"),
        ("sudo gatesh deny 3", "self.human-verb"),
        ("gatesh --json approve 4", "self.human-verb"),
    ],
)
def test_daemon_hook_and_human_verbs(text: str, rule: str) -> None:
    assert rule_of(text) == rule


@pytest.mark.parametrize(
    "text",
    [
        "/bin/bash",
        "/bin/sh",
        "/usr/bin/zsh",
        "/usr/local/bin/bash -l",
        "/bin/bash -i",
        "exec bash",
        "exec zsh -l",
        "exec /bin/sh",
        "exec -a x bash",
        "script",
        "script -q out.log",
        "env -i bash",
        "env -i /bin/sh -l",
        "sudo -s",
        "sudo -i",
        "su",
        "su - root",
        "sudo sh",
        "find . -exec /bin/sh \\;",
        "nohup /bin/bash",
        "echo rm -rf x | /bin/sh",
    ],
)
def test_ungated_shells(text: str) -> None:
    assert rule_of(text) == "self.ungated-shell"


@pytest.mark.parametrize(
    "text",
    [
        "bash",
        "zsh",
        "sh",
        "bash -l",
        "bash script.sh",
        "/bin/bash ./build.sh",
        "/bin/bash -c 'make'",
        "bash -lc 'ls'",
        "exec make",
        "exec bash -c 'npm start'",
        "script -c 'make' log.txt",
        "sudo apt update",
        "env bash",
        "su -c 'whoami' bob",
    ],
)
def test_shells_that_stay_gated(text: str) -> None:
    assert rule_of(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "python -c 'import pty;pty.spawn(\"/bin/sh\")'",
        'python3 -c \'import os; os.execl("/bin/sh", "sh")\'',
        "perl -e 'system(\"/bin/bash\")'",
        "ruby -e 'exec \"/bin/bash\"'",
        "php -r 'passthru(\"/bin/sh\");'",
        "awk 'BEGIN {system(\"/bin/bash -i\")}'",
        "vim -c ':!/bin/bash'",
        "nvim -c ':shell'",
        "gdb -nx -ex '!sh' -ex quit",
        "lua -e 'os.execute(\"sh\")'",
    ],
)
def test_interpreter_shell_escapes(text: str) -> None:
    assert rule_of(text) == "self.interpreter-escape"


def test_unreadable_text_naming_the_gate() -> None:
    facts = Facts(text="rm -rf ~/.config/gatesh $((", readable=False, unreadable="unreadable")
    found = selfprotect.check(facts, current())
    assert found is not None and found.outcome is Outcome.ATTACK


def test_remote_commands_are_another_hosts_business() -> None:
    assert rule_of("ssh me@host.example 'rm -rf ~/.config/gatesh'") is None


def test_human_verb_fed_to_a_shell_on_stdin() -> None:
    # the reader reads the text fed to sh (S2.1): the verb is found as a command of its own
    assert rule_of("echo 'gatesh approve 1' | sh") == "self.human-verb"
    assert rule_of("./gen | sh") is None
    assert rule_of("echo 'gatesh approve 1'") is None


# --- the in-shell gate of the PTY session (S10): its functions, variables, options and history ----


@pytest.mark.parametrize(
    "text",
    [
        "__gatesh_v=0",
        "__gatesh_state=allowed",
        "x=1; __gatesh_h=5",
        "unset __gatesh_v",
        "unset -v __gatesh_h",
        "declare -gi __gatesh_v=0",
        "typeset -g __gatesh_entry=ls",
        "readonly __gatesh_v",
        "local __gatesh_h",
        "export __gatesh_launcher=/bin/true",
        "__gatesh_gate() { :; }",
        "function __gatesh_precmd { :; }",
        "__gatesh_gate",
        "__gatesh_addhistory 'ls'",
        "printf -v __gatesh_v '%s' 0",
        "read -r __gatesh_h <<< 1",
        "let __gatesh_h=1",
        "(( __gatesh_h = 0 ))",
        "(( __gatesh_h++ ))",
        "echo $(( __gatesh_h += 1 ))",
        ": ${__gatesh_v:=0}",
        "alias __gatesh_gate='echo 0\\)'",
        "unfunction __gatesh_addhistory",
        "unset -f __gatesh_prompt",
        "add-zsh-hook -d precmd __gatesh_precmd",
        "readonly -f __gatesh_gate",
        "eval '__gatesh_state=allowed'",
        "bash -c 'unset __gatesh_v'",
    ],
)
def test_gate_internals_are_tampering(text: str) -> None:
    assert rule_of(text) == "self.hook-names"


@pytest.mark.parametrize(
    "text",
    [
        'echo "__gatesh_x"',
        "echo __gatesh_v",
        "printf '%s\\n' __gatesh_v",
        "echo $__gatesh_h",
        "declare -p __gatesh_v",
        "typeset -f __gatesh_gate",
        "grep -n __gatesh_ gatesh/shell/bash_hook.bash",
        "my_gatesh_v=1",
        "(( n = __gatesh_h + 1 ))",
        "functions __gatesh_precmd",
        "git log -S __gatesh_gate",
    ],
)
def test_gate_internals_as_data(text: str) -> None:
    assert rule_of(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "PS0=",
        "PS0=''",
        "PS0+='x'",
        "export PS0=",
        "unset PS0",
        "readonly PS0",
        "PS0=x ls",
        "PROMPT_COMMAND=",
        "x=1; PROMPT_COMMAND=true",
        "unset PROMPT_COMMAND",
        "precmd_functions=()",
        "precmd_functions=(${precmd_functions:#__gatesh_precmd})",
        "preexec_functions+=(f)",
        "zshaddhistory_functions=()",
        "shift zshaddhistory_functions",
        "set -A precmd_functions",
        "add-zsh-hook -d precmd f",
        "add-zsh-hook -D zshaddhistory '*'",
        "shopt -u promptvars",
        "shopt -qu promptvars",
        "shopt -u extdebug",
        "TRAPDEBUG() { :; }",
        "function TRAPDEBUG { return 0; }",
        "functions[TRAPDEBUG]=",
        "functions[TRAPDEBUG]='return 0'",
        "functions+=([TRAPDEBUG]='return 0')",
        "unset 'functions[TRAPDEBUG]'",
        "unfunction TRAPDEBUG",
        "unset -f TRAPDEBUG",
        "trap - DEBUG",
        "trap '' DEBUG",
        "unsetopt DEBUG_BEFORE_CMD",
        "unsetopt debugbeforecmd",
        "setopt no_debug_before_cmd",
        "setopt NO_DEBUGBEFORECMD",
        "set +o debug_before_cmd",
        "set -o nodebugbeforecmd",
    ],
)
def test_disarming_the_shell_hook(text: str) -> None:
    assert rule_of(text) == "self.hook"


@pytest.mark.parametrize(
    "text",
    [
        "shopt -s promptvars",
        "shopt -u nullglob",
        "shopt -s globstar",
        "echo $PS0",
        "declare -p PS0 PROMPT_COMMAND",
        "PS1='$ '",
        "setopt debug_before_cmd",
        "unsetopt nomatch",
        "setopt localoptions",
        "unsetopt err_exit",
        "setopt extendedglob",
        "functions[myfn]='echo hi'",
        "typeset -f TRAPDEBUG",
        "set -A files a b",
        "set +o histexpand",
        "set -o history",
        "emulate -L zsh",
        "add-zsh-hook precmd my_precmd",
        "precmd() { print -P '%~'; }",
    ],
)
def test_ordinary_shell_settings(text: str) -> None:
    assert rule_of(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "readonly HISTSIZE=0",
        "readonly HISTCONTROL",
        "declare -r HISTCONTROL=ignorespace",
        "typeset -r HISTIGNORE='*'",
        "declare -gr HISTSIZE=1",
        "local -r HISTSIZE=0",
        "readonly HISTIGNORE+=x",
        "shopt -uo history",
        "f() { readonly HISTSIZE=0; }",
    ],
)
def test_making_the_history_settings_unchangeable(text: str) -> None:
    assert rule_of(text) == "self.hook-history"


@pytest.mark.parametrize(
    "text",
    [
        # S10: the hook sets these again before every entry, so changing them (in startup files or by
        # a command) changes nothing the gate reads; the user's values decide what the list keeps.
        "history",
        "history 20",
        "history | grep make",
        "history -w",
        "history -a",
        "history -p '!!'",
        "history -c",
        "history -d 12",
        "history -d -1",
        "history -s 'ls'",
        "history -r ~/h",
        "history -n",
        "shopt -s cmdhist lithist",
        "shopt -u cmdhist",
        "shopt -u lithist",
        "set -o history",
        "HISTSIZE=1000",
        "export HISTSIZE=5000",
        "HISTSIZE=",
        "HISTSIZE=0",
        "export HISTSIZE=0",
        "HISTSIZE=0 true",
        "unset HISTSIZE",
        "HISTCONTROL=ignorespace",
        "HISTCONTROL=",
        "declare HISTCONTROL=ignoreboth",
        "export HISTIGNORE='rm *'",
        "HISTFILE=~/.agent_history",
        "export HISTFILESIZE=100000",
        "echo $HISTCONTROL",
        "HISTTIMEFORMAT='%F %T '",
        "fc -W",
        "fc -A",
        "fc -p",
        "fc -R ~/.zsh_history",
        "declare -p HISTCONTROL",
        "readonly -p",
        "readonly HISTTIMEFORMAT",
    ],
)
def test_ordinary_history_use(text: str) -> None:
    assert rule_of(text) is None


def test_set_plus_o_history_stays_a_hook_finding() -> None:
    assert rule_of("set +o history") == "self.hook"


@pytest.mark.parametrize(
    "text",
    [
        "fc -s ls=rm",
        "fc -s 'echo '= 3",
        "fc -e - echo=rm",
        "fc -e - 'echo '= -1",
        "fc -e vim",
        "fc -e 'sed -i s/a/b/' -1",
        "fc",
        "fc 10 12",
        "fc -3",
        "r ls=rm",
        "r 'echo '=",
        "r echo=rm 5",
    ],
)
def test_rerunning_an_edited_history_line(text: str) -> None:
    assert rule_of(text) == "self.history-rerun"


@pytest.mark.parametrize(
    "text",
    [
        "fc -l",
        "fc -ln -10",
        "fc -s",
        "fc -s make",
        "fc -s 12",
        "fc -e - 12",
        "fc -e -",
        "r",
        "r make",
        "r 12",
        "r -e 'x=1'",
    ],
)
def test_rerunning_an_unchanged_line_is_ordinary(text: str) -> None:
    assert rule_of(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "print() { builtin print -rn -- ls; }",
        "function setopt { :; }",
        "local() { :; }",
        "return() { :; }",
        "builtin() { :; }",
        "history() { :; }",
        "alias print='echo ls'",
        "alias setopt=true",
        "disable print",
        "disable setopt",
        "enable -n local",
    ],
)
def test_shadowing_a_builtin_the_hook_calls(text: str) -> None:
    assert rule_of(text) == "self.hook-shadow"


@pytest.mark.parametrize(
    "text",
    [
        'ls() { command ls -F "$@"; }',
        'mk() { make -j8 "$@"; }',
        "alias ll='ls -l'",
        "alias",
        "disable -p",
        "print -r -- hi",
        "f() { local x=1; return 0; }",
        "python3 -c 'print()'",
        "enable",
    ],
)
def test_ordinary_functions_and_aliases(text: str) -> None:
    assert rule_of(text) is None


def test_harness_wrapper_shopt_is_not_the_agents() -> None:
    # Gemini CLI's own wrapper turns promptvars off; it is peeled before policy (S1), so it is not an attack.
    wrapped = (
        "shopt -u promptvars nullglob extglob nocaseglob dotglob; { ls -la; }; __code=$?; "
        "pgrep -g 0 >/tmp/shell_pgrep_ab12cd.tmp 2>&1; exit $__code;"
    )
    assert rule_of(wrapped) is None


def test_whole_line_rules_are_linear() -> None:
    import time

    from gatesh.policy.selfprotect import _shell

    start = time.process_time()
    for unit in ("((", "(( __gatesh_", "${__gatesh_", "local ", "local (", "__gatesh_v ", "\n"):
        _shell._GATESH_EXPANSION_WRITE.search(unit * 20000)
        _shell._DECLARER_FUNC.search(unit * 20000)
    assert time.process_time() - start < 5.0


def test_pipeline_halts_on_shopt_u_promptvars() -> None:
    from gatesh._types import Action, Stage
    from gatesh.config import default
    from gatesh.finish import dry_run
    from gatesh.pipeline import decide
    from gatesh.session import SessionState

    session = SessionState()
    d = decide("shopt -u promptvars", cwd="/tmp", config=default(), session=session)
    assert d.action is Action.HALT and d.stage is Stage.SELF_PROTECTION and d.rule_id == "self.hook"
    assert d.outcome is Outcome.ATTACK and not session.halted  # deciding changes nothing
    dry_run(d, state=session, cwd="/tmp")  # finishing applies the halt
    assert session.halted
    assert decide("ls", cwd="/tmp", config=default(), session=session).action is Action.REFUSE


def test_what_find_feeds_xargs_is_looked_up_on_disk(tmp_path) -> None:
    """`find PARENT -name PAT | xargs WRITER` writes a gate file only when one of the names on the
    way down to a gate folder, or a file inside it, matches every -name test: find prints no other."""
    paths = GatePaths(
        str(tmp_path / "cfg"),
        str(tmp_path / "st"),
        str(tmp_path / "rt"),
        str(tmp_path / "dt"),
        str(tmp_path / "sys/config.toml"),
    )
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "config.toml").write_text("")
    assert (
        rule_of(f"find {tmp_path} -name '*.toml' | xargs -I@ mv @ @.bak", paths)
        == "self.files-delete"
    )
    assert (
        rule_of(f"find {tmp_path} -iname 'CFG' | xargs chmod -R 777", paths) == "self.files-write"
    )
    assert rule_of(f"find {tmp_path} -name '*.mp3' | xargs -I@ mv @ /mnt/mp3", paths) is None
    (tmp_path / "st").mkdir()
    (tmp_path / "st" / "song.mp3").write_text("")
    assert (
        rule_of(f"find {tmp_path} -name '*.mp3' | xargs -I@ mv @ /mnt/mp3", paths)
        == "self.files-delete"
    )
    # a -name test after an action, or beside -o, no longer limits what is printed
    assert (
        rule_of(f"find {tmp_path} -print -name '*.txt' | xargs -I@ mv @ @.bak", paths)
        == "self.files-delete"
    )
    assert (
        rule_of(f"find {tmp_path} -name '*.txt' -o -name x | xargs -I@ mv @ @.bak", paths)
        == "self.files-delete"
    )


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("find / | xargs cp -t /backup", False),
        ("find / | xargs cp -vt /backup", False),
        ("find / | xargs -I{} cp {} /backup", False),
        ("find / | xargs cp /etc/motd", True),
        ("find / | xargs -I{} cp /etc/motd {}", True),
        ("find / | xargs tar czf all.tgz", False),
        ("find / | xargs tar czf", True),
        ("find / | xargs -I{} tar -cf {} notes", True),
        ("find / | xargs chmod 600", True),
        ("find / | xargs -I{} rsync -a {} /mnt/", False),
    ],
)
def test_words_xargs_puts_where_a_writer_writes(text: str, written: bool) -> None:
    """A copy's sources and a tar archive's members are read; its destination is written."""
    assert (rule_of(text) == "self.files-write") is written


def _gate(tmp_path) -> GatePaths:
    return GatePaths(
        str(tmp_path / "cfg"),
        str(tmp_path / "st"),
        str(tmp_path / "rt"),
        str(tmp_path / "dt"),
        str(tmp_path / "sys/config.toml"),
    )


def test_deep_writes_reach_the_places_under_them_and_no_deeper(tmp_path) -> None:
    """A recursive write over a folder holding a place writes the place; a plain one does not;
    `find -maxdepth N` feeds only what lies N levels down."""
    paths = _gate(tmp_path)
    assert rule_of(f"chmod -R 777 {tmp_path}", paths) == "self.files-write"
    assert rule_of(f"chmod 755 {tmp_path}", paths) is None
    assert rule_of(f"cp -r /tmp/x {tmp_path}", paths) == "self.files-write"
    assert rule_of(f"cp /tmp/x {tmp_path}", paths) is None
    assert rule_of(f"find {tmp_path} -maxdepth 1 | xargs chmod 600", paths) == "self.files-write"
    assert rule_of(f"find {tmp_path}/x -maxdepth 1 | xargs chmod 600", paths) is None
    assert rule_of(f"find {tmp_path}/.. -maxdepth 1 | xargs chmod 600", paths) is None
    assert rule_of(f"find {tmp_path}/.. -maxdepth 2 | xargs chmod 600", paths) == "self.files-write"


def test_a_glob_names_a_place_one_component_at_a_time(tmp_path) -> None:
    paths = _gate(tmp_path)
    assert rule_of(f"rm -rf {tmp_path}/*", paths) == "self.files-delete"
    assert rule_of(f"touch {tmp_path}/c*", paths) == "self.files-write"  # cfg itself
    assert rule_of(f"touch {tmp_path}/*/x", paths) is None  # inside, not the place
    assert rule_of(f"find {tmp_path}/c* -mtime +7 -delete", paths) == "self.files-delete"
    assert rule_of(f"find {tmp_path}/.. -mtime +7 -delete", paths) is None  # a selection above


def test_a_path_only_known_when_it_runs_is_matched_by_how_it_is_written() -> None:
    assert rule_of('echo x > "$XDG_CONFIG_HOME/gatesh/config.toml"') == "self.files-write"
    assert rule_of('cp x "${CLAUDE_CONFIG_DIR}/settings.json"') == "self.harness-settings"
    assert rule_of('cp /bin/true "$(command -v gatesh)"') == "self.install"
    assert rule_of('echo x > "$OUT/notes.txt"') is None


def test_work_inside_a_protected_folder() -> None:
    assert rule_of("cd ~/.config/gatesh && make") == "self.files-cwd"
    assert rule_of("cd ~/.config/gatesh && cat config.toml && ls") is None


def test_the_venvs_own_installer_changes_the_gates_code() -> None:
    venv = "$HOME/.local/share/gatesh/venv/bin"
    assert rule_of(f'"{venv}/python" -m pip install x') == "self.install"
    assert rule_of(f'"{venv}/python3" -Im pip uninstall -y gatesh') == "self.install"
    assert rule_of(f'"{venv}/python" -c "print(1)"') is None


def test_fuser_kill_on_the_socket_stops_the_daemon() -> None:
    assert rule_of('fuser -k "$XDG_RUNTIME_DIR/gatesh/daemon.sock"') == "self.daemon-kill"
    assert rule_of("fuser -v ~/.config/gatesh/config.toml") is None


def test_facts_cut_short_fail_closed() -> None:
    """A line naming more paths than the reader records is also matched on its text."""
    many = " ".join(f"f{i}.txt" for i in range(400))
    facts = read(f"rm {many} ~/.config/gatesh/config.toml", cwd="/tmp")
    assert facts.paths_cut
    found = selfprotect.check(facts, current())
    assert found is not None and found.rule_id == "self.raw-text"
    assert selfprotect.check(read(f"rm {many}", cwd="/tmp"), current()) is None


def test_hookless_pushes_to_protected_branches(tmp_path) -> None:
    """A push with git's hooks skipped is self-protection's when it updates a protected branch: the
    configured ones, the remote's default branch, the checked-out one for a bare `git push`."""
    import subprocess

    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", "-b", "feature", str(repo)], check=True)
    heads = repo / ".git" / "refs" / "remotes" / "origin"
    heads.mkdir(parents=True)
    (heads / "HEAD").write_text("ref: refs/remotes/origin/trunk\n")
    cwd = str(repo)

    def rule(text: str, branches: tuple[str, ...] = ("main", "master")) -> str | None:
        found = selfprotect.check(read(text, cwd=cwd), current(), cwd, branches=branches)
        return found.rule_id if found else None

    assert rule("git push --no-verify origin trunk") == "self.git-hooks-bypass"
    assert rule("git push --no-verify origin dev", branches=("dev",)) == "self.git-hooks-bypass"
    assert rule("git push --no-verify origin dev") is None  # the rater's (git.skip-hooks)
    assert rule("git push --no-verify") is None  # the current branch, feature
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert rule("git push --no-verify") == "self.git-hooks-bypass"
    assert rule("git push origin main") is None  # the hooks run and decide


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("gatesh config", None),
        ("gatesh config --cwd .", None),
        ("gatesh config --cwd=.", None),
        ("gatesh config --json --cwd /tmp", None),
        ("python3 -m gatesh config --cwd .", None),
        ("gatesh config set rung bypass", "self.human-verb"),
        ("gatesh --json approve 4", "self.human-verb"),
        ("gatesh install git --uninstall", "self.human-verb"),
    ],
)
def test_gatesh_config_in_any_option_spelling_is_the_view(text: str, rule: str | None) -> None:
    assert rule_of(text) == rule


def test_a_path_ahead_of_the_others_shadows_gatesh_git_or_a_shell(tmp_path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    assert rule_of(f"export PATH={tools}:$PATH") is None
    (tools / "git").write_text("#!/bin/sh\n")
    (tools / "git").chmod(0o755)
    assert rule_of(f"export PATH={tools}:$PATH") == "self.session-shadow"
    assert rule_of(f"PATH={tools}:$PATH git push") == "self.session-shadow"
    assert rule_of(f"PATH={tools}:$PATH make") is None  # make runs no git through this PATH
    assert rule_of(f"export PATH=$PATH:{tools}") is None  # after the folders gatesh is in


def test_a_git_config_file_is_read_in_the_commands_folder_before_the_line_writes_it(
    tmp_path,
) -> None:
    """GIT_CONFIG_GLOBAL names a file relative to the command's folder; one the line writes (or a
    line writing a path only known when it runs) may say anything by the time git reads it."""
    (tmp_path / "gc").write_text("[user]\n\tname = x\n")
    cwd = str(tmp_path)

    def rule(text: str) -> str | None:
        found = selfprotect.check(read(text, cwd=cwd), current(), cwd)
        return found.rule_id if found else None

    assert rule("GIT_CONFIG_GLOBAL=gc git log -1") is None
    assert rule(f"GIT_CONFIG_GLOBAL={tmp_path}/gc git log -1") is None
    hooks_off = "printf '[core]\\n\\thooksPath = /dev/null\\n'"
    assert rule(f"{hooks_off} > gc; GIT_CONFIG_GLOBAL=gc git push") == "self.git-hooks-path"
    assert rule(f'{hooks_off} > "$f"; GIT_CONFIG_GLOBAL=gc git push') == "self.git-hooks-path"
    assert rule("GIT_CONFIG_GLOBAL=missing git push") == "self.git-hooks-path"


def test_a_program_named_git_written_into_a_folder_on_path(tmp_path, monkeypatch) -> None:
    """The session finds programs in the gate's PATH and the user's bin folders: gatesh, git or a
    shell written there shadows the real one, whatever the PATH statement said before."""
    on_path = tmp_path / "on-path"
    monkeypatch.setenv("PATH", f"{on_path}:/usr/bin:/bin")
    assert rule_of(f"cp /tmp/x {on_path}/git") == "self.session-shadow"
    assert rule_of(f"ln -sf /tmp/x {on_path}/bash") == "self.session-shadow"
    assert rule_of("cp /tmp/x ~/.local/bin/git") == "self.session-shadow"
    assert rule_of(f"cp /tmp/x {on_path}/mytool") is None
    assert rule_of(f"cp /tmp/x {tmp_path}/elsewhere/git") is None  # not where programs are found

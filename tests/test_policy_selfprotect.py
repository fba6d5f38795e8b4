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
    paths = GatePaths(str(tmp_path / "cfg"), str(tmp_path / "st"), str(tmp_path / "rt"), str(tmp_path / "dt"),
                      str(tmp_path / "sys/config.toml"))
    assert rule_of(f"rm -rf {tmp_path}/st", paths) == "self.files-delete"
    assert rule_of(f"echo x > {tmp_path}/cfg/config.toml", paths) == "self.files-write"
    assert rule_of(f"rm {tmp_path}/rt/daemon.sock", paths) == "self.files-delete"
    assert rule_of(f"cp x {tmp_path}/sys/config.toml", paths) == "self.files-write"
    assert rule_of(f"rm -rf {tmp_path}", paths) == "self.files-delete"  # a folder holding them
    assert rule_of(f"rm -rf {tmp_path}/other", paths) is None
    assert rule_of(f"cat {tmp_path}/cfg/config.toml", paths) is None


@pytest.mark.parametrize("text", [
    "rm -rf ~/.local/state/gatesh", "mv ~/.config/gatesh ~/.config/gatesh.off", "rm -rf $HOME/.config/gatesh/",
    "sudo rm -f /etc/gatesh/config.toml", "bash -c 'rm -rf ~/.config/gatesh'", "echo $(rm -rf ~/.config/gatesh)",
    "rm -rf ~/.config/gat*", "rm -rf \"$XDG_CONFIG_HOME/gatesh\"", "unlink ~/.local/state/gatesh/audit.jsonl",
])
def test_deleting_gate_files(text: str) -> None:
    assert rule_of(text) == "self.files-delete"


@pytest.mark.parametrize("text", [
    ": > ~/.local/state/gatesh/audit.jsonl", "printf 'rung=\"bypass\"' >> ~/.config/gatesh/config.toml",
    "install -m 644 x.toml ~/.config/gatesh/config.toml", "cp -t ~/.config/gatesh evil.toml",
    "chmod -R 777 ~/.local/state", "touch ~/.config/gatesh/config.toml", "dd if=/dev/null of=~/.local/state/gatesh/audit.jsonl",
    "perl -pi -e 's/a/b/' ~/.config/gatesh/config.toml", "nano ~/.config/gatesh/config.toml",
])
def test_writing_gate_files(text: str) -> None:
    assert rule_of(text) == "self.files-write"


@pytest.mark.parametrize("text", [
    "cat ~/.local/state/gatesh/audit.jsonl | tail", "vim .gatesh.toml", "echo 'x' >> .gatesh.toml",
    "rm -rf ~/.config/Code/Cache", "cp ~/.config/gatesh/config.toml ./backup.toml", "gatesh config",
    "gatesh explain 'ls'", "ls ~/.config", "rm -rf ~/.cache/pip",
])
def test_ordinary_work_near_gate_files(text: str) -> None:
    assert rule_of(text) is None


@pytest.mark.parametrize(("text", "rule"), [
    ("pkill gatesh", "self.daemon-kill"), ("killall -9 gatesh", "self.daemon-kill"),
    ("kill -STOP $(pgrep -f 'gatesh daemon')", "self.daemon-kill"),
    ("kill $(cat /tmp/gatesh-1000/daemon.pid)", "self.daemon-kill"),
    ("strace -f -p $(pgrep gatesh)", "self.daemon-trace"), ("gdb -p $(pidof gatesh)", "self.daemon-trace"),
    ("trap - DEBUG", "self.hook"), ("trap '' DEBUG", "self.hook"), ("shopt -u extdebug", "self.hook"),
    ("set +T", "self.hook"), ("bind '\"\\C-m\": \"\"'", "self.hook"), ("bindkey -r '^M'", "self.hook"),
    ("zle -N accept-line my-accept", "self.hook"), ("unfunction TRAPDEBUG", "self.hook"),
    ("PROMPT_COMMAND='true'", "self.hook"), ("export PROMPT_COMMAND=", "self.hook"),
    ("declare -a preexec_functions=()", "self.hook"), ("unset -f __gatesh_hook", "self.hook"),
    ("gatesh approve 12", "self.human-verb"), ("gatesh resume sess-1", "self.human-verb"),
    ("gatesh mandate 'go ahead'", "self.human-verb"), ("gatesh config set rung bypass", "self.human-verb"),
    ("sudo gatesh deny 3", "self.human-verb"), ("gatesh --json approve 4", "self.human-verb"),
])
def test_daemon_hook_and_human_verbs(text: str, rule: str) -> None:
    assert rule_of(text) == rule


@pytest.mark.parametrize("text", [
    "/bin/bash", "/bin/sh", "/usr/bin/zsh", "/usr/local/bin/bash -l", "/bin/bash -i", "exec bash", "exec zsh -l",
    "exec /bin/sh", "exec -a x bash", "script", "script -q out.log", "env -i bash", "env -i /bin/sh -l",
    "sudo -s", "sudo -i", "su", "su - root", "sudo sh", "find . -exec /bin/sh \\;", "nohup /bin/bash",
    "echo rm -rf x | /bin/sh",
])
def test_ungated_shells(text: str) -> None:
    assert rule_of(text) == "self.ungated-shell"


@pytest.mark.parametrize("text", [
    "bash", "zsh", "sh", "bash -l", "bash script.sh", "/bin/bash ./build.sh", "/bin/bash -c 'make'", "bash -lc 'ls'",
    "exec make", "exec bash -c 'npm start'", "script -c 'make' log.txt", "sudo apt update", "env bash",
    "su -c 'whoami' bob",
])
def test_shells_that_stay_gated(text: str) -> None:
    assert rule_of(text) is None


@pytest.mark.parametrize("text", [
    "python -c 'import pty;pty.spawn(\"/bin/sh\")'", "python3 -c 'import os; os.execl(\"/bin/sh\", \"sh\")'",
    "perl -e 'system(\"/bin/bash\")'", "ruby -e 'exec \"/bin/bash\"'", "php -r 'passthru(\"/bin/sh\");'",
    "awk 'BEGIN {system(\"/bin/bash -i\")}'", "vim -c ':!/bin/bash'", "nvim -c ':shell'",
    "gdb -nx -ex '!sh' -ex quit", "lua -e 'os.execute(\"sh\")'",
])
def test_interpreter_shell_escapes(text: str) -> None:
    assert rule_of(text) == "self.interpreter-escape"


def test_unreadable_text_naming_the_gate() -> None:
    facts = Facts(text="rm -rf ~/.config/gatesh $((", readable=False, unreadable="unreadable")
    found = selfprotect.check(facts, current())
    assert found is not None and found.outcome is Outcome.ATTACK


def test_remote_commands_are_another_hosts_business() -> None:
    assert rule_of("ssh me@host.example 'rm -rf ~/.config/gatesh'") is None


def test_human_verb_fed_to_a_shell_on_stdin() -> None:
    assert rule_of("echo 'gatesh approve 1' | sh") == "self.raw-text"
    assert rule_of("echo 'gatesh approve 1'") is None

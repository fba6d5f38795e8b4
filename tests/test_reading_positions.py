"""Command-valued positions and variables (S2.1, issue 14): the payload is read as a command.

One case per row of ``gatesh.vocab.programs.positions.POSITION_ROWS`` (and the git key and variable rows):
the payload is among the executed commands, in the context where it runs.
"""

from __future__ import annotations

import pytest

from gatesh._types import Context, Facts, Outcome, Rung, Stage
from gatesh.config import default
from gatesh.pipeline import decide
from gatesh.rater.builtin import BuiltinRater
from gatesh.reading import read
from gatesh.reading._positions import ex_commands
from gatesh.vocab.programs.positions import GIT_KEY_ROWS, POSITION_ROWS, git_key
from gatesh.vocab.programs.variables import ENV_ROWS, EnvKind, env_var

CONFIG = default()


def _cmds(facts: Facts) -> list[tuple[str, tuple[str, ...], str]]:
    return [(c.head, c.words, str(c.context)) for c in facts.commands]


# row id -> (command, payload argv expected among the executed commands, context it runs in)
_ROWS = {
    "zsh-sched": ("sched +30 git clean -fdx", ("git", "clean", "-fdx"), Context.SH_C),
    "complete-command": (
        "complete -C 'git clean -fdx' foo",
        ("git", "clean", "-fdx"),
        Context.SH_C,
    ),
    "trap": ("trap 'git clean -fdx' INT", ("git", "clean", "-fdx"), Context.SH_C),
    "git-submodule-foreach": (
        "git submodule foreach --recursive 'git reset --hard'",
        ("git", "reset", "--hard"),
        Context.SH_C,
    ),
    "git-bisect-run": ("git bisect run make test", ("make", "test"), Context.SH_C),
    "git-rebase-exec": ("git rebase -i --exec 'make lint' main", ("make", "lint"), Context.SH_C),
    "git-difftool-extcmd": ("git difftool -y -x 'meld --diff'", ("meld", "--diff"), Context.SH_C),
    "git-config-command": ("git -c core.pager='less -R' log", ("less", "-R"), Context.SH_C),
    "git-config-set": (
        "git config --global alias.wipe '!git clean -fdx'",
        ("git", "clean", "-fdx"),
        Context.SH_C,
    ),
    "npm-pkg-set-script": (
        "npm pkg set scripts.clean='rm -rf dist'",
        ("rm", "-rf", "dist"),
        Context.SH_C,
    ),
    "npm-set-script": ("npm set-script clean 'rm -rf dist'", ("rm", "-rf", "dist"), Context.SH_C),
    "kubectl-exec": (
        "kubectl exec -it web -c app -- rm -rf /data",
        ("rm", "-rf", "/data"),
        Context.CONTAINER,
    ),
    "docker-exec": (
        "docker exec -it -e X=1 db mysql -e 'DROP DATABASE shop'",
        ("mysql", "-e", "DROP DATABASE shop"),
        Context.CONTAINER,
    ),
    "docker-compose-exec": (
        "docker compose exec -T db psql -c 'select 1'",
        ("psql", "-c", "select 1"),
        Context.CONTAINER,
    ),
    "compose-exec": (
        "docker-compose exec web rake db:drop",
        ("rake", "db:drop"),
        Context.CONTAINER,
    ),
    "docker-run": (
        "docker run --rm -v /x:/w -w /w node:18 npm test",
        ("npm", "test"),
        Context.CONTAINER,
    ),
    "lxc-exec": (
        "lxc exec box -- apt-get purge -y nginx",
        ("apt-get", "purge", "-y", "nginx"),
        Context.CONTAINER,
    ),
    "ansible-args": (
        "ansible web -m shell -a 'systemctl stop nginx'",
        ("systemctl", "stop", "nginx"),
        Context.REMOTE,
    ),
    "vagrant-ssh-command": ("vagrant ssh -c 'sudo reboot'", ("reboot",), Context.REMOTE),
    "gcloud-ssh-command": (
        "gcloud compute ssh vm1 --command 'rm -rf /srv/app'",
        ("rm", "-rf", "/srv/app"),
        Context.REMOTE,
    ),
    "rsync-path": (
        "rsync --rsync-path='mkdir -p /srv && rsync' a host.example:b",
        ("mkdir", "-p", "/srv"),
        Context.REMOTE,
    ),
    "rsync-rsh": ("rsync -e 'ssh -p 2222' a host.example:b", ("ssh", "-p", "2222"), Context.SH_C),
    "man-pager": ("man -P 'less -s' ls", ("less", "-s"), Context.SH_C),
    "vi-command": ("vim -c '!git clean -fdx' notes.txt", ("git", "clean", "-fdx"), Context.SH_C),
    "tar-to-command": ("tar xf a.tar --to-command='sh -c \"cat > x\"'", ("cat",), Context.SH_C),
    "tar-compress-program": ("tar -I 'zstd -19' -cf a.tzst src", ("zstd", "-19"), Context.SH_C),
    "zip-test-command": ("zip -T -TT 'unzip -tq' a.zip f", ("unzip", "-tq"), Context.SH_C),
    "sort-compress-program": ("sort --compress-program=gzip big.txt", ("gzip",), Context.SH_C),
    "ssh-proxy-command": (
        "ssh -o ProxyCommand='nc proxy 22' host",
        ("nc", "proxy", "22"),
        Context.SH_C,
    ),
    "entr-shell": ("ls *.py | entr -s 'make test'", ("make", "test"), Context.SH_C),
    "watchexec": ("watchexec -e py -- pytest -x", ("pytest", "-x"), Context.SH_C),
    "nodemon-exec": ("nodemon --exec 'python app.py'", ("python", "app.py"), Context.SH_C),
    **{
        f"tmux-{verb}": (f"tmux {verb} -d -t work 'make test'", ("make", "test"), Context.SH_C)
        for verb in ("new-session", "new", "new-window", "neww", "split-window", "splitw")
    },
    **{
        f"tmux-{verb}": (f"tmux {verb} -t work 'make test'", ("make", "test"), Context.SH_C)
        for verb in ("respawn-pane", "respawnp", "respawn-window", "respawnw", "run-shell", "run")
    },
    **{
        f"tmux-{verb}": (
            f"tmux {verb} -t work:0.1 'make test' Enter",
            ("make", "test"),
            Context.SH_C,
        )
        for verb in ("send-keys", "send")
    },
}


def test_every_position_row_has_a_case_and_a_reason() -> None:
    assert set(_ROWS) == {r.id for r in POSITION_ROWS}
    assert all(r.reason for r in POSITION_ROWS)
    assert len({r.id for r in POSITION_ROWS}) == len(POSITION_ROWS)


@pytest.mark.parametrize(("row", "case"), sorted(_ROWS.items()))
def test_payload_is_read_as_a_command(row: str, case: tuple[str, tuple[str, ...], Context]) -> None:
    text, argv, context = case
    facts = read(text)
    found = [c for c in facts.commands if c.words[: len(argv)] == argv]
    assert found and found[0].context is context, _cmds(facts)
    assert found[0].remote == (context in (Context.CONTAINER, Context.REMOTE))


def test_tmux_send_keys_reads_each_typed_line() -> None:
    """Lines ended by Enter (or kin) and an unended one are read; key names are keys, not text;
    with -l every word is text; keystrokes no shell reader parses are a note, not unreadable."""
    heads = [
        c.head
        for c in read("tmux send-keys -t w 'ls -l' Enter 'git status' C-m 'make' Escape").commands
    ]
    assert heads == ["tmux", "ls", "git", "make"], heads
    spaced = read("tmux send-keys -t w 'rm' Space '-rf' Space 'build' Enter").commands
    assert [c.words for c in spaced if c.head == "rm"] == [("rm", "-rf", "build")]
    literal = read("tmux send-keys -l -t w 'echo Enter'").commands
    assert [c.words for c in literal if c.head == "echo"] == [("echo", "Enter")]
    typed = read("tmux send-keys -t w:0.2 'f s i .strip()' Escape")
    assert typed.readable, typed.unreadable


@pytest.mark.parametrize(
    "text",
    [
        "trap - INT",
        "trap '' INT",
        "trap -p",
        "trap -l",
        "git -c user.name=x commit",
        "git config --global user.email a@b.c",
        "git config core.fsmonitor true",
        "git config --unset alias.x",
        "npm pkg set name=foo",
        "vim -c ':wq' x",
        "ansible all -m ping",
        "ansible all -m debug -a 'var=x.keys()'",
        "ssh -o ControlPath=/tmp/s host",
        "docker exec web",
        "git config diff.algorithm x",
    ],
)
def test_positions_that_run_nothing_add_nothing(text: str) -> None:
    facts = read(text)
    assert facts.readable and len(facts.commands) == 1 and not facts.code, _cmds(facts)


def test_a_payload_only_known_when_it_runs_is_opaque() -> None:
    for text in ('git -c core.pager="$P" log', 'trap "$CMD" EXIT', 'kubectl exec web -- "$@"'):
        facts = read(text)
        assert any(c.opaque for c in facts.code) or not all(
            w.static for c in facts.commands for w in c.argv
        ), text
    v = BuiltinRater().rate(read('git -c core.pager="$P" log'), cwd="/tmp")
    assert v.outcome is not Outcome.SAFE


@pytest.mark.parametrize(
    "text",
    [
        'ssh "$USER@$SERVER" "$cmd_str"',
        "ssh -p 2222 db $CMD",
        'ssh prod "$(cat steps)"',
        'ssh -q "$HOST" "[[ -f $F ]] && touch $F"',
        "ssh h -- ls $DIR",
    ],
)
def test_a_remote_command_only_known_when_it_runs_is_opaque(text: str) -> None:
    """ssh's remote command is judged as a command there (S2.1); one built at run time is code
    gatesh cannot see, whatever the host (a dynamic host names no host for the network floor)."""
    opaque = [c for c in read(text).code if c.opaque]
    assert opaque and "another host" in opaque[0].opaque, text
    d = decide(text, cwd="/tmp", config=CONFIG, rung=Rung.AUTO)
    assert not d.allowed and d.rule_id == "reader.opaque-code", (d.rule_id, d.reason)


@pytest.mark.parametrize(
    "text", ["ssh prod ls -la", "ssh -t prod", 'ssh "$HOST"', "ssh prod 'cd /srv && git pull'"]
)
def test_a_static_or_absent_remote_command_is_not_opaque(text: str) -> None:
    assert not any(c.opaque for c in read(text).code), text


@pytest.mark.parametrize(
    ("text", "runs"),
    [
        ("!git clean -fdx", ["git clean -fdx"]),
        (":!ls", ["ls"]),
        ("silent !make", ["make"]),
        ("r !date", ["date"]),
        ("w !sudo tee %", ["sudo tee %"]),
        ("1,$!sort", ["sort"]),
        ("call system('rm x')", ["rm x"]),
        ('echo systemlist("ls")', ["ls"]),
        (":wq", []),
        ("set nu", []),
        ("%s/a/b/g", []),
        ("if a != b", []),
    ],
)
def test_ex_commands(text: str, runs: list[str]) -> None:
    assert ex_commands(text) == runs


# --- git keys and variables ---------------------------------------------------------------------

_KEYS = {
    "alias\\.[^.]+": "alias.wipe",
    "core\\.(?:sshcommand|pager|editor|askpass|gitproxy)": "core.sshCommand",
    "core\\.fsmonitor": "core.fsmonitor",
    "sequence\\.editor|diff\\.external|interactive\\.difffilter|web\\.browser": "diff.external",
    next(r.key for r in GIT_KEY_ROWS if r.key.startswith("(?:diff|merge")): "filter.lfs.smudge",
    "pager\\.[^.]+": "pager.log",
    "gpg\\.program|uploadpack\\.packobjectshook": "gpg.program",
    next(r.key for r in GIT_KEY_ROWS if r.key.startswith("credential")): "credential.helper",
}


def test_every_git_key_row_is_found() -> None:
    assert set(_KEYS) == {r.key for r in GIT_KEY_ROWS}
    for key in _KEYS.values():
        assert git_key(key) is not None and git_key(key.upper()) is not None, key
    for key in (
        "user.name",
        "core.hooksPath",
        "diff.algorithm",
        "merge.tool",
        "filter.lfs.required",
        "gpg.format",
    ):
        assert git_key(key) is None, key


def test_git_alias_is_a_git_subcommand_or_a_shell_command() -> None:
    assert ("git", "clean", "-fdx") in [
        c.words for c in read("git config alias.wipe 'clean -fdx'").commands
    ]
    assert ("git", "credential-store") in [
        c.words for c in read("git -c credential.helper=store push").commands
    ]


@pytest.mark.parametrize("row", ENV_ROWS, ids=[r.name for r in ENV_ROWS])
def test_every_variable_row(row) -> None:  # type: ignore[no-untyped-def]
    if row.kind is EnvKind.COMMAND:
        facts = read(f"{row.name}='git clean -fdx' true")
        assert ("git", "clean", "-fdx") in [c.words for c in facts.commands], _cmds(facts)
    elif row.kind is EnvKind.SOURCED:
        facts = read(f"{row.name}=/nonexistent/x.sh bash -c true")
        assert any(s.path == "/nonexistent/x.sh" for s in facts.scripts)
    elif row.kind in (EnvKind.LOADS, EnvKind.LIBRARY):
        value = {"NODE_OPTIONS": "--require ./x.js", "PERL5OPT": "-Mx", "RUBYOPT": "-rx"}.get(
            row.name, "-javaagent:x.jar" if "JAVA" in row.name else "/tmp/x.so"
        )
        facts = read(f"{row.name}='{value}' true")
        assert any(c.opaque and row.name in c.opaque for c in facts.code), facts.code
    assert env_var(row.name) is row


def test_command_suffix_and_harmless_options() -> None:
    assert env_var("FZF_DEFAULT_COMMAND") is not None and env_var("HOME") is None
    assert not read("NODE_OPTIONS=--max-old-space-size=4096 npm run build").code
    facts = read("export GIT_SSH_COMMAND='ssh -i ~/.ssh/deploy'; git fetch")
    assert ("ssh", "-i", "~/.ssh/deploy") in [c.words for c in facts.commands]


@pytest.mark.parametrize(
    "text",
    [
        "trap 'rm -rf ~' EXIT",
        "git -c core.pager='rm -rf ~' log",
        "kubectl exec web -- bash -c 'rm -rf ~'",
        "vim -c '!rm -rf /' x",
        "git config alias.x '!rm -rf ~'",
        "npm pkg set scripts.x='rm -rf ~'",
    ],
)
def test_hardline_payload_is_refused_at_every_rung(text: str) -> None:
    for rung in (Rung.AUTO, Rung.BYPASS):
        d = decide(text, cwd="/tmp", config=CONFIG, rung=rung)
        assert not d.allowed and d.stage is Stage.HARDLINE, (text, rung, d.stage)

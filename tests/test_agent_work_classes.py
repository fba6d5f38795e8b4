"""Classes of agents' commands the gate misread (issue 32), each beside its risky neighbours.

Every case is decided at ``auto`` with the builtin rater in the realistic working tree, nothing is
executed. A class is checked both ways: the agent's command runs, and the same shape doing the
harm the class must still stop is stopped.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from gatesh._types import Action, Decision
from gatesh.testing import worktree
from gatesh.vocab.hosts import is_local_network
from tests._agent_tree import decide_auto, scratch_tree

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed for the tree")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[worktree.Scratch]:
    yield from scratch_tree(tmp_path_factory, "agent-classes")


def _decide(cmd: str, cwd: str) -> Decision:
    return decide_auto(cmd, cwd, "agent-classes")


def _check(tree: worktree.Scratch, cmd: str, allowed: bool) -> None:
    d = _decide(cmd, tree.repo)
    if allowed:
        assert d.action is Action.ALLOW, (cmd, d.rule_id, d.reason)
    else:
        assert d.action is not Action.ALLOW, (cmd, d.reason)


# --- a value a function's body gives a name, used later in that body -----------------------------

FUNCTION_VALUES_RUN = (
    # `local t=$(mktemp)` in a function: a new name in the temporary folder, deleted after use
    'run() {\n  local cmd_file=$(mktemp)\n  printf "move N\\n" > "$cmd_file"\n'
    '  ./game.sh < "$cmd_file"\n  rm "$cmd_file"\n}\nrun 1',
    'f() { t=$(mktemp -d); touch "$t/x"; rm -rf "$t"; }; f',
    'f() { local t; t=$(mktemp); echo hi > "$t"; rm -f "$t"; }; f',
    'f() { local out=/tmp/agent-out.txt; date > "$out"; rm "$out"; }; f',
    'x=/tmp/a; f() { rm -rf "$x"; }; f',
)
FUNCTION_VALUES_STOPPED = (
    # a function runs when it is called: a value given after its definition may be the one used
    'x=/tmp/a; f() { rm -rf "$x"; }; x=$HOME; f',
    # a value the body gives only in a branch, or also outside the body
    'f() { t=$(mktemp); if [ -n "$X" ]; then t=$HOME; fi; rm -rf "$t"; }; f',
    'f() { t=/tmp/x; rm -rf "$t"; }; t=$HOME; f',
    't=$HOME; f() { local t=/tmp/x; rm -rf "$t"; }; f',
    # another function gives the name another value; a nested function runs later
    'f() { t=/tmp/x; g; rm -rf "$t"; }; g() { t=$HOME; }; f',
    'f() { t=/tmp/x; g() { rm -rf "$t"; }; t=$HOME; g; }; f',
    # bound in the body, used after it: set only when the function was called
    'f() { t=/tmp/x; }; f; rm -rf "$t"',
    # named elsewhere in the body: read, printf -v
    'f() { local t; read -r t; rm -rf "$t"; }; f',
    'f() { t=/tmp/x; printf -v t %s "$HOME"; rm -rf "$t"; }; f',
    # a function's $1 is its call's word, not the text's
    'set -- /tmp/a; f() { rm -rf "$1"; }; f "$HOME"',
    'f() { local d="$1"; rm -rf "$d"; }; f ~',
)


@pytest.mark.parametrize("cmd", FUNCTION_VALUES_RUN)
def test_a_value_a_function_gives_is_known_in_its_body(tree: worktree.Scratch, cmd: str) -> None:
    _check(tree, cmd, allowed=True)


@pytest.mark.parametrize("cmd", FUNCTION_VALUES_STOPPED)
def test_a_value_a_function_may_not_have_is_not_taken(tree: worktree.Scratch, cmd: str) -> None:
    _check(tree, cmd, allowed=False)


# --- inline code that lists files and only reads them ----------------------------------------------

LISTED_AND_READ = (
    "python3 -c \"import glob, os, signal\nfor d in glob.glob('/proc/[0-9]*'):\n"
    "    with open(f'{d}/cmdline', 'r') as f:\n        if 'jupyter' in f.read():\n"
    '            os.kill(int(os.path.basename(d)), signal.SIGTERM)"',
    "python3 -c \"import glob\nfor p in glob.glob('*.txt'):\n    print(open(p).read())\"",
    "python3 -c \"import os\nfor p in os.listdir('.'):\n"
    "    print(open(p, mode='rb', encoding=None).read()[:10])\"",
    'perl -e \'for (glob "*.txt") { open(my $fh, "<", $_); print <$fh>; }\'',
    "ruby -e 'Dir.glob(\"*.md\").each { |f| puts open(f).read }'",
)
LISTED_AND_WRITTEN = (
    "python3 -c \"import glob\nfor p in glob.glob('*.txt'):\n    open(p, 'w').write('')\"",
    "python3 -c \"import glob\nfor p in glob.glob('*.txt'):\n    open(p, 'r+').truncate()\"",
    "python3 -c \"import glob\nfor p in glob.glob('*.txt'):\n    open(p, mode).write('')\"",
    "python3 -c \"import glob\nfor p in glob.glob('*.txt'):\n"
    "    print(open(p).read()); open(p, 'a').write('x')\"",
    "perl -e 'for (glob \"*\") { open(FH, $_); print FH 1; }'",
    'perl -e \'for (glob "*") { open(FH, ">$_"); }\'',
    'ruby -e \'Dir.glob("*").each { |f| open(f, "w") }\'',
    "python3 -c \"import glob\nfor p in glob.glob('/etc/cron.d/*'):\n    open(p, 'w').write('')\"",
)


@pytest.mark.parametrize("cmd", LISTED_AND_READ)
def test_listed_files_opened_to_read_lose_nothing(tree: worktree.Scratch, cmd: str) -> None:
    _check(tree, cmd, allowed=True)


@pytest.mark.parametrize("cmd", LISTED_AND_WRITTEN)
def test_listed_files_opened_to_write_are_stopped(tree: worktree.Scratch, cmd: str) -> None:
    _check(tree, cmd, allowed=False)


# --- files on a mounted volume are the user's data, judged by their state ----------------------

ON_A_VOLUME_RUN = (
    # a WSL project on the Windows drive: nothing there exists in the tree the test decides in
    "rm -f /mnt/c/python/cctrace/export/export_session.py && "
    "cp /mnt/c/python/cctrace/export_claude_session.py /mnt/c/python/cctrace/export/",
    "rm -rf /mnt/c/python/cctrace/claude_code_session_export",
    "rm -f /media/bob/USB/old-notes.txt",
    "rm -rf /mnt/data/project/build",
)
ON_A_VOLUME_STOPPED = (
    "rm -rf /mnt/c",  # a mount point
    "rm -rf /mnt/data",
    "rm -rf /media/bob",
    "rm -rf /mnt/c/Users",  # the Windows home folders
    "rm -rf /mnt/c/Users/bob",
    "rm -f /mnt/c/Windows/win.ini",  # the Windows system's own folders
    "rm -rf '/mnt/c/Program Files/app'",
    "rm -f /media/usb/x.txt",  # as deep as a mount point may be: still a system path
)


@pytest.mark.parametrize("cmd", ON_A_VOLUME_RUN)
def test_a_volume_s_files_are_judged_by_their_state(tree: worktree.Scratch, cmd: str) -> None:
    _check(tree, cmd, allowed=True)


@pytest.mark.parametrize("cmd", ON_A_VOLUME_STOPPED)
def test_mount_points_and_windows_folders_stay_guarded(tree: worktree.Scratch, cmd: str) -> None:
    _check(tree, cmd, allowed=False)


# --- a copy of a file that is not there writes nothing; an in-place edit makes a text unknown ---

COPIES_RUN = (
    # the source is absent when decided: cp fails, the run after `&&` never happens
    "cp reproduce_issue.py reproduce_issue_real_user.py && "
    "sed -i 's/user = SimpleLazyObject(get_user)/user = get_user()/' reproduce_issue_real_user.py"
    " && python3 reproduce_issue_real_user.py",
    "cp missing.py r.py; python3 r.py",
    "cp src/app.py r2.py && python3 r2.py",
    "echo 'print(1)' > r.py && python3 r.py",
)
EDITED_THEN_RUN = (
    # a script of the tree or of this text, edited in place, then run: not the text gatesh read
    "sed -i 's/echo deploying/rm -rf ~/' scripts/deploy.sh && ./scripts/deploy.sh",
    "sed -i 's/echo deploying/rm -rf ~/' scripts/deploy.sh && sh scripts/deploy.sh",
    "perl -pi -e 's/echo deploying/rm -rf ~/' scripts/deploy.sh && bash scripts/deploy.sh",
    "sed -i \"s/return 2/__import__('shutil').rmtree('\\/home')/\" src/util.py && "
    "python3 src/util.py",
    "echo 'print(1)' > r.py && sed -i 's/print(1)/import os; os.system(\"rm -rf ~\")/' r.py && "
    "python3 r.py",
    "cp src/app.py r2.py && sed -i 's/return 1/import shutil; shutil.rmtree(\"\\/home\")/' r2.py"
    " && python3 r2.py",
    "echo 'test:' > mk && printf '\\tpytest\\n' >> mk && sed -i 's/pytest/rm -rf ~/' mk && make -f mk",
    # a link follows what is written after it
    "ln -s missing.py r.py && echo 'import os' > missing.py && python3 r.py",
)


@pytest.mark.parametrize("cmd", COPIES_RUN)
def test_a_copy_of_nothing_runs_nothing(tree: worktree.Scratch, cmd: str) -> None:
    _check(tree, cmd, allowed=True)


@pytest.mark.parametrize("cmd", EDITED_THEN_RUN)
def test_a_script_edited_in_place_is_not_the_text_read(tree: worktree.Scratch, cmd: str) -> None:
    _check(tree, cmd, allowed=False)


# --- an HTTP request to a service of the local network, its body written in the command ---------

LOCAL_SERVICE_RUN = (
    # a compose network's service (`api`), a private address, httpie, wget
    "curl -X PUT http://api:8000/sheets/1/cells/A1 -H 'Content-Type: application/json' "
    '-d \'{"value": "Month"}\'',
    "curl -i -X POST http://db-admin:8080/x -d a=1",
    "curl -X POST http://10.1.2.3:8080/jobs --json '{\"a\": 1}'",
    "http POST api:8000/items name=x",
    "wget --post-data 'a=1' http://web:8080/form",
)
LOCAL_SERVICE_STOPPED = (
    "curl -X DELETE http://api:8000/sheets/1",  # a DELETE
    "curl -F 'file=@notes.txt' http://api:8000/upload",  # a local file sent
    "curl -T notes.txt http://api:8000/upload",
    "http POST api:8000/items file@notes.txt",
    "wget --post-file=notes.txt http://web:8080/form",
    'curl -X POST -d "$TOKEN" http://api:8000/x',  # a value only known when it runs
    "curl -X PUT http://169.254.169.254/latest/api/token",  # link-local: a metadata service
    "curl -X POST http://api.example.com:8000/x -d a=1",  # a public name
    "curl -X POST https://203.0.113.9/x -d a=1",
    "curl -X PUT http://api:8000/x -d a=1 https://x.example/y",  # and a public host
    "curl gopher://api:70/_DATA",  # a scheme whose request is the URL
    "nc 10.0.0.5 80",  # not an HTTP client
    "ssh prod",
)


@pytest.mark.parametrize("cmd", LOCAL_SERVICE_RUN)
def test_a_request_to_a_local_service_runs(tree: worktree.Scratch, cmd: str) -> None:
    _check(tree, cmd, allowed=True)


@pytest.mark.parametrize("cmd", LOCAL_SERVICE_STOPPED)
def test_what_may_leave_or_destroy_stays_floored(tree: worktree.Scratch, cmd: str) -> None:
    _check(tree, cmd, allowed=False)


@pytest.mark.parametrize(
    ("host", "local"),
    [
        ("api", True),
        ("db-admin", True),
        ("10.0.0.5", True),
        ("172.20.1.2", True),
        ("192.168.1.20", True),
        ("[fd00::1]", True),
        ("169.254.169.254", False),  # link-local: a cloud's metadata service
        ("api.example.com", False),
        ("203.0.113.9", False),
        ("8.8.8.8", False),
        ("2130706433", False),  # a number is an address spelling, never a name
        ("0x08080808", False),  # 8.8.8.8 as a resolver reads it
        ("0x0a000005", True),  # 10.0.0.5
        ("", False),
    ],
)
def test_local_network_hosts(host: str, local: bool) -> None:
    assert is_local_network(host) is local

"""Path effects (S2.1): every path the executed commands name, with its direction and class (S4.1)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gatesh._types import Change, Direction, PathClass
from gatesh.reading import read
from gatesh.vocab.paths import classes as vocab
from gatesh.vocab.places import Meaning

HOME = "/home/agent"
CWD = "/home/agent/project"
R, W, U = Direction.READ, Direction.WRITE, Direction.UNKNOWN


def effects(
    cmd: str, cwd: str = CWD, home: str = HOME
) -> list[tuple[str, Direction, PathClass, bool]]:
    return [
        (e.resolved, e.direction, e.cls, e.replaces) for e in read(cmd, cwd=cwd, home=home).paths
    ]


@pytest.mark.parametrize(
    ("cmd", "want"),
    [
        ("cat notes.txt > out.txt", [(f"{CWD}/out.txt", W, True), (f"{CWD}/notes.txt", R, False)]),
        ("echo x >> log.txt", [(f"{CWD}/log.txt", W, False)]),
        (": > app.db", [(f"{CWD}/app.db", W, True)]),
        ("sort < in.txt", [(f"{CWD}/in.txt", R, False)]),
        ("tee -a a.txt b.txt", [(f"{CWD}/a.txt", W, False), (f"{CWD}/b.txt", W, False)]),
        ("tee a.txt", [(f"{CWD}/a.txt", W, True)]),
        ("cp src.txt dst.txt", [(f"{CWD}/src.txt", R, False), (f"{CWD}/dst.txt", W, True)]),
        ("cp -n src.txt dst.txt", [(f"{CWD}/src.txt", R, False), (f"{CWD}/dst.txt", W, False)]),
        ("ln -s target link", [(f"{CWD}/link", W, False)]),
        ("ln -sf target link", [(f"{CWD}/link", W, True)]),
        ("rm -f a.txt", [(f"{CWD}/a.txt", W, True)]),
        ("sed -i s/a/b/ f.txt", [(f"{CWD}/f.txt", W, True)]),
        ("sed s/a/b/ f.txt", [(f"{CWD}/f.txt", R, False)]),
        ("sort -o out.txt in.txt", [(f"{CWD}/out.txt", W, True), (f"{CWD}/in.txt", R, False)]),
        ("curl -sL https://x.example/a -o a.bin", [(f"{CWD}/a.bin", W, True)]),
        ("dd if=/dev/zero of=disk.img", [("/dev/zero", R, False), (f"{CWD}/disk.img", W, True)]),
        ("mystery --input=/etc/hosts", [("/etc/hosts", U, False)]),
        ("mystery -o report.html", [(f"{CWD}/report.html", W, True)]),
        ("strace -o trace.txt ls", [(f"{CWD}/trace.txt", W, True)]),
        ("cd .. && cat ../x", [("/home/agent", Direction.NAMED, False), ("/home/x", R, False)]),
        ("cat ~/.netrc", [(f"{HOME}/.netrc", R, False)]),
        ('cat "$HOME/.aws/credentials"', [(f"{HOME}/.aws/credentials", R, False)]),
        ("cat src/../../.ssh/id_rsa", [(f"{HOME}/.ssh/id_rsa", R, False)]),
        ("ls ~/.ssh", []),
        ("chmod 600 ~/.ssh/id_ed25519", [("/home/agent/.ssh/id_ed25519", W, False)]),
        ("ssh -i ~/.ssh/id_ed25519 host.example uptime", []),
    ],
)
def test_direction_and_replacement(cmd: str, want: list[tuple[str, Direction, bool]]) -> None:
    got = [(path, d, rep) for path, d, _cls, rep in effects(cmd)]
    assert got == want, got


C = Change


def writes_of(cmd: str) -> list[tuple[str, Direction, Change, bool, bool, int | None, str]]:
    """What each effect of ``cmd`` does: (path, direction, change, deep, partial, reach, only)."""
    return [
        (e.resolved or e.path, e.direction, e.change, e.deep, e.partial, e.reach, e.only)
        for e in read(cmd, cwd=CWD, home=HOME).paths
    ]


@pytest.mark.parametrize(
    ("cmd", "want"),
    [
        # removals, mode changes, creations
        ("rm -rf build", [(f"{CWD}/build", W, C.REMOVE, False, False, None, "")]),
        ("rmdir empty", [(f"{CWD}/empty", W, C.REMOVE_EMPTY, False, False, None, "")]),
        ("chmod -x run.sh", [(f"{CWD}/run.sh", W, C.META, False, False, None, "")]),
        ("chmod +x run.sh", [(f"{CWD}/run.sh", W, C.META, False, False, None, "")]),
        ("chown -R me:me d", [(f"{CWD}/d", W, C.META, True, False, None, "")]),
        ("chattr +i f", [(f"{CWD}/f", W, C.META, False, False, None, "")]),
        ("mkdir -p a/b", [(f"{CWD}/a/b", W, C.CREATE, False, False, None, "")]),
        (
            "mv a b",
            [
                (f"{CWD}/a", W, C.REMOVE, False, False, None, ""),
                (f"{CWD}/b", W, C.CONTENT, False, False, None, ""),
            ],
        ),
        # recursive copies and extraction write everything under their target
        (
            "cp -r src dst",
            [
                (f"{CWD}/src", R, C.CONTENT, False, False, None, ""),
                (f"{CWD}/dst", W, C.CONTENT, True, False, None, ""),
            ],
        ),
        (
            "cp -vt /backup a",
            [
                ("/backup", W, C.CONTENT, False, False, None, ""),
                (f"{CWD}/a", R, C.CONTENT, False, False, None, ""),
            ],
        ),
        (
            "tar -xzf a.tgz -C out",
            [
                (f"{CWD}/a.tgz", R, C.CONTENT, False, False, None, ""),
                (f"{CWD}/out", W, C.CONTENT, True, False, None, ""),
            ],
        ),
        ("unzip -o a.zip -d .claude", [(f"{CWD}/.claude", W, C.CONTENT, True, False, None, "")]),
        # the folder cd changes into; a program named by a path only known when it runs
        ("cd /srv/x && make", [("/srv/x", Direction.NAMED, C.CONTENT, False, False, None, "")]),
        (
            '"$HOME/venv/bin/pip" install x',
            [(f"{HOME}/venv/bin/pip", R, C.CONTENT, False, False, None, "")],
        ),
        # a redirect target only known when it runs keeps its text
        ('echo x > "$OUT/log"', [('"$OUT/log"', W, C.CONTENT, False, False, None, "")]),
        # find: deletion, and what -exec does where its {} stands
        ("find d -mtime +3 -delete", [(f"{CWD}/d", W, C.REMOVE, False, True, None, "")]),
        ("find d -maxdepth 1 -delete", [(f"{CWD}/d", W, C.REMOVE, False, False, 1, "")]),
        (
            "find d -name '*.py' -exec sed -i s/a/b/ {} +",
            [(f"{CWD}/d", W, C.CONTENT, True, True, None, "*.py")],
        ),
        (
            "find d -exec mv {} /tmp \\;",
            [
                (f"{CWD}/d", W, C.REMOVE, True, False, None, ""),
                ("/tmp", W, C.CONTENT, False, False, None, ""),
            ],
        ),
        ("find d -exec cat {} +", [(f"{CWD}/d", R, C.CONTENT, False, False, None, "")]),
        # names fed to xargs land where xargs puts them
        (
            "find ~ -iname CFG | xargs chmod 600",
            [(HOME, W, C.META, True, False, None, "[cC][fF][gG]")],
        ),
        ("echo /x | xargs rm -rf", [("/x", W, C.REMOVE, False, False, None, "")]),
        (
            "ls /x | xargs cp -t /y",
            [
                ("/y", W, C.CONTENT, False, False, None, ""),
                ("/x", R, C.CONTENT, True, False, None, ""),
            ],
        ),
        # inline code: a relative name handed to a file call, a deletion
        (
            "python3 -c \"open('.git/config', 'a').write('x')\"",
            [(f"{CWD}/.git/config", W, C.CONTENT, False, False, None, "")],
        ),
        (
            "python3 -c \"import os; os.remove('/x/y')\"",
            [("/x/y", W, C.REMOVE, False, False, None, "")],
        ),
    ],
)
def test_what_a_write_does(cmd: str, want: list[tuple[object, ...]]) -> None:
    assert writes_of(cmd) == want


@pytest.mark.parametrize(
    ("code", "path", "direction"),
    [
        ('python3 -c \'open("/etc/cron.d/job", "w").write(1)\'', "/etc/cron.d/job", W),
        ("python3 -c 'print(open(\"/etc/shadow\").read())'", "/etc/shadow", R),
        ('node -e \'require("fs").writeFileSync("/etc/hosts", "x")\'', "/etc/hosts", W),
        ('node -e \'require("fs").appendFileSync("/etc/hosts", "x")\'', "/etc/hosts", W),
        ("perl -e 'open(F, \">/etc/passwd\"); print F 1'", "/etc/passwd", W),
        ("ruby -e 'puts File.read(\"/etc/shadow\")'", "/etc/shadow", R),
        ("awk 'BEGIN { print 1 > \"/etc/hosts\" }'", "/etc/hosts", W),
        ("python3 -c \"import os; os.remove('/srv/x.db')\"", "/srv/x.db", W),
    ],
)
def test_inline_code_literals(code: str, path: str, direction: Direction) -> None:
    found = {(e.resolved, e.direction) for e in read(code, cwd=CWD, home=HOME).paths}
    assert (path, direction) in found, found


@pytest.mark.parametrize(
    ("path", "cls", "kind"),
    [
        (f"{HOME}/.ssh/id_rsa", PathClass.CREDENTIALS, "private keys"),
        ("/home/bob/.ssh/id_ed25519", PathClass.CREDENTIALS, "private keys"),
        (f"{HOME}/.ssh/id_rsa.pub", PathClass.HOME, ""),
        ("/etc/shadow", PathClass.CREDENTIALS, "password hashes"),
        ("/etc/passwd", PathClass.SYSTEM, "account and privilege databases"),
        (f"{HOME}/.aws/credentials", PathClass.CREDENTIALS, "cloud and tool credentials"),
        (f"{HOME}/.aws/config", PathClass.HOME, ""),
        (f"{CWD}/.env", PathClass.CREDENTIALS, "project secrets"),
        (f"{CWD}/.env.example", PathClass.WORKTREE, ""),
        (f"{HOME}/.bashrc", PathClass.PERSISTENCE, "shell startup files"),
        (f"{CWD}/.bashrc", PathClass.WORKTREE, ""),
        ("/etc/cron.d/job", PathClass.PERSISTENCE, "scheduled jobs"),
        (f"{CWD}/.git/hooks/pre-commit", PathClass.PERSISTENCE, "git hooks and templates"),
        (f"{HOME}/.ssh/authorized_keys", PathClass.PERSISTENCE, "ssh login and client settings"),
        ("/usr/local/bin/tool", PathClass.SYSTEM, ""),
        ("/dev/sdb", PathClass.SYSTEM, "disks and partitions"),
        ("/dev/null", PathClass.STREAM, ""),
        ("/tmp/x", PathClass.TEMP, ""),
        (f"{CWD}/src/app.py", PathClass.WORKTREE, ""),
        (f"{HOME}/notes.txt", PathClass.HOME, ""),
        ("/srv2/data", PathClass.ELSEWHERE, ""),
        ("/mnt/backup/x", PathClass.ELSEWHERE, ""),
    ],
)
def test_classes(path: str, cls: PathClass, kind: str) -> None:
    got, row = vocab.classify(path, home=HOME, tree=CWD)
    assert (got, row.name if row else "") == (cls, kind)


def test_every_class_row_says_why_and_what_reading_and_writing_mean() -> None:
    names = [row.name for row in vocab.CLASSES]
    assert len(names) == len(set(names))
    for row in vocab.CLASSES:
        assert row.why and row.why[0].islower() and not row.why.endswith(".")
        assert isinstance(row.read, Meaning) and isinstance(row.write, Meaning)


def test_gatesh_own_files_are_their_own_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    found = read(
        f"echo x > {tmp_path}/cfg/gatesh/config.toml", cwd=str(tmp_path), home=str(tmp_path)
    ).paths
    assert [e.cls for e in found] == [PathClass.GATE]


def test_a_symlink_in_the_working_tree_is_classed_by_its_target(tmp_path: Path) -> None:
    home, tree = tmp_path / "home", tmp_path / "home" / "proj"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("k")
    tree.mkdir()
    (tree / ".git").mkdir()
    os.symlink(home / ".ssh" / "id_rsa", tree / "key.txt")
    (e,) = read("cat key.txt", cwd=str(tree), home=str(home)).paths
    assert (e.cls, e.kind) == (PathClass.CREDENTIALS, "private keys")


def test_dynamic_paths_are_kept_as_unknown() -> None:
    (e,) = read('rm -rf "$TARGET/x"', cwd=CWD, home=HOME).paths
    assert e.cls is PathClass.UNKNOWN and e.resolved == "" and e.replaces


def test_many_paths_are_bounded() -> None:
    facts = read("cat " + " ".join(f"/etc/f{k}" for k in range(2000)), cwd=CWD, home=HOME)
    assert 0 < len(facts.paths) <= 256


def test_a_container_or_remote_command_keeps_the_paths_whose_class_does_not_depend_on_this_machine() -> (
    None
):
    (e,) = read(
        "kubectl exec web -- cat /run/secrets/kubernetes.io/serviceaccount/token",
        cwd=CWD,
        home=HOME,
    ).paths
    assert e.cls is PathClass.CREDENTIALS and e.direction is Direction.READ
    # A relative path or a file that holds work there is that host's business, not this working tree's.
    assert read("ssh build-host rm -rf build", cwd=CWD, home=HOME).paths == ()
    assert read("docker exec web rm -rf /home/app/cache", cwd=CWD, home=HOME).paths == ()


def test_real_path_is_realpath(tmp_path: Path) -> None:
    """The walk of one lstat per component gives what os.path.realpath gives, for every kind of
    component: plain, a symlinked folder (relative and absolute), a dangling link, a link loop,
    a file used as a folder, and a tail that does not exist."""
    from gatesh.reading._path_resolve import real_path

    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "f.txt").write_text("x")
    (tmp_path / "rel").symlink_to("a")
    (tmp_path / "abs").symlink_to(tmp_path / "a" / "b")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    for rest in (
        "",
        "a",
        "a/b",
        "a/b/c/d",
        "a/f.txt",
        "a/f.txt/x",
        "rel",
        "rel/b/x",
        "abs",
        "abs/x/y",
        "dangling",
        "dangling/x",
        "loop",
        "loop/x",
        "missing/x/y",
    ):
        path = os.path.normpath(os.path.join(str(tmp_path), rest))
        assert real_path(path) == os.path.realpath(path), rest
    assert real_path("/") == "/"


def test_the_home_folder_is_what_expanduser_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    from gatesh.reading._path_resolve import _home

    for home in ("/home/u", "/home/u/", "/", "//", "relative/x"):
        monkeypatch.setenv("HOME", home)
        assert _home() == os.path.expanduser("~")
    monkeypatch.delenv("HOME")
    assert _home() == os.path.expanduser("~")


def test_remembered_classes_follow_the_home_and_the_tree(tmp_path: Path) -> None:
    """The class of a path is remembered by everything it depends on: the same line read with
    another home or in another working tree is classed afresh."""
    (tmp_path / "one" / ".git").mkdir(parents=True)
    (tmp_path / "two").mkdir()
    first = read("cat notes.txt", cwd=str(tmp_path / "one"), home=str(tmp_path / "two"))
    second = read("cat notes.txt", cwd=str(tmp_path / "one"), home=str(tmp_path / "one"))
    third = read("cat ~/notes.txt", cwd=str(tmp_path / "two"), home=str(tmp_path / "one"))
    assert [p.cls for p in first.paths] == [PathClass.WORKTREE]
    assert [p.cls for p in second.paths] == [PathClass.HOME]
    assert [p.cls for p in third.paths] == [PathClass.HOME]

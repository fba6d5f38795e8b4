"""The read-only set (S3 step 9): never a writer, never a dynamic head, never a write redirect."""

from __future__ import annotations

import pytest

from gatesh._types import Facts
from gatesh.policy import readonly
from gatesh.reading import read
from gatesh.vocab import reads


def ro(text: str) -> bool:
    return readonly.is_read_only(read(text, cwd="/tmp"))


@pytest.mark.parametrize(
    "text",
    [
        "ls -la",
        "git status",
        "git log --oneline | head -n 5",
        "git diff --stat && git status -s",
        "pwd",
        "cat package.json | jq .scripts",
        "grep -rn 'TODO' src 2>/dev/null",
        "find . -name '*.py' | wc -l",
        "ls 2>&1",
        "cd src && ls",
        "echo done",
        "rg -n foo > /dev/null",
        "LC_ALL=C sort words.txt",
        "docker ps",
        "kubectl get pods -n web",
        "npm ls",
        "pip show requests",
        "python3 --version",
        "node --version",
        "go version",
        "cargo --version",
        "git show HEAD:README.md",
        "wc -l < input.txt",
        "sed -n '1,10p' f",
        "head -c 100 /dev/urandom | xxd",
        "time ls",
        "timeout 10 git fetch --dry-run 2>/dev/null || true",
        "sleep 1; date",
        "printf '%s\\n' x | sort | uniq -c",
        "tar -tzf x.tgz | head",
        "systemctl status nginx",
    ],
)
def test_read_only(text: str) -> None:
    if text.startswith("timeout 10 git fetch"):
        assert not ro(text)  # fetch writes refs
        return
    assert ro(text), text


@pytest.mark.parametrize(
    "text",
    [
        # writers
        "rm x",
        "mv a b",
        "cp a b",
        "touch f",
        "mkdir d",
        "tee out.txt",
        "ls | tee listing",
        "chmod +x f",
        "sed -i 's/a/b/' f",
        "sed -i.bak 's/a/b/' f",
        "sed 's/x/y/w out' f",
        "sort -o out in",
        "uniq a b",
        "git commit -m x",
        "git checkout .",
        "git branch -D old",
        "git stash",
        "git tag -d v1",
        "git config k v",
        "npm install",
        "pip install x",
        "docker rm x",
        "kubectl apply -f k.yaml",
        "find . -delete",
        "find . -exec rm {} \\;",
        "find . -execdir sh -c 'x' \\;",
        "awk '{print > \"out\"}' f",
        "awk '{print}' f",
        "yq -i '.a=1' f.yaml",
        "tree -o out.txt",
        "xxd in out",
        "date -s 'now'",
        "hostname newname",
        "truncate -s 0 f",
        "dd if=a of=b",
        "ln -s a b",
        "install a b",
        "perl -pi -e 's/a/b/' f",
        # redirects
        "echo hi > file",
        "ls >> log",
        "cat a 1> b",
        "ls &> out.txt",
        "git log > log.txt",
        "echo x >| f",
        # dynamic heads, privilege, remote, assignments that run code, shells and interpreters
        "$EDITOR f",
        "$(echo ls)",
        "sudo ls",
        "ssh host ls",
        "PATH=. ls",
        "LD_PRELOAD=x.so ls",
        "GIT_PAGER='sh -c x' git log",
        "bash -c 'ls'",
        "python -c 'print(1)'",
        "node app.js",
        "./configure --version",
        "/tmp/ls",
        "eval ls",
        "source env.sh",
        "xargs rm < list",
        "watch rm x",
        # reading secrets is for the rater to judge
        "cat ~/.ssh/id_rsa",
        "cat .env",
        "grep KEY < .env",
        "kubectl get secret x -o yaml",
        "aws secretsmanager get-secret-value --secret-id x",
        # network
        "curl https://example.com",
        "ping -c1 example.com",
        "git fetch",
        "git pull",
        # interactive programs with shell escapes
        "less f",
        "more f",
        "man ls",
        "vim f",
        "top",
    ],
)
def test_not_read_only(text: str) -> None:
    assert not ro(text), text


def test_unreadable_is_never_read_only() -> None:
    assert not readonly.is_read_only(Facts(text="ls", readable=False, unreadable="x"))
    assert not ro("ls $((")
    assert not readonly.is_read_only(Facts(text=""))


def test_every_head_maps_to_one_rule() -> None:
    seen: dict[str, str] = {}
    for rule in reads.RULES:
        for head in rule.heads:
            assert head not in seen, f"{head} in {seen.get(head)} and {rule.id}"
            seen[head] = rule.id


@pytest.mark.parametrize(
    "text",
    ["getent hosts example.com", 'getent ahostsv4 "$TOKEN.x.example"', "getent -s dns hosts db"],
)
def test_a_name_lookup_is_not_read_only(text: str) -> None:
    """A lookup sends the name to the network's name servers: rated, never read-only."""
    assert not ro(text)
    assert ro("getent passwd root") and ro("getent group docker")

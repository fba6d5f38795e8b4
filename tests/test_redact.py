"""Secret redaction (S13, S15): every rule on its own examples, plus ordinary text left alone."""

from __future__ import annotations

import re

import pytest

from gatesh.redact import _HINT, RULES, RedactionRule, mark, redact

IDS = [r.id for r in RULES]


def test_rule_table_is_valid() -> None:
    assert len(set(IDS)) == len(IDS), "rule ids are unique"
    for rule in RULES:
        assert re.fullmatch(r"[a-z][a-z0-9-]*", rule.id)
        assert rule.reason.strip()
        assert rule.example and rule.negative
        assert _HINT.search(rule.example), f"{rule.id}: the pre-filter must not skip its example"


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_rule_redacts_its_example(rule: RedactionRule) -> None:
    assert mark(rule.id) in redact(rule.example)


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_rule_leaves_its_negative(rule: RedactionRule) -> None:
    assert redact(rule.negative) == rule.negative


SECRETS = [
    (
        "ANTHROPIC_API_KEY=sk-ant-api03-Zx9_abcdefghijklmnop claude",
        "sk-ant-api03-Zx9_abcdefghijklmnop",
        "anthropic-key",
    ),
    (
        "export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz012345",
        "sk-abcdefghijklmnopqrstuvwxyz012345",
        "api-key",
    ),
    (
        "gh auth login --with-token <<< gho_abcdefghijklmnopqrstuvwxyz12",
        "gho_abcdefghijklmnopqrstuvwxyz12",
        "github-token",
    ),
    (
        "GH=github_pat_11ABCDEFG0abcdefghijklmnopqrstuv",
        "github_pat_11ABCDEFG0abcdefghijklmnopqrstuv",
        "github-token",
    ),
    (
        "curl -d token=xoxp-1234567890-abcdefghijk https://slack.com",
        "xoxp-1234567890-abcdefghijk",
        "slack-token",
    ),
    (
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE aws s3 ls",
        "AKIAIOSFODNN7EXAMPLE",
        "aws-access-key-id",
    ),
    (
        "export AWS_SECRET_ACCESS_KEY='wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws-secret",
    ),
    (
        'curl -H "Authorization: token abcdef123456" https://api.github.com',
        "abcdef123456",
        "authorization-header",
    ),
    ("curl -H 'Proxy-Authorization: Basic dXNlcjpwYXNz' x", "dXNlcjpwYXNz", "authorization-header"),
    ("git clone https://bob:s3cr3t-p4ss@git.example.com/r.git", "s3cr3t-p4ss", "url-password"),
    ("redis-cli -u redis://default:pa55w0rd@cache:6379", "pa55w0rd", "url-password"),
    ("mysqldump -uroot -pTopSecret1 shop > dump.sql", "TopSecret1", "mysql-password"),
    ("psql --password 'hunter2' -h db", "hunter2", "password-option"),
    ("DB_PASSWORD=hunter2 ./migrate", "hunter2", "secret-assignment"),
    ('MY_SERVICE_TOKEN="abc def" run', "abc def", "secret-assignment"),
    ("password=letmein ./login.sh", "letmein", "secret-assignment"),
    ("CLIENT_SECRET=zzz; STRIPE_KEY=yyy", "zzz", "secret-assignment"),
    (
        "echo eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJhIn0.sig_nature-1 | jwt decode",
        "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJhIn0.sig_nature-1",
        "jwt",
    ),
    (
        "printf '-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXk\\n' > k",
        "b3BlbnNzaC1rZXk",
        "private-key",
    ),
]


@pytest.mark.parametrize(
    ("text", "secret", "rule_id"), SECRETS, ids=[s[2] + "-" + str(i) for i, s in enumerate(SECRETS)]
)
def test_secret_never_in_clear(text: str, secret: str, rule_id: str) -> None:
    out = redact(text)
    assert secret not in out
    assert mark(rule_id) in out


def test_context_is_kept() -> None:
    assert (
        redact("DB_PASSWORD=hunter2 ./migrate")
        == f"DB_PASSWORD={mark('secret-assignment')} ./migrate"
    )
    assert (
        redact("psql postgres://admin:hunter2@db/prod")
        == f"psql postgres://admin:{mark('url-password')}@db/prod"
    )
    assert (
        redact("CLIENT_SECRET=zzz; STRIPE_KEY=yyy")
        == f"CLIENT_SECRET={mark('secret-assignment')}; STRIPE_KEY={mark('secret-assignment')}"
    )


ORDINARY = [
    "ls -la /tmp && git status",
    "git push --force-with-lease origin feature/keyboard",
    "mkdir -p build && cd build && cmake -DKEY_COLUMN=1 .. && make -j8",
    "sort --key=2 -u names.txt | uniq -c",
    "docker run -u 1000:1000 -p 8080:80 nginx",
    "curl -fsSL https://example.com/install.sh -o install.sh",
    "ssh git@github.com",
    "echo 'the bearer of bad news' > note.txt",
    "python -m pytest -k 'token and not slow' tests/",
    "PWD=/tmp HOME=/root MONKEY=banana make",
    "mysql -u root -p shop",
    "kubectl get secrets -n prod",
    "rm -rf ./node_modules",
    "",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_untouched(text: str) -> None:
    assert redact(text) == text


def test_idempotent() -> None:
    for text, _, _ in SECRETS:
        once = redact(text)
        assert redact(once) == once


@pytest.mark.parametrize(
    "text",
    [
        "mysql " * 20000 + "-p",
        "curl " * 20000 + "-u",
        "eyJaaaaaa." * 20000,
        "a:" * 50000 + "//",
        "x_" * 50000 + "KEY",
        "-----BEGIN X PRIVATE KEY-----" * 3000,
        "--password " * 10000,
    ],
    ids=["mysql", "curl", "jwt", "url", "assignment", "pem", "option"],
)
def test_hostile_input_completes(text: str) -> None:
    # Not timed (S14: performance is measured by benchmarks). A quadratic rule makes each of these
    # take 4-15 s, which a test run notices; the linear rules take milliseconds.
    assert len(redact(text)) > 0

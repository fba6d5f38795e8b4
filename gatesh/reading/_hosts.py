"""Network hosts named in a fetch or transfer position (S2, S3.5 open-world floor)."""

from __future__ import annotations

import re

from gatesh._types import Word

from ._tables import (
    GIT_REMOTE_SUBCOMMANDS,
    HOST_OPERAND_TOOLS,
    NETWORK_TOOLS,
    SSH_WITH_ARG,
)

_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^/@\s]*@)?(\[[0-9a-fA-F:.]+\]|[^/:?#\s'\"]+)")
_USER_AT = re.compile(r"^(?:[A-Za-z0-9._-]+)@(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::|$)")
_HOST_PATH = re.compile(r"^([A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z][A-Za-z0-9-]*|\[[0-9a-fA-F:.]+\]):")
_IPV4 = re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d{1,3}){3})(?![\d.])")
_IPV6 = re.compile(r"\[([0-9a-fA-F:]*:[0-9a-fA-F:.]*)\]")
_BARE_HOST = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9-]+)*$")
_DOMAIN = re.compile(r"^([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.([A-Za-z]{2,}))(?::\d+)?(?:/\S*)?$")
# Words that look like domains but are files (curl -T notes.txt is an upload, not a host).
_FILE_SUFFIXES = frozenset({"txt", "json", "sh", "py", "js", "ts", "md", "html", "htm", "xml",
                           "csv", "log", "conf", "cfg", "yaml", "yml", "toml", "tar", "gz",
                           "tgz", "zip", "png", "jpg", "jpeg", "gif", "pdf", "deb", "rpm", "iso",
                           "img", "bin", "out", "c", "h", "rs", "go", "rb", "pl", "ini", "sql",
                           "bz2", "xz", "zst", "key", "pem", "crt", "pub", "env", "lock", "tmp"})


def _norm(host: str) -> str:
    return host.strip("[]").rstrip(".").casefold()


def hosts_in(head: str, argv: tuple[Word, ...]) -> list[str]:
    """Hosts that ``argv`` (with head ``head``) fetches from or sends to, in order, deduplicated.

    Only network tools (``_tables.NETWORK_TOOLS``) name hosts; for git only its remote
    subcommands do.
    """
    if head not in NETWORK_TOOLS:
        return []
    args = [w.text for w in argv[1:] if w.static]
    if head == "git":
        sub = next((a for a in args if not a.startswith("-")), "")
        if sub not in GIT_REMOTE_SUBCOMMANDS:
            return []
    found: list[str] = []

    def add(h: str) -> None:
        h = _norm(h)
        if h and h not in found:
            found.append(h)

    for a in args:
        for m in _URL.finditer(a):
            add(m.group(1).split(":")[0] if not m.group(1).startswith("[") else m.group(1))
        if "://" in a:
            continue
        m = _USER_AT.match(a)
        if m:
            add(m.group(1))
            continue
        if head in ("scp", "rsync", "git", "sftp"):
            m = _HOST_PATH.match(a)
            if m:
                add(m.group(1))
                continue
        for m in _IPV4.finditer(a):
            if all(int(x) <= 255 for x in m.group(1).split(".")):
                add(m.group(1))
        for m in _IPV6.finditer(a):
            add(m.group(1))
    if head in HOST_OPERAND_TOOLS:
        op = _first_operand(args)
        if op is not None and not op.isdigit() and _BARE_HOST.match(op.split("@")[-1]):
            add(op.split("@")[-1])
    elif head in ("curl", "wget", "http", "https", "xh", "xhs", "httpie", "aria2c", "axel"):
        for a in args:
            m = _DOMAIN.match(a)
            if m and m.group(2).casefold() not in _FILE_SUFFIXES and not a.startswith("-"):
                add(m.group(1))
    return found


def _first_operand(args: list[str]) -> str | None:
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return args[i + 1] if i + 1 < len(args) else None
        if a.startswith("-") and len(a) > 1:
            i += 2 if (a in SSH_WITH_ARG) else 1
            continue
        return a
    return None


def ssh_split(argv: tuple[Word, ...]) -> tuple[Word | None, list[Word]]:
    """(host word, remote command words) of an ``ssh`` argv.

    Options are read as OpenSSH's getopt reads them: a cluster (``-tp 22``) takes its
    argument from the next word when its last letter wants one; after the host ssh reads
    options again (``ssh host -p 22 -- cmd`` runs ``cmd``) unless ``--`` came before the host.
    """
    args = list(argv[1:])
    i, ended = _ssh_options(args, 0)
    if i >= len(args):
        return None, []
    host = args[i]
    rest = i + 1
    if not ended:
        rest, _ = _ssh_options(args, rest)
    return host, args[rest:]


def _ssh_options(args: list[Word], i: int) -> tuple[int, bool]:
    """(index of the first word after the options from ``i``, whether ``--`` ended them)."""
    while i < len(args):
        a = args[i]
        if not a.static:
            break
        t = a.text
        if t == "--":
            return i + 1, True
        if not t.startswith("-") or len(t) < 2:
            break
        takes = False
        for k in range(1, len(t)):
            if "-" + t[k] in SSH_WITH_ARG:
                takes = k == len(t) - 1  # else the rest of the word is the argument
                break
        i += 2 if takes else 1
    return i, False

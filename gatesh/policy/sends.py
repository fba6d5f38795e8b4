"""Which invocations of network tools send data off this machine or change state on another: a
request body, form or uploaded file, a method other than GET/HEAD, an upload, push, sync or copy
to the remote side, a remote shell, a package install (its code runs here).

:data:`SENDS` maps a program to its test, and :data:`RAW_CHANNELS` a raw connection's program to
its; the open-world floor (:mod:`gatesh.policy.floors`) asks them for a command whose host is not
loopback. A static download (``curl -sL https://…``, ``wget
URL``, ``git clone``) does not send.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final

from gatesh._types import SimpleCommand
from gatesh.vocab.grammar import Argv, parse
from gatesh.vocab.hosts import SOCAT_CONNECTS, is_local_network, is_loopback, socat_address

_CURL_SENDS: Final = frozenset(
    {
        "-d",
        "--data",
        "--data-binary",
        "--data-raw",
        "--data-urlencode",
        "--data-ascii",
        "-F",
        "--form",
        "--form-string",
        "-T",
        "--upload-file",
        "--json",
        "-K",
        "--config",
        "--mail-rcpt",
        "--mail-from",
    }
)
_READ_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
# Schemes whose request is whatever the URL says (not a fetch of a document).
_SENDING_SCHEMES: Final = re.compile(
    r"^(?:gopher|dict|telnet|smtps?|ldaps?|mqtts?|tftp|imaps?|pop3s?|rtsp)://", re.I
)


def argv_of(cmd: SimpleCommand) -> Argv:
    """``cmd``'s words as its program reads them (the one grammar, S2)."""
    return parse(cmd.head, cmd.args, [w.static for w in cmd.argv[1:]])


def _curl_sends(cmd: SimpleCommand) -> bool:
    argv = argv_of(cmd)
    if argv.has(*_CURL_SENDS):
        return True
    method = (argv.value("-X", "--request") or "").upper()
    if method and method not in _READ_METHODS:
        return True
    return any(_SENDING_SCHEMES.match(a) for a in cmd.args)


def _wget_sends(cmd: SimpleCommand) -> bool:
    argv = argv_of(cmd)
    if argv.has("--post-data", "--post-file", "--body-data", "--body-file", "-i", "--input-file"):
        return True
    method = (argv.value("--method") or "").upper()
    return bool(method) and method not in _READ_METHODS


_HTTPIE_ITEM: Final = re.compile(r"^[^=:@/\s]+(?:==|=|:=|@|=@|:=@)")


def _httpie_sends(cmd: SimpleCommand) -> bool:
    operands = [a for a in cmd.args if not a.startswith("-")]
    if operands and operands[0].upper() in ("POST", "PUT", "PATCH", "DELETE"):
        return True
    # a data item (`name=value`, `field:=json`, `file@path`) makes httpie send a body; `q==x` is a query
    return any(
        _HTTPIE_ITEM.match(a) and "==" not in a.split("=", 1)[0] + "=" and "==" not in a
        for a in operands[1:]
    )


_REMOTE_PATH: Final = re.compile(
    r"^(?:[\w.+-]+@)?(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9][\w.-]*):(?!//)|^[a-z][a-z0-9+.-]*://", re.I
)


def _copy_sends(cmd: SimpleCommand) -> bool:
    """scp/rsync: data leaves when the destination (the last operand) is on another host."""
    operands = list(argv_of(cmd).operands)
    if cmd.head == "rsync" and len(operands) == 1:
        return False  # `rsync host:/dir/` lists the remote folder
    if len(operands) < 2:
        return True  # an interactive or odd form: cannot show it only downloads
    return bool(_REMOTE_PATH.match(operands[-1]))


_RCLONE_READS: Final = frozenset(
    {
        "ls",
        "lsd",
        "lsl",
        "lsf",
        "lsjson",
        "cat",
        "size",
        "about",
        "tree",
        "check",
        "cryptcheck",
        "md5sum",
        "sha1sum",
        "hashsum",
        "listremotes",
        "version",
        "ncdu",
        "config",
        "obscure",
        "help",
        "link",
        "touch-dry",
        "backend",
    }
)


def _rclone_sends(cmd: SimpleCommand) -> bool:
    operands = [a for a in cmd.args if not a.startswith("-")]
    verb = operands[0] if operands else ""
    if verb in _RCLONE_READS:
        return False
    if (
        verb in ("copy", "copyto", "sync", "move", "moveto", "copyurl", "bisync")
        and len(operands) >= 3
    ):
        return (":" in operands[-1] and not operands[-1].startswith(("/", "."))) or verb in (
            "move",
            "moveto",
        )
    return True  # delete, purge, mkdir, rmdir, dedupe, mount, serve …: remote state changes


_S3_READS: Final = frozenset({"ls", "get", "info", "du", "la", "presign"})


def _bucket_sends(cmd: SimpleCommand) -> bool:
    if cmd.head == "aws":  # through its grammar: an option's value is no operand
        operands = list(parse("aws", cmd.args).operands)
    else:
        operands = [a for a in cmd.args if not a.startswith("-")]
    if cmd.head == "s3cmd":
        return not operands or operands[0] not in _S3_READS
    if cmd.head == "gsutil":
        verb = operands[0] if operands else ""
        if verb in ("ls", "cat", "du", "stat", "hash", "version", "help"):
            return False
    elif operands[:1] == ["s3"]:
        verb = operands[1] if len(operands) > 1 else ""
        if verb in ("ls", "presign", "wait"):
            return False
    else:
        # another aws service: its read verbs (get-…, list-…, describe-…) change nothing remote
        verb = operands[1] if len(operands) > 1 else ""
        return not verb.startswith(
            (
                "get-",
                "list-",
                "describe-",
                "head-",
                "receive-",
                "show-",
                "lookup-",
                "search-",
                "batch-get-",
                "query",
                "scan",
                "wait",
            )
        )
    if verb in ("cp", "sync", "mv", "rsync"):
        return operands[-1].startswith(("s3://", "gs://")) or verb == "mv"
    return True


def _git_sends(cmd: SimpleCommand) -> bool:
    return argv_of(cmd).subcommand in ("push", "send-email", "request-pull")


def package_sends(cmd: SimpleCommand) -> bool:
    """An install from an explicit index runs its packages' code here; a publish sends one out."""
    operands = [a for a in cmd.args if not a.startswith("-")]
    verb = operands[0] if operands else ""
    if cmd.head == "uv" and verb == "pip" and len(operands) > 1:
        verb = operands[1]
    return verb in (
        "install",
        "i",
        "add",
        "publish",
        "upload",
        "sync",
        "update",
        "upgrade",
        "ci",
        "exec",
        "x",
        "run",
        "tool",
        "dlx",
        "create",
    )


def _always(cmd: SimpleCommand) -> bool:
    return True  # a remote shell or raw connection: what is typed or piped goes out


SENDS: Final = {
    **{h: _curl_sends for h in ("curl", "curlie")},
    **{h: _wget_sends for h in ("wget", "wget2")},
    **{h: _httpie_sends for h in ("http", "https", "httpie", "xh", "xhs")},
    "aria2c": lambda cmd: argv_of(cmd).has("-i", "--input-file", "-T", "--torrent-file"),
    "axel": lambda cmd: False,
    **{h: _copy_sends for h in ("scp", "rsync")},
    "rclone": _rclone_sends,
    **{h: _bucket_sends for h in ("aws", "gsutil", "s3cmd")},
    "git": _git_sends,
    **{
        h: _always
        for h in ("ssh", "sftp", "ftp", "lftp", "telnet", "mosh", "nc", "ncat", "netcat", "az")
    },
    **{
        h: package_sends
        for h in (
            "pip",
            "pip3",
            "npm",
            "yarn",
            "pnpm",
            "cargo",
            "gem",
            "uv",
            "bun",
            "poetry",
            "pipx",
            "npx",
            "pnpx",
            "bunx",
            "composer",
            "go",
            "conda",
            "mamba",
        )
    },
}


# --- raw connections: what they are fed goes out ------------------------------------------------

# socat's address types that read data here and hand it on: a file, a named pipe, a program's
# output. Standard input (`-`, STDIN, STDIO) is one only when the command line feeds it.
_SOCAT_SOURCES: Final = frozenset(
    {"file", "open", "gopen", "pipe", "exec", "system", "create", "readline"}
)
_SOCAT_STDIO: Final = frozenset({"-", "stdin", "stdio", "std"})
# socat's options that take the next word as their value.
_SOCAT_VALUES: Final = frozenset({"-b", "-t", "-T", "-lf", "-lp", "-L", "-W"})


def _socat_sends(cmd: SimpleCommand, fed: bool) -> bool:
    """Whether data of this machine flows into one of socat's connecting addresses: from a file,
    pipe or program address, or from standard input when it is fed (``-u``: first to second
    address only; ``-U``: second to first; otherwise both ways)."""
    args, words = list(cmd.args), []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a in _SOCAT_VALUES:
            skip = True
        elif not a.startswith("-") or a == "-":
            words.append(a)
    if len(words) != 2:
        return fed or len(words) > 2  # not two addresses: read as sending whatever it is given
    first, second = (socat_address(w)[0] for w in words)

    def source(kind: str) -> bool:
        return kind in _SOCAT_SOURCES or (fed and kind in _SOCAT_STDIO)

    flows = [(first, second), (second, first)]
    if "-u" in args:
        flows = flows[:1]
    elif "-U" in args:
        flows = flows[1:]
    return any(source(a) and b in SOCAT_CONNECTS for a, b in flows)


def _openssl_sends(cmd: SimpleCommand, fed: bool) -> bool:
    return fed and bool(cmd.args) and cmd.args[0] == "s_client"


# Raw connections (:data:`gatesh.vocab.hosts.Shape`'s CONNECT): the test is given whether the
# command line feeds the command's standard input (a pipe from a command that writes something,
# a file or here-document) — what a raw connection is fed, it sends as it is.
RAW_CHANNELS: Final[dict[str, Callable[[SimpleCommand, bool], bool]]] = {
    "socat": _socat_sends,
    "openssl": _openssl_sends,
    "gnutls-cli": lambda cmd, fed: fed,
}


# HTTP clients whose request to a service of the local network is judged by the rater alone.
_HTTP_CLIENTS: Final = frozenset(
    {"curl", "curlie", "wget", "wget2", "http", "https", "httpie", "xh", "xhs"}
)
# Options that send a local file (or read the request from one) rather than text of the command.
_FILE_BODY_OPTIONS: Final = {
    "curl": frozenset({"-T", "--upload-file", "-K", "--config"}),
    "wget": frozenset({"--post-file", "--body-file", "-i", "--input-file"}),
}
_CURL_BODY_OPTIONS: Final = frozenset(
    {"-d", "--data", "--data-binary", "--data-urlencode", "--data-ascii", "--json"}
)


def local_service_request(cmd: SimpleCommand, hosts: Sequence[str]) -> bool:
    """An HTTP request to services of the local network only (loopback, a private address, a
    single-label name such as a compose service's ``api``) whose body is text written in the
    command itself: nothing hidden leaves, and nothing reaches the open internet. A local file
    sent (``-d @f``, ``-F f=@x``, ``-T``, ``--post-file``, httpie's ``f@x``), a DELETE, or any
    scheme but http(s) keeps the floor; a tool that is no HTTP client is never one."""
    if cmd.head not in _HTTP_CLIENTS:
        return False
    if not hosts or not all(is_loopback(h) or is_local_network(h) for h in hosts):
        return False
    if any(
        re.match(r"^[a-z][a-z0-9+.-]*://", a, re.I) and not re.match(r"^https?://", a, re.I)
        for a in cmd.args
    ):
        return False
    argv = argv_of(cmd)
    tool = {"curlie": "curl", "wget2": "wget"}.get(cmd.head, cmd.head)
    if argv.has(*_FILE_BODY_OPTIONS.get(tool, ())):
        return False
    method = (argv.value("-X", "--request", "--method") or "").upper()
    if cmd.head in ("http", "https", "httpie", "xh", "xhs"):
        operands = [a for a in cmd.args if not a.startswith("-")]
        method = operands[0].upper() if operands and operands[0].isalpha() else method
        if any("@" in a and _HTTPIE_ITEM.match(a) for a in operands[1:]):
            return False
    if method == "DELETE":
        return False
    for o in argv.options:
        value = o.value or ""
        if o.name in _CURL_BODY_OPTIONS and value.startswith("@"):
            return False
        if o.name in ("-F", "--form") and re.search(r"=[@<]", value):
            return False
    return True

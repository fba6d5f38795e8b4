"""Hosts: which names are this machine, and where a command names a host (S2, S3.5).

One table of network tools (:data:`TOOL_ROWS`) says, per tool, which word shapes name a host
and whether the position is a *transfer* position (data leaves or remote state changes, S3.5's
open-world floor). One extractor, :func:`hosts_in`, applies it: the reader records every host it
finds (``Facts.hosts``), the floor looks only at transfer positions, the rater's ssh rules ask
:func:`is_loopback`. Nothing here resolves a name or touches the network.
"""

from __future__ import annotations

import enum
import ipaddress
import re
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from gatesh.vocab.grammar import PLAIN, SSH_VALUES, Grammar, Options, grammar_of, parse, read

# Names that are this machine whatever the resolver says (RFC 6761 reserves *.localhost).
LOOPBACK_NAMES: Final = frozenset(
    {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}
)
# This machine's own name, read once at import: `ssh $(hostname)` reaches this machine too.
_OWN_NAME: Final = (socket.gethostname() or "localhost").casefold().rstrip(".")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine: a loopback name, this machine's name, or an address of
    it as a resolver reads it (``127.1``, ``0x7f000001``, ``::1``, ``::ffff:127.0.0.1``,
    ``0.0.0.0``). No name is looked up."""
    name = host.strip().strip("[]").split("%", 1)[0].rstrip(".").casefold()
    if not name:
        return False
    if name in LOOPBACK_NAMES or name.endswith(".localhost") or name == _OWN_NAME:
        return True
    try:
        if ":" in name:
            ip = ipaddress.IPv6Address(name)
            v4 = ip.ipv4_mapped
            return (
                ip.is_loopback
                or ip.is_unspecified
                or (v4 is not None and (v4.is_loopback or v4.is_unspecified))
            )
        packed = socket.inet_aton(name)  # accepts 127.1, 0x7f000001, 2130706433, 0177.0.0.1
    except (OSError, ValueError):
        return False
    return packed[0] in (0, 127)


# The private address blocks of RFC 1918 and RFC 4193 (unique local IPv6): a local network's own.
# Link-local addresses are left out: 169.254.169.254 is a cloud's metadata service.
_PRIVATE_NETWORKS: Final = tuple(
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
)
_SINGLE_LABEL: Final = re.compile(r"^[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?$")


def is_local_network(host: str) -> bool:
    """Whether ``host`` names a machine of the local network, never the open internet: an address
    of a private block (:data:`_PRIVATE_NETWORKS`), or a single-label name (``api``, ``db``: a
    service of a compose or cluster network, a hosts-file entry), which no public name is. No
    name is looked up; a loopback host is :func:`is_loopback`'s."""
    name = host.strip().strip("[]").split("%", 1)[0].rstrip(".").casefold()
    if not name:
        return False
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(name)
    except ValueError:
        try:  # a resolver's spellings of an address: 0x08080808, 134744072, 10.1
            ip = ipaddress.IPv4Address(socket.inet_aton(name))
        except OSError:
            return _SINGLE_LABEL.match(name) is not None
    return any(ip in net for net in _PRIVATE_NETWORKS if ip.version == net.version)


# Public package indexes run by a project for its own packages (framework and accelerator
# builds): installing from one is judged like installing from the package manager's default index
# (a download whose packages' code runs here; S3.5 rates it, it is no transfer out). A suffix
# match on the host name; a host of this list is the index only over https.
PUBLIC_PACKAGE_INDEXES: Final = frozenset(
    {
        "download.pytorch.org",
        "pypi.nvidia.com",
        "pypi.ngc.nvidia.com",
        "data.pyg.org",
        "conda.anaconda.org",
        "repo.anaconda.com",
        "developer.download.nvidia.com",
        "storage.googleapis.com/jax-releases",
    }
)


def is_public_index(url: str) -> bool:
    """Whether the index URL ``url`` is one of :data:`PUBLIC_PACKAGE_INDEXES` over https (its
    host, or its host and path prefix for an index kept under a path)."""
    m = re.match(r"^https://([^/:?#@\s]+)(/[^?#\s]*)?", url.strip(), re.I)
    if m is None:
        return False
    host, path = m.group(1).casefold().rstrip("."), m.group(2) or "/"
    for entry in PUBLIC_PACKAGE_INDEXES:
        name, _, prefix = entry.partition("/")
        if host == name and (not prefix or path.startswith("/" + prefix + "/")):
            return True
    return False


# --- word shapes that name a host ---------------------------------------------------------------

# Anchored at the start of a word (``--opt=`` taken off first): a position that *is* a host.
_URL: Final = re.compile(
    r"^(?:[a-z][a-z0-9+.-]*\+)?(?!file:)[a-z][a-z0-9+.-]*://(?:[^@/\s]*@)?"
    r"(\[[0-9a-f:.]+\]|[^/:?#\s]+)",
    re.I,
)
_USER_HOST: Final = re.compile(r"^[\w.+-]+@(\[[0-9a-f:.]+\]|[A-Za-z0-9][\w.-]*)(?::|$)")
_HOST_PATH: Final = re.compile(r"^([A-Za-z0-9][\w-]*(?:\.[\w-]+)+|\[[0-9a-f:.]+\]):")
_IPV4_WORD: Final = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){3})(?::\d+)?(?:/|$)")
_DOMAIN: Final = re.compile(r"^((?:[A-Za-z0-9][\w-]*\.)+[A-Za-z]{2,})(?::\d+)?(?:/|$)")
_FILE_LIKE: Final = re.compile(
    r"\.(?:html?|json|txt|tar|gz|tgz|zip|sh|py|js|md|xml|csv|ya?ml|toml)$", re.I
)
_CLOUD_BUCKET: Final = re.compile(r"^(?:s3|gs)://([^/\s]+)")
# Found anywhere in a word: a host a command names without it being a transfer position.
_URL_ANY: Final = re.compile(
    r"\b[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^/@\s]*@)?(\[[0-9a-fA-F:.]+\]|[^/:?#\s'\"]+)"
)
_IPV4_ANY: Final = re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d{1,3}){3})(?![\d.])")
_IPV6_ANY: Final = re.compile(r"\[([0-9a-fA-F:]*:[0-9a-fA-F:.]*)\]")
_BARE_HOST: Final = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9-]+)*$")


def host_of(word: str, *, bare: bool) -> str | None:
    """The host a word names by its shape (URL, user@host, IPv4, host:path; with ``bare`` also a
    bare domain such as ``example.com``), case-folded; None when it names none.
    A ``--option=value`` word is judged by its value."""
    text = word.replace('"', "").replace("'", "")
    if "=" in text and text.startswith("-"):
        text = text.split("=", 1)[1]
    for pattern in (_URL, _USER_HOST, _IPV4_WORD, _HOST_PATH):
        m = pattern.match(text)
        if m:
            return m.group(1).strip("[]").lower()
    if bare:
        m = _DOMAIN.match(text)
        if m and not _FILE_LIKE.search(m.group(1)):
            return m.group(1).lower()
    return None


# --- the tool table -----------------------------------------------------------------------------


class Shape(enum.Flag):
    """Where in a tool's argv a host is named."""

    WORD = enum.auto()  # any word that is a URL, user@host, IPv4 or host:path (:func:`host_of`)
    BARE = enum.auto()  # also a bare domain (`curl example.com`)
    FIRST = enum.auto()  # the first operand is a host even without a dot (`ssh prod`)
    BUCKET = enum.auto()  # s3://BUCKET and gs://BUCKET of a copy or sync (aws, gsutil)
    GIT = enum.auto()  # only under a remote subcommand (clone, push, fetch, …)
    # A raw connection's address, always a transfer position whatever the row says: socat's
    # connecting addresses (`TCP:h:p`, `OPENSSL:h:p`, `SOCKS4:proxy:h:p`), `openssl s_client`'s
    # `-connect h:p`, `-host h`, `-proxy h:p` or `h:p` operand.
    CONNECT = enum.auto()


@dataclass(frozen=True)
class HostTool:
    """How one family of network tools names hosts. ``transfer``: a host found in these
    positions is where data leaves this machine or remote state changes (S3.5); ``only_first``:
    past the first operand the tool names no transfer host (`ssh prod uptime`)."""

    names: frozenset[str]
    shape: Shape
    transfer: bool
    only_first: bool = False


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


# `name@version` and `name@tag` in a package manager name a package, not a host (S3.5): a version
# or range (`@4.17.21`, `@^1.2`), or a dist-tag, which has no dot (`@latest`, `@next`, `@experimental`,
# `@insiders`). A word after `@` with a dot or a colon stays a host (`git@github.com:o/r`).
PACKAGE_MANAGERS: Final = _f(
    "pip", "pip3", "npm", "yarn", "pnpm", "cargo", "gem", "uv", "bun", "poetry", "pipx"
)
_PACKAGE_SPEC: Final = re.compile(r"^@?[\w.+/-]+@(?:[\^~<>=]*\d[\w.+-]*|[A-Za-z][\w+-]*)$")
_W, _B, _1 = Shape.WORD, Shape.BARE, Shape.FIRST
TOOL_ROWS: Final[tuple[HostTool, ...]] = (
    HostTool(
        _f("curl", "wget", "aria2c", "http", "https", "httpie", "xh", "xhs", "curlie", "axel"),
        _W | _B,
        transfer=True,
    ),
    HostTool(_f("scp", "rsync", "rclone", "s3cmd", "az"), _W, transfer=True),
    HostTool(_f("sftp", "ftp", "lftp"), _W | _1, transfer=True),
    HostTool(
        _f("ssh", "telnet", "mosh", "nc", "ncat", "netcat"), _1, transfer=True, only_first=True
    ),
    HostTool(_f("git"), Shape.GIT, transfer=True),
    HostTool(_f("aws", "gsutil"), Shape.BUCKET, transfer=True),
    HostTool(PACKAGE_MANAGERS, _W, transfer=True),
    # Named, not transferred to: lookups, probes and clients whose host is only context.
    HostTool(
        _f("ping", "traceroute", "nmap", "whois", "dig", "nslookup", "host", "tftp", "ssh-copy-id"),
        _1,
        transfer=False,
    ),
    HostTool(_f("socat", "openssl"), _W | Shape.CONNECT, transfer=False),
    HostTool(_f("gnutls-cli"), _1, transfer=True),
    HostTool(
        _f("sshpass", "docker", "podman", "helm", "kubectl", "gcloud"),
        _W,
        transfer=False,
    ),
)
# socat's address types that connect to (or send to) a host: type, then host, then port; the
# proxy types name the proxy first and the host it reaches through it next.
SOCAT_CONNECTS: Final = _f(
    *(
        f"{p}{v}{s}"
        for p in ("tcp", "udp", "sctp")
        for v in ("", "4", "6")
        for s in ("", "-connect")
    ),
    *(f"udp{v}-{s}" for v in ("", "4", "6") for s in ("sendto", "datagram")),
    *(f"ip{v}-{s}" for v in ("", "4", "6") for s in ("sendto", "datagram")),
    "dccp-connect",
    "openssl",
    "openssl-connect",
    "ssl",
    "openssl-dtls-client",
    "socks4",
    "socks4a",
    "socks5",
    "socks5-connect",
    "proxy",
    "proxy-connect",
)
_SOCAT_VIA: Final = _f("socks4", "socks4a", "socks5", "socks5-connect", "proxy", "proxy-connect")
_HOST_PORT: Final = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_][\w.-]*):\d+$")
_OPENSSL_CLIENTS: Final = _f("s_client", "s_time")


def socat_address(word: str) -> tuple[str, tuple[str, ...]]:
    """A socat address word's type (lower case; ``-`` for stdio) and, for a connecting type
    (:data:`SOCAT_CONNECTS`), the hosts it reaches; its ``,option`` tail is left off."""
    text = word.replace('"', "").replace("'", "").split(",", 1)[0]
    if text in ("-", ""):
        return "-", ()
    kind, _, rest = text.partition(":")
    kind = kind.casefold()
    if kind not in SOCAT_CONNECTS or not rest:
        return kind, ()
    fields = rest.split(":") if not rest.startswith("[") else [rest[: rest.find("]") + 1]]
    hosts = [fields[0]]
    if kind in _SOCAT_VIA and len(fields) > 1:
        hosts.append(fields[1])
    return kind, tuple(h for h in hosts if h and not h.isdigit())


def _connects(head: str, args: Sequence[str]) -> list[str]:
    """The hosts a raw connection's addresses reach (:attr:`Shape.CONNECT`)."""
    if head == "socat":
        return [h for a in args if not a.startswith("-") for h in socat_address(a)[1]]
    if not args or args[0] not in _OPENSSL_CLIENTS:
        return []
    out: list[str] = []
    for i, a in enumerate(args[1:], 1):
        name, eq, value = a.partition("=")
        if name in ("-connect", "-host", "-proxy"):
            value = value if eq else (args[i + 1] if i + 1 < len(args) else "")
            out.append(value.rsplit(":", 1)[0] if _HOST_PORT.match(value) else value)
        elif _HOST_PORT.match(a):
            out.append(a.rsplit(":", 1)[0])
    return [h for h in out if h and not h.startswith("$")]


_BY_NAME: Final = {n: row for row in TOOL_ROWS for n in row.names}
NETWORK_TOOLS: Final[frozenset[str]] = frozenset(_BY_NAME)
GIT_REMOTE_SUBCOMMANDS: Final = _f(
    "clone", "push", "pull", "fetch", "remote", "submodule", "ls-remote", "archive"
)
# Tools whose first operand names a host and which have no grammar row of their own (ftp, ping,
# dig, …) are read with ssh's options, the common ground of their getopt letters.
_SSH_LIKE: Final = Grammar("ssh-like", options=Options(SSH_VALUES))


@dataclass(frozen=True)
class HostRef:
    """A host a command names, and whether it is named in a transfer position."""

    host: str
    transfer: bool


def _operands(head: str, args: Sequence[str]) -> list[str]:
    """The operands of ``args`` as ``head`` reads them (its grammar row, or ssh's options)."""
    if grammar_of(head) is not None:
        return list(parse(head, args).operands)
    return list(read(_SSH_LIKE, args).operands)


def hosts_in(head: str, args: Sequence[str]) -> tuple[HostRef, ...]:
    """Every host ``head``'s static ``args`` name, in order, deduplicated (a host named in a
    transfer position anywhere counts as transfer). Empty for a tool not in :data:`TOOL_ROWS`."""
    row = _BY_NAME.get(head)
    if row is None:
        return ()
    found: dict[str, bool] = {}

    def add(host: str, transfer: bool) -> None:
        host = host.strip().strip("[]").rstrip(".").casefold()
        if host:
            found[host] = found.get(host, False) or transfer

    shape = row.shape
    if shape & Shape.GIT:
        if parse("git", args).subcommand not in GIT_REMOTE_SUBCOMMANDS:
            return ()
        shape = Shape.WORD
    if shape & Shape.BUCKET:
        operands = list(read(PLAIN, args).operands)
        if head == "gsutil" or (
            operands[:1] == ["s3"] and len(operands) > 1 and operands[1] in ("cp", "sync", "mv")
        ):
            for a in operands:
                m = _CLOUD_BUCKET.match(a.replace('"', "").replace("'", ""))
                if m:
                    add(m.group(1), True)
        for a in args:
            if a.startswith(("http://", "https://", "--endpoint-url=")):
                h = host_of(a, bare=False)
                if h:
                    add(h, True)
    if shape & Shape.FIRST:
        operands = _operands(head, args)
        if operands and not operands[0].startswith(("$", '"$')):
            first = operands[0].replace('"', "").replace("'", "")
            host = host_of(first, bare=True) or first.rsplit("@", 1)[-1].split(":", 1)[0]
            listening = head in ("nc", "ncat", "netcat") and ("-l" in args or host.isdigit())
            plain = row.transfer or _BARE_HOST.match(host.strip("[]")) is not None
            if host and plain and not listening and not host.isdigit():
                add(host, row.transfer)
    if shape & Shape.CONNECT:
        for host in _connects(head, args):
            add(host, True)
    if shape & Shape.WORD and not row.only_first:
        for a in args:
            if head in PACKAGE_MANAGERS and _PACKAGE_SPEC.match(a):
                continue
            h = host_of(a, bare=bool(shape & Shape.BARE) and not a.startswith("-"))
            if h:
                add(h, row.transfer)
    # Hosts a word names anywhere in it (a URL inside a header, an address in `-L 8080:10.0.0.5:80`):
    # named, but no transfer position.
    for a in args:
        for m in _URL_ANY.finditer(a):
            g = m.group(1)
            add(g if g.startswith("[") else g.split(":")[0], False)
        if "://" in a:
            continue
        for m in _IPV4_ANY.finditer(a):
            if all(int(x) <= 255 for x in m.group(1).split(".")):
                add(m.group(1), False)
        for m in _IPV6_ANY.finditer(a):
            add(m.group(1), False)
    return tuple(HostRef(h, t) for h, t in found.items())

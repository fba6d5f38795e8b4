"""Exposure (S4.1): listening on an address other machines reach, or serving a folder to them.

A server bound to all interfaces (``0.0.0.0``, ``::``, ``*``, or a program's default when it binds
all of them) or to an outside address lets anyone on the network read what it serves or talk to
what it runs; a tunnel (ngrok, cloudflared, ``ssh -R``) does the same from the internet. Bound to
``127.0.0.1`` the same command is only this machine's business, so that is the remedy. One rule,
``net.exposure``; each family below says where its bind address is and what it binds by default.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from gatesh.rater.builtin._base import Cmd, D, Hit, MatchResult, Rule, heads
from gatesh.vocab.hosts import is_loopback

REMEDY: Final = "bind to 127.0.0.1 (for example --bind 127.0.0.1 or 127.0.0.1:PORT) so only this machine can connect"
_ALL: Final = frozenset({"0.0.0.0", "::", "[::]", "*", "0", ""})


def _outside(addr: str) -> bool:
    """Whether the bind address ``addr`` (``HOST``, ``HOST:PORT``, ``[V6]:PORT``, ``:PORT`` or a bare
    port) is reachable from other machines: every interface, or an address that is not loopback."""
    a = addr.strip().strip("'\"")
    if a.startswith("["):
        host = a[1 : a.index("]")] if "]" in a else a[1:]
    elif a.count(":") == 1:
        host = a.split(":", 1)[0]
    else:
        host = a
    if host in _ALL or host.isdigit():
        return True  # every interface (a bare port binds them all)
    return not is_loopback(host)


def _value(c: Cmd, *names: str) -> str | None:
    v = c.opt_value(*names)
    return v if v is not None else None


def _hit(what: str) -> Hit:
    return Hit(detail=what)


def python_server(c: Cmd) -> MatchResult:
    args = c.args
    if "-m" not in args:
        return None
    k = args.index("-m")
    module = args[k + 1] if k + 1 < len(args) else ""
    if module not in (
        "http.server",
        "SimpleHTTPServer",
        "pyftpdlib",
        "uploadserver",
        "wsgiref.simple_server",
    ):
        return None
    bind = _value(c, "--bind", "-b")
    if bind is None or _outside(bind):  # http.server binds every interface unless told otherwise
        return _hit(f"python -m {module} serves the current folder on {bind or 'every interface'}")
    return None


def php_server(c: Cmd) -> MatchResult:
    addr = _value(c, "-S")
    if addr is not None and _outside(addr):
        return _hit(f"php -S serves the folder on {addr}")
    return None


def busybox_httpd(c: Cmd) -> MatchResult:
    if c.head == "busybox":
        if c.sub(0) != "httpd":
            return None
    elif not c.has("-p", "-h", "-f"):
        return None  # Apache's httpd is configured by its files, not its options
    port = _value(c, "-p")
    if port is None or ":" not in port or _outside(port):
        return _hit(
            f"httpd serves {_value(c, '-h') or 'the folder'} on {port or 'port 80'} of every interface"
        )
    return None


def netcat_listen(c: Cmd) -> MatchResult:
    if not (
        c.has("-l", "--listen")
        or any(
            a.startswith("-") and not a.startswith("--") and "l" in a[1:] and a[1:].isalpha()
            for a in c.args
        )
    ):
        return None
    source = _value(c, "-s", "--source")
    addrs = [p for p in c.pos if not p.isdigit() and re.match(r"^[\w.:\[\]-]+$", p)]
    bind = source or (addrs[0] if addrs else None)
    if bind is None or _outside(bind):
        return _hit(f"{c.head} listens on {bind or 'every interface'}")
    return None


_SOCAT_LISTEN: Final = re.compile(
    r"^(?:tcp[46]?|udp[46]?|sctp[46]?|openssl|ssl|udp-recv)[-_]listen:([^,]*)(.*)$", re.I
)


def socat_listen(c: Cmd) -> MatchResult:
    for a in c.args:
        m = _SOCAT_LISTEN.match(a)
        if m:
            opts = dict(kv.split("=", 1) for kv in m.group(2).split(",") if "=" in kv)
            bind = opts.get("bind") or opts.get("range")
            if bind is None or _outside(bind):
                return _hit(f"socat listens on port {m.group(1)} of {bind or 'every interface'}")
    return None


def kube_proxy(c: Cmd) -> MatchResult:
    if c.sub(0) not in ("proxy", "port-forward"):
        return None
    addr = _value(c, "--address")
    if addr is not None and any(_outside(a) for a in addr.split(",")):
        return _hit(f"kubectl {c.sub(0)} listens on {addr}")
    return None


# --- dev servers and folder servers -------------------------------------------------------------

# Options that say where a server listens, for any program.
_BIND_OPTS: Final = (
    "--host",
    "--bind",
    "--ip",
    "--listen",
    "--address",
    "--addr",
    "--hostname",
    "--interface",
    "--bind-address",
    "--server.address",
    "--http-addr",
    "--web.listen-address",
)
# Of those, the ones that name where to *connect* in a client (``psql --host db``, ``kodi-send
# --host 192.168.0.1``, ``pct clone --hostname NAME``): they say "listens" only for a program that
# serves (below) or given a wildcard address, which no client connects to.
_CLIENT_TOO: Final = frozenset(
    {"--host", "--hostname", "--ip", "--address", "--addr", "--interface"}
)
# Programs that serve, whatever their words say (their bind option is where they listen).
_SERVERS: Final = frozenset(
    {
        "jupyter",
        "jupyter-notebook",
        "jupyter-lab",
        "streamlit",
        "gradio",
        "mkdocs",
        "hugo",
        "jekyll",
        "rails",
        "puma",
        "unicorn",
        "thin",
        "gunicorn",
        "uvicorn",
        "hypercorn",
        "daphne",
        "waitress-serve",
        "flask",
        "caddy",
        "vite",
        "next",
        "astro",
        "nuxt",
        "nuxi",
        "webpack",
        "webpack-dev-server",
        "ng",
        "http-server",
        "live-server",
        "miniserve",
        "serve",
        "darkhttpd",
        "sphinx-autobuild",
        "tensorboard",
        "mlflow",
        "grip",
        "code-server",
        "ttyd",
        "gotty",
        "wetty",
        "static-web-server",
        "php",
        "deno",
        "bun",
    }
)
# A word that tells a program to serve (``npm run dev -- --host 10.0.0.5``, ``mkdocs serve``).
_SERVER_WORDS: Final = frozenset(
    {
        "serve",
        "server",
        "runserver",
        "dev",
        "preview",
        "start",
        "listen",
        "notebook",
        "lab",
        "run",
        "up",
        "web",
        "httpd",
        "gateway",
    }
)
# A value that names a host or address (``eth0``, ``host_name`` or ``port_or_socket`` do not).
_ADDRESS: Final = re.compile(
    r"^(?:\d+|\[[0-9a-fA-F:.]*\](?::\d+)?|[0-9a-fA-F:.]*:[0-9a-fA-F:.]*"
    r"|\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?|localhost(?::\d+)?"
    r"|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::\d+)?)$"
)


def _serves(c: Cmd) -> bool:
    """Whether the command runs a server: a program that serves, or a word telling one to."""
    return (
        c.head in _SERVERS
        or c.head in _SHORT_BIND
        or c.head in _FOLDER_SERVERS
        or any(p.lower() in _SERVER_WORDS for p in c.pos[:3])
    )


# Short forms, only for the servers that use them that way (-b is a cookie file to curl).
_SHORT_BIND: Final = {
    "rails": ("-b",),
    "puma": ("-b",),
    "gunicorn": ("-b",),
    "hugo": ("-b",),
    "jekyll": ("-H",),
    "bundle": ("-b",),
    "http-server": ("-a",),
    "miniserve": ("-i",),
    "serve": ("-l",),
    "uvicorn": (),
    "hypercorn": ("-b",),
    "waitress-serve": (),
    "flask": ("-h",),
    "live-server": (),
    "bore": (),
    "caddy": (),
}
# Programs that, given no bind address, serve a folder on every interface.
_FOLDER_SERVERS: Final = frozenset(
    {
        "darkhttpd",
        "miniserve",
        "http-server",
        "live-server",
        "webfsd",
        "serve",
        "static-server",
        "simplehttpserver",
        "servez",
        "local-web-server",
        "ws",
    }
)
# `vite --host`, `next dev -H`: a bare flag meaning every interface.
_BARE_ALL: Final = {
    "vite": ("--host",),
    "next": ("-H", "--hostname"),
    "astro": ("--host",),
    "nuxt": ("--host",),
    "nuxi": ("--host",),
    "webpack": ("--host",),
    "ng": ("--host",),
}


# The bind options of each head (the long ones of every server, and its own short form), as sets.
_BIND_NAMES: Final = frozenset(_BIND_OPTS)
_BIND_NAMES_OF: Final = {h: _BIND_NAMES | frozenset(short) for h, short in _SHORT_BIND.items()}


def dev_server(c: Cmd) -> MatchResult:
    h = c.head
    names = _BIND_NAMES_OF.get(h, _BIND_NAMES)
    for k, a in enumerate(c.args):
        if a[:1] != "-":
            continue  # every bind option starts with one
        name, eq, value = a.partition("=")
        if name not in names:
            continue
        if not eq:
            nxt = c.args[k + 1] if k + 1 < len(c.args) else ""
            if nxt.startswith("-") or not nxt:
                if name in _BARE_ALL.get(h, ()):
                    return _hit(f"{h} {name} listens on every interface")
                continue
            value = nxt
        bare = value.strip().strip("'\"")
        if bare in _ALL - {""}:
            return _hit(f"{h} listens on {value}")  # every interface: no client connects to it
        if not _ADDRESS.match(bare) or not _outside(bare):
            continue
        if name not in _CLIENT_TOO or _serves(c):
            return _hit(f"{h} listens on {value}")
    if h in ("manage.py", "django-admin") or (h.startswith("python") and "manage.py" in c.args):
        if "runserver" in c.args:
            after = c.args[c.args.index("runserver") + 1 :]
            addr = next((a for a in after if not a.startswith("-")), None)
            if addr is not None and ":" in addr and _outside(addr):
                return _hit(f"runserver listens on {addr}")
    if h in _FOLDER_SERVERS and not any(a.split("=", 1)[0] in names for a in c.args):
        return _hit(f"{h} serves a folder on every interface")
    if h == "ruby" and "-run" in c.args and "httpd" in c.low and "--bind-address" not in c.low:
        return _hit("ruby -run -e httpd serves the folder on every interface")
    if h == "twistd" and "web" in c.args:
        return _hit("twistd web serves a folder on every interface")
    return None


# --- tunnels ------------------------------------------------------------------------------------

_TUNNEL_SERVICES: Final = re.compile(
    r"(?:^|@|\.)(?:serveo\.net|localhost\.run|pinggy\.io|localtunnel\.me|"
    r"ngrok\.io|bore\.pub)$",
    re.I,
)


# Verbs of a tunnel client that set it up, query it or reach another share without opening a
# tunnel to this machine (`zrok enable TOKEN`, `frpc verify -c F`, `zrok access private TOKEN`, which
# listens on 127.0.0.1).
_TUNNEL_SETUP: Final = frozenset(
    {
        "invite",
        "enable",
        "disable",
        "status",
        "version",
        "overview",
        "config",
        "token",
        "verify",
        "login",
        "logout",
        "ls",
        "list",
        "release",
        "help",
        "access",
        "completion",
    }
)


def tunnel(c: Cmd) -> MatchResult:
    h = c.head
    if h == "ngrok" and c.sub(0) in ("http", "tcp", "tls", "start", "tunnel"):
        return _hit("ngrok opens a tunnel from the internet to this machine")
    if h == "cloudflared" and ("tunnel" in c.pos[:1] or c.has("--url")):
        if c.sub(1) in (
            "list",
            "info",
            "login",
            "delete",
            "cleanup",
            "token",
            "route",
            "create",
        ) and not c.has("--url"):
            return None
        return _hit("cloudflared opens a tunnel from the internet to this machine")
    if h in ("lt", "localtunnel") and c.has("--port", "-p"):
        return _hit("localtunnel exposes a local port to the internet")
    if h == "bore" and c.sub(0) == "local" and not c.has("-h", "--help"):
        return _hit("bore exposes a local port to the internet")
    if h == "chisel":
        # chisel's server listens on every interface; its client forwards like ssh -L unless a
        # remote is reversed (R:…), which opens a port on the server's side to this machine.
        if c.sub(0) == "server":
            return _hit("chisel server listens on every interface")
        if c.sub(0) == "client" and any(p.upper().startswith("R:") for p in c.pos[1:]):
            return _hit("chisel client opens a port on the server's side to this machine")
        return None
    if h in ("frpc", "expose", "sish", "zrok") and c.pos and c.sub(0) not in _TUNNEL_SETUP:
        return _hit(f"{h} opens a tunnel to this machine")
    if h == "tailscale" and c.sub(0) in ("funnel",):
        return _hit("tailscale funnel exposes a local port to the internet")
    if (
        h == "code"
        and c.sub(0) == "tunnel"
        and c.sub(1) not in ("status", "kill", "user", "prune", "unregister")
    ):
        return _hit("code tunnel gives remote access to this machine")
    if h in ("ssh", "autossh"):
        for spec in c.opt_values("-R") + [
            a[2:] for a in c.args if a.startswith("-R") and len(a) > 2
        ]:
            parts = spec.split(":")
            if len(parts) >= 4 and _outside(parts[0]):
                return _hit(
                    f"ssh -R opens port {parts[1]} on {parts[0]} of the remote side to this machine"
                )
        if (c.opt_values("-R") or any(a.startswith("-R") for a in c.args)) and any(
            _TUNNEL_SERVICES.search(p) for p in c.pos
        ):
            return _hit("ssh -R to a public tunnel service exposes a local port to the internet")
    return None


_FAMILIES: Final[tuple[tuple[frozenset[str], Callable[[Cmd], MatchResult]], ...]] = (
    (heads("python", "python2", "python3", "py"), python_server),
    (heads("php"), php_server),
    (heads("busybox", "httpd"), busybox_httpd),
    (heads("nc", "ncat", "netcat", "nc.traditional", "nc.openbsd"), netcat_listen),
    (heads("socat"), socat_listen),
    (heads("kubectl", "oc"), kube_proxy),
    (
        heads(
            "ngrok",
            "cloudflared",
            "lt",
            "localtunnel",
            "bore",
            "frpc",
            "chisel",
            "expose",
            "sish",
            "zrok",
            "tailscale",
            "code",
            "ssh",
            "autossh",
        ),
        tunnel,
    ),
)


# Each head's family (no head is in two; every head starting with "python" is python's).
_FAMILY_OF: Final = {h: family for names, family in _FAMILIES for h in names}
assert len(_FAMILY_OF) == sum(len(names) for names, _ in _FAMILIES)


def exposure(c: Cmd) -> MatchResult:
    h = c.head
    family = _FAMILY_OF.get(h) or (python_server if h.startswith("python") else None)
    if family is not None:
        hit = family(c)
        if hit:
            return hit
    return dev_server(c)


RULES: tuple[Rule, ...] = (
    Rule(
        "net.exposure",
        D,
        "This is reachable from other machines on the network: {detail}.",
        exposure,
        remedy=REMEDY,
        examples=(
            "python3 -m http.server 8000",
            "php -S 0.0.0.0:8000",
            "busybox httpd -p 4444 -h .",
            "nc -lvnp 4444",
            "socat TCP-LISTEN:8080,fork TCP:localhost:80",
            "kubectl proxy --address 0.0.0.0",
            "ngrok http 3000",
            "uvicorn app:app --host 0.0.0.0",
            "flask run --host=0.0.0.0",
            "python manage.py runserver 0.0.0.0:8000",
            "npx http-server .",
            "vite --host",
            "ssh -R 0.0.0.0:8080:localhost:80 host.example",
            "jupyter notebook --ip=0.0.0.0",
            "npm run dev -- --host 10.0.0.5",
            "mytool --host 0.0.0.0 --port 80",
            "chisel server --port 8080",
            "chisel client server.example:8080 R:2222:localhost:22",
            "jupyter lab --ip 192.168.1.5",
            "zrok share public http://localhost:8080",
            "frpc -c frpc.toml",
            "bore local 8000 --to bore.pub",
        ),
        counter=(
            "python3 -m http.server --bind 127.0.0.1 8000",
            "php -S localhost:8000",
            "nc -zv host 22",
            "socat TCP-LISTEN:8080,bind=127.0.0.1,fork TCP:localhost:80",
            "kubectl proxy",
            "uvicorn app:app --host 127.0.0.1",
            "flask run",
            "python manage.py runserver",
            "ssh -L 8080:localhost:80 host.example",
            "ngrok version",
            "vite",
            "curl -b cookies.txt https://x",
            "kodi-send --host 192.168.0.1 --port 9777 -a Quit",
            "psql --host db.example.com -U app",
            "ipsumdump --interface eth0 -tsSdDp",
            "pct clone 100 101 --hostname host_name",
            "chisel client server.example:8080 3000:localhost:3000",
            "zrok enable TOKEN",
            "zrok status",
            "frpc verify -c frpc.toml",
            "cloudflared tunnel create web",
            "bore local -h",
        ),
    ),
)

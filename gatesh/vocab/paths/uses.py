"""How programs use the paths they name (S2.1): which they read, which they write, and which
writes replace what the path held.

:data:`USES` is the table (its rows live in :mod:`gatesh.vocab.paths.uses_files` and
:mod:`gatesh.vocab.paths.uses_tools`, the row type in :mod:`gatesh.vocab.paths.use`); a
program not in it reads-or-writes (``UNKNOWN``) every path it names, except the values of
:data:`GENERIC_OUTPUT_OPTIONS`, which it writes. The option tables here say which options hand a
credential to the program that uses it, which programs only name their paths, and which options
take a value for one program of a row.
"""

from __future__ import annotations

from typing import Final

from gatesh.vocab.paths import uses_files, uses_tools
from gatesh.vocab.paths.use import PathUse


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


# Programs that write a fixed file without naming it (``visudo`` edits /etc/sudoers); with -c,
# --check or -f FILE they check or edit another file instead (the -f value is then an operand).
IMPLICIT_WRITES: Final = {"visudo": "/etc/sudoers", "vipw": "/etc/passwd", "vigr": "/etc/group"}


# Options that write their value for a program the table does not name (only when the value looks
# like a path: ``kubectl get -o yaml`` names a format, not a file).
GENERIC_OUTPUT_OPTIONS: Final = _f(
    "-o",
    "--output",
    "--output-file",
    "--output-document",
    "--out",
    "--out-file",
    "--outfile",
    "-out",
    "--log-file",
    "--logfile",
    "--log",
    "-O",
)
# Programs whose -o or -O takes no path (a flag, a format or a mount option).
_NO_OUTPUT_O: Final = _f(
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ls",
    "ps",
    "ssh",
    "scp",
    "sftp",
    "mount",
    "unzip",
    "tar",
    "cut",
    "pgrep",
    "pkill",
    "jq",
    "kubectl",
    "oc",
    "helm",
    "docker",
    "podman",
    "nc",
    "ncat",
    "netcat",
    "sort",
    "less",
    "git",
    "xargs",
    "find",
    "bash",
    "sh",
    "zsh",
    "set",
    "lsof",
    "top",
    "htop",
    "pip",
    "pip3",
    "df",
    "du",
    "sed",
    "awk",
    "date",
    "file",
    "read",
    "mkdir",
    "gcloud",
    "az",
    "aws",
    "wc",
    "head",
    "tail",
    "cat",
    "uniq",
    "id",
    "stat",
    "ip",
    "pidof",
    "gzip",
    "zip",
    "crontab",
    "column",
    "node",
    "python",
    "python3",
    "ruby",
    "perl",
)

# Programs whose path operands are only named: they read or change metadata, never content (the
# rules of the privilege and file tables judge what they do to modes and owners).
NAME_ONLY: Final = _f(
    "ls",
    "stat",
    "test",
    "[",
    "[[",
    "file",
    "du",
    "df",
    "realpath",
    "readlink",
    "basename",
    "dirname",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "sum",
    "wc",
    "getfacl",
    "lsattr",
    "namei",
    "cd",
    "pushd",
    "popd",
    "which",
    "type",
    "command",
    "whereis",
    "find",
    "fd",
    "locate",
    "tree",
    "exa",
    "eza",
    "export",
    "echo",
    "printf",
    "alias",
    "unset",
    "local",
    "declare",
    "history",
    "help",
    "man",
    "info",
    "whatis",
    "apropos",
    "hash",
    "trap",
    "wait",
    "kill",
    "sleep",
    "true",
    "false",
    ":",
    # sourcing runs a file (the reader reads shell scripts it sources); it prints nothing
    "source",
    ".",
)

# Options whose value hands a credential to the program that authenticates with it: that is the
# credential's purpose, not reading it out (``ssh -i ~/.ssh/id_ed25519 host``).
CREDENTIAL_OPTIONS: Final = {
    **{
        h: _f("-i", "-F", "-o", "-S")
        for h in (
            "ssh",
            "scp",
            "sftp",
            "autossh",
            "mosh",
            "sshfs",
            "ssh-copy-id",
            "slogin",
            "rsync",
        )
    },
    **{
        h: _f("--kubeconfig")
        for h in ("kubectl", "helm", "k9s", "kubectx", "kubens", "oc", "kustomize", "minikube")
    },
    "docker": _f("--config", "--tlskey", "--tlscert"),
    "podman": _f("--authfile"),
    "curl": _f("--netrc-file", "--key", "-E", "--cert", "--cacert", "--proxy-key"),
    "wget": _f("--private-key", "--certificate", "--ca-certificate"),
    "ansible": _f("--private-key", "--key-file", "--vault-password-file"),
    "ansible-playbook": _f("--private-key", "--key-file", "--vault-password-file"),
    "age": _f("-i", "--identity"),
    "rage": _f("-i", "--identity"),
    "git": _f("-c"),
    "openssl": _f("-key", "-cert", "-CAfile"),
    "rclone": _f("--config"),
    "gcloud": _f("--key-file", "--credential-file-override"),
    "gh": _f("--with-token"),
    "terraform": _f("-var-file"),
    "psql": _f("--set"),
}
# Programs whose every operand is a credential put to use (loading a key into the agent).
CREDENTIAL_USERS: Final = _f(
    "ssh-add", "ssh-keygen", "gpg", "gpg2", "gpg-agent", "pass", "keychain", "ssh-agent"
)

USES: Final[tuple[PathUse, ...]] = (*uses_files.ROWS, *uses_tools.ROWS)

_BY_HEAD: Final[dict[str, PathUse]] = {h: u for u in USES for h in u.heads}


# Options that take a value, where one program of a row differs from the others (``head -n 5``
# takes a value, ``cat -n`` does not): these replace the row's own ``values`` for that program.
# A program with a grammar row (:mod:`gatesh.vocab.grammar`: cp, install, rsync, curl, git, …) is
# read through it instead, and has no ``values`` here.
HEAD_VALUES: Final[dict[str, frozenset[str]]] = {
    "head": _f("-n", "-c", "--lines", "--bytes"),
    "tail": _f("-n", "-c", "--lines", "--bytes", "-s", "--pid"),
    "cut": _f("-d", "-f", "-c", "-b", "--delimiter", "--fields", "--output-delimiter"),
    "fold": _f("-w", "--width"),
    "fmt": _f("-w", "--width", "-p", "-g"),
    "pr": _f("-w", "-l", "-h", "-o", "-s"),
    "column": _f("-s", "-c", "-o", "-t", "-N", "-R", "-H", "-W"),
    "nl": _f("-s", "-w", "-b", "-v", "-i", "-n"),
    "paste": _f("-d"),
    "join": _f("-t", "-1", "-2", "-j", "-o", "-e"),
    "od": _f("-t", "-A", "-j", "-N", "-w"),
    "hexdump": _f("-n", "-s", "-e", "-f"),
    "strings": _f("-n", "-t", "-e"),
    "iconv": _f("-f", "-t"),
    "diff": _f("-x", "--exclude", "-X", "--label", "-L", "-I", "-U", "-C"),
    "xmllint": _f("--xpath", "--schema"),
    "base64": _f("-w", "--wrap"),
    "base32": _f("-w", "--wrap"),
    "expand": _f("-t"),
    "unexpand": _f("-t"),
    "look": _f("-t"),
    "numfmt": _f("--to", "--from", "--field", "-d"),
    "logrotate": _f("-s", "--state", "-l", "--log"),
}


def use_of(head: str) -> PathUse | None:
    """The :class:`PathUse` of ``head`` (None: a program the table does not know)."""
    return _BY_HEAD.get(head)


def generic_output(head: str) -> frozenset[str]:
    """The output options assumed for a program the table does not know."""
    return frozenset() if head in _NO_OUTPUT_O else GENERIC_OUTPUT_OPTIONS

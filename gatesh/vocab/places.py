"""Protected places: one table of the places an agent's commands must not change (or read).

Each row (:class:`Place`) is one kind of place with an id, the reason a person reads, the access
that is protected (:class:`Access`), which layer refuses it at decision time (:class:`Guard`), where
it is for a given user (:class:`Spot`: a folder of the user, of gatesh or of the install record,
and a path under it), and, for rows the path-class table shares, a pattern that recognises such a
path in any home (``{H}``) or any folder.

Three readers, one table, so they cannot disagree:

- self-protection (S3.4) matches the paths a command touches against :func:`resolve`'s answer for
  the rows guarded by :attr:`Guard.SELF_PROTECTION` (gatesh's own files and installation, the
  harness settings, transcripts and snapshots);
- the path classes of the builtin rater (S4.1, ``gatesh.vocab.paths.classes.CLASSES``) take their
  credential and persistence rows from the rows guarded by :attr:`Guard.RATER`;
- the kernel boundary (S16) protects every resolved place with its access.

The API the boundary reads, stable: :func:`resolve` ``(home, env, install, *, gate=None,
tree=None) -> tuple[ResolvedPlace, ...]``, each with an absolute ``path``, its ``place`` (``id``,
``kind``, ``access``, ``guard``), and ``folder`` (the place is the folder and everything under it)
with ``names`` (a glob the folder's entries must match to be the place; "" for all of them).
"""

from __future__ import annotations

import enum
import functools
import os
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from gatesh._paths import GatePaths, Installation, paths_for
from gatesh._types import PathClass

__all__ = [
    "PLACES",
    "Access",
    "Base",
    "Family",
    "Guard",
    "Kind",
    "Meaning",
    "Place",
    "ResolvedPlace",
    "Spot",
    "gate_roots",
    "place",
    "resolve",
    "spellings",
]


class Meaning(enum.StrEnum):
    """What touching a path of some class does; the rater maps each to an outcome in one place."""

    NOTHING = "nothing harmful"
    CREDENTIAL_ACCESS = "credential access"  # attack (S3.2): secrets read for their own sake
    SECRET_EXPOSURE = "secret exposure"  # destructive: a project's secrets shown to the session
    CREDENTIAL_CHANGE = "credential change"  # destructive: a credential lost or replaced
    PERSISTENCE = "persistence"  # attack: code that runs again at login, boot or on a schedule
    PRIVILEGE = "privilege change"  # attack: who may become root or log in
    SYSTEM_CHANGE = "system change"  # destructive: the machine itself, outside the task
    TAMPERING = "tampering"  # attack, decided by self-protection (S3.4) before any rating
    WORK = "work"  # decided from the working tree's git state (S3.2)


class Family(enum.StrEnum):
    """The four families of protected places (S16: the boundary's write and read rules)."""

    GATE = "gatesh's own files"
    HARNESS = "agent harness files"
    PERSISTENCE = "persistence place"
    CREDENTIALS = "credential store"


class Kind(enum.StrEnum):
    """What a protected place is. Closed: every row of :data:`PLACES` has one."""

    GATE_CONFIG = "gatesh's config folder"
    GATE_STATE = "gatesh's state folder"
    AUDIT_LOG = "gatesh's audit log"
    GATE_RUNTIME = "gatesh's socket folder"
    GATE_DATA = "gatesh's data folder"
    SYSTEM_TIER = "gatesh's system config folder"
    LAUNCHER = "gatesh's launcher"
    VENV = "gatesh's venv"
    SHIMS = "gatesh's shims"
    MAN_PAGE = "gatesh's man page"
    INSTALL_RECORD = "gatesh's install record"
    PACKAGE = "the gatesh package that runs"
    GATE_GIT_HOOKS = "the git hooks gatesh installed"
    HARNESS_SETTINGS = "a harness's settings or hooks file"
    TRANSCRIPT = "a harness's session transcripts"
    SNAPSHOT = "a harness's shell snapshots"
    HARNESS_HOME = "a harness's settings folder"
    HARNESS_CONFIG = "agent harness settings"
    CREDENTIALS = "credential store"
    SHELL_STARTUP = "shell startup file"
    SSH_LOGIN = "ssh login and client settings"
    SCHEDULED = "scheduled jobs"
    SERVICES = "services and autostart"
    GIT = "git hooks and settings"
    LANGUAGE_STARTUP = "language startup hook"
    TOOL_SETTINGS = "tool settings that run commands"
    PATH_SHADOW = "a program earlier on PATH under a common program's name"

    @property
    def family(self) -> Family:
        return _FAMILY[self]


_FAMILY: Final = {
    **{
        k: Family.GATE
        for k in (
            Kind.GATE_CONFIG,
            Kind.GATE_STATE,
            Kind.AUDIT_LOG,
            Kind.GATE_RUNTIME,
            Kind.GATE_DATA,
            Kind.SYSTEM_TIER,
            Kind.LAUNCHER,
            Kind.VENV,
            Kind.SHIMS,
            Kind.MAN_PAGE,
            Kind.INSTALL_RECORD,
            Kind.PACKAGE,
            Kind.GATE_GIT_HOOKS,
        )
    },
    **{
        k: Family.HARNESS
        for k in (Kind.HARNESS_SETTINGS, Kind.TRANSCRIPT, Kind.SNAPSHOT, Kind.HARNESS_HOME)
    },
    Kind.CREDENTIALS: Family.CREDENTIALS,
    **{
        k: Family.PERSISTENCE
        for k in (
            Kind.HARNESS_CONFIG,
            Kind.SHELL_STARTUP,
            Kind.SSH_LOGIN,
            Kind.SCHEDULED,
            Kind.SERVICES,
            Kind.GIT,
            Kind.LANGUAGE_STARTUP,
            Kind.TOOL_SETTINGS,
            Kind.PATH_SHADOW,
        )
    },
}


class Access(enum.Flag):
    """What is protected: reading a place, writing it (creating, changing content or mode), and
    removing it (deleting, or moving it away)."""

    READ = enum.auto()
    WRITE = enum.auto()
    REMOVE = enum.auto()


#: Writing and removing: every place's protection includes these, except where a row says less.
CHANGE: Final = Access.WRITE | Access.REMOVE
#: Everything: the credential stores (S16: read too).
ALL: Final = Access.READ | Access.WRITE | Access.REMOVE


class Guard(enum.StrEnum):
    """Which layer refuses touching a place when a command is decided (the boundary, S16, keeps
    every place whatever its guard)."""

    SELF_PROTECTION = "self-protection"  # S3.4: an attack at every rung
    RATER = "rater"  # the builtin rater's path classes (S4.1): credential access, persistence …
    BOUNDARY = "boundary"  # only the kernel boundary: changing it is ordinary for a decision


class Base(enum.StrEnum):
    """The folder a :class:`Spot` is under, and how :func:`resolve` finds it."""

    ROOT = "/"  # the path is absolute
    HOME = "HOME"
    XDG_CONFIG = "XDG_CONFIG_HOME"  # default ~/.config
    XDG_DATA = "XDG_DATA_HOME"  # default ~/.local/share
    GATE_CONFIG = "gatesh config folder"
    GATE_STATE = "gatesh state folder"
    GATE_DATA = "gatesh data folder"
    GATE_RUNTIME = "gatesh runtime folder"
    GATE_SYSTEM = "gatesh system config folder"
    CLAUDE = "CLAUDE_CONFIG_DIR"  # ~/.claude, and $CLAUDE_CONFIG_DIR when set
    CODEX = "CODEX_HOME"  # ~/.codex, and $CODEX_HOME when set
    GEMINI = "GEMINI"  # ~/.gemini
    TREE = "working tree"  # only when resolve() is given one
    PACKAGE = "gatesh package"  # the installed copy of gatesh that runs ("" for a source tree)
    RECORD_LAUNCHERS = "install record: launchers"
    RECORD_VENV = "install record: venv"
    RECORD_SHIMS = "install record: shims"
    RECORD_MAN = "install record: man pages"
    RECORD_HARNESS = "install record: harness files"
    RECORD_GIT_HOOKS = "install record: git hooks"


@dataclass(frozen=True)
class Spot:
    """One path of a place: ``rel`` under every folder ``base`` resolves to ("" is the folder
    itself). ``folder``: the place is that folder and everything in it; ``names``: only the
    entries of the folder whose name matches this glob are (the folder itself is not)."""

    base: Base
    rel: str = ""
    folder: bool = False
    names: str = ""


def _home(*rels: str, folder: bool = False) -> tuple[Spot, ...]:
    """``rels`` under the home folder; those under ``.config`` and ``.local/share`` under the
    XDG folders that stand for them (``$XDG_CONFIG_HOME``, ``$XDG_DATA_HOME``) instead."""
    return tuple(_in_home(r, folder) for r in rels)


def _in_home(rel: str, folder: bool) -> Spot:
    for prefix, base in ((".config/", Base.XDG_CONFIG), (".local/share/", Base.XDG_DATA)):
        if rel.startswith(prefix):
            return Spot(base, rel[len(prefix) :], folder)
    return Spot(Base.HOME, rel, folder)


def _root(*paths: str, folder: bool = False) -> tuple[Spot, ...]:
    return tuple(Spot(Base.ROOT, p, folder) for p in paths)


def _under(base: Base, *rels: str, folder: bool = False) -> tuple[Spot, ...]:
    """``rels`` under ``base`` (the folder itself when none is given)."""
    return tuple(Spot(base, r, folder) for r in rels or ("",))


# Any user's home in a folded path (a path with the user's own home written ``~``): ours or
# another user's, so /home/bob/.ssh/id_rsa is a credential store too.
HOME_PATTERN: Final = r"(?:~|/root|/var/root|/home/[^/]+|/Users/[^/]+)"


@dataclass(frozen=True)
class Place:
    """One kind of protected place.

    ``pattern`` (``{H}`` is any home) recognises the place in a folded path, wherever it lies: the
    path-class table uses the rows whose ``cls`` is set, and self-protection the rest (a project's
    own ``.claude/settings.json``, another installation's files). ``name`` is the path-class row's
    name (``PathEffect.kind``); ``read``/``write`` what reading and writing such a path means to
    the rater. ``recreated``: gatesh makes the place again on demand (the socket folder), so
    removing a folder holding it is not removing it.

    Invariant: ``reason`` is one sentence a person can act on, lower-case, with no final stop;
    every spot this row resolves to in the default layout is matched by ``pattern`` when set.
    """

    id: str
    kind: Kind
    reason: str
    guard: Guard
    access: Access
    at: tuple[Spot, ...]
    pattern: str = ""
    cls: PathClass | None = None
    name: str = ""
    read: Meaning = Meaning.NOTHING
    write: Meaning = Meaning.NOTHING
    recreated: bool = False

    @property
    def compiled(self) -> re.Pattern[str] | None:
        """``pattern`` compiled, with ``{H}`` as any home; None when the row has none."""
        return _compiled(self.pattern) if self.pattern else None


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    found = _PATTERNS.get(pattern)
    if found is None:
        found = _PATTERNS[pattern] = re.compile(pattern.replace("{H}", HOME_PATTERN))
    return found


_GATE, _SELF, _RATER = Family.GATE, Guard.SELF_PROTECTION, Guard.RATER
# Programs a person or an agent runs by name all day: one of these written into a folder that
# comes early on PATH runs instead of the real one (~/.local/bin/git, ~/bin/sudo).
_SHADOWED: Final = (
    "git",
    "ssh",
    "scp",
    "sudo",
    "su",
    "python",
    "python3",
    "pip",
    "pip3",
    "node",
    "npm",
    "npx",
    "bash",
    "sh",
    "zsh",
    "ls",
    "cat",
    "cd",
    "curl",
    "wget",
    "env",
    "make",
    "gpg",
    "docker",
    "kubectl",
    "gh",
    "claude",
    "codex",
    "gemini",
)
_C, _P = PathClass.CREDENTIALS, PathClass.PERSISTENCE
_N, _CA, _CC, _PE, _PR = (
    Meaning.NOTHING,
    Meaning.CREDENTIAL_ACCESS,
    Meaning.CREDENTIAL_CHANGE,
    Meaning.PERSISTENCE,
    Meaning.PRIVILEGE,
)
_TAMPERING = "tampering with the gate"

# The table. Order matters twice: self-protection takes the first row for a path several rows
# resolve to (gatesh's folders before the installation's parts in them), and the path classes
# take the first pattern that matches (a credential before the folder holding it).
PLACES: Final[tuple[Place, ...]] = (
    # --- gatesh's own files (S3.4) ------------------------------------------------------------
    Place(
        "gate.config",
        Kind.GATE_CONFIG,
        "gatesh's config folder, which holds the rung and the allow and deny lists",
        _SELF,
        CHANGE,
        _under(Base.GATE_CONFIG, folder=True),
        r"(?:^|/)\.config/gatesh(?:/|$)",
    ),
    Place(
        "gate.state",
        Kind.GATE_STATE,
        "gatesh's state folder: the audit log, the pending approvals and the sessions",
        _SELF,
        CHANGE,
        _under(Base.GATE_STATE, folder=True),
        r"(?:^|/)\.local/state/gatesh(?:/|$)",
    ),
    Place(
        "gate.audit-log",
        Kind.AUDIT_LOG,
        "gatesh's audit log, the hash-chained record of every decision",
        _SELF,
        CHANGE,
        (Spot(Base.GATE_STATE, "", True, "audit.jsonl*"),),
        r"(?:^|/)\.local/state/gatesh/audit\.jsonl[^/]*$",
    ),
    Place(
        "gate.runtime",
        Kind.GATE_RUNTIME,
        "gatesh's socket folder: the daemon that decides every command listens there",
        _SELF,
        CHANGE,
        _under(Base.GATE_RUNTIME, folder=True),
        r"(?:^|/)gatesh-\d+(?:/|$)|^/run/user/\d+/gatesh(?:/|$)",
        recreated=True,
    ),
    Place(
        "gate.data",
        Kind.GATE_DATA,
        "gatesh's data folder, which holds its installation",
        _SELF,
        CHANGE,
        _under(Base.GATE_DATA, folder=True),
        r"(?:^|/)\.local/share/gatesh(?:/|$)",
    ),
    Place(
        "gate.system-config",
        Kind.SYSTEM_TIER,
        "the system tier of gatesh's config, which only tightens the user's",
        _SELF,
        CHANGE,
        _under(Base.GATE_SYSTEM, folder=True),
        r"^/etc/gatesh(?:/|$)",
    ),
    Place(
        "gate.launcher",
        Kind.LAUNCHER,
        "gatesh's launcher, which every gated shell and hook starts",
        _SELF,
        CHANGE,
        (*_home(".local/bin/gatesh"), Spot(Base.RECORD_LAUNCHERS)),
        r"(?:^|/)\.local/bin/gatesh$",
    ),
    Place(
        "gate.venv",
        Kind.VENV,
        "gatesh's venv: its code, and the Python it runs on",
        _SELF,
        CHANGE,
        (Spot(Base.GATE_DATA, "venv", True), Spot(Base.RECORD_VENV, "", True)),
        r"(?:^|/)\.local/share/gatesh/venv(?:/|$)",
    ),
    Place(
        "gate.shims",
        Kind.SHIMS,
        "gatesh's shims, the gated bash, zsh and sh harnesses start",
        _SELF,
        CHANGE,
        (Spot(Base.GATE_DATA, "shims", True), Spot(Base.RECORD_SHIMS, "", True)),
        r"(?:^|/)\.local/share/gatesh/shims(?:/|$)",
    ),
    Place(
        "gate.man-page",
        Kind.MAN_PAGE,
        "gatesh's man page, the reference a person reads",
        _SELF,
        CHANGE,
        (
            Spot(Base.HOME, ".local/share/man/man1/gatesh.1"),  # where install.sh puts it
            Spot(Base.RECORD_MAN),
        ),
        r"(?:^|/)share/man/man1/gatesh\.1(?:\.gz)?$",
    ),
    Place(
        "gate.install-record",
        Kind.INSTALL_RECORD,
        "gatesh's install record, which says where its installation is",
        _SELF,
        CHANGE,
        _under(Base.GATE_DATA, "install.json"),
        r"(?:^|/)\.local/share/gatesh/install\.json$",
    ),
    Place(
        "gate.package",
        Kind.PACKAGE,
        "the installed gatesh package that is running, the gate's own code",
        _SELF,
        CHANGE,
        _under(Base.PACKAGE, folder=True),
    ),
    Place(
        "gate.git-hooks",
        Kind.GATE_GIT_HOOKS,
        "the git hooks gatesh installed, which gate pushes, rebases and branch deletions",
        _SELF,
        CHANGE,
        (Spot(Base.RECORD_GIT_HOOKS, "", True), Spot(Base.GATE_DATA, "git-hooks", True)),
        r"(?:^|/)\.local/share/gatesh/git-hooks(?:/|$)",
    ),
    # --- the harnesses' own files --------------------------------------------------------------
    Place(
        "harness.settings",
        Kind.HARNESS_SETTINGS,
        "a harness's settings or hooks file, where its gatesh hooks are or can be switched off",
        _SELF,
        Access.WRITE | Access.REMOVE,
        (
            *_under(Base.CLAUDE, "settings.json", "settings.local.json"),
            *_under(Base.CODEX, "config.toml", "hooks.json"),
            *_under(Base.GEMINI, "settings.json"),
            Spot(Base.RECORD_HARNESS),
            *_root(
                "/etc/claude-code/managed-settings.json",
                "/etc/gemini-cli/settings.json",
                "/etc/codex/config.toml",
                "/etc/codex/managed_config.toml",
            ),
        ),
    ),
    Place(
        "harness.project-settings",
        Kind.HARNESS_SETTINGS,
        "a project's harness settings, which can switch the harness's hooks off in that project",
        _SELF,
        Access.WRITE,  # deleting a project's settings cannot take the user's hooks away
        (
            *_under(Base.TREE, ".claude/settings.json", ".claude/settings.local.json"),
            *_under(Base.TREE, ".gemini/settings.json", ".codex/config.toml", ".codex/hooks.json"),
        ),
        r"(?:^|/)\.claude/settings(?:\.local)?\.json$|(?:^|/)\.gemini/settings\.json$"
        r"|(?:^|/)\.codex/(?:config\.toml|hooks\.json)$",
    ),
    Place(
        "harness.transcripts",
        Kind.TRANSCRIPT,
        "a harness's session transcripts, the record of what the user said",
        _SELF,
        CHANGE,
        (
            Spot(Base.CLAUDE, "projects", True),
            Spot(Base.CODEX, "sessions", True),
            Spot(Base.GEMINI, "tmp", True),
        ),
        r"(?:^|/)\.claude/projects(?:/|$)|(?:^|/)\.codex/sessions(?:/|$)|(?:^|/)\.gemini/tmp(?:/|$)",
    ),
    Place(
        "harness.snapshots",
        Kind.SNAPSHOT,
        "a harness's shell snapshots, sourced before every command and not read by the gate",
        _SELF,
        CHANGE,
        (Spot(Base.CLAUDE, "shell-snapshots", True), Spot(Base.CODEX, "shell_snapshots", True)),
    ),
    Place(
        "harness.home",
        Kind.HARNESS_HOME,
        "a harness's settings folder: its agents, commands, plugins and instructions",
        Guard.BOUNDARY,
        CHANGE,
        (Spot(Base.CLAUDE, "", True), Spot(Base.CODEX, "", True), Spot(Base.GEMINI, "", True)),
    ),
    # --- credential stores (read protected too) -------------------------------------------------
    Place(
        "cred.gatesh",
        Kind.CREDENTIALS,
        "gatesh's own secrets: the model key the person keeps for the daemon, and the credential "
        "of the person's channel, which lets its holder approve as the person",
        _RATER,  # reading them; changing them is self-protection's (gate.config, gate.runtime)
        ALL,
        (Spot(Base.GATE_CONFIG, "daemon.env"), Spot(Base.GATE_RUNTIME, "person.token")),
        r"^{H}/\.config/gatesh/daemon\.env$|^/(?:run/user/\d+/gatesh|tmp/gatesh-\d+)/person\.token$",
        _C,
        "gatesh's secrets",
        _CA,
        _CC,
    ),
    Place(
        "cred.private-keys",
        Kind.CREDENTIALS,
        "a private key or password database: whoever reads it can sign in as its owner",
        _RATER,
        ALL,
        (
            Spot(Base.HOME, ".ssh", True, "id_*"),
            Spot(Base.HOME, ".ssh", True, "identity"),
            Spot(Base.ROOT, "/etc/ssh", True, "ssh_host_*_key"),
            *_root("/etc/ssl/private", folder=True),
        ),
        r"^{H}/\.ssh/?$|^{H}/\.ssh/(?!.*\.pub$)(?:id_[^/]+|identity|[^/]*_key)$|^/etc/ssh/ssh_host_[^/]+_key$"
        r"|^/etc/ssl/private(?:/|$)|^{H}/(?:[^/]+/)*[^/]+\.kdbx$",
        _C,
        "private keys",
        _CA,
        _CC,
    ),
    Place(
        "cred.password-hashes",
        Kind.CREDENTIALS,
        "the machine's password hashes, which only a password cracker needs",
        _RATER,
        ALL,
        _root("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"),
        r"^(?:/private)?/etc/(?:g?shadow-?|master\.passwd|security/opasswd|spwd\.db)$",
        _C,
        "password hashes",
        _CA,
        _PR,
    ),
    Place(
        "cred.stores",
        Kind.CREDENTIALS,
        "a store of passwords, tokens or cloud keys that lets its holder act as the user",
        _RATER,
        ALL,
        (
            *_home(
                ".aws",
                ".config/gcloud",
                ".azure",
                ".oci/sessions",
                ".config/op",
                ".password-store",
                ".gnupg/private-keys-v1.d",
                ".local/share/keyrings",
                "Library/Keychains",
                ".electrum",
                folder=True,
            ),
            *_home(
                ".kube/config",
                ".docker/config.json",
                ".config/gh/hosts.yml",
                ".config/hub",
                ".git-credentials",
                ".config/git/credentials",
                ".pgpass",
                ".my.cnf",
                ".vault-token",
                ".pypirc",
                ".npmrc",
                ".gem/credentials",
                ".cargo/credentials",
                ".cargo/credentials.toml",
                ".terraform.d/credentials.tfrc.json",
                ".config/solana/id.json",
                ".gnupg/secring.gpg",
                ".netrc",
            ),
            *_root("/run/secrets", "/var/run/secrets", folder=True),
        ),
        r"^{H}/(?:\.aws(?:/(?!config$)[^/]+(?:/.*)?)?|\.config/gcloud(?:/(?:credentials|access_tokens|application_default"
        r"|legacy_credentials)[^/]*(?:/.*)?)?|\.azure(?:/(?:accessTokens\.json|msal_token_cache[^/]*"
        r"|service_principal_entries\.json))?|\.oci/(?:sessions(?:/.*)?|[^/]*\.pem)"
        r"|\.kube/config[^/]*|\.docker/config\.json|\.config/gh/hosts\.yml|\.config/hub|\.git-credentials"
        r"|\.config/git/credentials|\.pgpass|\.my\.cnf|\.vault-token|\.pypirc|\.npmrc"
        r"|\.gem/credentials|\.cargo/credentials(?:\.toml)?|\.terraform\.d/credentials\.tfrc\.json"
        r"|\.config/op(?:/.*)?|\.config/solana/id\.json|\.password-store(?:/.*)?"
        r"|\.gnupg(?:/(?:private-keys-v1\.d(?:/.*)?|secring\.gpg))?|\.local/share/keyrings(?:/.*)?"
        r"|Library/Keychains(?:/.*)?|\.electrum(?:/.*)?|\.bitcoin/wallet.*)$"
        r"|(?:^|/)(?:\.netrc|_netrc|\.git-credentials|wallet\.dat)$"
        r"|^/Library/Keychains(?:/|$)|^/(?:var/)?run/secrets(?:/|$)|/serviceaccount/token$"
        r"|/(?:Login Data|Cookies|cookies\.sqlite|logins\.json|key[34]\.db)$"
        r"|^/proc/(?:\d+|self|\$\w+)/(?:environ|mem)$",
        _C,
        "cloud and tool credentials",
        _CA,
        _CC,
    ),
    Place(
        "cred.history",
        Kind.CREDENTIALS,
        "typed history, which holds passwords and tokens people typed on a command line",
        _RATER,
        ALL,
        _home(
            ".bash_history",
            ".zsh_history",
            ".sh_history",
            ".ksh_history",
            ".mysql_history",
            ".psql_history",
            ".python_history",
            ".node_repl_history",
            ".sqlite_history",
            ".rediscli_history",
            ".history",
        ),
        r"(?:^|/)\.(?:bash|zsh|sh|ksh|mysql|psql|python|node_repl|sqlite|rediscli)_history$|^{H}/\.history$",
        _C,
        "shell and tool history",
        _CA,
        _N,
    ),
    # --- persistence places (writes protected) -------------------------------------------------
    Place(
        "persist.shell-startup",
        Kind.SHELL_STARTUP,
        "a shell startup file: what is written there runs in every new shell",
        _RATER,
        CHANGE,
        (
            *_home(
                ".bashrc",
                ".bash_profile",
                ".bash_login",
                ".bash_logout",
                ".profile",
                ".zshrc",
                ".zprofile",
                ".zshenv",
                ".zlogin",
                ".zlogout",
                ".shrc",
                ".kshrc",
                ".cshrc",
                ".tcshrc",
                ".mkshrc",
                ".login",
                ".xprofile",
                ".xinitrc",
                ".xsessionrc",
                ".xsession",
                ".config/fish/config.fish",
            ),
            *_home(".config/fish/conf.d", ".oh-my-zsh/custom", folder=True),
            *_root(
                "/etc/profile",
                "/etc/bash.bashrc",
                "/etc/bashrc",
                "/etc/zshrc",
                "/etc/zprofile",
                "/etc/zshenv",
                "/etc/zlogin",
                "/etc/environment",
                "/etc/csh.cshrc",
                "/etc/csh.login",
                "/etc/fish/config.fish",
            ),
            *_root("/etc/profile.d", "/etc/zsh", folder=True),
        ),
        r"^{H}/\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile|zshenv|zlogin|zlogout"
        r"|shrc|kshrc|cshrc|tcshrc|mkshrc|login|xprofile|xinitrc|xsessionrc|xsession)$"
        r"|^{H}/\.config/fish/(?:config\.fish|conf\.d(?:/.*)?)$|^{H}/\.oh-my-zsh/custom(?:/.*)?$"
        r"|^/etc/(?:profile|profile\.d(?:/.*)?|bash\.bashrc|bashrc|zshrc|zsh(?:/.*)?|zprofile|zshenv|zlogin"
        r"|environment|csh\.cshrc|csh\.login|fish/config\.fish)$",
        _P,
        "shell startup files",
        _N,
        _PE,
    ),
    Place(
        "persist.ssh",
        Kind.SSH_LOGIN,
        "ssh's login keys or settings: a key written there is a way back in, a setting runs commands",
        _RATER,
        CHANGE,
        (
            *_home(
                ".ssh/authorized_keys",
                ".ssh/authorized_keys2",
                ".ssh/rc",
                ".ssh/environment",
                ".ssh/config",
            ),
            *_root("/etc/ssh/sshd_config", "/etc/ssh/ssh_config", "/etc/ssh/sshrc"),
            *_root("/etc/ssh/sshd_config.d", "/etc/ssh/ssh_config.d", folder=True),
        ),
        r"^{H}/\.ssh/(?:authorized_keys2?|rc|environment|config)$"
        r"|^/etc/ssh/(?:sshd_config(?:\.d(?:/.*)?)?|ssh_config(?:\.d(?:/.*)?)?|sshrc)$",
        _P,
        "ssh login and client settings",
        _N,
        _PE,
    ),
    Place(
        "persist.scheduled",
        Kind.SCHEDULED,
        "a scheduled job: what is written there runs again on a timer",
        _RATER,
        CHANGE,
        (
            *_root(
                "/etc/cron.d",
                "/etc/cron.daily",
                "/etc/cron.hourly",
                "/etc/cron.weekly",
                "/etc/cron.monthly",
                "/var/spool/cron",
                "/var/spool/at",
                "/var/spool/anacron",
                "/etc/periodic",
                folder=True,
            ),
            *_root("/etc/crontab", "/etc/anacrontab", "/etc/cron.allow", "/etc/at.allow"),
        ),
        r"^/etc/(?:cron\.(?:d|daily|hourly|weekly|monthly)(?:/.*)?|crontab|anacrontab|cron\.allow|at\.allow)$"
        r"|^/var/spool/(?:cron|at|anacron)(?:/|$)|^/var/at(?:/|$)|^/usr/lib/cron(?:/|$)|^/etc/periodic(?:/|$)",
        _P,
        "scheduled jobs",
        _N,
        _PE,
    ),
    Place(
        "persist.services",
        Kind.SERVICES,
        "a service, boot script or preload list: what is written there starts with the machine or session",
        _RATER,
        CHANGE,
        (
            *_home(
                ".config/systemd/user",
                ".local/share/systemd/user",
                ".config/autostart",
                "Library/LaunchAgents",
                folder=True,
            ),
            *_root(
                "/etc/systemd/system",
                "/etc/systemd/user",
                "/etc/init.d",
                "/etc/xdg/autostart",
                "/etc/udev/rules.d",
                "/etc/update-motd.d",
                "/Library/LaunchAgents",
                "/Library/LaunchDaemons",
                folder=True,
            ),
            *_root("/etc/rc.local", "/etc/ld.so.preload", "/etc/modules"),
        ),
        r"^/(?:etc|lib|usr/lib|usr/local/lib|run)/systemd/(?:system|user)[\w.-]*(?:/|$)"
        r"|^{H}/\.config/systemd/user(?:/|$)|^{H}/\.local/share/systemd/user(?:/|$)"
        r"|^/etc/(?:rc\.local|rc\.common|rc\.d(?:/.*)?|rc\d\.d(?:/.*)?|init\.d(?:/.*)?|init(?:/.*)?|inittab)$"
        r"|^/etc/xdg/autostart(?:/|$)|^{H}/\.config/autostart(?:/|$)|^/etc/udev/rules\.d(?:/|$)"
        r"|^/(?:etc|lib|usr/lib)/modules-load\.d(?:/|$)|^/etc/modules$|^/etc/update-motd\.d(?:/|$)"
        r"|^/etc/network/if-[\w-]+\.d(?:/|$)|^/etc/NetworkManager/dispatcher\.d(?:/|$)|^/etc/emond\.d(?:/|$)"
        r"|^/private/var/db/emondclients(?:/|$)|^/etc/ld\.so\.preload$"
        r"|^(?:{H})?/Library/(?:LaunchAgents|LaunchDaemons|StartupItems)(?:/|$)|^/System/Library/Launch(?:Agents|Daemons)(?:/|$)",
        _P,
        "services and boot scripts",
        _N,
        _PE,
    ),
    Place(
        "persist.git",
        Kind.GIT,
        "git's hooks or global settings: what is written there runs on later git commands",
        _RATER,
        CHANGE,
        (
            *_home(".git-templates", folder=True),
            *_home(".gitconfig", ".config/git/config"),
            *_root("/usr/share/git-core/templates", folder=True),
            *_root("/etc/gitconfig"),
            Spot(Base.TREE, ".git/hooks", True),
        ),
        r"(?:^|/)\.git/hooks(?:/|$)|^{H}/\.git-templates(?:/|$)|^/usr/share/git-core/templates(?:/|$)"
        r"|^{H}/\.gitconfig$|^{H}/\.config/git/config$|^/etc/gitconfig$",
        _P,
        "git hooks and templates",
        _N,
        _PE,
    ),
    Place(
        "persist.language-startup",
        Kind.LANGUAGE_STARTUP,
        "a file the language runtime loads at every start",
        _RATER,
        CHANGE,
        (Spot(Base.HOME, ".local/lib", True, "python*/site-packages/*.pth"),),
        r"(?:^|/)(?:sitecustomize|usercustomize)\.py$|/(?:site|dist)-packages/[^/]+\.pth$",
        _P,
        "language startup hooks",
        _N,
        _PE,
    ),
    Place(
        "persist.tool-settings",
        Kind.TOOL_SETTINGS,
        "a tool's startup settings, which can run commands or change where packages come from",
        _RATER,
        CHANGE,
        (
            *_home(
                ".vimrc",
                ".exrc",
                ".config/nvim/init.vim",
                ".config/nvim/init.lua",
                ".tmux.conf",
                ".config/tmux/tmux.conf",
                ".config/pip/pip.conf",
                ".pip/pip.conf",
                ".gdbinit",
                ".emacs",
                ".emacs.d/init.el",
                ".curlrc",
                ".wgetrc",
                ".yarnrc",
                ".yarnrc.yml",
                ".condarc",
                ".gemrc",
                ".config/uv/uv.toml",
                ".bundle/config",
                ".config/pypoetry/config.toml",
                ".config/go/env",
                ".config/gh/config.yml",
            ),
            *_home(".local/share/direnv/allow", folder=True),
            *_root("/etc/pip.conf"),
        ),
        r"^{H}/(?:\.vimrc|\.exrc|\.config/nvim/init\.(?:vim|lua)|\.tmux\.conf|\.config/tmux/tmux\.conf"
        r"|\.config/pip/pip\.conf|\.pip/pip\.conf|\.gdbinit|\.emacs|\.emacs\.d/init\.el|\.curlrc|\.wgetrc"
        r"|\.yarnrc(?:\.yml)?|\.condarc|\.gemrc|\.config/uv/uv\.toml|\.bundle/config"
        r"|\.config/pypoetry/config\.toml|\.config/go/env|\.config/gh/config\.yml)$"
        r"|^{H}/\.local/share/direnv/allow(?:/|$)|^/etc/pip\.conf$",
        _P,
        "tool startup settings",
        _N,
        _PE,
    ),
    Place(
        "persist.linger",
        Kind.SERVICES,
        "the list of users whose services keep running after they log out",
        _RATER,
        CHANGE,
        _root("/var/lib/systemd/linger", folder=True),
        r"^/var/lib/systemd/linger(?:/|$)",
        _P,
        "lingering user services",
        _N,
        _PE,
    ),
    Place(
        "persist.path-shadow",
        Kind.PATH_SHADOW,
        "a program in a folder early on PATH under the name of one the user runs, which runs "
        "instead of it from then on",
        _RATER,
        CHANGE,
        tuple(
            Spot(Base.HOME, f"{folder}/{name}")
            for folder in (".local/bin", "bin")
            for name in _SHADOWED
        ),
        r"^{H}/(?:\.local/bin|bin)/(?:" + "|".join(re.escape(n) for n in _SHADOWED) + r")$",
        _P,
        "a program shadowing a common one",
        _N,
        _PE,
    ),
    Place(
        "persist.harness-config",
        Kind.HARNESS_CONFIG,
        "an agent harness's settings, whose hooks and permissions run or allow commands later",
        _RATER,
        CHANGE,
        (
            *_home(".claude.json"),
            Spot(Base.CLAUDE, "hooks", True),
            Spot(Base.CODEX, "hooks", True),
        ),
        r"(?:^|/)\.claude/(?:settings(?:\.local)?\.json|hooks(?:/.*)?)$|^{H}/\.claude\.json$"
        r"|(?:^|/)\.codex/(?:config\.toml|hooks(?:/.*)?)$|(?:^|/)\.gemini/settings\.json$",
        _P,
        "agent harness settings",
        _N,
        _PE,
    ),
)

_BY_ID: Final = {p.id: p for p in PLACES}


def place(place_id: str) -> Place:
    """The row with ``place_id``; KeyError for an id the table does not have."""
    return _BY_ID[place_id]


@dataclass(frozen=True)
class ResolvedPlace:
    """A place resolved for one user: ``path`` is absolute and normalised; ``folder``: the place
    is the folder and everything under it (only its entries matching ``names`` when set)."""

    path: str
    place: Place
    folder: bool = False
    names: str = ""

    @property
    def kind(self) -> Kind:
        return self.place.kind

    @property
    def access(self) -> Access:
        return self.place.access


def package_folder() -> str:
    """The folder of the gatesh package that runs, when it is an installed copy (in a
    site-packages folder); "" for a source tree (its files are the developer's work)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parent = os.path.basename(os.path.dirname(here))
    return here if parent in ("site-packages", "dist-packages") else ""


def _folders(
    base: Base,
    home: str,
    env: Mapping[str, str],
    install: Installation,
    gate: GatePaths,
    tree: str | None,
) -> tuple[str, ...]:
    """Every folder (or, for the install record's lists, every path) ``base`` stands for."""
    if base is Base.ROOT:
        return ("/",)
    if base is Base.HOME:
        return (home,)
    if base in (Base.XDG_CONFIG, Base.XDG_DATA):
        value = env.get(base.value, "")
        fallback = ".config" if base is Base.XDG_CONFIG else ".local/share"
        return (value if os.path.isabs(value) else posixpath.join(home, fallback),)
    if base is Base.GATE_CONFIG:
        return (gate.config_dir,)
    if base is Base.GATE_STATE:
        return (gate.state_dir,)
    if base is Base.GATE_DATA:
        return (gate.data_dir,)
    if base is Base.GATE_RUNTIME:
        return (gate.runtime_dir,)
    if base is Base.GATE_SYSTEM:
        return (os.path.dirname(gate.system_config),)
    if base in (Base.CLAUDE, Base.CODEX, Base.GEMINI):
        default = posixpath.join(home, _HARNESS_FOLDER[base])
        moved = env.get(base.value, "") if base is not Base.GEMINI else ""
        return tuple(dict.fromkeys(f for f in (default, moved) if f))
    if base is Base.TREE:
        return (tree,) if tree else ()
    if base is Base.PACKAGE:
        folder = package_folder()
        return (folder,) if folder else ()
    return _recorded(base, install)


_HARNESS_FOLDER: Final = {Base.CLAUDE: ".claude", Base.CODEX: ".codex", Base.GEMINI: ".gemini"}


def _recorded(base: Base, install: Installation) -> tuple[str, ...]:
    """The paths the install record lists for ``base`` (one of the ``RECORD_*`` bases)."""
    if base is Base.RECORD_LAUNCHERS:
        return install.launchers
    if base is Base.RECORD_VENV:
        return (install.venv,) if install.venv else ()
    if base is Base.RECORD_SHIMS:
        return (install.shims_dir,) if install.shims_dir else ()
    if base is Base.RECORD_MAN:
        return install.man_pages
    if base is Base.RECORD_HARNESS:
        return install.harness_files
    if base is Base.RECORD_GIT_HOOKS:
        return install.git_hooks
    raise ValueError(f"not a base of the install record: {base}")


def resolve(
    home: str,
    env: Mapping[str, str],
    install: Installation,
    *,
    gate: GatePaths | None = None,
    tree: str | None = None,
    places: tuple[Place, ...] = PLACES,
) -> tuple[ResolvedPlace, ...]:
    """Every place of ``places`` as absolute paths for a user with home folder ``home``,
    environment ``env`` (the XDG folders, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``) and the
    installation ``install`` records, in table order.

    gatesh's folders are ``gate``'s when given, else those a gatesh started with ``env`` would
    use; a project's places are resolved only with ``tree`` (the working tree's root). Never
    raises and reads nothing but whether ``$XDG_RUNTIME_DIR`` is a folder; a path is listed once,
    with the first row that resolves to it.
    """
    home = posixpath.normpath(home) if home else "/"
    gate = gate if gate is not None else paths_for(home, env)
    out: list[ResolvedPlace] = []
    seen: set[tuple[str, str]] = set()
    for row in places:
        for spot in row.at:
            for folder in _folders(spot.base, home, env, install, gate, tree):
                path = posixpath.join(folder, spot.rel) if spot.rel else folder
                if path == "~" or path.startswith("~/"):
                    path = home + path[1:]
                path = posixpath.normpath(path)
                if not path.startswith("/") or (path, spot.names) in seen:
                    continue
                seen.add((path, spot.names))
                out.append(ResolvedPlace(path, row, spot.folder, spot.names))
    return tuple(out)


_GATE_ROWS: Final = tuple(p for p in PLACES if p.kind.family is Family.GATE)


@functools.lru_cache(maxsize=32)
def gate_roots(gate: GatePaths, install: Installation) -> tuple[str, ...]:
    """The paths of gatesh's own places (:attr:`Family.GATE`) for ``gate``'s folders and the
    installation ``install`` records: what the path classes call gatesh's own files. Remembered
    per inputs (both are frozen values; a process meets one or two)."""
    resolved = resolve(
        gate.home or os.path.expanduser("~"), {}, install, gate=gate, places=_GATE_ROWS
    )
    return tuple(dict.fromkeys(r.path for r in resolved))


# The variables a base comes from, and the folder under it (``$XDG_STATE_HOME/gatesh``): how a
# command names a place without saying where it is.
_BASE_VARIABLES: Final = {
    Base.XDG_CONFIG: ("XDG_CONFIG_HOME", ""),
    Base.XDG_DATA: ("XDG_DATA_HOME", ""),
    Base.GATE_CONFIG: ("XDG_CONFIG_HOME", "gatesh"),
    Base.GATE_STATE: ("XDG_STATE_HOME", "gatesh"),
    Base.GATE_DATA: ("XDG_DATA_HOME", "gatesh"),
    Base.GATE_RUNTIME: ("XDG_RUNTIME_DIR", "gatesh"),
    Base.CLAUDE: ("CLAUDE_CONFIG_DIR", ""),
    Base.CODEX: ("CODEX_HOME", ""),
}


def spellings(place: Place) -> tuple[str, ...]:
    """Patterns of the ways a command names ``place`` through the variables its folders come
    from (``$XDG_CONFIG_HOME/gatesh/config.toml``, ``${CLAUDE_CONFIG_DIR}/settings.json``):
    a path written so is that place wherever the variable points."""
    out: list[str] = []
    for spot in place.at:
        found = _BASE_VARIABLES.get(spot.base)
        if found is None:
            continue
        var, sub = found
        rel = "/".join(p for p in (sub, spot.rel) if p)
        tail = ("/" + re.escape(rel) if rel else "") + ("(?:/|$)" if spot.folder else "$")
        out.append(r"\$(?:\{" + var + r"\}|" + var + r"\b)" + tail)
    return tuple(dict.fromkeys(out))

"""The rows of the protected-places table (:data:`PLACES`), one kind of place each, with an id,
the reason a person reads, the protected access, the guarding layer and where the place is.

Rows keep their order: the path classes take their credential and persistence rows in it, and
the first row that matches a path decides its class.
"""

from __future__ import annotations

import re
from typing import Final

from gatesh._types import PathClass
from gatesh.vocab.places.kinds import (
    ALL,
    CHANGE,
    Access,
    Base,
    Family,
    Guard,
    Kind,
    Meaning,
    Place,
    Spot,
)


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
        "git's hooks or settings: what is written there runs on later git commands",
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
        r"|^{H}/\.gitconfig$|^{H}/\.config/git/config$|^/etc/gitconfig$"
        r"|(?:^|/)\.git/config(?:\.worktree)?$",
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

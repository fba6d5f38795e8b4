"""The boundary's tables (S16): data, each row with the reason a person reads.

- :data:`CACHES` — folders package managers and build tools write on their own, beside the
  working tree; a command may write them.
- :data:`NETWORK` — programs that need the network for what they are asked to do; a command
  running one keeps its network.
- :data:`CREDENTIAL_USES` — credential stores a program reads to do its job (``git push`` signs
  in with the ssh key); a command that gatesh read whole and that runs one may read them.

A row names programs by head (S2); ``verbs``, when given, narrows it to those first operands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from gatesh._types import PathClass

__all__ = [
    "CACHES",
    "CREDENTIAL_USES",
    "NETWORK",
    "WRITABLE_CLASSES",
    "CacheRow",
    "CredentialUse",
    "NetworkRow",
]

#: The classes of a path the decision judged and allowed that its boundary lets it write (a
#: credential store, a persistence place, gatesh's own files or a folder of the machine: never).
WRITABLE_CLASSES: Final = frozenset(
    {PathClass.WORKTREE, PathClass.TEMP, PathClass.HOME, PathClass.ELSEWHERE}
)


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


@dataclass(frozen=True)
class CacheRow:
    """A cache folder: ``path`` is home-relative (``~/``) or under ``$XDG_CACHE_HOME`` (``$CACHE``).

    Invariant: no row is, or holds, a protected place (:mod:`gatesh.boundary.places`); a test
    checks it. A folder that does not exist gets no rule (the tool that would make it cannot)."""

    path: str
    tools: str
    why: str


CACHES: Final[tuple[CacheRow, ...]] = (
    CacheRow(
        "$CACHE",
        "pip, uv, pre-commit, go, yarn, bazel, deno, puppeteer, …",
        "the XDG cache folder: what is there is downloaded or built again when missing",
    ),
    CacheRow("~/.npm", "npm", "npm's package cache (~/.npm/_cacache) and its logs"),
    CacheRow("~/.cargo/registry", "cargo", "crates downloaded from a registry"),
    CacheRow("~/.cargo/git", "cargo", "crates fetched from git"),
    CacheRow("~/go/pkg/mod", "go", "the Go module cache (GOMODCACHE)"),
    CacheRow("~/.m2/repository", "maven", "Maven's local repository of downloaded artifacts"),
    CacheRow("~/.gradle/caches", "gradle", "Gradle's dependency and build cache"),
    CacheRow("~/.gradle/wrapper", "gradle", "Gradle distributions the wrapper downloads"),
    CacheRow("~/.gradle/daemon", "gradle", "the Gradle daemon's logs and registry"),
    CacheRow("~/.gradle/native", "gradle", "native libraries Gradle unpacks"),
    CacheRow("~/.pnpm-store", "pnpm", "pnpm's content-addressed store"),
    CacheRow("~/.local/share/pnpm/store", "pnpm", "pnpm's content-addressed store (XDG)"),
    CacheRow("~/.bun/install/cache", "bun", "bun's package cache"),
    CacheRow("~/.yarn/berry/cache", "yarn", "Yarn's global cache"),
    CacheRow("~/.nuget/packages", "dotnet", "NuGet's global packages folder"),
    CacheRow("~/.ivy2/cache", "sbt, ivy", "Ivy's resolution cache"),
    CacheRow("~/.sbt/boot", "sbt", "sbt's launcher downloads"),
    CacheRow("~/.cabal/packages", "cabal", "Haskell packages downloaded by cabal"),
    CacheRow("~/.stack/pantry", "stack", "stack's package index and downloads"),
    CacheRow("~/.composer/cache", "composer", "Composer's download cache"),
    CacheRow("~/.gem/specs", "gem", "RubyGems' spec cache"),
    CacheRow("~/.bundle/cache", "bundler", "Bundler's download cache"),
    CacheRow("~/.conda/pkgs", "conda", "conda's package cache"),
    CacheRow("~/.julia/compiled", "julia", "Julia's precompiled packages"),
    CacheRow("~/.ccache", "ccache", "compiler output cache"),
    CacheRow("~/.local/share/virtualenv", "virtualenv", "virtualenv's seed wheels and app data"),
    CacheRow("~/.node-gyp", "node-gyp", "Node.js headers node-gyp downloads to build addons"),
    CacheRow("~/.electron", "electron", "Electron binaries its installer downloads"),
)


@dataclass(frozen=True)
class NetworkRow:
    """Programs that need the network; ``verbs`` (first operands) narrows a row, empty = any."""

    heads: frozenset[str]
    why: str
    verbs: frozenset[str] = frozenset()


NETWORK: Final[tuple[NetworkRow, ...]] = (
    NetworkRow(
        _f(
            "npm",
            "npx",
            "yarn",
            "pnpm",
            "pnpx",
            "bun",
            "bunx",
            "deno",
            "pip",
            "pip3",
            "pipx",
            "uv",
            "uvx",
            "poetry",
            "pipenv",
            "pdm",
            "hatch",
            "conda",
            "mamba",
            "micromamba",
            "cargo",
            "rustup",
            "go",
            "gem",
            "bundle",
            "bundler",
            "composer",
            "mvn",
            "mvnw",
            "gradle",
            "gradlew",
            "sbt",
            "lein",
            "clj",
            "dotnet",
            "nuget",
            "cabal",
            "stack",
            "mix",
            "dart",
            "flutter",
            "pod",
            "swift",
            "apt",
            "apt-get",
            "brew",
            "nix",
            "nix-env",
            "opam",
            "cpan",
            "cpanm",
            "luarocks",
            "vcpkg",
            "conan",
            "bazel",
            "bazelisk",
            "buck2",
            "pants",
            "tox",
            "nox",
            "pre-commit",
            "playwright",
            "prisma",
        ),
        "a package manager or build tool: it downloads what the project depends on",
    ),
    NetworkRow(
        _f("git"),
        "talks to the repository's remote",
        _f(
            "clone",
            "fetch",
            "pull",
            "push",
            "ls-remote",
            "submodule",
            "remote",
            "archive",
            "lfs",
            "request-pull",
            "send-email",
            "svn",
            "p4",
        ),
    ),
    NetworkRow(
        _f("hg", "svn", "jj"),
        "talks to the repository's server (a central one commits and updates there)",
        _f(
            "clone",
            "fetch",
            "pull",
            "push",
            "sync",
            "up",
            "update",
            "checkout",
            "co",
            "commit",
            "ci",
            "incoming",
            "outgoing",
            "git",
        ),
    ),
    NetworkRow(
        _f(
            "curl",
            "wget",
            "aria2c",
            "http",
            "https",
            "xh",
            "httpie",
            "ssh",
            "scp",
            "sftp",
            "rsync",
            "rclone",
            "ftp",
            "lftp",
            "telnet",
            "nc",
            "ncat",
            "netcat",
            "socat",
            "mosh",
            "autossh",
            "sshfs",
            "openssl",
            "grpcurl",
            "websocat",
        ),
        "a network client: reaching a host is what it is for",
    ),
    NetworkRow(
        _f(
            "gh",
            "glab",
            "hub",
            "aws",
            "gcloud",
            "gsutil",
            "bq",
            "az",
            "doctl",
            "heroku",
            "fly",
            "flyctl",
            "vercel",
            "netlify",
            "wrangler",
            "firebase",
            "supabase",
            "railway",
            "kubectl",
            "helm",
            "k9s",
            "oc",
            "terraform",
            "tofu",
            "pulumi",
            "ansible",
            "ansible-playbook",
            "vagrant",
            "docker",
            "podman",
            "buildah",
            "skopeo",
            "ollama",
            "huggingface-cli",
        ),
        "a cloud, container or service client: it talks to its service",
    ),
    NetworkRow(
        _f("psql", "mysql", "mariadb", "mongosh", "mongo", "redis-cli", "sqlcmd", "clickhouse"),
        "a database client: it talks to its server",
    ),
)


@dataclass(frozen=True)
class CredentialUse:
    """Credential stores a program reads to do its job, as home-relative paths (a glob picks the
    entries of a folder) of the credential rows of :data:`gatesh.vocab.places.PLACES`;
    ``verbs`` narrows the row, empty = any."""

    heads: frozenset[str]
    stores: tuple[str, ...]
    why: str
    verbs: frozenset[str] = frozenset()


_SSH_KEYS: Final = (".ssh/id_*", ".ssh/identity")

CREDENTIAL_USES: Final[tuple[CredentialUse, ...]] = (
    CredentialUse(
        _f("git"),
        (
            *_SSH_KEYS,
            ".git-credentials",
            ".config/git/credentials",
            ".config/gh/hosts.yml",
            ".netrc",
        ),
        "git signs in to its remote with the ssh key or the stored https credentials",
        _f("clone", "fetch", "pull", "push", "ls-remote", "submodule", "remote", "lfs"),
    ),
    CredentialUse(
        _f("ssh", "scp", "sftp", "rsync", "mosh", "autossh", "sshfs", "ssh-copy-id"),
        _SSH_KEYS,
        "ssh signs in with the user's key",
    ),
    CredentialUse(_f("gh"), (".config/gh/hosts.yml",), "gh signs in with its stored token"),
    CredentialUse(
        _f("aws", "sam", "cdk"),
        (".aws",),
        "the AWS CLI signs in with its keys",
    ),
    CredentialUse(
        _f("gcloud", "gsutil", "bq"),
        (".config/gcloud",),
        "gcloud signs in with its stored credentials",
    ),
    CredentialUse(
        _f("az"),
        (".azure",),
        "the Azure CLI signs in with its token cache",
    ),
    CredentialUse(
        _f("kubectl", "helm", "k9s", "oc", "minikube", "kind"),
        (".kube/config",),
        "the cluster's address and credentials",
    ),
    CredentialUse(
        _f("docker", "podman", "buildah", "skopeo"), (".docker/config.json",), "the registry logins"
    ),
    CredentialUse(
        _f("npm", "npx", "yarn", "pnpm", "pnpx"),
        (".npmrc",),
        "npm's settings file, which also holds registry tokens",
    ),
    CredentialUse(_f("twine"), (".pypirc",), "the package index login"),
    CredentialUse(
        _f("cargo"),
        (".cargo/credentials", ".cargo/credentials.toml"),
        "the crate registry token",
        _f("publish", "login", "logout", "owner", "yank"),
    ),
    CredentialUse(
        _f("gem"),
        (".gem/credentials",),
        "the gem host's key",
        _f("push", "owner", "yank", "signin"),
    ),
    CredentialUse(
        _f("terraform", "tofu"),
        (".terraform.d/credentials.tfrc.json",),
        "the Terraform registry token",
    ),
    CredentialUse(_f("psql", "pg_dump", "pg_restore"), (".pgpass",), "the database password file"),
    CredentialUse(
        _f("mysql", "mariadb", "mysqldump"),
        (".my.cnf",),
        "the database client's settings and password",
    ),
    CredentialUse(_f("vault"), (".vault-token",), "Vault's token"),
    CredentialUse(
        _f("gpg", "gpg2", "pass"),
        (".gnupg/private-keys-v1.d", ".gnupg/secring.gpg", ".password-store"),
        "gpg signs and decrypts with the user's key",
    ),
)

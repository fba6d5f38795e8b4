"""Read-only rows of developer and operator tools: version control, containers, clusters,
package managers, languages, cloud command lines, archives, keys (the second part of
:data:`gatesh.vocab.reads.RULES`).
"""

from __future__ import annotations

from typing import Final

from gatesh.vocab.grammar import (
    HELM,
    TERRAFORM,
)
from gatesh.vocab.reads.checks_system import (
    archive_list_reads,
    dpkg_reads,
    gpg_reads,
    gzip_reads,
    openssl_reads,
    pacman_reads,
    rpm_reads,
    tar_reads,
)
from gatesh.vocab.reads.checks_tools import (
    CLOUD_DENY,
    CLOUD_READ,
    DOCKER_READS,
    GIT_READS,
    KUBECTL_READS,
    NPM_SUB,
    PIP_SUB,
    aws_reads,
    env_query,
    python_reads,
)
from gatesh.vocab.reads.rule import (
    NONE,
    ReadOnlyRule,
    forbid,
    only_options,
    subcommands,
    verbs_end_with,
)

ROWS: Final[tuple[ReadOnlyRule, ...]] = (
    ReadOnlyRule(
        "ro.git",
        frozenset({"git"}),
        "inspects the repository (status, log, diff, show, listing branches/tags/config)",
        examples=(
            "git status",
            "git log --oneline -n 5",
            "git diff HEAD~1",
            "git branch -a",
            "git -C repo status",
            "git config user.email",
            "git stash list",
            "git rev-parse --show-toplevel",
            "git --no-pager log",
        ),
        counter=(
            "git branch -D x",
            "git branch newbranch",
            "git push",
            "git -c core.pager=sh log",
            "git config user.email x@y",
            "git diff --output=patch.diff",
            "git tag v1",
            "git stash",
            "git reset --hard",
        ),
        check=GIT_READS,
    ),
    ReadOnlyRule(
        "ro.vcs",
        frozenset({"hg", "svn", "fossil"}),
        "inspect other version-control checkouts",
        examples=("hg status", "svn log -l 5", "hg diff"),
        counter=("hg commit -m x", "svn update"),
        check=subcommands(
            {
                v: None
                for v in (
                    "status",
                    "st",
                    "log",
                    "diff",
                    "summary",
                    "sum",
                    "identify",
                    "id",
                    "heads",
                    "branches",
                    "tags",
                    "paths",
                    "root",
                    "info",
                    "cat",
                    "list",
                    "ls",
                    "blame",
                    "annotate",
                    "version",
                    "help",
                    "timeline",
                    "changes",
                )
            },
            bare=False,
        ),
    ),
    ReadOnlyRule(
        "ro.docker",
        frozenset({"docker", "podman", "nerdctl"}),
        "list and inspect containers, images, networks and volumes",
        examples=(
            "docker ps -a",
            "docker images",
            "docker logs web",
            "docker compose ps",
            "podman inspect x",
        ),
        counter=(
            "docker rm -f x",
            "docker run ubuntu",
            "docker system prune",
            "docker compose up -d",
        ),
        check=DOCKER_READS,
    ),
    ReadOnlyRule(
        "ro.kubectl",
        frozenset({"kubectl", "oc", "k"}),
        "read cluster objects (secrets excluded: reading them is credential access)",
        examples=(
            "kubectl get pods -A",
            "kubectl describe deploy web",
            "kubectl logs web-1",
            "kubectl config current-context",
        ),
        counter=(
            "kubectl delete pod x",
            "kubectl get secret db -o yaml",
            "kubectl apply -f x.yaml",
            "kubectl config view --raw",
        ),
        check=KUBECTL_READS,
    ),
    ReadOnlyRule(
        "ro.helm",
        frozenset({"helm"}),
        "lists and shows releases and charts",
        examples=("helm list -A", "helm status web"),
        counter=("helm uninstall web", "helm install x y"),
        check=subcommands(
            {
                v: None
                for v in ("list", "ls", "status", "history", "show", "search", "version", "env")
            },
            with_arg=HELM.options,
        ),
    ),
    ReadOnlyRule(
        "ro.npm",
        frozenset({"npm", "pnpm"}),
        "query installed and published packages",
        examples=(
            "npm ls --depth=0",
            "npm view react version",
            "npm outdated",
            "npm config get registry",
        ),
        counter=("npm install", "npm audit fix", "npm version patch", "npm publish"),
        check=subcommands(NPM_SUB),
    ),
    ReadOnlyRule(
        "ro.yarn",
        frozenset({"yarn"}),
        "query installed packages",
        examples=("yarn list", "yarn why react"),
        counter=("yarn add x", "yarn"),
        check=subcommands(
            {v: None for v in ("list", "info", "why", "outdated", "licenses", "versions", "config")}
            | {"config": lambda a: a[:1] in (("get",), ("list",))}
        ),
    ),
    ReadOnlyRule(
        "ro.pip",
        frozenset({"pip", "pip3", "pipx", "uv"}),
        "list and show installed Python packages",
        examples=(
            "pip list",
            "pip show requests",
            "pip freeze",
            "uv pip list",
            "pipx list",
            "python -m pip list",
        ),
        counter=(
            "pip install x",
            "pip uninstall -y x",
            "pip freeze --path x",
            "uv sync",
            "python3 -m pip install x",
        ),
        check=subcommands(PIP_SUB | {"pip": subcommands(PIP_SUB | {"tree": None})}),
    ),
    ReadOnlyRule(
        "ro.python",
        frozenset({"python", "python3", "python2", "py", "pypy3"}),
        "prints its version (any code could write, so nothing else)",
        examples=("python3 --version", "python -V"),
        counter=("python -c 'print(1)'", "python x.py", "python -m pip install x"),
        check=python_reads,
    ),
    ReadOnlyRule(
        "ro.lang-query",
        frozenset(
            {
                "go",
                "cargo",
                "rustup",
                "gem",
                "pyenv",
                "rbenv",
                "nodenv",
                "conda",
                "mamba",
                "poetry",
                "composer",
                "bundle",
                "nvm",
                "asdf",
                "mise",
                "sdk",
                "dotnet",
                "deno",
            }
        ),
        "report toolchains, environments and installed packages",
        examples=(
            "go version",
            "go env GOPATH",
            "cargo --version",
            "rustup show",
            "conda env list",
            "gem list",
            "poetry show",
        ),
        counter=(
            "go env -w GOPROXY=x",
            "cargo build",
            "conda install numpy",
            "gem install rails",
            "go run .",
        ),
        check=subcommands(
            {
                "version": None,
                "env": forbid(short="wu"),
                "list": None,
                "ls": None,
                "doc": None,
                "help": None,
                "show": lambda a: not a or a[0] not in ("install", "uninstall"),
                "info": None,
                "arch": NONE,
                "versions": None,
                "which": None,
                "root": None,
                "current": None,
                "search": None,
                "tree": None,
                "outdated": None,
                "toolchain": lambda a: a[:1] == ("list",),
                "target": lambda a: a[:1] == ("list",),
                "component": lambda a: a[:1] == ("list",),
                "licenses": None,
                "check": None,
                "where": None,
            }
            | {"env": env_query},
            with_arg=frozenset({"-C", "--manifest-path"}),
        ),
    ),
    ReadOnlyRule(
        "ro.os-packages",
        frozenset(
            {
                "apt",
                "apt-cache",
                "dpkg",
                "dpkg-query",
                "rpm",
                "dnf",
                "yum",
                "pacman",
                "brew",
                "snap",
                "flatpak",
                "apk",
                "zypper",
                "port",
            }
        ),
        "query the system's package database",
        examples=(
            "apt list --installed",
            "dpkg -l",
            "rpm -qa",
            "pacman -Qi bash",
            "brew list",
            "apt-cache policy git",
        ),
        counter=(
            "apt install x",
            "dpkg -i x.deb",
            "pacman -Syu",
            "brew upgrade",
            "rpm -e x",
            "apt-cache gencaches",
        ),
        check=lambda a: (
            bool(a)
            and (
                pacman_reads(a)
                if a[0].startswith("-Q") or a[0].startswith("-S") or a[0] in ("--query",)
                else rpm_reads(a)
                if a[0].startswith("-q") or a[0] in ("--query", "-V", "--verify")
                else dpkg_reads(a)
                if a[0].startswith("-")
                else a[0]
                in (
                    "list",
                    "show",
                    "search",
                    "policy",
                    "info",
                    "depends",
                    "rdepends",
                    "madison",
                    "pkgnames",
                    "showpkg",
                    "stats",
                    "deps",
                    "desc",
                    "leaves",
                    "uses",
                    "outdated",
                    "config",
                    "repolist",
                    "provides",
                    "whatprovides",
                    "deplist",
                    "find",
                    "remotes",
                    "ls",
                    "--version",
                    "-v",
                    "installed",
                    "showsrc",
                )
            )
        ),
    ),
    ReadOnlyRule(
        "ro.aws",
        frozenset({"aws"}),
        "AWS describe/list/get calls (secret-bearing reads excluded)",
        examples=(
            "aws s3 ls",
            "aws ec2 describe-instances",
            "aws sts get-caller-identity",
            "aws iam list-users",
        ),
        counter=(
            "aws s3 rm s3://b/k",
            "aws secretsmanager get-secret-value --secret-id x",
            "aws ec2 terminate-instances --instance-ids i-1",
            "aws ecr get-login-password",
        ),
        check=aws_reads,
    ),
    ReadOnlyRule(
        "ro.cloud",
        frozenset(
            {"gcloud", "az", "doctl", "linode-cli", "ibmcloud", "exo", "openstack", "hcloud"}
        ),
        "cloud CLI calls whose verb only lists or shows",
        examples=("gcloud compute instances list", "az vm list", "doctl compute droplet list"),
        counter=(
            "gcloud compute instances delete x",
            "az group delete -n x",
            "gcloud auth print-access-token",
            "az keyvault secret show --name x",
        ),
        check=verbs_end_with(CLOUD_READ, CLOUD_DENY),
    ),
    ReadOnlyRule(
        "ro.gh",
        frozenset({"gh", "glab"}),
        "read pull requests, issues, runs and repositories",
        examples=(
            "gh pr list",
            "gh pr view 12",
            "gh issue list --label bug",
            "gh run view 1",
            "gh auth status",
        ),
        counter=(
            "gh pr merge 12",
            "gh repo delete x",
            "gh api -X DELETE repos/a/b",
            "gh secret list",
        ),
        check=lambda a: (
            (
                len(a) >= 2
                and a[0]
                in (
                    "pr",
                    "issue",
                    "repo",
                    "run",
                    "release",
                    "workflow",
                    "mr",
                    "ci",
                    "gist",
                    "label",
                    "cache",
                    "search",
                )
                and a[1]
                in (
                    "list",
                    "view",
                    "status",
                    "diff",
                    "checks",
                    "ls",
                    "repos",
                    "issues",
                    "prs",
                    "code",
                    "commits",
                )
            )
            or a[:2] == ("auth", "status")
            or (
                a[:1] == ("api",)
                and not any(
                    x in ("-X", "--method", "-f", "-F", "--field", "--raw-field", "--input")
                    or x.startswith(("-X", "--method="))
                    for x in a[1:]
                )
            )
        ),
    ),
    ReadOnlyRule(
        "ro.terraform",
        frozenset({"terraform", "tofu", "pulumi", "terragrunt"}),
        "show state, outputs and versions (plan and apply run providers)",
        examples=("terraform show", "terraform state list", "terraform version", "pulumi stack ls"),
        counter=("terraform apply", "terraform destroy", "terraform state rm x"),
        check=subcommands(
            {
                "show": None,
                "output": None,
                "version": None,
                "providers": None,
                "graph": None,
                "validate": None,
                "state": lambda a: a[:1] in (("list",), ("show",)),
                "stack": lambda a: a[:1] in (("ls",), ("output",), ("history",)),
                "whoami": None,
                "about": None,
                "workspace": lambda a: a[:1] in (("list",), ("show",)),
            },
            with_arg=TERRAFORM.options,
        ),
    ),
    ReadOnlyRule(
        "ro.cluster-query",
        frozenset({"minikube", "kind", "k3d"}),
        "report local cluster status",
        examples=("minikube status", "kind get clusters"),
        counter=("minikube delete", "kind delete cluster"),
        check=subcommands(
            {
                "status": None,
                "ip": None,
                "version": None,
                "profile": lambda a: a[:1] == ("list",),
                "get": None,
                "list": None,
            }
        ),
    ),
    ReadOnlyRule(
        "ro.archive-list",
        frozenset({"tar", "bsdtar"}),
        "lists an archive's contents (t mode only)",
        examples=("tar -tzf a.tgz", "tar tf a.tar"),
        counter=("tar xzf a.tgz", "tar czf a.tgz src", "tar -tf a.tar --to-command=sh"),
        check=tar_reads,
    ),
    ReadOnlyRule(
        "ro.zip-list",
        frozenset({"unzip", "7z", "7za", "7zz", "unrar"}),
        "lists or tests an archive (l/t modes, unzip -l/-v/-t/-Z/-p)",
        examples=("unzip -l a.zip", "7z l a.7z"),
        counter=("unzip a.zip", "7z x a.7z"),
        check=archive_list_reads,
    ),
    ReadOnlyRule(
        "ro.compress-stdout",
        frozenset(
            {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "brotli"}
        ),
        "(de)compress to standard output, or list/test (without -c they replace files)",
        examples=("gzip -dc a.gz | head", "xz -l a.xz", "zstd -t a.zst"),
        counter=("gzip big.log", "gunzip a.gz"),
        check=gzip_reads,
    ),
    ReadOnlyRule(
        "ro.crypto-inspect",
        frozenset({"openssl"}),
        "inspects certificates and digests (no -out, no key generation)",
        examples=("openssl version", "openssl x509 -in cert.pem -noout -text"),
        counter=(
            "openssl genrsa -out k.pem",
            "openssl x509 -in a -out b",
            "openssl s_client -connect x.example:443",
        ),
        check=openssl_reads,
    ),
    ReadOnlyRule(
        "ro.gpg-list",
        frozenset({"gpg", "gpg2"}),
        "lists keys or verifies signatures",
        examples=("gpg --list-keys", "gpg --verify a.sig a"),
        counter=("gpg --delete-key x", "gpg -d secret.gpg", "gpg --export-secret-keys"),
        check=gpg_reads,
    ),
    ReadOnlyRule(
        "ro.docs",
        frozenset({"tldr", "tlrc", "cheat"}),
        "prints documentation pages",
        examples=("tldr tar",),
        counter=("tldr --update", "tldr -u"),
        check=forbid(short="u", long=("--update", "--clear-cache", "--seed-config", "--edit")),
    ),
    ReadOnlyRule(
        "ro.mount-list",
        frozenset({"mount", "swapon"}),
        "lists mounts (any operand would mount)",
        examples=("mount", "mount -l", "swapon --show"),
        counter=("mount /dev/sdb1 /mnt", "swapon -a"),
        check=lambda a: all(
            x in ("-l", "--show", "-s", "--summary", "-t", "ext4", "--noheadings") for x in a
        ),
    ),
    ReadOnlyRule(
        "ro.stty",
        frozenset({"stty"}),
        "prints terminal settings (-a/-g only)",
        examples=("stty -a", "stty size"),
        counter=("stty raw",),
        check=only_options("-a", "-g", "--all", "--save", "size"),
    ),
)

"""The grammar rows: per program family, which options take a value and where subcommands start.

Written from each tool's own usage text (``git`` with no arguments, ``kubectl options``,
``docker --help``, ``curl --help all``, ``wget --help``, the coreutils and OpenSSH manuals), not
from a third-party collection of completion specifications: the installed tool is the authority
on its own grammar, and a row here lists only what gatesh's layers need to tell an option's value
from an operand (options a row does not list are read as flags, as before this table existed).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from ._parse import Bundling, Grammar, Options


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


def _subs(**rows: Grammar) -> Mapping[str, Grammar]:
    return MappingProxyType({k.replace("_", "-"): v for k, v in rows.items()})


def _o(
    value: frozenset[str] = frozenset(),
    optional: frozenset[str] = frozenset(),
    flags: frozenset[str] = frozenset(),
    *,
    ends_at: int = 0,
    abbreviate: bool = False,
    bundling: Bundling = Bundling.GETOPT,
) -> Options:
    return Options(value, optional, flags, bundling, ends_at, abbreviate)


# --- git ---------------------------------------------------------------------------------------

# git's own options before the subcommand (git.c reads them itself: no abbreviations, no bundled
# letters, and the first operand is the subcommand). `--exec-path` alone prints the folder; only
# `=DIR` sets it.
GIT_GLOBAL: Final = _o(
    _f(
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--super-prefix",
        "--config-env",
        "--attr-source",
    ),
    _f("--exec-path", "--list-cmds"),
    _f(
        "-v",
        "--version",
        "-h",
        "--help",
        "--html-path",
        "--man-path",
        "--info-path",
        "-p",
        "--paginate",
        "-P",
        "--no-pager",
        "--no-replace-objects",
        "--bare",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-optional-locks",
        "--no-lazy-fetch",
        "--no-advice",
    ),
    ends_at=1,
    bundling=Bundling.NONE,  # `-C DIR` and `-c K=V` take the next word; git.c bundles nothing
)


def _git(
    value: frozenset[str] = frozenset(),
    optional: frozenset[str] = frozenset(),
    flags: frozenset[str] = frozenset(),
    subcommands: Mapping[str, Grammar] | None = None,
    aliases: Mapping[str, str] | None = None,
    *,
    ends_at: int = 0,
) -> Grammar:
    """A git subcommand: parse-options reads it (long options abbreviate; options and operands
    mix unless the subcommand stops at its first operand)."""
    return Grammar(
        "git-subcommand",
        options=_o(value, optional, flags, ends_at=ends_at, abbreviate=True),
        subcommands=subcommands or MappingProxyType({}),
        aliases=MappingProxyType(dict(aliases or {})),
        default=_o(abbreviate=True),
    )


_GIT_PATHSPEC: Final = _f("--pathspec-from-file")
_GIT_FETCHING: Final = _f(
    "--depth",
    "--deepen",
    "--shallow-since",
    "--shallow-exclude",
    "--upload-pack",
    "-j",
    "--jobs",
    "--refmap",
    "-o",
    "--server-option",
    "--negotiation-tip",
    "--filter",
)
_GIT_STASH_PUSH: Final = _git(
    _f("-m", "--message") | _GIT_PATHSPEC,
    flags=_f(
        "-p",
        "--patch",
        "-k",
        "--keep-index",
        "--no-keep-index",
        "-u",
        "--include-untracked",
        "-a",
        "--all",
        "-q",
        "--quiet",
        "-S",
        "--staged",
    ),
)
_GIT_COMMIT_LOG: Final = _f(
    "-n",
    "--max-count",
    "--skip",
    "--since",
    "--after",
    "--until",
    "--before",
    "--author",
    "--committer",
    "--grep",
    "-S",
    "-G",
    "-L",
    "-O",
    "--diff-filter",
    "--format",
    "--output",
    "--date",
    "--encoding",
    "--relative",
)
_GIT_LOG: Final = _git(
    _GIT_COMMIT_LOG,
    _f("--pretty", "--stat", "--color", "--abbrev", "--decorate", "--word-diff", "-M", "-C"),
)

GIT: Final = Grammar(
    "git",
    _f("git"),
    GIT_GLOBAL,
    _subs(
        clean=_git(
            _f("-e", "--exclude"),
            flags=_f("-d", "-f", "--force", "-i", "--interactive", "-n", "--dry-run", "-q", "-x")
            | _f("--quiet", "-X"),
        ),
        push=_git(
            _f("--repo", "--receive-pack", "--exec", "-o", "--push-option"),
            _f("--force-with-lease", "--signed", "--recurse-submodules"),
            _f(
                "--all",
                "--branches",
                "--mirror",
                "--tags",
                "--follow-tags",
                "--atomic",
                "-n",
                "--dry-run",
                "--porcelain",
                "-d",
                "--delete",
                "--prune",
                "-v",
                "--verbose",
                "-q",
                "--quiet",
                "--progress",
                "-u",
                "--set-upstream",
                "--thin",
                "--no-verify",
                "--verify",
                "-f",
                "--force",
                "--force-if-includes",
                "--no-force-with-lease",
                "-4",
                "-6",
            ),
        ),
        stash=_git(
            _f("-m", "--message") | _GIT_PATHSPEC,
            subcommands=_subs(
                push=_GIT_STASH_PUSH,
                save=_GIT_STASH_PUSH,
                pop=_git(flags=_f("--index", "-q", "--quiet")),
                apply=_git(flags=_f("--index", "-q", "--quiet")),
                drop=_git(flags=_f("-q", "--quiet")),
                clear=_git(),
                list=_GIT_LOG,
                show=_GIT_LOG,
                branch=_git(),
                create=_git(),
                store=_git(_f("-m", "--message")),
            ),
        ),
        reset=_git(
            _GIT_PATHSPEC,
            _f("--recurse-submodules"),
            _f("--soft", "--mixed", "--hard", "--merge", "--keep", "-q", "--quiet", "-p", "-N"),
        ),
        checkout=_git(
            _f("-b", "-B", "--orphan", "--conflict") | _GIT_PATHSPEC,
            _f("--track", "--recurse-submodules"),
            _f("-t", "-f", "--force", "-q", "--quiet", "-m", "--merge", "-p", "--patch", "--detach")
            | _f("--ours", "--theirs", "--overlay", "--no-overlay", "--guess", "--no-guess"),
        ),
        switch=_git(
            _f("-c", "--create", "-C", "--force-create", "--orphan", "--conflict"),
            _f("--track", "--recurse-submodules"),
            _f("-t", "-f", "--force", "--discard-changes", "-d", "--detach", "-m", "--merge", "-q"),
        ),
        restore=_git(
            _f("-s", "--source", "--conflict") | _GIT_PATHSPEC,
            _f("--recurse-submodules"),
            _f("-W", "--worktree", "-S", "--staged", "-p", "--patch", "--ours", "--theirs")
            | _f("-m", "--merge", "--overlay", "--no-overlay", "-q", "--quiet"),
        ),
        branch=_git(
            _f("-u", "--set-upstream-to", "--sort", "--format", "--points-at")
            | _f("--contains", "--no-contains", "--merged", "--no-merged"),
            _f("--track", "--color", "--column", "--abbrev"),
            _f("-t", "-d", "-D", "--delete", "-f", "--force", "-m", "-M", "--move", "-c", "-C")
            | _f("--copy", "-a", "--all", "-r", "--remotes", "-v", "--verbose", "-l", "--list")
            | _f("--show-current", "--edit-description", "--unset-upstream", "-q", "--quiet"),
        ),
        rebase=_git(
            _f("--onto", "-x", "--exec", "-s", "--strategy", "-X", "--strategy-option")
            | _f("--empty", "--whitespace"),
            _f("-r", "--rebase-merges", "-S", "--gpg-sign", "-C"),
            _f("-i", "--interactive", "--root", "--continue", "--abort", "--skip", "--quit")
            | _f("--autosquash", "--autostash", "-f", "--force-rebase", "--no-verify", "-q"),
        ),
        commit=_git(
            _f("-m", "--message", "-F", "--file", "-c", "--reedit-message", "-C")
            | _f("--reuse-message", "--fixup", "--squash", "--author", "--date", "-t")
            | _f("--template", "--cleanup", "--trailer")
            | _GIT_PATHSPEC,
            _f("-u", "--untracked-files", "-S", "--gpg-sign"),
            _f("-a", "--all", "--amend", "-n", "--no-verify", "-q", "--quiet", "-v", "-s")
            | _f("--allow-empty", "--no-edit", "-e", "--edit", "-p", "--patch", "--dry-run"),
        ),
        fetch=_git(_GIT_FETCHING, _f("--recurse-submodules"), _f("--all", "--prune", "-p")),
        pull=_git(
            _GIT_FETCHING | _f("-s", "--strategy", "-X", "--strategy-option"),
            _f("--recurse-submodules", "-r", "--rebase", "-S", "--gpg-sign"),
            _f("--ff", "--no-ff", "--ff-only", "--autostash", "-q", "--quiet", "-v"),
        ),
        clone=_git(
            _f("-o", "--origin", "-b", "--branch", "-u", "--upload-pack", "--reference")
            | _f("--reference-if-able", "--separate-git-dir", "--depth", "--shallow-since")
            | _f("--shallow-exclude", "-c", "--config", "--template", "-j", "--jobs", "--filter")
            | _f("--server-option", "--bundle-uri"),
            _f("--recurse-submodules"),
            _f("--bare", "--mirror", "-l", "--local", "-n", "--no-checkout", "-q", "--quiet"),
        ),
        remote=_git(
            flags=_f("-v", "--verbose"),
            subcommands=_subs(
                add=_git(_f("-t", "-m"), _f("--mirror"), _f("-f", "--tags", "--no-tags")),
                remove=_git(),
                rm=_git(),
                rename=_git(flags=_f("--progress", "--no-progress")),
                set_url=_git(flags=_f("--push", "--add", "--delete")),
                get_url=_git(flags=_f("--push", "--all")),
                set_head=_git(flags=_f("-a", "--auto", "-d", "--delete")),
                set_branches=_git(flags=_f("--add")),
                show=_git(flags=_f("-n")),
                prune=_git(flags=_f("-n", "--dry-run")),
                update=_git(flags=_f("-p", "--prune")),
            ),
        ),
        config=_git(
            _f("-f", "--file", "--blob", "--type", "--default", "--comment", "--value"),
            _f("--color", "--get-color", "--get-colorbool"),
            _f("--global", "--system", "--local", "--worktree", "--add", "--replace-all")
            | _f("--unset", "--unset-all", "--get", "--get-all", "--get-regexp", "-l", "--list")
            | _f("-e", "--edit", "--bool", "--int", "--path", "-z", "--null", "--name-only")
            | _f("--show-origin", "--show-scope", "--get-urlmatch", "--includes", "--all"),
            _subs(
                list=_git(),
                get=_git(),
                set=_git(_f("--value", "--comment", "--type")),
                unset=_git(_f("--value")),
                rename_section=_git(),
                remove_section=_git(),
                edit=_git(),
            ),
        ),
        submodule=_git(
            _f("--depth", "--reference", "-b", "--branch", "--name", "-j", "--jobs"),
            subcommands=_subs(
                foreach=_git(flags=_f("--recursive", "-q", "--quiet"), ends_at=1),
                update=_git(_f("--depth", "--reference", "-j", "--jobs", "--filter")),
                add=_git(_f("-b", "--branch", "--name", "--reference", "--depth")),
                init=_git(),
                deinit=_git(flags=_f("-f", "--force", "--all")),
                sync=_git(),
                status=_git(),
                summary=_git(),
                set_url=_git(),
                set_branch=_git(_f("-b", "--branch")),
                absorbgitdirs=_git(),
            ),
        ),
        bisect=_git(
            subcommands=_subs(
                start=_git(_f("--term-new", "--term-bad", "--term-old", "--term-good")),
                run=_git(ends_at=1),
                reset=_git(),
                good=_git(),
                bad=_git(),
                new=_git(),
                old=_git(),
                skip=_git(),
                log=_git(),
                visualize=_GIT_LOG,
                view=_GIT_LOG,
                replay=_git(),
                terms=_git(),
            ),
        ),
        tag=_git(
            _f("-m", "--message", "-F", "--file", "-u", "--local-user", "--sort", "--format")
            | _f("--contains", "--no-contains", "--merged", "--no-merged", "--points-at"),
            _f("-n", "--color", "--column", "--cleanup"),
            _f("-a", "--annotate", "-s", "--sign", "-d", "--delete", "-f", "--force", "-l")
            | _f("--list", "-v", "--verify"),
        ),
        worktree=_git(
            subcommands=_subs(
                add=_git(_f("-b", "-B", "--reason"), flags=_f("-f", "--force", "--detach")),
                remove=_git(flags=_f("-f", "--force")),
                prune=_git(_f("--expire"), flags=_f("-n", "--dry-run", "-v")),
                list=_git(),
                lock=_git(_f("--reason")),
                unlock=_git(),
                move=_git(flags=_f("-f", "--force")),
                repair=_git(),
            ),
        ),
        difftool=_git(_f("-x", "--extcmd", "-t", "--tool"), flags=_f("-y", "--no-prompt", "-d")),
        mergetool=_git(_f("-t", "--tool"), flags=_f("-y", "--no-prompt")),
        log=_GIT_LOG,
        show=_GIT_LOG,
        diff=_GIT_LOG,
        whatchanged=_GIT_LOG,
        shortlog=_GIT_LOG,
        reflog=_git(
            subcommands=_subs(
                show=_GIT_LOG,
                expire=_git(_f("--expire", "--expire-unreachable"), flags=_f("--all", "-n")),
                delete=_git(flags=_f("--rewrite", "--updateref", "-n")),
                exists=_git(),
            ),
        ),
        gc=_git(optional=_f("--prune"), flags=_f("--aggressive", "--auto", "--force", "-q")),
        merge=_git(
            _f("-m", "-F", "--file", "-s", "--strategy", "-X", "--strategy-option", "--into-name"),
            _f("-S", "--gpg-sign", "--log"),
            _f("--abort", "--continue", "--quit", "--ff", "--no-ff", "--ff-only", "--squash"),
        ),
        update_ref=_git(_f("-m"), flags=_f("-d", "--no-deref", "--stdin", "-z")),
        archive=_git(_f("-o", "--output", "--format", "--prefix", "--remote", "--exec")),
        grep=_git(_f("-e", "-f", "--max-depth", "-A", "-B", "-C", "-m", "--max-count")),
        filter_branch=_git(
            _f("--env-filter", "--tree-filter", "--index-filter", "--parent-filter")
            | _f("--msg-filter", "--commit-filter", "--tag-name-filter", "--subdirectory-filter")
            | _f("--prune-empty", "-d", "--original", "--setup"),
            flags=_f("-f", "--force"),
            ends_at=1,
        ),
    ),
    aliases=MappingProxyType({}),
    open=True,
    default=_o(abbreviate=True),
    why="git.c reads the options before the subcommand; each subcommand's parse-options the rest",
)


# --- clusters and containers ---------------------------------------------------------------------

# kubectl's persistent flags (`kubectl options`), valid before and after the subcommand, and the
# value options its subcommands share (cobra: `--flag v`, `--flag=v`, `-n v`, `-nv`; no bundling of
# a value after a flag letter is special, and bool flags take a value only with `=`).
_KUBE_GLOBAL: Final = _f(
    "--as",
    "--as-group",
    "--as-uid",
    "--cache-dir",
    "--certificate-authority",
    "--client-certificate",
    "--client-key",
    "--cluster",
    "--context",
    "--kubeconfig",
    "--log-flush-frequency",
    "-n",
    "--namespace",
    "--password",
    "--profile",
    "--profile-output",
    "--request-timeout",
    "-s",
    "--server",
    "--tls-server-name",
    "--token",
    "--user",
    "--username",
    "-v",
    "--v",
    "--vmodule",
    "--log-dir",
    "--log-file",
)
_KUBE_COMMON: Final = _f(
    "-f",
    "--filename",
    "-l",
    "--selector",
    "-o",
    "--output",
    "-c",
    "--container",
    "--field-selector",
    "--grace-period",
    "--timeout",
    "-k",
    "--kustomize",
    "--image",
    "--overrides",
    "--replicas",
    "--type",
    "-p",
    "--patch",
    "--patch-file",
    "--env",
    "--port",
    "--restart",
    "--serviceaccount",
    "--target",
    "--copy-to",
    "--pod-running-timeout",
    "--field-manager",
    "--template",
    "--sort-by",
    "-L",
    "--label-columns",
    "--chunk-size",
    "--subresource",
    "--to-revision",
    "--current-replicas",
    "--resource-version",
    "--limits",
    "--requests",
    "--address",
    "--max-log-requests",
    "--since",
    "--since-time",
    "--tail",
    "--attach",
    "--annotations",
    "--labels",
    "--hostport",
    "--expose",
    "--prune-allowlist",
    "--for",
    "--local-ssd-count",
)
_KUBE_FLAGS: Final = _f(
    "--insecure-skip-tls-verify",
    "--match-server-version",
    "--disable-compression",
    "--warnings-as-errors",
    "-A",
    "--all-namespaces",
    "--all",
    "--force",
    "--prune",
    "-i",
    "--stdin",
    "-t",
    "--tty",
    "--rm",
    "-w",
    "--watch",
    "-R",
    "--recursive",
    "--ignore-daemonsets",
    "--delete-emptydir-data",
    "--privileged",
    "--server-side",
    "--force-conflicts",
    "-q",
    "--quiet",
)
_KUBE_OPTS: Final = _o(
    _KUBE_GLOBAL | _KUBE_COMMON, _f("--dry-run", "--cascade", "--validate", "--wait"), _KUBE_FLAGS
)
_KUBE_LOGS: Final = _o(
    (_KUBE_GLOBAL | _KUBE_COMMON) - _f("-p"),
    _f("--dry-run"),
    _KUBE_FLAGS | _f("-p", "--previous", "-f", "--follow"),
)


def _kube(**subs: Grammar) -> Grammar:
    return Grammar("kubectl-subcommand", options=_KUBE_OPTS, subcommands=_subs(**subs))


KUBECTL: Final = Grammar(
    "kubectl",
    _f("kubectl", "oc", "k", "kubecolor"),
    _KUBE_OPTS,
    _subs(
        **{
            verb: _kube()
            for verb in (
                "delete",
                "apply",
                "create",
                "run",
                "exec",
                "debug",
                "drain",
                "cordon",
                "uncordon",
                "taint",
                "scale",
                "replace",
                "patch",
                "edit",
                "get",
                "describe",
                "port-forward",
                "proxy",
                "cp",
                "label",
                "annotate",
                "top",
                "wait",
                "expose",
                "autoscale",
                "attach",
                "diff",
                "explain",
                "version",
                "api-resources",
                "api-versions",
                "cluster-info",
                "kustomize",
                "events",
            )
        },
        logs=Grammar("kubectl-logs", options=_KUBE_LOGS),
        rollout=_kube(
            undo=_kube(),
            restart=_kube(),
            status=_kube(),
            history=_kube(),
            pause=_kube(),
            resume=_kube(),
        ),
        set=_kube(image=_kube(), env=_kube(), resources=_kube(), serviceaccount=_kube()),
        config=_kube(
            use_context=_kube(),
            set_context=_kube(),
            current_context=_kube(),
            get_contexts=_kube(),
            view=_kube(),
            set_cluster=_kube(),
            set_credentials=_kube(),
            delete_context=_kube(),
        ),
        auth=_kube(can_i=_kube(), whoami=_kube()),
        certificate=_kube(approve=_kube(), deny=_kube()),
    ),
    open=True,
    default=_KUBE_OPTS,
    why="kubectl's persistent flags (`kubectl options`) and its subcommands' shared value flags",
)

# `docker run`, `create` and `exec` options that take a value (`docker run --help`); the image is
# the first operand and every word after it is the container's command (run stops at it).
DOCKER_EXEC_VALUES: Final = _f(
    "-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys", "--index"
)
DOCKER_RUN_VALUES: Final = DOCKER_EXEC_VALUES | _f(
    "-v",
    "--volume",
    "-p",
    "--publish",
    "--name",
    "--network",
    "--net",
    "--entrypoint",
    "--mount",
    "-l",
    "--label",
    "--hostname",
    "-h",
    "--cpus",
    "-m",
    "--memory",
    "--device",
    "--add-host",
    "--platform",
    "--pull",
    "--restart",
    "--log-driver",
    "--log-opt",
    "--cap-add",
    "--cap-drop",
    "--security-opt",
    "--ulimit",
    "--tmpfs",
    "--gpus",
    "--dns",
    "--shm-size",
    "--ipc",
    "--pid",
    "--runtime",
    "--stop-signal",
    "--group-add",
    "--health-cmd",
    "--cidfile",
    "--label-file",
    "--link",
    "--volumes-from",
    "--expose",
    "--memory-swap",
    "--cpu-shares",
    "-c",
    "--cgroupns",
    "--userns",
    "--uts",
    "--cpuset-cpus",
    "--stop-timeout",
    "--isolation",
    "--annotation",
    "--attach",
    "-a",
    "--pids-limit",
    "--privileged-mode",
)
_DOCKER_RUN_FLAGS: Final = _f(
    "-d", "--detach", "-i", "--interactive", "-t", "--tty", "--rm", "--privileged", "--init"
) | _f("-P", "--publish-all", "--read-only", "--sig-proxy", "-q", "--quiet")
_DOCKER_BUILD_VALUES: Final = _f(
    "-t",
    "--tag",
    "-f",
    "--file",
    "--build-arg",
    "--target",
    "--platform",
    "--label",
    "--network",
    "--progress",
    "--secret",
    "--ssh",
    "--cache-from",
    "--cache-to",
    "-o",
    "--output",
    "--iidfile",
    "--builder",
    "--build-context",
    "--metadata-file",
    "--allow",
    "--attest",
    "--provenance",
    "--sbom",
    "--shm-size",
    "--ulimit",
    "--add-host",
)
_DOCKER_BUILD: Final = Grammar(
    "docker-build",
    options=_o(
        _DOCKER_BUILD_VALUES, flags=_f("--push", "--load", "--no-cache", "--pull", "-q", "--rm")
    ),
)
_DOCKER_RUN: Final = Grammar(
    "docker-run", options=_o(DOCKER_RUN_VALUES, flags=_DOCKER_RUN_FLAGS, ends_at=1)
)
_DOCKER_EXEC: Final = Grammar(
    "docker-exec",
    options=_o(DOCKER_EXEC_VALUES, flags=_f("-d", "-i", "-t", "--privileged"), ends_at=1),
)
_DOCKER_PLAIN: Final = Grammar("docker-subcommand", options=_o(_f("-f", "--filter", "--format")))
_DOCKER_COMPOSE_VALUES: Final = _f(
    "-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory"
)
_DOCKER_COMPOSE: Final = Grammar(
    "docker-compose",
    options=_o(_DOCKER_COMPOSE_VALUES, ends_at=1),
    subcommands=_subs(
        exec=Grammar(
            "compose-exec",
            options=_o(DOCKER_EXEC_VALUES, flags=_f("-d", "-T", "--privileged"), ends_at=1),
        ),
        run=Grammar(
            "compose-run",
            options=_o(DOCKER_RUN_VALUES, flags=_DOCKER_RUN_FLAGS, ends_at=1),
        ),
    ),
    open=True,
    default=_o(_f("-t", "--timeout", "--scale")),
)
DOCKER: Final = Grammar(
    "docker",
    _f("docker", "podman", "nerdctl"),
    _o(
        _f("--config", "-c", "--context", "-H", "--host", "-l", "--log-level", "--tlscacert")
        | _f("--tlscert", "--tlskey", "--url", "--connection", "--root", "--runroot")
        | _f("--storage-driver", "--cgroup-manager", "--namespace", "--identity", "--address"),
        flags=_f("-D", "--debug", "--tls", "--tlsverify", "-v", "--version", "--remote", "-r"),
        ends_at=1,
    ),
    _subs(
        run=_DOCKER_RUN,
        create=_DOCKER_RUN,
        exec=_DOCKER_EXEC,
        build=_DOCKER_BUILD,
        buildx=Grammar(
            "docker-buildx",
            options=_o(_f("--builder")),
            subcommands=_subs(build=_DOCKER_BUILD, b=_DOCKER_BUILD, bake=_DOCKER_BUILD),
            open=True,
        ),
        builder=Grammar("docker-builder", subcommands=_subs(build=_DOCKER_BUILD), open=True),
        container=Grammar(
            "docker-container",
            subcommands=_subs(run=_DOCKER_RUN, create=_DOCKER_RUN, exec=_DOCKER_EXEC),
            open=True,
            default=_DOCKER_PLAIN.options,
        ),
        image=Grammar(
            "docker-image",
            subcommands=_subs(build=_DOCKER_BUILD),
            open=True,
            default=_DOCKER_PLAIN.options,
        ),
        compose=_DOCKER_COMPOSE,
        login=Grammar("docker-login", options=_o(_f("-u", "--username", "-p", "--password"))),
        kill=Grammar("docker-kill", options=_o(_f("-s", "--signal"))),
        stop=Grammar("docker-stop", options=_o(_f("-t", "--time", "-s", "--signal"))),
        save=Grammar("docker-save", options=_o(_f("-o", "--output"))),
        load=Grammar("docker-load", options=_o(_f("-i", "--input"))),
        cp=Grammar("docker-cp", options=_o(flags=_f("-a", "-L", "-q"))),
    ),
    open=True,
    default=_DOCKER_PLAIN.options,
    why="`docker --help` and each subcommand's --help; podman and nerdctl read the same words",
)
COMPOSE: Final = Grammar(
    "docker-compose-program",
    _f("docker-compose", "podman-compose"),
    _DOCKER_COMPOSE.options,
    _DOCKER_COMPOSE.subcommands,
    open=True,
    default=_DOCKER_COMPOSE.default,
)


# --- transfer tools ---------------------------------------------------------------------------

# `curl --help all`: every option shown with an argument. `-h/--help` takes a category only
# attached; `-x` and `--proxy` take a host.
CURL: Final = Grammar(
    "curl",
    _f("curl", "curlie"),
    _o(
        _f(
            "--abstract-unix-socket",
            "--alt-svc",
            "--aws-sigv4",
            "--cacert",
            "--capath",
            "-E",
            "--cert",
            "--cert-type",
            "--ciphers",
            "-K",
            "--config",
            "--connect-timeout",
            "--connect-to",
            "-C",
            "--continue-at",
            "-b",
            "--cookie",
            "-c",
            "--cookie-jar",
            "--create-file-mode",
            "--crlfile",
            "--curves",
            "-d",
            "--data",
            "--data-ascii",
            "--data-binary",
            "--data-raw",
            "--data-urlencode",
            "--delegation",
            "--dns-interface",
            "--dns-ipv4-addr",
            "--dns-ipv6-addr",
            "--dns-servers",
            "--doh-url",
            "-D",
            "--dump-header",
            "--egd-file",
            "--engine",
            "--etag-compare",
            "--etag-save",
            "--expect100-timeout",
            "-F",
            "--form",
            "--form-string",
            "--ftp-account",
            "--ftp-alternative-to-user",
            "--ftp-method",
            "-P",
            "--ftp-port",
            "--ftp-ssl-ccc-mode",
            "--happy-eyeballs-timeout-ms",
            "-H",
            "--header",
            "--hostpubmd5",
            "--hostpubsha256",
            "--hsts",
            "--interface",
            "--json",
            "--keepalive-time",
            "--key",
            "--key-type",
            "--krb",
            "--libcurl",
            "--limit-rate",
            "--local-port",
            "--login-options",
            "--mail-auth",
            "--mail-from",
            "--mail-rcpt",
            "--max-filesize",
            "--max-redirs",
            "-m",
            "--max-time",
            "--netrc-file",
            "--noproxy",
            "--oauth2-bearer",
            "-o",
            "--output",
            "--output-dir",
            "--parallel-max",
            "--pass",
            "--pinnedpubkey",
            "--preproxy",
            "--proto",
            "--proto-default",
            "--proto-redir",
            "-x",
            "--proxy",
            "--proxy-cacert",
            "--proxy-capath",
            "--proxy-cert",
            "--proxy-cert-type",
            "--proxy-ciphers",
            "--proxy-crlfile",
            "--proxy-header",
            "--proxy-key",
            "--proxy-key-type",
            "--proxy-pass",
            "--proxy-pinnedpubkey",
            "--proxy-service-name",
            "--proxy-tls13-ciphers",
            "--proxy-tlsauthtype",
            "--proxy-tlspassword",
            "--proxy-tlsuser",
            "-U",
            "--proxy-user",
            "--proxy1.0",
            "--pubkey",
            "-Q",
            "--quote",
            "--random-file",
            "-r",
            "--range",
            "--rate",
            "-e",
            "--referer",
            "-X",
            "--request",
            "--request-target",
            "--resolve",
            "--retry",
            "--retry-delay",
            "--retry-max-time",
            "--sasl-authzid",
            "--service-name",
            "--socks4",
            "--socks4a",
            "--socks5",
            "--socks5-gssapi-service",
            "--socks5-hostname",
            "-Y",
            "--speed-limit",
            "-y",
            "--speed-time",
            "--stderr",
            "-t",
            "--telnet-option",
            "--tftp-blksize",
            "-z",
            "--time-cond",
            "--tls-max",
            "--tls13-ciphers",
            "--tlsauthtype",
            "--tlspassword",
            "--tlsuser",
            "--trace",
            "--trace-ascii",
            "--unix-socket",
            "-T",
            "--upload-file",
            "--url",
            "--url-query",
            "-u",
            "--user",
            "-A",
            "--user-agent",
            "-w",
            "--write-out",
            "--variable",
            "--ech",
            "--ip-tos",
            "--vlan-priority",
        ),
        _f("-h", "--help"),
        _f("-s", "--silent", "-S", "--show-error", "-L", "--location", "-O", "--remote-name")
        | _f("-f", "--fail", "-k", "--insecure", "-v", "--verbose", "-I", "--head", "-i")
        | _f("--include", "-G", "--get", "-N", "--no-buffer", "-#", "--progress-bar", "-J")
        | _f("--remote-header-name", "--compressed", "--create-dirs", "-n", "--netrc", "-4")
        | _f("-6", "-Z", "--parallel", "-R", "--remote-time", "-g", "--globoff"),
        abbreviate=False,
    ),
    why="`curl --help all`",
)
WGET: Final = Grammar(
    "wget",
    _f("wget", "wget2"),
    _o(
        _f(
            "-e",
            "--execute",
            "-o",
            "--output-file",
            "-a",
            "--append-output",
            "--report-speed",
            "-i",
            "--input-file",
            "-B",
            "--base",
            "--config",
            "--rejected-log",
            "-t",
            "--tries",
            "--retry-on-http-error",
            "-O",
            "--output-document",
            "--start-pos",
            "--progress",
            "-T",
            "--timeout",
            "--dns-timeout",
            "--connect-timeout",
            "--read-timeout",
            "-w",
            "--wait",
            "--waitretry",
            "-Q",
            "--quota",
            "--bind-address",
            "--limit-rate",
            "--restrict-file-names",
            "--prefer-family",
            "--user",
            "--password",
            "--use-askpass",
            "--local-encoding",
            "--remote-encoding",
            "-P",
            "--directory-prefix",
            "--cut-dirs",
            "--http-user",
            "--http-password",
            "--default-page",
            "--header",
            "--compression",
            "--proxy-user",
            "--proxy-password",
            "--referer",
            "-U",
            "--user-agent",
            "--load-cookies",
            "--save-cookies",
            "--post-data",
            "--post-file",
            "--method",
            "--body-data",
            "--body-file",
            "--secure-protocol",
            "--certificate",
            "--certificate-type",
            "--private-key",
            "--private-key-type",
            "--ca-certificate",
            "--ca-directory",
            "--crl-file",
            "--pinnedpubkey",
            "--ciphers",
            "--ftp-user",
            "--ftp-password",
            "--warc-file",
            "--warc-header",
            "--warc-max-size",
            "--warc-dedup",
            "--warc-tempdir",
            "-l",
            "--level",
            "--backups",
            "-A",
            "--accept",
            "-R",
            "--reject",
            "--accept-regex",
            "--reject-regex",
            "--regex-type",
            "-D",
            "--domains",
            "--exclude-domains",
            "--follow-tags",
            "--ignore-tags",
            "-I",
            "--include-directories",
            "-X",
            "--exclude-directories",
        ),
        flags=_f("-q", "--quiet", "-c", "--continue", "-N", "-r", "--recursive", "-m", "-k")
        | _f("-nv", "-nc", "-nd", "-np", "-x", "-S", "-b", "--background", "--spider"),
        abbreviate=True,
    ),
    why="`wget --help`; wget's getopt_long takes unambiguous abbreviations",
)

# OpenSSH's ssh, scp and sftp: options that take a value (ssh(1), scp(1), sftp(1)).
SSH_VALUES: Final = _f(
    "-b",
    "-c",
    "-D",
    "-E",
    "-e",
    "-F",
    "-I",
    "-i",
    "-J",
    "-L",
    "-l",
    "-m",
    "-O",
    "-o",
    "-p",
    "-P",
    "-Q",
    "-R",
    "-S",
    "-W",
    "-w",
    "-B",
)
SSH: Final = Grammar(
    "ssh",
    _f("ssh", "slogin", "autossh"),
    _o(SSH_VALUES, ends_at=2),
    why="ssh(1): options may follow the host; the next operand starts the remote command",
)
SCP: Final = Grammar(
    "scp",
    _f("scp"),
    _o(
        _f("-c", "-D", "-F", "-i", "-J", "-l", "-o", "-P", "-S", "-X"),
        flags=_f("-3", "-4", "-6", "-A", "-B", "-C", "-O", "-p", "-q", "-R", "-r", "-T", "-v"),
        ends_at=1,
    ),
    why="scp(1): BSD getopt, the first operand ends the options; -P is the port, -p keeps times",
)
SFTP: Final = Grammar(
    "sftp",
    _f("sftp"),
    _o(
        _f("-B", "-b", "-c", "-D", "-F", "-i", "-J", "-l", "-o", "-P", "-R", "-S", "-s", "-X"),
        flags=_f("-4", "-6", "-A", "-a", "-C", "-f", "-N", "-p", "-q", "-r", "-v"),
        ends_at=1,
    ),
    why="sftp(1)",
)
# netcat and telnet (`nc -q 1 -s SRC host port`, `telnet -l user host`).
NC: Final = Grammar(
    "nc",
    _f("nc", "ncat", "netcat"),
    _o(
        _f("-s", "-x", "-X", "-q", "-T", "-g", "-G", "-p", "-w", "-i", "-I", "-O", "-P", "-e", "-c")
        | _f("-b", "-E", "--exec", "--sh-exec", "--lua-exec", "--proxy", "--proxy-type"),
        flags=_f("-l", "-k", "-n", "-u", "-v", "-z", "-N", "-4", "-6", "--listen", "--keep-open"),
    ),
)
TELNET: Final = Grammar("telnet", _f("telnet"), _o(_f("-l", "-e", "-n", "-b", "-X", "-k", "-S")))
RSYNC: Final = Grammar(
    "rsync",
    _f("rsync"),
    _o(
        _f("-e", "--rsh", "--exclude", "--include", "--chmod", "--chown", "-f", "--filter")
        | _f("--backup-dir", "--log-file-format", "--exclude-from", "--include-from", "-T")
        | _f("--temp-dir", "--out-format", "--log-file", "--files-from", "--rsync-path", "-B")
        | _f("--block-size", "--suffix", "--port", "--password-file", "--timeout", "--bwlimit")
        | _f("-M", "--remote-option", "--compare-dest", "--copy-dest", "--link-dest"),
        flags=_f("-a", "-v", "-z", "-r", "-P", "-n", "--dry-run", "--delete", "-u", "-h"),
        abbreviate=True,
    ),
)


# --- copying and moving files --------------------------------------------------------------------

# coreutils cp, mv, install and ln: the destination is the last operand, or the value of
# -t/--target-directory (then every operand is a source). `--backup[=CONTROL]` takes a value only
# attached; -S/--suffix, install's -m/-o/-g take one always.
_COPY_VALUES: Final = _f("-t", "--target-directory", "-S", "--suffix")
COPY: Final = Grammar(
    "cp",
    _f("cp", "gcp", "mv", "gmv", "ln", "gln", "link"),
    _o(
        _COPY_VALUES,
        _f("--backup", "--preserve", "--no-preserve", "--reflink", "--sparse", "--update")
        | _f("--context"),
        _f("-a", "-b", "-d", "-f", "-i", "-l", "-L", "-n", "-P", "-p", "-R", "-r", "-s", "-T")
        | _f("-u", "-v", "-x", "-Z", "--force", "--no-clobber", "--recursive", "--symbolic")
        | _f("--no-target-directory", "--archive", "--verbose", "--interactive", "--link"),
        abbreviate=True,
    ),
    why="coreutils cp(1), mv(1), ln(1)",
)
INSTALL: Final = Grammar(
    "install",
    _f("install", "ginstall"),
    _o(
        _COPY_VALUES | _f("-m", "--mode", "-o", "--owner", "-g", "--group", "--strip-program"),
        _f("--backup", "--preserve-context", "--context"),
        _f("-b", "-C", "--compare", "-c", "-D", "-d", "--directory", "-p", "-s", "--strip", "-T")
        | _f("-v", "--verbose", "-Z"),
        abbreviate=True,
    ),
    why="coreutils install(1)",
)


# --- package managers and publishers -------------------------------------------------------------

_NPM_VALUES: Final = _f(
    "-w",
    "--workspace",
    "--registry",
    "--tag",
    "--access",
    "--otp",
    "-C",
    "--prefix",
    "--userconfig",
    "--cache",
    "--loglevel",
    "-p",
    "--package",
    "--filter",
    "--dir",
    "--cwd",
)
_NPM_FLAGS: Final = _f(
    "-g",
    "--global",
    "-D",
    "--save-dev",
    "-S",
    "--save",
    "-E",
    "--save-exact",
    "-y",
    "--yes",
    "-f",
    "--force",
    "--dry-run",
    "-s",
    "--silent",
    "-q",
    "--quiet",
    "--no-save",
    "--ignore-scripts",
)
_NPM_OPTS: Final = _o(_NPM_VALUES, flags=_NPM_FLAGS)


def _npm(**subs: Grammar) -> Grammar:
    return Grammar("npm-subcommand", options=_NPM_OPTS, subcommands=_subs(**subs))


NPM: Final = Grammar(
    "npm",
    _f("npm", "pnpm", "yarn", "bun"),
    _NPM_OPTS,
    _subs(
        install=_npm(),
        ci=_npm(),
        publish=_npm(),
        unpublish=_npm(),
        deprecate=_npm(),
        dist_tag=_npm(add=_npm(), rm=_npm(), ls=_npm()),
        config=_npm(set=_npm(), get=_npm(), delete=_npm(), list=_npm(), edit=_npm()),
        exec=_npm(),
        run=_npm(),
        dlx=_npm(),
        x=_npm(),
        pkg=_npm(set=_npm(), get=_npm(), delete=_npm()),
        npm=_npm(publish=_npm(), login=_npm(), whoami=_npm(), info=_npm()),  # yarn npm publish
        owner=_npm(add=_npm(), rm=_npm(), ls=_npm()),
        access=_npm(),
        token=_npm(),
        version=_npm(),
        add=_npm(),
        remove=_npm(),
        link=_npm(),
        set=_npm(),  # `yarn config set` spelled `yarn set`
    ),
    aliases=MappingProxyType(
        {"i": "install", "in": "install", "isntall": "install", "c": "config"}
    ),
    open=True,
    default=_NPM_OPTS,
    why="npm's, pnpm's, yarn's and bun's shared options (npm help config)",
)

# `gh help`: every area takes -R/--repo; its verbs share these value flags.
_GH_VERBS: Final = _o(
    _f("-R", "--repo", "-t", "--title", "-n", "--notes", "-F", "--notes-file", "--target", "-b")
    | _f("--body", "--visibility", "-d", "--description", "-B", "--base", "-H", "--head", "-l")
    | _f("--label", "-a", "--assignee", "-m", "--milestone", "--json", "-q", "--jq", "-L")
    | _f("--template", "--limit", "-e", "--env", "-o", "--org", "-s", "--state", "-X")
    | _f("--method", "-f", "--field", "--raw-field", "--hostname", "--output", "-O"),
)
GH: Final = Grammar(
    "gh",
    _f("gh"),
    _o(_f("-R", "--repo", "--hostname")),
    _subs(
        **{
            area: Grammar("gh-area", options=_GH_VERBS, open=True, default=_GH_VERBS)
            for area in (
                "release",
                "repo",
                "pr",
                "issue",
                "secret",
                "variable",
                "workflow",
                "run",
                "gist",
                "auth",
                "ssh-key",
                "gpg-key",
                "label",
                "cache",
                "extension",
                "codespace",
                "project",
                "ruleset",
            )
        },
        api=Grammar("gh-api", options=_GH_VERBS),
    ),
    open=True,
    default=_GH_VERBS,
    why="`gh help` and each area's --help",
)

HELM: Final = Grammar(
    "helm",
    _f("helm"),
    _o(
        _f("-n", "--namespace", "--kube-context", "--kubeconfig", "--kube-apiserver")
        | _f("--kube-token", "--registry-config", "--repository-config", "--repository-cache")
        | _f("-f", "--values", "--set", "--set-string", "--set-file", "--version", "--timeout")
        | _f("-o", "--output", "--post-renderer", "--description", "--repo"),
        flags=_f("--dry-run", "--wait", "--atomic", "--install", "-i", "--force", "--debug"),
    ),
    open=True,
    default=_o(
        _f("-n", "--namespace", "--kube-context", "--kubeconfig", "-f", "--values", "--set")
        | _f("--set-string", "--set-file", "--version", "--timeout", "-o", "--output", "--repo")
    ),
)

# Go's flag package (terraform, tofu): `-name`, `-name=value`, `-name value`; no bundling.
TERRAFORM: Final = Grammar(
    "terraform",
    _f("terraform", "tofu", "terragrunt"),
    _o(_f("-chdir"), bundling=Bundling.NONE, ends_at=1),
    open=True,
    default=_o(
        _f("-var", "-var-file", "-target", "-replace", "-out", "-state", "-state-out", "-lock")
        | _f("-lock-timeout", "-parallelism", "-backend-config", "-chdir"),
        flags=_f("-auto-approve", "-destroy", "-refresh-only", "-input", "-no-color"),
        bundling=Bundling.NONE,
    ),
)


# --- python's launcher ---------------------------------------------------------------------------

PIP: Final = Grammar(
    "pip",
    _f("pip", "pip3"),
    _o(
        _f("-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-r", "--requirement")
        | _f("-c", "--constraint", "-t", "--target", "--prefix", "--root", "--proxy", "--cert")
        | _f("--log", "--cache-dir", "--python", "--trusted-host", "--platform", "-e")
        | _f("--editable", "--config-settings", "--global-option", "--src", "--upgrade-strategy"),
        flags=_f("-U", "--upgrade", "--user", "-q", "--quiet", "-v", "--verbose", "--pre"),
        abbreviate=True,
    ),
    open=True,
    default=_o(
        _f("-i", "--index-url", "--extra-index-url", "-r", "--requirement", "-t", "--target")
        | _f("-f", "--find-links", "-c", "--constraint", "-e", "--editable"),
        abbreviate=True,
    ),
    why="`pip help install`; pip's optparse takes unambiguous abbreviations",
)


# gatesh's own argv (`gatesh --help`, `gatesh config --help`): what self-protection reads to
# tell a verb only a person may run from a read-only view (`gatesh config --cwd .` is the view).
GATESH: Final = Grammar(
    "gatesh",
    _f("gatesh", "gatesh.py"),
    _o(
        _f("--shell"),
        # -c's command is the first operand: what follows it is that command's arguments
        flags=_f("-c", "-l", "--login", "-i", "--human", "-h", "--help", "--version", "--json"),
        ends_at=1,
    ),
    _subs(
        config=Grammar(
            "gatesh-config", options=_o(_f("--cwd"), flags=_f("--json", "-h", "--help"))
        ),
        install=Grammar(
            "gatesh-install",
            options=_o(
                _f("--codex", "--settings", "--prefix"),
                flags=_f("--uninstall", "--global", "--force", "--json", "-h", "--help"),
            ),
        ),
    ),
    open=True,
    why="gatesh's own usage (gatesh --help, gatesh VERB --help)",
)

GRAMMARS: Final[tuple[Grammar, ...]] = (
    GIT,
    KUBECTL,
    DOCKER,
    COMPOSE,
    CURL,
    WGET,
    SSH,
    SCP,
    SFTP,
    NC,
    TELNET,
    RSYNC,
    COPY,
    INSTALL,
    NPM,
    GH,
    HELM,
    TERRAFORM,
    PIP,
    GATESH,
)

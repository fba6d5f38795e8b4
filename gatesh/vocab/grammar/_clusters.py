"""Containers, clusters and infrastructure: kubectl, docker, podman, compose, helm, terraform."""

from __future__ import annotations

from typing import Final

from ._parse import Bundling, Grammar
from ._rows import _f, _o, _subs

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


# The options that say which cluster, context, namespace or configuration a kubectl (or helm)
# command acts on: where its change lands.
KUBE_TARGETS: Final = _f(
    "--context", "--cluster", "-n", "--namespace", "--kubeconfig", "--kube-context"
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

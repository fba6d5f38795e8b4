"""Containers, clusters and infrastructure as code: docker, kubectl, helm, terraform, pulumi, and
declarative syncs that prune (argocd, decK)."""

from __future__ import annotations

import re
from typing import Final

from gatesh.rater.builtin._base import A, C, Cmd, D, Hit, MatchResult, Rule, heads

DOCKER: Final = heads(
    "docker", "podman", "nerdctl", "docker-compose", "podman-compose", "ctr", "crictl", "lxc"
)
KUBE: Final = heads("kubectl", "oc", "k", "kubecolor")
SYNC: Final = heads("argocd", "deck")
IAC: Final = heads(
    "terraform",
    "tofu",
    "terragrunt",
    "pulumi",
    "cdk",
    "cdktf",
    "serverless",
    "sls",
    "sam",
    "helm",
    "helmfile",
)


_LXC_PRIVILEGED: Final = re.compile(r"security\.(?:privileged|nesting)[=\s]+(?:true|1|yes)\b")
# A pod spec that reaches into the node: its processes, network or files, or full privileges.
_HOST_SPEC: Final = re.compile(
    r"\\?[\"']?(?:hostPID|hostNetwork|hostIPC|privileged|hostPath|allowPrivilegeEscalation)"
    r"\\?[\"']?\s*:\s*(?:true|\{)",
    re.I,
)


def cluster_escape(c: Cmd) -> MatchResult:
    """A pod that gets the node itself: `kubectl debug node/…`, `kubectl run --privileged`, or
    an override that asks for the node's processes, network or files."""
    verb = c.argv.subcommand
    if verb == "debug" and any(p.lower().startswith(("node/", "nodes/")) for p in c.pos[1:]):
        return Hit(detail="kubectl debug node/… runs a pod with the node's root file system")
    if verb in ("run", "create", "debug", "apply", "patch", "replace") and (
        c.has("--privileged")
        or any(_HOST_SPEC.search(v) for v in c.opt_values("--overrides", "-p", "--patch"))
    ):
        return Hit(detail=f"kubectl {verb} asks for the node's processes, network or privileges")
    return None


_DAEMON_SOCKET: Final = re.compile(r"(?:docker|containerd|podman|crio|cri-dockerd)\.sock\b")


def daemon_socket(c: Cmd) -> MatchResult:
    """A request written straight to a container daemon's socket: whoever can write it is root
    on this machine, and no `docker` command is there for the gate to read."""
    if c.head in ("curl", "curlie"):
        values = c.opt_values("--unix-socket", "--abstract-unix-socket")
    elif c.head in ("nc", "ncat", "netcat"):
        values = [p for p in c.pos if c.has("-U", "--unixsock")]
    else:  # socat, websocat: their address words
        values = list(c.args)
    sock = next((v for v in values if _DAEMON_SOCKET.search(v)), "")
    return Hit(detail=f"{c.head} talks to {sock} directly") if sock else None


def _docker_words(c: Cmd) -> list[str]:
    return [p.lower() for p in c.pos[:3]]


def docker_destroy(c: Cmd) -> MatchResult:
    w = _docker_words(c)
    if not w or c.has("--help") or (c.head == "podman" and c.has("-h")):
        return None  # help text only
    if w[0] in ("builder", "buildx") and len(w) > 1 and w[1] == "prune":
        return None  # the build cache, which the next build recreates; images and volumes stay
    if (
        w[0] in ("system", "volume", "image", "container", "network")
        and len(w) > 1
        and w[1] == "prune"
    ):
        vols = (w[0] in ("system",) and c.has("--volumes")) or w[0] == "volume"
        return Hit(
            detail=f"{w[0]} prune deletes {'volumes and their data' if vols else 'unused ' + w[0] + 's'}"
        )
    if w[0] == "volume" and len(w) > 1 and w[1] in ("rm", "remove"):
        return Hit(detail="deletes volumes and the data in them")
    if w[0] in ("rm", "container") and (w[0] == "rm" or (len(w) > 1 and w[1] in ("rm", "remove"))):
        return Hit(
            detail="removes containers" + (" and their volumes" if c.has("-v", "--volumes") else "")
        )
    if w[0] in ("rmi",) or (w[0] == "image" and len(w) > 1 and w[1] in ("rm", "remove")):
        return Hit(detail="deletes images")
    if w[0] in ("kill", "stop") or (
        w[0] == "container" and len(w) > 1 and w[1] in ("kill", "stop")
    ):
        return Hit(detail="stops running containers")
    if w[0] == "compose" and len(w) > 1 and w[1] == "down" and c.has("-v", "--volumes", "--rmi"):
        return Hit(detail="tears down the services and deletes their volumes")
    if (
        c.head in ("docker-compose", "podman-compose")
        and w[0] == "down"
        and c.has("-v", "--volumes", "--rmi")
    ):
        return Hit(detail="tears down the services and deletes their volumes")
    if w[0] == "compose" and len(w) > 1 and w[1] == "rm":
        return Hit(detail="removes service containers")
    return None


def docker_host_escape(c: Cmd) -> MatchResult:
    w = _docker_words(c)
    if c.head in ("lxc", "incus") and _LXC_PRIVILEGED.search(c.low):
        return True
    if not w or w[0] not in ("run", "create", "exec", "container"):
        return None
    mounts = c.opt_values("-v", "--volume", "--mount")
    if any(re.search(r"(?:src|source)=/(?:,|$)", m) for m in mounts):
        return True
    root_mount = any(
        m.split(":", 1)[0] in ("/", "/etc", "/root", "/var/run/docker.sock")
        or "source=/," in m
        or m.startswith("type=bind,source=/,")
        for m in mounts
    )
    priv = (
        c.has("--privileged")
        or any(a in ("--pid=host", "--net=host --privileged", "--userns=host") for a in c.args)
        or "--cap-add=sys_admin" in c.low
    )
    if root_mount or (priv and w[0] in ("run", "create")):
        return True
    return None


def kubectl(c: Cmd) -> MatchResult:
    verb = c.sub(0)
    if verb == "delete":
        kinds = [p.lower() for p in c.pos[1:]]
        if any(
            k.split("/")[0]
            in (
                "namespace",
                "namespaces",
                "ns",
                "pv",
                "persistentvolume",
                "persistentvolumes",
                "crd",
                "customresourcedefinition",
                "customresourcedefinitions",
                "node",
                "nodes",
                "all",
            )
            for k in kinds
        ) or c.has("--all", "-A", "--all-namespaces"):
            return Hit(
                severity=C, detail="deletes a namespace, all resources or cluster-wide objects"
            )
        return Hit(detail="deletes cluster resources")
    if verb in ("drain", "cordon", "taint"):
        return Hit(detail=f"{verb}s a node")
    if verb == "scale" and any(a in ("--replicas=0",) for a in c.args):
        return Hit(detail="scales a workload to zero")
    if verb == "apply" and c.has("--prune"):
        return Hit(detail="apply --prune deletes every matching resource the files do not list")
    if verb == "replace" and c.has("--force"):
        return Hit(detail="deletes and recreates resources")
    if verb == "rollout" and c.sub(1) in ("undo", "restart"):
        return Hit(detail=f"rollout {c.sub(1)}s a live workload")
    if verb == "get" and any(p.lower().split("/")[0] in ("secret", "secrets") for p in c.pos[1:2]):
        return Hit(
            detail="reads cluster secrets", remedy="read only the non-secret configuration you need"
        )
    return None


def sync_prune(c: Cmd) -> MatchResult:
    """Tools that make a live system match a file and delete whatever the file does not list."""
    words = [p.lower() for p in c.pos[:2]]
    if c.head == "deck":  # Kong's decK; `gateway` is the newer spelling of the same verbs
        verb = (
            words[1] if words[:1] == ["gateway"] and len(words) > 1 else (words[0] if words else "")
        )
        if verb == "reset":
            return Hit(severity=C, detail="deck reset deletes every entity on the Kong gateway")
        if verb == "sync":
            return Hit(detail="deck sync deletes every gateway entity the state file does not list")
        return None
    if c.head == "argocd" and words == ["app", "sync"] and c.has("--prune"):
        return Hit(
            detail="argocd app sync --prune deletes live resources missing from the repository"
        )
    return None


def iac(c: Cmd) -> MatchResult:
    h, verb = c.head, c.sub(0)
    if h in ("terraform", "tofu", "terragrunt", "cdktf"):
        if verb == "destroy" or (
            (verb in ("apply", "plan") and c.has("-destroy")) and verb != "plan"
        ):
            return Hit(severity=C, detail=f"{h} destroy tears down the managed infrastructure")
        if verb == "apply" and c.has("-auto-approve", "--auto-approve"):
            return Hit(detail="applies infrastructure changes without a reviewed plan")
        if verb == "state" and c.sub(1) in ("rm", "mv", "push", "replace-provider"):
            return Hit(detail="rewrites the terraform state")
        if verb in ("taint", "force-unlock") or (verb == "workspace" and c.sub(1) == "delete"):
            return Hit(detail=f"terraform {verb} changes shared state")
        return None
    if h == "pulumi":
        if verb == "destroy" or (verb == "stack" and c.sub(1) == "rm"):
            return Hit(severity=C, detail="pulumi destroy tears down the stack's infrastructure")
        if verb == "up" and c.has("--yes", "-y"):
            return Hit(detail="applies infrastructure changes without a preview")
        return None
    if h in ("cdk", "serverless", "sls", "sam") and verb in ("destroy", "remove", "delete"):
        return Hit(severity=C, detail=f"{h} {verb} tears down deployed infrastructure")
    if h in ("helm", "helmfile") and verb in (
        "uninstall",
        "delete",
        "del",
        "un",
        "destroy",
        "rollback",
    ):
        return Hit(detail=f"helm {verb} removes or rolls back a release")
    return None


RULES: tuple[Rule, ...] = (
    Rule(
        "containers.docker-destroy",
        D,
        "docker {detail}.",
        docker_destroy,
        heads=DOCKER,
        remedy="remove only the containers or images this task created, by name",
        examples=(
            "docker system prune -af",
            "docker volume rm data",
            "docker rm -f web",
            "docker rmi app:old",
            "docker compose down -v",
        ),
        counter=(
            "docker ps -a",
            "docker build -t app .",
            "docker compose up -d",
            "docker compose down",
            "docker buildx prune",
            "docker builder prune -f",
            "docker rm --help",
            "podman rmi -h",
        ),
    ),
    Rule(
        "containers.host-escape",
        A,
        "A container with the host's root mounted or full privileges escapes all isolation.",
        docker_host_escape,
        heads=DOCKER,
        examples=(
            "docker run -v /:/mnt --rm -it alpine chroot /mnt sh",
            "docker run --privileged -it ubuntu",
            "lxc config set c1 security.privileged true",
            "lxc launch ubuntu c1 -c security.privileged=true",
        ),
        counter=("docker run --rm -v $(pwd):/src node:20 npm test",),
    ),
    Rule(
        "containers.daemon-socket",
        A,
        "This reaches the container daemon without a command the gate can read ({detail}); "
        "its socket gives root on this machine.",
        daemon_socket,
        heads=heads("curl", "curlie", "nc", "ncat", "netcat", "socat", "websocat"),
        examples=(
            "curl --unix-socket /var/run/docker.sock http://localhost/containers/json",
            "curl -s --unix-socket=/run/containerd/containerd.sock http://x/v1",
            "socat - UNIX-CONNECT:/var/run/docker.sock",
            "nc -U /var/run/docker.sock",
        ),
        counter=(
            "curl --unix-socket /tmp/app.sock http://localhost/health",
            "docker ps",
            "socat - UNIX-CONNECT:/tmp/x.sock",
        ),
    ),
    Rule(
        "containers.cluster-escape",
        A,
        "A pod with the node's processes, files or full privileges escapes the cluster's "
        "isolation ({detail}).",
        cluster_escape,
        heads=KUBE,
        examples=(
            'kubectl run x --image=alpine --overrides=\'{"spec":{"hostPID":true}}\'',
            "kubectl debug node/n1 -it --image=alpine -- chroot /host",
            "kubectl run x --image=alpine --privileged -- sh",
            "kubectl -n kube-system debug nodes/worker-2 --image=busybox",
        ),
        counter=(
            "kubectl run web --image=nginx",
            "kubectl debug pod/web -it --image=busybox",
            'kubectl run x --image=alpine --overrides=\'{"spec":{"hostPID":false}}\'',
        ),
    ),
    Rule(
        "containers.kubectl",
        D,
        "kubectl {detail}.",
        kubectl,
        heads=KUBE,
        remedy="use --dry-run=client first and name the exact resource",
        examples=(
            "kubectl delete pod web-1",
            "kubectl delete namespace prod",
            "kubectl drain node-1",
            "kubectl apply --prune -l app=web -f k8s/",
            "kubectl get secret db -o yaml",
        ),
        counter=("kubectl get pods", "kubectl apply -f app.yaml", "kubectl describe pod x"),
    ),
    Rule(
        "containers.sync-prune",
        D,
        "This {detail}.",
        sync_prune,
        heads=SYNC,
        remedy="run the tool's diff first and sync only what it lists, by tag or name",
        examples=(
            "deck sync",
            "deck gateway sync --select-tag team-a",
            "deck gateway reset",
            "argocd app sync web --prune",
        ),
        counter=(
            "deck diff",
            "deck gateway diff",
            "deck dump",
            "argocd app sync web",
            "argocd app list",
        ),
    ),
    Rule(
        "containers.iac",
        D,
        "This {detail}.",
        iac,
        heads=IAC,
        remedy="run plan/preview first and apply the reviewed plan",
        examples=(
            "terraform destroy",
            "terraform apply -auto-approve",
            "pulumi destroy",
            "helm uninstall web",
            "terraform state rm aws_instance.x",
        ),
        counter=("terraform plan", "terraform init", "helm list", "pulumi preview"),
    ),
)

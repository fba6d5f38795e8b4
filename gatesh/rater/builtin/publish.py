"""Deploy and publish: effects on state other people share (S3.2 catastrophic: a third party holds
what changed, and nothing in the session takes it back).

One family, by mechanism: an image pushed to a registry; a release, a repository's visibility or a
package's tags changed on a hosting service; an application deployed to a hosting platform; a
cluster or fleet named as production changed (kubectl, helm, ansible). Each row's programs are
read through their grammar (:mod:`gatesh.vocab.grammar`), so ``docker -H x push``, ``kubectl
apply -f k.yaml --context=prod`` and ``gh repo edit --visibility=public`` are what they say.
Building, packing, previewing, planning and dry runs stay local and are the rows' counters.
"""

from __future__ import annotations

import re
from typing import Final

from gatesh.rater.builtin._base import C, Cmd, Hit, MatchResult, Rule, heads
from gatesh.vocab.grammar import KUBE_TARGETS
from gatesh.vocab.programs.info import CLI_INFO

# A name that says production: a context, namespace, cluster, inventory, stage or environment.
PRODUCTION: Final = re.compile(
    r"(?:^|[-_./:@=\s])(?:prod|production|prd|live)(?:$|[-_./:@\d\s])", re.I
)
_DRY: Final = ("--dry-run", "--dryrun", "--check", "-C", "--syntax-check", "--list-hosts")


def _dry(c: Cmd) -> bool:
    return c.has(*_DRY) or any(a.startswith("--dry-run=") and a != "--dry-run=none" for a in c.args)


# --- images --------------------------------------------------------------------------------------

_IMAGE_TOOLS: Final = heads("docker", "podman", "nerdctl", "skopeo", "crane", "oras", "buildah")


def image_push(c: Cmd) -> MatchResult:
    if c.has("-h", "--help"):
        return None  # help text only
    path = c.argv.path
    if c.head in ("docker", "podman", "nerdctl", "buildah"):
        if path[:1] == ("push",) or path[:2] in (("image", "push"), ("manifest", "push")):
            return Hit(detail=f"{c.head} {' '.join(path)} publishes an image to a registry")
        if path[:2] == ("compose", "push"):
            return Hit(detail="docker compose push publishes the services' images")
        if path[:1] in (("build",), ("buildx",)) and (
            c.has("--push")
            or any("type=registry" in v or "push=true" in v for v in c.opt_values("-o", "--output"))
        ):
            return Hit(detail=f"{c.head} {' '.join(path)} --push publishes the image it builds")
        return None
    if c.head == "skopeo" and c.sub(0) == "copy" and c.pos[-1:] and "docker://" in c.pos[-1]:
        return Hit(detail="skopeo copy publishes an image to a registry")
    if c.head in ("crane", "oras") and c.sub(0) in ("push", "copy", "cp", "tag", "delete"):
        return Hit(detail=f"{c.head} {c.sub(0)} changes an image in a registry")
    return None


# --- hosting services: releases, visibility, package tags --------------------------------------


def hosted(c: Cmd) -> MatchResult:
    path = c.argv.path
    if c.head == "gh":
        if path[:1] == ("release",) and c.sub(1) in ("create", "upload", "edit", "delete-asset"):
            return Hit(detail=f"gh release {c.sub(1)} changes a published release")
        if path[:2] == ("repo", "edit") and c.opt_value("--visibility") is not None:
            return Hit(detail=f"gh repo edit --visibility {c.opt_value('--visibility')}")
        if path[:2] == ("repo", "create") and c.has("--public"):
            return Hit(detail="gh repo create --public publishes a repository")
        return None
    if c.head in ("npm", "pnpm", "yarn", "bun"):
        if path[:1] == ("dist-tag",) and c.sub(1) in ("add", "rm", "remove", "set"):
            return Hit(detail=f"{c.head} dist-tag {c.sub(1)} moves what users install")
        if path[:1] in (("owner",), ("access",)) and len(path) > 1 and c.sub(1) != "ls":
            return Hit(detail=f"{c.head} {' '.join(path[:2])} changes who owns or sees a package")
        if path[:2] in (("npm", "publish"), ("npm", "tag"), ("npm", "unpublish")):
            return Hit(detail=f"yarn {' '.join(path[:2])} publishes to the registry")
    return None


# --- hosting platforms: deploys --------------------------------------------------------------

# (program, subcommand words that deploy): an empty tuple means the bare program deploys.
_DEPLOYS: Final[dict[str, tuple[tuple[str, ...], ...]]] = {
    "vercel": ((), ("deploy",), ("promote",), ("rollback",), ("alias",), ("redeploy",)),
    "netlify": (("deploy",),),
    "firebase": (("deploy",),),
    "fly": (("deploy",), ("releases",)),
    "flyctl": (("deploy",),),
    "wrangler": (("deploy",), ("publish",), ("pages", "deploy"), ("versions", "deploy")),
    "railway": (("up",), ("redeploy",)),
    "serverless": (("deploy",),),
    "sls": (("deploy",),),
    "cdk": (("deploy",),),
    "sam": (("deploy",),),
    "amplify": (("publish",), ("push",)),
    "eb": (("deploy",),),
    "kamal": (("deploy",), ("rollback",)),
    "heroku": (("container:release",), ("releases:rollback",)),
    "gcloud": (("app", "deploy"), ("run", "deploy"), ("functions", "deploy")),
    "surge": ((),),
}
_LOCAL_VERBS: Final = frozenset(
    {"dev", "build", "login", "logout", "ls", "list", "env", "init", "link", "whoami", "help"}
    | {"serve", "emulators:start", "preview", "logs", "status", "pull", "inspect", "diff"}
)


def deploy(c: Cmd) -> MatchResult:
    forms = _DEPLOYS.get(c.head)
    if forms is None or _dry(c) or c.has(*CLI_INFO):
        return None
    words = tuple(p.lower() for p in c.pos[:2])
    for form in forms:
        if form and words[: len(form)] == form:
            return Hit(detail=f"{c.head} {' '.join(form)} deploys to a hosting platform")
        if not form and (not words or words[0] not in _LOCAL_VERBS):
            if c.head == "vercel" and words and not words[0].startswith((".", "/")):
                continue  # `vercel X`: X is a subcommand it does not deploy with
            return Hit(detail=f"{c.head} deploys to a hosting platform")
    return None


# --- production clusters and fleets ---------------------------------------------------------

_KUBE_CHANGES: Final = frozenset(
    {"apply", "create", "replace", "patch", "edit", "set", "scale", "rollout", "label"}
    | {"annotate", "expose", "run", "autoscale", "delete", "drain", "cordon", "taint"}
)


def _prod_context(c: Cmd) -> str:
    """The production name ``c`` is pointed at (context, namespace, cluster, kubeconfig, or a
    context chosen earlier in the line), or ''."""
    for v in c.opt_values(*KUBE_TARGETS):
        if PRODUCTION.search(v):
            return v
    for a in c.sc.assignments:
        name, _, value = a.partition("=")
        if name in ("KUBECONFIG", "KUBE_CONTEXT", "HELM_KUBECONTEXT") and PRODUCTION.search(value):
            return value
    for earlier in c.ctx.cmds[: c.index]:
        if earlier.head == c.head and earlier.argv.path[:2] == ("config", "use-context"):
            name = next(iter(earlier.argv.operands), "")
            if PRODUCTION.search(name):
                return name
    return ""


def production(c: Cmd) -> MatchResult:
    if _dry(c) or c.has("--help", "-h"):
        return None
    if c.head in ("kubectl", "oc", "k", "kubecolor"):
        if c.argv.subcommand in _KUBE_CHANGES:
            where = _prod_context(c)
            if where:
                return Hit(detail=f"kubectl {c.argv.subcommand} changes the production {where}")
        return None
    if c.head in ("helm", "helmfile"):
        verb = c.sub(0)
        if verb in ("install", "upgrade", "uninstall", "rollback", "delete", "apply", "sync"):
            where = _prod_context(c)
            if where:
                return Hit(detail=f"helm {verb} changes the production {where}")
        return None
    if c.head == "ansible-playbook":
        for v in (*c.opt_values("-i", "--inventory", "-l", "--limit", "-e", "--extra-vars"),):
            if PRODUCTION.search(v):
                return Hit(detail=f"ansible-playbook runs against {v}")
    return None


RULES: tuple[Rule, ...] = (
    Rule(
        "publish.image-push",
        C,
        "This publishes to a shared registry ({detail}); others pull it at once.",
        image_push,
        heads=_IMAGE_TOOLS,
        examples=(
            "docker push myorg/app:latest",
            "podman push myorg/app",
            "docker -H tcp://build:2375 push myorg/app",
            "docker buildx build --push -t myorg/app .",
            "docker image push myorg/app:1.2",
            "docker build -t myorg/app --output type=registry .",
        ),
        counter=(
            "docker build -t myorg/app .",
            "docker buildx build --load -t app .",
            "docker pull alpine",
            "docker images",
            "crane push -h",
        ),
    ),
    Rule(
        "publish.hosted",
        C,
        "This changes what others see on a hosting service ({detail}).",
        hosted,
        heads=heads("gh", "npm", "pnpm", "yarn", "bun"),
        examples=(
            "gh release create v1.0 dist/*",
            "gh release upload v1.0 app.tgz",
            "gh repo edit --visibility public",
            "gh repo edit me/x --visibility=public --accept-visibility-change-consequences",
            "npm dist-tag add pkg@1.0.0 latest",
            "yarn npm publish",
            "gh repo create x --public",
        ),
        counter=(
            "gh release list",
            "gh release view v1.0",
            "gh repo view",
            "npm dist-tag ls pkg",
            "gh repo create x --private",
        ),
    ),
    Rule(
        "publish.deploy",
        C,
        "This deploys to a hosting platform ({detail}): users get it at once.",
        deploy,
        heads=frozenset(_DEPLOYS),
        examples=(
            "vercel deploy --prod",
            "vercel --prod",
            "firebase deploy",
            "fly deploy",
            "wrangler deploy",
            "netlify deploy --prod",
            "gcloud app deploy",
            "wrangler pages deploy dist",
        ),
        counter=(
            "vercel dev",
            "vercel build",
            "firebase emulators:start",
            "fly logs",
            "wrangler dev",
            "netlify status",
            "serverless deploy --dry-run",
        ),
    ),
    Rule(
        "publish.production",
        C,
        "This changes production ({detail}).",
        production,
        heads=heads("kubectl", "oc", "k", "kubecolor", "helm", "helmfile", "ansible-playbook"),
        examples=(
            "kubectl --context production apply -f k8s/",
            "kubectl apply -f k8s/ --context=prod-eu",
            "kubectl -n prod scale deploy api --replicas=3",
            "kubectl config use-context prod && kubectl apply -f k8s/",
            "KUBECONFIG=~/.kube/prod.yaml kubectl rollout restart deploy/api",
            "helm upgrade web ./chart --kube-context prod",
            "ansible-playbook -i production site.yml",
            "ansible-playbook -i inventories/prod/hosts deploy.yml --limit web",
        ),
        counter=(
            "kubectl --context kind-dev apply -f k8s/",
            "kubectl --context prod get pods",
            "kubectl apply -f k8s/ --context=prod --dry-run=client",
            "ansible-playbook -i production site.yml --check",
            "ansible-playbook -i staging site.yml",
            "helm list --kube-context prod",
        ),
    ),
)

__all__ = ["PRODUCTION", "RULES"]

"""Cloud CLIs and hosted services: delete-class verbs on remote resources.

A deleted cloud resource cannot be brought back from inside the session (catastrophic); other
tools' delete verbs and HTTP DELETE calls are destructive.
"""

from __future__ import annotations

import re
from typing import Final

from gatesh.rater.builtin._base import A, C, Cmd, D, Hit, MatchResult, Rule, heads
from gatesh.rater.builtin.generic import service_verb_word

CLOUD: Final = heads(
    "aws",
    "gcloud",
    "gsutil",
    "az",
    "azcopy",
    "doctl",
    "linode-cli",
    "hcloud",
    "oci",
    "ibmcloud",
    "scw",
    "vultr-cli",
    "flyctl",
    "fly",
    "heroku",
    "vercel",
    "netlify",
    "wrangler",
    "firebase",
    "supabase",
    "railway",
    "render",
    "s3cmd",
    "b2",
    "eksctl",
    "gh",
    "glab",
)
_DELETE_VERB: Final = re.compile(
    r"^(?:[\w-]*[-_:])?(?:delete|del|remove|rm|rb|destroy|terminate|purge|deregister|revoke|drop|"
    r"truncate|wipe|erase|flush|prune|kill|reset|unsubscribe|disable|detach|stop|uninstall|forget|"
    r"rdelete|compact|cleanup|clear|archive|decommission|release|cancel|expire)(?:[-_:][\w-]*)?$",
    re.I,
)
_SAFE_VERBS: Final = re.compile(
    r"^(?:list|get|describe|show|status|view|create|help|version|login|ls|cat|"
    r"info|inspect|search|watch|logs|tail|wait|validate|test|diff|plan|preview)",
    re.I,
)
_DEFENCE: Final = re.compile(
    r"^(?:stop-logging|delete-trail|delete-detector|disable-|update-trail|"
    r"delete-flow-logs|put-event-selectors|delete-log-group|delete-config-rule|"
    r"delete-configuration-recorder|stop-configuration-recorder)",
    re.I,
)


def _aws_operation(c: Cmd, svc: str, op: str) -> MatchResult:
    """The verdict on ``aws SVC OP``: turning off security logging or detection, deleting, stopping
    or changing live resources, or creating lasting credentials."""
    if _DEFENCE.match(op) and svc in (
        "cloudtrail",
        "guardduty",
        "ec2",
        "logs",
        "config",
        "securityhub",
        "inspector2",
        "macie2",
    ):
        return Hit(severity=A, detail=f"aws {svc} {op} turns off security logging or detection")
    if svc == "s3" and op in ("rm", "rb", "mv"):
        return Hit(detail=f"aws s3 {op} deletes objects or buckets")
    if svc == "s3" and op == "sync" and c.has("--delete"):
        return Hit(
            severity=D, detail="aws s3 sync --delete removes objects missing from the source"
        )
    if _DELETE_VERB.match(op) and not op.startswith(
        ("stop-", "disable-", "cancel-", "release-", "reset-", "detach-")
    ):
        return Hit(detail=f"aws {svc} {op}")
    if op.startswith(("stop-", "disable-", "detach-", "reset-", "cancel-")):
        return Hit(severity=D, detail=f"aws {svc} {op}")
    if op.startswith(
        (
            "put-secret",
            "update-secret",
            "rotate-secret",
            "change-resource-record-sets",
            "create-invalidation",
            "restore-",
            "replace-",
            "modify-db",
            "reboot-",
            "update-function-code",
            "put-bucket-policy",
            "put-bucket-acl",
            "update-stack",
        )
    ):
        return Hit(severity=D, detail=f"aws {svc} {op} changes live resources")
    if svc == "iam" and op.startswith(
        (
            "create-access-key",
            "create-login-profile",
            "attach-user-policy",
            "put-user-policy",
            "add-user-to-group",
            "create-user",
        )
    ):
        return Hit(severity=A, detail=f"aws iam {op} creates lasting credentials or privileges")
    return None


def cloud_delete(c: Cmd) -> MatchResult:
    h = c.head
    words = [p for p in c.pos[:6] if not p.startswith(("s3://", "gs://", "http", "arn:", "/"))]
    if c.has("--dryrun", "--dry-run", "--help", "-h", "--what-if"):
        return None
    if h == "gh" and c.sub(0) == "api":  # the request's method, not a word of the path, says it
        method = (c.opt_value("-X", "--method") or "GET").upper()
        if method == "DELETE":
            return Hit(detail=f"gh api -X DELETE {' '.join(c.pos[1:2])}".rstrip())
        return None
    if h == "aws":
        words = list(c.pos)  # read through the aws grammar (gatesh.vocab.grammar)
    if h in ("aws",) and len(words) >= 2:
        return _aws_operation(c, words[0].lower(), words[1].lower())
    if h in ("gsutil",):
        verb = words[0].lower() if words else ""
        if verb in ("rm", "rb") or (verb == "rsync" and c.has("-d")):
            return Hit(detail=f"gsutil {verb} deletes objects or buckets")
        return None
    for k, w in enumerate(words[:5]):
        wl = w.lower()
        if any(_SAFE_VERBS.match(n) or n.lower() == "download" for n in words[k + 1 : k + 2]):
            continue  # a noun before a reading verb: `gh release download v1` fetches the release
        if (_DELETE_VERB.match(wl) or service_verb_word(wl)) and not _SAFE_VERBS.match(wl):
            sev = (
                C
                if wl.startswith(
                    (
                        "delete",
                        "destroy",
                        "terminate",
                        "purge",
                        "rm",
                        "remove",
                        "rb",
                        "drop",
                        "wipe",
                        "del",
                    )
                )
                else D
            )
            return Hit(severity=sev, detail=f"{h} {' '.join(words[: words.index(w) + 1])}")
    return None


RULES: tuple[Rule, ...] = (
    Rule(
        "cloud.delete",
        C,
        "This deletes or stops cloud resources ({detail}), which cannot be undone from here.",
        cloud_delete,
        heads=CLOUD,
        remedy="name the exact resource and keep a snapshot of it first",
        examples=(
            "aws s3 rm s3://bucket --recursive",
            "aws ec2 terminate-instances --instance-ids i-1",
            "gcloud compute instances delete vm-1",
            "az group delete -n rg",
            "gsutil rm gs://b/f",
            "aws cloudtrail stop-logging --name t",
            "gh repo delete me/x",
            "gh api -X DELETE /repos/owner/repo",
            "gh api --method=delete repos/o/r",
            "gcloud apigee deployments undeploy --api=a",
            "az acr repository untag --name r --image x:1",
            "gh release delete v1.0",
        ),
        counter=(
            "aws s3 ls",
            "gcloud compute instances list",
            "az vm show -n x",
            "aws s3 rm s3://b/x --dryrun",
            "gh pr create",
            "gh release download v1.0",
            "gh release list",
            "gh api /repos/owner/repo",
        ),
    ),
)

"""Any other tool: a delete-class subcommand, or an HTTP DELETE to an API.

Service CLIs are too many to list, but they share a grammar: ``TOOL [GROUP…] VERB NAME``. A verb
that deletes (``delete``, ``rm``, ``purge``, ``delete-user``, ``kv:key delete`` …) among the first
positional words is destructive. Tools whose positional words are data (text, paths, patterns)
are excluded by head (:data:`gatesh.vocab.programs.verbless.NO_DELETE_VERBS`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Final

from gatesh._types import Direction
from gatesh.rater.builtin._base import A, Cmd, D, Hit, MatchResult, Rule, among, except_, heads
from gatesh.vocab.programs.verbless import NO_DELETE_VERBS

_VERB: Final = re.compile(
    r"^(?:[a-z0-9]+[-_:])*(?:delete|del|remove|rm|rb|destroy|terminate|purge|deregister|revoke|drop|"
    r"truncate|wipe|erase|flushall|flushdb|prune|uninstall|forget|rdelete|dedupe|disable|archive|"
    r"unregister|decommission|evict|obliterate|nuke|reset|force_reset|clear|clean|rollback|undeploy|untag|"
    r"roll|break-lock|recreate|kill|cancel|deactivate|revert|overwrite|restore|unset|compact|unassign|unbind|"
    r"unpublish|deprovision)(?:[-_:][a-z0-9-]+)*$|^dodelete$",
    re.I,
)
_HTTP_DELETE_PATH: Final = re.compile(
    r"/(?:dodelete|_delete_by_query|delete[-_]?\w*|_close|_flush|purge|wipe)(?:[/?]|$)|[?&](?:action|op)=delete",
    re.I,
)


@functools.lru_cache(
    maxsize=4096
)  # a pure function of the word; the same verbs recur command after command
def service_verb_word(word: str) -> bool:
    """Whether ``word`` is a delete-class verb (shared with the cloud table)."""
    return _VERB.match(word) is not None


# A read verb right after a delete-class noun-verb lists or shows those things instead.
_READ_VERBS: Final = frozenset(
    {"get", "describe", "list", "ls", "show", "status", "info", "inspect", "view"}
)


# Verbs that lose nothing a person made when their object is the tool's own output (S3.2), each
# with why. The judgement is the same one the gate makes for the tools it knows by name: `cargo
# clean`, `make clean`, `npm cache clean`, `kill PID` and `pkill NAME` run.
_CACHE: Final = re.compile(r"cache", re.I)  # a cache is rebuilt by its tool on the next use
_SOFT_FIRST: Final = {
    "clean": "a tool's own `clean` removes the build output and caches it generates itself",
    "kill": "stops the tool's own processes, tasks or sessions, as kill and pkill do; no data is deleted",
    "deactivate": "leaves an environment (a virtualenv, a conda or pyenv environment) in this shell",
    "disable": "turns off something the tool's own `enable` turns on again; nothing is deleted",
}
# Process nouns: `kill-server`, `kill-session`, `kill-pane` stop processes, whatever the position.
_PROCESS_KILL: Final = re.compile(
    r"^kill[-_](?:server|session|sessions|pane|window|client|task|tasks|job)$", re.I
)
# What a `disable` may be applied to and turned on again, with nothing lost: add-ons of the tool.
_TOGGLES: Final = re.compile(
    r"(?:^|[-_:])(?:plugins?|extensions?|modules?|features?|flags?|toggles?|repos?"
    r"|repository|repositories|copr|maintenance|themes?|addons?|add-ons?)(?:$|[-_:])",
    re.I,
)
# After `restore`, these words make it a noun (`velero restore create` names a restore to run).
_NOUN_NEXT: Final = frozenset({"create", "new", "describe", "logs"})


# A tool or object that protects the machine: turning it off or stopping it weakens a defence
# (S3.2 attack), whatever the verb's usual harmlessness.
_DEFENCE: Final = re.compile(
    r"defen[cs]e|firewall|\bfw\b|ufw|antivirus|\bav\b|edr|falcon|sentinel|selinux|apparmor|"
    r"audit|protect|guard|shield|clam|wazuh|osquery|crowdstrike|sophos|eset|mcafee|"
    r"kaspersky|defender|gatekeeper|sip\b|quarantine|integrity|tripwire|aide\b|fail2ban",
    re.I,
)


def _soft(c: Cmd, k: int, w: str, pos: list[str]) -> bool:
    """Whether the delete-class verb ``w`` at positional ``k`` loses nothing a person made."""
    low = w.lower()
    if _DEFENCE.search(c.head) or any(_DEFENCE.search(p) for p in pos[: k + 2]):
        return False
    near = [w, *pos[max(0, k - 1) : k], *pos[k + 1 : k + 2]]
    if _CACHE.search(" ".join(near)) and re.match(
        r"^(?:[a-z0-9]+[-_:])*(?:clean|clear|purge|prune|rm|remove|delete)"
        r"(?:[-_:][a-z0-9-]+)*$",
        low,
    ):
        return True  # `uv cache clean`, `dnf clean dbcache`, `fastlane run clean_cocoapods_cache`
    if _PROCESS_KILL.match(low):
        return True
    if c.sc.privileged:
        return False  # under sudo the tool's own things are the machine's
    if low == "clean" and k == 0 and len(pos) == 1:
        return True  # `bazel clean`, `flutter clean`: nothing after it names what else to clean
    if low in ("kill", "deactivate") and k == 0:
        return True
    if low.endswith("disable") and (
        k == 0 or _TOGGLES.search(pos[k - 1]) or _TOGGLES.search(c.head) or _TOGGLES.search(low)
    ):
        return True  # `corepack disable`, `unleash features disable x`, `magento module:disable x`
    return False


def _restores_into_named_path(c: Cmd) -> bool:
    """A restore whose target the reader knows it writes (``restic restore --target DIR``): what is
    written there is judged by the path effects (system.write, files.work-loss)."""
    return any(e.command == c.index and e.direction is Direction.WRITE for e in c.ctx.facts.paths)


def _long_options(c: Cmd) -> Iterator[str]:
    """``c``'s long options up to ``=``, in the order written (the ``--x`` members of ``c.flags``)."""
    for a in c.args:
        if a == "--":
            return
        if a.startswith("--"):
            yield a.split("=", 1)[0]


def service_verb(c: Cmd) -> MatchResult:
    if c.head in NO_DELETE_VERBS or c.has("--dry-run", "--dryrun", "--help", "-h"):
        return None
    argv0 = c.sc.argv[0].text if c.sc.argv else ""
    if "/" in argv0 and c.absent(argv0):
        return None  # a program that is not there runs nothing, whatever its words
    if (
        "-" in c.head
        and service_verb_word(c.head)
        and not c.head.endswith(
            ("-reset", "-clean", "-clear", "-restore", "-cancel", "-kill", "-revert")
        )
    ):
        return Hit(detail=c.head)
    if not c.pos:
        return None
    values = {c.args[k + 1] for k, a in enumerate(c.args[:-1]) if a[:1] == "-" and "=" not in a}
    pos = [p for p in c.pos[:6] if p not in values] if values else list(c.pos[:6])
    for k, w in enumerate(pos[:4]):
        if len(w) > 48 or "/" in w or "." in w or "=" in w:
            continue  # a path, an assignment, or the value of an option (`--mode restore-size`)
        if service_verb_word(w):
            if any(p.lower() in _READ_VERBS for p in pos[k + 1 : k + 2]):
                return None  # `velero restore get`: listing the restores, not restoring
            if _soft(c, k, w, pos):
                return None
            if w.lower() == "restore" and (
                any(p.lower() in _NOUN_NEXT for p in pos[k + 1 : k + 2])
                or _restores_into_named_path(c)
            ):
                return None
            return Hit(detail=f"{c.head} {w}")
    # The first such option as written (c.flags is a set: its order differs from run to run).
    opt = next(
        (
            f
            for f in _long_options(c)
            if f.startswith(
                ("--delete", "--remove", "--purge", "--drop", "--reset-offsets", "--wipe")
            )
        ),
        None,
    )
    if opt:
        return Hit(detail=f"{c.head} {opt}")
    return None


# Cluster-wide admin endpoints: a write there changes the whole service, not one document.
_HTTP_ADMIN_PATH: Final = re.compile(
    r"/_cluster/(?:settings|reroute)|/_security/|/_nodes/[^/?]*/?_?shutdown", re.I
)


def http_delete(c: Cmd) -> MatchResult:
    h = c.head
    method = ""
    if h == "curl":
        method = (c.opt_value("-X", "--request") or "").upper()
    elif h in ("http", "https", "xh", "xhs", "httpie"):
        method = next((p.upper() for p in c.pos[:1] if p.isalpha()), "")
    elif h == "wget":
        method = (c.opt_value("--method") or "").upper()
    if method == "DELETE":
        return Hit(detail="sends an HTTP DELETE")
    if method in ("PUT", "POST", "PATCH") and any(_HTTP_ADMIN_PATH.search(p) for p in c.pos):
        return Hit(detail=f"sends an HTTP {method} to a cluster-wide admin endpoint")
    if any(
        _HTTP_DELETE_PATH.search(p)
        for p in c.pos
        if "://" in p or p.startswith((":", "localhost", "127."))
    ):
        return Hit(detail="calls a delete endpoint")
    return None


RULES: tuple[Rule, ...] = (
    Rule(
        "generic.delete-verb",
        D,
        "This runs a delete-class operation ({detail}) on data or configuration it does not show.",
        service_verb,
        tried_on=except_(NO_DELETE_VERBS),
        remedy="name exactly what will be deleted, or list it instead of deleting it",
        examples=(
            "fastly logging s3 delete --name logs",
            "vault kv metadata delete secret/app",
            "velero backup delete nightly",
            "nats kv del KV key",
            "rabbitmqctl delete_user bot",
            "kafka-topics --bootstrap-server x --delete --topic t",
            "stripe customers delete cus_1",
            "restic forget abc",
            "borg compact repo",
            "mc admin policy unset myminio p",
            "vault secrets disable kv/",
            "mc admin user disable m u",
            "split splits kill my-split",
            "sudo dnf system-upgrade clean",
            "tlmgr backup clean --all",
            "nh clean all",
            "kopia snapshot restore k1 out",
            "sudo gitlab-ctl kill nginx",
            "falconctl disable",
            "wazuh-control kill",
        ),
        counter=(
            "vault kv get secret/app",
            "velero backup get",
            "ldcli environments create --name s",
            "uv cache clean",
            "dnf clean dbcache",
            "apptainer cache clean -f",
            "bazel clean",
            "flutter clean",
            "adb kill-server",
            "tmux kill-session -t x",
            "pueue kill -a",
            "conda deactivate",
            "corepack disable",
            "unleash features disable my-toggle",
            "gnome-extensions disable x@y",
            "restic restore latest --target /tmp/out",
            "velero restore create restore-1",
            "echo delete",
            "grep remove file.txt",
            "velero restore get",
            "restic stats --mode restore-size",
            "fastly logging s3 list --name logs",
        ),
    ),
    Rule(
        "generic.http-delete",
        D,
        "This {detail} to a service, removing data there.",
        http_delete,
        heads=heads("curl", "http", "https", "xh", "xhs", "httpie", "wget"),
        remedy="read the resource (GET) instead of deleting or replacing it",
        examples=(
            "curl -X DELETE https://api.example.com/v1/items/1",
            "http DELETE :9200/index",
            "curl -X POST http://jenkins.local/job/x/doDelete",
            "curl -X PUT http://localhost:9200/_cluster/settings",
        ),
        counter=(
            "curl https://example.com",
            "curl -X GET http://localhost:9200/_search",
            "curl -X GET http://localhost:9200/_cluster/settings",
        ),
    ),
)


def piped_verb(c: Cmd) -> MatchResult:
    """An admin channel fed a delete-class verb on stdin (``echo 'delete x' | nsupdate``)."""
    if c.head not in ("echo", "printf") or not c.consumers:
        return None
    if all(x.head in NO_DELETE_VERBS and x.head not in ("socat", "nc") for x in c.consumers):
        return None
    first = (c.pos[0].split() or [""])[0] if c.pos else ""
    if (first and _VERB.match(first)) or first.lower() in (
        "shutdown",
        "disable",
        "flushall",
        "flushdb",
    ):
        return Hit(detail=f"{c.consumers[0].head} is sent '{first}'")
    return None


RULES = (
    *RULES,
    Rule(
        "generic.piped-verb",
        D,
        "This pipes a delete-class command to a service ({detail}).",
        piped_verb,
        tried_on=among(("echo", "printf")),
        remedy="send the service a read-only command instead",
        examples=(
            "echo 'delete example.com' | nsupdate",
            "echo 'disable server b/w1' | socat stdio /run/h.sock",
        ),
        counter=("echo delete | grep del", "echo hi | cat"),
    ),
)


# Attack-simulation tools: (head, verb) whose run executes a real attack technique on live systems.
ATTACK_TOOLS: Final = {"stratus": "detonate", "pacu": "run", "atomic-operator": "run"}


def attack_tool(c: Cmd) -> MatchResult:
    verb = ATTACK_TOOLS.get(c.head)
    return verb is not None and verb in c.pos[:2]


RULES = (
    *RULES,
    Rule(
        "generic.attack-tool",
        A,
        "This runs an attack-simulation tool that carries out a real attack technique.",
        attack_tool,
        heads=frozenset(ATTACK_TOOLS),
        examples=("./stratus detonate aws.defense-evasion.cloudtrail-stop",),
        counter=("stratus list", "./stratus warmup aws.x"),
    ),
)

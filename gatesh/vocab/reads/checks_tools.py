"""Argument checks of developer and operator tools: git, docker, kubectl, npm, pip, python,
the cloud command lines and systemctl.

Each returns False for every argument list that can write, delete, run another program or
change system state (the invariant of :class:`gatesh.vocab.reads.rule.ReadOnlyRule`).
"""

from __future__ import annotations

import re
from typing import Final

from gatesh.vocab.grammar import (
    DOCKER,
    GIT,
    KUBECTL,
    parse,
)
from gatesh.vocab.reads.rule import NONE, Check, forbid, subcommands


def _git_branch(args: tuple[str, ...]) -> bool:
    bad = (
        "-d",
        "-D",
        "-m",
        "-M",
        "-c",
        "-C",
        "-f",
        "-u",
        "--delete",
        "--move",
        "--copy",
        "--force",
        "--set-upstream-to",
        "--unset-upstream",
        "--edit-description",
        "--track",
        "--no-track",
        "--create-reflog",
    )
    if any(a in bad or a.split("=", 1)[0] in bad for a in args):
        return False
    listing = any(
        a in ("-l", "--list", "-a", "-r", "--all", "--remotes", "--show-current")
        or a.startswith(("--contains", "--merged", "--no-merged", "--points-at", "--no-contains"))
        for a in args
    )
    operands = [a for a in args if not a.startswith("-")]
    return not operands or listing


def _git_tag(args: tuple[str, ...]) -> bool:
    if any(
        a
        in ("-d", "--delete", "-a", "-s", "-u", "-f", "--force", "-m", "-F", "--annotate", "--sign")
        for a in args
    ):
        return False
    operands = [a for a in args if not a.startswith("-")]
    return not operands or any(
        a in ("-l", "--list", "-v", "--verify")
        or a.startswith(("--contains", "--points-at", "--merged"))
        for a in args
    )


def _git_config(args: tuple[str, ...]) -> bool:
    if any(
        a
        in (
            "--get",
            "--get-all",
            "--get-regexp",
            "--list",
            "-l",
            "--get-urlmatch",
            "--show-origin",
            "--show-scope",
            "--name-only",
        )
        for a in args
    ):
        return not any(
            a
            in (
                "--unset",
                "--unset-all",
                "--add",
                "--replace-all",
                "--edit",
                "-e",
                "--rename-section",
                "--remove-section",
            )
            for a in args
        )
    if args[:1] in (("get",), ("list",)):
        return True
    operands = [a for a in args if not a.startswith("-")]
    return len(operands) == 1 and not any(
        a.startswith("--") and a not in ("--global", "--local", "--system") for a in args
    )


_GIT_NO_OUTPUT: Final = forbid(long=("--output", "--ext-diff", "--open-files-in-pager"), short="")
GIT_READS: Final = subcommands(
    {
        "status": None,
        "log": _GIT_NO_OUTPUT,
        "diff": _GIT_NO_OUTPUT,
        "show": _GIT_NO_OUTPUT,
        "branch": _git_branch,
        "tag": _git_tag,
        "rev-parse": None,
        "rev-list": None,
        "ls-files": None,
        "ls-tree": None,
        "cat-file": None,
        "describe": None,
        "blame": None,
        "annotate": None,
        "shortlog": None,
        "grep": forbid(short="O", long=("--open-files-in-pager",)),
        "name-rev": None,
        "merge-base": None,
        "show-ref": forbid(long=("--delete",)),
        "for-each-ref": None,
        "count-objects": None,
        "help": None,
        "version": None,
        "var": None,
        "check-ignore": None,
        "check-attr": None,
        "diff-tree": _GIT_NO_OUTPUT,
        "diff-files": _GIT_NO_OUTPUT,
        "diff-index": _GIT_NO_OUTPUT,
        "cherry": None,
        "range-diff": _GIT_NO_OUTPUT,
        "whatchanged": _GIT_NO_OUTPUT,
        "show-branch": None,
        "verify-commit": None,
        "verify-tag": None,
        "config": _git_config,
        "reflog": lambda a: not a or a[0] in ("show", "--date=iso") or a[0].startswith("-"),
        "stash": lambda a: bool(a) and a[0] in ("list", "show"),
        "worktree": lambda a: a[:1] == ("list",),
        "remote": lambda a: not a or a[0] in ("-v", "--verbose", "get-url"),
        "submodule": lambda a: not a or a[0] in ("status", "summary"),
        "notes": lambda a: not a or a[0] in ("list", "show"),
        "lfs": lambda a: (
            bool(a)
            and a[0] in ("ls-files", "status", "env", "version", "track")
            and (a[0] != "track" or len(a) == 1)
        ),
        "fsck": forbid(long=("--lost-found",)),
        "bisect": lambda a: a[:1] in (("log",), ("visualize",), ("view",)),
    },
    with_arg=GIT.options,
    bare=True,
    # git -c and --config-env can set a key that runs a program; --exec-path runs git's own
    # programs from a chosen folder.
    global_ok=lambda opts: not parse("git", opts).has("-c", "--config-env", "--exec-path"),
)

_DOCKER_CONTAINER: Final[dict[str, Check | None]] = {
    "ls": None,
    "ps": None,
    "list": None,
    "inspect": None,
    "logs": None,
    "top": None,
    "port": None,
    "diff": None,
}
DOCKER_READS: Final = subcommands(
    {
        "ps": None,
        "images": None,
        "logs": None,
        "inspect": None,
        "version": None,
        "info": None,
        "top": None,
        "port": None,
        "history": None,
        "diff": None,
        "stats": lambda a: "--no-stream" in a,
        "image": subcommands({"ls": None, "list": None, "inspect": None, "history": None}),
        "container": subcommands(_DOCKER_CONTAINER),
        "network": subcommands({"ls": None, "list": None, "inspect": None}),
        "volume": subcommands({"ls": None, "list": None, "inspect": None}),
        "context": subcommands({"ls": None, "list": None, "show": None, "inspect": None}),
        "compose": subcommands(
            {
                "ps": None,
                "logs": None,
                "config": forbid(long=("--output",), short="o"),
                "images": None,
                "ls": None,
                "top": None,
                "version": None,
                "port": None,
            },
            with_arg=DOCKER.subcommands["compose"].options,
        ),
        "system": subcommands({"df": None, "info": None}),
        "buildx": subcommands({"ls": None, "version": None, "inspect": None}),
        "search": None,
        "help": None,
    },
    with_arg=DOCKER.options,
    bare=True,
)

_KUBECTL_SECRET: Final = re.compile(r"^(?:secrets?|secret/.*)$|,secrets?\b|^secrets?,")


def _kubectl_get(args: tuple[str, ...]) -> bool:
    return not any(_KUBECTL_SECRET.search(a) for a in args)


KUBECTL_READS: Final = subcommands(
    {
        "get": _kubectl_get,
        "describe": lambda a: not any(_KUBECTL_SECRET.search(x) for x in a),
        "logs": None,
        "explain": None,
        "version": None,
        "api-resources": None,
        "api-versions": None,
        "cluster-info": lambda a: "dump" not in a,
        "top": None,
        "events": None,
        "config": subcommands(
            {
                "view": forbid(long=("--raw",)),
                "get-contexts": None,
                "current-context": None,
                "get-clusters": None,
                "get-users": None,
            }
        ),
        "auth": subcommands({"can-i": None, "whoami": None}),
        "rollout": subcommands({"status": None, "history": None}),
    },
    with_arg=KUBECTL.options,
)

NPM_SUB: Final = {
    "ls": None,
    "list": None,
    "la": None,
    "ll": None,
    "view": None,
    "v": None,
    "info": None,
    "show": None,
    "outdated": None,
    "audit": lambda a: "fix" not in a,
    "search": None,
    "s": None,
    "find": None,
    "help": None,
    "root": None,
    "prefix": None,
    "explain": None,
    "why": None,
    "query": None,
    "fund": None,
    "config": lambda a: a[:1] in (("get",), ("list",), ("ls",)),
    "version": NONE,
    "doctor": None,
}
PIP_SUB: Final = {
    "list": None,
    "show": None,
    "freeze": forbid(long=("--path",)),
    "check": None,
    "help": None,
    "index": None,
    "debug": None,
    "config": lambda a: a[:1] in (("list",), ("get",), ("debug",)),
    "inspect": None,
}


def env_query(args: tuple[str, ...]) -> bool:
    """`go env [VAR…]`, `conda env list`, `poetry env info`: the environment is shown, not changed."""
    if any(
        a.startswith("-") and (a in ("-w", "-u", "-f", "--file") or a.startswith("--file="))
        for a in args
    ):
        return False
    words = [a for a in args if not a.startswith("-")]
    if not words or all(w.isupper() or ("_" in w and w.upper() == w) for w in words):
        return True
    return words[0] in ("list", "info", "export") or words[:3] == ["config", "vars", "list"]


def python_reads(args: tuple[str, ...]) -> bool:
    # `python -m pip list` is read as pip's own argv (gatesh.vocab.grammar.MODULE_PROGRAMS).
    return args in (("--version",), ("-V",), ("-VV",), ("--help",), ("-h",))


_AWS_DENY: Final = re.compile(
    r"secret|password|passwd|token|credential|login|decrypt|key-pair|private|session|"
    r"signin|sign|presign|download|export|auth",
    re.I,
)


def aws_reads(args: tuple[str, ...]) -> bool:
    words = [a for a in args if not a.startswith("-")][:2]
    if args in (("--version",),) or words[:2] in (
        ["configure", "list"],
        ["configure", "list-profiles"],
        ["sts", "get-caller-identity"],
        ["s3", "ls"],
    ):
        return True
    if (
        len(words) < 2
        or words[0] in ("s3", "configure", "deploy", "ssm")
        or _AWS_DENY.search(words[1])
    ):
        return False
    if any(a.startswith(("--query-output", "--outfile")) for a in args):
        return False
    return words[1].startswith(("describe-", "list-")) or (
        words[1].startswith("get-") and words[0] != "s3api"
    )


CLOUD_READ: Final = frozenset(
    {"list", "show", "describe", "get", "ls", "info", "version", "status"}
)
CLOUD_DENY: Final = re.compile(r"secret|password|token|credential|key|login|access|print-", re.I)

SYSTEMCTL_READS: Final = subcommands(
    {
        v: None
        for v in (
            "status",
            "show",
            "list-units",
            "list-unit-files",
            "list-timers",
            "list-sockets",
            "list-dependencies",
            "list-jobs",
            "list-machines",
            "list-automounts",
            "list-paths",
            "is-active",
            "is-enabled",
            "is-failed",
            "is-system-running",
            "cat",
            "get-default",
            "show-environment",
            "help",
        )
    },
    with_arg=frozenset(
        {
            "-t",
            "--type",
            "--state",
            "-p",
            "--property",
            "-H",
            "--host",
            "-M",
            "--machine",
            "-n",
            "--lines",
            "-o",
            "--output",
        }
    ),
    bare=True,
)

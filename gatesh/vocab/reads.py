"""Which invocations of which programs only read (S3 step 9, S4): the read-only table.

A row names programs and, where their arguments can make them write, a check over argv[1:];
:func:`command_reads` answers for one simple command: the row's check passes, with no write
redirection (except to ``/dev/null`` and descriptor copies), no dynamic head, no privilege, no
remote host and no credential file named. Policy's read-only stage (:mod:`gatesh.policy.readonly`)
adds the whole-line conditions; the builtin rater asks the same table when it decides whether a
verb it has no model of is a gap. Every row says why its programs only read. When in doubt a row
says no: a miss costs one rating, a wrong yes lets a write through unrated.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from gatesh._types import SimpleCommand
from gatesh.vocab.grammar import (
    DOCKER,
    GIT,
    HELM,
    KUBECTL,
    NEUTRAL_WRAPPERS,
    TERRAFORM,
    Grammar,
    Options,
    parse,
    read,
)
from gatesh.vocab.paths.devices import ENDLESS_DEVICES
from gatesh.vocab.words import has_long, is_credential_path, split_args

__all__ = ["RULES", "ReadOnlyRule", "command_reads", "rule_for"]

Check = Callable[[tuple[str, ...]], bool]  # argv[1:] -> still read-only?


@dataclass(frozen=True)
class ReadOnlyRule:
    """Programs that only read, with an optional check on their arguments.

    Invariant: ``check`` (when set) returns False for every argument list that can write,
    delete, execute another program, or change system state.
    """

    id: str
    heads: frozenset[str]
    reason: str
    examples: tuple[str, ...]
    counter: tuple[str, ...]
    check: Check | None = None


# --- argument checks ------------------------------------------------------------------------------


def _opts(args: Iterable[str]) -> list[str]:
    return [a for a in args if a.startswith("-") and a != "-"]


def forbid(short: str = "", long: tuple[str, ...] = (), words: tuple[str, ...] = ()) -> Check:
    """Reject short letters (in any cluster), long options (with or without ``=``) or exact words."""

    def check(args: tuple[str, ...]) -> bool:
        opts = _opts(args)
        if short and any(
            not o.startswith("--") and not o[1:].isdigit() and any(ch in o[1:] for ch in short)
            for o in opts
        ):
            return False
        if long and has_long(opts, *long):
            return False
        return not (words and any(a in words for a in args))

    return check


def max_operands(n: int, with_arg: frozenset[str] = frozenset()) -> Check:
    """At most ``n`` operands (``uniq IN OUT`` writes OUT, ``xxd IN OUT`` too)."""
    return lambda args: len(split_args(args, with_arg)[1]) <= n


def both(*checks: Check) -> Check:
    return lambda args: all(c(args) for c in checks)


def only_options(*allowed: str) -> Check:
    """Every argument is one of ``allowed`` (or there are none)."""
    ok = frozenset(allowed)
    return lambda args: all(a in ok for a in args)


def subcommands(
    table: Mapping[str, Check | None],
    with_arg: frozenset[str] | Options = frozenset(),
    bare: bool = False,
    global_ok: Check | None = None,
) -> Check:
    """The first operand names a read-only subcommand; its row checks the words after it.

    ``with_arg``: the options before the subcommand that take a value — the program's grammar
    (:mod:`gatesh.vocab.grammar`) where it has a row, so the two cannot disagree.
    ``bare``: the program with no subcommand at all is read-only too (``git`` prints help).
    ``global_ok`` checks the options before the subcommand.
    """
    options = with_arg if isinstance(with_arg, Options) else Options(with_arg)
    grammar = Grammar("read-only", options=dataclasses.replace(options, ends_at=1))

    def check(args: tuple[str, ...]) -> bool:
        argv = read(grammar, args)
        i = argv.operand_at[0] if argv.operand_at else len(args)
        if global_ok is not None and not global_ok(args[:i]):
            return False
        if i >= len(args):
            return bare or any(
                a in ("--version", "-v", "-V", "--help", "-h", "version") for a in args
            )
        if args[i] not in table:
            return False
        sub = table[args[i]]
        return sub is None or sub(args[i + 1 :])

    return check


def verbs_end_with(read_verbs: frozenset[str], deny: re.Pattern[str] | None = None) -> Check:
    """Cloud CLIs: the positional words (before the first option) end with a read verb."""

    def check(args: tuple[str, ...]) -> bool:
        words = []
        for a in args:
            if a.startswith("-"):
                break
            words.append(a)
        if not words:
            return any(a in ("--version", "--help", "-h") for a in args)
        last = words[-1]
        if deny is not None and any(deny.search(w) for w in words):
            return False
        return last in read_verbs or any(
            last.startswith(v + "-") for v in read_verbs if v in ("describe", "list", "get")
        )

    return check


NONE: Final[Check] = lambda args: not args  # noqa: E731 - no arguments at all


# --- per-program checks ---------------------------------------------------------------------------

_SED_WRITES: Final = re.compile(r"[wWe]")
_SED_S: Final = re.compile(r"s(.)(?:(?!\1)[^\\]|\\.)*\1(?:(?!\1)[^\\]|\\.)*\1([a-zA-Z0-9]*)")
_SED_Y: Final = re.compile(r"y(.)(?:(?!\1)[^\\]|\\.)*\1(?:(?!\1)[^\\]|\\.)*\1")
_SED_ADDR: Final = re.compile(r"/(?:[^/\\]|\\.)*/[IM]*|\\(.)(?:(?!\1).)*\1")
# Linear: the blanks after a start never cross a newline (a newline is itself a start), so a
# newline or blank run is not re-scanned from every start (quadratic at 20 KB before).
_SED_TEXT: Final = re.compile(r"(?:^|[;\n{}])[^\S\n]*+[aic]\\?\s.*?(?=\n|$)")


def _sed_script_reads(script: str) -> bool:
    """True when a sed script has no ``w``/``W``/``e`` command and no ``s///w``/``s///e`` flag."""
    for m in _SED_S.finditer(script):
        if "w" in m.group(2) or "e" in m.group(2):
            return False
    rest = _SED_S.sub(" ", script)
    rest = _SED_Y.sub(" ", rest)
    rest = _SED_TEXT.sub(" ", rest)
    rest = _SED_ADDR.sub(" ", rest)
    return not _SED_WRITES.search(rest)


def _sed(args: tuple[str, ...]) -> bool:
    scripts: list[str] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-e", "--expression"):
            if i + 1 < len(args):
                scripts.append(args[i + 1])
            i += 2
            continue
        if a.startswith("--expression="):
            scripts.append(a.split("=", 1)[1])
        elif a in ("-f", "--file") or a.startswith("--file=") or a.startswith("--in-place"):
            return False  # a script file we cannot see, or in-place editing
        elif a.startswith("-") and not a.startswith("--") and a != "-":
            letters = a[1:]
            if "i" in letters or "f" in letters:
                return False
            if "e" in letters:  # -ne SCRIPT
                if letters.endswith("e") and i + 1 < len(args):
                    scripts.append(args[i + 1])
                    i += 2
                    continue
                return False
        elif a.startswith("--") and a not in (
            "--quiet",
            "--silent",
            "--regexp-extended",
            "--null-data",
            "--separate",
            "--unbuffered",
            "--posix",
            "--debug",
            "--sandbox",
            "--zero-terminated",
            "--line-length",
            "--follow-symlinks",
        ):
            if not a.startswith("--line-length="):
                return False
        else:
            operands.append(a)
        i += 1
    if not scripts:
        if not operands:
            return True
        scripts.append(operands[0])
    return all(_sed_script_reads(s) for s in scripts)


_FIND_BAD: Final = frozenset(
    {"-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-execdir", "-okdir", "-ok"}
)
_FIND_SAFE_EXEC: Final = frozenset(
    {
        "grep",
        "egrep",
        "fgrep",
        "cat",
        "ls",
        "stat",
        "file",
        "head",
        "tail",
        "wc",
        "md5sum",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "du",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "echo",
        "printf",
        "test",
        "[",
        "rg",
        "cksum",
        "strings",
    }
)


# Names whose search outside the project is credential hunting, and -perm values that list
# setuid/setgid programs (privilege-escalation recon): the rater judges those, not the fast path.
_FIND_CRED_NAMES: Final = re.compile(
    r"^\*?\.?(?:id_(?:rsa|dsa|ecdsa|ed25519)|\.?netrc|credentials(?:\.db)?|\.git-credentials|token|"
    r"msal_token_cache\.json|accesstokens\.json|access_tokens\.db|\.pgpass|shadow|wallet\.dat|"
    r"\*\.(?:pem|key|kdbx|p12|pfx))$",
    re.I,
)
_FIND_SETID_PERM: Final = re.compile(r"^[-/]?(?:[246]\d{3}|u=s|g=s|u\+s|g\+s)$")


def _find_recon(args: tuple[str, ...]) -> bool:
    """``find / -perm -4000`` or ``find ~ -name id_rsa``: looks for what an attacker looks for."""
    roots = []
    for a in args:
        if a.startswith(("-", "(", "!")):
            break
        roots.append(a)
    outside = any(r.startswith(("/", "~", "$")) for r in roots)
    for i, a in enumerate(args[:-1]):
        v = args[i + 1].strip("'\"")
        if a == "-perm" and _FIND_SETID_PERM.match(v):
            return True
        if (
            outside
            and a in ("-name", "-iname", "-path", "-ipath", "-wholename")
            and _FIND_CRED_NAMES.match(v.rsplit("/", 1)[-1])
        ):
            return True
    return False


def _find(args: tuple[str, ...]) -> bool:
    if _find_recon(args):
        return False
    for i, a in enumerate(args):
        if a in _FIND_BAD:
            return False
        if a == "-exec":
            prog = args[i + 1].rsplit("/", 1)[-1] if i + 1 < len(args) else ""
            if prog not in _FIND_SAFE_EXEC:
                return False
    return True


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
_GIT: Final = subcommands(
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
_DOCKER: Final = subcommands(
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


_KUBECTL: Final = subcommands(
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

_NPM_SUB: Final = {
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
_PIP_SUB: Final = {
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


def _env_query(args: tuple[str, ...]) -> bool:
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


def _python(args: tuple[str, ...]) -> bool:
    # `python -m pip list` is read as pip's own argv (gatesh.vocab.grammar.MODULE_PROGRAMS).
    return args in (("--version",), ("-V",), ("-VV",), ("--help",), ("-h",))


_AWS_DENY: Final = re.compile(
    r"secret|password|passwd|token|credential|login|decrypt|key-pair|private|session|"
    r"signin|sign|presign|download|export|auth",
    re.I,
)


def _aws(args: tuple[str, ...]) -> bool:
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


_CLOUD_READ: Final = frozenset(
    {"list", "show", "describe", "get", "ls", "info", "version", "status"}
)
_CLOUD_DENY: Final = re.compile(r"secret|password|token|credential|key|login|access|print-", re.I)

_SYSTEMCTL: Final = subcommands(
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


def _tar(args: tuple[str, ...]) -> bool:
    if not args:
        return False
    first = args[0]
    mode = (
        first[1:]
        if first.startswith("-") and not first.startswith("--")
        else first
        if not first.startswith("-")
        else ""
    )
    listing = ("t" in mode and not set(mode) & set("cxruAd")) or "--list" in args or "-t" in args
    bad = (
        "--to-command",
        "--checkpoint-action",
        "--use-compress-program",
        "--info-script",
        "--new-volume-script",
        "--rmt-command",
        "--rsh-command",
        "-I",
        "-F",
        "--index-file",
        "-x",
        "-c",
        "--extract",
        "--create",
        "--append",
        "--update",
        "--delete",
        "--get",
        "-r",
        "-u",
        "-A",
        "--catenate",
        "--concatenate",
    )
    return listing and not any(a in bad or a.split("=", 1)[0] in bad for a in args[1:])


def _ip(args: tuple[str, ...]) -> bool:
    words = [a for a in args if not a.startswith("-")]
    if not words:
        return True
    if words[0] in ("help", "monitor") and len(words) == 1:
        return True
    return len(words) == 1 or words[1] in (
        "show",
        "list",
        "ls",
        "lst",
        "get",
        "sh",
        "s",
        "l",
        "help",
        "status",
    )


def _openssl(args: tuple[str, ...]) -> bool:
    if not args:
        return False
    writes = (
        "-out",
        "-keyout",
        "-signkey",
        "-sign",
        "-genkey",
        "-new",
        "-newkey",
        "-x509toreq",
        "-req",
        "-CAcreateserial",
        "-engine",
        "-writerand",
        "-rand",
    )
    return args[0] in (
        "version",
        "x509",
        "crl",
        "asn1parse",
        "ciphers",
        "list",
        "dgst",
        "verify",
        "help",
        "pkcs7",
        "errstr",
        "s_time",
    ) and not any(a in writes for a in args)


def _pacman(args: tuple[str, ...]) -> bool:
    if not args or not args[0].startswith("-"):
        return False
    op = args[0]
    if op.startswith("-Q") or op in ("--query", "-V", "--version", "-h", "--help"):
        return True
    return op.startswith("-S") and set(op[2:]) <= set("silgq") and bool(set(op[2:]) & set("sil"))


def _rpm(args: tuple[str, ...]) -> bool:
    return bool(args) and (
        args[0].startswith("-q")
        or args[0] in ("--query", "-V", "--verify", "--version", "--querytags", "--eval")
    )


def _dpkg(args: tuple[str, ...]) -> bool:
    ok = (
        "-l",
        "-L",
        "-s",
        "-S",
        "-p",
        "-c",
        "-I",
        "--list",
        "--listfiles",
        "--status",
        "--search",
        "--print-avail",
        "--print-architecture",
        "--print-foreign-architectures",
        "--contents",
        "--info",
        "--get-selections",
        "--version",
        "--help",
        "--audit",
        "-C",
        "--compare-versions",
        "--field",
        "-f",
    )
    return bool(args) and args[0] in ok


def _archive_list(args: tuple[str, ...]) -> bool:
    """unzip only with a listing/testing/printing option first; 7z/unrar only in l/t modes."""
    if not args:
        return False
    first = args[0]
    if first.startswith("-"):
        return bool(re.match(r"^-[lvtZpc]+[q]*$", first)) and not any(
            a.startswith("-d") for a in args
        )
    return first in ("l", "t", "lb", "lt", "v", "vt")


def _gzip(args: tuple[str, ...]) -> bool:
    opts = _opts(args)
    return any(
        o
        in (
            "-c",
            "--stdout",
            "-l",
            "--list",
            "-t",
            "--test",
            "--to-stdout",
            "-h",
            "--help",
            "-V",
            "--version",
        )
        or (not o.startswith("--") and ("c" in o or "l" in o or "t" in o))
        for o in opts
    )


_GPG_LIST: Final = frozenset(
    {
        "--list-keys",
        "-k",
        "--list-public-keys",
        "--fingerprint",
        "--list-sigs",
        "--check-sigs",
        "--version",
        "--with-colons",
        "--with-fingerprint",
        "--keyid-format",
        "long",
        "short",
    }
)


def _gpg(args: tuple[str, ...]) -> bool:
    """Listing keys, or verifying a detached signature (operands are the signature and data)."""
    if not args:
        return False
    if "--verify" in args:
        return all(a == "--verify" or not a.startswith("-") for a in args)
    return all(a in _GPG_LIST or not a.startswith("-") for a in args) and any(
        a.startswith("-") for a in args
    )


_VERSION_ONLY: Final = frozenset({"--version", "-version", "--help", "-help", "version", "-V"})


def _version_only(args: tuple[str, ...]) -> bool:
    return len(args) == 1 and args[0] in _VERSION_ONLY


RULES: Final[tuple[ReadOnlyRule, ...]] = (
    ReadOnlyRule(
        "ro.read-files",
        frozenset(
            {
                "cat",
                "tac",
                "nl",
                "head",
                "tail",
                "wc",
                "od",
                "hexdump",
                "hd",
                "strings",
                "md5sum",
                "sha1sum",
                "sha224sum",
                "sha256sum",
                "sha384sum",
                "sha512sum",
                "b2sum",
                "cksum",
                "sum",
                "stat",
                "readlink",
                "realpath",
                "basename",
                "dirname",
                "pathchk",
                "zcat",
                "bzcat",
                "xzcat",
                "zstdcat",
                "lzcat",
                "getfacl",
                "lsattr",
                "namei",
                "bat",
                "batcat",
                "pdfinfo",
                "ffprobe",
                "identify",
                "nm",
                "objdump",
                "readelf",
                "size",
                "file",
                "zipinfo",
                "lsar",
            }
        ),
        "print or describe files they are given; they write nothing but standard output",
        examples=(
            "cat README.md",
            "head -n 20 src/main.py",
            "tail -f /var/log/syslog",
            "wc -l *.py",
            "sha256sum dist/app.tar.gz",
            "stat -c %s file",
            "file -b image.png",
        ),
        counter=("cat ~/.ssh/id_rsa", "cat .env", "file -C -m magic", "cat x > y"),
        check=forbid(short="", long=("--compile",), words=("-C",)),
    ),
    ReadOnlyRule(
        "ro.encode",
        frozenset({"base64", "base32", "basenc", "xxd"}),
        "encode or dump a file to standard output (an output-file operand would write, so at most one)",
        examples=("base64 -d blob.txt", "xxd -l 64 bin.dat"),
        counter=("xxd -r dump.hex out.bin",),
        check=max_operands(
            1, frozenset({"-l", "-s", "-c", "-g", "-o", "-w", "--wrap", "-n", "-C"})
        ),
    ),
    ReadOnlyRule(
        "ro.list",
        frozenset(
            {
                "ls",
                "ll",
                "la",
                "dir",
                "vdir",
                "exa",
                "eza",
                "lsd",
                "du",
                "df",
                "lsblk",
                "lsof",
                "findmnt",
                "lscpu",
                "lsusb",
                "lspci",
                "lsmod",
                "lshw",
                "free",
                "uptime",
                "nproc",
                "blkid",
            }
        ),
        "list files, disks, devices or usage; they change nothing",
        examples=("ls -la", "du -sh node_modules", "df -h", "lsblk", "ls -R src | head"),
        counter=("ls > listing.txt", "ls >> ~/.bashrc"),
    ),
    ReadOnlyRule(
        "ro.tree",
        frozenset({"tree"}),
        "lists a folder as a tree (-o would write a file)",
        examples=("tree -L 2 src",),
        counter=("tree -o out.txt",),
        check=forbid(short="o", long=("--output",)),
    ),
    ReadOnlyRule(
        "ro.search",
        frozenset(
            {
                "grep",
                "egrep",
                "fgrep",
                "zgrep",
                "ag",
                "ack",
                "locate",
                "plocate",
                "mlocate",
                "whatis",
                "apropos",
                "look",
            }
        ),
        "search text or file names and print matches",
        examples=("grep -rn TODO src", "ag foo", "grep -c x a.txt"),
        counter=("grep x a > b",),
    ),
    ReadOnlyRule(
        "ro.rg",
        frozenset({"rg", "ripgrep"}),
        "searches text (--pre would run a program on every file)",
        examples=("rg -n 'fn main'",),
        counter=("rg --pre ./decode foo",),
        check=forbid(long=("--pre",)),
    ),
    ReadOnlyRule(
        "ro.fd",
        frozenset({"fd", "fdfind"}),
        "finds file names (-x/-X would run a program per match)",
        examples=("fd -e py",),
        counter=("fd -e tmp -x rm",),
        check=forbid(short="xX", long=("--exec", "--exec-batch")),
    ),
    ReadOnlyRule(
        "ro.find",
        frozenset({"find", "bfs", "gfind"}),
        "walks folders and prints names (-delete, -fprint, -ok, -execdir or -exec of a writer would act)",
        examples=(
            "find . -name '*.py'",
            "find src -type f -exec grep -l TODO {} +",
            "find / -name core 2>/dev/null",
        ),
        counter=(
            "find . -name '*.pyc' -delete",
            "find . -exec rm {} \\;",
            "find . -fprint out.txt",
            "find /usr/bin -perm -4000",
            "find //.aws -name credentials -type f",
        ),
        check=_find,
    ),
    ReadOnlyRule(
        "ro.text",
        frozenset(
            {
                "cut",
                "tr",
                "paste",
                "column",
                "fold",
                "fmt",
                "expand",
                "unexpand",
                "rev",
                "join",
                "comm",
                "diff",
                "diff3",
                "sdiff",
                "cmp",
                "colordiff",
                "seq",
                "tsort",
                "numfmt",
                "jq",
                "gojq",
                "jaq",
                "expr",
                "factor",
                "cal",
                "ncal",
                "bc",
                "xmllint",
                "csvlook",
                "wdiff",
                "difft",
                "delta",
            }
        ),
        "filter or compare text to standard output; they take no output file",
        examples=(
            "cut -d: -f1 /etc/passwd",
            "diff -u a.txt b.txt",
            "jq .name package.json",
            "tr a-z A-Z",
        ),
        counter=("jq . x > x.json",),
        check=forbid(long=("--output", "--in-place"), words=("-i",)),
    ),
    ReadOnlyRule(
        "ro.sort",
        frozenset({"sort", "shuf", "iconv"}),
        "order or convert text (-o would write a file)",
        examples=("sort -u names.txt", "sort -k2 -n data | head"),
        counter=("sort -o out.txt in.txt", "sort -uo x y"),
        check=forbid(short="o", long=("--output", "--compress-program")),
    ),
    ReadOnlyRule(
        "ro.uniq",
        frozenset({"uniq"}),
        "filters repeated lines (a second operand is an output file)",
        examples=("sort f | uniq -c",),
        counter=("uniq in.txt out.txt",),
        check=max_operands(1, frozenset({"-f", "-s", "-w"})),
    ),
    ReadOnlyRule(
        "ro.sed",
        frozenset({"sed", "gsed"}),
        "prints edited text (in-place -i, script files, and w/W/e commands would write or run)",
        examples=("sed -n '1,20p' file", "sed 's/a/b/g' in.txt", "sed -e 's/x/y/' -e '/^#/d' f"),
        counter=(
            "sed -i 's/a/b/' f",
            "sed 's/a/b/w out' f",
            "sed -f script.sed f",
            "sed '1e date' f",
            "sed -ni p f",
        ),
        check=_sed,
    ),
    ReadOnlyRule(
        "ro.yq",
        frozenset({"yq"}),
        "queries YAML (-i would edit in place)",
        examples=("yq '.services' compose.yaml",),
        counter=("yq -i '.a = 1' x.yaml",),
        check=forbid(short="i", long=("--inplace",)),
    ),
    ReadOnlyRule(
        "ro.shell",
        frozenset(
            {
                "echo",
                "printf",
                "pwd",
                "true",
                "false",
                ":",
                "test",
                "[",
                "[[",
                "cd",
                "pushd",
                "popd",
                "dirs",
                "sleep",
                "wait",
                "type",
                "help",
                "jobs",
                "times",
                "caller",
                "tput",
                "clear",
                "yes",
            }
        ),
        "shell builtins that print, test or move within folders",
        examples=(
            "echo hello",
            "pwd",
            "cd src && ls",
            "test -f x && echo yes",
            "printf '%s\\n' a b",
        ),
        counter=("echo x > file.txt", "echo hi >> ~/.bashrc"),
    ),
    ReadOnlyRule(
        "ro.which",
        frozenset({"which", "whereis", "command", "hash"}),
        "say where a program is (command -v/-V only; hash without -r/-p/-d)",
        examples=("which python3", "command -v git", "whereis -b ls"),
        counter=("command rm -rf x", "hash -p /tmp/x ls"),
        check=lambda a: (
            (bool(a) and a[0] in ("-v", "-V", "-a", "-t", "-l"))
            or not any(x in ("-p", "-d", "-r") for x in a)
        ),
    ),
    ReadOnlyRule(
        "ro.system-info",
        frozenset(
            {
                "whoami",
                "id",
                "groups",
                "users",
                "who",
                "w",
                "uname",
                "tty",
                "locale",
                "getconf",
                "last",
                "lastlog",
                "lsb_release",
                "sw_vers",
                "ps",
                "pgrep",
                "pidof",
                "pstree",
                "vmstat",
                "iostat",
                "mpstat",
                "printenv",
                "env",
                "getent",
                "ss",
                "netstat",
                "nvidia-smi",
                "sensors",
                "logname",
                "pinky",
                "hostid",
                "runlevel",
                "lsns",
                "ipcs",
            }
        ),
        "report who and what is running; they change nothing",
        examples=("whoami", "uname -a", "ps aux | grep node", "ss -ltnp", "env", "printenv PATH"),
        counter=("env -i", "ps aux > ps.txt"),
        check=lambda a: (
            not any(
                x
                in (
                    "-i",
                    "--ignore-environment",
                    "-u",
                    "--unset",
                    "-o",
                    "-C",
                    "-S",
                    "shadow",
                    "gshadow",
                )
                for x in a
            )
        ),
    ),
    ReadOnlyRule(
        "ro.hostname",
        frozenset({"hostname", "domainname"}),
        "prints the host name (an operand would set it)",
        examples=("hostname", "hostname -I"),
        counter=("hostname newname", "hostname -F file"),
        check=lambda a: (
            not any(not x.startswith("-") for x in a)
            and not any(x in ("-F", "--file", "-b") for x in a)
        ),
    ),
    ReadOnlyRule(
        "ro.date",
        frozenset({"date"}),
        "prints the date (-s would set the clock)",
        examples=("date +%s", "date -u"),
        counter=("date -s '2020-01-01'",),
        check=forbid(short="s", long=("--set",)),
    ),
    ReadOnlyRule(
        "ro.top",
        frozenset({"top", "htop", "btop", "atop"}),
        "shows processes in batch mode",
        examples=("top -b -n 1",),
        counter=("top",),
        check=lambda a: any(x.startswith("-b") or x == "-bn1" for x in a),
    ),
    ReadOnlyRule(
        "ro.dmesg",
        frozenset({"dmesg"}),
        "prints the kernel log (-c/-C/-D/-E/-n would change it)",
        examples=("dmesg | tail",),
        counter=("dmesg -C",),
        check=forbid(
            short="cCDEn",
            long=("--clear", "--read-clear", "--console-off", "--console-on", "--console-level"),
        ),
    ),
    ReadOnlyRule(
        "ro.journalctl",
        frozenset({"journalctl"}),
        "reads the journal (vacuum, rotate, flush would change it)",
        examples=("journalctl -u nginx --since today",),
        counter=("journalctl --vacuum-size=100M",),
        check=forbid(
            long=(
                "--vacuum-size",
                "--vacuum-time",
                "--vacuum-files",
                "--rotate",
                "--flush",
                "--sync",
                "--relinquish-var",
                "--setup-keys",
                "--update-catalog",
                "--smart-relinquish-var",
            )
        ),
    ),
    ReadOnlyRule(
        "ro.systemctl",
        frozenset({"systemctl"}),
        "queries units (start/stop/enable/… change the system)",
        examples=(
            "systemctl status nginx",
            "systemctl list-units --type=service",
            "systemctl is-active docker",
        ),
        counter=("systemctl restart nginx", "systemctl enable --now x"),
        check=_SYSTEMCTL,
    ),
    ReadOnlyRule(
        "ro.systemd-query",
        frozenset(
            {
                "hostnamectl",
                "timedatectl",
                "localectl",
                "loginctl",
                "networkctl",
                "resolvectl",
                "bootctl",
                "systemd-analyze",
            }
        ),
        "report systemd state (status, list and show verbs only)",
        examples=("timedatectl", "hostnamectl status", "loginctl list-sessions"),
        counter=("hostnamectl set-hostname x", "timedatectl set-timezone UTC"),
        check=lambda a: (
            next((x for x in a if not x.startswith("-")), "status")
            in (
                "status",
                "show",
                "list",
                "list-timezones",
                "list-sessions",
                "list-users",
                "list-seats",
                "show-session",
                "show-user",
                "session-status",
                "user-status",
                "list-keymaps",
                "list-locales",
                "blame",
                "time",
                "critical-chain",
                "query",
                "statistics",
                "dns",
            )
        ),
    ),
    ReadOnlyRule(
        "ro.ip",
        frozenset({"ip", "ifconfig", "route", "arp", "iw", "iwconfig", "nmcli"}),
        "show network configuration (add/del/set/up/down would change it)",
        examples=(
            "ip addr",
            "ip -br a",
            "ip route show",
            "ifconfig",
            "route -n",
            "nmcli device status",
        ),
        counter=(
            "ip link set eth0 down",
            "ip addr add 10.0.0.2/24 dev eth0",
            "ifconfig eth0 down",
            "route add default gw 1.2.3.4",
        ),
        check=lambda a: (
            _ip(a)
            and not any(
                x
                in (
                    "add",
                    "del",
                    "delete",
                    "set",
                    "up",
                    "down",
                    "flush",
                    "change",
                    "replace",
                    "connect",
                    "disconnect",
                    "modify",
                    "-d",
                    "-s",
                    "-f",
                    "--file",
                    "-batch",
                    "-b",
                    "-force",
                    "--set",
                    "--delete",
                )
                for x in a
            )
        ),
    ),
    ReadOnlyRule(
        "ro.history",
        frozenset({"history"}),
        "prints shell history (-c, -d, -w, -a would change it)",
        examples=("history | tail -5", "history 20"),
        counter=("history -c",),
        check=lambda a: not a or (len(a) == 1 and a[0].isdigit()),
    ),
    ReadOnlyRule(
        "ro.umask",
        frozenset({"umask", "ulimit"}),
        "print the mask or limits (a value would set them)",
        examples=("umask", "ulimit -a", "ulimit -n"),
        counter=("umask 000", "ulimit -n 1"),
        check=lambda a: not any(not x.startswith("-") for x in a),
    ),
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
        check=_GIT,
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
        check=_DOCKER,
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
        check=_KUBECTL,
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
        check=subcommands(_NPM_SUB),
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
        check=subcommands(_PIP_SUB | {"pip": subcommands(_PIP_SUB | {"tree": None})}),
    ),
    ReadOnlyRule(
        "ro.python",
        frozenset({"python", "python3", "python2", "py", "pypy3"}),
        "prints its version (any code could write, so nothing else)",
        examples=("python3 --version", "python -V"),
        counter=("python -c 'print(1)'", "python x.py", "python -m pip install x"),
        check=_python,
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
            | {"env": _env_query},
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
                _pacman(a)
                if a[0].startswith("-Q") or a[0].startswith("-S") or a[0] in ("--query",)
                else _rpm(a)
                if a[0].startswith("-q") or a[0] in ("--query", "-V", "--verify")
                else _dpkg(a)
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
        check=_aws,
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
        check=verbs_end_with(_CLOUD_READ, _CLOUD_DENY),
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
        check=_tar,
    ),
    ReadOnlyRule(
        "ro.zip-list",
        frozenset({"unzip", "7z", "7za", "7zz", "unrar"}),
        "lists or tests an archive (l/t modes, unzip -l/-v/-t/-Z/-p)",
        examples=("unzip -l a.zip", "7z l a.7z"),
        counter=("unzip a.zip", "7z x a.7z"),
        check=_archive_list,
    ),
    ReadOnlyRule(
        "ro.compress-stdout",
        frozenset(
            {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "brotli"}
        ),
        "(de)compress to standard output, or list/test (without -c they replace files)",
        examples=("gzip -dc a.gz | head", "xz -l a.xz", "zstd -t a.zst"),
        counter=("gzip big.log", "gunzip a.gz"),
        check=_gzip,
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
        check=_openssl,
    ),
    ReadOnlyRule(
        "ro.gpg-list",
        frozenset({"gpg", "gpg2"}),
        "lists keys or verifies signatures",
        examples=("gpg --list-keys", "gpg --verify a.sig a"),
        counter=("gpg --delete-key x", "gpg -d secret.gpg", "gpg --export-secret-keys"),
        check=_gpg,
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

_BY_HEAD: Final = MappingProxyType({head: rule for rule in RULES for head in rule.heads})

# Assignment prefixes that only change formatting or locale (PATH=, LD_PRELOAD=, PAGER= could run code).
_SAFE_ASSIGN: Final = re.compile(
    r"^(?:LC_\w+|LANG|LANGUAGE|TZ|COLUMNS|LINES|NO_COLOR|CLICOLOR|CLICOLOR_FORCE|TERM"
    r"|GIT_PAGER|PAGER|FORCE_COLOR|COLORTERM)=[\w.:/@+-]*$"
)
_SAFE_SINKS: Final = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_PAGERS: Final = frozenset({"cat", "less -R", ""})
_SYSTEM_BIN: Final = (
    "/bin/",
    "/usr/bin/",
    "/usr/local/bin/",
    "/sbin/",
    "/usr/sbin/",
    "/opt/homebrew/bin/",
)
# Programs that print help or a version for one lone flag, whatever the program.
_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9._+-]*$")


# Programs that read only as much as an option of theirs says (`head -c 16`, `od -N 4`).
_BOUNDED_BY: Final = {
    "head": ("-c", "--bytes", "-n", "--lines"),
    "od": ("-N", "--read-bytes"),
    "xxd": ("-l", "-len"),
    "hexdump": ("-n", "--length"),
}


def _bounded_read(cmd: SimpleCommand) -> bool:
    """Whether ``cmd`` reads a bounded amount of whatever it reads."""
    names = _BOUNDED_BY.get(cmd.head)
    if names is None:
        return False
    args = cmd.args
    return any(a in names or a.startswith(tuple(n for n in names if len(n) == 2)) for a in args)


def rule_for(cmd: SimpleCommand) -> ReadOnlyRule | None:
    """The read-only row whose head this command has (no argument check), or None."""
    return _BY_HEAD.get(cmd.head)


def command_reads(cmd: SimpleCommand) -> bool:
    """True when ``cmd`` alone is known to only read (every check of
    :func:`gatesh.policy.readonly.is_read_only` but the whole-line ones: readable, no script, no host)."""
    if cmd.dynamic_head or cmd.privileged or cmd.remote or cmd.context == "remote" or not cmd.argv:
        return False
    argv0 = cmd.argv[0].text
    if "/" in argv0 and not argv0.startswith(_SYSTEM_BIN):
        return False  # `./ls` or `/join` is whatever that file is, not the program in the table
    if any(w not in NEUTRAL_WRAPPERS for w in cmd.wrappers):
        return False
    for a in cmd.assignments:
        if not _SAFE_ASSIGN.match(a):
            return False
        if a.startswith(("GIT_PAGER=", "PAGER=")) and a.split("=", 1)[1] not in _PAGERS:
            return False
    for r in cmd.redirects:
        if r.writes and r.target not in _SAFE_SINKS:
            return False
        if r.target is not None and not r.writes and is_credential_path(r.target):
            return False
    if any(w.static and is_credential_path(w.text) for w in cmd.argv[1:]):
        return False
    if (
        any(w.text in ENDLESS_DEVICES for w in cmd.argv[1:])
        or any(r.target in ENDLESS_DEVICES for r in cmd.redirects if not r.writes)
    ) and not _bounded_read(cmd):
        return False  # `tail /dev/zero`: reading what never ends fills memory or never stops
    args = cmd.args
    rule = _BY_HEAD.get(cmd.head)
    if rule is None:
        return "/" not in argv0 and bool(_NAME.match(cmd.head)) and _version_only(args)
    return rule.check is None or rule.check(args)

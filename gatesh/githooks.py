"""git hooks (S11.3): ``gatesh git-hook NAME`` vetoes what git lets a hook veto.

    hook                    refuses
    pre-push                force pushes (the remote commit is not an ancestor of the pushed one),
                            deleting remote refs, any push to a protected branch
    pre-rebase              rebasing a protected branch
    reference-transaction   in the "prepared" state: deleting a local branch or tag, and a
                            non-fast-forward update of a protected branch (amend, reset, rebase)
    pre-commit              (only with ``git.pre_commit = true``) committing on a protected branch

Protected branches are ``git.protected_branches`` (default ``main``, ``master``) plus the remote's
default branch (``git symbolic-ref refs/remotes/REMOTE/HEAD``).

What hooks cannot stop: ``git reset --hard``, ``git checkout -- FILE`` and ``git clean`` destroy
work-tree changes without any hook running. Those are gated where the command is read (S3).

Every refusal exits 1 with a message naming the rule; anything the hook cannot determine (an
unreadable config, a failed git query) also refuses — the hook fails closed. The hook scripts that
git runs are :func:`hook_script`; ``hooks/git/*`` in the source tree are the same scripts.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from gatesh._errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE, GateshError
from gatesh.vocab.grammar import parse
from gatesh.vocab.paths.classes import GIT_HOOK_MARKER, GIT_HOOK_NAMES

__all__ = [
    "HOOK_NAMES",
    "MARKER",
    "Refusal",
    "hook_script",
    "main",
    "protected_branches",
]

HOOK_NAMES: Final = GIT_HOOK_NAMES
MARKER: Final = GIT_HOOK_MARKER  # in every script we write: how install recognises its own
_ZERO: Final = re.compile(r"^0+$")
_SHA: Final = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


@dataclass(frozen=True)
class Refusal:
    """One thing the hook refuses. ``rule_id`` is stable; ``text`` is what git prints."""

    rule_id: str
    text: str


# --- git queries --------------------------------------------------------------------------------


class GitError(GateshError):
    """A git query failed; the hook refuses rather than guess."""


def _git(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(["git", *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {' '.join(args)}: {exc}") from exc
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {proc.stderr.strip() or proc.returncode}")
    return proc


def _is_ancestor(old: str, new: str) -> bool:
    """True when ``old`` is an ancestor of ``new`` (a fast-forward). False when unknown."""
    proc = _git("merge-base", "--is-ancestor", old, new, check=False)
    return proc.returncode == 0  # 1: not an ancestor; 128: an object is missing: not provable


def _remote_default_branch(remote: str) -> str | None:
    if not remote or "/" in remote or ":" in remote:
        return None  # a URL, not a configured remote
    proc = _git("symbolic-ref", "--quiet", f"refs/remotes/{remote}/HEAD", check=False)
    target = proc.stdout.strip()
    prefix = f"refs/remotes/{remote}/"
    return target[len(prefix) :] if proc.returncode == 0 and target.startswith(prefix) else None


def _remotes_default_branches() -> set[str]:
    proc = _git("remote", check=False)
    names = proc.stdout.split() if proc.returncode == 0 else []
    return {b for b in (_remote_default_branch(n) for n in names) if b}


def _current_branch() -> str | None:
    proc = _git("symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def protected_branches(configured: Iterable[str], remote: str | None = None) -> frozenset[str]:
    """Configured branch names plus the default branch of ``remote`` (or of every remote)."""
    names = set(configured)
    if remote is not None:
        default = _remote_default_branch(remote)
        if default:
            names.add(default)
    else:
        names |= _remotes_default_branches()
    return frozenset(names)


def _configured() -> tuple[tuple[str, ...], bool]:
    """``(git.protected_branches, git.pre_commit)`` from the effective config. Raises ConfigError."""
    from gatesh.config import load_config

    git = load_config(os.getcwd()).git
    return tuple(git.protected_branches), bool(git.pre_commit)


def _short(sha: str) -> str:
    return sha[:12]


def _branch_of(ref: str) -> str | None:
    return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else None


# --- the checks (pure given the git queries) ---------------------------------------------------


def check_pre_push(remote: str, lines: Sequence[str], protected: frozenset[str]) -> list[Refusal]:
    """Refusals for a push of ``lines`` (``<local ref> <local sha> <remote ref> <remote sha>``)."""
    out: list[Refusal] = []
    for line in lines:
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 4:
            out.append(
                Refusal(
                    "git:unreadable",
                    f"gatesh: cannot read the pre-push line {line!r}; refusing the push.",
                )
            )
            continue
        local_ref, local_sha, remote_ref, remote_sha = parts
        where = f"{remote_ref} on {remote or 'the remote'}"
        branch = _branch_of(remote_ref)
        if _ZERO.match(local_sha):
            out.append(
                Refusal(
                    "git:delete-remote-ref",
                    f"gatesh: refused to delete {where}. "
                    "Deleting a shared branch or tag cannot be undone from here.",
                )
            )
            continue
        if not _ZERO.match(remote_sha) and not _is_ancestor(remote_sha, local_sha):
            out.append(
                Refusal(
                    "git:force-push",
                    f"gatesh: refused to force-push {local_ref} over "
                    f"{where}: the remote commit {_short(remote_sha)} is not an ancestor "
                    "of what you are pushing, so its history would be lost. Push to a "
                    "new branch instead.",
                )
            )
            continue
        if branch is not None and branch in protected:
            out.append(
                Refusal(
                    "git:push-protected",
                    f"gatesh: refused to push to the protected "
                    f"branch {branch!r} on {remote or 'the remote'}. Push to another "
                    "branch and open a pull request.",
                )
            )
    return out


def check_pre_rebase(args: Sequence[str], protected: frozenset[str]) -> list[Refusal]:
    """Refusals for ``git rebase`` (hook args: ``UPSTREAM [BRANCH]``; no BRANCH: the current one)."""
    branch = args[1] if len(args) > 1 and args[1] else _current_branch()
    if branch is not None and branch in protected:
        return [
            Refusal(
                "git:rebase-protected",
                f"gatesh: refused to rebase the protected branch "
                f"{branch!r}: rebasing rewrites its published history. Rebase a copy "
                "(git switch -c NEW) instead.",
            )
        ]
    return []


def check_reference_transaction(
    state: str, lines: Sequence[str], protected: frozenset[str]
) -> list[Refusal]:
    """Refusals for a prepared ref transaction (lines: ``<old> <new> <ref>``); other states pass."""
    if state != "prepared":
        return []
    out: list[Refusal] = []
    for line in lines:
        if not line.strip():
            continue
        parts = line.split(" ", 2)
        if len(parts) != 3:
            out.append(
                Refusal(
                    "git:unreadable", f"gatesh: cannot read the ref update {line!r}; refusing it."
                )
            )
            continue
        old, new, ref = parts
        if not ref.startswith(("refs/heads/", "refs/tags/")):
            continue
        if not (_SHA.match(old) and _SHA.match(new)):
            continue  # symbolic-ref updates ("ref:…") move no history
        kind = "branch" if ref.startswith("refs/heads/") else "tag"
        name = ref.split("/", 2)[2]
        if _ZERO.match(new) and not _ZERO.match(old):
            sub, sub_args = _git_invocation()
            if sub in _PACKING:
                continue  # pack-refs moving a loose ref into packed-refs: the ref stays
            if (
                kind == "branch"
                and sub == "branch"
                and _is_rename(sub_args)
                and name not in protected
            ):
                continue  # the old name of `git branch -m`: its commits stay under the new name
        if _ZERO.match(new):  # a deletion (old is zero too when the caller did not name it)
            was = "" if _ZERO.match(old) else f" (it pointed at {_short(old)})"
            out.append(
                Refusal(
                    f"git:delete-{kind}",
                    f"gatesh: refused to delete the {kind} "
                    f"{name!r}{was}. Deleting branches and tags is gated; a person can "
                    "do it outside the gated session.",
                )
            )
            continue
        branch = _branch_of(ref)
        if (
            branch is not None
            and branch in protected
            and not _ZERO.match(old)
            and old != new
            and not _is_ancestor(old, new)
        ):
            out.append(
                Refusal(
                    "git:rewrite-protected",
                    f"gatesh: refused to move the protected "
                    f"branch {branch!r} from {_short(old)} to {_short(new)}: that is not "
                    "a fast-forward, so commits would drop out of its history (amend, "
                    "reset or rebase). Work on a new branch instead.",
                )
            )
    return out


# git commands that delete loose refs only after packing them (the ref itself stays).
_PACKING: Final = frozenset({"pack-refs", "gc", "maintenance"})


def _is_rename(args: Sequence[str]) -> bool:
    """Whether ``git branch`` ARGS rename a branch (-m/-M/--move, alone or in a short cluster)."""
    opts = [a for a in args[: args.index("--") if "--" in args else len(args)] if a.startswith("-")]
    letters = "".join(a[1:] for a in opts if not a.startswith("--"))
    if "--delete" in opts or "d" in letters or "D" in letters:
        return False  # a delete option as well: never taken for a rename
    return "--move" in opts or "m" in letters or "M" in letters


def _git_invocation() -> tuple[str, list[str]]:
    """The subcommand and its arguments of the git process that ran this hook (the hook script's
    parent), or ("", []) when it cannot be read."""
    try:
        with open(f"/proc/{os.getppid()}/stat", "rb") as f:
            ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        with open(f"/proc/{ppid}/cmdline", "rb") as f:
            argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
    except (OSError, ValueError, IndexError):
        return "", []
    if not argv or os.path.basename(argv[0]) != "git":
        return "", []
    read = parse("git", argv[1:])  # the one grammar of git's argv
    if not read.path:
        return "", []
    return argv[1 + read.path_at[0]], argv[2 + read.path_at[0] :]


def check_pre_commit(enabled: bool, protected: frozenset[str]) -> list[Refusal]:
    """With ``git.pre_commit`` on, refuse a commit on a protected branch."""
    if not enabled:
        return []
    branch = _current_branch()
    if branch is not None and branch in protected:
        return [
            Refusal(
                "git:commit-protected",
                f"gatesh: refused to commit on the protected "
                f"branch {branch!r} (git.pre_commit is on). Commit on a new branch "
                "(git switch -c NEW).",
            )
        ]
    return []


# --- the hook scripts ---------------------------------------------------------------------------

_SCRIPT: Final = """\
#!/bin/sh
# {marker}: {name}. Written by `gatesh install git`; see gatesh(1), GIT HOOKS.
# Runs the repository's own {name} hook afterwards, if it has one.
gatesh={gatesh}
hook_dir=$(git rev-parse --git-common-dir 2>/dev/null)/hooks
own="$hook_dir/{name}"
[ -f "$hook_dir/{name}.pre-gatesh" ] && own="$hook_dir/{name}.pre-gatesh"
grep -q '{marker}' "$own" 2>/dev/null && own=
[ -x "$own" ] || own=
{fast_path}if ! command -v "$gatesh" >/dev/null 2>&1; then
    # gatesh is gone: say how to remove this hook without it (git runs hooks from the top level).
    echo "gatesh: $gatesh not found, so git's {name} hook refuses. Reinstall gatesh, or remove" >&2
    echo "this hook: rm '$0'" >&2
    [ -f "$0.pre-gatesh" ] && echo "and put back the hook it replaced: mv '$0.pre-gatesh' '$0'" >&2
    exit 1
fi
{body}"""

_WITH_STDIN: Final = """\
input=$(cat; echo x)
input=${{input%x}}
printf '%s' "$input" | "$gatesh" git-hook {name} "$@" || exit $?
if [ -n "$own" ]; then
    printf '%s' "$input" | "$own" "$@" || exit $?
fi
exit 0
"""

_NO_STDIN: Final = """\
"$gatesh" git-hook {name} "$@" </dev/null || exit $?
if [ -n "$own" ]; then
    "$own" "$@" || exit $?
fi
exit 0
"""

# reference-transaction runs twice for every ref update (commit, fetch, …): only "prepared" can
# veto, so the other states never start Python.
_FAST_PATH: Final = """\
if [ "$1" != prepared ]; then
    [ -n "$own" ] && exec "$own" "$@"
    cat >/dev/null
    exit 0
fi
"""


def hook_script(name: str, gatesh: str = "gatesh") -> str:
    """The sh script git runs as hook ``name``, calling ``gatesh`` (a name on PATH or a path)."""
    if name not in HOOK_NAMES:
        raise ValueError(f"unknown git hook {name!r}")
    stdin = name in ("pre-push", "reference-transaction")
    body = (_WITH_STDIN if stdin else _NO_STDIN).format(name=name)
    quoted = "'" + gatesh.replace("'", "'\\''") + "'"
    fast = _FAST_PATH if name == "reference-transaction" else ""
    return _SCRIPT.format(marker=MARKER, name=name, gatesh=quoted, fast_path=fast, body=body)


# --- entry point --------------------------------------------------------------------------------

USAGE: Final = """\
usage: gatesh git-hook pre-push|pre-rebase|reference-transaction|pre-commit [ARGS...]

Called by the git hooks that `gatesh install git` writes; reads git's hook input on stdin.
Exits 0 to let git go on, 1 to stop it (with the reason on stderr).
"""


def run(name: str, args: Sequence[str], stdin_text: str) -> list[Refusal]:
    """The refusals for one hook call. Raises ConfigError or GitError when it cannot decide."""
    branches, pre_commit = _configured()
    lines = stdin_text.splitlines()
    if name == "pre-push":
        remote = args[0] if args else ""
        return check_pre_push(remote, lines, protected_branches(branches, remote))
    if name == "pre-rebase":
        return check_pre_rebase(args, protected_branches(branches))
    if name == "reference-transaction":
        state = args[0] if args else ""
        if state != "prepared":
            return []
        return check_reference_transaction(state, lines, protected_branches(branches))
    if name == "pre-commit":
        return check_pre_commit(pre_commit, protected_branches(branches))
    raise ValueError(name)


def main(argv: list[str]) -> int:
    """``gatesh git-hook NAME ARGS``: 0 lets git go on; 1 stops it; 2 for bad usage."""
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return EXIT_OK if argv else EXIT_USAGE
    name, args = argv[0], argv[1:]
    if name not in HOOK_NAMES:
        sys.stderr.write(f"gatesh git-hook: unknown hook {name!r}\n{USAGE}")
        return EXIT_USAGE
    try:
        needs_stdin = name in ("pre-push", "reference-transaction")
        text = sys.stdin.read(4 * 1024 * 1024) if needs_stdin else ""
        refusals = run(name, args, text)
    except Exception as exc:  # fail closed: a hook that cannot decide stops git
        sys.stderr.write(
            f"gatesh: the {name} hook could not decide ({type(exc).__name__}: {exc}), "
            "so git was stopped. Run `gatesh doctor`.\n"
        )
        return EXIT_ERROR
    for refusal in refusals:
        sys.stderr.write(f"{refusal.text} [{refusal.rule_id}]\n")
    return EXIT_ERROR if refusals else EXIT_OK

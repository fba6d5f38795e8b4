"""Destructive git: commands that discard uncommitted work or rewrite shared history."""

from __future__ import annotations

from typing import Final

from gatesh.rater.builtin._base import C, Cmd, D, Hit, MatchResult, Rule, S, heads
from gatesh.rater.builtin._scope import resolve
from gatesh.undo import cover
from gatesh.vocab.grammar import Argv, parse
from gatesh.worktree import GitLoss, describe

GIT: Final = heads("git")
PROTECTED: Final = frozenset(
    {"main", "master", "trunk", "production", "prod", "release", "develop"}
)
# The force options of git push (abbreviations are read to their full name by the grammar).
_FORCE_SPELLINGS: Final = frozenset({"--force", "--force-with-lease", "--force-if-includes"})


def git_argv(c: Cmd) -> Argv:
    """``c``'s words as git reads them (:data:`gatesh.vocab.grammar.GIT`)."""
    return parse("git", c.args, [not d for d in c.dyn])


def sub(c: Cmd) -> tuple[str, tuple[str, ...]]:
    """git's subcommand (lower-cased) and the words after it."""
    argv = git_argv(c)
    if not argv.path:
        return "", ()
    return argv.path[0], c.args[argv.path_at[0] + 1 :]


def _opts(c: Cmd) -> set[str]:
    """The subcommand's options as git reads them: bundled letters apart, abbreviations whole,
    long names lower-cased and without their ``=value``."""
    return {
        o.name.lower() if o.name.startswith("--") else o.name
        for o in git_argv(c).options
        if o.level >= 1
    }


def _positional(c: Cmd, skip: int = 0) -> list[str]:
    """The operands after the subcommand path's first ``1 + skip`` words (option values out)."""
    argv = git_argv(c)
    start = argv.path_at[skip] if len(argv.path_at) > skip else len(c.args)
    return [a for a, k in zip(argv.operands, argv.operand_at, strict=True) if k > start]


# --- what a git verb would lose, read from the working tree (S3.2) ---------------------------------


def _work_dir(c: Cmd) -> str | None:
    """The folder git runs in: the command's cwd, moved by ``-C DIR``; None when unknown."""
    cwd = c.cwd
    argv = git_argv(c)
    if argv.unknown and not argv.path:
        return None
    for o in argv.options:
        if cwd is None or o.level:
            break
        if o.name == "-C":
            if o.value is None or o.value_at < 0 or c.dyn[o.value_at]:
                return None
            cwd = resolve(o.value, cwd, c.ctx.home, dynamic=False)
        elif o.name in ("--git-dir", "--work-tree"):
            return None  # another repository than the folder's own
    return cwd


def _lost(what: str, loss: GitLoss, *, unknown_remedy: str, cwd: str = "") -> Hit | None:
    """A Hit naming what ``what`` would lose (None: nothing), or fail-closed when git could not say.

    ``cwd``: the folder the verb runs in. Under an undo policy (S17) a loss the snapshot of that
    work tree will hold (its files, the commits and stash entries it keeps reachable) is SAFE,
    naming what it loses and that undo puts it back."""
    if loss.unknown:
        return Hit(
            detail=f"{what} may throw away uncommitted work, and gatesh could not tell what ({loss.unknown})",
            remedy=unknown_remedy,
        )
    parts: list[str] = []
    remedies: list[str] = []
    if loss.files:
        parts.append(f"throws away {describe(loss.files)}")
        remedies.append("commit or stash those changes first (git stash)")
    if loss.commits:
        n = f"{len(loss.commits)}{'+' if loss.more_commits else ''}"
        plural = "s" if len(loss.commits) != 1 or loss.more_commits else ""
        parts.append(
            f"drops {n} commit{plural} no other branch, tag or remote holds ({loss.commits[0]}"
            f"{', …' if len(loss.commits) > 1 else ''})"
        )
        remedies.append(
            "create a branch at HEAD first (git branch keep-work) so the commits stay reachable"
        )
    if loss.stashes:
        parts.append(
            f"deletes {'the stash ' if len(loss.stashes) == 1 else f'{len(loss.stashes)} stashes, '}"
            f"{loss.stashes[0]}{' …' if len(loss.stashes) > 1 else ''}"
        )
        remedies.append("apply it or turn it into a branch first (git stash branch NAME)")
    if not parts:  # the tree holds nothing it would lose: said, so explain shows why it runs
        return Hit(
            severity=S,
            detail=f"{what} loses nothing here: no uncommitted change, commit or stash is lost",
        )
    policy = cover.active()
    place = policy.holds_repo(cwd, loss.files) if policy is not None and cwd else ""
    if place:
        return Hit(
            severity=S,
            detail=f"{what} {' and '.join(parts)}: undo can put it back, from the snapshot "
            "gatesh takes before it runs",
            covers=(place,),
        )
    return Hit(detail=f"{what} {' and '.join(parts)}", remedy="; ".join(remedies))


def _paths_after(c: Cmd) -> tuple[str | None, list[str]]:
    """(tree-ish before ``--`` or None, the paths) of a ``checkout``/``restore``."""
    argv = git_argv(c)
    start = argv.end_of_path
    ops = [(a, k) for a, k in zip(argv.operands, argv.operand_at, strict=True) if k >= start]
    if argv.dashdash >= 0:
        before = [a for a, k in ops if k < argv.dashdash]
        return (before[0] if before else None), [a for a, k in ops if k > argv.dashdash]
    return None, [a for a, _ in ops]


def reset_hard(c: Cmd) -> MatchResult:
    s, _rest = sub(c)
    if s != "reset" or not (_opts(c) & {"--hard", "--merge"}):
        return None
    cwd = _work_dir(c)
    unknown = "commit or stash first (git stash), then reset"
    if cwd is None:
        return Hit(
            detail="git reset --hard, in a folder only known when it runs, may throw away uncommitted work",
            remedy=unknown,
        )
    pos = _positional(c)
    target = pos[0] if pos else "HEAD"
    if c.is_dynamic(target):
        return Hit(
            detail="git reset --hard to a revision only known when it runs may drop commits",
            remedy=unknown,
        )
    probe = c.ctx.probe
    files = probe.uncommitted(cwd, staged=True)
    commits = probe.dropped_commits(cwd, target) if target not in ("HEAD", "@") else GitLoss()
    merged = GitLoss(
        files.files, commits.commits, commits.more_commits, unknown=files.unknown or commits.unknown
    )
    return _lost("git reset --hard", merged, unknown_remedy=unknown, cwd=cwd)


def clean_force(c: Cmd) -> MatchResult:
    s, rest = sub(c)
    if s != "clean":
        return None
    o = _opts(c)
    if o & {"-n", "--dry-run"} or not (o & {"-f", "--force"}):
        return None
    cwd = _work_dir(c)
    unknown = "run git clean -n first and delete only what it lists, or stash -u"
    if cwd is None or any(c.is_dynamic(a) for a in rest):
        return Hit(
            detail="git clean, with a folder or path only known when it runs, may delete untracked work",
            remedy=unknown,
        )
    # Only the options that choose what is deleted reach the dry run: never -q (it would print
    # nothing, "losing nothing"), -i or -f.
    argv = git_argv(c)
    options: list[str] = []
    for opt in argv.options:
        if opt.level < 1:
            continue
        if opt.name in ("-d", "-x", "-X"):
            options.append(opt.name)
        elif opt.name in ("-e", "--exclude") and opt.value is not None:
            options.append("-e" + opt.value)
    paths = _positional(c)
    return _lost(
        "git clean", c.ctx.probe.cleaned(cwd, options, paths), unknown_remedy=unknown, cwd=cwd
    )


def push_force(c: Cmd) -> MatchResult:
    s, _rest = sub(c)
    if s != "push":
        return None
    o = _opts(c)
    refs = _positional(c)[1:]  # after the remote
    plus = [r for r in refs if r.startswith("+")]
    # A --force… spelling git push does not know is taken as a plain force (fail closed), and
    # --force-if-includes protects nothing without --force-with-lease (git ignores it alone).
    odd = any(x.startswith("--force") and x not in _FORCE_SPELLINGS for x in o)
    forced = bool(o & {"--force", "-f", "--force-with-lease"}) or bool(plus) or odd
    if not forced:
        return None
    names = {r.lstrip("+").split(":")[-1].removeprefix("refs/heads/") for r in refs}
    lease = "--force-with-lease" in o and "--no-force-with-lease" not in o and not odd
    if names & PROTECTED:
        # A lease only checks nobody pushed in between: the protected branch's history is
        # rewritten all the same.
        how = " with a lease" if lease else ""
        return Hit(severity=C, detail=f"the protected branch {sorted(names & PROTECTED)[0]}{how}")
    if lease:
        return None
    return Hit(detail="the remote branch's history")


def push_delete(c: Cmd) -> MatchResult:
    s, _rest = sub(c)
    if s != "push":
        return None
    o = _opts(c)
    refs = _positional(c)[1:]
    deleted = [r[1:] for r in refs if r.startswith(":") and len(r) > 1]
    if o & {"--delete", "-d"}:
        deleted += refs
    if "--mirror" in o or "--prune" in o:
        return Hit(detail="remote refs that are missing locally")
    if not deleted:
        return None
    names = {r.removeprefix("refs/heads/") for r in deleted}
    if names & PROTECTED:
        return Hit(severity=C, detail="the protected branch " + sorted(names & PROTECTED)[0])
    return Hit(detail="the remote branch " + ", ".join(sorted(names)))


def branch_force_delete(c: Cmd) -> MatchResult:
    s, _rest = sub(c)
    if s != "branch":
        return None
    o = _opts(c)
    if "-D" in o or (bool(o & {"-d", "--delete"}) and bool(o & {"-f", "--force"})):
        return True
    if o & {"-f", "--force"} and _positional(c):
        return Hit(detail="git branch --force moves an existing branch, dropping its commits")
    return None


def stash_drop(c: Cmd) -> MatchResult:
    argv = git_argv(c)
    if argv.path[:1] != ("stash",) or argv.sub(1) not in ("drop", "clear"):
        return None
    verb = argv.sub(1)
    cwd = _work_dir(c)
    unknown = "apply or branch the stash first (git stash branch NAME)"
    which = None if verb == "clear" else next(iter(_positional(c, 1)), "stash@{0}")
    if cwd is None or (which is not None and c.is_dynamic(which)):
        return Hit(
            detail="dropping a stash only known when it runs deletes saved work", remedy=unknown
        )
    if which in (None, "stash@{0}", "0") and _stashed_earlier(c):
        # The line saved the uncommitted work in a stash a moment ago: that is what it drops.
        saved = c.ctx.probe.uncommitted(cwd, staged=True)
        return _lost(f"git stash, then stash {verb},", saved, unknown_remedy=unknown, cwd=cwd)
    return _lost(
        f"git stash {verb}", c.ctx.probe.stashes(cwd, which), unknown_remedy=unknown, cwd=cwd
    )


def _stashed_earlier(c: Cmd) -> bool:
    """Whether an earlier command of the line stashed the working tree (and none applied it back)."""
    stashed = False
    for earlier in c.ctx.cmds[: c.index]:
        if earlier.head != "git":
            continue
        path = git_argv(earlier).path
        if path[:1] == ("stash",) and path[1:2] in ((), ("push",), ("save",)):
            stashed = True
        elif path[:2] in (("stash", "pop"), ("stash", "apply")):
            stashed = False
    return stashed


def _discards(c: Cmd, what: str, paths: list[str], *, staged: bool) -> MatchResult:
    cwd = _work_dir(c)
    unknown = "stash first (git stash), or commit the changes"
    if cwd is None or any(c.is_dynamic(p) for p in paths):
        return Hit(
            detail=f"{what}, with a folder or path only known when it runs, may overwrite uncommitted changes",
            remedy=unknown,
        )
    return _lost(
        what, c.ctx.probe.uncommitted(cwd, paths, staged=staged), unknown_remedy=unknown, cwd=cwd
    )


def checkout_discard(c: Cmd) -> MatchResult:
    if not _checkout_discards(c):
        return None
    o = _opts(c)
    if o & {"--pathspec-from-file"}:
        return Hit(
            detail="git checkout --pathspec-from-file overwrites files it lists elsewhere",
            remedy="stash first (git stash), or name the files",
        )
    source, paths = _paths_after(c)
    if o & {"-f", "--force"} and git_argv(c).dashdash < 0:
        return _discards(c, "git checkout --force", [], staged=True)
    if source is None and git_argv(c).dashdash < 0 and len(paths) >= 2:
        source, paths = paths[0], paths[1:]  # `git checkout HEAD file`: a tree-ish, then paths
    return _discards(c, "this checkout", paths, staged=source is not None)


def _checkout_discards(c: Cmd) -> bool:
    argv = git_argv(c)
    if argv.subcommand != "checkout":
        return False
    o = _opts(c)
    if o & {"-f", "--force", "--pathspec-from-file"}:
        return True
    if o & {"-b", "-B", "--orphan"}:
        return False
    _source, paths = _paths_after(c)
    if argv.dashdash >= 0:
        return bool(paths)
    return any(p in (".", "./", "*", ":/") for p in paths) or len(paths) >= 2


def restore_worktree(c: Cmd) -> MatchResult:
    s, _rest = sub(c)
    if s != "restore":
        return None
    o = _opts(c)
    if not (o & {"-W", "--worktree"}) and (o & {"-S", "--staged"} or not _positional(c)):
        return None
    source = bool(o & {"-s", "--source"})
    paths = _positional(c)
    return _discards(c, "git restore", paths, staged=source or bool(o & {"-S", "--staged"}))


def switch_discard(c: Cmd) -> MatchResult:
    s, _rest = sub(c)
    if s != "switch" or not (_opts(c) & {"--discard-changes", "-f", "--force"}):
        return None
    return _discards(c, "git switch --discard-changes", [], staged=True)


def rewrite_history(c: Cmd) -> MatchResult:
    s, _ = sub(c)
    return s in ("filter-branch", "filter-repo")


def drop_unreachable(c: Cmd) -> MatchResult:
    s, _ = sub(c)
    if s == "reflog" and git_argv(c).sub(1) in ("expire", "delete"):
        return True
    if s == "gc" and any(v in ("now", "all") for v in git_argv(c).values("--prune", level=1)):
        return True
    if s == "prune" and not (_opts(c) & {"-n", "--dry-run"}):
        return True
    return s == "update-ref" and bool(_opts(c) & {"-d"})


def worktree_force_remove(c: Cmd) -> MatchResult:
    return git_argv(c).path[:2] == ("worktree", "remove") and bool(_opts(c) & {"-f", "--force"})


def rm_cached_force(c: Cmd) -> MatchResult:
    s, _rest = sub(c)
    if s != "rm":
        return None
    o = _opts(c)
    return not (o & {"--cached", "-n", "--dry-run"}) and bool(o & {"-f", "--force", "-r"})


def tag_delete(c: Cmd) -> MatchResult:
    s, _rest = sub(c)
    return s == "tag" and bool(_opts(c) & {"-d", "--delete"})


# Subcommands whose --no-verify skips a hook, and the short option that means the same for each.
_NO_VERIFY_SHORT: Final = {
    "commit": "-n",
    "merge": "",
    "push": "",
    "am": "",
    "rebase": "",
    "cherry-pick": "",
    "revert": "",
}


# Plumbing that updates another repository's refs without this side's pre-push hook (a push to a
# protected branch this way is self-protection's, self.git-hooks-bypass).
_HOOKLESS_PUSH: Final = frozenset({"send-pack", "http-push", "receive-pack"})


def skip_hooks(c: Cmd) -> MatchResult:
    """--no-verify (commit's -n) skips the pre-commit/pre-push hooks gatesh's git hooks gate with."""
    s, _rest = sub(c)
    if s in _HOOKLESS_PUSH and not git_argv(c).has("-h", "--help"):
        return Hit(detail=f"git {s} (plumbing that runs no pre-push hook)")
    if s in _NO_VERIFY_SHORT:
        o = _opts(c)
        short = _NO_VERIFY_SHORT[s]
        if s == "push" and ("-n" in o or "--dry-run" in o):
            return None  # a dry run pushes nothing: no hook has anything to gate
        if "--no-verify" in o or (short and short in o):
            return Hit(detail=f"git {s} --no-verify")
    argv = git_argv(c)
    if any(
        v.lower().startswith("core.hookspath=") for v in argv.values("-c", "--config-env", level=0)
    ):
        return Hit(detail="git -c core.hooksPath=…")
    return None


RULES: tuple[Rule, ...] = (
    Rule(
        "git.skip-hooks",
        D,
        "{detail} skips the git hooks that gate commits and pushes.",
        skip_hooks,
        remedy="run it without --no-verify and fix what the hook reports",
        heads=GIT,
        examples=(
            "git commit --no-verify -m x",
            "git commit -nm x",
            "git push --no-verify origin main",
            "git -c core.hooksPath=/dev/null commit -m x",
            "git send-pack ../remote.git topic",
            "git http-push https://example.com/r.git topic",
        ),
        counter=(
            "git commit -m x",
            "git push -n origin main",
            "git -c user.name=x commit -m y",
            "git send-pack -h",
            "git push -n --no-verify origin main",
        ),
    ),
    Rule(
        "git.reset-hard",
        D,
        "{detail}.",
        reset_hard,
        remedy="stash first (git stash) or commit, then reset",
        heads=GIT,
        examples=(
            "git reset --hard",
            "git reset --hard HEAD~1",
            "sudo git reset --hard origin/main",
            "git -C . reset --hard",
        ),
        counter=("git reset HEAD file", "git reset --soft HEAD~1", "git add reset --hard"),
    ),
    Rule(
        "git.clean-force",
        D,
        "{detail}.",
        clean_force,
        remedy="run git clean -n first and delete only what it lists, or stash -u",
        heads=GIT,
        examples=("git clean -fd", "git clean -f", "git clean -xdf"),
        counter=("git clean -n", "git clean -nd", "git status", "git clean -f node_modules"),
    ),
    Rule(
        "git.push-force",
        D,
        "A force push overwrites {detail}, discarding commits others may have.",
        push_force,
        remedy="use --force-with-lease",
        heads=GIT,
        examples=(
            "git push --force",
            "git push -f origin feature",
            "git push origin +feature",
            "git push --force origin main",
            "git push --force --force-if-includes",
            "git push --force-with-lease-if-includes origin feature",
            "git push --force-with-lease origin main",
            "git push origin main --force-with-lease=main:abc123",
        ),
        counter=(
            "git push --force-with-lease",
            "git push origin feature",
            "git push",
            "git push --force-with-lease --force-if-includes origin feature",
        ),
    ),
    Rule(
        "git.push-delete",
        D,
        "This push deletes {detail} on the remote.",
        push_delete,
        remedy="delete the remote branch by hand after checking nobody uses it",
        heads=GIT,
        examples=(
            "git push origin --delete feature",
            "git push origin :feature",
            "git push --mirror",
        ),
        counter=("git push origin feature", "git push -u origin HEAD"),
    ),
    Rule(
        "git.branch-force-delete",
        D,
        "Git branch -D or --force drops a branch's unmerged commits.",
        branch_force_delete,
        remedy="use git branch -d, which refuses unmerged branches",
        heads=GIT,
        examples=("git branch -D feature", "git branch --delete --force old"),
        counter=("git branch -d feature", "git branch -a"),
    ),
    Rule(
        "git.stash-drop",
        D,
        "{detail}.",
        stash_drop,
        remedy="apply or branch the stash first (git stash branch NAME)",
        heads=GIT,
        examples=(
            "git stash drop",
            "git stash clear",
            "git stash drop stash@{0}",
            "git stash && git stash drop",
            "git add -A && git stash push -m x && git stash clear",
        ),
        counter=("git stash", "git stash list", "git stash pop", "git stash drop stash@{5}"),
    ),
    Rule(
        "git.checkout-discard",
        D,
        "{detail}.",
        checkout_discard,
        remedy="stash first (git stash), or commit the changes",
        heads=GIT,
        examples=(
            "git checkout -- src/app.py",
            "git checkout .",
            "git checkout -f main",
            "git checkout HEAD -- src/",
            "git checkout -- '*.py'",
        ),
        counter=(
            "git checkout -b feature",
            "git checkout main",
            "git checkout feature/x",
            "git checkout -- README.md",
            "git checkout -- docs",
        ),
    ),
    Rule(
        "git.restore-worktree",
        D,
        "{detail}.",
        restore_worktree,
        remedy="stash first (git stash), or restore only --staged",
        heads=GIT,
        examples=("git restore src/app.py", "git restore .", "git restore -W src/app.py"),
        counter=("git restore -S file.txt", "git restore --staged .", "git restore README.md"),
    ),
    Rule(
        "git.switch-discard",
        D,
        "{detail}.",
        switch_discard,
        remedy="stash first (git stash)",
        heads=GIT,
        examples=("git switch --discard-changes main", "git switch -f main"),
        counter=("git switch main", "git switch -c feature"),
    ),
    Rule(
        "git.rewrite-history",
        D,
        "Rewriting all history with filter-branch/filter-repo replaces every commit.",
        rewrite_history,
        remedy="work on a fresh clone and keep the original",
        heads=GIT,
        examples=("git filter-branch --tree-filter 'rm -f x' HEAD", "git filter-repo --path src"),
        counter=("git log --follow file",),
    ),
    Rule(
        "git.drop-unreachable",
        D,
        "This deletes reflog entries or unreachable objects, the last copy of lost commits.",
        drop_unreachable,
        remedy="leave the reflog alone; let git gc expire it on its own schedule",
        heads=GIT,
        examples=(
            "git reflog expire --expire=now --all",
            "git gc --prune=now",
            "git update-ref -d refs/heads/x",
        ),
        counter=("git reflog", "git gc", "git update-ref refs/heads/x HEAD"),
    ),
    Rule(
        "git.worktree-force-remove",
        D,
        "Removing a worktree with --force deletes its uncommitted changes.",
        worktree_force_remove,
        remedy="commit or stash inside the worktree first",
        heads=GIT,
        examples=("git worktree remove --force ../wt",),
        counter=("git worktree list", "git worktree remove ../wt"),
    ),
    Rule(
        "git.rm-force",
        D,
        "git rm -f deletes files from the working tree along with their uncommitted changes.",
        rm_cached_force,
        remedy="use git rm --cached to untrack without deleting",
        heads=GIT,
        examples=("git rm -rf src", "git rm -f notes.txt"),
        counter=("git rm --cached -r build", "git rm file.txt"),
    ),
    Rule(
        "git.tag-delete",
        D,
        "Deleting a tag removes a release marker others may rely on.",
        tag_delete,
        remedy="leave released tags in place",
        heads=GIT,
        examples=("git tag -d v1.0",),
        counter=("git tag v1.1", "git tag -l"),
    ),
)

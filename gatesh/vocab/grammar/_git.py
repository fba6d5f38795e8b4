"""git's grammar: its own options before the subcommand, and each subcommand's."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from ._parse import Bundling, Grammar
from ._rows import _f, _o, _subs

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

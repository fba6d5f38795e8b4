"""Programs whose positional words are data, not verbs: the builtin rater's verb rules skip them.

Two rules read a service CLI's verbs from its first positional words (``TOOL [GROUP…] VERB
NAME``): the delete rule (``generic.delete-verb``: ``vault kv delete``) and the gap for a program
told to change state that no table models (``qm start 100``), which the gaps for a program run as
root and for one naming another host share. A program whose words are text, patterns, paths or
hosts has no such verbs (``grep remove file``), so both skip it. One table, row by row with why:
:data:`SHARED` rows are skipped by every verb rule; :data:`STATE_ONLY` and :data:`DELETE_ONLY`
rows by one, each saying why the other still reads them. A program is in one row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["DELETE_ONLY", "NO_DELETE_VERBS", "NO_STATE_VERBS", "SHARED", "STATE_ONLY", "Verbless"]


def _w(names: str) -> frozenset[str]:
    return frozenset(names.split())


@dataclass(frozen=True)
class Verbless:
    """Programs whose positional words are data, and why."""

    id: str
    programs: frozenset[str]
    reason: str


SHARED: Final[tuple[Verbless, ...]] = (
    Verbless(
        "text",
        _w(
            """
            echo printf grep egrep fgrep rg ag ack sed gsed awk gawk mawk jq yq cat
            head tail less more sort uniq cut tr wc tee diff cmp column paste join
            comm fold fmt nl rev tac expand seq yes base64 xxd od hexdump strings
            md5sum sha1sum sha256sum sha512sum shasum cksum
            """
        ),
        "print, search, transform or sum text and files: their words are text, patterns and "
        "file names",
    ),
    Verbless(
        "files",
        _w(
            """
            find fd ls tree stat file du df basename dirname realpath readlink rm
            rmdir cp mv ln mkdir touch chmod chown chgrp tar zip unzip gzip gunzip
            bzip2 xz zstd 7z
            """
        ),
        "list, copy, move, remove, archive or change the files they name: every effect is on "
        "those paths, which the path rules judge",
    ),
    Verbless(
        "shell",
        _w(
            """
            test [ [[ true false cd pushd popd export unset alias unalias read local
            declare typeset shift wait exit return source . eval history printenv env
            time command builtin date sleep pwd xargs sh bash zsh dash ksh
            """
        ),
        "shells and their builtins: what they run the reader reads as commands of their own",
    ),
    Verbless(
        "lookup",
        _w(
            """
            man help info which type whatis apropos tldr
            """
        ),
        "look a name up or show its documentation: the words are names to look up",
    ),
    Verbless(
        "web",
        _w(
            """
            curl wget http https xh ssh scp
            """
        ),
        "transfer clients whose words are URLs, methods, hosts and remote commands: the host "
        "table, the network rules and the floors judge them (a remote command is read as one)",
    ),
    Verbless(
        "git",
        _w(
            """
            git
            """
        ),
        "git, whose verbs the git table models",
    ),
)

STATE_ONLY: Final[tuple[Verbless, ...]] = (
    Verbless(
        "sessions",
        _w(
            """
            aria2c axel curlie httpie xhs telnet mosh nc ncat netcat sftp ftp lftp
            """
        ),
        "more transfer clients and remote sessions: the network rules judge them, and the "
        "delete rules still read them (an HTTP DELETE, a delete verb piped into a session)",
    ),
)

DELETE_ONLY: Final[tuple[Verbless, ...]] = (
    Verbless(
        "by-name",
        _w(
            """
            apt apt-get aws az brew bunx cargo crontab docker dotnet gcloud gem go
            gradle gsutil helm just kubectl make mongo mongosh mvn mysql node npm npx
            oc openssl perl pip pip3 pnpm pnpx podman poetry psql pulumi python
            python3 rclone redis-cli rsync ruby service sqlite3 sudo systemctl task
            terraform tofu yarn kill killall pkill watch
            """
        ),
        "tools a table of their own judges by name (packages, containers, clusters, clouds, "
        "databases, builds, interpreters, processes): the delete rule leaves them to it, while "
        "the gaps for unmodelled verbs and for root still read them (`kubectl apply`)",
    ),
    Verbless(
        "checkers",
        _w(
            """
            black eslint jest mypy nox prettier pytest ruff tox tsc vitest
            """
        ),
        "test runners, linters and formatters: their words are paths and options, and the code- "
        "runner gap judges what they run",
    ),
    Verbless(
        "editors",
        _w(
            """
            code emacs nano vi vim open xdg-open say notify-send
            """
        ),
        "open, edit or speak what they are given; under sudo an editor writes system files, "
        "which the root gap still sees",
    ),
    Verbless(
        "system",
        _w(
            """
            dig host hostname htop id lsof netstat nslookup ping ps ss top uname
            whoami
            """
        ),
        "print the state of the system and the network: their words are names, addresses and "
        "fields",
    ),
    Verbless(
        "more-shell",
        _w(
            """
            compgen complete exec fish hash set whereis
            """
        ),
        "shell builtins and lookups the delete rule skips, which the gaps still read",
    ),
    Verbless(
        "more-files",
        _w(
            """
            trash gio csplit
            """
        ),
        "move files to the trash or split one into pieces: the path rules judge the files they "
        "name",
    ),
)


def _union(*rows: tuple[Verbless, ...]) -> frozenset[str]:
    return frozenset().union(*(r.programs for part in rows for r in part))


#: The programs the gaps for unmodelled state-changing verbs, for root and for other hosts skip.
NO_STATE_VERBS: Final = _union(SHARED, STATE_ONLY)
#: The programs the delete-verb rule skips.
NO_DELETE_VERBS: Final = _union(SHARED, DELETE_ONLY)

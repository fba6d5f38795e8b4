"""Where a relative name lies, and which programs make no file but those they name.

After a change of working directory (:data:`CD_HEADS`, :data:`CHDIR_WRAPPERS`) a relative name is
only placed for certain by a plain top-level ``cd DIR``; after only :data:`NAMED_FILES_ONLY`
programs, a file missing when a command is decided is not made by the text before it runs.
"""

from __future__ import annotations

from typing import Final

# another one (``env -C``, ``sudo -D``, ``chroot``): after them, where a relative name lies is only
# known for certain when the change is a plain top-level ``cd DIR``.
CD_HEADS: Final[frozenset[str]] = frozenset({"cd", "pushd", "popd", "chdir"})
CHDIR_WRAPPERS: Final[frozenset[str]] = frozenset(
    {"env", "sudo", "doas", "chroot", "nsenter", "unshare", "su", "runuser", "flock", "strace"}
)

# Programs that create no file but those their words or redirections name (which the reader's path
# effects record): after only these, a file that is not there when a command is decided is not
# made by the text before it runs (a download, an extraction, a build or a script could).
NAMED_FILES_ONLY: Final[frozenset[str]] = frozenset(
    {
        "cd",
        "pushd",
        "popd",
        "ls",
        "echo",
        "printf",
        "cat",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "head",
        "tail",
        "wc",
        "pwd",
        "true",
        "false",
        "test",
        "[",
        "[[",
        "which",
        "type",
        "command",
        "export",
        "set",
        "unset",
        "mkdir",
        "rm",
        "rmdir",
        "chmod",
        "chown",
        "touch",
        "cp",
        "mv",
        "ln",
        "sed",
        "sort",
        "uniq",
        "cut",
        "tr",
        "diff",
        "sleep",
        "date",
        "clear",
    }
)

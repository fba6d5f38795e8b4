"""Programs that run commands typed at them: a shell escape at a terminal (vim's ``:!``, ed's
``!``, a debugger's ``shell``, a mail reader's ``~!``); and full-screen programs, which need a
terminal (:data:`FULL_SCREEN_ROWS`, :func:`full_screen`).

What such a program will run is typed later, so it is opaque code (S2.1) unless its escapes are
turned off or it opens no session (:data:`INTERACTIVE_ROWS`, :func:`interactive`).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from gatesh.vocab.programs.info import LONG_INFO, TYPED_AT_INFO


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


@dataclass(frozen=True)
class Interactive:
    """A program that, at a terminal, reads commands of its own that can start programs: a shell
    escape (vim's ``:!``, ed's ``!``, a debugger's ``shell``, a mail reader's ``~!``). What it
    will run is typed later, so it is opaque code (S2.1) unless turned off.

    ``contained``: options that turn its escapes off (vim's restricted ``-Z``). ``quiet``:
    options with which it opens no session (``--version``, a batch mode, a command given on the
    command line). ``only``: the row applies only with one of these options (``perl -d``, its
    debugger; ``python -i``); a prefix match, so ``-de0`` is ``-d``. ``fed``: reading its input
    from a pipe, a file or a here-document opens no session at the terminal. ``operands``: with at
    least this many operands it runs them and opens no session (``sqlite3 DB SQL``).

    Less, more, man and git's pager are not rows: a gated session runs them with their escapes off
    or through its gated shell (``LESSSECURE``, ``SHELL``, a restricted editor; S10).
    """

    id: str
    programs: frozenset[str]
    reason: str
    contained: frozenset[str] = frozenset()
    quiet: frozenset[str] = frozenset()
    only: tuple[str, ...] = ()
    fed: bool = False
    operands: int = 0


INTERACTIVE_ROWS: Final[tuple[Interactive, ...]] = (
    Interactive(
        "vim",
        _f(
            "vim",
            "vi",
            "ex",
            "view",
            "vimdiff",
            "gvim",
            "gview",
            "nvim",
            "vimx",
            "evim",
            "vim.basic",
            "vim.tiny",
        ),
        "vim runs shell commands typed at it (`:!`, `:terminal`, its Python and Lua interfaces)",
        contained=_f("-Z"),
        quiet=LONG_INFO,  # -V is verbose in vim: it starts the editor
    ),
    Interactive("ed", _f("ed"), "ed runs a shell command for `!`", quiet=TYPED_AT_INFO),
    Interactive(
        "emacs",
        _f("emacs", "emacs-nox", "emacs-gtk"),
        "emacs runs shell commands typed at it (M-!, M-x shell)",
        quiet=TYPED_AT_INFO | _f("--batch", "-batch"),
    ),
    Interactive(
        "nano",
        _f("nano", "pico"),
        "nano runs a command typed at it (Execute Command)",
        contained=_f("-R", "--restricted"),
        quiet=TYPED_AT_INFO,
    ),
    Interactive(
        "perl-debugger",
        _f("perl"),
        "perl's debugger runs the Perl (and the shell commands) typed at it",
        only=("-d",),
    ),
    Interactive(
        "python-interactive",
        _f("python", "python3", "python2", "pypy", "pypy3"),
        "python -i goes on to run the Python typed at it",
        only=("-i",),
    ),
    Interactive(
        "debugger",
        _f("gdb", "lldb", "cgdb", "pdb", "pdb3", "jdb"),
        "a debugger runs commands typed at it, a shell among them",
        quiet=TYPED_AT_INFO | _f("--batch", "-batch", "--configuration"),
    ),
    Interactive(
        "mail",
        _f("mail", "mailx", "bsd-mailx", "s-nail", "nail", "mutt", "neomutt"),
        "a mail reader runs shell commands typed at it (`!`, `~!`)",
        quiet=TYPED_AT_INFO,
        fed=True,
    ),
    Interactive(
        "ftp",
        _f("ftp", "tnftp", "pftp", "lftp", "sftp", "netkit-ftp", "ncftp"),
        "an ftp client runs a shell command for `!`",
        quiet=TYPED_AT_INFO | _f("-b", "-c", "-e"),
        fed=True,
    ),
    Interactive(
        "database-shell",
        _f("psql", "mysql", "mariadb", "sqlite3"),
        "a database shell runs shell commands typed at it (`\\!`, `.shell`, `system`)",
        quiet=TYPED_AT_INFO
        | _f("-c", "--command", "-e", "--execute", "-f", "--file", "-l", "--list", "-cmd"),
        fed=True,
        operands=2,
    ),
)
_INTERACTIVE_BY_PROGRAM: Final = MappingProxyType(
    {p: row for row in INTERACTIVE_ROWS for p in row.programs}
)
INTERACTIVE_PROGRAMS: Final[frozenset[str]] = frozenset(_INTERACTIVE_BY_PROGRAM)


def interactive(head: str) -> Interactive | None:
    """The row of a program that runs commands typed at it, or None."""
    return _INTERACTIVE_BY_PROGRAM.get(head)


@dataclass(frozen=True)
class FullScreen:
    """A program that draws a whole screen on a terminal and waits for keys: a full-screen editor.

    Without a terminal it waits for keys nobody can type (it hangs) or fails; at one, what it does
    is what is typed at it, and an editor's work is an edit of the files it is given (its shell
    escapes reach the session's gated shell, ``SHELL``; S10). ``line``: options with which it
    runs line by line or as a batch, or prints and ends, needing no terminal. Pagers are not rows:
    without a terminal less, more and man print what they are given and end.
    """

    id: str
    programs: frozenset[str]
    line: frozenset[str] = TYPED_AT_INFO


FULL_SCREEN_ROWS: Final[tuple[FullScreen, ...]] = (
    FullScreen(
        "vim",
        _f("vim", "vi", "view", "vimdiff", "nvim", "vimx", "vim.basic", "vim.tiny", "rvim"),
        line=LONG_INFO | _f("-e", "-E", "--headless"),  # -V is verbose in vim
    ),
    FullScreen(
        "emacs",
        _f("emacs", "emacs-nox", "emacs-gtk"),
        line=TYPED_AT_INFO | _f("--batch", "-batch", "--script", "-script", "--daemon"),
    ),
    FullScreen("nano", _f("nano", "pico", "rnano")),
    FullScreen(
        "editor",
        _f("micro", "joe", "jed", "mcedit", "ne", "kak", "hx", "helix", "mg", "jove", "vis"),
    ),
)
_FULL_SCREEN_BY_PROGRAM: Final = MappingProxyType(
    {p: row for row in FULL_SCREEN_ROWS for p in row.programs}
)
FULL_SCREEN_PROGRAMS: Final[frozenset[str]] = frozenset(_FULL_SCREEN_BY_PROGRAM)


def full_screen(head: str, flags: frozenset[str]) -> FullScreen | None:
    """The row of ``head`` when, given the options ``flags``, it opens a full screen; else None."""
    row = _FULL_SCREEN_BY_PROGRAM.get(head)
    return None if row is None or row.line & flags else row

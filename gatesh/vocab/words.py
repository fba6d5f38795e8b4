"""How every layer takes a command's words apart: options and operands, option values, paths in
their canonical form, and the code a command hands an interpreter (S2, S2.1).

Policy tables, the read-only table and the builtin rater all ask these, never a copy of their
own, so an option that takes a value or a path that names a credential store means the same thing
in each. Pure functions over words and read facts: no I/O, no state.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterable, Iterator
from typing import Final

from gatesh._types import Facts, SimpleCommand, Word
from gatesh.vocab.programs.interpreters import inline_opts, interpreter, invocation
from gatesh.vocab.programs.shells import PARSED_SHELLS, SHELLS, STDIN_NAMES
from gatesh.vocab.pycode import modelled

# Tests that pick some files out of the tree: with one, find deletes a selection, not everything.
FIND_FILTERS: Final = frozenset(
    {
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-newer",
        "-anewer",
        "-cnewer",
        "-size",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-nouser",
        "-nogroup",
        "-perm",
        "-empty",
        "-links",
        "-inum",
        "-samefile",
        "-used",
        "-lname",
        "-ilname",
        "-fstype",
        "-newermt",
        "-context",
    }
)


# --- words and options --------------------------------------------------------------------

_QUOTES: Final = str.maketrans("", "", "\"'")


def unquote(word: Word | str) -> str:
    """The text of a word with stray quote characters removed.

    The reader keeps the source text of a dynamic word (``"$HOME"`` with its quotes); policy
    compares the shape, so the quotes go.
    """
    text = word.text if isinstance(word, Word) else word
    return text.translate(_QUOTES) if ("'" in text or '"' in text) else text


def split_args(
    args: Iterable[str], with_arg: frozenset[str] = frozenset(), *, clusters: bool = False
) -> tuple[list[str], list[str]]:
    """Split argv[1:] into (options, operands); ``--`` ends options.

    An option in ``with_arg`` swallows the next word (its value is kept with the options). With
    ``clusters``, a short cluster (``-fNR 1234:h:22``) is read letter by letter: the first letter
    that takes a value takes the rest of the cluster, or the next word when it is the last letter.
    """
    opts: list[str] = []
    operands: list[str] = []
    it = iter(args)
    for a in it:
        if a == "--":
            operands.extend(it)
            break
        if a.startswith("-") and a != "-":
            opts.append(a)
            takes = a in with_arg
            if not takes and clusters and not a.startswith("--"):
                k = next((k for k in range(1, len(a)) if "-" + a[k] in with_arg), 0)
                takes = k == len(a) - 1
            if takes:
                nxt = next(it, None)
                if nxt is not None:
                    opts.append(nxt)
        else:
            operands.append(a)
    return opts, operands


def has_short(opts: Iterable[str], letters: str) -> bool:
    """True when a short-option cluster (``-rf``) in ``opts`` contains any of ``letters``."""
    for o in opts:
        if o.startswith("-") and not o.startswith("--") and any(ch in o[1:] for ch in letters):
            return True
    return False


def has_long(opts: Iterable[str], *names: str) -> bool:
    """True when ``opts`` holds ``--name`` or ``--name=value`` for any of ``names``."""
    for o in opts:
        if o.startswith("--"):
            key = o.split("=", 1)[0]
            if key in names:
                return True
    return False


def option_values(args: tuple[str, ...], names: frozenset[str]) -> Iterator[str]:
    """Values given to the options ``names`` (``-d X``, ``-dX``, ``--data=X``, ``--data X``)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a in names:
            if i + 1 < len(args):
                yield args[i + 1]
            i += 2
            continue
        if a.startswith("--") and "=" in a and a.split("=", 1)[0] in names:
            yield a.split("=", 1)[1]
        elif not a.startswith("--"):
            for n in names:
                if len(n) == 2 and n.startswith("-") and a.startswith(n) and len(a) > 2:
                    yield a[2:]
        i += 1


# --- paths ----------------------------------------------------------------------------------

_HOME_FORMS: Final = re.compile(r"^(?:~|\$HOME|\$\{HOME\})(?=/|$)")
_GLOB_ALL: Final = re.compile(r"(?:/\*|/\.\*|/\{\*,\.\*\}|/\.\[!.\]\*)+$")


def canon_path(word: Word | str) -> str:
    """A path word in a canonical lexical form, with home written as ``~``.

    ``"$HOME"``, ``${HOME}/``, ``~/`` and ``~`` all become ``~``; ``/etc/`` becomes ``/etc``;
    a trailing ``/*`` (everything inside) is dropped, so ``/*`` is ``/`` and ``~/*`` is ``~``;
    ``..`` is folded lexically. Relative paths stay relative. Never touches the disk.
    """
    text = unquote(word)
    return _canon_cached(text) if len(text) <= _CANON_CACHED_CHARS else _canon(text)


# Path words longer than this are canonicalised afresh each time, so the cache below holds at
# most 4096 short strings (a path word is a few dozen characters; a 1 MiB word is not a path).
_CANON_CACHED_CHARS: Final = 512


def _canon(text: str) -> str:
    """:func:`canon_path` of an unquoted text: a pure function of it, so short ones are remembered."""
    text = text.strip()
    if not text:
        return text
    text = _HOME_FORMS.sub("~", text)
    if text.startswith("~") and not text.startswith("~/") and text != "~":
        return text  # ~user: another user's home, left as written
    stripped = _GLOB_ALL.sub("", text)
    if stripped != text:
        text = stripped or "/"
    if text.startswith("~"):
        rest = posixpath.normpath("/" + text[1:].lstrip("/"))
        return "~" if rest == "/" else "~" + rest
    if text.startswith("/"):
        norm = posixpath.normpath(text)
        return "/" if norm.startswith("//") else norm
    return posixpath.normpath(text)


_canon_cached: Final = functools.lru_cache(maxsize=4096)(_canon)


# System folders whose recursive loss (or recursive chmod/chown) needs rescue media or a re-install.
SYSTEM_DIRS: Final = frozenset(
    {
        "/",
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/media",
        "/mnt",
        "/opt",
        "/proc",
        "/root",
        "/run",
        "/sbin",
        "/srv",
        "/sys",
        "/usr",
        "/var",
        "/snap",
        "/efi",
        "/nix",
        "/nix/store",
        "/usr/bin",
        "/usr/sbin",
        "/usr/lib",
        "/usr/lib64",
        "/usr/local",
        "/usr/share",
        "/usr/include",
        "/usr/local/bin",
        "/usr/local/lib",
        "/var/lib",
        "/var/log",
        "/var/cache",
        "/var/spool",
        "/etc/ssh",
        "/etc/pam.d",
        "/etc/systemd",
        "/boot/efi",
        # macOS
        "/System",
        "/Library",
        "/Applications",
        "/Users",
        "/private",
        "/private/etc",
        "/private/var",
        "/Volumes",
    }
)

# A user's home: /home/NAME, /Users/NAME (another way to say ~).
_USER_HOME: Final = re.compile(r"^/(?:home|Users)/[^/]+$")


def is_vital_path(path: str) -> bool:
    """True for ``/``, home (``~``, ``/root``, ``/home/NAME``) or a system folder (canonical form)."""
    return path == "~" or path in SYSTEM_DIRS or bool(_USER_HOME.match(path))


# Raw block devices: writing onto one destroys a disk's partition table and file systems.
BLOCK_DEVICE: Final = re.compile(
    r"^/dev/(?:sd[a-z]+\d*|hd[a-z]+\d*|vd[a-z]+\d*|xvd[a-z]+\d*|nvme\d+n\d+(?:p\d+)?"
    r"|mmcblk\d+(?:p\d+)?|md\d+|dm-\d+|mapper/\S+|disk/\S+|r?disk\d+(?:s\d+)?|sr\d+|nbd\d+"
    r"|fd\d+|ubd[a-z]+\d*|root)$"
)


def is_block_device(word: Word | str) -> bool:
    """True when the word names a raw block device (``/dev/sda``, ``/dev/nvme0n1p1`` …)."""
    return bool(BLOCK_DEVICE.match(canon_path(word)))


# Credential stores whose contents leaving the machine cannot be taken back (S3.3).
CREDENTIAL_PATH: Final = re.compile(
    r"(?:^|/)(?:"
    r"\.ssh(?:/(?!.*\.pub$)(?:id_[^/]*|[^/]*_key|identity))?"
    r"|id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?"
    r"|\.aws(?:/[^/]*)?|\.netrc|_netrc|\.env(?:\.[\w.-]+)?|\.pgpass|\.git-credentials"
    r"|\.config/gh(?:/hosts\.yml)?|\.docker/config\.json|\.kube(?:/config)?|\.gnupg(?:/.*)?"
    r"|\.npmrc|\.pypirc|\.vault-token|\.config/gcloud(?:/.*)?|\.azure(?:/.*)?"
    r"|\.password-store(?:/.*)?|\.config/op(?:/.*)?|credentials\.json"
    r"|etc/(?:shadow|gshadow|sudoers)"
    r"|gatesh(?:-\d+)?/(?:daemon\.env|person\.token)"  # gatesh's own (places: cred.gatesh)
    r")/?$"
)


def is_credential_path(word: Word | str) -> bool:
    """True when the word names a credential file or folder (``~/.ssh/id_rsa``, ``.env`` …)."""
    text = unquote(word)
    if not text:
        return False
    return _credential_cached(text) if len(text) <= _CANON_CACHED_CHARS else _credential(text)


def _credential(text: str) -> bool:
    """:func:`is_credential_path` of an unquoted text: a pure function of it, so short ones are
    remembered (at most 4096, as :func:`canon_path`'s)."""
    return CREDENTIAL_PATH.search(canon_path(text)) is not None


_credential_cached: Final = functools.lru_cache(maxsize=4096)(_credential)


def inline_code(cmd: SimpleCommand) -> tuple[str, ...]:
    """The program text an interpreter (or a shell whose language gatesh does not parse) runs
    from its argv: ``python -c X``, ``perl -e X``, awk's program, ``vim -c X``, ``fish -c X``.

    Empty for anything else; a Bourne shell's ``-c`` string is read by the reader itself.
    """
    head = cmd.head
    args = cmd.args
    lang = interpreter(head)
    if lang is not None:
        if lang.program_operand and ("-f" in args or "--file" in args):
            return ()
        return invocation(lang, args).inline
    flags = inline_opts(head) if head in SHELLS and head not in PARSED_SHELLS else frozenset()
    if flags:
        return tuple(option_values(args, flags)) + tuple(
            a[2:] for a in args if len(a) > 2 and a[:2] in flags and not a.startswith("--")
        )
    if head in _VIMS:
        return tuple(option_values(args, frozenset({"-c", "--cmd"}))) + tuple(
            a[1:] for a in args if a.startswith("+")
        )
    return ()


_VIMS: Final = frozenset({"vi", "vim", "nvim", "view", "rvim", "ex", "gvim", "vimdiff"})


def reads_program_from_stdin(head: str) -> bool:
    """A shell, or an interpreter that reads its program from standard input when given none."""
    if head in SHELLS:
        return True
    lang = interpreter(head)
    return lang is not None and lang.stdin


# Python modules that read their input as data (JSON) and run none of it.
_DATA_MODULES: Final = frozenset({"json.tool"})


def stdin_is_data(cmd: SimpleCommand) -> bool:
    """Whether an interpreter that could read a program on its input reads it as data here:
    Python given its program as inline code every effect of which is modelled (so nothing it
    reads can run: no ``exec``, no ``eval``, :mod:`gatesh.vocab.pycode`), or a module that
    parses its input (``python3 -m json.tool``)."""
    lang = interpreter(cmd.head)
    if lang is None or lang.name != "python":
        return False
    inline = invocation(lang, cmd.args).inline
    if inline:
        return all(modelled(code) is not None for code in inline)
    return invocation(lang, cmd.args).module_name in _DATA_MODULES


def reads_code_from_stdin(facts: Facts) -> bool:
    """True when a shell or interpreter runs code from its standard input, fed by the command line.

    ``echo 'rm -rf ~' | sh``, ``sh /dev/stdin <<< …``, ``. /dev/stdin``, ``… | python3 -``: the code is
    text the reader may not unfold, so policy matches the raw text as well.
    """
    piped = {i for pipe in facts.pipelines for i in pipe[1:]}
    # The reader may drop the pipe of `cat <<EOF | sh` (no pipeline recorded): a heredoc anywhere
    # next to a bare shell counts as feeding it.
    heredoc = any(r.op in ("<<", "<<-") for c in facts.commands for r in c.redirects)
    for i, cmd in enumerate(facts.commands):
        if cmd.head in (".", "source"):
            if any(a in STDIN_NAMES for a in cmd.args):
                return True
            continue
        if not reads_program_from_stdin(cmd.head) or stdin_is_data(cmd):
            continue
        opts, operands = split_args(cmd.args, frozenset({"-o", "+o", "-O", "+O", "-m", "-W", "-X"}))
        if (
            "-c" in opts
            or any(
                o.startswith("-") and not o.startswith("--") and "c" in o[1:]
                for o in opts
                if cmd.head in SHELLS
            )
            or (operands and operands[0] not in STDIN_NAMES)
        ):
            continue
        if (
            i in piped
            or heredoc
            or any(r.op in ("<<", "<<<", "<<-", "<") for r in cmd.redirects)
            or operands
        ):
            return True
    return False

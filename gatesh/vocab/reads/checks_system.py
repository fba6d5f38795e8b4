"""Argument checks of single programs that read files and the system: sed, find, tar and the
archivers, ip, openssl, the package databases, gpg.

Each returns False for every argument list that can write, delete, run another program or
change system state (the invariant of :class:`gatesh.vocab.reads.rule.ReadOnlyRule`).
"""

from __future__ import annotations

import re
from typing import Final

from gatesh.vocab.programs.info import VERSION_HELP, VERSION_ONLY
from gatesh.vocab.reads.rule import option_words

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


def sed_reads(args: tuple[str, ...]) -> bool:
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


def find_reads(args: tuple[str, ...]) -> bool:
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


def tar_reads(args: tuple[str, ...]) -> bool:
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


def ip_reads(args: tuple[str, ...]) -> bool:
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


def openssl_reads(args: tuple[str, ...]) -> bool:
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


def pacman_reads(args: tuple[str, ...]) -> bool:
    if not args or not args[0].startswith("-"):
        return False
    op = args[0]
    if op.startswith("-Q") or op == "--query" or op in VERSION_HELP:
        return True
    return op.startswith("-S") and set(op[2:]) <= set("silgq") and bool(set(op[2:]) & set("sil"))


def rpm_reads(args: tuple[str, ...]) -> bool:
    return bool(args) and (
        args[0].startswith("-q")
        or args[0] in ("--query", "-V", "--verify", "--version", "--querytags", "--eval")
    )


def dpkg_reads(args: tuple[str, ...]) -> bool:
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


def archive_list_reads(args: tuple[str, ...]) -> bool:
    """unzip only with a listing/testing/printing option first; 7z/unrar only in l/t modes."""
    if not args:
        return False
    first = args[0]
    if first.startswith("-"):
        return bool(re.match(r"^-[lvtZpc]+[q]*$", first)) and not any(
            a.startswith("-d") for a in args
        )
    return first in ("l", "t", "lb", "lt", "v", "vt")


def gzip_reads(args: tuple[str, ...]) -> bool:
    opts = option_words(args)
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


def gpg_reads(args: tuple[str, ...]) -> bool:
    """Listing keys, or verifying a detached signature (operands are the signature and data)."""
    if not args:
        return False
    if "--verify" in args:
        return all(a == "--verify" or not a.startswith("-") for a in args)
    return all(a in _GPG_LIST or not a.startswith("-") for a in args) and any(
        a.startswith("-") for a in args
    )


def version_only(args: tuple[str, ...]) -> bool:
    return len(args) == 1 and args[0] in VERSION_ONLY

"""Impact: encrypting files in place or alongside deleting the originals (ransomware-shaped)."""

from __future__ import annotations

from typing import Final

from gatesh._types import Context
from gatesh.rater.builtin._base import C, Cmd, D, Hit, MatchResult, Rule, heads

ENCRYPTORS: Final = heads(
    "gpg",
    "gpg2",
    "openssl",
    "ccrypt",
    "ccencrypt",
    "age",
    "7z",
    "7za",
    "zip",
    "rar",
    "aescrypt",
    "scrypt",
)


def encrypt(c: Cmd) -> MatchResult:
    h = c.head
    if h in ("gpg", "gpg2"):
        enc = c.has("-c", "--symmetric", "-e", "--encrypt")
        noninteractive = c.has(
            "--batch", "--passphrase", "--passphrase-fd", "--passphrase-file", "--yes"
        )
        if not (enc and noninteractive):
            return None
    elif h == "openssl":
        s = c.sub(0)
        if not (
            (s == "enc" and not c.has("-d"))
            or (s in ("rsautl", "pkeyutl") and c.has("-encrypt"))
            or (s.startswith("aes") and not c.has("-d"))
        ):
            return None
    elif h in ("ccrypt", "ccencrypt", "aescrypt", "scrypt"):
        if h == "ccrypt" and c.has("-d", "--decrypt", "-c", "--cat"):
            return None
    elif h == "age":
        if c.has("-d", "--decrypt"):
            return None
        if not c.has("-p", "--passphrase", "-r", "-R"):
            return None
    elif h in ("7z", "7za", "zip", "rar"):
        if not any(a.startswith(("-p", "-P", "--password")) for a in c.args) and not c.has(
            "-e", "--encrypt"
        ):
            return None
        if not any(p.startswith(("/etc", "/home", "~", "/Users", "/var")) for p in c.pos):
            return None
    else:
        return None
    deleting = any(
        x.head in ("rm", "shred", "srm", "unlink") for x in c.ctx.cmds
    ) or c.sc.context in (Context.FIND_EXEC, Context.XARGS)
    if deleting or c.has("-r", "--recursive"):
        return Hit(severity=C, detail="encrypts files and removes the originals")
    return Hit(detail="encrypts files with a key given on the command line")


RULES: tuple[Rule, ...] = (
    Rule(
        "impact.encrypt",
        D,
        "This {detail}, the pattern of ransomware.",
        encrypt,
        heads=ENCRYPTORS,
        remedy="encrypt a copy and keep the original",
        examples=(
            "ccencrypt -K pw /tmp/passwd",
            "openssl enc -aes-256-cbc -in data -out data.enc",
            "gpg --batch --passphrase x -c f && rm f",
        ),
        counter=("gpg --verify sig", "openssl enc -d -in a -out b", "zip -r src.zip src"),
    ),
)

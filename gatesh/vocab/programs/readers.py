"""Programs that only read the files they are given and write nothing but their standard output.

One table for the two layers that ask it: the read-only table (a command of these is ``safe``
unless an option of it writes) and the path-use table (every file operand of these is read, so a
credential named to one is a read of it). A program is in one row; each layer asks the union of
the rows it needs, named below, so the two cannot list a program differently by accident.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["FILE_READERS", "PRINT_OR_DESCRIBE", "READ_OPERANDS", "Readers"]


def _w(names: str) -> frozenset[str]:
    return frozenset(names.split())


@dataclass(frozen=True)
class Readers:
    """Programs that only read the files they are given, and why."""

    id: str
    programs: frozenset[str]
    reason: str


FILE_READERS: Final[tuple[Readers, ...]] = (
    Readers(
        "print",
        _w(
            """
            cat tac nl head tail od hexdump hd strings zcat bzcat xzcat zstdcat lzcat bat batcat
            """
        ),
        "print what the files hold: as is, numbered, in part, as hex or decompressed",
    ),
    Readers(
        "describe",
        _w(
            """
            wc md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum stat
            readlink realpath basename dirname pathchk getfacl lsattr namei pdfinfo ffprobe
            identify nm objdump readelf size file zipinfo lsar
            """
        ),
        "print sums, sizes, types, names or metadata of the files; the path-use table does not "
        "list them, as what they print is no file's content",
    ),
    Readers(
        "transform",
        _w(
            """
            base32 base64 basenc ascii85 uuencode cut paste join comm diff diff3 sdiff cmp fold
            fmt pr expand unexpand column rev iconv look ul xmllint csvlook mdcat glow tr numfmt
            tsort vis unvis colrm
            """
        ),
        "print the files' text transformed, encoded, rendered or compared; the read-only table "
        "vouches for those it has rows for, with checks of their own (an option may write)",
    ),
    Readers(
        "page",
        _w("less more most pg zless zmore bzless xzless"),
        "show the files a screen at a time; a pager runs commands typed at it (``!cmd``), so the "
        "read-only table does not vouch for one",
    ),
)
_BY_ID: Final = {r.id: r.programs for r in FILE_READERS}

#: What the read-only table's ``ro.read-files`` row vouches for.
PRINT_OR_DESCRIBE: Final = _BY_ID["print"] | _BY_ID["describe"]
#: Programs every file operand of which the path-use table reads.
READ_OPERANDS: Final = _BY_ID["print"] | _BY_ID["transform"] | _BY_ID["page"]

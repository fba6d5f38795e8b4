"""The text ``echo`` and ``printf`` write, computed as bash 5.2's builtins compute it (S2.1).

A shell fed ``printf 'rm -rf ~\\n'`` runs what printf writes, so the reader computes that text and
reads it as code. Every function here is pure and bounded: the output never grows past
:data:`MAX_OUTPUT` (past it the text is unknown, never truncated), and a form these functions
do not compute exactly (``%q``, ``%(…)T``, ``printf -v``, a number bash would complain about)
gives ``None``: the text is then opaque, never guessed.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from typing import Final

from gatesh._errors import ReadError

# A fed text longer than one command may be (S2's 64 KiB) is not read: it is unknown.
MAX_OUTPUT: Final = 64 * 1024
# Widths and precisions above this cannot keep the output within MAX_OUTPUT anyway.
_MAX_FIELD: Final = MAX_OUTPUT


class Unknown(ReadError):
    """The text cannot be computed exactly (the message says why, for a person); the reader
    then records the code as opaque, it never escapes the reader."""


_SIMPLE: Final = {
    "a": b"\a",
    "b": b"\b",
    "e": b"\x1b",
    "E": b"\x1b",
    "f": b"\f",
    "n": b"\n",
    "r": b"\r",
    "t": b"\t",
    "v": b"\v",
    "\\": b"\\",
}
_OCT: Final = frozenset("01234567")
_HEX: Final = frozenset("0123456789abcdefABCDEF")


def _take(s: str, i: int, digits: frozenset[str], most: int) -> tuple[str, int]:
    j = i
    while j < len(s) and j - i < most and s[j] in digits:
        j += 1
    return s[i:j], j


def _char(code: int) -> bytes:
    try:
        return chr(min(code, 0x10FFFF)).encode("utf-8", "surrogatepass")
    except ValueError:  # pragma: no cover - chr() of a valid range never fails
        return b"?"


class Dialect(enum.Enum):
    """Which escapes a text knows: they differ between echo, printf's %b and a printf format."""

    ECHO = "echo -e"  # \0NNN octal only; \c ends all output
    PERCENT_B = "%b"  # \0NNN and \NNN octal; \c ends all output
    FORMAT = "format"  # \NNN octal; \" \' \? are the character; \c is kept as written


def expand_escapes(s: str, dialect: Dialect) -> tuple[bytes, bool]:
    """``s`` with the backslash escapes of ``dialect`` applied, and whether a ``\\c`` ended the
    output there. An escape with no digits after it stays as written, as bash keeps it."""
    echo = dialect is not Dialect.FORMAT
    out = bytearray()
    i, n = 0, len(s)
    while i < n:
        ch = s[i]
        if ch != "\\" or i + 1 >= n:
            out += ch.encode("utf-8", "surrogatepass")
            i += 1
            continue
        e = s[i + 1]
        i += 2
        if e in _SIMPLE:
            out += _SIMPLE[e]
        elif e in _OCT:
            # echo -e: \0 takes up to 3 more digits; both dialects take \NNN (1-3 digits).
            first = i - 1
            if echo and e == "0":
                digits, i = _take(s, i, _OCT, 3)
            elif dialect is Dialect.ECHO:
                out += ("\\" + e).encode()
                continue
            else:
                digits, i = _take(s, first, _OCT, 3)
            out.append(int(digits or "0", 8) & 0xFF)
        elif e == "x":
            digits, i = _take(s, i, _HEX, 2)
            out += bytes([int(digits, 16)]) if digits else b"\\x"
        elif e in "uU":
            digits, i = _take(s, i, _HEX, 4 if e == "u" else 8)
            out += _char(int(digits, 16)) if digits else ("\\" + e).encode()
        elif e == "c" and echo:
            return bytes(out), True
        elif not echo and e in "\"'?":
            out += e.encode()
        else:
            out += ("\\" + e).encode("utf-8", "surrogatepass")
    return bytes(out), False


def echo_output(args: list[str]) -> bytes:
    """What bash's builtin ``echo ARGS…`` writes (``xpg_echo`` off, as bash starts).

    Leading words made only of ``-n``/``-e``/``-E`` letters are options; ``--`` is a word.
    """
    newline, escapes = True, False
    k = 0
    while (
        k < len(args) and len(args[k]) > 1 and args[k][0] == "-" and set(args[k][1:]) <= set("neE")
    ):
        for letter in args[k][1:]:
            if letter == "n":
                newline = False
            else:
                escapes = letter == "e"
        k += 1
    text = " ".join(args[k:])
    if escapes:
        body, stopped = expand_escapes(text, Dialect.ECHO)
        if stopped:
            return body
    else:
        body = text.encode("utf-8", "surrogatepass")
    out = body + (b"\n" if newline else b"")
    if len(out) > MAX_OUTPUT:
        raise Unknown(f"echo writes more than {MAX_OUTPUT} bytes")
    return out


_SPEC: Final = re.compile(r"%([#'\-+ 0]*)(\*|\d*)(?:\.(\*|\d*))?([hlLqjtz]*)(.?)", re.S)
_INT: Final = re.compile(r"\s*[+-]?(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")


def _number(arg: str) -> int:
    """An integer argument as bash's printf reads it (``0x1f``, ``010``, ``'A``); Unknown when bash
    would complain (it then prints what it parsed and fails, which is not worth imitating)."""
    if arg[:1] in ("'", '"'):
        return ord(arg[1]) if len(arg) > 1 else 0
    if not arg:
        return 0
    m = _INT.fullmatch(arg)
    if m is None:
        raise Unknown(f"printf is given {arg[:20]!r} where a number belongs")
    return int(arg.strip(), 0) if not re.fullmatch(r"\s*[+-]?0[0-7]+", arg) else int(arg.strip(), 8)


def _float(arg: str) -> float:
    if not arg:
        return 0.0
    try:
        return float(arg)
    except ValueError:
        raise Unknown(f"printf is given {arg[:20]!r} where a number belongs") from None


def printf_output(args: list[str]) -> bytes:
    """What bash's builtin ``printf ARGS…`` writes. Raises :class:`Unknown` for forms not computed.

    The format is reused while arguments remain (when it consumed any); missing arguments are
    empty strings or zero; an invalid conversion ends the output where bash ends it.
    """
    if args and args[0] == "--":
        args = args[1:]
    elif args and args[0].startswith("-") and args[0] != "-":
        return b""  # `-v VAR` assigns instead of writing; any other option is an error: no output
    if not args:
        raise Unknown("printf without a format")
    fmt, rest = args[0], list(args[1:])
    out = bytearray()
    pos = 0

    def arg() -> str:
        nonlocal pos
        if pos < len(rest):
            pos += 1
            return rest[pos - 1]
        return ""

    while True:
        start = pos
        i = 0
        while i < len(fmt):
            j = fmt.find("%", i)
            literal = fmt[i:] if j < 0 else fmt[i:j]
            if literal:
                body, _ = expand_escapes(literal, Dialect.FORMAT)
                out += body
            if j < 0:
                break
            m = _SPEC.match(fmt, j)
            assert m is not None  # the pattern matches any "%" (every part is optional)
            flags, width_s, prec_s, length, conv = m.groups()
            i = m.end()
            if conv == "%" and not (flags or width_s or length) and prec_s is None:
                out += b"%"
                continue
            if not conv or conv not in "diouxXeEfFgGcsb":
                if conv in ("q", "Q", "(", "a", "A", "n") or (conv and conv in "#'-+ 0123456789.*"):
                    raise Unknown(f"printf's %{conv} conversion is not computed")
                return _bounded(out)  # bash: invalid or missing format character; output ends here
            spec, width, prec = _field(flags, width_s, prec_s, arg)
            if conv in "diouxX":
                value = _number(arg())
                if conv in "ouxX":
                    spec, value = _unsigned(spec, conv, value)
                if prec == 0 and value == 0:  # C writes no digit for a zero of precision 0
                    if "+" in spec or " " in spec:
                        raise Unknown("printf's sign of an empty zero is not computed")
                    out += _pad(b"", width, flags)
                    continue
                out += (spec + conv.replace("i", "d").replace("u", "d")).__mod__(value).encode()
            elif conv in "eEfFgG":
                out += (spec + conv).__mod__(_float(arg())).encode()
            elif conv == "c":
                a = arg().encode("utf-8", "surrogatepass")[:1] or b"\0"
                out += _pad(a, width, flags)
            elif conv == "s":
                a = arg().encode("utf-8", "surrogatepass")
                out += _pad(a if prec is None else a[:prec], width, flags)
            else:  # b
                body, stopped = expand_escapes(arg(), Dialect.PERCENT_B)
                out += _pad(body if prec is None else body[:prec], width, flags)
                if stopped:
                    return _bounded(out)
            if len(out) > MAX_OUTPUT:
                raise Unknown(f"printf writes more than {MAX_OUTPUT} bytes")
        if pos >= len(rest) or pos == start:
            return _bounded(out)


def _field(
    flags: str, width_s: str, prec_s: str | None, arg: Callable[[], str]
) -> tuple[str, int, int | None]:
    """A conversion's C format so far (``%``, flags, width, precision), its width and its
    precision; a ``*`` takes its number from the next argument (``arg``). Raises
    :class:`Unknown` for a field wider than a command may be."""
    width = _number(arg()) if width_s == "*" else int(width_s or "0")
    prec: int | None = None
    if prec_s is not None:
        prec = _number(arg()) if prec_s == "*" else int(prec_s or "0")
    if abs(width) > _MAX_FIELD or (prec is not None and prec > _MAX_FIELD):
        raise Unknown("printf pads a field wider than a command may be")
    spec = (
        "%"
        + flags.replace("'", "")
        + (str(width) if width else "")
        + ("" if prec is None else f".{prec}")
    )
    return spec, width, prec


def _unsigned(spec: str, conv: str, value: int) -> tuple[str, int]:
    """The format and value of an unsigned conversion (``ouxX``) as C prints it: no sign flags,
    a negative value taken modulo 2**64. Raises :class:`Unknown` for the alternate form of an
    octal or a zero."""
    spec = spec.replace(" ", "").replace("+", "")  # C: signed conversions only
    if "#" in spec and (conv == "o" or value == 0):
        raise Unknown("printf's alternate form of an octal or a zero is not computed")
    if value < 0:
        value &= (1 << 64) - 1  # C's unsigned conversion of a negative intmax_t
    return spec, value


def _pad(value: bytes, width: int, flags: str) -> bytes:
    if width < 0:
        flags, width = flags + "-", -width
    if len(value) >= width:
        return value
    fill = b" " * (width - len(value))
    return value + fill if "-" in flags else fill + value


def _bounded(out: bytearray) -> bytes:
    if len(out) > MAX_OUTPUT:
        raise Unknown(f"printf writes more than {MAX_OUTPUT} bytes")
    return bytes(out)

"""Positional parameters (``$0 $1 … "$@"``) of a string a shell runs with static arguments.

``sh -c 'rm "$@"' _ -rf ~`` runs ``rm -rf ~``: while the string is read, its parameters are the
words after it. :class:`Positional` holds them; the functions here put them into words, follow
``shift`` and ``set --`` in source order, and give one parameter's value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from gatesh._types import Context, Word

# A word that is one positional parameter: "$@" $@ ${@} $* "$*" $1 "${12}" $0 …
_POSITIONAL_WORD: Final = re.compile(r'(?P<q>"?)\$(?:(?P<n>[0-9@*])|\{(?P<b>[0-9]+|[@*])\})(?P=q)')


@dataclass
class Positional:
    """``sh -c STRING ARG0 ARGS…``: the values of ``$0 $1 …`` while STRING is read.

    ``shift`` counts the ``shift``s read so far (in source order); ``known`` turns False when
    they can no longer be followed (``shift $n``, ``set --``): the words then stay dynamic.
    ``open_ended``: xargs or ``find -exec … +`` append more arguments after ARGS.
    """

    args: tuple[Word, ...]
    open_ended: bool = False
    shift: int = 0
    known: bool = True


def value_of(pos: Positional | None, context: Context | None, name: str) -> str | None:
    """The static value of positional parameter ``name`` (a digit) where ``pos`` holds (None:
    not known, or read inside a function, whose parameters are its own)."""
    if pos is None or not pos.known or context == Context.FUNCTION:
        return None
    k = int(name)
    k = k + pos.shift if k else 0
    if k < len(pos.args):
        return pos.args[k].text if pos.args[k].static else None
    return None if pos.open_ended else ""


def expand_positional(words: list[Word], pos: Positional) -> list[Word] | None:
    """``words`` with each whole-word positional parameter put as its value (None: no change).

    Unquoted, a static value is split at blanks as bash would (``$1`` = "rm -rf ~" runs rm);
    a parameter past the known arguments stays dynamic when more may be appended, else is empty.
    """
    if not pos.known:
        return None
    out: list[Word] = []
    changed = False
    for w in words:
        m = None if w.static else _POSITIONAL_WORD.fullmatch(w.text)
        if m is None:
            out.append(w)
            continue
        changed = True
        name = m.group("n") or m.group("b")
        quoted = bool(m.group("q"))
        vals: list[Word]
        if name in ("@", "*"):
            vals = list(pos.args[1 + pos.shift :])
            if name == "*" and quoted:
                vals = [Word(" ".join(v.text for v in vals), all(v.static for v in vals))]
            if pos.open_ended:
                vals.append(w)
        else:
            k = int(name)
            k = k + pos.shift if k else 0
            if k < len(pos.args):
                vals = [pos.args[k]]
            else:
                vals = [w] if pos.open_ended else [Word("")] if quoted else []
        if not quoted:
            vals = [
                part
                for v in vals
                for part in ([Word(x) for x in v.text.split()] if v.static else [v])
            ]
        out.extend(vals)
    return out if changed else None


def follow_positional(pos: Positional, head: str, argv: list[Word]) -> None:
    """Track ``shift N`` and ``set -- …`` (which replaces the parameters) in source order."""
    args = argv[1:]
    if head == "shift":
        if not args:
            pos.shift += 1
        elif args[0].static and args[0].text.isdigit():
            pos.shift += int(args[0].text)
        else:
            pos.known = False
        return
    k = 0
    while k < len(args):
        a = args[k]
        if not a.static or a.text == "--" or a.text[:1] not in "-+":
            pos.known = False  # `set a b` / `set -- a b` gives new parameters
            return
        k += 2 if a.text in ("-o", "+o") else 1

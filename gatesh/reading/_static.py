"""Static values put into a command's words before it is read (S2.1).

``x=/; rm -rf $x`` runs ``rm -rf /``: where the text being read says what a variable holds, the
value is put into the words (:func:`substitute`); a value only possible (set in one branch) gives
one more reading of the command beside the one as written. :func:`resolved` fills in an
assignment's value from the values known before it.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import replace

from gatesh._types import Redirect, Word

from ._known import temp_made
from ._positional import value_of
from ._state import Inherit, ReadState
from ._values import MAX_VARIANTS, Binding, TextEnv, expand, names_in
from ._walk import RawCommand


def resolved(
    st: ReadState,
    bindings: list[Binding],
    text: str,
    inherit: Inherit,
    functions: list[tuple[int, int]],
) -> list[Binding]:
    """``bindings`` with a dynamic value put in when its parts are known (``local d="$1"`` in
    a call, ``b="$a/x"`` after ``a=…``); an assignment's value is not split into words."""
    if not any(b.value is None and b.source for b in bindings):
        return bindings
    out: list[Binding] = []
    # HOME is the home folder the reader resolves `~` with, unless the text assigns it
    home = None if any(b.name == "HOME" for b in bindings) else (st.home or os.path.expanduser("~"))
    for b in bindings:
        made = temp_made(b.source) if b.value is None and b.source else None
        if made is not None:
            b = replace(b, value=made)  # `t=$(mktemp)`: a new name in the temporary folder
        if b.value is None and b.source:
            known = TextEnv(out, text, dict(inherit.bindings), functions)
            at = b.start
            in_function = any(a <= at < z for a, z in functions)

            def lookup(
                n: str, at: int = at, known: TextEnv = known, in_function: bool = in_function
            ) -> str | None:
                if n.isdigit():
                    # a function's $1 … are its call's words, not the text's
                    return None if in_function else value_of(inherit.positional, None, n)
                value = known.certain(n, at)
                return home if value is None and n == "HOME" else value

            got = expand(Word(b.source, False), lookup)
            if got is not None and len(got) <= 1:
                b = replace(b, value=got[0].text if got else "")
        out.append(b)
    return out


def substitute(
    st: ReadState, raw: RawCommand, inherit: Inherit
) -> tuple[RawCommand, list[RawCommand]]:
    """``raw`` with the values its words and redirection targets certainly have put in (noted),
    and one variant per combination of values they may have (at most ``MAX_VARIANTS``)."""
    if all(w.static for w in raw.words) and not raw.target_words:
        return raw, []
    env = st.envs[-1]

    def certain(name: str) -> str | None:
        if name.isdigit():
            value = value_of(inherit.positional, raw.context, name)
            return value if value is not None else env.certain(name, raw.start)
        return env.certain(name, raw.start)

    words = _expand_all(raw.words, certain)
    changed = words is not raw.words
    redirects = list(raw.redirects)
    for k, w in raw.target_words.items():
        got = expand(w, certain)
        if got is not None and len(got) == 1 and k < len(redirects):
            r = redirects[k]
            redirects[k] = Redirect(r.op, got[0].text, r.fd, r.writes)
            changed = True
    if changed:
        head = (
            raw.words[0].text
            if not raw.words[0].static and words and words[0].static
            else raw.expanded_head
        )
        st.note(f"static values put in: {raw.raw[:80]!r}")
        raw = replace(raw, words=words, redirects=redirects, expanded_head=head)
    if raw.variant:
        return raw, []
    names = list(
        dict.fromkeys(n for w in raw.words if not w.static for n in names_in(w) if env.possible(n))
    )
    if not names:
        return raw, []
    variants: list[RawCommand] = []
    for combo in itertools.islice(
        itertools.product(*(env.possible(n) for n in names)), MAX_VARIANTS
    ):
        values = dict(zip(names, combo, strict=True))
        alt = _expand_all(raw.words, lambda n, v=values: v.get(n, certain(n)))  # type: ignore[misc]
        if alt is not raw.words:
            head = raw.words[0].text if not raw.words[0].static else raw.expanded_head
            variants.append(replace(raw, words=alt, variant=True, expanded_head=head))
    if variants:
        st.note(f"read once per value its variables may have: {raw.raw[:80]!r}")
    return raw, variants


def _expand_all(words: list[Word], lookup: Callable[[str], str | None]) -> list[Word]:
    """``words`` with every word whose parameters ``lookup`` knows expanded (``words`` itself,
    the same list object, when none is)."""
    out: list[Word] = []
    changed = False
    for w in words:
        got = None if w.static else expand(w, lookup)
        if got is None:
            out.append(w)
        else:
            out.extend(got)
            changed = True
    return out if changed else words

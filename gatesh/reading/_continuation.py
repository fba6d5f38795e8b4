"""Line continuations: bash deletes backslash-newline before it splits words; tree-sitter doesn't.

``r\\<newline>m -rf /`` runs ``rm``; tree-sitter reads a command ``r``. Both readers therefore
get the text with continuations removed, exactly where bash removes them.
"""

from __future__ import annotations

import re

_HEREDOC = re.compile(r"<<(?!<)")
_WORD_BREAK = frozenset(" \t\n;&|()<>")


def join_continuations(text: str) -> tuple[str, bool]:
    """(text with backslash-newline removed outside single quotes and comments, changed?).

    With a heredoc in the text nothing is changed (a continuation could join a heredoc's
    terminator line, hiding the lines after it); the caller notes that.
    """
    if "\\\n" not in text or _HEREDOC.search(text):
        return text, False
    out: list[str] = []
    i, n = 0, len(text)
    single = double = False
    while i < n:
        ch = text[i]
        if single:
            out.append(ch)
            if ch == "'":
                single = False
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            if text[i + 1] == "\n":
                i += 2
                continue
            out.append(text[i : i + 2])
            i += 2
            continue
        if ch == "'" and not double:
            single = True
        elif ch == '"':
            double = not double
        elif ch == "#" and not double and (i == 0 or text[i - 1] in _WORD_BREAK):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(text[i:end])
            i = end
            continue
        out.append(ch)
        i += 1
    return "".join(out), True

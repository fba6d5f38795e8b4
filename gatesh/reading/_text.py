"""Text helpers around reading: the ``# why:`` justification (S6) and model normalisation (S4)."""

from __future__ import annotations

import re
import unicodedata

from ._walk import parse

_WHY = re.compile(r"#\s*why\s*:\s*(.*)\Z", re.IGNORECASE | re.DOTALL)
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC … BEL/ST
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS/SOS/PM/APC … ST
    r"|\x1b[@-Z\\-_]"  # two-byte escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
# Characters that render as nothing or reorder text: zero-width, bidi controls, BOM, soft hyphen,
# word joiners, invisible math operators, Hangul fillers, variation selectors.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U000e0000-\U000e0fff]"
)


def parse_justification(text: str) -> tuple[str, str]:
    """Split a trailing ``# why: TEXT`` comment off ``text``: (command, justification).

    Guarantees: only a real shell comment that ends the text counts (never one inside quotes
    or a heredoc); otherwise returns ``(text, "")`` unchanged. Never raises.
    """
    low = text.casefold()
    if "#" not in text or "why" not in low:
        return text, ""
    try:
        data = text.encode("utf-8", "surrogatepass")
        root = parse(data).root_node
        last = root
        # The justification is the last comment, a child of the program or of its last statement.
        while last.child_count:
            last = last.children[-1]
            if last.type == "comment":
                break
        if last.type != "comment":
            return text, ""
        if data[last.end_byte :].strip():
            return text, ""
        comment = data[last.start_byte : last.end_byte].decode("utf-8", "surrogatepass")
        m = _WHY.match(comment)
        if not m:
            return text, ""
        command = data[: last.start_byte].decode("utf-8", "surrogatepass").rstrip()
        return command, m.group(1).strip()
    except Exception:  # the gate never fails on a justification: keep the command whole
        return text, ""


def normalize_for_model(text: str, home: str | None = None) -> str:
    """``text`` as the model sees it (S4): ANSI and control escapes removed, NFKC, invisible and
    bidi characters removed, ``home`` folded to ``~``. Newlines and tabs are kept.
    """
    s = _ANSI.sub("", text)
    s = unicodedata.normalize("NFKC", s)
    s = _INVISIBLE.sub("", s)
    s = "".join(
        ch
        for ch in s
        if ch in "\n\t" or (ch >= " " and ch != "\x7f" and not ("\x80" <= ch <= "\x9f"))
    )
    s = s.encode("utf-8", "replace").decode("utf-8") if _has_surrogate(s) else s
    if home and home != "/":
        h = home.rstrip("/")
        s = re.sub(re.escape(h) + r"(?=/|\b|$)(?![\w.-])", "~", s)
    return s


def _has_surrogate(s: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in s)

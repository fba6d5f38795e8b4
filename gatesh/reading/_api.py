"""``read()``: the reader's single entry point; it never raises."""

from __future__ import annotations

from gatesh._types import Context, Facts
from gatesh.harnesses import Harness

from . import _limits as L
from ._facts import make_facts
from ._read import Reader
from ._second import preload
from ._state import Inherit, ReadLimit
from ._text import parse_justification
from .harness import Part, classify

# What the command line itself inherits: nothing (frozen, so one instance serves every reading).
_TOP = Inherit()


def _bad_text(text: str) -> str:
    """Why ``text`` cannot be read at all ("" when it can)."""
    if "\x00" in text:
        return "unreadable: the command contains a NUL byte"
    try:
        n = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return "unreadable: the command is not valid UTF-8 (undecodable bytes)"
    if n > L.MAX_COMMAND_BYTES:
        return f"too long: {n} bytes (the limit is {L.MAX_COMMAND_BYTES})"
    return ""


def read(text: str, *, cwd: str | None = None, home: str | None = None) -> Facts:
    """Read ``text`` into :class:`Facts`. Never raises.

    Guarantees: every simple command either reader sees executing is in ``commands`` (wrappers
    peeled, nested strings re-read); past a limit, on bad input or on an internal error the
    result has ``readable=False``, ``unreadable`` says why, and ``commands`` holds what was read
    before that point.
    """
    if not isinstance(text, str):  # a library caller may pass anything
        return Facts(  # type: ignore[unreachable]
            text=repr(text)[:200], readable=False, unreadable="unreadable: not a string"
        )
    bad = _bad_text(text)
    if bad:
        return Facts(text=text, readable=False, unreadable=bad, notes=(bad,))
    harness: Harness | None = None
    outer = ""
    try:
        found = classify(text)
    except Exception:
        found = None
    if found is not None and found.part is not Part.COMMAND:
        # Harness boilerplate recognised whole (S1): a shell-snapshot script, or a wrapper that
        # hands the agent's command to a gatesh shim (which gates it): nothing to gate here.
        what = (
            "shell-snapshot script"
            if found.part is Part.SNAPSHOT
            else "wrapper that hands the command to a gatesh shim, which gates it"
        )
        return Facts(
            text=text,
            harness=found.harness,
            outer_text=text,
            boilerplate=found.shape,
            notes=(f"{found.harness} {what} ({found.shape}): harness boilerplate, not rated",),
        )
    if found is not None:
        harness, outer = found.harness, text
        text = found.command
    command, why = parse_justification(text)
    preload()  # import bashlex (~0.7 s, once per process) before the reading's time budget starts
    reader = Reader(cwd, home)
    try:
        reader.read_text(command, Context.TOP, 0, _TOP)
    except ReadLimit as exc:
        reader.st.unreadable = str(exc)
        reader.st.note(str(exc))
    except RecursionError:
        reader.st.unreadable = "too deep: nesting beyond the reader's limit"
        reader.st.note(reader.st.unreadable)
    except Exception as exc:  # fail closed: an internal error makes the command unreadable
        reader.st.unreadable = f"unreadable: internal reader error ({type(exc).__name__}: {exc})"
        reader.st.note(reader.st.unreadable)
    facts = make_facts(reader, command)
    if harness is not None or why:
        from dataclasses import replace

        facts = replace(facts, harness=harness, outer_text=outer, justification=why)
    return facts

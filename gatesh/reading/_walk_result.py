"""What a walk of one text finds: its commands as written (:class:`RawCommand`, before
wrappers are peeled), pipelines, functions, bindings and loops (:class:`Walk`), and the
errors that make a text unreadable (:class:`WalkLimit`, :class:`ParserHazard`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gatesh._errors import ReadError
from gatesh._types import Context, Redirect, Word

from ._values import Binding


class WalkLimit(ReadError):
    """The tree is deeper or larger than the reader's limits (the reading is unreadable)."""


@dataclass(slots=True)
class RawCommand:
    """A simple command as written, before wrappers are peeled."""

    words: list[Word]
    context: Context
    frame: int  # substitution frame: redirects and pipes of a statement bind within one frame
    start: int = 0
    raw: str = ""
    assignments: list[str] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    heredoc: tuple[str, bool] | None = None  # (body, delimiter quoted)
    herestring: Word | None = None
    stdin_word: Word | None = None  # the word of a `< WORD` redirection of standard input
    fed_by: list[RawCommand] | None = None  # the pipeline stage before this one (set by the reader)
    target_words: dict[int, Word] = field(
        default_factory=dict
    )  # dynamic redirect targets, by index
    variant: bool = False  # a reading with possible values put in (not read for variants again)
    expanded_head: str = ""  # the first word as written, when static values were put in
    declaration: bool = False  # export/declare/local/readonly/unset: runs no program


@dataclass
class Walk:
    """What one tree-sitter walk found in one text."""

    commands: list[RawCommand] = field(default_factory=list)
    pipelines: list[list[list[int]]] = field(default_factory=list)  # stages of raw indexes
    functions: list[str] = field(default_factory=list)
    assignments: list[str] = field(default_factory=list)  # bare NAME=value statements
    has_error: bool = False
    error_at: str = ""
    embedded: list[str] = field(default_factory=list)  # `…` tree-sitter left inside a word
    blind: list[tuple[int, int]] = field(default_factory=list)  # byte spans bashlex misreads
    joined: list[int] = field(
        default_factory=list
    )  # bytes where a word tree-sitter split was rejoined
    bindings: list[Binding] = field(default_factory=list)  # plain NAME=VALUE assignments (S2.1)
    function_bodies: dict[str, str] = field(default_factory=dict)  # name -> body text
    function_spans: list[tuple[int, int]] = field(default_factory=list)  # bodies' byte spans
    loops: list[Loop] = field(default_factory=list)  # `for NAME in WORDS` with their bodies


@dataclass(frozen=True)
class Loop:
    """``for NAME in WORDS; do BODY; done``: read once per word when the words are static."""

    name: str
    words: tuple[Word, ...]
    body: str
    start: int


class ParserHazard(WalkLimit):
    """The text would make tree-sitter-bash read outside its memory (the reading is unreadable)."""

"""The Messages API's bodies as typed values: what the rater and the alignment check send, and what
comes back, encoded and decoded here only.

A :class:`Request` becomes the keyword arguments of ``client.messages.create`` by :func:`body`; the
SDK's answer becomes a :class:`Response` by :func:`decode`, once, reading only the members gatesh
uses (a block of a type it does not know is skipped; a member of the wrong type reads as empty).
The classes' fields are named and ordered as the API's members are, so :func:`gatesh._json.plain`
writes them as the API spells them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from gatesh._json import OMIT_EMPTY, plain

__all__ = [
    "ANY_ONE",
    "Block",
    "ChoiceType",
    "Param",
    "Request",
    "Response",
    "Role",
    "Schema",
    "Text",
    "Tool",
    "ToolChoice",
    "ToolResult",
    "ToolUse",
    "Turn",
    "body",
    "decode",
]


class Role(enum.StrEnum):
    USER = "user"
    ASSISTANT = "assistant"


def _fixed(value: object) -> Any:
    return field(default=value, init=False)


@dataclass(frozen=True)
class Text:
    """A text block."""

    type: str = field(default="text", init=False)
    text: str


@dataclass(frozen=True, kw_only=True)
class ToolUse:
    """A tool call the model made (or one replayed to it). ``input`` is the arguments as the model
    gave them: any JSON value, checked against the tool's :class:`Schema` by whoever runs it."""

    type: str = _fixed("tool_use")
    id: str
    name: str
    input: object


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """What a tool call returned, sent back in the next user turn."""

    type: str = _fixed("tool_result")
    tool_use_id: str
    content: str
    is_error: bool = field(default=False, metadata=OMIT_EMPTY)


Block = Text | ToolUse | ToolResult


@dataclass(frozen=True)
class Turn:
    """One message of the conversation: plain text, or blocks."""

    role: Role
    content: str | tuple[Block, ...]


@dataclass(frozen=True, kw_only=True)
class Param:
    """One property of a tool's input; every property gatesh declares is a string."""

    type: str = _fixed("string")
    enum: tuple[str, ...] = field(default=(), metadata=OMIT_EMPTY)
    description: str = field(default="", metadata=OMIT_EMPTY)


@dataclass(frozen=True, kw_only=True)
class Schema:
    """A tool's input: an object of string properties, nothing else allowed."""

    type: str = _fixed("object")
    properties: Mapping[str, Param]
    required: tuple[str, ...] = field(default=(), metadata=OMIT_EMPTY)
    additionalProperties: bool = _fixed(False)

    def problem(self, args: object) -> str | None:
        """What is wrong with ``args`` as this input, or None when it matches: an object with
        every required property, each given one declared and a string, and no other."""
        if not isinstance(args, dict):
            return f"it is a {type(args).__name__}, not an object"
        for key in self.required:
            if key not in args:
                return f"{key!r} is missing"
        for key, value in args.items():
            if key not in self.properties:
                return f"{key!r} is not one of its properties"
            if not isinstance(value, str):
                return f"{key!r} is not a string"
        return None


@dataclass(frozen=True)
class Tool:
    """A tool offered to the model."""

    name: str
    description: str
    input_schema: Schema


class ChoiceType(enum.StrEnum):
    TOOL = "tool"  # this one tool must be called
    ANY = "any"  # some tool must be called


@dataclass(frozen=True)
class ToolChoice:
    """Which tool the model must call: one named tool, or any one per turn."""

    type: ChoiceType
    name: str = field(default="", metadata=OMIT_EMPTY)
    disable_parallel_tool_use: bool = field(default=False, metadata=OMIT_EMPTY)


#: Any tool, one call per turn (the alignment check runs each call before the next is made).
ANY_ONE: Final = ToolChoice(ChoiceType.ANY, disable_parallel_tool_use=True)


@dataclass(frozen=True)
class Request:
    """One Messages API call."""

    model: str
    max_tokens: int
    system: str
    messages: tuple[Turn, ...]
    tools: tuple[Tool, ...]
    tool_choice: ToolChoice


@dataclass(frozen=True)
class Response:
    """The parts of an answer gatesh reads: its text and tool-call blocks, and why it stopped;
    ``raw`` is the whole answer as the API sent it (plain JSON data), for a capture: shown, never
    read."""

    content: tuple[Text | ToolUse, ...]
    stop_reason: str
    raw: object = None


def body(request: Request) -> dict[str, Any]:
    """``request`` as the API's JSON body (the keyword arguments of ``messages.create``)."""
    out = plain(request)
    assert isinstance(out, dict)
    return out


def decode(response: object) -> Response:
    """The SDK's answer (or anything shaped like it) as a :class:`Response`."""
    blocks: list[Text | ToolUse] = []
    for b in getattr(response, "content", None) or []:
        kind = getattr(b, "type", "")
        if kind == "text":
            text = getattr(b, "text", "")
            blocks.append(Text(text if isinstance(text, str) else ""))
        elif kind == "tool_use":
            ident, tool = getattr(b, "id", ""), getattr(b, "name", "")
            blocks.append(
                ToolUse(
                    id=ident if isinstance(ident, str) else "",
                    name=tool if isinstance(tool, str) else "",
                    input=getattr(b, "input", None),
                )
            )
    stop = getattr(response, "stop_reason", None)
    return Response(tuple(blocks), stop if isinstance(stop, str) else "", _raw(response))


def _raw(response: object) -> object:
    try:
        data = response.model_dump(mode="json", exclude_none=True)  # type: ignore[attr-defined]
    except Exception:  # not an SDK model: keep what can be shown
        return {"repr": repr(response)[:2000]}
    return data if isinstance(data, dict) else {"value": data}

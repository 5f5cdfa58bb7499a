"""Typed events the headless core emits; the REPL, one-shot mode and tests consume them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Union

from framework_core.lial_core import Message, ToolRequest, ToolResult, Usage


@dataclass
class ModelRequestStarted:
    """A request to the model is about to go out (the UI shows a spinner until the first token)."""

    provider: str
    model: str


@dataclass
class AssistantTextDelta:
    text: str


@dataclass
class AssistantReasoningDelta:
    """Reasoning the model chose to show (a summary or its thinking text): displayed dimmed, apart from the reply."""

    text: str


@dataclass
class AssistantMessageDone:
    message: Message
    usage: Usage
    cut_off: bool = False  # the stream broke after text was shown; the partial text is kept


@dataclass
class ToolCallQueued:
    """The model asked for a call; it will be decided in order (`index` of `total`)."""

    request: ToolRequest
    index: int
    total: int


@dataclass
class ToolCallStarted:
    request: ToolRequest
    title: str  # e.g. "Run command"
    body: str  # the command / path actually run
    auto_approved: bool  # ran without asking (Safe, a rule, or a session grant)
    reason: str = ""  # why it ran without asking


@dataclass
class ToolOutputChunk:
    request_id: str
    text: str


@dataclass
class ToolCallFinished:
    request: ToolRequest
    result: ToolResult
    duration_s: float
    note: str = ""  # said on the result line: how it ran when that is news (auto mode: "auto · sandboxed · /undo 1")


@dataclass
class RetryScheduled:
    attempt: int
    max_attempts: int
    delay_s: float
    reason: str


@dataclass
class Preparing:
    """Something the user now waits for is being made ready (the first command's policy tables and sandbox): the UI
    says so at once, until the next event."""

    what: str  # e.g. "the sandbox"


@dataclass
class Notice:
    level: Literal["info", "warning", "error"]
    text: str


@dataclass
class TurnFinished:
    usage: Usage
    interrupted: bool = False
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    stopped: bool = False  # the user stopped the turn with Esc at a question; the prompt says what to do next


CoreEvent = Union[ModelRequestStarted, AssistantTextDelta, AssistantReasoningDelta, AssistantMessageDone,
                  ToolCallQueued, ToolCallStarted, ToolOutputChunk, ToolCallFinished, RetryScheduled, Preparing,
                  Notice, TurnFinished]
EventSink = Callable[[CoreEvent], None]


def discard(_: CoreEvent) -> None:
    """An event sink that ignores everything."""


@dataclass
class TurnOutcome:
    """What `run_turn` returns: the last reply's text, the turn's tokens, how it ended, every tool result."""

    text: str = ""
    usage: Usage = field(default_factory=Usage)
    interrupted: bool = False
    error: str | None = None
    tool_results: list[ToolResult] = field(default_factory=list)
    stopped_at_limit: bool = False  # the tool-round limit ended the turn, not the model
    stopped: bool = False  # the user stopped the turn (Esc at a question): every remaining call answered, no request

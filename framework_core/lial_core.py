"""LIAL data types and the adapter interface, extended for streaming and many tool calls.

Everything here is vendor-neutral: adapters translate these types to and from one wire API. The names and
shapes are a stable interface (docs/ARCHITECTURE.md): LACA only adds to them.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Literal, Union

if TYPE_CHECKING:
    from framework_core.config.models import ProviderSettings
    from framework_core.dcm import DynamicContextManager

Role = Literal["system", "user", "assistant", "tool_result"]
ToolStatus = Literal["success", "error", "declined_by_user", "blocked_by_policy", "dry_run"]

ICERC_FIELD = "icerc_full_text"
#: A tool result's images ({"mime_type", "data" (base64)}), sent to the provider as image blocks, not as text.
IMAGES_KEY = "images"
ICERC_DESCRIPTION = "The ICERC brief shown to the user before the call runs (see the system prompt)."


@dataclass
class ProviderState:
    """What one wire API needs back verbatim with an assistant turn: encrypted reasoning items, thinking
    blocks with their signatures, per-call thought signatures. Opaque to everything but the adapter that
    wrote it, and valid only for the same wire API and model; any other adapter or model ignores it."""

    wire: str
    model: str
    items: list[dict[str, Any]] = field(default_factory=list)

    def applies_to(self, wire: str, model: str) -> bool:
        return self.wire == wire and self.model == model

    def to_dict(self) -> dict[str, Any]:
        return {"wire": self.wire, "model": self.model, "items": [dict(i) for i in self.items]}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "ProviderState | None":
        if not isinstance(data, dict) or not data.get("wire"):
            return None
        items = [dict(i) for i in data.get("items") or [] if isinstance(i, dict)]
        return cls(str(data["wire"]), str(data.get("model") or ""), items)


@dataclass
class ToolRequest:
    """One tool call asked for by the model."""

    request_id: str
    tool_name: str
    parameters: dict[str, Any]
    icerc_full_text: str = ""
    # Set by the adapter when the model's arguments were not valid JSON; TEPS answers with an error.
    parse_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The request dictionary `TEPSEngine.execute_tool` accepts."""
        return {
            "request_id": self.request_id,
            "tool_name": self.tool_name,
            "parameters": dict(self.parameters),
            "icerc_full_text": self.icerc_full_text,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ToolRequest":
        params = dict(data.get("parameters") or {})
        icerc = data.get("icerc_full_text") or params.pop(ICERC_FIELD, "") or ""
        return cls(
            request_id=str(data.get("request_id") or ""),
            tool_name=str(data.get("tool_name") or ""),
            parameters=params,
            icerc_full_text=str(icerc),
            parse_error=data.get("parse_error"),
        )

    @classmethod
    def from_raw_arguments(cls, request_id: str, tool_name: str, raw: str | dict | None) -> "ToolRequest":
        """Build from the model's raw arguments (a JSON string or dict), splitting off the ICERC brief."""
        error: str | None = None
        if isinstance(raw, dict):
            args: Any = dict(raw)
        else:
            text = (raw or "").strip() or "{}"
            try:
                args = json.loads(text)
            except json.JSONDecodeError as exc:
                args, error = {}, f"tool arguments are not valid JSON ({exc.msg} at char {exc.pos})"
        if not isinstance(args, dict):
            args, error = {}, f"tool arguments must be a JSON object, got {type(args).__name__}"
        icerc = args.pop(ICERC_FIELD, "")
        return cls(request_id, tool_name, args, str(icerc or ""), error)

    def wire_arguments(self) -> dict[str, Any]:
        """Arguments as the model sent them (brief included), for replaying history to the provider."""
        args = dict(self.parameters)
        if self.icerc_full_text:
            args[ICERC_FIELD] = self.icerc_full_text
        return args


@dataclass
class ToolResult:
    """Outcome of one tool call. LACA added the `blocked_by_policy` and `dry_run` statuses."""

    request_id: str
    tool_name: str
    status: ToolStatus
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"request_id": self.request_id, "tool_name": self.tool_name, "status": self.status,
                "data": dict(self.data)}

    def to_model_text(self) -> str:
        """What the model reads: plain text, a header line then the output (images go as image blocks)."""
        return render_result(self)

    @property
    def is_error(self) -> bool:
        return self.status != "success"


@dataclass
class Message:
    """One history entry, extended with the assistant's tool calls."""

    role: Role
    content: str = ""
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_calls: list[ToolRequest] = field(default_factory=list)
    is_error: bool = False  # tool_result only: the call failed or was declined
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. {"cut_off": True}
    provider_state: ProviderState | None = None  # assistant only: sent back to the API that produced it
    images: list[dict[str, str]] = field(default_factory=list)  # tool_result only: {"mime_type", "data" (base64)}

    def state_for(self, wire: str, model: str) -> list[dict[str, Any]]:
        """The opaque items to send back, if this turn came from that wire API and model; else none."""
        state = self.provider_state
        return state.items if state is not None and state.applies_to(wire, model) else []

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_call_id:
            out["tool_call_id"] = self.tool_call_id
        if self.tool_name:
            out["tool_name"] = self.tool_name
        if self.tool_calls:
            out["tool_calls"] = [t.to_dict() for t in self.tool_calls]
        if self.is_error:
            out["is_error"] = True
        if self.meta:
            out["meta"] = dict(self.meta)
        if self.provider_state is not None:
            out["provider_state"] = self.provider_state.to_dict()
        if self.images:
            out["images"] = [dict(i) for i in self.images]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Message":
        return cls(
            role=data["role"],
            content=data.get("content") or "",
            tool_call_id=data.get("tool_call_id"),
            tool_name=data.get("tool_name"),
            tool_calls=[ToolRequest.from_dict(t) for t in data.get("tool_calls") or []],
            is_error=bool(data.get("is_error")),
            meta=dict(data.get("meta") or {}),
            provider_state=ProviderState.from_dict(data.get("provider_state")),
            images=[dict(i) for i in data.get("images") or [] if isinstance(i, dict)],
        )

    @classmethod
    def tool_result(cls, result: ToolResult) -> "Message":
        images = result.data.get(IMAGES_KEY) if result.status == "success" else None
        return cls(role="tool_result", content=result.to_model_text(), tool_call_id=result.request_id,
                   tool_name=result.tool_name, is_error=result.is_error, images=list(images or []))


@dataclass
class Usage:
    """Tokens of one request or a sum. `input_tokens` counts input billed at the full rate: cache reads and
    writes are counted apart (as Anthropic reports them; OpenAI's `prompt_tokens` includes its cached
    tokens, so its adapters subtract them). The context a request used is all three input counts."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def context_tokens(self) -> int:
        """Input tokens the request put in the context window, cached or not."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
                     self.cache_read_tokens + other.cache_read_tokens,
                     self.cache_write_tokens + other.cache_write_tokens)


# Stop reasons of every wire API, in neutral words: "length" was cut by the output limit (or the context
# window), "refusal" was declined or filtered, "pause" is a long turn the API paused, to be sent back as is.
STOP_KINDS = {"end_turn": "end", "stop": "end", "stop_sequence": "end", "tool_use": "tool_use",
              "tool_calls": "tool_use", "function_call": "tool_use", "max_tokens": "length", "length": "length",
              "model_context_window_exceeded": "length", "refusal": "refusal", "content_filter": "refusal",
              "pause_turn": "pause"}


@dataclass
class LLMResponse:
    """A whole reply, with every tool call the model asked for (not only the first)."""

    conversation: str = ""
    tool_requests: list[ToolRequest] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    model: str | None = None
    provider_state: ProviderState | None = None  # kept with the assistant turn in the history
    stop_detail: str | None = None  # what the API said about the stop (e.g. a refusal's category)

    @property
    def stop_kind(self) -> str:
        """The stop in neutral words: end, tool_use, length, refusal, pause (see STOP_KINDS)."""
        return STOP_KINDS.get(self.stop_reason or "", "end")

    @property
    def tool_request(self) -> ToolRequest | None:
        """The first call, if any: for callers that expect one call per reply."""
        return self.tool_requests[0] if self.tool_requests else None


@dataclass
class ToolSchema:
    """A tool as declared to the model: name, description, JSON schema (ICERC field included)."""

    name: str
    description: str
    parameters: dict[str, Any]


# ---- stream events (adapter -> core) ---------------------------------------------------------

@dataclass
class TextDelta:
    text: str


@dataclass
class ReasoningDelta:
    """The model's visible reasoning (a summary, `reasoning_content`, `<think>` text): shown apart, dimmed,
    and never put in the history as reply text."""

    text: str


@dataclass
class ToolCallStart:
    """The model began a tool call; arguments follow and arrive whole in `StreamDone`."""

    index: int
    request_id: str
    tool_name: str


@dataclass
class StreamDone:
    response: LLMResponse


StreamEvent = Union[TextDelta, ReasoningDelta, ToolCallStart, StreamDone]


class LLMAdapterInterface(ABC):
    """One wire API. Adapters translate; they do not decide."""

    #: name of the wire API, e.g. "openai" or "anthropic"
    wire_api: str = ""

    def __init__(self, config: "ProviderSettings", dcm_instance: "DynamicContextManager | None" = None,
                 *, api_key: str | None = None) -> None:
        self.config = config
        self.dcm = dcm_instance
        self._api_key = api_key
        self.notes: list[str] = []

    @abstractmethod
    def stream(self, messages: list[Message], tools: list[ToolSchema], system_prompt: str) -> Iterator[StreamEvent]:
        """Send the conversation and yield events; the last one is `StreamDone`.

        Raises `framework_core.errors.ProviderError` subclasses; a stream that ends without the API's
        final event raises `StreamCutError` carrying the partial response.
        """

    def take_notes(self) -> list[str]:
        """What the adapter found out that the user should be told once (e.g. the tool mode it chose)."""
        notes, self.notes = self.notes, []
        return notes

    def close(self) -> None:  # noqa: B027 - an optional hook: an adapter that holds no connection keeps it
        """Release connections. Safe to call twice."""

    def prepare(self) -> None:  # noqa: B027 - an optional hook, a no-op where there is nothing slow to do
        """Do the slow part of the first request ahead of it (import the SDK, build its client)."""

    def send_message_sequence(self, messages: list[Message], active_persona_id: str | None = None,
                              tools: list[ToolSchema] | None = None) -> LLMResponse:
        """The stable blocking call: drain `stream` and return the whole response."""
        system = self.dcm.build_system_prompt(active_persona_id) if self.dcm else ""
        for event in self.stream(messages, tools or [], system):
            if isinstance(event, StreamDone):
                return event.response
        raise RuntimeError("adapter stream ended without StreamDone")


# ---- what the model reads of a tool result ------------------------------------------------------------------
# A `ToolResult` (status and data) stays the internal record; the model gets one short header line (how the call
# ended: status, exit code, duration, what was cut), then the output as it is: stdout and stderr labelled only
# when both are there, a file's or a server's content. Errors, refusals and dry runs read as plain sentences.
# Nothing is JSON-escaped, so a newline costs one character, not two. The same on every wire.

#: Shown on screen or kept for the transcript only: the marker in the text already says where the whole is.
SCREEN_ONLY = {"images", "full_output_path", "output_bytes", "file_path", "bytes_written", "file_size", "status",
               "reasons", "total_lines"}
STREAMS = ("stdout", "stderr")
BODIES = ("content", "body")  # a file's text, an MCP server's content, a declared API tool's response
#: Short notes after the output, each one line: "sandbox: ...".
NOTES = ("sandbox", "undo_note", "env_withheld", "would_run", "details")
#: Put before a refusal's message when the message is a fragment rather than a sentence of its own.
OPENING = {"declined_by_user": "Stopped", "blocked_by_policy": "Blocked by policy", "dry_run": "Dry run"}


def render_result(result: "ToolResult") -> str:
    """The plain text the model reads for one tool result."""
    data = {k: v for k, v in result.data.items() if k not in SCREEN_ONLY}
    lines = [_header(result.status, data)]
    lines += _output(data)
    for key in NOTES:
        if data.get(key):
            lines.append(f"{key.replace('_', ' ')}: {_value(data[key])}")
    handled = {"exit_code", "duration_s", "cut", "changes", "lines", "status_code", "message",
               "error_message", "user_reason", *STREAMS, *BODIES, *NOTES}
    lines += [f"{key}: {_value(value)}" for key, value in data.items() if key not in handled]
    return "\n".join(line for line in lines if line)


def _header(status: str, data: dict[str, Any]) -> str:
    """One line: how the call ended. A success is 'ok · exit 0 · 0.02 s'; anything else a sentence."""
    facts = []
    if "status_code" in data:
        facts.append(f"HTTP {data['status_code']}")
    if "exit_code" in data:
        facts.append("no exit code" if data["exit_code"] is None else f"exit {data['exit_code']}")
    if isinstance(data.get("duration_s"), (int, float)):
        facts.append(f"{data['duration_s']:.2f} s")
    for key in ("lines", "changes", "cut"):
        if data.get(key):
            facts.append(str(data[key]))
    if status == "success":
        first = " · ".join(["ok", *facts])
        return first + (f"\n{data['message']}" if data.get("message") else "")
    if status == "error":
        sentence = f"Error: {data.get('error_message') or 'the tool failed'}"
    else:  # a message that starts as a sentence is one ("User declined execution."); a fragment gets an opening
        message = str(data.get("message") or "").strip()
        sentence = message if message[:1].isupper() else f"{OPENING.get(status, status)}: {message or 'not run'}"
    if data.get("user_reason"):
        sentence = f"{_sentence(sentence)} Their reason: {data['user_reason']}"
    return sentence + (f" ({' · '.join(facts)})" if facts else "")


def _output(data: dict[str, Any]) -> list[str]:
    """The output as it is; stdout and stderr labelled only when both are there."""
    streams = [(name, str(data[name])) for name in STREAMS if data.get(name)]
    bodies = [str(data[name]) for name in BODIES if name in data]
    if len(streams) == 2:
        out = [f"{name}:\n{text.rstrip(chr(10))}" for name, text in streams]
    else:
        out = [text.rstrip("\n") for _, text in streams]
    out += [text.rstrip("\n") or "(empty)" for text in bodies]
    if not out and ("exit_code" in data or any(name in data for name in STREAMS)):
        out.append("(no output)")
    return out


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)

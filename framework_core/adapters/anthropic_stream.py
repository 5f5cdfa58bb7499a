"""Reading an Anthropic Messages stream: the events LACA uses, read from the JSON of each server-sent event.

As for the Responses API (`responses_stream.py`): the SDK does the HTTP, the SSE framing, `ping`s and the
`error` event (raised as its status error); the events' meaning is read here instead of through the SDK's
typed union, validated once per event. A field that is absent or of another type is read as absent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from framework_core.lial_core import ReasoningDelta, StreamEvent, TextDelta, ToolCallStart, ToolRequest, Usage


@dataclass
class AnthropicReply:
    """What has arrived so far of one streamed message."""

    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)  # by content block index
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    stop_detail: str | None = None
    model: str | None = None
    done: bool = False

    def text(self) -> str:
        return "".join(b["text"] for _, b in sorted(self.blocks.items()) if b["type"] == "text")

    def calls(self) -> list[ToolRequest]:
        return [ToolRequest.from_raw_arguments(b["id"], b["name"], "".join(b["json"]) or "{}")
                for _, b in sorted(self.blocks.items()) if b["type"] == "tool_use"]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def usage_of(u: Any, base: Usage) -> Usage:
    """Usage from message_start, or the cumulative counts of message_delta (fields there may be absent)."""
    u = _dict(u)

    def pick(name: str, current: int) -> int:
        value = u.get(name)
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else current

    return Usage(pick("input_tokens", base.input_tokens), pick("output_tokens", base.output_tokens),
                 pick("cache_read_input_tokens", base.cache_read_tokens),
                 pick("cache_creation_input_tokens", base.cache_write_tokens))


def read_event(event: Any, reply: AnthropicReply) -> Iterator[StreamEvent]:
    """What one event adds to the reply and what to show of it."""
    event = _dict(event)
    kind = event.get("type")
    index = event.get("index") if isinstance(event.get("index"), int) else -1
    if kind == "message_start":
        message = _dict(event.get("message"))
        reply.model = _str(message.get("model")) or None
        reply.usage = usage_of(message.get("usage"), Usage())
    elif kind == "content_block_start":
        yield from _block_start(index, _dict(event.get("content_block")), reply)
    elif kind == "content_block_delta":
        yield from _delta(reply.blocks.get(index), _dict(event.get("delta")))
    elif kind == "message_delta":
        delta = _dict(event.get("delta"))
        reply.stop_reason = _str(delta.get("stop_reason")) or reply.stop_reason
        details = delta.get("stop_details")
        if isinstance(details, dict):
            words = [str(x) for x in (details.get("category"), details.get("explanation")) if x]
            reply.stop_detail = ": ".join(words) or None
        if isinstance(event.get("usage"), dict):
            reply.usage = usage_of(event["usage"], reply.usage)
    elif kind == "message_stop":
        reply.done = True


def _block_start(index: int, block: dict[str, Any], reply: AnthropicReply) -> Iterator[StreamEvent]:
    kind = block.get("type")
    if kind == "tool_use":
        reply.blocks[index] = {"type": kind, "id": _str(block.get("id")), "name": _str(block.get("name")), "json": []}
        yield ToolCallStart(index, reply.blocks[index]["id"], reply.blocks[index]["name"])
    elif kind == "text":
        text = _str(block.get("text"))
        reply.blocks[index] = {"type": kind, "text": text}
        if text:
            yield TextDelta(text)
    elif kind == "thinking":
        reply.blocks[index] = {"type": kind, "thinking": _str(block.get("thinking")),
                               "signature": _str(block.get("signature"))}
    elif kind == "redacted_thinking":
        reply.blocks[index] = {"type": kind, "data": _str(block.get("data"))}


def _delta(block: dict[str, Any] | None, delta: dict[str, Any]) -> Iterator[StreamEvent]:
    if block is None:
        return
    kind = delta.get("type")
    if kind == "text_delta" and _str(delta.get("text")):
        block["text"] += delta["text"]
        yield TextDelta(delta["text"])
    elif kind == "thinking_delta" and _str(delta.get("thinking")):
        block["thinking"] += delta["thinking"]
        yield ReasoningDelta(delta["thinking"])
    elif kind == "signature_delta":
        block["signature"] = (block.get("signature") or "") + _str(delta.get("signature"))
    elif kind == "input_json_delta":
        block["json"].append(_str(delta.get("partial_json")))

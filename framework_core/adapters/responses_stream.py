"""Reading a Responses API stream: the events LACA uses, read from the JSON of each server-sent event.

The SDK still does the HTTP, the SSE framing and the error types (`SDKAdapter.post_stream` asks it for plain
objects); what each event means is read here, from the fields the API documents, instead of building the
SDK's typed model of every event (its discriminated union validated once per event, 20% of a turn's CPU, and
its schema built on the first one). A field that is absent or of another type is read as absent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from framework_core.lial_core import ReasoningDelta, StreamEvent, TextDelta, ToolCallStart, Usage

INCOMPLETE_STOP = {"max_output_tokens": "length", "content_filter": "content_filter"}


@dataclass
class ResponsesReply:
    """What has arrived so far of one streamed response."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)  # by output_index
    kept: list[dict[str, Any]] = field(default_factory=list)  # finished items, in output order
    usage: Usage = field(default_factory=Usage)
    stop: str | None = None
    model: str | None = None
    refused: bool = False
    failure: dict[str, Any] | None = None  # an `error` event or a failed response: {code, message}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_of(u: Any) -> Usage:
    """`input_tokens` includes cached ones: count them apart, as `Usage` does."""
    u = _dict(u)
    details = _dict(u.get("input_tokens_details"))
    cached, written = _int(details.get("cached_tokens")), _int(details.get("cache_write_tokens"))
    return Usage(max(0, _int(u.get("input_tokens")) - cached - written), _int(u.get("output_tokens")), cached, written)


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def kept_item(item: dict[str, Any]) -> dict[str, Any] | None:
    """What to remember of one finished output item so that it can be sent back in place."""
    kind = item.get("type")
    if kind == "reasoning":
        # the raw reasoning text (`content`) stays out: the encrypted copy is what the server reads back
        data = {k: v for k, v in _without_none(item).items() if k not in ("id", "status", "content")}
        return data if data.get("encrypted_content") else None  # without it there is nothing to send back
    if kind == "message":
        return {"type": "message", "phase": item.get("phase")}
    if kind == "function_call":
        return {"type": "function_call", "call_id": item.get("call_id")}
    return None


def read_event(event: Any, reply: ResponsesReply) -> Iterator[StreamEvent]:
    """What one event adds to the reply and what to show of it. A failure is recorded in `reply.failure`
    (the adapter turns it into the SDK's error type)."""
    event = _dict(event)
    kind = event.get("type")
    delta = _str(event.get("delta"))
    if kind in ("response.output_text.delta", "response.refusal.delta"):
        if delta:
            reply.refused = reply.refused or kind == "response.refusal.delta"
            reply.text.append(delta)
            yield TextDelta(delta)
    elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
        if delta:
            yield ReasoningDelta(delta)
    elif kind == "response.reasoning_summary_part.added":
        if _int(event.get("summary_index")) > 0:
            yield ReasoningDelta("\n\n")
    elif kind == "response.output_item.added":
        item = _dict(event.get("item"))
        if item.get("type") == "function_call":
            call = _call(item)
            reply.calls[_int(event.get("output_index"))] = call
            yield ToolCallStart(len(reply.calls) - 1, call["id"], call["name"])
    elif kind == "response.function_call_arguments.delta":
        index = _int(event.get("output_index"))
        if index in reply.calls:
            reply.calls[index]["args"].append(delta)
    elif kind == "response.output_item.done":
        item = _dict(event.get("item"))
        if item.get("type") == "function_call":  # the finished item is authoritative for the arguments
            reply.calls[_int(event.get("output_index"))] = _call(item)
        kept = kept_item(item)
        if kept is not None:
            reply.kept.append(kept)
    elif kind == "response.created":
        reply.model = _str(_dict(event.get("response")).get("model")) or reply.model
    elif kind in ("response.completed", "response.incomplete"):
        _finished(_dict(event.get("response")), reply)
    elif kind in ("response.failed", "error"):
        error = _dict(_dict(event.get("response")).get("error")) or event
        reply.failure = {"code": _str(error.get("code")) or "server_error",
                         "message": _str(error.get("message")) or "the response failed"}


def _call(item: dict[str, Any]) -> dict[str, Any]:
    return {"id": _str(item.get("call_id")), "name": _str(item.get("name")), "args": [_str(item.get("arguments"))]}


def _finished(response: dict[str, Any], reply: ResponsesReply) -> None:
    reply.usage = usage_of(response.get("usage"))
    reply.model = _str(response.get("model")) or reply.model
    details = response.get("incomplete_details")
    if response.get("status") == "incomplete" or details is not None:
        reason = _str(_dict(details).get("reason")) or "incomplete"
        reply.stop = INCOMPLETE_STOP.get(reason, reason)
    elif reply.calls:
        reply.stop = "tool_calls"
    else:
        reply.stop = "refusal" if reply.refused else "stop"

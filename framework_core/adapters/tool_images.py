"""Images a tool returned (an MCP screenshot, a chart), sent to the model as image blocks of each wire API.

The neutral history keeps them on the tool result (`Message.images`). Anthropic takes them inside the
`tool_result` block. Chat Completions and Responses take no image in a tool's output, so they follow the
outputs of that step in a user message that says which call they came from. Each function takes the wire
messages an adapter built and the neutral history they were built from, and adds the images in place.
"""

from __future__ import annotations

from typing import Any

from framework_core.lial_core import Message


def _results(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.role == "tool_result"]


def _caption(m: Message) -> str:
    return f"Image(s) returned by the tool call {m.tool_name or ''} ({m.tool_call_id}):"


def add_anthropic_images(wire: list[dict[str, Any]], messages: list[Message]) -> list[dict[str, Any]]:
    """The n-th `tool_result` block answers the n-th tool result of the history: give it its images."""
    results = iter(_results(messages))
    for msg in wire:
        if msg.get("role") != "user" or not isinstance(msg.get("content"), list):
            continue
        for block in msg["content"]:
            if block.get("type") != "tool_result":
                continue
            source = next(results, None)
            if source is not None and source.images:
                text = block.get("content")
                parts = [{"type": "text", "text": text}] if isinstance(text, str) and text else list(text or [])
                block["content"] = parts + [{"type": "image", "source": {
                    "type": "base64", "media_type": i["mime_type"], "data": i["data"]}} for i in source.images]
    return wire


def add_chat_images(wire: list[dict[str, Any]], messages: list[Message]) -> list[dict[str, Any]]:
    """After each run of `tool` messages, a user message with the images of those results."""
    results = iter(_results(messages))
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for msg in wire:
        if msg.get("role") != "tool" and pending:
            _flush(out, pending, msg)
            pending = []
        out.append(msg)
        if msg.get("role") == "tool":
            source = next(results, None)
            if source is not None and source.images:
                pending += [{"type": "text", "text": _caption(source)}] + [
                    {"type": "image_url", "image_url": {"url": _data_url(i)}} for i in source.images]
    if pending:
        out.append({"role": "user", "content": pending})
    wire[:] = out
    return wire


def _flush(out: list[dict[str, Any]], parts: list[dict[str, Any]], following: dict[str, Any]) -> None:
    """A user message of its own, or, when the user speaks next anyway, the start of that message."""
    if following.get("role") == "user":
        text = following.get("content")
        following["content"] = parts + ([{"type": "text", "text": text}] if isinstance(text, str) else list(text or []))
    else:
        out.append({"role": "user", "content": list(parts)})


def add_responses_images(items: list[dict[str, Any]], messages: list[Message]) -> list[dict[str, Any]]:
    """After each run of `function_call_output` items, a user message with the images of those results."""
    results = iter(_results(messages))
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for item in items:
        if item.get("type") != "function_call_output" and pending:
            out.append({"type": "message", "role": "user", "content": pending})
            pending = []
        out.append(item)
        if item.get("type") == "function_call_output":
            source = next(results, None)
            if source is not None and source.images:
                pending += [{"type": "input_text", "text": _caption(source)}] + [
                    {"type": "input_image", "image_url": _data_url(i)} for i in source.images]
    if pending:
        out.append({"type": "message", "role": "user", "content": pending})
    items[:] = out
    return items


def _data_url(image: dict[str, str]) -> str:
    return f"data:{image['mime_type']};base64,{image['data']}"

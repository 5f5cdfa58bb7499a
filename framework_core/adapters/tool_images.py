"""Images a tool returned (an MCP screenshot, a chart), sent to the model as image blocks of each wire API, or
as short text notes to a model that takes no images.

The neutral history keeps them on the tool result (`Message.images`); what is sent is decided per request
from the active model's capabilities, so a history keeps working after a switch of model either way.
Anthropic takes images inside the `tool_result` block. Chat Completions and Responses take no image in a
tool's output, so they follow the outputs of that step in a user message that says which call they came
from. Only the newest images are resent, within a count and a size per request; older ones become notes
too. Each function takes the wire messages an adapter built and the neutral history they were built from,
and adds the images (or the notes) in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from framework_core.estimate import base64_size
from framework_core.wording import size_words
from framework_core.lial_core import Message

MAX_REQUEST_IMAGES = 20  # images per request (Anthropic's smaller size limit starts above 20)
MAX_REQUEST_BYTES = 20_000_000  # base64 characters of images per request (the request bodies' limits are 32 MB+)


@dataclass
class _Shown:
    """What one tool result sends: the images as blocks, and a note for each image that is not sent."""

    images: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _plan(messages: list[Message], takes_images: bool, model: str) -> list[_Shown]:
    """One entry per tool result of the history, in order: the newest images first claim the request's room."""
    results = [m for m in messages if m.role == "tool_result"]
    plan = [_Shown() for _ in results]
    count = size = 0
    for shown, m in zip(reversed(plan), reversed(results), strict=True):
        for n, image in reversed(list(enumerate(m.images, start=1))):
            data = str(image.get("data") or "")
            if not data or not image.get("mime_type"):
                why = "its data was not kept"
            elif not takes_images:
                why = f"{model or 'this model'} takes no images"
            elif count >= MAX_REQUEST_IMAGES or size + len(data) > MAX_REQUEST_BYTES:
                why = "only the newest images are sent with each request"
            else:
                shown.images.insert(0, image)
                count, size = count + 1, size + len(data)
                continue
            shown.notes.insert(0, note(n, image, why))
    return plan


def note(n: int, image: dict[str, str], why: str) -> str:
    """`[image 2 (image/png, 41.3 KB) not shown: <why>; saved as <path>]`: what a model without it reads."""
    where = f"; saved as {image['path']}" if image.get("path") else ""
    size = size_words(base64_size(image.get("data")))
    return f"[image {n} ({image.get('mime_type') or 'unknown type'}, {size}) not shown: {why}{where}]"


def _with_notes(text: Any, notes: list[str]) -> Any:
    if not notes:
        return text
    joined = "\n".join(notes)
    if isinstance(text, list):
        return text + [{"type": "text", "text": joined}]
    return f"{text}\n{joined}" if text else joined


def _caption(m: Message) -> str:
    return f"Image(s) returned by the tool call {m.tool_name or ''} ({m.tool_call_id}):"


def add_anthropic_images(wire: list[dict[str, Any]], messages: list[Message], *, takes_images: bool,
                         model: str = "") -> list[dict[str, Any]]:
    """The n-th `tool_result` block answers the n-th tool result of the history: give it its images."""
    plan = iter(_plan(messages, takes_images, model))
    for msg in wire:
        if msg.get("role") != "user" or not isinstance(msg.get("content"), list):
            continue
        for block in msg["content"]:
            if block.get("type") != "tool_result":
                continue
            shown = next(plan, None)
            if shown is None:
                continue
            block["content"] = _with_notes(block.get("content"), shown.notes)
            if shown.images:
                text = block.get("content")
                parts = [{"type": "text", "text": text}] if isinstance(text, str) and text else list(text or [])
                block["content"] = parts + [{"type": "image", "source": {
                    "type": "base64", "media_type": i["mime_type"], "data": i["data"]}} for i in shown.images]
    return wire


def add_chat_images(wire: list[dict[str, Any]], messages: list[Message], *, takes_images: bool,
                    model: str = "") -> list[dict[str, Any]]:
    """After each run of `tool` messages, a user message with the images of those results."""
    results = iter(zip(_results(messages), _plan(messages, takes_images, model), strict=True))
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for msg in wire:
        if msg.get("role") != "tool" and pending:
            _flush(out, pending, msg)
            pending = []
        out.append(msg)
        if msg.get("role") == "tool":
            source, shown = next(results, (None, _Shown()))
            msg["content"] = _with_notes(msg.get("content"), shown.notes)
            if source is not None and shown.images:
                pending += [{"type": "text", "text": _caption(source)}] + [
                    {"type": "image_url", "image_url": {"url": _data_url(i)}} for i in shown.images]
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


def add_responses_images(items: list[dict[str, Any]], messages: list[Message], *, takes_images: bool,
                         model: str = "") -> list[dict[str, Any]]:
    """After each run of `function_call_output` items, a user message with the images of those results."""
    results = iter(zip(_results(messages), _plan(messages, takes_images, model), strict=True))
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for item in items:
        if item.get("type") != "function_call_output" and pending:
            out.append({"type": "message", "role": "user", "content": pending})
            pending = []
        out.append(item)
        if item.get("type") == "function_call_output":
            source, shown = next(results, (None, _Shown()))
            item["output"] = _with_notes(item.get("output"), shown.notes)
            if source is not None and shown.images:
                pending += [{"type": "input_text", "text": _caption(source)}] + [
                    {"type": "input_image", "image_url": _data_url(i)} for i in shown.images]
    if pending:
        out.append({"type": "message", "role": "user", "content": pending})
    items[:] = out
    return items


def _results(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.role == "tool_result"]


def _data_url(image: dict[str, str]) -> str:
    return f"data:{image['mime_type']};base64,{image['data']}"

"""Images of tool results on the wire: blocks for a model that takes images, within a count and a size per
request (the newest first); notes naming type, size and the saved file for the rest and for text-only models."""

from __future__ import annotations

import base64

from framework_core.adapters.chat_wire import to_openai_messages
from framework_core.adapters.tool_images import MAX_REQUEST_BYTES, MAX_REQUEST_IMAGES, add_chat_images
from framework_core.lial_core import Message, ToolRequest

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 92).decode()


def history(count: int, data: str = PNG) -> list[Message]:
    out = [Message("user", "show them")]
    for n in range(count):
        call = ToolRequest(f"call_{n}", "mcp__cases__image", {})
        out += [Message("assistant", "", tool_calls=[call]),
                Message("tool_result", "ok", tool_call_id=f"call_{n}", tool_name="mcp__cases__image",
                        images=[{"mime_type": "image/png", "data": data, "path": f"/saved/{n}.png"}])]
    return out


def wire(messages: list[Message], takes_images: bool) -> list[dict]:
    return add_chat_images(to_openai_messages(messages, ""), messages, takes_images=takes_images, model="tiny-llm")


def image_parts(out: list[dict]) -> int:
    return sum(1 for m in out if isinstance(m["content"], list) for p in m["content"] if p["type"] == "image_url")


def test_a_text_only_model_reads_a_note_in_the_tool_message() -> None:
    tool = [m for m in wire(history(1), False) if m["role"] == "tool"][0]
    assert tool["content"] == "ok\n[image 1 (image/png, 100 bytes) not shown: tiny-llm takes no images; saved as " \
                              "/saved/0.png]"


def test_only_the_newest_images_are_sent_within_the_count() -> None:
    out = wire(history(MAX_REQUEST_IMAGES + 2), True)
    tools = [m["content"] for m in out if m["role"] == "tool"]
    assert (image_parts(out), ["only the newest" in t for t in tools[:3]]) == (MAX_REQUEST_IMAGES, [True, True, False])


def test_only_the_newest_images_are_sent_within_the_size() -> None:
    big = "A" * (MAX_REQUEST_BYTES // 2 - 10)
    assert image_parts(wire(history(3, big), True)) == 2

"""Anthropic Messages through the official `anthropic` SDK, streaming raw events."""

from __future__ import annotations

from typing import Any, Iterator

from framework_core.adapters.errors import map_sdk_error
from framework_core.adapters.sdk_base import SDKAdapter
from framework_core.errors import StreamCutError
from framework_core.lial_core import (LLMResponse, Message, StreamDone, StreamEvent, TextDelta,
                                      ToolCallStart, ToolRequest, ToolSchema, Usage)


def to_anthropic_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Neutral history -> Messages API: tool results merge into one user turn; same-role turns merge."""
    out: list[dict[str, Any]] = []

    def push(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": list(blocks)})

    for m in messages:
        if m.role == "user":
            push("user", [{"type": "text", "text": m.content or "(empty)"}])
        elif m.role == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content.strip() else []
            blocks += [{"type": "tool_use", "id": c.request_id, "name": c.tool_name, "input": c.wire_arguments()}
                       for c in m.tool_calls]
            push("assistant", blocks)
        elif m.role == "tool_result":
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
            if m.is_error:
                block["is_error"] = True
            push("user", [block])
    # tool_result blocks must come first in a user turn
    for msg in out:
        if msg["role"] == "user":
            msg["content"].sort(key=lambda b: 0 if b.get("type") == "tool_result" else 1)
    return out


class AnthropicMessagesAdapter(SDKAdapter):
    wire_api = "anthropic"
    sdk = ("anthropic", "Anthropic")

    def _params(self, messages: list[Message], tools: list[ToolSchema], system_prompt: str) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.config.model, "max_tokens": self.caps.output_tokens,
                                  "messages": to_anthropic_messages(messages), "stream": True}
        if system_prompt:
            params["system"] = system_prompt
        if self.caps.temperature is not None:  # the SDK has no sampling parameters any more
            params["extra_body"] = {"temperature": min(self.caps.temperature, 1.0)}
        if tools:
            params["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                               for t in tools]
        return params

    def stream(self, messages: list[Message], tools: list[ToolSchema], system_prompt: str) -> Iterator[StreamEvent]:
        text: list[str] = []
        blocks: dict[int, dict[str, Any]] = {}
        usage = Usage()
        stop_reason: str | None = None
        model: str | None = None
        done = False
        try:
            stream = self.client.messages.create(**self._params(messages, tools, system_prompt))
            with stream:
                for event in stream:
                    kind = event.type
                    if kind == "message_start":
                        model = event.message.model
                        u = event.message.usage
                        usage = Usage(u.input_tokens or 0, u.output_tokens or 0,
                                      getattr(u, "cache_read_input_tokens", 0) or 0,
                                      getattr(u, "cache_creation_input_tokens", 0) or 0)
                    elif kind == "content_block_start":
                        block = event.content_block
                        if block.type == "tool_use":
                            blocks[event.index] = {"id": block.id, "name": block.name, "json": []}
                            yield ToolCallStart(event.index, block.id, block.name)
                    elif kind == "content_block_delta":
                        delta = event.delta
                        if delta.type == "text_delta" and delta.text:
                            text.append(delta.text)
                            yield TextDelta(delta.text)
                        elif delta.type == "input_json_delta" and event.index in blocks:
                            blocks[event.index]["json"].append(delta.partial_json)
                    elif kind == "message_delta":
                        stop_reason = event.delta.stop_reason or stop_reason
                        if event.usage is not None and event.usage.output_tokens is not None:
                            usage.output_tokens = event.usage.output_tokens
                    elif kind == "message_stop":
                        done = True
        except StreamCutError:
            raise
        except Exception as exc:
            if type(exc).__module__.startswith(("anthropic", "httpx", "httpcore")):
                raise map_sdk_error(exc, "anthropic API", self.config.api_key_env_var) from None
            raise
        calls = [ToolRequest.from_raw_arguments(b["id"], b["name"], "".join(b["json"]) or "{}")
                 for _, b in sorted(blocks.items())]
        response = LLMResponse("".join(text), calls, usage, stop_reason, model)
        if not done:
            raise StreamCutError("the reply stream ended before message_stop", partial=response)
        yield StreamDone(response)

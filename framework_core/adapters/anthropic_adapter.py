"""Anthropic Messages through the official `anthropic` SDK, streaming raw events.

What the request carries comes from the model's capability profile (`self.caps`): the output limit,
thinking (adaptive or with a budget) and effort, sampling parameters only where accepted, and prompt-cache
breakpoints. Thinking is shown apart as it streams and kept, signed, with the turn (see anthropic_history).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from framework_core.adapters.anthropic_history import (WIRE, add_cache_breakpoints, provider_state,
                                                       tail_needs_thinking, to_anthropic_messages,
                                                       to_anthropic_tools)
from framework_core.adapters.errors import map_sdk_error
from framework_core.adapters.sdk_base import SDKAdapter
from framework_core.errors import ProviderError, StreamCutError
from framework_core.lial_core import (LLMResponse, Message, ReasoningDelta, StreamDone, StreamEvent, TextDelta,
                                      ToolCallStart, ToolRequest, ToolSchema, Usage)

PROVIDER = "anthropic API"


@dataclass
class _Reply:
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


def _usage(u: Any, base: Usage) -> Usage:
    """Usage from message_start, or the cumulative counts of message_delta (fields there may be absent)."""
    def pick(name: str, current: int) -> int:
        value = getattr(u, name, None)
        return current if value is None else int(value)

    return Usage(pick("input_tokens", base.input_tokens), pick("output_tokens", base.output_tokens),
                 pick("cache_read_input_tokens", base.cache_read_tokens),
                 pick("cache_creation_input_tokens", base.cache_write_tokens))


class AnthropicMessagesAdapter(SDKAdapter):
    wire_api = WIRE
    sdk = ("anthropic", "Anthropic")

    def _params(self, messages: list[Message], tools: list[ToolSchema], system_prompt: str) -> dict[str, Any]:
        caps = self.caps
        from framework_core.adapters.tool_images import add_anthropic_images

        wire_messages = add_anthropic_images(to_anthropic_messages(messages, self.config.model), messages,
                                             takes_images=caps.images, model=self.config.model)
        params: dict[str, Any] = {"model": self.config.model, "max_tokens": caps.output_tokens,
                                  "messages": wire_messages, "stream": True}
        if system_prompt:
            params["system"] = system_prompt
        if tools:
            params["tools"] = to_anthropic_tools(tools)
        thinking = self._thinking(wire_messages)
        if thinking is not None:
            params["thinking"] = thinking
        if caps.effort:
            params["output_config"] = {"effort": caps.effort}
        if caps.temperature is not None:  # the SDK has no sampling parameters; the profile says they are accepted
            params["extra_body"] = {"temperature": min(caps.temperature, 1.0)}
        if caps.caching:
            add_cache_breakpoints(params)
        return params

    def _thinking(self, wire_messages: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The `thinking` parameter for this request, as the model's profile says to ask for it."""
        caps, mode = self.caps, self.caps.profile.thinking
        if mode in ("adaptive", "always"):
            return {"type": "adaptive", "display": "summarized"} if caps.thinking else {"type": "disabled"}
        # With a budget every reply starts with thinking, and the API wants it back before the calls of the
        # turn in progress; a turn begun without thinking (by another model) goes on without it.
        if mode == "budget" and caps.thinking and not tail_needs_thinking(wire_messages):
            return {"type": "enabled", "budget_tokens": caps.thinking_budget}
        return None

    def stream(self, messages: list[Message], tools: list[ToolSchema], system_prompt: str) -> Iterator[StreamEvent]:
        reply = _Reply()
        started = False
        try:
            stream = self.client.messages.create(**self._params(messages, tools, system_prompt))
            started = True
            with stream:
                for event in stream:
                    yield from self._on_event(event, reply)
        except ProviderError:
            raise
        except Exception as exc:
            if type(exc).__module__.startswith(("anthropic", "httpx", "httpcore")):
                raise map_sdk_error(exc, PROVIDER, self.config.api_key_env_var, started=started,
                                    idle_timeout_s=self.caps.idle_timeout_s) from None
            raise
        response = LLMResponse(reply.text(), reply.calls(), reply.usage, reply.stop_reason, reply.model,
                               provider_state(self.config.model, [b for _, b in sorted(reply.blocks.items())]),
                               stop_detail=reply.stop_detail)
        if not reply.done:
            raise StreamCutError("the reply stream ended before message_stop", partial=response)
        yield StreamDone(response)

    def _on_event(self, event: Any, reply: _Reply) -> Iterator[StreamEvent]:
        kind = event.type
        if kind == "message_start":
            reply.model = event.message.model
            reply.usage = _usage(event.message.usage, Usage())
        elif kind == "content_block_start":
            yield from self._block_start(event.index, event.content_block, reply)
        elif kind == "content_block_delta":
            yield from self._delta(reply.blocks.get(event.index), event.delta)
        elif kind == "message_delta":
            reply.stop_reason = event.delta.stop_reason or reply.stop_reason
            details = getattr(event.delta, "stop_details", None)
            if details is not None:
                reply.stop_detail = ": ".join(str(x) for x in (details.category, details.explanation) if x) or None
            if event.usage is not None:
                reply.usage = _usage(event.usage, reply.usage)
        elif kind == "message_stop":
            reply.done = True

    @staticmethod
    def _block_start(index: int, block: Any, reply: _Reply) -> Iterator[StreamEvent]:
        kind = block.type
        if kind == "tool_use":
            reply.blocks[index] = {"type": kind, "id": block.id, "name": block.name, "json": []}
            yield ToolCallStart(index, block.id, block.name)
        elif kind == "text":
            reply.blocks[index] = {"type": kind, "text": block.text or ""}
            if block.text:
                yield TextDelta(block.text)
        elif kind == "thinking":
            reply.blocks[index] = {"type": kind, "thinking": block.thinking or "", "signature": block.signature or ""}
        elif kind == "redacted_thinking":
            reply.blocks[index] = {"type": kind, "data": block.data}

    @staticmethod
    def _delta(block: dict[str, Any] | None, delta: Any) -> Iterator[StreamEvent]:
        if block is None:
            return
        kind = delta.type
        if kind == "text_delta" and delta.text:
            block["text"] += delta.text
            yield TextDelta(delta.text)
        elif kind == "thinking_delta" and delta.thinking:
            block["thinking"] += delta.thinking
            yield ReasoningDelta(delta.thinking)
        elif kind == "signature_delta":
            block["signature"] = (block.get("signature") or "") + delta.signature
        elif kind == "input_json_delta":
            block["json"].append(delta.partial_json)

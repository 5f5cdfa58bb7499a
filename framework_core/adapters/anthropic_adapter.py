"""Anthropic Messages through the official `anthropic` SDK, streaming raw events.

What the request carries comes from the model's capability profile (`self.caps`): the output limit,
thinking (adaptive or with a budget) and effort, sampling parameters only where accepted, and prompt-cache
breakpoints. Thinking is shown apart as it streams and kept, signed, with the turn (see anthropic_history).
"""

from __future__ import annotations

from typing import Any, Iterator

from framework_core.adapters.anthropic_history import (WIRE, add_cache_breakpoints, provider_state,
                                                       tail_needs_thinking, to_anthropic_messages,
                                                       to_anthropic_tools)
from framework_core.adapters.anthropic_stream import AnthropicReply, read_event
from framework_core.adapters.errors import map_sdk_error
from framework_core.adapters.sdk_base import SDKAdapter
from framework_core.errors import ProviderError, StreamCutError
from framework_core.lial_core import LLMResponse, Message, StreamDone, StreamEvent, ToolSchema

PROVIDER = "anthropic API"


class AnthropicMessagesAdapter(SDKAdapter):
    wire_api = WIRE
    sdk = ("anthropic", "Anthropic")
    request_options: dict[str, Any] = {}

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
        reply = AnthropicReply()
        started = False
        try:
            stream = self._post(self._params(messages, tools, system_prompt))
            started = True
            with stream:
                for event in stream:
                    yield from read_event(event, reply)
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

    def _post(self, params: dict[str, Any]) -> Any:
        from anthropic import Stream

        # plain objects, read by anthropic_stream: the SDK's typed events are built per event, at a cost
        return self.post_stream("/v1/messages", params, object, Stream[object])

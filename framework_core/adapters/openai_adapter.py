"""OpenAI Chat Completions (and every OpenAI-compatible server) through the official `openai` SDK, streaming."""

from __future__ import annotations

from typing import Any, Iterator

from framework_core.adapters.chat_wire import ChatStream, to_openai_messages, to_openai_tools
from framework_core.adapters.errors import map_sdk_error
from framework_core.adapters.sdk_base import SDKAdapter
from framework_core.errors import StreamCutError
from framework_core.lial_core import Message, StreamDone, StreamEvent, ToolSchema

__all__ = ["OpenAIChatAdapter", "to_openai_messages", "to_openai_tools"]


class OpenAIChatAdapter(SDKAdapter):
    wire_api = "openai"
    sdk = ("openai", "OpenAI")

    def _params(self, messages: list[Message], tools: list[ToolSchema], system_prompt: str) -> dict[str, Any]:
        from framework_core.adapters.tool_images import add_chat_images

        messages_out = to_openai_messages(messages, system_prompt, self.config.model, self.config.merge_user_messages)
        add_chat_images(messages_out, messages, takes_images=self.caps.images, model=self.config.model)
        params: dict[str, Any] = {"model": self.config.model, "messages": messages_out,
                                  "stream": True, "stream_options": {"include_usage": True}}
        caps = self.caps  # which token parameter and whether sampling is accepted: the model's profile
        if caps.output_tokens is not None and caps.token_parameter:
            params[caps.token_parameter] = caps.output_tokens
        if caps.temperature is not None:
            params["temperature"] = caps.temperature
        if caps.effort:
            params["reasoning_effort"] = caps.effort
        if tools:
            params["tools"] = to_openai_tools(tools)
        if self.config.extra_body:
            params["extra_body"] = dict(self.config.extra_body)
        return params

    def _post(self, params: dict[str, Any]) -> Any:
        from openai import Stream
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        return self.post_stream("/chat/completions", params, ChatCompletion, Stream[ChatCompletionChunk])

    def stream(self, messages: list[Message], tools: list[ToolSchema], system_prompt: str) -> Iterator[StreamEvent]:
        reply = ChatStream(self.config.model)
        started = False  # a stream that goes silent after it opened is not retried (see adapters/errors)
        try:
            stream = self._post(self._params(messages, tools, system_prompt))
            started = True
            with stream:
                for chunk in stream:
                    yield from reply.feed(chunk)
            yield from reply.flush()
        except StreamCutError:
            raise
        except Exception as exc:
            if type(exc).__module__.startswith(("openai", "httpx", "httpcore")):
                raise map_sdk_error(exc, "openai-compatible API", self.config.api_key_env_var, started=started,
                                    idle_timeout_s=self.caps.idle_timeout_s) from None
            raise
        response = reply.response()
        if reply.finish is None:
            raise StreamCutError("the reply stream ended before its final event", partial=response)
        yield StreamDone(response)

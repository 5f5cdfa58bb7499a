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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._mode: str | None = None  # native | generic, once known (adapters/tool_mode.py)

    def _params(self, messages: list[Message], tools: list[ToolSchema], system_prompt: str) -> dict[str, Any]:
        from framework_core.adapters.tool_images import add_chat_images
        from framework_core.adapters.tool_shaping import choice_for, native_choice

        messages_out = to_openai_messages(messages, system_prompt, self.config.model, self.config.merge_user_messages)
        add_chat_images(messages_out, messages, takes_images=self.caps.images, model=self.config.model)
        params = self.base_params(messages_out)
        if tools:
            params["tools"] = to_openai_tools(tools)
            choice = native_choice(choice_for(messages, self.caps))  # as the profile says, per request
            if choice:
                params["tool_choice"] = choice
        return params

    def base_params(self, messages_out: list[dict[str, Any]]) -> dict[str, Any]:
        """What every request sends besides the tools: the model, the messages, streaming, the profile's limits."""
        params: dict[str, Any] = {"model": self.config.model, "messages": messages_out,
                                  "stream": True, "stream_options": {"include_usage": True}}
        caps = self.caps  # which token parameter and whether sampling is accepted: the model's profile
        if caps.output_tokens is not None and caps.token_parameter:
            params[caps.token_parameter] = caps.output_tokens
        if caps.temperature is not None:
            params["temperature"] = caps.temperature
        if caps.effort:
            params["reasoning_effort"] = caps.effort
        if self.config.extra_body:
            params["extra_body"] = dict(self.config.extra_body)
        return params

    def use_tool_mode(self, mode: str) -> None:
        """Use this mode from now on (`laca doctor` found it)."""
        self._mode = mode

    def tool_mode(self, tools: list[ToolSchema]) -> str:
        """native or generic: the profile's, else remembered for this server and model, else found out now."""
        if self._mode is None:
            mode = self.caps.tool_mode
            if mode == "auto" and tools:
                from framework_core.adapters.generic_chat import find_mode
                from framework_core.adapters.tool_mode import ToolModeMemory

                memory = ToolModeMemory()
                mode = memory.get(self.config.base_url, self.config.model) or ""
                if not mode:
                    finding = find_mode(self, tools, tokens=False)  # one GET; laca doctor also compares tokens
                    if finding.dropped is not None:
                        memory.remember(self.config.base_url, self.config.model, finding)
                    mode = finding.mode
                    if finding.mode == "generic":
                        self.notes.append(f"Generic tool mode for {self.config.model}: {finding.why}. LACA "
                                          "describes the tools in the prompt and reads the model's JSON replies "
                                          "(remembered for this server; set tool_mode to change it).")
            if mode == "auto":
                return "native"  # no tools yet: nothing to find out
            self._mode = mode
        return self._mode

    def _post(self, params: dict[str, Any]) -> Any:
        from openai import Stream
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        return self.post_stream("/chat/completions", params, ChatCompletion, Stream[ChatCompletionChunk])

    def stream(self, messages: list[Message], tools: list[ToolSchema], system_prompt: str) -> Iterator[StreamEvent]:
        from framework_core.adapters import generic_chat
        from framework_core.adapters.tool_shaping import choice_for, shape_tools

        reply = ChatStream(self.config.model)
        started = False  # a stream that goes silent after it opened is not retried (see adapters/errors)
        tools = shape_tools(tools, self.caps.small_model)
        owed: list[StreamEvent] = []
        try:
            generic = bool(tools) and self.tool_mode(tools) == "generic"
            params = (generic_chat.generic_params(self, messages, tools, system_prompt, choice_for(messages, self.caps))
                      if generic else self._params(messages, tools, system_prompt))
            stream = self._post(params)
            started = True
            with stream:
                if generic:
                    yield from generic_chat.read_generic(iter(stream), reply)
                else:
                    for chunk in stream:
                        yield from reply.feed(chunk)
            if not generic:
                yield from reply.flush()
        except StreamCutError:
            raise
        except Exception as exc:
            if type(exc).__module__.startswith(("openai", "httpx", "httpcore")):
                raise map_sdk_error(exc, "openai-compatible API", self.config.api_key_env_var, started=started,
                                    idle_timeout_s=self.caps.idle_timeout_s) from None
            raise
        if generic:
            response, owed = generic_chat.finish(reply)
            yield from owed
        else:
            response = reply.response()
        if reply.finish is None:
            raise StreamCutError("the reply stream ended before its final event", partial=response)
        yield StreamDone(response)

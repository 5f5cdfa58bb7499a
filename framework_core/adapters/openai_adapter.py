"""OpenAI Chat Completions (and every OpenAI-compatible server) through the official `openai` SDK, streaming."""

from __future__ import annotations

import json
from typing import Any, Iterator

from framework_core.adapters.errors import map_sdk_error
from framework_core.adapters.sdk_base import SDKAdapter
from framework_core.errors import StreamCutError
from framework_core.lial_core import (LLMResponse, Message, StreamDone, StreamEvent, TextDelta,
                                      ToolCallStart, ToolRequest, ToolSchema, Usage)

def to_openai_messages(messages: list[Message], system_prompt: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}] if system_prompt else []
    for m in messages:
        if m.role == "user":
            out.append({"role": "user", "content": m.content})
        elif m.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.tool_calls:
                msg["tool_calls"] = [{"id": c.request_id, "type": "function", "function": {
                    "name": c.tool_name, "arguments": json.dumps(c.wire_arguments(), ensure_ascii=False)}}
                    for c in m.tool_calls]
            elif not m.content:
                continue
            out.append(msg)
        elif m.role == "tool_result":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        elif m.role == "system":
            out.append({"role": "system", "content": m.content})
    return out


def to_openai_tools(tools: list[ToolSchema]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in tools]


class OpenAIChatAdapter(SDKAdapter):
    wire_api = "openai"
    sdk = ("openai", "OpenAI")

    def _params(self, messages: list[Message], tools: list[ToolSchema], system_prompt: str) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.config.model, "messages": to_openai_messages(messages, system_prompt),
                                  "stream": True, "stream_options": {"include_usage": True}}
        caps = self.caps  # which token parameter and whether sampling is accepted: the model's profile
        if caps.output_tokens is not None and caps.token_parameter:
            params[caps.token_parameter] = caps.output_tokens
        if caps.temperature is not None:
            params["temperature"] = caps.temperature
        if tools:
            params["tools"] = to_openai_tools(tools)
        return params

    def stream(self, messages: list[Message], tools: list[ToolSchema], system_prompt: str) -> Iterator[StreamEvent]:
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        usage = Usage()
        finish: str | None = None
        model: str | None = None
        try:
            stream = self.client.chat.completions.create(**self._params(messages, tools, system_prompt))
            with stream:
                for chunk in stream:
                    model = model or getattr(chunk, "model", None)
                    if getattr(chunk, "usage", None):
                        usage = Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
                    for choice in chunk.choices or []:
                        delta = choice.delta
                        if delta is not None and delta.content:
                            text.append(delta.content)
                            yield TextDelta(delta.content)
                        for tc in (delta.tool_calls if delta is not None else None) or []:
                            slot = calls.setdefault(tc.index, {"id": "", "name": "", "args": []})
                            if tc.id:
                                slot["id"] = tc.id
                            if tc.function is not None and tc.function.name:
                                slot["name"] = tc.function.name
                                yield ToolCallStart(tc.index, slot["id"], slot["name"])
                            if tc.function is not None and tc.function.arguments:
                                slot["args"].append(tc.function.arguments)
                        if choice.finish_reason:
                            finish = choice.finish_reason
        except StreamCutError:
            raise
        except Exception as exc:
            if type(exc).__module__.startswith(("openai", "httpx", "httpcore")):
                raise map_sdk_error(exc, "openai-compatible API", self.config.api_key_env_var) from None
            raise
        response = LLMResponse("".join(text), self._requests(calls), usage, finish, model)
        if finish is None:
            raise StreamCutError("the reply stream ended before its final event", partial=response)
        yield StreamDone(response)

    @staticmethod
    def _requests(calls: dict[int, dict[str, Any]]) -> list[ToolRequest]:
        out = []
        for index in sorted(calls):
            slot = calls[index]
            rid = slot["id"] or f"call_{index}"
            out.append(ToolRequest.from_raw_arguments(rid, slot["name"], "".join(slot["args"])))
        return out

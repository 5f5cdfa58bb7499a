"""OpenAI Responses API (api.openai.com, Azure OpenAI's v1 endpoint) through the official `openai` SDK, streaming.

Stateless: `store: false`, the whole conversation in `input`, and reasoning items asked for with their
encrypted content so they can be sent back (see `responses_history`). Stop reasons are reported in Chat
Completions' words (`stop`, `tool_calls`, `length`, `content_filter`) so both OpenAI wires read alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from framework_core.adapters.errors import map_sdk_error
from framework_core.adapters.responses_history import (WIRE, kept_item, provider_state, to_responses_input,
                                                       to_responses_tools)
from framework_core.adapters.sdk_base import SDKAdapter
from framework_core.errors import ProviderError, StreamCutError
from framework_core.lial_core import (LLMResponse, Message, ReasoningDelta, StreamDone, StreamEvent, TextDelta,
                                      ToolCallStart, ToolRequest, ToolSchema, Usage)

INCOMPLETE_STOP = {"max_output_tokens": "length", "content_filter": "content_filter"}


@dataclass
class _Reply:
    """What has arrived so far of one streamed response."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)  # by output_index
    kept: list[dict[str, Any]] = field(default_factory=list)  # finished items, in output order
    usage: Usage = field(default_factory=Usage)
    stop: str | None = None
    model: str | None = None
    refused: bool = False


def usage_of(u: Any) -> Usage:
    """`input_tokens` includes cached ones: count them apart, as `Usage` does."""
    if u is None:
        return Usage()
    details = getattr(u, "input_tokens_details", None)
    cached = getattr(details, "cached_tokens", 0) or 0
    written = getattr(details, "cache_write_tokens", 0) or 0
    return Usage(max(0, (u.input_tokens or 0) - cached - written), u.output_tokens or 0, cached, written)


def _refuses_encrypted_content(exc: Exception) -> bool:
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    return (getattr(exc, "status_code", None) == 400 and isinstance(error, dict)
            and (error.get("param") == "include" or "encrypted content" in str(error.get("message", "")).lower()))


class OpenAIResponsesAdapter(SDKAdapter):
    wire_api = WIRE
    sdk = ("openai", "OpenAI")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        profile = self.caps.profile
        # Reasoning items come back encrypted only from models that reason; others refuse the `include`.
        # An unknown model is assumed to reason (every current OpenAI model does); if the API refuses, the
        # request is sent once more without it, and so are the next ones.
        self._encrypted = profile.thinking != "none" if profile.known else True

    def _params(self, messages: list[Message], tools: list[ToolSchema], system_prompt: str) -> dict[str, Any]:
        cfg, caps = self.config, self.caps
        from framework_core.adapters.tool_images import add_responses_images

        wire_input = add_responses_images(to_responses_input(messages, cfg.model), messages,
                                          takes_images=caps.images, model=cfg.model)
        params: dict[str, Any] = {"model": cfg.model, "input": wire_input, "stream": True, "store": False}
        if self._encrypted:
            params["include"] = ["reasoning.encrypted_content"]
        if caps.output_tokens is not None:  # the model's profile, or the entry's max_tokens
            params["max_output_tokens"] = caps.output_tokens
        if system_prompt:
            params["instructions"] = system_prompt
        if tools:
            params["tools"] = to_responses_tools(tools)
        summary = cfg.reasoning_summary if self._encrypted else None
        reasoning = {k: v for k, v in (("effort", caps.effort), ("summary", summary)) if v}
        if reasoning:
            params["reasoning"] = reasoning
        if caps.temperature is not None:  # None as well where the profile refuses sampling parameters
            params["temperature"] = caps.temperature
        if cfg.extra_body:
            params["extra_body"] = dict(cfg.extra_body)
        return params

    def _create(self, messages: list[Message], tools: list[ToolSchema], system_prompt: str) -> Any:
        params = self._params(messages, tools, system_prompt)
        try:
            return self._post(params)
        except Exception as exc:
            if "include" not in params or not _refuses_encrypted_content(exc):
                raise
        self._encrypted = False
        return self._post(self._params(messages, tools, system_prompt))

    def _post(self, params: dict[str, Any]) -> Any:
        from openai import Stream
        from openai.types.responses import Response, ResponseStreamEvent

        return self.post_stream("/responses", params, Response, Stream[ResponseStreamEvent])

    def stream(self, messages: list[Message], tools: list[ToolSchema], system_prompt: str) -> Iterator[StreamEvent]:
        reply = _Reply()
        started = False  # a stream that goes silent after it opened is not retried (see adapters/errors)
        try:
            stream = self._create(messages, tools, system_prompt)
            started = True
            with stream:
                for event in stream:
                    yield from self._on_event(event, reply, stream)
        except ProviderError:
            raise
        except Exception as exc:
            if type(exc).__module__.startswith(("openai", "httpx", "httpcore")):
                raise map_sdk_error(exc, "OpenAI Responses API", self.config.api_key_env_var, started=started,
                                    idle_timeout_s=self.caps.idle_timeout_s) from None
            raise
        response = self._response(reply)
        if reply.stop is None:
            raise StreamCutError("the reply stream ended before response.completed", partial=response)
        yield StreamDone(response)

    def _on_event(self, event: Any, reply: _Reply, stream: Any) -> Iterator[StreamEvent]:
        kind = getattr(event, "type", "")
        if kind in ("response.output_text.delta", "response.refusal.delta") and event.delta:
            reply.refused = reply.refused or kind == "response.refusal.delta"
            reply.text.append(event.delta)
            yield TextDelta(event.delta)
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta") and event.delta:
            yield ReasoningDelta(event.delta)
        elif kind == "response.reasoning_summary_part.added" and event.summary_index > 0:
            yield ReasoningDelta("\n\n")
        elif kind == "response.output_item.added" and event.item.type == "function_call":
            item = event.item
            reply.calls[event.output_index] = {"id": item.call_id, "name": item.name, "args": [item.arguments or ""]}
            yield ToolCallStart(len(reply.calls) - 1, item.call_id, item.name)
        elif kind == "response.function_call_arguments.delta" and event.output_index in reply.calls:
            reply.calls[event.output_index]["args"].append(event.delta)
        elif kind == "response.output_item.done":
            self._item_done(event, reply)
        elif kind == "response.created":
            reply.model = event.response.model
        elif kind in ("response.completed", "response.incomplete"):
            self._finished(event.response, reply)
        elif kind in ("response.failed", "error"):
            raise self._stream_error(event, stream)

    @staticmethod
    def _item_done(event: Any, reply: _Reply) -> None:
        item = event.item
        if item.type == "function_call":  # the finished item is authoritative for the arguments
            reply.calls[event.output_index] = {"id": item.call_id, "name": item.name, "args": [item.arguments or ""]}
        kept = kept_item(item)
        if kept is not None:
            reply.kept.append(kept)

    @staticmethod
    def _finished(response: Any, reply: _Reply) -> None:
        reply.usage = usage_of(getattr(response, "usage", None))
        reply.model = getattr(response, "model", None) or reply.model
        details = getattr(response, "incomplete_details", None)
        if getattr(response, "status", None) == "incomplete" or details is not None:
            reason = getattr(details, "reason", None) or "incomplete"
            reply.stop = INCOMPLETE_STOP.get(reason, reason)
        elif reply.calls:
            reply.stop = "tool_calls"
        else:
            reply.stop = "refusal" if reply.refused else "stop"

    def _stream_error(self, event: Any, stream: Any) -> ProviderError:
        """An `error` event or `response.failed` inside a 200 stream, judged like an HTTP error of that code."""
        import openai

        error = getattr(getattr(event, "response", None), "error", None) or event
        code = getattr(error, "code", None) or "server_error"
        message = getattr(error, "message", None) or "the response failed"
        exc = openai.APIError(message, stream.response.request, body={"type": code, "code": code, "message": message})
        return map_sdk_error(exc, "OpenAI Responses API", self.config.api_key_env_var)

    def _response(self, reply: _Reply) -> LLMResponse:
        calls = [ToolRequest.from_raw_arguments(c["id"], c["name"], "".join(c["args"]))
                 for _, c in sorted(reply.calls.items())]
        return LLMResponse("".join(reply.text), calls, reply.usage, reply.stop, reply.model,
                           provider_state(reply.kept, self.config.model))

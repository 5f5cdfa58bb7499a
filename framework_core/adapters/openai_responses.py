"""OpenAI Responses API (api.openai.com, Azure OpenAI's v1 endpoint) through the official `openai` SDK, streaming.

Stateless: `store: false`, the whole conversation in `input`, and reasoning items asked for with their
encrypted content so they can be sent back (see `responses_history`). Stop reasons are reported in Chat
Completions' words (`stop`, `tool_calls`, `length`, `content_filter`) so both OpenAI wires read alike.
"""

from __future__ import annotations

from typing import Any, Iterator

from framework_core.adapters.errors import map_sdk_error
from framework_core.adapters.responses_history import WIRE, provider_state, to_responses_input, to_responses_tools
from framework_core.adapters.responses_stream import ResponsesReply, read_event
from framework_core.adapters.sdk_base import SDKAdapter
from framework_core.errors import ProviderError, StreamCutError
from framework_core.lial_core import LLMResponse, Message, StreamDone, StreamEvent, ToolRequest, ToolSchema


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

        # plain objects, read by responses_stream: the SDK's typed events are built per event, at a cost
        return self.post_stream("/responses", params, object, Stream[object])

    def stream(self, messages: list[Message], tools: list[ToolSchema], system_prompt: str) -> Iterator[StreamEvent]:
        reply = ResponsesReply()
        started = False  # a stream that goes silent after it opened is not retried (see adapters/errors)
        try:
            stream = self._create(messages, tools, system_prompt)
            started = True
            with stream:
                for event in stream:
                    yield from read_event(event, reply)
                    if reply.failure is not None:
                        raise self._stream_error(reply.failure, stream)
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

    def _stream_error(self, failure: dict[str, str], stream: Any) -> ProviderError:
        """An `error` event or `response.failed` inside a 200 stream, judged like an HTTP error of that code."""
        import openai

        code, message = failure["code"], failure["message"]
        exc = openai.APIError(message, stream.response.request, body={"type": code, "code": code, "message": message})
        return map_sdk_error(exc, "OpenAI Responses API", self.config.api_key_env_var)

    def _response(self, reply: ResponsesReply) -> LLMResponse:
        calls = [ToolRequest.from_raw_arguments(c["id"], c["name"], "".join(c["args"]))
                 for _, c in sorted(reply.calls.items())]
        return LLMResponse("".join(reply.text), calls, reply.usage, reply.stop, reply.model,
                           provider_state(reply.kept, self.config.model))

"""Chat Completions in generic tool mode (`adapters/generic_tools.py`), and the choice of mode for an adapter
whose profile does not say (`adapters/tool_mode.py`): what the OpenAI-compatible adapter calls when a request
carries tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from framework_core.adapters.generic_tools import GenericReply, response_format, to_generic_messages, tools_prompt
from framework_core.adapters.tool_shaping import Choice
from framework_core.lial_core import LLMResponse, StreamEvent, TextDelta, ToolCallStart

if TYPE_CHECKING:
    from framework_core.adapters.openai_adapter import OpenAIChatAdapter
    from framework_core.adapters.tool_mode import Finding
    from framework_core.lial_core import Message, ToolSchema


def generic_params(adapter: "OpenAIChatAdapter", messages: list["Message"], tools: list["ToolSchema"],
                   system_prompt: str, choice: Choice) -> dict[str, Any]:
    """The request: no `tools`; the tools in the system prompt; the reply's shape as a JSON schema."""
    params = adapter.base_params(to_generic_messages(messages, f"{system_prompt}\n\n{tools_prompt(tools, choice)}"))
    params["response_format"] = response_format(tools, choice)
    return params


def read_generic(chunks: Iterator[Any], reply: Any) -> Iterator[StreamEvent]:
    """Feed the server's chunks through `reply` (a ChatStream, for usage and the stop), reading its text as the
    constrained JSON; `reply.generic` holds the parse for `finish`."""
    generic = GenericReply()
    reply.generic = generic
    for chunk in chunks:
        for event in reply.feed(chunk):
            if isinstance(event, TextDelta):
                yield from generic.feed(event.text)
            elif not isinstance(event, ToolCallStart):
                yield event
    for event in reply.flush():
        if isinstance(event, TextDelta):
            yield from generic.feed(event.text)


def finish(reply: Any) -> tuple[LLMResponse, list[StreamEvent]]:
    """The whole response of a generic reply, and the events still owed (text the stream held back)."""
    response = reply.response()
    text, calls, owed = reply.generic.result()
    response.conversation = text
    response.tool_requests = calls
    if calls and response.stop_reason == "stop":
        response.stop_reason = "tool_calls"
    return response, list(owed)


def find_mode(adapter: "OpenAIChatAdapter", tools: list["ToolSchema"], *, tokens: bool = True) -> "Finding":
    """Ask the server (its `/props`, else, with `tokens`, two one-token requests) whether it drops tools."""
    from framework_core.adapters.tool_mode import probe

    def props() -> dict[str, Any] | None:
        url = str(adapter.client.base_url).rstrip("/")
        root = url[: -len("/v1")] if url.endswith("/v1") else url
        response = adapter.client.with_options(timeout=10.0).get(root + "/props", cast_to=object)
        return response if isinstance(response, dict) else None

    def prompt_tokens(with_tools: bool) -> int:
        from framework_core.adapters.chat_wire import to_openai_tools

        body: dict[str, Any] = {"model": adapter.config.model, "max_tokens": 1, "stream": False,
                                "messages": [{"role": "user", "content": "Say ok."}]}
        if with_tools:
            body["tools"] = to_openai_tools(tools)
        result = adapter.client.with_options(timeout=60.0).post("/chat/completions", cast_to=object, body=body)
        usage = result.get("usage") if isinstance(result, dict) else None
        return int((usage or {}).get("prompt_tokens") or 0)

    return probe(props, prompt_tokens if tokens else None, tools)

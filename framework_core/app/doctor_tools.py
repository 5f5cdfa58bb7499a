"""`laca doctor`'s tool checks (called by `app/provider_check.py`): whether the server passes tools to the model
or drops them, which tool mode LACA will use (and remembers, `adapters/tool_mode.py`), and whether a tool
call makes the round trip in that mode; a model that answered in text where the server passed the tools is
told apart from a server that dropped them. For llama.cpp, the context size it serves (`/props`) is read
too."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from framework_core.lial_core import LLMAdapterInterface, LLMResponse

Check = tuple[bool, str]  # a step: whether it holds, and its line (provider_check.Check)

PING = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}


def tool_checks(adapter: "LLMAdapterInterface") -> Iterator[Check]:
    """The tool mode (found and remembered where the profile does not say), then the round trip in it."""
    from framework_core.lial_core import ToolSchema

    tool = ToolSchema("ping", "Answers pong. Call it when asked to.", PING)
    finding = None
    caps = getattr(adapter, "caps", None)
    if getattr(adapter, "wire_api", "") == "openai" and caps is not None:
        from framework_core.adapters.generic_chat import find_mode

        finding = find_mode(adapter, [tool])  # type: ignore[arg-type]  # the Chat Completions adapter
        if caps.tool_mode == "auto":  # found now, remembered for the sessions to come
            from framework_core.adapters.tool_mode import ToolModeMemory

            ToolModeMemory().remember(adapter.config.base_url, adapter.config.model, finding)
            mode, source = finding.mode, "found now and remembered for this server and model"
        else:
            mode, source = caps.tool_mode, "as the model's profile or its llm_settings entry says (tool_mode)"
        adapter.use_tool_mode(mode)  # type: ignore[attr-defined]
        head = {True: "the server drops tools", False: "the server passes tools to the model",
                None: "tools"}[finding.dropped]
        yield (True, f"{head} ({finding.why}): LACA uses {mode} tool mode, {source}")
    yield round_trip(adapter, tool, finding)


def round_trip(adapter: "LLMAdapterInterface", tool: Any, finding: Any) -> Check:
    """Ask for a call of `ping`, answer it, and expect text back."""
    from framework_core.lial_core import Message, ToolResult

    messages = [Message("user", "Call the ping tool with x=1. Do not answer in text.")]
    first: LLMResponse = _reply(adapter, messages, [tool])
    calls = [c for c in first.tool_requests if c.tool_name == "ping"]
    if not calls:
        return (False, "tool calls: " + no_call_advice(finding))
    call = calls[0]
    messages += [Message("assistant", first.conversation, tool_calls=[call], provider_state=first.provider_state),
                 Message.tool_result(ToolResult(call.request_id, "ping", "success", {"stdout": "pong"}))]
    second = _reply(adapter, messages, [tool])
    if not (second.conversation or second.tool_requests):
        return (False, "tool calls: the model called the tool but said nothing after its result")
    return (True, f"a tool call makes the round trip (arguments {json.dumps(call.parameters)})")


def no_call_advice(finding: Any) -> str:
    """Why no call came back, as far as the probe knows: the model, or the server."""
    if finding is not None and finding.dropped is False:
        return ("the server passed the tools, but the model answered in text instead of calling one: this model "
                "did not call (pick a model that calls tools, or set tool_mode: generic for it)")
    if finding is not None and finding.dropped:
        return ("the model answered in text even in generic tool mode: the server may not honour "
                "response_format json_schema (a model that calls tools natively works better)")
    return ("the model answered in text instead of calling a tool; it may not support tools (pick a model that "
            "does; for llama.cpp, start the server with --jinja; or set tool_mode: generic)")


def served_window(adapter: "LLMAdapterInterface", window: int | None) -> "Check | None":
    """llama.cpp's own context size (`/props`), when it reports one; None elsewhere (the long-prompt probe)."""
    props = _props(adapter)
    served = ((props or {}).get("default_generation_settings") or {}).get("n_ctx")
    if not isinstance(served, int) or served <= 0:
        return None
    if window and served < window:
        return (False, f"context window: llama.cpp serves {served:,} tokens (/props) but {window:,} are "
                            f"configured: start it with -c {window} or set context_window: {served}")
    return (True, f"context window: llama.cpp serves {served:,} tokens (/props; configured "
                       f"{window:,})" if window else f"context window: llama.cpp serves {served:,} tokens (/props)")


def _reply(adapter: "LLMAdapterInterface", messages: list[Any], tools: list[Any]) -> "LLMResponse":
    from framework_core.errors import ProviderError
    from framework_core.lial_core import StreamDone

    for event in adapter.stream(messages, tools, "You are a connectivity check. Be brief."):
        if isinstance(event, StreamDone):
            return event.response
    raise ProviderError("the reply stream ended without a final event")


def _props(adapter: "LLMAdapterInterface") -> dict[str, Any] | None:
    client = getattr(adapter, "client", None)
    if client is None or getattr(adapter, "wire_api", "") != "openai":
        return None
    url = str(client.base_url).rstrip("/")
    root = url[: -len("/v1")] if url.endswith("/v1") else url
    try:
        response = client.with_options(timeout=10.0).get(root + "/props", cast_to=object)
    except Exception:
        return None
    return response if isinstance(response, dict) else None

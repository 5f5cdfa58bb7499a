"""The neutral history as input items of the OpenAI Responses API, sent statelessly (`store: false`).

Nothing is stored on the server, so every request carries the whole conversation, and an item must not
name an `id` the server would look up (it would answer 404). A reply's reasoning items come back with
their `encrypted_content`, in the order the model produced them: the server decrypts them, so a reasoning
model keeps its chain of thought across tool calls (as Codex does). They are kept in the assistant
message's provider state, valid for the same wire API and model only.
"""

from __future__ import annotations

import json
from typing import Any

from framework_core.lial_core import Message, ProviderState, ToolRequest, ToolSchema

WIRE = "openai-responses"


def to_responses_input(messages: list[Message], model: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "user":
            items.append({"type": "message", "role": "user",
                          "content": [{"type": "input_text", "text": m.content or "(empty)"}]})
        elif m.role == "system":
            items.append({"type": "message", "role": "developer",
                          "content": [{"type": "input_text", "text": m.content}]})
        elif m.role == "assistant":
            items += assistant_items(m, model)
        elif m.role == "tool_result":
            items.append({"type": "function_call_output", "call_id": m.tool_call_id or "", "output": m.content})
    return items


def assistant_items(m: Message, model: str) -> list[dict[str, Any]]:
    """One assistant turn as output items, in the order the model produced them when that order is known."""
    calls = {c.request_id: c for c in m.tool_calls}
    out: list[dict[str, Any]] = []
    text_sent = False
    for kept in m.state_for(WIRE, model):
        kind = kept.get("type")
        if kind == "reasoning":
            out.append({k: v for k, v in kept.items() if k not in ("id", "status")})
        elif kind == "message" and not text_sent and m.content.strip():
            out.append(_assistant_text(m.content, kept.get("phase")))
            text_sent = True
        elif kind == "function_call" and kept.get("call_id") in calls:
            out.append(_function_call(calls.pop(kept["call_id"])))
    if not text_sent and m.content.strip():
        out.insert(_first_call(out), _assistant_text(m.content, None))
    out += [_function_call(c) for c in calls.values()]
    return out


def _first_call(items: list[dict[str, Any]]) -> int:
    return next((i for i, item in enumerate(items) if item.get("type") == "function_call"), len(items))


def _assistant_text(text: str, phase: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
    if phase:
        item["phase"] = phase  # newer models want it back on every assistant message
    return item


def _function_call(call: ToolRequest) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call.request_id, "name": call.tool_name,
            "arguments": json.dumps(call.wire_arguments(), ensure_ascii=False)}


def to_responses_tools(tools: list[ToolSchema]) -> list[dict[str, Any]]:
    """Function tools are flat in the Responses API (no nested `function` object)."""
    return [{"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters,
             "strict": False} for t in tools]


def provider_state(kept: list[dict[str, Any]], model: str) -> ProviderState | None:
    """Only worth keeping when it holds something the next request needs: reasoning, or a message phase."""
    if any(k["type"] == "reasoning" or k.get("phase") for k in kept):
        return ProviderState(WIRE, model, kept)
    return None

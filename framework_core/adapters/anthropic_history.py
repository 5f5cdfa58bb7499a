"""The neutral history as Messages API content blocks: thinking blocks sent back verbatim, tool ids made
valid, and prompt-cache breakpoints on the system prompt, the tools and the moving tail of the conversation.

Thinking blocks (and `redacted_thinking`) are kept with their assistant turn in its provider state, as the
ordered list of blocks the API sent; they are sent back only to the same model, since their signatures are
bound to it. Another model (or another provider) gets the turn as plain text and tool calls.
"""

from __future__ import annotations

from typing import Any

from framework_core.adapters.tool_ids import ANTHROPIC_MAX, WireIds, wire_ids
from framework_core.lial_core import Message, ProviderState, ToolSchema

WIRE = "anthropic"
EPHEMERAL = {"type": "ephemeral"}
THINKING_TYPES = ("thinking", "redacted_thinking")


def provider_state(model: str, blocks: list[dict[str, Any]]) -> ProviderState | None:
    """What to keep of a finished reply's blocks: the order, the thinking blocks whole (only those with a
    signature: an unsigned one was cut and the API would refuse it), text whole, tool calls by position."""
    items: list[dict[str, Any]] = []
    call = 0
    for block in blocks:
        kind = block.get("type")
        if kind == "thinking" and block.get("signature"):
            items.append({"type": "thinking", "thinking": block.get("thinking", ""), "signature": block["signature"]})
        elif kind == "redacted_thinking" and block.get("data"):
            items.append({"type": "redacted_thinking", "data": block["data"]})
        elif kind == "text" and block.get("text"):
            items.append({"type": "text", "text": block["text"]})
        elif kind == "tool_use":
            items.append({"type": "tool_use", "call": call})
            call += 1
    if not any(i["type"] in THINKING_TYPES for i in items):
        return None  # nothing the neutral turn lacks
    return ProviderState(WIRE, model, items)


def _assistant_blocks(m: Message, index: int, ids: WireIds, model: str) -> list[dict[str, Any]]:
    def tool_use(j: int) -> dict[str, Any]:
        c = m.tool_calls[j]
        return {"type": "tool_use", "id": ids.call(index, j, c.request_id), "name": c.tool_name,
                "input": c.wire_arguments()}

    state = m.state_for(WIRE, model)
    if state:
        blocks: list[dict[str, Any]] = []
        for item in state:
            if item["type"] == "tool_use":
                if item["call"] < len(m.tool_calls):
                    blocks.append(tool_use(item["call"]))
            else:
                blocks.append(dict(item))
        return blocks
    blocks = [{"type": "text", "text": m.content}] if m.content.strip() else []
    return blocks + [tool_use(j) for j in range(len(m.tool_calls))]


def to_anthropic_messages(messages: list[Message], model: str = "") -> list[dict[str, Any]]:
    """Neutral history -> Messages API: tool results merge into one user turn (results first, then any
    text); consecutive turns of one role merge, as the API would."""
    out: list[dict[str, Any]] = []
    ids = wire_ids(messages, ANTHROPIC_MAX)

    def push(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": list(blocks)})

    for i, m in enumerate(messages):
        if m.role == "user":
            push("user", [{"type": "text", "text": m.content or "(empty)"}])
        elif m.role == "assistant":
            push("assistant", _assistant_blocks(m, i, ids, model))
        elif m.role == "tool_result":
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": ids.result(i, m.tool_call_id),
                                     "content": m.content or "(no output)"}
            if m.is_error:
                block["is_error"] = True
            push("user", [block])
    for msg in out:  # a tool_result after text in a user turn is refused: results first
        if msg["role"] == "user":
            msg["content"].sort(key=lambda b: 0 if b.get("type") == "tool_result" else 1)
    return out


def tail_needs_thinking(wire_messages: list[dict[str, Any]]) -> bool:
    """True when the turn in progress (a tool loop) has an assistant message whose tool calls are not
    preceded by a thinking block: with thinking on, the API refuses that."""
    for msg in reversed(wire_messages):
        blocks = msg["content"]
        if msg["role"] == "user":
            if any(b.get("type") != "tool_result" for b in blocks):
                return False  # the user's own message: the loop started here
            continue
        if any(b.get("type") == "tool_use" for b in blocks):
            return blocks[0].get("type") not in THINKING_TYPES
    return False


def add_cache_breakpoints(params: dict[str, Any]) -> None:
    """Mark the tools, the system prompt and the last two user turns: the newest breakpoint writes the whole
    prefix, the one before reads what the previous request wrote (the API allows four)."""
    tools = params.get("tools")
    if tools:
        tools[-1] = dict(tools[-1], cache_control=EPHEMERAL)
    system = params.get("system")
    if isinstance(system, str) and system:
        params["system"] = [{"type": "text", "text": system, "cache_control": EPHEMERAL}]
    users = [m for m in params["messages"] if m["role"] == "user"]
    for msg in users[-2:]:
        msg["content"][-1] = dict(msg["content"][-1], cache_control=EPHEMERAL)


def to_anthropic_tools(tools: list[ToolSchema]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]

"""Pure history rules: keep a conversation valid for every provider's API.

Each assistant tool call must be answered by exactly one tool result right after that assistant message;
orphan results are dropped; empty assistant messages are dropped.
"""

from __future__ import annotations

from framework_core.lial_core import Message, ToolResult

INTERRUPTED_TEXT = "interrupted by the user before this call ran or finished"


def repair(messages: list[Message]) -> tuple[list[Message], list[str]]:
    """Return a valid copy of `messages` and a note for each fix made."""
    out: list[Message] = []
    fixes: list[str] = []
    i = 0
    while i < len(messages):
        msg = messages[i]
        i += 1
        if msg.role == "tool_result":
            fixes.append(f"dropped a tool result with no matching call ({msg.tool_call_id})")
            continue
        if msg.role == "assistant" and not msg.content.strip() and not msg.tool_calls:
            fixes.append("dropped an empty assistant message")
            continue
        out.append(msg)
        if msg.role != "assistant" or not msg.tool_calls:
            continue
        wanted = [c.request_id for c in msg.tool_calls]
        answers: dict[str, Message] = {}
        while i < len(messages) and messages[i].role == "tool_result":
            res = messages[i]
            i += 1
            if res.tool_call_id in wanted and res.tool_call_id not in answers:
                answers[res.tool_call_id or ""] = res
            else:
                fixes.append(f"dropped a tool result with no matching call ({res.tool_call_id})")
        for call in msg.tool_calls:
            if call.request_id in answers:
                out.append(answers[call.request_id])
            else:
                fixes.append(f"answered unanswered call {call.tool_name} ({call.request_id}) as interrupted")
                out.append(Message.tool_result(ToolResult(call.request_id, call.tool_name, "declined_by_user",
                                                          {"message": INTERRUPTED_TEXT})))
    return out, fixes


def is_valid(messages: list[Message]) -> bool:
    return not repair(messages)[1]

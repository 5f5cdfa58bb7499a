"""Pure history rules: keep a conversation valid for every provider's API.

Each assistant tool call must be answered by exactly one tool result right after that assistant message;
orphan results are dropped; empty assistant messages are dropped.
"""

from __future__ import annotations

from collections.abc import Collection

from framework_core.lial_core import Message, ToolRequest, ToolResult, ToolStatus

INTERRUPTED_TEXT = "interrupted by the user before this call ran or finished"
#: for a transcript that ended (kill, crash, power loss) in the middle of a batch of calls
UNKNOWN_OUTCOME_TEXT = ("the session ended while this call was running, so its outcome is unknown; check its effects "
                        "before running it again")
NOT_RUN_TEXT = "not run: the session ended before this call started"


def _unanswered(call: ToolRequest, started: Collection[str] | None) -> tuple[Message, str]:
    status: ToolStatus = "error"
    if started is None:
        status, text, why = "declined_by_user", INTERRUPTED_TEXT, "interrupted"
    elif call.request_id in started:
        text, why = UNKNOWN_OUTCOME_TEXT, "running when the session ended"
    else:
        text, why = NOT_RUN_TEXT, "not started when the session ended"
    data = {"error_message": text} if status == "error" else {"message": text}
    result = ToolResult(call.request_id, call.tool_name, status, data)
    return Message.tool_result(result), f"answered unanswered call {call.tool_name} ({call.request_id}) as {why}"


def repair(messages: list[Message], started: Collection[str] | None = None) -> tuple[list[Message], list[str]]:
    """Return a valid copy of `messages` and a note for each fix made.

    `started`, given when rebuilding a transcript, names the calls that had begun running: an unanswered one
    among them was cut by the end of the session (its outcome unknown); the others never ran."""
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
        # Results answer calls in order; two calls with one id (a server that numbers calls per reply) each
        # keep their own result: a result goes to the first call with its id that has none yet.
        wanted = [c.request_id for c in msg.tool_calls]
        answers: dict[int, Message] = {}
        while i < len(messages) and messages[i].role == "tool_result":
            res = messages[i]
            i += 1
            slot = next((k for k, rid in enumerate(wanted) if rid == res.tool_call_id and k not in answers), None)
            if slot is not None:
                answers[slot] = res
            else:
                fixes.append(f"dropped a tool result with no matching call ({res.tool_call_id})")
        for k, call in enumerate(msg.tool_calls):
            if k in answers:
                out.append(answers[k])
            else:
                message, fix = _unanswered(call, started)
                fixes.append(fix)
                out.append(message)
    return out, fixes


def is_valid(messages: list[Message]) -> bool:
    return not repair(messages)[1]

"""What the turn loop says and records at the model's limits (the loop, `core/agent.py`, acts on them):

- Cut by the output limit: the text is kept and the user told what to do; a tool call cut mid-way is not
  run, and the model is told (in that call's result) that it hit the limit, so it can try smaller steps.
- Refused: the user is told; the refused text is not kept as a reply (the API would see it again).
- Paused (a long turn the API split): the turn is sent back as is and the model goes on.
- Too long for the context window (HTTP 400): the history is compacted and the request sent once more.

Pure: texts and records from explicit arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from framework_core.lial_core import LLMResponse, Message, ToolRequest, ToolResult

if TYPE_CHECKING:
    from framework_core.adapters.profiles import Capabilities

REFUSED_TEXT = "[the model declined to answer this request]"


def cut_notice(caps: "Capabilities", response: LLMResponse, in_call: bool) -> str:
    """What to tell the user about a reply the output limit (or the context window) cut."""
    limit = f"{caps.output_tokens:,} tokens" if caps.output_tokens else "the server's default"
    highest = caps.profile.max_output_tokens
    raise_hint = (f"raise max_tokens for this provider (the model allows up to {highest:,})"
                  if highest and (caps.output_tokens or 0) < highest else "ask for a shorter answer or smaller steps")
    if response.stop_reason == "model_context_window_exceeded":
        return "The reply filled the model's context window and was cut. Use /compact (or /clear), then ask again."
    if in_call:
        return (f"The reply hit the output limit ({limit}) while writing a tool call; that call was not run and the "
                f"model was told. If this repeats, {raise_hint}.")
    return f"The reply was cut by the output limit ({limit}). Send 'continue' for the rest, or {raise_hint}."


def cut_call_result(call: ToolRequest, limit: int | None) -> ToolResult:
    """The answer to a tool call the output limit cut mid-way: not run, and why."""
    size = f"output limit ({limit:,} tokens)" if limit else "output limit"
    return ToolResult(call.request_id, call.tool_name, "error", {"error_message": (
        f"Not run: your reply reached the {size} while writing this call, so its arguments are incomplete. "
        "Make the call again with smaller arguments (for example, write a large file in several parts), or "
        "say less before the call.")})


def without_refused_text(history: list[Message]) -> tuple[list[Message], list[Message]] | None:
    """The history with the refused reply (its last message) kept valid without its text, and the results that
    answer the calls it made as not run; None when the last message is not an assistant reply."""
    last = history[-1] if history else None
    if last is None or last.role != "assistant":
        return None
    kept = history[:-1] + [Message("assistant", REFUSED_TEXT, tool_calls=last.tool_calls, meta={"refused": True})]
    results = [Message.tool_result(ToolResult(call.request_id, call.tool_name, "error", {
        "error_message": "Not run: the reply that asked for it was refused."})) for call in last.tool_calls]
    return kept, results


def refusal_notice(response: LLMResponse) -> str:
    why = f" ({response.stop_detail})" if response.stop_detail else ""
    return f"The model declined to answer{why}. Rephrase the request, or try another model with /model."


def window_retry_notice(status: int | None, note: str) -> str:
    """What to say when the API refused a request as too long and the history was compacted (`note`)."""
    return (f"The conversation no longer fits the model's context window (the API answered HTTP {status}); "
            f"{note[0].lower() + note[1:]}. Sending it once more.")

"""What the turn loop does at the model's limits: a reply cut by the output limit, a refusal, a paused turn,
a conversation grown past the context window, and notes about the model's capabilities.

- Cut by the output limit: the text is kept and the user told what to do; a tool call cut mid-way is not
  run, and the model is told (in that call's result) that it hit the limit, so it can try smaller steps.
- Refused: the user is told; the refused text is not kept as a reply (the API would see it again).
- Paused (a long turn the API split): the turn is sent back as is and the model goes on.
- Too long for the context window (HTTP 400): the history is compacted and the request sent once more.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from framework_core.core.events import Notice
from framework_core.lial_core import LLMResponse, Message, ToolRequest, ToolResult

if TYPE_CHECKING:
    from framework_core.core.agent import Agent
    from framework_core.core.events import TurnOutcome

REFUSED_TEXT = "[the model declined to answer this request]"


def say_capability_notes(agent: "Agent") -> None:
    """Notes about the active model's profile (unknown model, retiring model, a setting not sent), once each."""
    for note in agent.caps.notes:
        if note not in agent.said_notes:
            agent.said_notes.add(note)
            agent.events(Notice("info", note))


def compact_if_needed(agent: "Agent") -> None:
    """Before a request (in the REPL, in -p and between tool rounds): compact when the context is near full."""
    from framework_core.core.compaction import maybe_compact

    note = maybe_compact(agent)
    if note:
        agent.events(Notice("info", note))


def reply_within_window(agent: "Agent", outcome: "TurnOutcome") -> LLMResponse | None:
    """One reply; a request refused as too long for the context window is compacted and sent once more."""
    from framework_core.adapters.errors import ContextTooLong
    from framework_core.core.compaction import compact

    try:
        return agent._one_reply(outcome)
    except ContextTooLong as exc:
        note = compact(agent, force=True)
        agent.events(Notice("warning", "The conversation no longer fits the model's context window (the API "
                                       f"answered HTTP {exc.status}); {note[0].lower() + note[1:]}. Sending it "
                                       "once more."))
        return agent._one_reply(outcome)


def after_reply(agent: "Agent", response: LLMResponse, outcome: "TurnOutcome") -> bool:
    """Act on how the reply ended. True when the model must be asked again (tool results, a paused turn), unless
    the user stopped the turn at a question (every call is answered; the next message says what to do)."""
    from framework_core.core.compaction import mark_request

    mark_request(agent)  # the API's count of this request covers the history up to here
    kind = response.stop_kind
    if kind == "refusal":
        _refused(agent, response)
        return False
    if kind == "pause":
        return True
    calls = response.tool_requests
    if kind == "length":
        _say_cut(agent, response, bool(calls))
        if calls:
            _run_with_cut_call(agent, response, outcome)
            return not outcome.stopped
        return False
    if calls:
        agent._run_tools(response, outcome)
        return not outcome.stopped
    return False


def _say_cut(agent: "Agent", response: LLMResponse, in_call: bool) -> None:
    caps = agent.caps
    limit = f"{caps.output_tokens:,} tokens" if caps.output_tokens else "the server's default"
    highest = caps.profile.max_output_tokens
    raise_hint = (f"raise max_tokens for this provider (the model allows up to {highest:,})"
                  if highest and (caps.output_tokens or 0) < highest else "ask for a shorter answer or smaller steps")
    if response.stop_reason == "model_context_window_exceeded":
        agent.events(Notice("warning", "The reply filled the model's context window and was cut. Use /compact "
                                       "(or /clear), then ask again."))
    elif in_call:
        agent.events(Notice("warning", f"The reply hit the output limit ({limit}) while writing a tool call; that "
                                       "call was not run and the model was told. If this repeats, "
                                       f"{raise_hint}."))
    else:
        agent.events(Notice("warning", f"The reply was cut by the output limit ({limit}). Send 'continue' for the "
                                       f"rest, or {raise_hint}."))


def cut_call_result(call: ToolRequest, limit: int | None) -> ToolResult:
    size = f"output limit ({limit:,} tokens)" if limit else "output limit"
    return ToolResult(call.request_id, call.tool_name, "error", {"error_message": (
        f"Not run: your reply reached the {size} while writing this call, so its arguments are incomplete. "
        "Make the call again with smaller arguments (for example, write a large file in several parts), or "
        "say less before the call.")})


def _run_with_cut_call(agent: "Agent", response: LLMResponse, outcome: "TurnOutcome") -> None:
    """Run the complete calls; the last one, which the limit cut, is answered without running."""
    *complete, cut = response.tool_requests
    if complete:
        agent._run_tools(replace(response, tool_requests=complete), outcome)
    result = cut_call_result(cut, agent.caps.output_tokens)
    agent.session.add(Message.tool_result(result))
    outcome.tool_results.append(result)


def _refused(agent: "Agent", response: LLMResponse) -> None:
    """Keep the turn valid without the refused text; answer any calls it made as not run."""
    history = agent.session.messages
    last = history[-1] if history else None
    if last is not None and last.role == "assistant":  # the refused reply, just added
        agent.session.replace(history[:-1] + [Message("assistant", REFUSED_TEXT, tool_calls=last.tool_calls,
                                                      meta={"refused": True})], "refusal: the refused text dropped")
        for call in last.tool_calls:
            agent.session.add(Message.tool_result(ToolResult(call.request_id, call.tool_name, "error", {
                "error_message": "Not run: the reply that asked for it was refused."})))
    why = f" ({response.stop_detail})" if response.stop_detail else ""
    agent.events(Notice("warning", f"The model declined to answer{why}. Rephrase the request, or try another "
                                   "model with /model."))

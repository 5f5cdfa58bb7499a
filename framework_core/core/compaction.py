"""Context limits: token report, trimming old tool output, summarising older turns through the model.

One measure decides everything (`context_used`): what the next request will put in the context window,
from the API's own count of the last request (cached tokens included) plus an estimate of what was added
since; an estimate of the whole when no count is known. The trigger and `compact` both use it, so whenever
compaction is triggered it does something. It runs before each request (between tool rounds and in `-p`
too), on /compact, and when the API refuses a request as too long.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from framework_core.lial_core import Message, Role, StreamDone

if TYPE_CHECKING:
    from framework_core.core.agent import Agent

TRIGGER = 0.80  # compact when the next request would fill this share of the context window
KEEP_RECENT = 6  # messages never trimmed
TOOL_KEEP_CHARS = 1200
SUMMARY_TOOL_CHARS = 2000  # of each tool result, in the text sent for a summary
SUMMARY_PROMPT = ("Summarise the conversation so far for your own later use: the user's goals, decisions made, "
                  "files and commands involved, results, and open tasks. Be concise and factual; no preamble.")


def estimate_text_tokens(text: str) -> int:
    return len(text) // 4


def estimate_tokens(messages: list[Message]) -> int:
    return sum(len(m.content) + sum(len(json.dumps(c.wire_arguments(), default=str)) for c in m.tool_calls)
               for m in messages) // 4


def _estimate_request(agent: "Agent") -> int:
    system = agent.dcm.build_system_prompt(agent.persona_id)
    tools = json.dumps([s.__dict__ for s in agent.teps.registry.schemas()], default=str)
    return estimate_text_tokens(system) + estimate_text_tokens(tools) + estimate_tokens(agent.session.messages)


def mark_request(agent: "Agent") -> None:
    """Remember how many messages the last counted request (and its reply) covered."""
    agent.context_mark = len(agent.session.messages)


def context_used(agent: "Agent") -> int:
    """Tokens the next request will take: the last request's count (prompt, cached included, and reply)
    plus an estimate of the messages added since, or an estimate of everything if that is more (a server
    may report no usage, and after compaction the last count no longer describes the history)."""
    last = agent.session.last_usage
    mark = agent.context_mark
    estimate = _estimate_request(agent)
    if mark is None or mark > len(agent.session.messages):
        return estimate
    counted = last.context_tokens + last.output_tokens + estimate_tokens(agent.session.messages[mark:])
    return max(counted, estimate)


def threshold(agent: "Agent") -> int:
    """Compact above this: the trigger share of the window, leaving room for the reply where that is less."""
    caps = agent.caps
    window = caps.context_window
    room = window - (caps.output_tokens or 0)
    return int(max(window * TRIGGER / 2, min(window * TRIGGER, room)))


def usage_report(agent: "Agent") -> str:
    """Tokens per turn and in total (cache reads and writes apart, cost where prices are known), then the
    context the last request used."""
    from framework_core.core.accounting import turns_table

    caps = agent.caps
    u, last = agent.session.usage, agent.session.last_usage
    used, window = context_used(agent), caps.context_window
    lines = turns_table(agent.session.ledger, u, caps.prices)
    lines.append(f"Last request: {last.context_tokens:,} in ({last.cache_read_tokens:,} from the cache) / "
                 f"{last.output_tokens:,} out · context {used:,} of {window:,} ({100 * used / window:.0f}%; "
                 f"compacts at {threshold(agent):,})")
    cost = caps.prices.cost(u)
    if cost is not None:
        p = caps.prices
        lines.append(f"Estimated cost: ${cost:.4f} in all (at ${p.input:g}/M in, ${p.output:g}/M out, "
                     f"${p.read_rate():g}/M cache reads, ${p.write_rate():g}/M cache writes)")
    else:
        lines.append(f"Cost: unknown (no prices for {agent.provider.model}: set price_input_per_mtok / "
                     "price_output_per_mtok in its llm_settings entry)")
    return "\n".join(lines)


def trim_tool_output(messages: list[Message], keep_recent: int = KEEP_RECENT) -> tuple[list[Message], int]:
    """Shorten large tool results older than the last `keep_recent` messages. Pure; returns (messages, count)."""
    out, trimmed = [], 0
    cutoff = len(messages) - keep_recent
    for i, m in enumerate(messages):
        if i < cutoff and m.role == "tool_result" and len(m.content) > 2 * TOOL_KEEP_CHARS:
            half = TOOL_KEEP_CHARS // 2
            text = (m.content[:half] + f"\n[… {len(m.content) - 2 * half:,} characters of old tool output trimmed "
                    "to save context …]\n" + m.content[-half:])
            out.append(Message(m.role, text, m.tool_call_id, m.tool_name, is_error=m.is_error, meta={"trimmed": True}))
            trimmed += 1
        else:
            out.append(m)
    return out, trimmed


def split_for_summary(messages: list[Message], keep_turns: int = 2) -> int:
    """Index where the kept recent part starts: the start of the `keep_turns`-th last user turn (fewer turns
    when there are not that many, so a long first turn still leaves the turns before it to summarise)."""
    starts = [i for i, m in enumerate(messages) if m.role == "user"]
    for keep in range(keep_turns, 0, -1):
        if len(starts) > keep:
            return starts[-keep]
    return 0


def as_text(messages: list[Message]) -> list[Message]:
    """Tool turns written out as text, consecutive turns of one role merged: a summary request then needs no
    tools, cannot call any, and suits every API (including strict user/assistant alternation)."""
    out: list[Message] = []
    role: Role
    for m in messages:
        if m.role == "tool_result":
            body = m.content if len(m.content) <= SUMMARY_TOOL_CHARS else m.content[:SUMMARY_TOOL_CHARS] + " […]"
            role, text = "user", f"[result of {m.tool_name or 'a tool'}: {body}]"
        else:
            calls = "\n".join(f"[called {c.tool_name} with {json.dumps(c.parameters, ensure_ascii=False)}]"
                              for c in m.tool_calls)
            role, text = ("user" if m.role == "user" else "assistant"), "\n".join(x for x in (m.content, calls) if x)
        if not text.strip():
            continue
        if out and out[-1].role == role:
            out[-1] = Message(role, out[-1].content + "\n\n" + text)
        else:
            out.append(Message(role, text))
    if out and out[0].role != "user":
        out.insert(0, Message("user", "[earlier conversation]"))
    return out


def summarise(agent: "Agent", older: list[Message]) -> str:
    from framework_core.adapters.retry import stream_with_retry

    system = agent.dcm.build_system_prompt(agent.persona_id)
    request = as_text(older)
    if request and request[-1].role == "user":
        request[-1] = Message("user", request[-1].content + "\n\n" + SUMMARY_PROMPT)
    else:
        request.append(Message("user", SUMMARY_PROMPT))
    from framework_core.core.events import ModelRequestStarted, Notice, RetryScheduled

    def on_retry(attempt: int, max_attempts: int, delay: float, reason: str) -> None:
        agent.events(RetryScheduled(attempt, max_attempts, delay, reason))

    agent.events(Notice("info", f"Summarising {len(older)} older message(s) to free context (Ctrl-C stops)…"))
    agent.events(ModelRequestStarted(agent.provider_name, agent.provider.model))  # the spinner, with seconds
    stream = stream_with_retry(lambda: agent.adapter.stream(request, [], system), agent.config.retry, on_retry)
    for event in stream:
        if isinstance(event, StreamDone):
            usage = event.response.usage
            agent.session.record_usage(usage, side_request=True)  # paid for: counted in /tokens
            agent.events(Notice("info", f"Summary received ({usage.input_tokens:,} input + {usage.output_tokens:,} "
                                        "output tokens, counted in /tokens)."))
            return event.response.conversation.strip()
    return ""


def compact(agent: "Agent", *, force: bool = False) -> str:
    session = agent.session
    messages, trimmed = trim_tool_output(session.messages)
    notes = []
    if trimmed:
        session.replace(messages, f"trimmed {trimmed} old tool outputs")
        agent.context_mark = None  # the last count no longer describes the history
        notes.append(f"trimmed {trimmed} old tool output(s)")
    if force or context_used(agent) >= threshold(agent):
        cut = split_for_summary(messages)
        if cut == 0:
            notes.append("too little history to summarise")
        else:
            summary = summarise(agent, messages[:cut])
            if summary:
                head = Message("user", f"[Summary of the earlier conversation]\n{summary}", meta={"summary": True})
                session.replace([head] + messages[cut:], "summarised older turns")
                agent.context_mark = None
                notes.append(f"summarised {cut} older message(s)")
    return ("Compacted: " + "; ".join(notes)) if notes else "Nothing to compact."


def maybe_compact(agent: "Agent") -> str | None:
    """Compact when the next request would pass the threshold. A note when something was done, or (once,
    until compaction works again) when nothing could be."""
    if context_used(agent) < threshold(agent):
        return None
    try:
        note = compact(agent)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # compaction must never break the session
        note = f"Could not compact the history ({exc}); use /clear if requests start failing."
    if "summarised" in note or "trimmed" in note:
        agent.context_full_said = False
        return note
    if agent.context_full_said:
        return None
    agent.context_full_said = True
    if note.startswith("Could not"):
        return note
    return (f"The context is {100 * context_used(agent) // agent.caps.context_window}% full and there is no older "
            "history to summarise; /clear starts afresh.")

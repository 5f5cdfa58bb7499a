"""Context limits: token report, trimming old tool output, summarising older turns through the model."""

from __future__ import annotations

from typing import TYPE_CHECKING

from framework_core.lial_core import Message, StreamDone

if TYPE_CHECKING:
    from framework_core.core import Agent

TRIGGER = 0.80  # compact when the last request used this share of the context window
KEEP_RECENT = 6  # messages never trimmed
TOOL_KEEP_CHARS = 1200
SUMMARY_PROMPT = ("Summarise the conversation so far for your own later use: the user's goals, decisions made, "
                  "files and commands involved, results, and open tasks. Be concise and factual; no preamble.")


def estimate_tokens(messages: list[Message]) -> int:
    return sum(len(m.content) + sum(len(str(c.parameters)) for c in m.tool_calls) for m in messages) // 4


def context_used(agent: "Agent") -> int:
    last = agent.session.last_usage
    return max(last.context_tokens + last.output_tokens, estimate_tokens(agent.session.messages))


def usage_report(agent: "Agent") -> str:
    caps = agent.caps
    u, last = agent.session.usage, agent.session.last_usage
    window = caps.context_window
    lines = [f"Session: {u.input_tokens:,} input + {u.output_tokens:,} output tokens"
             + (f" · cache: {u.cache_read_tokens:,} read, {u.cache_write_tokens:,} written"
                if u.cache_read_tokens or u.cache_write_tokens else ""),
             f"Last request: {last.context_tokens:,} in ({last.cache_read_tokens:,} from the cache) / "
             f"{last.output_tokens:,} out · context {context_used(agent):,} of {window:,} "
             f"({100 * context_used(agent) / window:.0f}%)"]
    cost = caps.prices.cost(u)
    if cost is not None:
        p = caps.prices
        lines.append(f"Estimated cost: ${cost:.4f} (at ${p.input}/M in, ${p.output}/M out, "
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
    """Index where the kept recent part starts: the start of the `keep_turns`-th last user turn."""
    starts = [i for i, m in enumerate(messages) if m.role == "user"]
    if len(starts) <= keep_turns:
        return 0
    return starts[-keep_turns]


def summarise(agent: "Agent", older: list[Message]) -> str:
    system = agent.dcm.build_system_prompt(agent.persona_id)
    request = older + [Message("user", SUMMARY_PROMPT)]
    for event in agent.adapter.stream(request, [], system):
        if isinstance(event, StreamDone):
            return event.response.conversation.strip()
    return ""


def compact(agent: "Agent", *, force: bool = False) -> str:
    session = agent.session
    messages, trimmed = trim_tool_output(session.messages)
    notes = []
    if trimmed:
        session.replace(messages, f"trimmed {trimmed} old tool outputs")
        notes.append(f"trimmed {trimmed} old tool output(s)")
    window = agent.caps.context_window
    if force or estimate_tokens(messages) > TRIGGER * window:
        cut = split_for_summary(messages)
        if cut == 0:
            notes.append("too little history to summarise")
        else:
            summary = summarise(agent, messages[:cut])
            if summary:
                head = Message("user", f"[Summary of the earlier conversation]\n{summary}", meta={"summary": True})
                session.replace([head] + messages[cut:], "summarised older turns")
                notes.append(f"summarised {cut} older message(s)")
    return ("Compacted: " + "; ".join(notes)) if notes else "Nothing to compact."


def maybe_compact(agent: "Agent") -> str | None:
    if context_used(agent) < TRIGGER * agent.caps.context_window:
        return None
    try:
        return compact(agent)
    except Exception as exc:  # compaction must never break the session
        return f"Could not compact the history ({exc}); use /clear if requests start failing."

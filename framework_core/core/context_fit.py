"""The last guard before a request: a history too long for the active model's context window is cut in the
request (oldest tool output first), so a switch to a model with a smaller window never wedges a session.

Only what this request sends is cut; the session keeps everything (a switch back gets it all again, and
/compact can summarise it for good). In order, until the request fits: tool results, oldest first, are
shortened to their head and tail and lose their images; long tool-call arguments are folded; the oldest
turns are left out, whole, so the history stays valid for every API. The turn in progress is never left out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from framework_core.lial_core import Message, ToolSchema

if TYPE_CHECKING:
    from framework_core.core.agent import Agent

CHARS_PER_TOKEN = 3  # what a cut aims at: an estimate on the safe side for code and JSON
TRIGGER_CHARS_PER_TOKEN = 4  # whether to cut at all: the estimate compaction uses, so the two agree
IMAGE_TOKENS = 1_600  # what one image costs at most, roughly, on either API
MESSAGE_TOKENS = 8  # per-message overhead of the wire formats
MARGIN = 0.05  # of the window, for the estimate's error
KEEP_CHARS = 600  # of a shortened tool result: head and tail
FOLD_CHARS = 400  # longer strings in tool-call arguments are folded


@dataclass
class Fitted:
    messages: list[Message]
    shortened: int = 0  # tool results cut to their head and tail
    folded: int = 0  # tool calls whose long arguments were folded
    dropped: int = 0  # oldest messages left out


def message_tokens(m: Message, chars_per_token: int = CHARS_PER_TOKEN) -> int:
    calls = sum(len(json.dumps(c.wire_arguments(), ensure_ascii=False, default=str)) for c in m.tool_calls)
    return (len(m.content) + calls) // chars_per_token + MESSAGE_TOKENS + IMAGE_TOKENS * len(m.images)


def fixed_tokens(system: str, tools: list[ToolSchema]) -> int:
    schemas = json.dumps([[t.name, t.description, t.parameters] for t in tools], ensure_ascii=False, default=str)
    return (len(system) + len(schemas)) // CHARS_PER_TOKEN


def fit(messages: list[Message], budget: int) -> Fitted:
    """`messages` cut until their estimate is within `budget` tokens (or nothing more can be cut). Nothing is
    cut while the estimate compaction uses says they fit: compaction acts first, this only when it could not."""
    done = Fitted(list(messages))
    if sum(message_tokens(m, TRIGGER_CHARS_PER_TOKEN) for m in messages) <= budget:
        return done
    sizes = [message_tokens(m) for m in messages]
    out = list(messages)
    for i, m in sorted(enumerate(out), key=lambda p: (bool(p[1].meta.get("trimmed")), p[0])):
        if sum(sizes) <= budget:
            break
        if m.role == "tool_result" and (len(m.content) > 2 * KEEP_CHARS + 200 or m.images):
            out[i] = replace(m, content=_shorten(m.content), images=[], meta={**m.meta, "trimmed": True})
            sizes[i], done.shortened = message_tokens(out[i]), done.shortened + 1
    for i, m in enumerate(out):
        if sum(sizes) <= budget:
            break
        folded = [replace(c, parameters=_fold(c.parameters), icerc_full_text=_fold(c.icerc_full_text))
                  for c in m.tool_calls]
        if m.tool_calls and folded != m.tool_calls:
            out[i] = replace(m, tool_calls=folded)
            sizes[i], done.folded = message_tokens(out[i]), done.folded + 1
    while sum(sizes) > budget:
        starts = [i for i, m in enumerate(out) if m.role == "user" and i > 0]
        if not starts:
            break  # only the turn in progress is left
        cut = starts[0]
        out, sizes, done.dropped = out[cut:], sizes[cut:], done.dropped + cut
    done.messages = out
    return done


def _shorten(text: str) -> str:
    if len(text) <= 2 * KEEP_CHARS:
        return text
    left = len(text) - 2 * KEEP_CHARS
    return (text[:KEEP_CHARS] + f"\n[… {left:,} characters of this tool output left out of this request to fit "
            "the model's context window …]\n" + text[-KEEP_CHARS:])


def _fold(value: Any) -> Any:
    if isinstance(value, str) and len(value) > FOLD_CHARS:
        return value[:FOLD_CHARS] + f"[… {len(value) - FOLD_CHARS:,} characters left out of this request]"
    if isinstance(value, dict):
        return {k: _fold(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fold(v) for v in value]
    return value


def fit_request(agent: "Agent", messages: list[Message], system: str, tools: list[ToolSchema]) -> list[Message]:
    """What the next request sends of `messages`; says once per change what had to be left out."""
    from framework_core.core.events import Notice

    caps = agent.caps
    window = caps.context_window
    fixed = fixed_tokens(system, tools)
    budget = int(window * (1 - MARGIN)) - (caps.output_tokens or 0) - fixed
    if fixed > window // 2:  # the prompt and tools, not the reply's reserve, are what crowd the history out
        _say_too_many_tools(agent, fixed, window, tools)
    fitted = fit(messages, max(budget, window // 4))
    parts = [f"{n} {what}" for n, what in ((fitted.shortened, "tool output(s) shortened"),
                                          (fitted.folded, "long tool argument(s) folded"),
                                          (fitted.dropped, "oldest message(s) left out")) if n]
    note = (f"The history no longer fits {agent.provider.model}'s context window ({window:,} tokens), so this "
            f"request sends less of it: {', '.join(parts)}. The session keeps everything; /compact summarises "
            "the older turns.") if parts else ""
    if note and note != agent.window_fit_note:
        agent.events(Notice("warning", note))
    agent.window_fit_note = note
    return fitted.messages


def _say_too_many_tools(agent: "Agent", fixed: int, window: int, tools: list[ToolSchema]) -> None:
    """The system prompt and the tool definitions alone leave too little of the window: say what to change, once
    per model and tool set (the request still goes out: the estimate is on the safe side)."""
    from collections import Counter

    from framework_core.core.events import Notice

    servers = Counter(t.name.split("__")[1] for t in tools if t.name.startswith("mcp__") and t.name.count("__") >= 2)
    brought = ", ".join(f"{name} {n}" for name, n in servers.most_common(5))
    note = (f"The system prompt and the {len(tools)} tool definitions take about {fixed:,} tokens of "
            f"{agent.provider.model}'s {window:,}-token window, leaving too little for the conversation; the "
            "model may refuse the request. "
            + (f"MCP servers bring most tools ({brought}): turn some off (disabled: true in their config) or "
               if servers else "")
            + "use a model with a larger window (/model), or set its context_window if the profile is wrong.")
    if note not in agent.said_notes:
        agent.said_notes.add(note)
        agent.events(Notice("warning", note))

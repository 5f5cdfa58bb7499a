"""The last guard before a request: a history too long for the active model's context window is cut in the
request (oldest tool output first), so a switch to a model with a smaller window never wedges a session.

Only what this request sends is cut; the session keeps everything (a switch back gets it all again, and
/compact can summarise it for good). In order, until the request fits: tool results, oldest first, are
shortened to their head and tail and lose their images; long tool-call arguments are folded; the oldest
turns are left out, whole, so the history stays valid for every API. The turn in progress is never left out.
Pure: `fit_request` returns what to send and what to say; the turn loop (`core/agent.py`) says it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from framework_core.estimate import CHARS_PER_TOKEN, SAFE_CHARS_PER_TOKEN, message_tokens, request_tokens
from framework_core.lial_core import Message, ToolSchema

if TYPE_CHECKING:
    from framework_core.adapters.profiles import Capabilities

MARGIN = 0.05  # of the window, for the estimate's error
KEEP_CHARS = 600  # of a shortened tool result: head and tail
FOLD_CHARS = 400  # longer strings in tool-call arguments are folded
LEFT_OUT = "left out of this request to fit the model's context window; the session keeps it"


@dataclass
class Fitted:
    messages: list[Message]
    shortened: int = 0  # tool results cut to their head and tail
    folded: int = 0  # tool calls whose long arguments were folded
    dropped: int = 0  # oldest messages left out


@dataclass(frozen=True)
class Request:
    """What the next request sends of the history, and what to tell the user about it (empty: nothing)."""

    messages: list[Message]
    cut_note: str = ""  # what had to be left out; the loop says it once per change
    tools_note: str = ""  # the prompt and tool definitions alone crowd the window; said once per text


def fit(messages: list[Message], budget: int) -> Fitted:
    """`messages` cut until their estimate is within `budget` tokens (or nothing more can be cut). Nothing is
    cut while the estimate compaction uses says they fit: compaction acts first, this only when it could not."""
    done = Fitted(list(messages))
    if sum(message_tokens(m, CHARS_PER_TOKEN) for m in messages) <= budget:
        return done
    sizes = [message_tokens(m, SAFE_CHARS_PER_TOKEN) for m in messages]
    out = list(messages)
    for i, m in sorted(enumerate(out), key=lambda p: (bool(p[1].meta.get("trimmed")), p[0])):
        if sum(sizes) <= budget:
            break
        if m.role == "tool_result" and (len(m.content) > 2 * KEEP_CHARS + 200 or m.images):
            out[i] = replace(m, content=_shorten(m.content), images=[], meta={**m.meta, "trimmed": True})
            sizes[i], done.shortened = message_tokens(out[i], SAFE_CHARS_PER_TOKEN), done.shortened + 1
    for i, m in enumerate(out):
        if sum(sizes) <= budget:
            break
        folded = [replace(c, parameters=_fold(c.parameters), icerc_full_text=_fold(c.icerc_full_text))
                  for c in m.tool_calls]
        if m.tool_calls and folded != m.tool_calls:
            out[i] = replace(m, tool_calls=folded)
            sizes[i], done.folded = message_tokens(out[i], SAFE_CHARS_PER_TOKEN), done.folded + 1
    while sum(sizes) > budget:
        starts = [i for i, m in enumerate(out) if m.role == "user" and i > 0]
        if not starts:
            break  # only the turn in progress is left
        cut = starts[0]
        out, sizes, done.dropped = out[cut:], sizes[cut:], done.dropped + cut
    done.messages = out
    return done


def _shorten(text: str) -> str:
    """Head and tail by the one cutter (tools/result_budget.py); the session keeps the whole."""
    from framework_core.tools.result_budget import bound

    return bound(text, 2 * KEEP_CHARS, note=LEFT_OUT).text


def _fold(value: Any) -> Any:
    if isinstance(value, str) and len(value) > FOLD_CHARS:
        return value[:FOLD_CHARS] + f"[… {len(value) - FOLD_CHARS:,} characters left out of this request]"
    if isinstance(value, dict):
        return {k: _fold(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fold(v) for v in value]
    return value


def fit_request(messages: list[Message], system: str, tools: list[ToolSchema], caps: "Capabilities",
                model: str) -> Request:
    """What the next request to `model` sends of `messages`, and the notes to say about it."""
    window = caps.context_window
    fixed = request_tokens(system, tools, SAFE_CHARS_PER_TOKEN)
    budget = int(window * (1 - MARGIN)) - (caps.output_tokens or 0) - fixed
    # the prompt and tools, not the reply's reserve, are what crowd the history out
    tools_note = too_many_tools(fixed, window, tools, model) if fixed > window // 2 else ""
    fitted = fit(messages, max(budget, window // 4))
    parts = [f"{n} {what}" for n, what in ((fitted.shortened, "tool output(s) shortened"),
                                          (fitted.folded, "long tool argument(s) folded"),
                                          (fitted.dropped, "oldest message(s) left out")) if n]
    note = (f"The history no longer fits {model}'s context window ({window:,} tokens), so this request sends "
            f"less of it: {', '.join(parts)}. The session keeps everything; /compact summarises the older "
            "turns.") if parts else ""
    return Request(fitted.messages, note, tools_note)


def too_many_tools(fixed: int, window: int, tools: list[ToolSchema], model: str) -> str:
    """The system prompt and the tool definitions alone leave too little of the window: what to change (the
    request still goes out: the estimate is on the safe side)."""
    servers = Counter(t.name.split("__")[1] for t in tools if t.name.startswith("mcp__") and t.name.count("__") >= 2)
    brought = ", ".join(f"{name} {n}" for name, n in servers.most_common(5))
    return (f"The system prompt and the {len(tools)} tool definitions take about {fixed:,} tokens of "
            f"{model}'s {window:,}-token window, leaving too little for the conversation; the model may refuse "
            "the request. "
            + (f"MCP servers bring most tools ({brought}): turn some off (disabled: true in their config) or "
               if servers else "")
            + "use a model with a larger window (/model), or set its context_window if the profile is wrong.")

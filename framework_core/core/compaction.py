"""Context limits: token report, trimming old tool output, summarising older turns through the model.

One measure decides everything (`context_used`): what the next request will put in the context window,
from the API's own count of the last request (cached tokens included) plus an estimate of what was added
since; an estimate of the whole when no count is known. The trigger and `compact` both use it, so whenever
compaction is triggered it does something. It runs before each request (between tool rounds and in `-p`
too), on /compact, and when the API refuses a request as too long.

`Compactor` keeps the measure's state for one conversation; what only the turn loop knows (the session in
force, the active model, the fixed part of a request, the summary request it makes) it is given as callables.
The rest here is pure.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Callable

from framework_core.estimate import messages_tokens
from framework_core.lial_core import Message, Role

if TYPE_CHECKING:
    from framework_core.adapters.profiles import Capabilities
    from framework_core.core.session import MessageManager
    from framework_core.tools.result_budget import Saver

TRIGGER = 0.80  # compact when the next request would fill this share of the context window
KEEP_RECENT = 6  # messages never trimmed
TOOL_KEEP_CHARS = 1200  # of an old tool result: its head and tail, about half each
TRIM_MARK_CHARS = 300  # and the marker that says what was left out and where the whole is
SUMMARY_TOOL_CHARS = 2000  # of each tool result, in the text sent for a summary
SUMMARY_PROMPT = ("Summarise the conversation so far for your own later use: the user's goals, decisions made, "
                  "files and commands involved, results, and open tasks. Be concise and factual; no preamble.")
TRIMMED = "old tool output trimmed to save context"


class Compactor:
    """One conversation's context measure and compaction."""

    def __init__(self, *, session: Callable[[], "MessageManager"], caps: Callable[[], "Capabilities"],
                 fixed_tokens: Callable[[], int], summarise: Callable[[list[Message]], str],
                 saver: Callable[[], "Saver | None"] = lambda: None) -> None:
        self._session, self._caps, self._fixed, self._summarise, self._saver = (session, caps, fixed_tokens,
                                                                                summarise, saver)
        self.mark: int | None = None  # messages the last counted request (and its reply) covered
        self._full_said = False  # "nothing to compact" was said; again only after compaction worked
        self._percent: tuple[tuple, float] | None = None

    def counted(self) -> None:
        """The API's count of the request just answered covers the history up to here."""
        self.mark = len(self._session().messages)

    def reset(self) -> None:
        """A new conversation: no count describes it yet."""
        self.mark, self._full_said = None, False

    def estimate(self) -> int:
        """An estimate of the whole next request: the fixed part and every message."""
        return self._fixed() + messages_tokens(self._session().messages)

    def used(self) -> int:
        """Tokens the next request will take: the last request's count (prompt, cached included, and reply)
        plus an estimate of the messages added since, or an estimate of everything if that is more (a server
        may report no usage, and after compaction the last count no longer describes the history)."""
        session = self._session()
        estimate = self.estimate()
        if self.mark is None or self.mark > len(session.messages):
            return estimate
        last = session.last_usage
        return max(last.context_tokens + last.output_tokens + messages_tokens(session.messages[self.mark:]),
                   estimate)

    def threshold(self) -> int:
        return threshold(self._caps())

    def percent(self) -> float:
        """Percent of the window the next request takes, computed again only when the conversation or the model
        changed: the status line redraws on every key."""
        session, window = self._session(), self._caps().context_window
        last = session.last_usage
        key = (id(session), len(session.messages), self.mark, last.context_tokens, last.output_tokens, window)
        if self._percent is None or self._percent[0] != key:
            self._percent = (key, 100 * self.used() / window if window else 0.0)
        return self._percent[1]

    def report(self, model: str) -> str:
        return usage_report(self._session(), self._caps(), self.used(), model)

    def compact(self, *, force: bool = False) -> str:
        """Trim old tool output; summarise the older turns when still over the threshold (or `force`)."""
        session = self._session()
        messages, trimmed = trim_tool_output(session.messages, save=self._saver())
        notes = []
        if trimmed:
            session.replace(messages, f"trimmed {trimmed} old tool outputs")
            self.mark = None  # the last count no longer describes the history
            notes.append(f"trimmed {trimmed} old tool output(s)")
        if force or self.used() >= self.threshold():
            cut = split_for_summary(messages)
            if cut == 0:
                notes.append("too little history to summarise")
            else:
                summary = self._summarise(messages[:cut])
                if summary:
                    head = Message("user", f"[Summary of the earlier conversation]\n{summary}", meta={"summary": True})
                    session.replace([head] + messages[cut:], "summarised older turns")
                    self.mark = None
                    notes.append(f"summarised {cut} older message(s)")
        return ("Compacted: " + "; ".join(notes)) if notes else "Nothing to compact."

    def maybe_compact(self) -> str | None:
        """Compact when the next request would pass the threshold. A note when something was done, or (once,
        until compaction works again) when nothing could be."""
        if self.used() < self.threshold():
            return None
        try:
            note = self.compact()
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # compaction must never break the session
            note = f"Could not compact the history ({exc}); use /clear if requests start failing."
        if "summarised" in note or "trimmed" in note:
            self._full_said = False
            return note
        if self._full_said:
            return None
        self._full_said = True
        if note.startswith("Could not"):
            return note
        return (f"The context is {100 * self.used() // self._caps().context_window}% full and there is no older "
                "history to summarise; /clear starts afresh.")


def threshold(caps: "Capabilities") -> int:
    """Compact above this: the trigger share of the window, leaving room for the reply where that is less."""
    window = caps.context_window
    room = window - (caps.output_tokens or 0)
    return int(max(window * TRIGGER / 2, min(window * TRIGGER, room)))


def usage_report(session: "MessageManager", caps: "Capabilities", used: int, model: str) -> str:
    """Tokens per turn and in total (cache reads and writes apart, cost where prices are known), then the
    context the last request used (`used`: the measure above)."""
    from framework_core.core.accounting import turns_table

    u, last = session.usage, session.last_usage
    window = caps.context_window
    lines = turns_table(session.ledger, u, caps.prices)
    lines.append(f"Last request: {last.context_tokens:,} in ({last.cache_read_tokens:,} from the cache) / "
                 f"{last.output_tokens:,} out · context {used:,} of {window:,} ({100 * used / window:.0f}%; "
                 f"compacts at {threshold(caps):,})")
    cost = caps.prices.cost(u)
    if cost is not None:
        p = caps.prices
        lines.append(f"Estimated cost: ${cost:.4f} in all (at ${p.input:g}/M in, ${p.output:g}/M out, "
                     f"${p.read_rate():g}/M cache reads, ${p.write_rate():g}/M cache writes)")
    else:
        lines.append(f"Cost: unknown (no prices for {model}: set price_input_per_mtok / "
                     "price_output_per_mtok in its llm_settings entry)")
    return "\n".join(lines)


def trim_tool_output(messages: list[Message], keep_recent: int = KEEP_RECENT,
                     save: "Saver | None" = None) -> tuple[list[Message], int]:
    """Shorten large tool results older than the last `keep_recent` messages to their head and tail (the one
    cutter, `tools/result_budget.py`; the whole saved with `save` for a later readFile). Returns (messages,
    count)."""
    from framework_core.tools.result_budget import bound

    out, trimmed = [], 0
    cutoff = len(messages) - keep_recent
    for i, m in enumerate(messages):
        if i < cutoff and m.role == "tool_result" and len(m.content) > 2 * TOOL_KEEP_CHARS:
            text = bound(m.content, TOOL_KEEP_CHARS + TRIM_MARK_CHARS, save, note=TRIMMED).text
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


def summary_request(older: list[Message]) -> list[Message]:
    """What is sent to have `older` summarised: the turns as text, then the request to summarise."""
    request = as_text(older)
    if request and request[-1].role == "user":
        request[-1] = Message("user", request[-1].content + "\n\n" + SUMMARY_PROMPT)
    else:
        request.append(Message("user", SUMMARY_PROMPT))
    return request

"""Tool-call ids as the target API accepts them.

A history can hold ids another API produced (`functions.x:0`, `call_0` repeated in every turn, ids longer
than 40 characters) or, from a server that numbers calls per reply, the same id twice. Before a history is
sent, every call gets an id valid for the target API (pattern `^[a-zA-Z0-9_-]+$`, a length limit, unique
within the conversation) and every result the id of the call it answers. Results are paired with calls by
position in the turn (the history keeps one result per call, in call order), so duplicates stay paired.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from framework_core.lial_core import Message, ToolRequest

INVALID = re.compile(r"[^a-zA-Z0-9_-]")
OPENAI_MAX = 40
ANTHROPIC_MAX = 64


@dataclass
class WireIds:
    """Ids to send: `calls[i]` for the calls of assistant message i, `results[j]` for tool result j."""

    calls: dict[int, list[str]] = field(default_factory=dict)
    results: dict[int, str] = field(default_factory=dict)

    def call(self, message_index: int, call_index: int, fallback: str) -> str:
        ids = self.calls.get(message_index) or []
        return ids[call_index] if call_index < len(ids) else fallback

    def result(self, message_index: int, fallback: str | None) -> str:
        return self.results.get(message_index, fallback or "")


def valid_id(raw: str, max_len: int, used: set[str], n: int) -> str:
    """`raw` made valid and unused: invalid characters become '_', the length is capped, and a clash gets a
    short hash of the original id and its position, so the same history always maps the same way."""
    base = INVALID.sub("_", raw or "")[:max_len] or f"call_{n}"
    if base not in used:
        return base
    digest = hashlib.sha1(f"{raw}#{n}".encode()).hexdigest()[:8]
    candidate = f"{base[:max_len - 9]}_{digest}"
    k = 0
    while candidate in used:
        k += 1
        candidate = f"{base[:max_len - 12]}_{digest}{k:03d}"
    return candidate


def wire_ids(messages: list[Message], max_len: int) -> WireIds:
    out = WireIds()
    used: set[str] = set()
    pending: list[tuple[str, str]] = []  # (original id, wire id) of the last assistant message's calls
    n = 0
    for i, m in enumerate(messages):
        if m.role == "assistant":
            ids = []
            for call in m.tool_calls:
                wid = valid_id(call.request_id, max_len, used, n)
                used.add(wid)
                ids.append(wid)
                n += 1
            out.calls[i] = ids
            pending = list(zip([c.request_id for c in m.tool_calls], ids, strict=True))
        elif m.role == "tool_result":
            out.results[i] = _answer(pending, m.tool_call_id or "")
        else:
            pending = []
    return out


def _answer(pending: list[tuple[str, str]], original: str) -> str:
    """The wire id of the call this result answers: the first unanswered call with its id, else the next one."""
    for k, (orig, wid) in enumerate(pending):
        if orig == original:
            del pending[k]
            return wid
    if pending:
        return pending.pop(0)[1]
    return INVALID.sub("_", original) or "orphan"


def make_unique(history: list[Message], calls: list[ToolRequest]) -> None:
    """Give each new call an id no earlier call in the conversation (or in this reply) has, so every call gets
    its own result: some servers number calls per reply (`call_0` in every turn, or twice in one reply)."""
    used = {c.request_id for m in history if m.role == "assistant" for c in m.tool_calls}
    for n, call in enumerate(calls):
        if not call.request_id or call.request_id in used:
            call.request_id = valid_id(call.request_id or f"call_{n}", ANTHROPIC_MAX, used, len(used) + n)
        used.add(call.request_id)

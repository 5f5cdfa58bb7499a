"""Chat Completions as OpenAI-compatible servers really speak it: the history they accept and the streams
they send.

Servers differ from api.openai.com: Gemini sends each tool call whole, without an `index`, ends with
`finish_reason: "stop"`, and wants each call's thought signature (`extra_content`) back; DeepSeek, vLLM
and llama.cpp send reasoning as `reasoning_content` (OpenRouter and Ollama as `reasoning`); Qwen and
DeepSeek-R1 builds write it inline as `<think>…</think>`; some chat templates fail on a null `content`
or on two user turns in a row. Reasoning is shown apart and never enters the history.
"""

from __future__ import annotations

import json
import secrets
from typing import Any, Iterator

from framework_core.adapters.tool_ids import OPENAI_MAX, wire_ids
from framework_core.lial_core import (LLMResponse, Message, ProviderState, ReasoningDelta, StreamEvent, TextDelta,
                                      ToolCallStart, ToolRequest, ToolSchema, Usage)

WIRE = "openai"


def to_openai_messages(messages: list[Message], system_prompt: str, model: str = "",
                       merge_user: bool = False) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}] if system_prompt else []
    ids = wire_ids(messages, OPENAI_MAX)  # ids other APIs made, valid here and unique; results paired by position
    for i, m in enumerate(messages):
        if m.role == "user":
            if merge_user and out and out[-1]["role"] == "user":  # for templates that need strict alternation
                out[-1]["content"] += "\n\n" + m.content
            else:
                out.append({"role": "user", "content": m.content})
        elif m.role == "assistant":
            if not m.tool_calls and not m.content:
                continue
            # "" rather than null: several servers' chat templates concatenate content and fail on null
            msg: dict[str, Any] = {"role": "assistant", "content": m.content}
            if m.tool_calls:
                msg["tool_calls"] = _tool_calls(m, model, ids.calls.get(i, []))
            out.append(msg)
        elif m.role == "tool_result":
            out.append({"role": "tool", "tool_call_id": ids.result(i, m.tool_call_id), "content": m.content})
        elif m.role == "system":
            out.append({"role": "system", "content": m.content})
    return out


def _tool_calls(m: Message, model: str, wire: list[str]) -> list[dict[str, Any]]:
    extras = {item.get("call_id"): item.get("extra_content") for item in m.state_for(WIRE, model)}
    calls = []
    for j, c in enumerate(m.tool_calls):
        call: dict[str, Any] = {"id": wire[j] if j < len(wire) else c.request_id, "type": "function", "function": {
            "name": c.tool_name, "arguments": json.dumps(c.wire_arguments(), ensure_ascii=False)}}
        if extras.get(c.request_id):
            call["extra_content"] = extras[c.request_id]  # e.g. Gemini's thought signature, sent back as it came
        calls.append(call)
    return calls


def to_openai_tools(tools: list[ToolSchema]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in tools]


def usage_of(u: Any) -> Usage:
    """`prompt_tokens` includes cached ones: count them apart, as `Usage` does."""
    details = getattr(u, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", None) or getattr(u, "prompt_cache_hit_tokens", None) or 0)
    return Usage(max(0, (u.prompt_tokens or 0) - cached), u.completion_tokens or 0, cached)


class ThinkSplitter:
    """Takes `<think>…</think>` at the very start of a reply out of its text, whatever the chunking."""

    OPEN, CLOSE = "<think>", "</think>"

    def __init__(self) -> None:
        self.state = "start"  # start -> think -> after -> text, or start -> text
        self.buf = ""

    def feed(self, text: str) -> list[tuple[str, str]]:
        """Pieces of ("reasoning" | "text", string) ready to show."""
        self.buf += text
        out: list[tuple[str, str]] = []
        if self.state == "start":
            head = self.buf.lstrip()
            if not head or (self.OPEN.startswith(head) and head != self.OPEN):
                return out  # not yet known whether the reply opens with the tag
            if head.startswith(self.OPEN):
                self.state, self.buf = "think", head[len(self.OPEN):]
            else:
                self.state = "text"
        if self.state == "think":
            end = self.buf.find(self.CLOSE)
            if end < 0:
                keep = next((k for k in range(len(self.CLOSE) - 1, 0, -1) if self.buf.endswith(self.CLOSE[:k])), 0)
                ready, self.buf = self.buf[:len(self.buf) - keep], self.buf[len(self.buf) - keep:]
                return out + [("reasoning", ready)] if ready else out
            out.append(("reasoning", self.buf[:end]))
            self.state, self.buf = "after", self.buf[end + len(self.CLOSE):]
        if self.state == "after":  # the blank lines between the reasoning and the answer go
            self.buf = self.buf.lstrip()
            if not self.buf:
                return out
            self.state = "text"
        if self.buf:
            out.append(("text", self.buf))
            self.buf = ""
        return out

    def flush(self) -> list[tuple[str, str]]:
        rest, self.buf = self.buf, ""
        if not rest:
            return []
        return [("reasoning" if self.state == "think" else "text", rest)]


class ChatStream:
    """Builds one reply from Chat Completions chunks and says what to show as they arrive."""

    def __init__(self, model: str) -> None:
        self.model = model  # the configured model: provider state is keyed by it
        self.text: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self._by_index: dict[int, dict[str, Any]] = {}
        self.usage = Usage()
        self.finish: str | None = None
        self.served_by: str | None = None
        self.refused = False
        self._think = ThinkSplitter()

    def feed(self, chunk: Any) -> Iterator[StreamEvent]:
        self.served_by = self.served_by or getattr(chunk, "model", None)
        if getattr(chunk, "usage", None):
            self.usage = usage_of(chunk.usage)
        for choice in chunk.choices or []:
            delta = choice.delta
            if delta is not None:
                reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
                if isinstance(reasoning, str) and reasoning:
                    yield ReasoningDelta(reasoning)
                if delta.content:
                    yield from self._shown(self._think.feed(delta.content))
                refusal = getattr(delta, "refusal", None)
                if isinstance(refusal, str) and refusal:  # the model declined: shown as its reply
                    self.refused = True
                    yield from self._shown([("text", refusal)])
                for tc in delta.tool_calls or []:
                    yield from self._tool_delta(tc)
            if choice.finish_reason:
                self.finish = choice.finish_reason

    def _shown(self, pieces: list[tuple[str, str]]) -> Iterator[StreamEvent]:
        for kind, text in pieces:
            if kind == "reasoning":
                yield ReasoningDelta(text)
            else:
                self.text.append(text)
                yield TextDelta(text)

    def _tool_delta(self, tc: Any) -> Iterator[StreamEvent]:
        """One call per id: a delta with a new id starts a call even when its `index` is missing or reused."""
        index, cid = getattr(tc, "index", None), getattr(tc, "id", None)
        slot = next((s for s in self.calls if cid and s["id"] == cid), None)
        if slot is None and index is not None and index in self._by_index and not (
                cid and self._by_index[index]["id"] and self._by_index[index]["id"] != cid):
            slot = self._by_index[index]
        if slot is None and index is None and not cid and self.calls:
            slot = self.calls[-1]  # a continuation that names neither index nor id
        if slot is None:
            slot = {"id": cid or "", "name": "", "args": [], "extra": None}
            self.calls.append(slot)
        if index is not None:
            self._by_index[index] = slot
        if cid and not slot["id"]:
            slot["id"] = cid
        fn = getattr(tc, "function", None)
        extra = getattr(tc, "extra_content", None)
        if extra:
            slot["extra"] = extra
        if fn is not None and fn.name and not slot["name"]:
            slot["name"] = fn.name
            yield ToolCallStart(len(self.calls) - 1, slot["id"], slot["name"])
        if fn is not None and fn.arguments:
            slot["args"].append(fn.arguments)

    def flush(self) -> Iterator[StreamEvent]:
        """What the `<think>` splitter still held back (a reply too short to tell, an unclosed tag)."""
        yield from self._shown(self._think.flush())

    def response(self) -> LLMResponse:
        requests, kept = [], []
        for slot in self.calls:
            rid = slot["id"] or f"call_{secrets.token_hex(8)}"
            requests.append(ToolRequest.from_raw_arguments(rid, slot["name"], "".join(slot["args"])))
            if slot["extra"]:
                kept.append({"call_id": rid, "extra_content": slot["extra"]})
        finish = self.finish
        if requests and finish == "stop":
            finish = "tool_calls"  # Gemini ends a reply with calls as "stop"
        elif self.refused and finish == "stop":
            finish = "refusal"
        state = ProviderState(WIRE, self.model, kept) if kept else None
        return LLMResponse("".join(self.text), requests, self.usage, finish, self.served_by, state)

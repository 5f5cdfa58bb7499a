"""Generic tool mode: tools for a model whose server drops them (a chat template without tool support).

The tools are described in the system prompt; the reply is constrained by the server's JSON-schema output
(`response_format: json_schema`, which llama.cpp turns into a grammar) to exactly one of
`{"tool": NAME, "arguments": {...}}` or `{"answer": TEXT}`; the JSON is parsed back into the same
`ToolCallStart` events and `ToolRequest`s every adapter emits, and an answer's text is shown as it streams.
The history goes to the model as text it reads: its own earlier calls as the JSON it wrote, each result as a
user message naming the tool. Pure: no I/O (the Chat Completions adapter sends what this builds).
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any, Iterator

from framework_core.adapters.tool_shaping import Choice
from framework_core.lial_core import Message, StreamEvent, TextDelta, ToolCallStart, ToolRequest, ToolSchema

RESULT_HEAD = "Result of the {name} call:"
_ANSWER = re.compile(r'^\s*\{\s*"answer"\s*:\s*"')
_TOOL = re.compile(r'^\s*\{\s*"tool"\s*:\s*"((?:[^"\\]|\\.)*)"')


def tools_prompt(tools: list[ToolSchema], choice: Choice) -> str:
    """The system prompt's part that tells the model its tools and how to reply."""
    lines = ["## How to reply",
             'Reply with one JSON object only. To call a tool: {"tool": "<name>", "arguments": {...}}. '
             'To answer the user: {"answer": "<your reply>"}.',
             'A call\'s result comes back in a message that starts "Result of the <name> call:"; then answer '
             "the user or make another call.", "", "## Tools"]
    for tool in tools:  # each tool with its call written out, the arguments' descriptions as placeholders
        props = tool.parameters.get("properties") or {}
        required = set(tool.parameters.get("required") or [])
        args = {k: f"<{v.get('description') or v.get('type', 'value')}{'' if k in required else ' (optional)'}>"
                for k, v in props.items()}
        lines += [f"{tool.name}: {tool.description}",
                  "  " + json.dumps({"tool": tool.name, "arguments": args}, ensure_ascii=False)]
    if choice == "required":
        lines.append("\nCall a tool now.")
    elif choice == "answer":
        lines.append("\nAnswer the user now, from the results above.")
    return "\n".join(lines)


def reply_schema(tools: list[ToolSchema], choice: Choice) -> dict[str, Any]:
    """The JSON schema of one reply: a call of one of the tools, or an answer (or only one of them)."""
    calls = [{"type": "object", "properties": {"tool": {"const": t.name}, "arguments": _strict(t.parameters)},
              "required": ["tool", "arguments"], "additionalProperties": False} for t in tools]
    answer = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
              "additionalProperties": False}
    branches = calls if choice == "required" and calls else [answer] if choice == "answer" or not calls \
        else calls + [answer]
    return branches[0] if len(branches) == 1 else {"oneOf": branches}


def _strict(params: dict[str, Any]) -> dict[str, Any]:
    out = dict(params or {"type": "object", "properties": {}})
    out.setdefault("type", "object")
    out.setdefault("additionalProperties", False)
    return out


def response_format(tools: list[ToolSchema], choice: Choice) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "reply", "strict": True,
                                                   "schema": reply_schema(tools, choice)}}


def to_generic_messages(messages: list[Message], system_prompt: str) -> list[dict[str, Any]]:
    """The history as plain chat: calls as the JSON the model wrote, results as user messages it reads;
    consecutive user messages joined (chat templates of small models expect turns to alternate)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}] if system_prompt else []

    def add(role: str, text: str) -> None:
        if out and out[-1]["role"] == role and role == "user":
            out[-1]["content"] += "\n\n" + text
        else:
            out.append({"role": role, "content": text})

    for m in messages:
        if m.role == "user":
            add("user", m.content)
        elif m.role == "assistant":
            parts = [json.dumps({"tool": c.tool_name, "arguments": c.wire_arguments()}, ensure_ascii=False)
                     for c in m.tool_calls]
            if not parts and m.content:
                parts = [json.dumps({"answer": m.content}, ensure_ascii=False)]
            if parts:
                add("assistant", "\n".join(parts))
        elif m.role == "tool_result":
            add("user", f"{RESULT_HEAD.format(name=m.tool_name or 'tool')}\n{m.content}")
        elif m.role == "system":
            out.append({"role": "system", "content": m.content})
    return out


class GenericReply:
    """Reads one constrained reply as it streams: an answer's text is shown as it arrives, a call is started
    once its tool's name is known; `result()` parses the whole JSON. A reply that is not JSON (a server that
    ignored the schema) is shown and kept as plain text."""

    def __init__(self) -> None:
        self.raw = ""
        self.kind: str | None = None  # answer | tool | text, once known
        self.shown = 0  # characters of the answer already emitted
        self.call_id = f"call_{secrets.token_hex(8)}"

    def feed(self, text: str) -> Iterator[StreamEvent]:
        self.raw += text
        if self.kind is None:
            head = self.raw.lstrip()
            if head and not head.startswith("{"):
                self.kind = "text"
            elif _ANSWER.match(self.raw):
                self.kind = "answer"
            else:
                match = _TOOL.match(self.raw)
                if match:
                    self.kind = "tool"
                    yield ToolCallStart(0, self.call_id, _unescape(match.group(1)))
        if self.kind == "text":
            new, self.shown = self.raw[self.shown:], len(self.raw)
            if new:
                yield TextDelta(new)
        elif self.kind == "answer":
            body = self.raw[_ANSWER.match(self.raw).end():]  # type: ignore[union-attr]  # matched above
            decoded = _partial_string(body)
            if len(decoded) > self.shown:
                new, self.shown = decoded[self.shown:], len(decoded)
                yield TextDelta(new)

    def result(self) -> tuple[str, list[ToolRequest], Iterator[StreamEvent]]:
        """The answer text, the calls, and the events still owed (text not yet shown)."""
        try:
            data = json.loads(self.raw)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("tool"), str):
            call = ToolRequest.from_raw_arguments(self.call_id, data["tool"], data.get("arguments")
                                                  if isinstance(data.get("arguments"), dict) else {})
            owed: list[StreamEvent] = [] if self.kind == "tool" else [ToolCallStart(0, self.call_id, call.tool_name)]
            return "", [call], iter(owed)
        if isinstance(data, dict) and isinstance(data.get("answer"), str):
            text = data["answer"]
        elif self.kind == "answer":
            text = _partial_string(self.raw[_ANSWER.match(self.raw).end():])  # type: ignore[union-attr]
        elif self.kind == "tool":  # cut inside the call: the arguments are not valid JSON
            match = _TOOL.match(self.raw)
            name = _unescape(match.group(1)) if match else ""
            return "", [ToolRequest.from_raw_arguments(self.call_id, name, self.raw)], iter([])
        else:
            text = self.raw
        owed_text = text[self.shown:] if self.kind in ("answer", "text") else text
        return text, [], iter([TextDelta(owed_text)] if owed_text else [])


def _unescape(text: str) -> str:
    try:
        return str(json.loads(f'"{text}"'))
    except json.JSONDecodeError:
        return text


def _partial_string(body: str) -> str:
    """The decoded text of a JSON string's body so far (up to its closing quote, or a whole escape)."""
    i, end = 0, len(body)
    while i < len(body):
        c = body[i]
        if c == "\\":
            size = 6 if body[i + 1:i + 2] == "u" else 2
            if i + size > len(body):
                end = i
                break
            i += size
            continue
        if c == '"':
            end = i
            break
        i += 1
    try:
        return str(json.loads(f'"{body[:end]}"'))
    except json.JSONDecodeError:
        return body[:end]

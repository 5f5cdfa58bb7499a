"""Messages API request rules, worded as the API words its errors (each one listed in tests/fakes/README.md).

`check(body, state)` returns None or (HTTP status, message). `state` is what the server remembers between
requests: its signing key for thinking blocks and which tool calls it made right after thinking.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from dataclasses import dataclass, field
from typing import Any

from tests.fakes import anthropic_models

Problem = tuple[int, str]
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
SAMPLING = ("temperature", "top_p", "top_k")
MAX_BREAKPOINTS = 4
THINKING = ("thinking", "redacted_thinking")


@dataclass
class ServerState:
    key: bytes
    thought_calls: set[str] = field(default_factory=set)  # tool_use ids emitted after a thinking block

    def sign(self, model: str, text: str) -> str:
        return base64.b64encode(hmac.new(self.key, f"{model}\0{text}".encode(), hashlib.sha256).digest()).decode()


def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def tokens(obj: Any) -> int:
    """The fake's token count: a quarter of the JSON characters (cache markers left out)."""
    if isinstance(obj, dict):
        obj = {k: v for k, v in obj.items() if k != "cache_control"}
    return max(1, (len(json.dumps(obj, ensure_ascii=False)) + 3) // 4)


def thinking_on(body: dict[str, Any], model: anthropic_models.FakeModel) -> bool:
    kind = (body.get("thinking") or {}).get("type")
    if kind is None:
        return model.thinks_by_default
    return kind in ("enabled", "adaptive")


def check(body: dict[str, Any], state: ServerState) -> Problem | None:
    name = body.get("model")
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 0:
        return 400, "max_tokens: Field required"
    if not name:
        return 400, "model: Field required"
    model = anthropic_models.get(name)
    if model is None:
        return 404, f"model: {name}"
    return (check_params(body, model) or check_tools(body) or check_messages(body.get("messages") or [])
            or check_thinking_blocks(body, model, state) or check_cache(body) or check_length(body, model))


def check_params(body: dict[str, Any], model: anthropic_models.FakeModel) -> Problem | None:
    if body["max_tokens"] > model.max_output:
        return 400, (f"max_tokens: {body['max_tokens']} > {model.max_output}, which is the maximum allowed number "
                     f"of output tokens for {model.name}")
    for param in SAMPLING:
        if param in body and not model.sampling:
            return 400, (f"{param}: sampling parameters are not supported for {model.name}; remove temperature, "
                         "top_p and top_k")
    thinking = body.get("thinking")
    if thinking is None:
        return None
    kind = thinking.get("type")
    allowed = {"none": {"disabled"}, "budget": {"enabled", "disabled"}, "adaptive": {"adaptive", "disabled"},
               "always": {"adaptive"}}[model.thinking]
    if kind not in allowed:
        return 400, (f"thinking.type: '{kind}' is not supported for {model.name}; use one of: "
                     f"{', '.join(sorted(allowed))}")
    if kind == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            return 400, "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        if budget >= body["max_tokens"]:
            return 400, "`max_tokens` must be greater than `thinking.budget_tokens`"
    return None


def check_tools(body: dict[str, Any]) -> Problem | None:
    names = set()
    for i, tool in enumerate(body.get("tools") or []):
        name = tool.get("name") or ""
        if not TOOL_NAME.match(name):
            return 400, f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
        if name in names:
            return 400, f"tools: Tool names must be unique. Duplicate name: {name}"
        names.add(name)
    uses_tools = any(b.get("type") in ("tool_use", "tool_result")
                     for m in body.get("messages") or [] for b in blocks(m))
    if uses_tools and not body.get("tools"):
        return 400, "Requests which include `tool_use` or `tool_result` blocks must define tools."
    return None


def check_messages(messages: list[dict[str, Any]]) -> Problem | None:
    if not messages:
        return 400, "messages: at least one message is required"
    if messages[0].get("role") != "user":
        return 400, "messages: first message must use the \"user\" role"
    seen: set[str] = set()
    for i, m in enumerate(messages):
        if m.get("role") not in ("user", "assistant"):
            return 400, f"messages.{i}.role: Input should be 'user' or 'assistant'"
        content = blocks(m)
        if not content:
            return 400, (f"messages.{i}: all messages must have non-empty content except for the optional final "
                         "assistant message")
        for j, b in enumerate(content):
            if b.get("type") == "text" and not b.get("text"):
                return 400, f"messages.{i}.content.{j}.text: text content blocks must be non-empty"
            if b.get("type") == "tool_use":
                problem = _check_id(b.get("id") or "", f"messages.{i}.content.{j}.tool_use.id", seen)
                if problem:
                    return problem
        problem = _check_pairs(messages, i)
        if problem:
            return problem
    return None


def _check_id(tool_id: str, where: str, seen: set[str]) -> Problem | None:
    if not TOOL_ID.match(tool_id):
        return 400, f"{where}: String should match pattern '^[a-zA-Z0-9_-]+$'"
    if tool_id in seen:
        return 400, f"{where}: `tool_use` ids must be unique; found '{tool_id}' twice"
    seen.add(tool_id)
    return None


def _check_pairs(messages: list[dict[str, Any]], i: int) -> Problem | None:
    """Results answer the calls of the message just before, and come first in their user turn."""
    content = blocks(messages[i])
    results = [b.get("tool_use_id") for b in content if b.get("type") == "tool_result"]
    prev_uses = [b.get("id") for b in blocks(messages[i - 1]) if b.get("type") == "tool_use"] if i else []
    extra = [r for r in results if r not in prev_uses]
    if extra:
        return 400, (f"messages.{i}.content.0: unexpected `tool_use_id` found in `tool_result` blocks: {extra[0]}. "
                     "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.")
    uses = [b.get("id") for b in content if b.get("type") == "tool_use"]
    if not uses:
        return None
    nxt = blocks(messages[i + 1]) if i + 1 < len(messages) else []
    leading = []
    for b in nxt:  # only the results before any other block count: text first breaks the pairing
        if b.get("type") != "tool_result":
            break
        leading.append(b.get("tool_use_id"))
    missing = [u for u in uses if u not in leading]
    if missing:
        return 400, (f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                     f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block "
                     "in the next message.")
    return None


def check_thinking_blocks(body: dict[str, Any], model: anthropic_models.FakeModel,
                          state: ServerState) -> Problem | None:
    """Thinking blocks come back unchanged and signed for this model; with thinking on, the calls of the
    turn in progress that followed thinking must come back after that thinking."""
    messages = body.get("messages") or []
    for i, m in enumerate(messages):
        for j, b in enumerate(blocks(m)):
            if b.get("type") == "thinking":
                if not b.get("signature"):
                    return 400, f"messages.{i}.content.{j}.thinking.signature: Field required"
                if b["signature"] != state.sign(model.name, b.get("thinking", "")):
                    return 400, f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
            elif b.get("type") == "redacted_thinking" and b.get("data") != state.sign(model.name, "redacted"):
                return 400, f"messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block"
    if not thinking_on(body, model):
        return None
    for i in _turn_in_progress(messages):
        content = blocks(messages[i])
        thought = [b.get("id") for b in content if b.get("type") == "tool_use" and b.get("id") in state.thought_calls]
        if thought and content[0].get("type") not in THINKING:
            return 400, (f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                         f"`{content[0].get('type')}`. When `thinking` is enabled, a final `assistant` message must "
                         "start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` "
                         "blocks). We recommend you include thinking blocks from previous turns. To avoid this "
                         "requirement, disable `thinking`.")
    return None


def _turn_in_progress(messages: list[dict[str, Any]]) -> list[int]:
    """Indexes of the assistant messages after the user's last own message (not only tool results)."""
    out: list[int] = []
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.get("role") == "assistant":
            out.append(i)
        elif any(b.get("type") != "tool_result" for b in blocks(m)):
            break
    return out


def breakpoints(body: dict[str, Any]) -> int:
    system = body.get("system")
    marked = [t for t in body.get("tools") or [] if "cache_control" in t]
    marked += [b for b in system if "cache_control" in b] if isinstance(system, list) else []
    marked += [b for m in body.get("messages") or [] for b in blocks(m) if "cache_control" in b]
    return len(marked) + (1 if body.get("cache_control") else 0)


def check_cache(body: dict[str, Any]) -> Problem | None:
    found = breakpoints(body)
    if found > MAX_BREAKPOINTS:
        return 400, f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {found}."
    return None


def prompt_tokens(body: dict[str, Any]) -> int:
    system = body.get("system")
    total = sum(tokens(t) for t in body.get("tools") or [])
    total += tokens(system) if isinstance(system, str) else sum(tokens(b) for b in system or [])
    return total + sum(tokens(b) for m in body.get("messages") or [] for b in blocks(m))


def check_length(body: dict[str, Any], model: anthropic_models.FakeModel) -> Problem | None:
    used = prompt_tokens(body)
    if used > model.context_window:
        return 400, f"prompt is too long: {used} tokens > {model.context_window} maximum"
    return None

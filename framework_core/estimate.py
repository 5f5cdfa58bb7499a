"""The one estimate of what a text costs before an API counts it: tokens of a text, a message, the fixed part of
a request (system prompt and tool definitions); and the size of base64 data.

Compaction (whether the next request fits), the last cut before a request (`core/context_fit.py`), the result
budget's share of a small window (`tools/result_budget.py`), the context documents' sizes (`/context`) and the
notes about images and binary parts a model does not get all count with these.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from framework_core.lial_core import Message, ToolSchema

CHARS_PER_TOKEN = 4  # the usual estimate: what decides whether to compact or cut at all
SAFE_CHARS_PER_TOKEN = 3  # on the safe side for code and JSON: what a cut aims at
IMAGE_TOKENS = 1_600  # what one image costs at most, roughly, on either API
MESSAGE_TOKENS = 8  # per-message overhead of the wire formats


def text_tokens(text: str, chars_per_token: int = CHARS_PER_TOKEN) -> int:
    return len(text) // chars_per_token


def token_chars(tokens: int, chars_per_token: int = CHARS_PER_TOKEN) -> int:
    """Characters that make about `tokens` tokens."""
    return tokens * chars_per_token


def message_tokens(message: "Message", chars_per_token: int = CHARS_PER_TOKEN) -> int:
    """One history entry: its text, its tool calls' arguments as sent, its images and the wire's overhead."""
    calls = sum(len(json.dumps(c.wire_arguments(), ensure_ascii=False, default=str)) for c in message.tool_calls)
    return (len(message.content) + calls) // chars_per_token + MESSAGE_TOKENS + IMAGE_TOKENS * len(message.images)


def messages_tokens(messages: Iterable["Message"], chars_per_token: int = CHARS_PER_TOKEN) -> int:
    return sum(message_tokens(m, chars_per_token) for m in messages)


def request_tokens(system: str, tools: list["ToolSchema"], chars_per_token: int = CHARS_PER_TOKEN) -> int:
    """The part of every request that is not history: the system prompt and the tool definitions."""
    schemas = json.dumps([[t.name, t.description, t.parameters] for t in tools], ensure_ascii=False, default=str)
    return (len(system) + len(schemas)) // chars_per_token


def base64_size(data: Any) -> int:
    """Bytes that base64 `data` decodes to, without decoding it."""
    text = str(data or "")
    return len(text) * 3 // 4 - text[-2:].count("=")

"""Chat Completions request rules, worded as each server words its errors (listed in tests/fakes/README.md).

Dialects: `openai` (api.openai.com: its model catalogue and parameter rules), `gemini` (Gemini's
OpenAI-compatible endpoint: thought signatures must come back), `vllm` (a local server whose chat
template needs alternating roles and string content), `ollama` (accepts what the template renders).
`check` returns None or (HTTP status, error body).
"""

from __future__ import annotations

from typing import Any

from tests.fakes import openai_models
from tests.fakes.responses_rules import api_error

Problem = tuple[int, Any]
MAX_ID = 40


def check(body: dict[str, Any], dialect: str, signatures: dict[str, str]) -> Problem | None:
    messages = body.get("messages") or []
    if dialect == "openai":
        problem = check_params(body) or check_ids(messages)
    elif dialect == "gemini":
        problem = check_signatures(messages, signatures)
    elif dialect == "vllm":
        problem = check_template(messages)
    else:
        problem = None
    return problem or check_pairs(messages)


def check_params(body: dict[str, Any]) -> Problem | None:
    model = body.get("model") or ""
    if not openai_models.known(model):
        return 404, api_error(openai_models.model_not_found(model), code="model_not_found")
    reasoning = openai_models.is_reasoning(model)
    if reasoning and "max_tokens" in body:
        return 400, api_error("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                              "'max_completion_tokens' instead.", param="max_tokens", code="unsupported_parameter")
    for name in ("temperature", "top_p"):
        value = body.get(name)
        if reasoning and value is not None and value != 1:
            return 400, api_error(f"Unsupported value: '{name}' does not support {value} with this model. Only the "
                                  "default (1) value is supported.", param=name, code="unsupported_value")
    if not reasoning and body.get("reasoning_effort"):
        return 400, api_error("Unsupported parameter: 'reasoning_effort' is not supported with this model.",
                              param="reasoning_effort", code="unsupported_parameter")
    for i, m in enumerate(body.get("messages") or []):
        if m.get("role") == "assistant" and m.get("content") is None and not m.get("tool_calls"):
            return 400, api_error("Invalid value for 'content': expected a string, got null.",
                                  param=f"messages.[{i}].content", code="invalid_value")
        for j, part in enumerate(m.get("content") if isinstance(m.get("content"), list) else []):
            if part.get("type") == "image_url" and not openai_models.takes_images(model):
                return 400, api_error(openai_models.no_images("image_url"), param=f"messages.[{i}].content.[{j}].type")
    return None


def check_ids(messages: list[dict[str, Any]]) -> Problem | None:
    seen: set[str] = set()
    for i, m in enumerate(messages):
        for j, call in enumerate(m.get("tool_calls") or []):
            cid, where = call.get("id") or "", f"messages[{i}].tool_calls[{j}].id"
            if not cid:
                return 400, api_error(f"Invalid '{where}': empty string. Expected a string with minimum length 1, but "
                                      "got an empty string instead.", param=where, code="empty_string")
            if len(cid) > MAX_ID:
                return 400, api_error(f"Invalid '{where}': string too long. Expected a string with maximum length "
                                      f"{MAX_ID}, but got a string with length {len(cid)} instead.", param=where,
                                      code="string_above_max_length")
            if cid in seen:
                return 400, api_error(f"Duplicate value for 'tool_call_id' of {cid} in message[{i}]. Please ensure "
                                      "all tool call ids are unique.", param="messages", code="invalid_value")
            seen.add(cid)
    return None


def check_pairs(messages: list[dict[str, Any]]) -> Problem | None:
    """Every call answered by a tool message right after its assistant message; no answer without a call."""
    open_ids: list[str] = []
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "tool":
            if m.get("tool_call_id") not in open_ids:
                return 400, api_error("Invalid parameter: messages with role 'tool' must be a response to a "
                                      f"preceeding message with 'tool_calls' (messages[{i}].tool_call_id="
                                      f"{m.get('tool_call_id')!r}).", param=f"messages.[{i}].role")
            open_ids.remove(m["tool_call_id"])
            continue
        if open_ids:
            return 400, api_error("An assistant message with 'tool_calls' must be followed by tool messages responding "
                                  "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                                  f"{', '.join(open_ids)}", param="messages")
        if role == "assistant":
            open_ids = [c.get("id") for c in m.get("tool_calls") or []]
    if open_ids:
        return 400, api_error(f"tool_call_ids did not have response messages: {', '.join(open_ids)}", param="messages")
    return None


def check_signatures(messages: list[dict[str, Any]], issued: dict[str, str]) -> Problem | None:
    """Gemini 3: each function call it made must come back with the thought signature it carried."""
    for m in messages:
        for position, call in enumerate(m.get("tool_calls") or []):
            wanted = issued.get(call.get("id") or "")
            got = ((call.get("extra_content") or {}).get("google") or {}).get("thought_signature")
            if wanted and got != wanted:
                name = (call.get("function") or {}).get("name")
                return 400, [{"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": (
                    "Function call is missing a thought_signature in functionCall parts. This is required for tools "
                    "to work correctly, and missing thought_signature may lead to degraded model performance. "
                    f"Additional data, function call `default_api:{name}` , position {position + 1}. Please refer "
                    "to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.")}}]
    return None


def check_template(messages: list[dict[str, Any]]) -> Problem | None:
    """A Jinja chat template that adds strings and insists user and assistant turns alternate."""
    last = None
    for m in messages:
        role = m.get("role")
        if role == "assistant" and m.get("content") is None:
            return 400, {"object": "error", "type": "BadRequestError", "code": 400, "param": None,
                         "message": 'can only concatenate str (not "NoneType") to str'}
        if role in ("user", "assistant"):
            if role == last:
                return 400, {"object": "error", "type": "BadRequestError", "code": 400, "param": None,
                             "message": "Conversation roles must alternate user/assistant/user/assistant/..."}
            last = role
        elif role == "tool":
            last = None  # tool results sit between an assistant's calls and its next turn
    return None


def neutral(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"role": m.get("role"), "content": m.get("content") or "",
             "kind": "tool_result" if m.get("role") == "tool" else m.get("role")} for m in messages]

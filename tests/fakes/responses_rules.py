"""The Responses API's request rules, as the real server words its errors (listed in tests/fakes/README.md).

`check(body, verify)` returns None or (HTTP status, error object). `verify(encrypted)` says whether an
encrypted reasoning item is one this server issued.
"""

from __future__ import annotations

import typing
from typing import Any, Callable

from tests.fakes import openai_models

Problem = tuple[int, dict[str, Any]]


def api_error(message: str, *, param: str | None = None, code: str | None = None,
              kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def includables() -> tuple[str, ...]:
    from openai.types.responses.response_includable import ResponseIncludable

    return typing.get_args(ResponseIncludable)


def check(body: dict[str, Any], verify: Callable[[str], bool]) -> Problem | None:
    return check_params(body) or check_tools(body.get("tools") or []) or check_input(body, verify)


def check_params(body: dict[str, Any]) -> Problem | None:
    model = body.get("model")
    if not model:
        return 400, api_error("Missing required parameter: 'model'.", param="model", code="missing_required_parameter")
    if "max_tokens" in body or "max_completion_tokens" in body:
        name = "max_tokens" if "max_tokens" in body else "max_completion_tokens"
        return 400, api_error(f"Unsupported parameter: '{name}'. In the Responses API, this parameter has moved to "
                              "'max_output_tokens'.", param=name, code="unsupported_parameter")
    if "messages" in body:
        return 400, api_error("Unsupported parameter: 'messages'. In the Responses API, this parameter has moved to "
                              "'input'.", param="messages", code="unsupported_parameter")
    if not openai_models.known(model):
        return 400, api_error(f"The requested model '{model}' does not exist.", param="model", code="model_not_found")
    reasoning = openai_models.is_reasoning(model)
    for name in ("temperature", "top_p"):
        if reasoning and body.get(name) is not None:
            return 400, api_error(f"Unsupported parameter: '{name}' is not supported with this model.", param=name,
                                  code="unsupported_parameter")
    if not reasoning and (body.get("reasoning") or {}).get("effort"):
        return 400, api_error("Unsupported parameter: 'reasoning.effort' is not supported with this model.",
                              param="reasoning.effort", code="unsupported_parameter")
    for value in body.get("include") or []:
        if value not in includables():
            return 400, api_error(f"Invalid value: '{value}'. Supported values are: "
                                  f"{', '.join(repr(v) for v in includables())}.", param="include",
                                  code="invalid_value")
        if value == "reasoning.encrypted_content" and not reasoning:
            return 400, api_error("Encrypted content is not supported with this model.", param="include",
                                  code="unsupported_parameter")
    return None


def check_tools(tools: list[dict[str, Any]]) -> Problem | None:
    for i, tool in enumerate(tools):
        if tool.get("type") == "function" and not tool.get("name"):
            # a Chat Completions tool ({"type": "function", "function": {...}}) fails exactly so
            return 400, api_error(f"Missing required parameter: 'tools[{i}].name'.", param=f"tools[{i}].name",
                                  code="missing_required_parameter")
    return None


INPUT_PARTS = ("input_text", "input_image", "input_file")
OUTPUT_PARTS = ("output_text", "refusal")


def check_input(body: dict[str, Any], verify: Callable[[str], bool]) -> Problem | None:
    items = body.get("input")
    if isinstance(items, str) or items is None:
        return None
    stored = body.get("store", True)
    open_calls: list[str] = []
    for i, item in enumerate(items):
        kind = item.get("type") or ("message" if "role" in item else None)
        if item.get("id"):  # this fake stores nothing, so every id is unknown to it
            note = (" Items are not persisted when `store` is set to false. Try again with `store` set to true, or "
                    "remove this item from your input.") if not stored else ""
            return 404, api_error(f"Item with id '{item['id']}' not found.{note}", param="input")
        problem = check_item(i, kind, item, verify) or check_images(i, item, body.get("model") or "")
        if problem:
            return problem
        if kind == "function_call":
            open_calls.append(item.get("call_id"))
        elif kind == "function_call_output":
            if item.get("call_id") not in open_calls:
                return 400, api_error(f"No tool call found for function call output with call_id "
                                      f"{item.get('call_id')}.", param="input")
            open_calls.remove(item["call_id"])
    if open_calls:
        return 400, api_error(f"No tool output found for function call {open_calls[0]}.", param="input")
    return None


def check_item(i: int, kind: str | None, item: dict[str, Any], verify: Callable[[str], bool]) -> Problem | None:
    if kind == "message":
        parts = item.get("content")
        allowed = OUTPUT_PARTS if item.get("role") == "assistant" else INPUT_PARTS
        for j, part in enumerate(parts if isinstance(parts, list) else []):
            if part.get("type") not in allowed:
                listing = " and ".join(repr(a) for a in allowed) if len(allowed) == 2 else \
                    ", ".join(repr(a) for a in allowed[:-1]) + f", and {allowed[-1]!r}"
                return 400, api_error(f"Invalid value: '{part.get('type')}'. Supported values are: {listing}.",
                                      param=f"input[{i}].content[{j}]", code="invalid_value")
    elif kind == "reasoning":
        if not isinstance(item.get("summary"), list):
            return 400, api_error(f"Missing required parameter: 'input[{i}].summary'.", param=f"input[{i}].summary",
                                  code="missing_required_parameter")
        encrypted = item.get("encrypted_content")
        if not encrypted:
            return 400, api_error(f"Missing required parameter: 'input[{i}].id'.", param=f"input[{i}].id",
                                  code="missing_required_parameter")
        if not verify(encrypted):
            return 400, api_error(f"The encrypted content {encrypted[:16]}... could not be verified.",
                                  param=f"input[{i}].encrypted_content", code="invalid_encrypted_content")
    elif kind == "function_call":
        for name in ("call_id", "name", "arguments"):
            if not isinstance(item.get(name), str) or (name != "arguments" and not item.get(name)):
                return 400, api_error(f"Missing required parameter: 'input[{i}].{name}'.",
                                      param=f"input[{i}].{name}", code="missing_required_parameter")
    elif kind == "function_call_output":
        if not isinstance(item.get("output"), (str, list)):
            return 400, api_error(f"Missing required parameter: 'input[{i}].output'.", param=f"input[{i}].output",
                                  code="missing_required_parameter")
    elif kind is None:
        return 400, api_error(f"Missing required parameter: 'input[{i}].type'.", param=f"input[{i}].type",
                              code="missing_required_parameter")
    return None


def check_images(i: int, item: dict[str, Any], model: str) -> Problem | None:
    parts = item.get("content")
    for j, part in enumerate(parts if isinstance(parts, list) else []):
        if part.get("type") == "input_image" and not openai_models.takes_images(model):
            return 400, api_error(openai_models.no_images("input_image"), param=f"input[{i}].content[{j}].type")
    return None


def neutral(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The input as {role, kind, content} for `default_reply`."""
    items = body.get("input")
    if isinstance(items, str):
        return [{"role": "user", "kind": "user", "content": items}]
    out = []
    for item in items or []:
        kind = item.get("type") or ("message" if "role" in item else "")
        if kind == "message":
            parts = item.get("content")
            text = parts if isinstance(parts, str) else "".join(p.get("text", "") for p in parts or [])
            out.append({"role": item.get("role"), "kind": item.get("role"), "content": text})
        elif kind == "function_call_output":
            out.append({"role": "tool", "kind": "tool_result", "content": item.get("output", "")})
    return out


def as_chat_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A Responses request's conversation in Chat Completions' shape, for tests that read either wire."""
    instructions = body.get("instructions")
    out: list[dict[str, Any]] = [{"role": "system", "content": instructions}] if instructions else []
    items = body.get("input")
    for item in [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else items or []:
        kind = item.get("type") or "message"
        if kind == "message":
            parts = item.get("content")
            text = parts if isinstance(parts, str) else "".join(p.get("text", "") for p in parts or [])
            role = "system" if item.get("role") == "developer" else item.get("role")
            out.append({"role": role, "content": text})
        elif kind == "function_call":
            call = {"id": item.get("call_id"), "type": "function",
                    "function": {"name": item.get("name"), "arguments": item.get("arguments")}}
            if not (out and out[-1]["role"] == "assistant"):
                out.append({"role": "assistant", "content": ""})
            out[-1].setdefault("tool_calls", []).append(call)
        elif kind == "function_call_output":
            out.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": item.get("output")})
    return out

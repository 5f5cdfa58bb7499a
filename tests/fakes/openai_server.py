"""A fake OpenAI Chat Completions server: SSE streaming, tool calls split across deltas, history checks."""

from __future__ import annotations

import json
import time
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.base import FakeServerBase
from tests.fakes.script import Reply, chunks


class FakeOpenAIServer(FakeServerBase):
    wire = "openai"
    post_path = "/chat/completions"
    default_model = "fake-gpt"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = {400: "invalid_request_error", 401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(status, "server_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": kind}}

    def handle_get(self, handler: BaseHTTPRequestHandler) -> None:
        if handler.path.rstrip("/").endswith("/models"):
            return self.send_json(handler, 200, {"object": "list", "data": [
                {"id": "fake-gpt", "object": "model", "created": 0, "owned_by": "laca-tests"},
                {"id": "fake-gpt-mini", "object": "model", "created": 0, "owned_by": "laca-tests"}]})
        super().handle_get(handler)

    @staticmethod
    def validate(messages: list[dict[str, Any]]) -> str | None:
        open_ids: list[str] = []
        for i, m in enumerate(messages):
            role = m.get("role")
            if role == "tool":
                if m.get("tool_call_id") not in open_ids:
                    return (f"Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
                            f"with 'tool_calls' (messages[{i}].tool_call_id={m.get('tool_call_id')!r}).")
                open_ids.remove(m["tool_call_id"])
                continue
            if open_ids:
                return ("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                        f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(open_ids)}")
            if role == "assistant":
                open_ids = [c["id"] for c in m.get("tool_calls") or []]
        if open_ids:
            return f"tool_call_ids did not have response messages: {', '.join(open_ids)}"
        return None

    @staticmethod
    def neutral(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"role": m.get("role"), "content": m.get("content") or "",
                 "kind": "tool_result" if m.get("role") == "tool" else m.get("role")} for m in messages]

    def whole(self, reply: Reply, model: str) -> dict[str, Any]:
        calls = [{"id": c.id or f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                  "function": {"name": c.name, "arguments": c.raw_arguments or json.dumps(c.arguments)}}
                 for c in reply.tool_calls]
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if calls:
            message["tool_calls"] = calls
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:10]}", "object": "chat.completion", "created": int(time.time()),
                "model": model, "choices": [{"index": 0, "message": message,
                                             "finish_reason": "tool_calls" if calls else "stop"}],
                "usage": {"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1],
                          "total_tokens": sum(reply.usage)}}

    def stream(self, handler: BaseHTTPRequestHandler, reply: Reply, model: str, body: dict[str, Any]) -> None:
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        cid, created = f"chatcmpl-{uuid.uuid4().hex[:10]}", int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
        events += [chunk({"content": part}) for part in chunks(reply.text, reply.chunk_size)]
        for index, call in enumerate(reply.tool_calls):
            args = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
            events.append(chunk({"tool_calls": [{"index": index, "id": call.id or f"call_{uuid.uuid4().hex[:12]}",
                                                 "type": "function", "function": {"name": call.name, "arguments": ""}}]}))
            events += [chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
                       for part in chunks(args, 7)]
        events.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
        if include_usage:
            events.append({"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                           "choices": [], "usage": {"prompt_tokens": reply.usage[0],
                                                    "completion_tokens": reply.usage[1],
                                                    "total_tokens": sum(reply.usage)}})
        self.start_sse(handler)
        fault = reply.fault
        if fault and fault.kind == "stall":
            self.stall(fault)
            return self.drop(handler)
        try:
            for n, event in enumerate(events):
                if fault and fault.kind == "drop" and n >= fault.after_chunks:
                    return self.drop(handler)
                if fault and fault.kind == "sse_error" and n >= fault.after_chunks:
                    self.write_event(handler, {"error": {"message": f"injected {fault.error_type}",
                                                         "type": fault.error_type, "code": fault.error_type}})
                    return self.drop(handler)
                if fault and fault.kind == "truncate" and n == len(events) - 2:
                    return self.drop(handler)  # ends cleanly but without finish_reason / [DONE]
                self.write_event(handler, event)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
            self.write_event(handler, "[DONE]")
        except (BrokenPipeError, ConnectionResetError):
            pass

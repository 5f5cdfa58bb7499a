"""A fake Anthropic Messages server: SSE with `event:` lines, input_json_delta, and the API's history rules."""

from __future__ import annotations

import json
import time
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.base import FakeServerBase
from tests.fakes.script import Reply, chunks


class FakeAnthropicServer(FakeServerBase):
    wire = "anthropic"
    post_path = "/v1/messages"
    default_model = "fake-claude"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
                429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def handle_get(self, handler: BaseHTTPRequestHandler) -> None:
        if handler.path.split("?")[0].rstrip("/").endswith("/models"):
            return self.send_json(handler, 200, {"data": [
                {"type": "model", "id": "fake-claude", "display_name": "Fake Claude", "created_at": "2026-01-01T00:00:00Z"}],
                "has_more": False, "first_id": "fake-claude", "last_id": "fake-claude"})
        super().handle_get(handler)

    @staticmethod
    def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
        content = message.get("content")
        return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])

    @classmethod
    def validate(cls, messages: list[dict[str, Any]]) -> str | None:
        if not messages:
            return "messages: at least one message is required"
        if messages[0].get("role") != "user":
            return "messages: first message must use the \"user\" role"
        for i, m in enumerate(messages):
            if m.get("role") not in ("user", "assistant"):
                return f"messages.{i}.role: Input should be 'user' or 'assistant'"
            blocks = cls.blocks(m)
            if not blocks and m.get("role") == "user":
                return f"messages.{i}: user messages must have non-empty content"
            results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            prev_uses = [b.get("id") for b in cls.blocks(messages[i - 1]) if b.get("type") == "tool_use"] if i else []
            extra = [r for r in results if r not in prev_uses]
            if extra:
                return (f"messages.{i}.content.0: unexpected `tool_use_id` found in `tool_result` blocks: {extra[0]}. "
                        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.")
            uses = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
            if uses:
                nxt = cls.blocks(messages[i + 1]) if i + 1 < len(messages) else []
                answered = {b.get("tool_use_id") for b in nxt if b.get("type") == "tool_result"}
                missing = [u for u in uses if u not in answered]
                if missing:
                    return (f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                            f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` "
                            "block in the next message.")
        return None

    @classmethod
    def neutral(cls, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for m in messages:
            blocks = cls.blocks(m)
            results = [b for b in blocks if b.get("type") == "tool_result"]
            if results:
                out.append({"role": "user", "kind": "tool_result", "content": results[-1].get("content", "")})
            else:
                text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
                out.append({"role": m.get("role"), "kind": m.get("role"), "content": text})
        return out

    def whole(self, reply: Reply, model: str) -> dict[str, Any]:
        return {"id": f"msg_{uuid.uuid4().hex[:16]}", "type": "message", "role": "assistant", "model": model,
                "content": self._content(reply), "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
                "stop_sequence": None, "usage": {"input_tokens": reply.usage[0], "output_tokens": reply.usage[1]}}

    def stream(self, handler: BaseHTTPRequestHandler, reply: Reply, model: str, body: dict[str, Any]) -> None:
        events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": {
            "id": f"msg_{uuid.uuid4().hex[:16]}", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": reply.usage[0], "output_tokens": 1}}})]
        index = 0
        if reply.text:
            events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                                   "content_block": {"type": "text", "text": ""}}))
            events.append(("ping", {"type": "ping"}))
            events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "text_delta", "text": part}})
                       for part in chunks(reply.text, reply.chunk_size)]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
            index = 1
        for call in reply.tool_calls:
            args = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": call.id or f"toolu_{uuid.uuid4().hex[:16]}", "name": call.name, "input": {}}}))
            events += [("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": {"type": "input_json_delta", "partial_json": part}})
                       for part in chunks(args, 9)]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
        events.append(("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "tool_use" if reply.tool_calls else "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": reply.usage[1]}}))
        events.append(("message_stop", {"type": "message_stop"}))
        self.start_sse(handler)
        fault = reply.fault
        if fault and fault.kind == "stall":
            self.stall(fault)
            return self.drop(handler)
        try:
            for n, (name, data) in enumerate(events):
                if fault and fault.kind == "drop" and n >= fault.after_chunks:
                    return self.drop(handler)
                if fault and fault.kind == "sse_error" and n >= fault.after_chunks:
                    self.write_event(handler, {"type": "error", "error": {"type": fault.error_type,
                                                                          "message": f"injected {fault.error_type}"}},
                                     "error")
                    return self.drop(handler)
                if fault and fault.kind == "truncate" and name == "message_stop":
                    return self.drop(handler)
                self.write_event(handler, data, name)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
        except (BrokenPipeError, ConnectionResetError):
            pass

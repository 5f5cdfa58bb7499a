"""A fake Anthropic Messages server: SSE with `event:` lines, the API's request rules (anthropic_rules), its
prompt cache (anthropic_cache), and every way a reply can go: thinking with signatures, redacted thinking,
tool calls, `max_tokens` (a tool call cut mid-way), `refusal`, `pause_turn`, errors mid-stream, silence.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes import anthropic_models, anthropic_rules
from tests.fakes.anthropic_cache import PromptCache
from tests.fakes.base import FakeServerBase
from tests.fakes.script import Fault, Reply, chunks

STOPS = {"limit": "max_tokens", "filter": "refusal", "refusal": "refusal", "pause": "pause_turn",
         "context": "model_context_window_exceeded"}
REFUSAL_DETAILS = {"type": "refusal", "category": "cyber",
                   "explanation": "The request could enable harm to computer systems."}
Event = tuple[str, dict[str, Any]]


class FakeAnthropicServer(FakeServerBase):
    wire = "anthropic"
    post_path = "/v1/messages"
    default_model = "fake-claude"

    def __init__(self, api_key: str | None = None, port: int = 0) -> None:
        self.state = anthropic_rules.ServerState(os.urandom(16))
        self.cache = PromptCache()
        self._local = threading.local()
        super().__init__(api_key=api_key, port=port)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def handle_get(self, handler: BaseHTTPRequestHandler) -> None:
        if handler.path.split("?")[0].rstrip("/").endswith("/models"):
            data = [self._model_info(name) for name in anthropic_models.listed()]
            return self.send_json(handler, 200, {"data": data, "has_more": False, "first_id": data[0]["id"],
                                                 "last_id": data[-1]["id"]})
        super().handle_get(handler)

    @staticmethod
    def _model_info(name: str) -> dict[str, Any]:
        model = anthropic_models.get(name)
        assert model is not None
        return {"type": "model", "id": name, "display_name": name, "created_at": "2026-01-01T00:00:00Z",
                "lifecycle": "active", "max_input_tokens": model.context_window, "max_tokens": model.max_output}

    def handle_post(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if handler.path.split("?")[0].rstrip("/").endswith(self.post_path):
            problem = anthropic_rules.check(body, self.state)
            if problem:
                return self.send_json(handler, problem[0], self.error_body(*problem))
        self._local.body = body
        super().handle_post(handler, body)

    def validate(self, messages: list[dict[str, Any]]) -> str | None:
        return None  # checked before, with the API's own statuses and wording (anthropic_rules)

    @classmethod
    def neutral(cls, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for m in messages:
            blocks = anthropic_rules.blocks(m)
            results = [b for b in blocks if b.get("type") == "tool_result"]
            if results:
                out.append({"role": "user", "kind": "tool_result", "content": results[-1].get("content", "")})
            else:
                text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
                out.append({"role": m.get("role"), "kind": m.get("role"), "content": text})
        return out

    def reset(self) -> None:
        """Forget the prompt cache and the calls made after thinking (between tests)."""
        self.cache.clear()
        self.state.thought_calls.clear()

    # -- the reply ---------------------------------------------------------------------------------------
    def _content(self, reply: Reply, body: dict[str, Any], model: str) -> list[dict[str, Any]]:
        """The reply's content blocks, final form; tool_use input as the raw JSON text the model wrote."""
        fake = anthropic_models.get(model)
        out: list[dict[str, Any]] = []
        if reply.reasoning and fake is not None and anthropic_rules.thinking_on(body, fake):
            display = (body.get("thinking") or {}).get("display") or (
                "omitted" if fake.thinking == "always" else "summarized")
            thought = reply.reasoning if display == "summarized" else ""
            out.append({"type": "thinking", "thinking": thought, "signature": self.state.sign(model, thought)})
            if reply.redacted:
                out.append({"type": "redacted_thinking", "data": self.state.sign(model, "redacted")})
        if reply.text:
            out.append({"type": "text", "text": reply.text})
        for call in reply.tool_calls:
            tool_id = call.id or f"toolu_{uuid.uuid4().hex[:20]}"
            if out and out[0]["type"] == "thinking":
                self.state.thought_calls.add(tool_id)
            args = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
            out.append({"type": "tool_use", "id": tool_id, "name": call.name, "json": args})
        if reply.stop == "limit" and out and out[-1]["type"] == "tool_use":
            out[-1]["json"] = out[-1]["json"][: max(1, len(out[-1]["json"]) // 2)]  # cut mid-call
        return out

    def _stop(self, reply: Reply) -> str:
        return STOPS.get(reply.stop) or ("tool_use" if reply.tool_calls else "end_turn")

    def _usage(self, reply: Reply, body: dict[str, Any], model: str) -> dict[str, int]:
        fake = anthropic_models.get(model)
        fresh, written, read = self.cache.usage(body, model, fake.min_cache_tokens if fake else 1024)
        return {"input_tokens": fresh, "cache_creation_input_tokens": written, "cache_read_input_tokens": read,
                "output_tokens": reply.usage[1]}

    def whole(self, reply: Reply, model: str) -> dict[str, Any]:
        body = self._local.body
        content = []
        for block in self._content(reply, body, model):
            if block["type"] == "tool_use":
                try:
                    args = json.loads(block["json"])
                except ValueError:
                    args = {}
                block = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": args}
            content.append(block)
        stop = self._stop(reply)
        return {"id": f"msg_{uuid.uuid4().hex[:16]}", "type": "message", "role": "assistant", "model": model,
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "stop_details": REFUSAL_DETAILS if stop == "refusal" else None,
                "usage": self._usage(reply, body, model)}

    def _events(self, reply: Reply, body: dict[str, Any], model: str) -> list[Event]:
        usage = self._usage(reply, body, model)
        events: list[Event] = [("message_start", {"type": "message_start", "message": {
            "id": f"msg_{uuid.uuid4().hex[:16]}", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": dict(usage, output_tokens=1)}})]
        for index, block in enumerate(self._content(reply, body, model)):
            events += self._block_events(index, block, reply.chunk_size)
        stop = self._stop(reply)
        events.append(("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": stop, "stop_sequence": None, "stop_details": REFUSAL_DETAILS if stop == "refusal" else None},
            "usage": {"output_tokens": usage["output_tokens"]}}))
        events.append(("message_stop", {"type": "message_stop"}))
        return events

    @staticmethod
    def _block_events(index: int, block: dict[str, Any], size: int) -> list[Event]:
        def delta(d: dict[str, Any]) -> Event:
            return ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})

        kind = block["type"]
        starts = {"thinking": {"type": "thinking", "thinking": "", "signature": ""},
                  "text": {"type": "text", "text": ""}, "redacted_thinking": block}
        start = starts.get(kind) or {"type": "tool_use", "id": block.get("id"), "name": block.get("name"), "input": {}}
        out: list[Event] = [("content_block_start", {"type": "content_block_start", "index": index,
                                                     "content_block": start})]
        if kind == "thinking":
            out += [delta({"type": "thinking_delta", "thinking": part}) for part in chunks(block["thinking"], size)]
            out.append(delta({"type": "signature_delta", "signature": block["signature"]}))
        elif kind == "text":
            out.append(("ping", {"type": "ping"}))
            out += [delta({"type": "text_delta", "text": part}) for part in chunks(block["text"], size)]
        elif kind == "tool_use":
            out += [delta({"type": "input_json_delta", "partial_json": part}) for part in chunks(block["json"], 9)]
        out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        return out

    def stream(self, handler: BaseHTTPRequestHandler, reply: Reply, model: str, body: dict[str, Any]) -> None:
        events = self._events(reply, body, model)
        self.start_sse(handler)
        fault = reply.fault
        if fault and fault.kind == "stall":
            self.stall(fault)
            return self.drop(handler)
        try:
            for n, (name, data) in enumerate(events):
                if self._fault_at(handler, fault, n, name):
                    return
                self.write_event(handler, data, name)
                if n == 0 and fault and fault.kind == "silence":
                    self._silence(handler, fault)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _fault_at(self, handler: BaseHTTPRequestHandler, fault: Fault | None, n: int, name: str) -> bool:
        """Break the stream here if the fault says so; True when the stream is over."""
        if fault is None:
            return False
        if fault.kind == "drop" and n >= fault.after_chunks:
            self.drop(handler)
            return True
        if fault.kind == "sse_error" and n >= fault.after_chunks:
            self.write_event(handler, {"type": "error", "error": {"type": fault.error_type,
                                                                  "message": f"injected {fault.error_type}"}}, "error")
            self.drop(handler)
            return True
        if fault.kind == "truncate" and name == "message_stop":
            self.drop(handler)
            return True
        return False

    def _silence(self, handler: BaseHTTPRequestHandler, fault: Fault) -> None:
        """Nothing after message_start for a while (or only pings), as a model thinking unseen."""
        end = time.monotonic() + fault.seconds
        while (left := end - time.monotonic()) > 0:
            time.sleep(min(left, fault.ping_every) if fault.ping_every else left)
            if fault.ping_every and time.monotonic() < end:
                self.write_event(handler, {"type": "ping"}, "ping")

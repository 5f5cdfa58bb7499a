"""A fake OpenAI server: Chat Completions (SSE, tool calls split across deltas, the API's rules) and, like
api.openai.com, the Responses API on /v1/responses (`openai_responses_server`).

`dialect` picks which server the Chat Completions side imitates (see `chat_rules`): `openai`, or one of
the compatible servers with their habits: `gemini` sends each tool call whole without an `index`,
ends with `finish_reason: "stop"` and signs each call; `vllm` sends reasoning as `reasoning_content`
and has a strict chat template; `ollama` writes reasoning inline as `<think>…</think>`; `llamacpp-notools` is
llama.cpp serving a model whose chat template has no tool support: `/props` says so, `tools` are dropped (the
prompt tokens do not grow), and a reply follows `response_format: json_schema` (a scripted call is written as
`{"tool", "arguments"}` JSON, a text as `{"answer"}`), else is text only.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes import chat_rules, openai_models, responses_rules
from tests.fakes.base import FakeServerBase
from tests.fakes.script import Reply, ToolCallSpec, chunks

FINISH = {"limit": "length", "filter": "content_filter", "context": "length"}  # a refusal ends as "stop"
DIALECTS = ("openai", "gemini", "vllm", "ollama", "llamacpp-notools")
#: llama.cpp's `GET /props` for a model whose chat template has no tool support (SmolLM2's, as llama.cpp reports it)
NOTOOLS_PROPS = {"chat_template_caps": {"supports_tools": False, "supports_tool_calls": False,
                                        "supports_system_role": True},
                 "default_generation_settings": {"n_ctx": 8192}}


class FakeOpenAIServer(FakeServerBase):
    wire = "openai"
    post_path = "/chat/completions"
    default_model = "fake-gpt"

    def __init__(self, api_key: str | None = None, port: int = 0, dialect: str = "openai") -> None:
        from tests.fakes.openai_responses_server import ResponsesEndpoint

        if dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {dialect!r}; choose one of {', '.join(DIALECTS)}")
        self.dialect = dialect
        self.signatures: dict[str, str] = {}  # Gemini thought signatures handed out, by call id
        self.responses = ResponsesEndpoint(self)
        super().__init__(api_key=api_key, port=port)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def sent_messages(self, index: int = -1) -> list[dict[str, Any]]:
        """The conversation of one recorded request in Chat Completions' shape, whichever endpoint it reached."""
        body = self.requests[index]
        return body["messages"] if "messages" in body else responses_rules.as_chat_messages(body)

    def sent_tool_names(self, index: int = -1) -> list[str]:
        tools = self.requests[index].get("tools") or []
        return [t["function"]["name"] if "function" in t else t.get("name", "") for t in tools]

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kinds = {400: "invalid_request_error", 401: "invalid_api_key", 429: "rate_limit_exceeded"}
        kind = kinds.get(status, "server_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": kind}}

    def handle_get(self, handler: BaseHTTPRequestHandler) -> None:
        if self.dialect == "llamacpp-notools" and handler.path.rstrip("/") == "/props":
            return self.send_json(handler, 200, NOTOOLS_PROPS)
        if handler.path.rstrip("/").endswith("/models"):
            return self.send_json(handler, 200, {"object": "list", "data": [
                {"id": name, "object": "model", "created": 0, "owned_by": "laca-tests"}
                for name in openai_models.listed()]})
        super().handle_get(handler)

    def handle_post(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if handler.path.split("?")[0].rstrip("/").endswith("/responses"):
            return self.responses.handle(handler, body)
        if handler.path.split("?")[0].rstrip("/").endswith(self.post_path):
            problem = chat_rules.check(body, self.dialect, self.signatures)
            if problem:
                return self.send_json(handler, *problem)
        super().handle_post(handler, body)

    def validate(self, messages: list[dict[str, Any]]) -> str | None:
        return None  # checked before, with each dialect's own status and wording (chat_rules)

    def neutral(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return chat_rules.neutral(messages)

    # -- what the reply looks like on this dialect ------------------------------------------------------
    def _call(self, call: ToolCallSpec, args: str) -> dict[str, Any]:
        cid = call.id or f"call_{uuid.uuid4().hex[:12]}"
        out: dict[str, Any] = {"id": cid, "type": "function", "function": {"name": call.name, "arguments": args}}
        if self.dialect == "gemini":
            signature = base64.b64encode(f"signed:{cid}".encode()).decode()
            self.signatures[cid] = signature
            out["extra_content"] = {"google": {"thought_signature": signature}}
        return out

    def _args(self, reply: Reply) -> list[str]:
        """Each call's arguments; the last one cut halfway when the output limit stops the reply."""
        out = [c.raw_arguments if c.raw_arguments is not None else json.dumps(c.arguments) for c in reply.tool_calls]
        if out and reply.stop == "limit":
            out[-1] = out[-1][: len(out[-1]) // 2]
        return out

    def _finish(self, reply: Reply) -> str:
        if reply.stop in FINISH:
            return FINISH[reply.stop]
        return "tool_calls" if reply.tool_calls and self.dialect != "gemini" else "stop"

    @staticmethod
    def _usage(reply: Reply) -> dict[str, Any]:
        return {"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1], "total_tokens": sum(reply.usage),
                "prompt_tokens_details": {"cached_tokens": reply.cached_tokens}}

    def notools(self, reply: Reply, body: dict[str, Any]) -> Reply:
        """llama.cpp without tool support: no tool calls; the JSON the schema asks for, or plain text."""
        import dataclasses

        if self.dialect != "llamacpp-notools":
            return reply
        fmt = body.get("response_format") or {}
        if fmt.get("type") != "json_schema":
            return dataclasses.replace(reply, tool_calls=[], text=reply.text or "I cannot call tools.")
        if reply.tool_calls:
            call = reply.tool_calls[0]
            text = json.dumps({"tool": call.name, "arguments": call.arguments})
        else:
            text = json.dumps({"answer": reply.text})
        return dataclasses.replace(reply, tool_calls=[], text=text)

    def whole(self, reply: Reply, model: str) -> dict[str, Any]:
        calls = [self._call(c, a) for c, a in zip(reply.tool_calls, self._args(reply), strict=True)]
        text = reply.text
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if reply.stop == "refusal":
            message.update(content=None, refusal=text)
        if reply.reasoning and self.dialect == "vllm":
            message["reasoning_content"] = reply.reasoning
        elif reply.reasoning and self.dialect == "ollama":
            message["content"] = f"<think>{reply.reasoning}</think>\n\n{text}"
        if calls:
            message["tool_calls"] = calls
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:10]}", "object": "chat.completion", "created": int(time.time()),
                "model": model, "choices": [{"index": 0, "message": message, "finish_reason": self._finish(reply)}],
                "usage": self._usage(reply)}

    def _deltas(self, reply: Reply) -> list[dict[str, Any]]:
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        if reply.reasoning and self.dialect == "vllm":
            deltas += [{"reasoning_content": part} for part in chunks(reply.reasoning, reply.chunk_size)]
        text = reply.text
        if reply.reasoning and self.dialect == "ollama":
            text = f"<think>{reply.reasoning}</think>\n\n{text}"
        key = "refusal" if reply.stop == "refusal" else "content"
        deltas += [{key: part} for part in chunks(text, reply.chunk_size)]
        for index, (call, args) in enumerate(zip(reply.tool_calls, self._args(reply), strict=True)):
            if self.dialect == "gemini":  # each call whole, in one delta, without an index
                deltas.append({"tool_calls": [self._call(call, args)]})
                continue
            head = self._call(call, "")
            deltas.append({"tool_calls": [dict(head, index=index)]})
            deltas += [{"tool_calls": [{"index": index, "function": {"arguments": part}}]} for part in chunks(args, 7)]
        return deltas

    def stream(self, handler: BaseHTTPRequestHandler, reply: Reply, model: str, body: dict[str, Any]) -> None:
        reply = self.notools(reply, body)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        cid, created = f"chatcmpl-{uuid.uuid4().hex[:10]}", int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        events = [chunk(d) for d in self._deltas(reply)] + [chunk({}, self._finish(reply))]
        if include_usage:
            events.append({"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                           "choices": [], "usage": self._usage(reply)})
        self.start_sse(handler)
        fault = reply.fault
        if fault and fault.kind == "stall":
            self.stall(fault)
            return self.drop(handler)
        try:
            for n, event in enumerate(events):
                if n == 0 and fault and fault.kind == "silence":
                    silence(handler, fault)
                if fault and fault.kind == "drop" and n >= fault.after_chunks:
                    return self.drop(handler)
                if fault and fault.kind == "sse_error" and n >= fault.after_chunks:
                    self.write_event(handler, {"error": {"message": f"injected {fault.error_type}",
                                                         "type": fault.error_type, "code": fault.error_type}})
                    return self.drop(handler)
                if fault and fault.kind == "truncate" and n == len(events) - (2 if include_usage else 1):
                    return self.drop(handler)  # ends cleanly but without finish_reason / [DONE]
                self.write_event(handler, event)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
            self.write_event(handler, "[DONE]")
        except (BrokenPipeError, ConnectionResetError):
            pass


def silence(handler: BaseHTTPRequestHandler, fault: Any) -> None:
    """The stream is open and nothing comes for a while (a model thinking unseen), at most SSE comments as
    keep-alives; then the reply goes on normally."""
    end = time.monotonic() + fault.seconds
    every = getattr(fault, "ping_every", 0.0)
    while (left := end - time.monotonic()) > 0:
        time.sleep(min(left, every) if every else left)
        if every and time.monotonic() < end:
            handler.wfile.write(b": keep-alive\n\n")
            handler.wfile.flush()

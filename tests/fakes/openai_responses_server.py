"""The fake OpenAI server's Responses API (POST /v1/responses), beside its Chat Completions, as on api.openai.com.

Streams the real event protocol: `event:` lines naming each typed event, sequence numbers, output items
added and done (reasoning, message, function_call), text and argument deltas, reasoning summary parts,
and a final `response.completed` / `response.incomplete` carrying the whole response with its usage.
Reasoning models return reasoning items; their `encrypted_content` (asked for with
`include: ["reasoning.encrypted_content"]`) is signed by this server, which checks it when it comes back.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time
import uuid
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from tests.fakes import openai_models, responses_rules
from tests.fakes.script import Reply, ToolCallSpec, chunks

if TYPE_CHECKING:
    from tests.fakes.openai_server import FakeOpenAIServer


def silence(handler: BaseHTTPRequestHandler, fault: Any) -> None:
    from tests.fakes.openai_server import silence as wait

    wait(handler, fault)

Event = tuple[str, dict[str, Any]]
INCOMPLETE_REASON = {"limit": "max_output_tokens", "filter": "content_filter"}


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


class ResponsesEndpoint:
    def __init__(self, server: "FakeOpenAIServer") -> None:
        self.server = server
        self._key = os.urandom(16)
        self.issued: list[str] = []  # encrypted reasoning handed out, oldest first

    # -- encrypted reasoning ------------------------------------------------------------------------
    def encrypt(self, model: str, summary: str) -> str:
        payload = base64.urlsafe_b64encode(json.dumps({"model": model, "summary": summary,
                                                        "n": len(self.issued)}).encode()).decode()
        token = f"gAAAA{payload}.{hmac.new(self._key, payload.encode(), hashlib.sha256).hexdigest()[:32]}"
        self.issued.append(token)
        return token

    def verify(self, token: str) -> bool:
        payload, _, mac = token.removeprefix("gAAAA").rpartition(".")
        good = hmac.new(self._key, payload.encode(), hashlib.sha256).hexdigest()[:32]
        return bool(payload) and hmac.compare_digest(mac, good)

    # -- one request --------------------------------------------------------------------------------
    def handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        server = self.server
        problem = responses_rules.check(body, self.verify)
        if problem:
            return server.send_json(handler, *problem)
        scripted = server.pending > 0
        history = responses_rules.neutral(body)
        reply = server.next_reply(history)
        if not scripted and not reply.reasoning and history:  # by hand: give the reasoning something to show
            last = history[-1]
            reply.reasoning = ("The tool has answered; I report what it found." if last["kind"] == "tool_result"
                               else f"The user wrote {str(last['content'])[:60]!r}; I decide how to answer.")
        if reply.fault and reply.fault.kind == "status":
            return server.send_fault_status(handler, reply.fault)
        events = self.events(reply, body)
        if not body.get("stream"):
            return server.send_json(handler, 200, events[-1][1]["response"])
        self.send(handler, reply, events)

    def send(self, handler: BaseHTTPRequestHandler, reply: Reply, events: list[Event]) -> None:
        server, fault = self.server, reply.fault
        server.start_sse(handler)
        if fault and fault.kind == "stall":
            server.stall(fault)
            return server.drop(handler)
        try:
            for n, (name, data) in enumerate(events):
                if n == 2 and fault and fault.kind == "silence":  # created and in progress, then thinking
                    silence(handler, fault)
                if fault and fault.kind == "drop" and n >= fault.after_chunks:
                    return server.drop(handler)
                if fault and fault.kind == "sse_error" and n >= fault.after_chunks:
                    server.write_event(handler, *self.failure(fault.error_type, n, events[0][1]["response"]))
                    return server.drop(handler)
                if fault and fault.kind == "truncate" and n == len(events) - 1:
                    return server.drop(handler)  # no response.completed: the stream just ends
                server.write_event(handler, dict(data, sequence_number=n), name)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
        except (BrokenPipeError, ConnectionResetError):
            pass

    @staticmethod
    def failure(code: str, n: int, response: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """`server_error` fails the response (`response.failed`); any other code arrives as an `error` event."""
        message = f"injected {code}"
        if code == "server_error":
            failed = dict(response, status="failed", error={"code": code, "message": message})
            return {"type": "response.failed", "response": failed, "sequence_number": n}, "response.failed"
        return {"type": "error", "code": code, "message": message, "param": None, "sequence_number": n}, "error"

    # -- the event sequence -------------------------------------------------------------------------
    def events(self, reply: Reply, body: dict[str, Any]) -> list[Event]:
        model = body["model"]
        base = self.response_object(body, model)
        events: list[Event] = [("response.created", {"type": "response.created", "response": base}),
                               ("response.in_progress", {"type": "response.in_progress", "response": base})]
        output: list[dict[str, Any]] = []
        if openai_models.is_reasoning(model):
            self.reasoning_item(events, output, reply, body, model)
        if reply.text:
            self.message_item(events, output, reply)
        for call in reply.tool_calls:
            self.call_item(events, output, call, reply.stop == "limit" and call is reply.tool_calls[-1])
        reason = INCOMPLETE_REASON.get(reply.stop)
        done = dict(base, output=output, usage=self.usage(reply, model), status="incomplete" if reason else "completed",
                    incomplete_details={"reason": reason} if reason else None, completed_at=time.time())
        kind = "response.incomplete" if reason else "response.completed"
        events.append((kind, {"type": kind, "response": done}))
        return events

    @staticmethod
    def response_object(body: dict[str, Any], model: str) -> dict[str, Any]:
        reasoning = body.get("reasoning") or {}
        return {"id": _id("resp"), "object": "response", "created_at": time.time(), "status": "in_progress",
                "error": None, "incomplete_details": None, "instructions": body.get("instructions"),
                "max_output_tokens": body.get("max_output_tokens"), "model": model, "output": [],
                "parallel_tool_calls": True, "previous_response_id": None,
                "reasoning": {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")},
                "store": body.get("store", True), "temperature": body.get("temperature", 1.0),
                "text": {"format": {"type": "text"}}, "tool_choice": "auto", "tools": body.get("tools") or [],
                "top_p": body.get("top_p", 1.0), "truncation": "disabled", "usage": None, "metadata": {}}

    def reasoning_item(self, events: list[Event], output: list[dict[str, Any]], reply: Reply,
                       body: dict[str, Any], model: str) -> None:
        """A reasoning model always reasons; its summary is streamed only when the request asked for one."""
        index, rid = len(output), _id("rs")
        summarise = bool((body.get("reasoning") or {}).get("summary")) and bool(reply.reasoning)
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                                                      "item": {"id": rid, "type": "reasoning", "summary": []}}))
        if summarise:
            where = {"item_id": rid, "output_index": index, "summary_index": 0}
            events.append(("response.reasoning_summary_part.added", {"type": "response.reasoning_summary_part.added",
                           **where, "part": {"type": "summary_text", "text": ""}}))
            events += [("response.reasoning_summary_text.delta", {"type": "response.reasoning_summary_text.delta",
                        **where, "delta": part}) for part in chunks(reply.reasoning, reply.chunk_size)]
            events.append(("response.reasoning_summary_text.done", {"type": "response.reasoning_summary_text.done",
                           **where, "text": reply.reasoning}))
            events.append(("response.reasoning_summary_part.done", {"type": "response.reasoning_summary_part.done",
                           **where, "part": {"type": "summary_text", "text": reply.reasoning}}))
        item: dict[str, Any] = {"id": rid, "type": "reasoning",
                                "summary": [{"type": "summary_text", "text": reply.reasoning}] if summarise else []}
        if "reasoning.encrypted_content" in (body.get("include") or []):
            item["encrypted_content"] = self.encrypt(model, reply.reasoning)
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index,
                                                     "item": item}))
        output.append(item)

    @staticmethod
    def message_item(events: list[Event], output: list[dict[str, Any]], reply: Reply) -> None:
        """The reply's text, or a refusal part (`response.refusal.*` events) when the model declines."""
        index, mid = len(output), _id("msg")
        status = "incomplete" if reply.stop in INCOMPLETE_REASON and not reply.tool_calls else "completed"
        where = {"item_id": mid, "output_index": index, "content_index": 0}
        refusal = reply.stop == "refusal"
        kind, field = ("refusal", "refusal") if refusal else ("output_text", "text")
        empty = {"type": kind, field: ""} if refusal else {"type": kind, "text": "", "annotations": []}
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                       "item": {"id": mid, "type": "message", "status": "in_progress", "role": "assistant",
                                "content": []}}))
        events.append(("response.content_part.added", {"type": "response.content_part.added", **where,
                                                       "part": empty}))
        delta_event = "response.refusal.delta" if refusal else "response.output_text.delta"
        extra: dict[str, Any] = {} if refusal else {"logprobs": []}
        events += [(delta_event, {"type": delta_event, **where, "delta": part, **extra})
                   for part in chunks(reply.text, reply.chunk_size)]
        part = dict(empty, **{field: reply.text})
        done_event = "response.refusal.done" if refusal else "response.output_text.done"
        events.append((done_event, {"type": done_event, **where, field: reply.text, **extra}))
        events.append(("response.content_part.done", {"type": "response.content_part.done", **where, "part": part}))
        item = {"id": mid, "type": "message", "status": status, "role": "assistant", "content": [part]}
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index,
                                                     "item": item}))
        output.append(item)

    @staticmethod
    def call_item(events: list[Event], output: list[dict[str, Any]], call: ToolCallSpec, cut: bool) -> None:
        """A function call; `cut` ends its arguments halfway, as the output limit does."""
        index, fid = len(output), _id("fc")
        args = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
        args = args[: len(args) // 2] if cut else args
        head = {"id": fid, "type": "function_call", "call_id": call.id or _id("call"), "name": call.name}
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                       "item": dict(head, arguments="", status="in_progress")}))
        events += [("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta",
                    "item_id": fid, "output_index": index, "delta": part}) for part in chunks(args, 7)]
        events.append(("response.function_call_arguments.done", {"type": "response.function_call_arguments.done",
                       "item_id": fid, "output_index": index, "arguments": args}))
        item = dict(head, arguments=args, status="incomplete" if cut else "completed")
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index,
                                                     "item": item}))
        output.append(item)

    @staticmethod
    def usage(reply: Reply, model: str) -> dict[str, Any]:
        reasoning_tokens = max(1, reply.usage[1] // 2) if openai_models.is_reasoning(model) else 0
        return {"input_tokens": reply.usage[0],
                "input_tokens_details": {"cached_tokens": reply.cached_tokens, "cache_write_tokens": 0},
                "output_tokens": reply.usage[1], "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
                "total_tokens": sum(reply.usage)}

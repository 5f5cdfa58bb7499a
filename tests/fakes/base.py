"""A threaded loopback HTTP server shared by the fake LLM APIs: queueing, recording, faults, SSE writing."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.script import Fault, Reply


class FakeServerBase:
    """Subclasses implement `handle_post(handler, body)` for their wire API."""

    wire = ""

    def __init__(self, api_key: str | None = None, port: int = 0) -> None:
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self.sizes: list[int] = []  # bytes of each request's body, as sent
        self.headers: list[dict[str, str]] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                server.handle_get(self)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    return server.send_json(self, 400, server.error_body(400, "invalid JSON body"))
                with server._lock:
                    server.requests.append(body)
                    server.sizes.append(len(raw))
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                if not server.authorised(self):
                    return server.send_json(self, 401, server.error_body(401, "invalid x-api-key / bearer token"))
                server.handle_post(self, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, name=f"fake-{self.wire}", daemon=True)
        self._thread.start()

    # -- scripting ------------------------------------------------------------------------------
    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def next_reply(self, messages: list[dict[str, Any]]) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        from tests.fakes.script import default_reply

        return default_reply(messages)

    @property
    def pending(self) -> int:
        return len(self._queue)

    # -- plumbing -------------------------------------------------------------------------------
    def authorised(self, handler: BaseHTTPRequestHandler) -> bool:
        if self.api_key is None:
            return True
        given = handler.headers.get("x-api-key") or (handler.headers.get("authorization") or "").removeprefix("Bearer ")
        return given == self.api_key

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        raise NotImplementedError

    def handle_get(self, handler: BaseHTTPRequestHandler) -> None:
        self.send_json(handler, 404, self.error_body(404, "not found"))

    # -- one request: the same steps on every wire; subclasses supply the wire-specific pieces ----------
    post_path = ""  # the endpoint, e.g. "/chat/completions"
    default_model = ""

    def handle_post(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if not handler.path.split("?")[0].rstrip("/").endswith(self.post_path):
            return self.send_json(handler, 404, self.error_body(404, f"unknown path {handler.path}"))
        messages = body.get("messages") or []
        problem = self.validate(messages)
        if problem:
            return self.send_json(handler, 400, self.error_body(400, problem))
        reply = self.next_reply(self.neutral(messages))
        if reply.fault and reply.fault.kind == "status":
            return self.send_fault_status(handler, reply.fault)
        model = body.get("model", self.default_model)
        if not body.get("stream"):
            return self.send_json(handler, 200, self.whole(reply, model))
        self.stream(handler, reply, model, body)

    def validate(self, messages: list[dict[str, Any]]) -> str | None:
        """The API's own history rules: the error message it would send, or None."""
        raise NotImplementedError

    def neutral(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The history as {role, kind, content} for `default_reply`."""
        raise NotImplementedError

    def whole(self, reply: Reply, model: str) -> dict[str, Any]:
        raise NotImplementedError

    def stream(self, handler: BaseHTTPRequestHandler, reply: Reply, model: str, body: dict[str, Any]) -> None:
        raise NotImplementedError

    def send_json(self, handler: BaseHTTPRequestHandler, status: int, body: dict[str, Any],
                  headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            handler.send_header(k, v)
        handler.end_headers()
        handler.wfile.write(data)

    def send_fault_status(self, handler: BaseHTTPRequestHandler, fault: Fault) -> None:
        headers = {}
        if fault.retry_after_ms is not None:
            headers["retry-after-ms"] = str(fault.retry_after_ms)
        if fault.retry_after is not None:
            headers["retry-after"] = str(fault.retry_after)
        headers["x-should-retry"] = "true" if fault.status in (429, 500, 502, 503, 529) else "false"
        body = self.error_body(fault.status, fault.message or f"injected {fault.status}")
        if fault.error_type and isinstance(body.get("error"), dict):  # e.g. a 429 that is a quota, not a rate
            body["error"]["type"] = fault.error_type
            if "code" in body["error"]:
                body["error"]["code"] = fault.error_type
        self.send_json(handler, fault.status, body, headers)

    def start_sse(self, handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("cache-control", "no-cache")
        handler.send_header("connection", "close")
        handler.end_headers()
        handler.close_connection = True

    @staticmethod
    def write_event(handler: BaseHTTPRequestHandler, data: Any, event: str | None = None) -> None:
        payload = data if isinstance(data, str) else json.dumps(data)
        text = (f"event: {event}\n" if event else "") + f"data: {payload}\n\n"
        handler.wfile.write(text.encode())
        handler.wfile.flush()

    @staticmethod
    def drop(handler: BaseHTTPRequestHandler) -> None:
        try:
            handler.wfile.flush()
            handler.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        handler.close_connection = True

    @staticmethod
    def stall(fault: Fault) -> None:
        time.sleep(fault.seconds)

    # -- lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "FakeServerBase":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

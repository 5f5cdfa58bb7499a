"""MCP client: servers run on one background asyncio loop thread; their tools join the shared registry.

Each server is held open by a task (`async with Client(...)`); tool calls are submitted to the loop from the
main thread with a timeout. A server that dies or hangs is marked failed and restarted on next use.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from framework_core.config import McpServerSettings
from framework_core.errors import ConfigError, ToolError
from framework_core.tools.base import ToolContext, ToolRegistry, ToolSpec

RESTART_WAIT_S = 15.0
STARTUP_TIMEOUT_S = 60.0  # initialize and list_tools; a cold start (first import, compiling .pyc) can be slow


@dataclass
class ServerStatus:
    name: str
    state: str  # starting | ready | failed | stopped
    tools: list[str] = field(default_factory=list)
    error: str | None = None
    log_path: Path | None = None


def tool_name(server: str, tool: str) -> str:
    clean = re.sub(r"[^A-Za-z0-9_-]", "_", f"mcp__{server}__{tool}")
    return clean[:64]


class _Server:
    def __init__(self, name: str, settings: McpServerSettings, log_path: Path) -> None:
        self.name = name
        self.settings = settings
        self.log_path = log_path
        self.state = "stopped"
        self.error: str | None = None
        self.tools: list[str] = []
        self.client: Any = None
        self.ready = threading.Event()
        self.stop: asyncio.Event | None = None
        self.task: asyncio.Task[None] | None = None
        self.gen = 0  # bumped on each (re)start; only the current holder may change the state


class McpManager:
    def __init__(self, servers: dict[str, McpServerSettings], registry: ToolRegistry, log_dir: Path,
                 workspace: Path) -> None:
        self.registry = registry
        self.workspace = workspace
        log_dir.mkdir(parents=True, exist_ok=True)
        self._servers = {n: _Server(n, s, log_dir / f"mcp-{n}.log") for n, s in servers.items()}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle --------------------------------------------------------------------------------
    def start(self) -> None:
        """Return at once; servers connect in the background."""
        if self._thread is not None:
            return
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="laca-mcp", daemon=True)
        self._thread.start()
        for server in self._servers.values():
            self._launch(server)

    def _launch(self, server: _Server) -> None:
        assert self._loop is not None
        server.gen += 1
        server.ready.clear()
        server.state, server.error = "starting", None
        asyncio.run_coroutine_threadsafe(self._hold(server, server.gen), self._loop)

    async def _hold(self, server: _Server, gen: int) -> None:
        from mcp import Client

        stop = asyncio.Event()
        server.stop = stop
        server.task = asyncio.current_task()
        current = lambda: server.gen == gen  # noqa: E731
        try:
            with open(server.log_path, "a", encoding="utf-8") as log:
                log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting {server.name}\n")
                log.flush()
                async with Client(self._transport(server, log), mode="legacy", cache=None,
                                  read_timeout_seconds=STARTUP_TIMEOUT_S) as client:
                    listing = await client.list_tools()
                    if not current():
                        return
                    server.client = client
                    self._register(server, listing.tools)
                    server.state = "ready"
                    server.ready.set()
                    await stop.wait()
        except asyncio.CancelledError:
            if current() and server.state != "failed":
                server.state = "stopped"
        except BaseException as exc:  # noqa: BLE001 - any failure of a server is reported, never raised
            if current():
                server.state, server.error = "failed", _describe(exc)
        finally:
            if current():
                server.client = None
                if server.state in ("ready", "starting"):
                    server.state = "stopped" if server.state == "ready" else "failed"
                    server.error = server.error or "the server stopped during start-up"
                server.ready.set()

    def _transport(self, server: _Server, log: Any) -> Any:
        s = server.settings
        if s.url:
            from mcp.client.streamable_http import streamable_http_client

            return streamable_http_client(s.url)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        if not s.command:
            raise ConfigError(f"MCP server '{server.name}' needs a command or a url")
        import os

        env = {**os.environ, **s.env}
        params = StdioServerParameters(command=s.command, args=list(s.args), env=env,
                                       cwd=s.cwd or str(self.workspace), encoding_error_handler="replace")
        return stdio_client(params, errlog=log)

    def _register(self, server: _Server, tools: list[Any]) -> None:
        self.registry.unregister_source(f"mcp:{server.name}")
        server.tools = []
        for tool in tools:
            perm = server.settings.tools.get(tool.name, server.settings.permission)
            name = tool_name(server.name, tool.name)
            spec = ToolSpec(name=name, description=(tool.description or f"{tool.name} from MCP server {server.name}")[:1024],
                            parameters=dict(tool.input_schema or {"type": "object", "properties": {}}),
                            handler=self._handler(server.name, tool.name), source=f"mcp:{server.name}",
                            kind="generic", permission=perm, server=server.name, remote_name=tool.name)
            self.registry.register(spec, replace=True)
            server.tools.append(tool.name)

    def wait_ready(self, timeout: float) -> list[str]:
        deadline = time.monotonic() + timeout
        for server in self._servers.values():
            server.ready.wait(max(0.0, deadline - time.monotonic()))
        return [s.name for s in self._servers.values() if s.state == "starting"]

    def status(self) -> list[ServerStatus]:
        return [ServerStatus(s.name, s.state, list(s.tools), s.error, s.log_path) for s in self._servers.values()]

    def close(self) -> None:
        loop = self._loop
        if loop is None:
            return
        for server in self._servers.values():
            if server.stop is not None:
                loop.call_soon_threadsafe(server.stop.set)
        deadline = time.monotonic() + 5
        while any(s.state == "ready" for s in self._servers.values()) and time.monotonic() < deadline:
            time.sleep(0.05)
        for server in self._servers.values():
            if server.task is not None and not server.task.done():
                loop.call_soon_threadsafe(server.task.cancel)
        time.sleep(0.1)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._loop = self._thread = None

    # ---- calls ------------------------------------------------------------------------------------
    def _handler(self, server_name: str, remote: str):
        def handle(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
            return self.call(server_name, remote, args)
        return handle

    def _ensure_running(self, server: _Server) -> None:
        if server.state == "ready" and server.client is not None:
            return
        if server.state != "starting":
            self._restart(server)
        server.ready.wait(RESTART_WAIT_S)
        if server.state != "ready":
            raise ToolError(f"MCP server '{server.name}' is not available ({server.error or server.state}); "
                            f"see {server.log_path}")

    def _restart(self, server: _Server) -> None:
        assert self._loop is not None
        if server.task is not None and not server.task.done():
            self._loop.call_soon_threadsafe(server.task.cancel)
            time.sleep(0.2)
        self._launch(server)

    def call(self, server_name: str, remote: str, args: dict[str, Any]) -> dict[str, Any]:
        server = self._servers[server_name]
        if self._loop is None:
            raise ToolError("MCP is not running")
        self._ensure_running(server)
        timeout = server.settings.call_timeout_s
        future = asyncio.run_coroutine_threadsafe(server.client.call_tool(remote, args, read_timeout_seconds=timeout), self._loop)
        try:
            result = future.result(timeout + 1)
        except (FutureTimeout, TimeoutError):
            future.cancel()
            self._mark_failed(server, f"did not answer within {timeout:g} s")
            raise ToolError(f"MCP server '{server_name}' did not answer within {timeout:g} s; it will be restarted "
                            "on next use") from None
        except KeyboardInterrupt:
            future.cancel()
            raise
        except Exception as exc:  # noqa: BLE001
            text = _describe(exc)
            if "timed out" in text.lower() or "timeout" in text.lower():
                self._mark_failed(server, text)
                raise ToolError(f"MCP server '{server_name}' did not answer within {timeout:g} s; it will be "
                                "restarted on next use") from None
            self._mark_failed(server, text)
            raise ToolError(f"MCP server '{server_name}' failed: {text}. It will be restarted on next use; "
                            f"see {server.log_path}") from None
        content = _content_text(result.content)
        if result.is_error:
            raise ToolError(f"{remote} on '{server_name}' reported an error: {content}")
        data: dict[str, Any] = {"content": content}
        if getattr(result, "structured_content", None):
            data["structured"] = result.structured_content
        return data

    def _mark_failed(self, server: _Server, why: str) -> None:
        server.state, server.error = "failed", why
        server.client = None
        if server.stop is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(server.stop.set)


def _content_text(items: list[Any]) -> str:
    parts = []
    for item in items or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        elif kind == "image":
            parts.append(f"[image {getattr(item, 'mime_type', '')}]")
        elif kind == "resource":
            res = getattr(item, "resource", None)
            parts.append(getattr(res, "text", None) or f"[resource {getattr(res, 'uri', '')}]")
        else:
            parts.append(f"[{kind or 'content'}]")
    return "\n".join(parts)


def _describe(exc: BaseException) -> str:
    inner = getattr(exc, "exceptions", None)
    if inner:
        return _describe(inner[0])
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def load_mcp_json(workspace: Path) -> dict[str, McpServerSettings]:
    """Read a workspace `.mcp.json` ({"mcpServers": {name: {command, args, env, cwd?, url?}}})."""
    from pydantic import ValidationError

    path = workspace / ".mcp.json"
    try:
        from framework_core.yaml_load import load_json  # size limit, duplicate keys, errors with the line

        data = load_json(path, what="MCP server file")
    except ValueError as exc:
        raise ConfigError(f"invalid JSON: {exc}", path=str(path)) from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError("expected an object with a 'mcpServers' mapping", path=str(path))
    out: dict[str, McpServerSettings] = {}
    for name, raw in servers.items():
        if not isinstance(raw, dict):
            raise ConfigError(f"server '{name}' must be an object", path=str(path))
        fields = {k: raw[k] for k in ("command", "args", "env", "cwd", "url") if k in raw}
        try:
            out[name] = McpServerSettings(**fields)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ConfigError(f"server '{name}': {'.'.join(map(str, err['loc']))}: {err['msg']}", path=str(path)) from None
    return out

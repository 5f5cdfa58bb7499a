"""One live session with an MCP server, on the MCP loop thread: transport, handshake, listing, calls.

Built on the SDK's `ClientSession` over a JSON-RPC dispatcher we construct, so that the end of the connection
(a stdio server's process exiting, an HTTP stream closing) is known the moment it happens, and so that a
listing the SDK cannot validate as a whole can be read tool by tool.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, TextIO

from framework_core.tools.mcp_config import Launch, stdio_parameters

if TYPE_CHECKING:
    from mcp.client.session import ListRootsFnT, LoggingFnT, MessageHandlerFnT

MAX_PAGES = 100  # a server whose cursor never ends cannot hang the listing


@dataclass
class Hooks:
    """What a connection reports back (called on the MCP loop)."""

    on_log: Callable[[Any], None]  # LoggingMessageNotificationParams
    on_tools_changed: Callable[[], None]
    on_closed: Callable[[], None]
    workspace: Path
    elicit: Callable[[Any], Awaitable[Any]] | None = None  # ElicitRequestParams -> ElicitResult
    wrapper: tuple[str, ...] = ()  # argv put in front of a stdio server's command (a sandbox)
    on_http_error: Callable[[int, str], None] = lambda status, reason: None  # an http/sse answer of 4xx/5xx
    auth: Any = None  # an httpx auth for http and sse (OAuth sign-in, see mcp_oauth); None: headers only
    on_catalog_changed: Callable[[], None] = lambda: None  # resources or prompts list_changed
    roots: tuple[Path, ...] = ()  # folders offered as roots after the workspace (the server's `roots:`)


@dataclass
class Listing:
    tools: list[Any] = field(default_factory=list)  # mcp_types.Tool
    dropped: list[str] = field(default_factory=list)  # why each tool left out was left out


class Connection:
    def __init__(self, session: Any, dispatcher: Any, init: Any) -> None:
        self.session = session
        self.dispatcher = dispatcher
        self.instructions: str | None = getattr(init, "instructions", None)
        self.server_info = getattr(init, "server_info", None)
        self.protocol_version: str = getattr(init, "protocol_version", "")
        self.closed = False

    async def list_tools(self, timeout: float) -> Listing:
        """Every page of `tools/list`; a tool the SDK cannot validate is dropped with a reason, not the server."""
        import mcp_types as types
        from pydantic import ValidationError

        listing, seen = Listing(), set()
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            try:
                page = await self.session.list_tools(params=params)
                listing.tools += page.tools
                cursor = page.next_cursor
            except ValidationError:
                cursor = await self._list_raw(cursor, timeout, listing)
            if not cursor or cursor in seen:
                break
            seen.add(cursor)
        return listing

    async def _list_raw(self, cursor: str | None, timeout: float, listing: Listing) -> str | None:
        import mcp_types as types
        from pydantic import ValidationError

        opts = {"timeout": timeout, "headers": {"mcp-protocol-version": self.protocol_version}}
        raw = await self.dispatcher.send_raw_request("tools/list", {"cursor": cursor} if cursor else None, opts)
        for item in raw.get("tools") or []:
            try:
                listing.tools.append(types.Tool.model_validate(item, by_name=False))
            except ValidationError as exc:
                name = item.get("name") if isinstance(item, dict) else None
                err = exc.errors()[0]
                listing.dropped.append(f"tool '{name or '?'}' left out: its definition is invalid "
                                       f"({'.'.join(map(str, err['loc']))}: {err['msg']})")
        nxt = raw.get("nextCursor")
        return nxt if isinstance(nxt, str) else None

    async def call(self, name: str, args: dict[str, Any], timeout: float,
                   progress: Callable[[float, float | None, str | None], Awaitable[None]] | None) -> Any:
        import mcp_types as types

        request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=args))
        return await self.session.send_request(request, types.CallToolResult, request_read_timeout_seconds=timeout,
                                               progress_callback=progress)


@contextlib.asynccontextmanager
async def connect(launch: Launch, hooks: Hooks, log: TextIO, startup_timeout: float) -> AsyncIterator[Connection]:
    """Start (stdio) or reach (http, sse) a server and complete the handshake."""
    from mcp.client.session import ClientSession

    from framework_core import __version__

    import mcp_types as types

    async with contextlib.AsyncExitStack() as stack:
        read, write = await stack.enter_async_context(_transport(launch, hooks, log))
        dispatcher = _dispatcher_class()(read, write, on_end=hooks.on_closed)
        session = ClientSession(
            dispatcher=dispatcher, read_timeout_seconds=startup_timeout,
            client_info=types.Implementation(name="laca", title="LACA", version=__version__),
            logging_callback=_logger(hooks), message_handler=_messages(hooks),
            list_roots_callback=_roots(hooks.workspace, hooks.roots), **_elicitation(hooks))
        await stack.enter_async_context(session)
        init = await session.initialize()
        yield Connection(session, dispatcher, init)


def _transport(launch: Launch, hooks: Hooks, log: TextIO) -> Any:
    if launch.transport == "stdio":
        from mcp.client.stdio import stdio_client

        return stdio_client(stdio_parameters(launch, hooks.wrapper), errlog=log)
    if launch.transport == "sse":
        from mcp.client.sse import sse_client

        return sse_client(launch.url, headers=dict(launch.headers) or None, auth=hooks.auth)
    return _streamable_http(launch, hooks)


@contextlib.asynccontextmanager
async def _streamable_http(launch: Launch, hooks: Hooks) -> AsyncIterator[Any]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async def watch(response: Any) -> None:  # the SDK turns a 401 into "Server returned an error response"
        if response.status_code >= 400:
            hooks.on_http_error(response.status_code, response.reason_phrase or "")

    # The SDK's own defaults: 30 s to connect and write, 300 s to read (a server may hold a stream open).
    async with httpx2.AsyncClient(headers=dict(launch.headers), timeout=httpx2.Timeout(30.0, read=300.0),
                                  event_hooks={"response": [watch]}, auth=hooks.auth) as http:
        async with streamable_http_client(launch.url, http_client=http) as streams:
            yield streams


def _dispatcher_class() -> type:
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

    class WatchedDispatcher(JSONRPCDispatcher):
        """Says when its receive loop ends: the connection is gone (a stdio server exited, a stream closed)."""

        def __init__(self, read: Any, write: Any, *, on_end: Callable[[], None]) -> None:
            super().__init__(read, write)
            self._on_end = on_end

        async def run(self, *args: Any, **kwargs: Any) -> None:
            try:
                await super().run(*args, **kwargs)
            finally:
                self._on_end()

    return WatchedDispatcher


def _logger(hooks: Hooks) -> LoggingFnT:
    async def log(params: Any) -> None:
        hooks.on_log(params)
    return log


def _messages(hooks: Hooks) -> MessageHandlerFnT:
    import mcp_types as types

    async def handle(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            hooks.on_tools_changed()
        elif isinstance(message, (types.ResourceListChangedNotification, types.PromptListChangedNotification)):
            hooks.on_catalog_changed()
    return handle


def _roots(workspace: Path, extra: tuple[Path, ...] = ()) -> ListRootsFnT:
    import mcp_types as types

    async def roots(context: Any) -> Any:
        folders = dict.fromkeys([workspace.resolve(), *extra])
        return types.ListRootsResult(roots=[types.Root(uri=p.as_uri(), name=p.name or str(p)) for p in folders])
    return roots


def _elicitation(hooks: Hooks) -> dict[str, Any]:
    """Offered only when someone can answer it: the SDK advertises the capability when a callback is given."""
    if hooks.elicit is None:
        return {}
    elicit = hooks.elicit

    async def answer(context: Any, params: Any) -> Any:
        return await elicit(params)
    return {"elicitation_callback": answer}

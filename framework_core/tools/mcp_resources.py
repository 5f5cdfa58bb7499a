"""MCP resources, prompts and roots: what a server offers besides tools, and the extra folders it is offered.

At connect (and again when the server says its list changed) the resources, resource templates and prompts of a
server that advertises the `resources` or `prompts` capability are listed into its `Catalog`. The user attaches
a resource with `@server:uri` and runs a prompt as `/mcp__server__prompt` (the UI reaches both through the
façade); the model reads a resource, a link in a result included, with the tool `mcp__<server>__readMcpResource`,
registered with the server's tools and under the server's `permission`. Text is bounded by the output budget;
images go as images, as a tool's do. Roots: the workspace, then the folders of the server's `roots:` setting.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from framework_core.errors import ToolError
from framework_core.tools.mcp_names import tool_name
from framework_core.tools.mcp_state import describe

if TYPE_CHECKING:
    from framework_core.config.models import McpServerSettings
    from framework_core.tools.base import ToolContext, ToolSpec
    from framework_core.tools.mcp import McpManager
    from framework_core.tools.mcp_state import _Server

MAX_PAGES = 100  # a server whose cursor never ends cannot hang the listing
READER = "readMcpResource"  # the model's tool, per server: mcp__<server>__readMcpResource
GRACE_S = 5.0  # beyond a server's call timeout, before the main thread stops waiting
LISTED = 10  # resources named in the reader tool's description


@dataclass(frozen=True)
class ResourceInfo:
    """A resource (or, with `template`, a URI template) a server lists."""

    server: str
    uri: str
    name: str
    description: str = ""
    mime_type: str = ""
    template: bool = False


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class PromptInfo:
    """A prompt a server offers; `command` is its slash command's name, `mcp__<server>__<prompt>`."""

    server: str
    name: str
    description: str = ""
    arguments: tuple[PromptArgument, ...] = ()

    @property
    def command(self) -> str:
        return tool_name(self.server, self.name)


@dataclass(frozen=True)
class PromptText:
    """A prompt's messages as the text of one user message, and what could not be carried as text."""

    text: str
    left_out: tuple[str, ...] = ()


@dataclass
class Catalog:
    has_resources: bool = False
    resources: list[ResourceInfo] = field(default_factory=list)
    prompts: list[PromptInfo] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # why a listing failed


# ---- listing (on the MCP loop) ----------------------------------------------------------------------
async def list_catalog(name: str, session: Any, timeout: float) -> Catalog:
    """What the server's capabilities say it has; a listing that fails or takes over `timeout` seconds is a
    note, never the server's end."""
    caps = getattr(session, "server_capabilities", None)
    catalog = Catalog(has_resources=getattr(caps, "resources", None) is not None)
    if catalog.has_resources:
        try:
            for item in await _pages(session.list_resources, "resources", timeout):
                catalog.resources.append(ResourceInfo(name, item.uri, item.title or item.name, item.description or "",
                                                      item.mime_type or ""))
        except Exception as exc:  # noqa: BLE001 - reported with the server's state
            catalog.notes.append(f"listing its resources failed: {describe(exc)}")
        try:
            for item in await _pages(session.list_resource_templates, "resource_templates", timeout):
                catalog.resources.append(ResourceInfo(name, item.uri_template, item.title or item.name,
                                                      item.description or "", item.mime_type or "", template=True))
        except Exception:  # noqa: BLE001 - templates are optional; many servers answer "method not found"
            pass
    if getattr(caps, "prompts", None) is not None:
        try:
            for item in await _pages(session.list_prompts, "prompts", timeout):
                args = tuple(PromptArgument(a.name, a.description or "", bool(a.required))
                             for a in item.arguments or [])
                catalog.prompts.append(PromptInfo(name, item.name, item.description or "", args))
        except Exception as exc:  # noqa: BLE001
            catalog.notes.append(f"listing its prompts failed: {describe(exc)}")
    return catalog


async def _pages(fetch: Callable[..., Awaitable[Any]], attr: str, timeout: float) -> list[Any]:
    import mcp_types as types

    items: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = await asyncio.wait_for(fetch(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None),
                                      timeout)
        items += getattr(page, attr)
        cursor = page.next_cursor
        if not cursor or cursor in seen:
            break
        seen.add(cursor)
    return items


def root_paths(settings: "McpServerSettings", workspace: Path) -> tuple[Path, ...]:
    """The existing folders of a server's `roots:` setting: `~/…` in the home, a relative path in the workspace."""
    return tuple(dict.fromkeys(p for p in _roots(settings, workspace) if p.is_dir()))


def root_notes(name: str, settings: "McpServerSettings", workspace: Path) -> list[str]:
    """A configured root that is not a folder is not offered: said once, at start."""
    return [f"MCP server '{name}': root {raw} is not a folder" + (f" ({path})" if str(path) != raw else "")
            + "; it is not offered to the server"
            for raw, path in zip(settings.roots, _roots(settings, workspace), strict=True) if not path.is_dir()]


def _roots(settings: "McpServerSettings", workspace: Path) -> list[Path]:
    out = []
    for raw in settings.roots:
        path = Path(os.path.expanduser(raw))
        out.append((path if path.is_absolute() else workspace / path).resolve())
    return out


# ---- reading, prompts, the model's tool (from the main thread) ------------------------------------------
class Resources:
    """The manager's resources and prompts: listings of ready servers, reads, prompts, the reader tool."""

    def __init__(self, manager: "McpManager") -> None:
        self.manager = manager

    def _ready(self) -> list["_Server"]:
        return [s for s in self.manager._servers.values() if s.state == "ready" and s.catalog is not None]

    def resources(self) -> list[ResourceInfo]:
        return [r for s in self._ready() for r in s.catalog.resources]

    def prompts(self) -> list[PromptInfo]:
        return [p for s in self._ready() for p in s.catalog.prompts]

    def _run(self, server: "_Server", make: Callable[[Any], Awaitable[Any]], what: str) -> Any:
        """Run a request on the loop and wait for it; any failure is a ToolError naming the server."""
        import concurrent.futures

        self.manager.ensure_running(server)
        timeout, conn = server.settings.call_timeout_s, server.conn
        if conn is None:
            raise ToolError(f"MCP server '{server.name}' is not available ({server.error or server.state})")
        future = asyncio.run_coroutine_threadsafe(asyncio.wait_for(make(conn.session), timeout), self.manager.loop)
        try:
            return future.result(timeout + GRACE_S)
        except (concurrent.futures.TimeoutError, asyncio.TimeoutError):
            future.cancel()
            raise ToolError(f"MCP server '{server.name}' did not answer {what} within {timeout:g} s") from None
        except KeyboardInterrupt:
            future.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is a sentence for the user or the model
            raise ToolError(f"MCP server '{server.name}' could not {what}: {_error_text(exc, server)}") from None

    def server(self, name: str) -> "_Server":
        server = self.manager._servers.get(name)
        if server is None:
            known = ", ".join(sorted(self.manager._servers)) or "none"
            raise ToolError(f"no MCP server named '{name}' (configured: {known})")
        return server

    def read(self, server_name: str, uri: str, ctx: "ToolContext | None" = None,
             budget: int | None = None) -> dict[str, Any]:
        """A resource as a tool result: {"content": text within the output budget, "cut"?, "images"?}."""
        from framework_core.tools.mcp_calls import keep_image
        from framework_core.tools.mcp_content import resource_contents
        from framework_core.tools.result_budget import DEFAULT_BUDGET, bound, budget_for_window

        server = self.server(server_name)
        result = self._run(server, lambda session: session.read_resource(uri), f"read {uri}")
        converted = resource_contents(result.contents)
        configured = (server.settings.output_budget_chars or budget
                      or (ctx.settings.output_budget_chars if ctx else DEFAULT_BUDGET))
        save = ctx.saver("mcp-resource") if ctx is not None else self.manager.save
        bounded = bound(converted.text, budget_for_window(configured, self.manager.window()), save)
        data: dict[str, Any] = {"content": bounded.text or "(the resource is empty)"}
        if bounded.cut:
            data["cut"] = "cut: " + bounded.summary()
        if converted.images:
            folder = ctx.output_folder() if ctx is not None else self.manager.outputs_dir
            data["images"] = [keep_image(image, folder) for image in converted.images]
        return data

    def get_prompt(self, server_name: str, name: str, args: dict[str, str]) -> PromptText:
        server = self.server(server_name)
        result = self._run(server, lambda session: session.get_prompt(name, args or None), f"give prompt '{name}'")
        return prompt_text(result.messages)

    def register_reader(self, server: "_Server") -> None:
        """The model's way to read this server's resources, when it has any (called after its tools are in)."""
        if server.catalog is None or not server.catalog.has_resources or READER in server.tools:
            return  # a tool of the server so named keeps its name
        spec = reader_spec(server, self._reader(server.name))
        taken = self.manager.registry.get(spec.name)
        if taken is not None and taken.source != spec.source:
            server.notes.append(f"{READER} not offered: its name {spec.name} is taken by {taken.source}")
            return
        self.manager.registry.register(spec, replace=True)  # again after list_changed: the listing it names

    def _reader(self, server_name: str) -> Callable[[dict[str, Any], "ToolContext"], dict[str, Any]]:
        def handle(args: dict[str, Any], ctx: "ToolContext") -> dict[str, Any]:
            return self.read(server_name, str(args.get("uri", "")), ctx)
        return handle


def reader_spec(server: "_Server", handler: Any) -> "ToolSpec":
    from framework_core.tools.base import ToolSpec

    permission = server.settings.tools.get(READER, server.settings.permission)
    listed = [r for r in server.catalog.resources if not r.template] if server.catalog is not None else []
    some = "; ".join(f"{r.uri} ({r.name})" if r.name and r.name != r.uri else r.uri for r in listed[:LISTED])
    more = f" and {len(listed) - LISTED} more" if len(listed) > LISTED else ""
    return ToolSpec(
        name=tool_name(server.name, READER), source=f"mcp:{server.name}", kind="generic", permission=permission,
        server=server.name, remote_name=READER, handler=handler,
        description=(f"Read a resource of MCP server '{server.name}' by its URI: a resource link in a result of its "
                     "tools, or a resource it lists. Text comes back within the output budget; images as images."
                     + (f" It lists: {some}{more}." if some else "")),
        parameters={"type": "object", "properties": {"uri": {"type": "string", "description": "The resource's URI, "
                                                             "exactly as the server gave it"}}, "required": ["uri"]})


def prompt_text(messages: list[Any]) -> PromptText:
    """A prompt's messages as one user message: text (embedded text resources included) in order, an
    assistant's part marked as such; images, audio and binary parts are left out and named."""
    from framework_core.estimate import base64_size
    from framework_core.tools.mcp_content import embedded_text
    from framework_core.wording import size_words

    parts: list[str] = []
    left_out: list[str] = []
    for n, message in enumerate(messages or [], start=1):
        content = message.content
        kind = getattr(content, "type", "")
        if kind == "text":
            text = str(content.text)
        elif kind == "resource" and getattr(content.resource, "text", None) is not None:
            text = embedded_text(content.resource)
        elif kind == "resource_link":
            text = f"[resource link] {content.name}: {content.uri}"
        else:
            mime = getattr(content, "mime_type", None) or getattr(getattr(content, "resource", None), "mime_type", "")
            size = base64_size(getattr(content, "data", ""))
            left_out.append(f"message {n}: {kind or 'unknown'} {mime or ''}".rstrip()
                            + (f" ({size_words(size)})" if size else ""))
            continue
        parts.append(f"[assistant]\n{text}" if message.role == "assistant" else text)
    return PromptText("\n\n".join(parts), tuple(left_out))


def _error_text(exc: BaseException, server: "_Server") -> str:
    from mcp.shared.exceptions import MCPError

    if isinstance(exc, MCPError):
        return str(exc.error.message)
    return describe(exc, server)

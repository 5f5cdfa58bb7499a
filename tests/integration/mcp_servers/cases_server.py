"""An MCP server with every case the client must handle, built on the SDK's low-level `Server`.

Tools come in pages of PAGE; `add_tool` adds one and sends `tools/list_changed`; a task-only tool, a tool
with a broken schema, one whose schema is not JSON Schema and one with a strict schema (`count`) are listed
too. Results cover text, errors (isError and JSON-RPC), progress, images, audio, resource links, embedded
resources, structured content, server logs, roots and elicitation. Resources: a text note, a large text, a PNG
and a template `mem://notes/{name}`; `add_resource` adds one and sends `resources/list_changed`; `link_note`
returns a link to the note. Prompts: `greet` (arguments `name`, required, and `style`) and `picture` (text and
an image).
`pid` gives the process id, so a test can kill exactly this server.

Speaks stdio by default; `--http PORT` serves Streamable HTTP at http://127.0.0.1:PORT/mcp, and with
CASES_TOKEN set in its environment it answers 401 unless `Authorization: Bearer <CASES_TOKEN>` is sent.
"""

from __future__ import annotations

import base64
import os
import struct
import sys
import zlib
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.shared.exceptions import MCPError

PAGE = 4
INSTRUCTIONS = "Call echo to repeat text. Prefer big_text for large outputs."
_OBJ = {"type": "object", "properties": {}}


def png(width: int = 2, height: int = 2, pad: int = 0) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"") + b"\x00" * pad)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def tool(name: str, description: str, props: dict[str, Any] | None = None, **extra: Any) -> types.Tool:
    schema = {"type": "object", "properties": props or {}}
    return types.Tool(name=name, description=description, input_schema=schema, **extra)


TOOLS = [
    tool("echo", "Repeat the text.", {"text": {"type": "string", "description": "what to repeat"}}),
    tool("fail", "A tool error (isError)."),
    tool("rpc_error", "A JSON-RPC error for the call."),
    tool("huge_rpc_error", "A JSON-RPC error whose message is 200,000 characters."),
    tool("slow", "Report progress, then answer.", {"steps": {"type": "integer"}, "delay": {"type": "number"}}),
    tool("image", "A small PNG."),
    tool("big_image", "A PNG over the size cap."),
    tool("audio", "A WAV clip."),
    tool("link", "A resource link."),
    tool("embedded", "An embedded text resource and a binary one."),
    tool("big_text", "Many lines, also as structured content.", {"lines": {"type": "integer"}}),
    tool("structured_only", "Structured content and no text."),
    tool("add_tool", "Add the tool 'added' and say so."),
    tool("env", "The value of an environment variable.", {"name": {"type": "string"}}),
    tool("env_names", "The names in the environment."),
    tool("roots", "The client's roots."),
    tool("ask", "Ask the user for a name."),
    tool("pid", "The server's process id."),
    tool("link_note", "A resource link to the note mem://notes/today."),
    tool("add_resource", "Add the resource mem://notes/added and say so."),
    tool("log_error", "Log an error, then answer."),
    tool("do.thing", "A name with a dot."),
    tool("do thing", "A name with a space."),
    tool("do_thing", "A plain name."),
    tool("task_only", "Runs only as a task.", execution=types.ToolExecution(task_support="required")),
    types.Tool(name="count", description="Say the count (a strict schema).",
               input_schema={"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}},
                             "required": ["n"], "additionalProperties": False}),
    types.Tool(name="odd_schema", description="A schema that is an object but not JSON Schema.",
               input_schema={"type": "object", "properties": {"x": {"type": "nope"}}}),
]
added: list[types.Tool] = []


async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    everything = TOOLS + added
    start = int(params.cursor) if params and params.cursor else 0
    nxt = str(start + PAGE) if start + PAGE < len(everything) else None
    return types.ListToolsResult(tools=everything[start:start + PAGE], next_cursor=nxt)


def text(value: str) -> list[types.ContentBlock]:
    return [types.TextContent(text=value)]


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    name, args = params.name, params.arguments or {}
    session = ctx.session
    if name == "echo":
        await session.send_log_message("info", f"echo called with {args.get('text')!r}", logger="cases")
        return types.CallToolResult(content=text(str(args.get("text", ""))))
    if name == "fail":
        return types.CallToolResult(content=text("the tool failed on purpose"), is_error=True)
    if name == "rpc_error":
        raise MCPError(code=-32000, message="rpc failure on purpose")
    if name == "huge_rpc_error":
        raise MCPError(code=-32000, message="HEAD " + "x" * 200_000 + " TAIL")
    if name == "slow":
        steps = int(args.get("steps", 3))
        for i in range(1, steps + 1):
            await session.report_progress(i, steps, f"step {i}")
            await anyio.sleep(float(args.get("delay", 0.05)))  # a tool that takes its time, step by step
        return types.CallToolResult(content=text("slow done"))
    if name in ("image", "big_image"):
        data = png() if name == "image" else png(pad=2_000_000)
        return types.CallToolResult(content=[types.TextContent(text="here is the picture"),
                                             types.ImageContent(data=b64(data), mime_type="image/png")])
    if name == "audio":
        audio = types.AudioContent(data=b64(b"RIFF" + b"\x00" * 4000), mime_type="audio/wav")
        return types.CallToolResult(content=[audio])
    if name == "link":
        return types.CallToolResult(content=[types.ResourceLink(
            uri="file:///srv/report.pdf", name="report.pdf", title="Quarterly report",
            description="The figures for Q3", mime_type="application/pdf", size=123_456)])
    if name == "embedded":
        return types.CallToolResult(content=[
            types.EmbeddedResource(resource=types.TextResourceContents(uri="mem://notes.txt", mime_type="text/plain",
                                                                       text="embedded notes")),
            types.EmbeddedResource(resource=types.BlobResourceContents(uri="mem://blob.bin", blob=b64(b"\x00" * 3000),
                                                                       mime_type="application/octet-stream"))])
    if name == "big_text":
        lines = [f"row {i:06d} " + "y" * 60 for i in range(int(args.get("lines", 50_000)))]
        return types.CallToolResult(content=text("\n".join(lines)), structured_content={"rows": lines})
    if name == "structured_only":
        return types.CallToolResult(content=[], structured_content={"answer": 42})
    if name == "add_tool":
        if not added:
            added.append(tool("added", "Added while running."))
        await session.send_tool_list_changed()
        return types.CallToolResult(content=text("added"))
    if name == "env":
        return types.CallToolResult(content=text(os.environ.get(str(args.get("name")), "(unset)")))
    if name == "env_names":
        return types.CallToolResult(content=text(" ".join(sorted(os.environ))))
    if name == "roots":
        roots = await session.list_roots()
        return types.CallToolResult(content=text(" ".join(str(r.uri) for r in roots.roots)))
    if name == "ask":
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        answer = await session.elicit_form("What is your name?", schema)
        return types.CallToolResult(content=text(f"{answer.action}: {answer.content}"))
    if name == "count":
        return types.CallToolResult(content=text(f"count is {args['n']}"))
    if name == "link_note":
        return types.CallToolResult(content=[types.TextContent(text="the note is linked below"), types.ResourceLink(
            uri="mem://notes/today", name="today", mime_type="text/plain")])
    if name == "add_resource":
        if not extra_resources:
            extra_resources.append(types.Resource(uri="mem://notes/added", name="added", mime_type="text/plain"))
        await session.send_resource_list_changed()
        return types.CallToolResult(content=text("added"))
    if name == "pid":
        return types.CallToolResult(content=text(str(os.getpid())))
    if name == "log_error":
        await session.send_log_message("error", "the disk\nis on fire", logger="cases")
        return types.CallToolResult(content=text("logged"))
    if name in ("do.thing", "do thing", "do_thing", "added"):
        return types.CallToolResult(content=text(f"called {name}"))
    raise MCPError(code=-32602, message=f"unknown tool {name}")


NOTE = "Buy kiwis. The meeting moved to Thursday."
RESOURCES = [types.Resource(uri="mem://notes/today", name="today", description="Today's note", mime_type="text/plain"),
             types.Resource(uri="mem://big", name="big", description="Many lines", mime_type="text/plain"),
             types.Resource(uri="mem://picture.png", name="picture", mime_type="image/png")]
extra_resources: list[types.Resource] = []


async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=RESOURCES + extra_resources)


async def list_templates(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=[types.ResourceTemplate(
        uri_template="mem://notes/{name}", name="note", description="A note by name", mime_type="text/plain")])


async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    uri = str(params.uri)
    if uri == "mem://notes/today":
        body: types.TextResourceContents | types.BlobResourceContents = types.TextResourceContents(
            uri=uri, mime_type="text/plain", text=NOTE)
    elif uri == "mem://big":
        body = types.TextResourceContents(uri=uri, text="\n".join(f"line {i:06d} " + "z" * 60 for i in range(20_000)))
    elif uri == "mem://picture.png":
        body = types.BlobResourceContents(uri=uri, mime_type="image/png", blob=b64(png()))
    elif uri.startswith("mem://notes/"):
        body = types.TextResourceContents(uri=uri, mime_type="text/plain", text=f"the note called {uri[12:]}")
    else:
        raise MCPError(code=-32002, message=f"resource not found: {uri}")
    return types.ReadResourceResult(contents=[body])


PROMPTS = [types.Prompt(name="greet", description="Greet someone", arguments=[
               types.PromptArgument(name="name", description="who", required=True),
               types.PromptArgument(name="style", description="how")]),
           types.Prompt(name="picture", description="Text and a picture")]


async def list_prompts(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=PROMPTS)


async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    args = params.arguments or {}
    if params.name == "greet":
        style = args.get("style") or "plainly"
        return types.GetPromptResult(messages=[types.PromptMessage(role="user", content=types.TextContent(
            text=f"Greet {args.get('name')} {style}, please."))])
    if params.name == "picture":
        return types.GetPromptResult(messages=[
            types.PromptMessage(role="user", content=types.TextContent(text="Describe this picture.")),
            types.PromptMessage(role="user", content=types.ImageContent(data=b64(png()), mime_type="image/png"))])
    raise MCPError(code=-32602, message=f"unknown prompt {params.name}")


async def bad_schema(ctx: Any, call_next: Any) -> Any:
    """Adds a tool with a broken input schema to the first page, past the SDK's own validation."""
    result = await call_next(ctx)
    if ctx.method == "tools/list" and not (ctx.params or {}).get("cursor"):
        result["tools"].append({"name": "bad_schema", "inputSchema": "not a schema"})
    return result


server = Server("cases-test-server", version="1.0", instructions=INSTRUCTIONS, on_list_tools=list_tools,
                on_call_tool=call_tool, on_list_resources=list_resources, on_list_resource_templates=list_templates,
                on_read_resource=read_resource, on_list_prompts=list_prompts, on_get_prompt=get_prompt)
server.middleware.append(bad_schema)


async def stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        options = NotificationOptions(tools_changed=True, resources_changed=True, prompts_changed=True)
        await server.run(read, write, server.create_initialization_options(options))


def http(port: int) -> None:
    import uvicorn

    app = server.streamable_http_app()
    token = os.environ.get("CASES_TOKEN")

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and token and headers.get(b"authorization") != f"Bearer {token}".encode():
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"missing or wrong token"})
            return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    print("cases-test-server starting (this line goes to the log)", file=sys.stderr, flush=True)
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        http(int(sys.argv[2]))
    else:
        anyio.run(stdio)

"""A stdio MCP server whose one tool's description is read, at start, from `description.txt` in its working
directory (the workspace): a test changes the file to see a changed definition held back."""

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("described-server")
DESCRIPTION = Path("description.txt").read_text(encoding="utf-8").strip()


@server.tool(description=DESCRIPTION)
def echo(text: str) -> str:
    return text


if __name__ == "__main__":
    print("described-server starting", file=sys.stderr, flush=True)
    server.run("stdio")

"""A tiny stdio MCP server for tests: `nap` sleeps (to test timeouts), `echo` answers, `fail` errors."""

import sys
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("slow-test-server")


@server.tool()
def nap(seconds: float) -> str:
    """Sleep for a while, then answer."""
    time.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def echo(text: str) -> str:
    """Repeat the text."""
    print(f"echo called with {text!r}", file=sys.stderr, flush=True)
    return text


@server.tool()
def fail() -> str:
    """Always fails."""
    raise RuntimeError("this tool always fails")


if __name__ == "__main__":
    print("slow-test-server starting (this line goes to the log)", file=sys.stderr, flush=True)
    server.run("stdio")

"""A tiny MCP server for tests: `nap` sleeps (to test timeouts), `echo` answers, `fail` errors.

Speaks stdio by default; `--http PORT` serves Streamable HTTP at http://127.0.0.1:PORT/mcp instead, and
`--sse PORT` the older SSE transport at http://127.0.0.1:PORT/sse.
"""

import os
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
    time.sleep(float(os.environ.get("SLOW_START_S", "0")))  # a server that takes its time to come up
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")

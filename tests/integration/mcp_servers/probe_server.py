"""A stdio MCP server that reports where it runs: its capabilities, namespaces and environment, and whether a
file outside the workspace can be written. It only reads /proc and tries one write in a folder the test names."""

import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("probe-server")


@server.tool()
def probe(outside: str) -> str:
    """Report CapEff, NoNewPrivs, the user namespace, the environment's names and a write outside the workspace."""
    status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    try:
        with open(os.path.join(outside, "planted.txt"), "w") as fh:
            fh.write("x")
        wrote = "yes"
    except OSError as exc:
        wrote = f"no ({exc.strerror})"
    return "\n".join([f"CapEff={status['CapEff'].strip()}", f"NoNewPrivs={status['NoNewPrivs'].strip()}",
                      f"userns={os.readlink('/proc/self/ns/user')}", f"env={','.join(sorted(os.environ))}",
                      f"wrote_outside={wrote}"])


if __name__ == "__main__":
    print("probe-server starting", file=sys.stderr, flush=True)
    server.run("stdio")

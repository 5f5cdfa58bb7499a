"""A stdio MCP server that reports where it runs: its capabilities, namespaces and environment, and whether a
file outside the workspace can be written. It only reads /proc and tries one write in a folder the test names."""

import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("probe-server")


@server.tool()
def probe(outside: str, inside: str = "") -> str:
    """Report CapEff, NoNewPrivs, the user namespace, the environment's names, a write outside the workspace
    and one in the workspace (`inside`, a file name there)."""
    status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    return "\n".join([f"CapEff={status['CapEff'].strip()}", f"NoNewPrivs={status['NoNewPrivs'].strip()}",
                      f"userns={os.readlink('/proc/self/ns/user')}", f"env={','.join(sorted(os.environ))}",
                      f"wrote_outside={_try_write(os.path.join(outside, 'planted.txt'))}",
                      f"wrote_inside={_try_write(inside) if inside else 'not tried'}"])


def _try_write(path: str) -> str:
    try:
        with open(path, "w") as fh:
            fh.write("x")
        return "yes"
    except OSError as exc:
        return f"no ({exc.strerror})"


if __name__ == "__main__":
    print("probe-server starting", file=sys.stderr, flush=True)
    server.run("stdio")

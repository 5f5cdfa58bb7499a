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


@server.tool()
def home_probe(secret: str) -> str:
    """Write into ~/.cache and ~/.npm (as npx -y and uvx do on their first run) and try to read `secret`."""
    out = []
    for rel in (".cache/probe/x", ".npm/_cacache/x"):
        path = os.path.join(os.path.expanduser("~"), rel)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as fh:
                fh.write("cached")
            out.append(f"{rel}=written")
        except OSError as exc:
            out.append(f"{rel}=failed ({exc.strerror})")
    try:
        with open(secret) as fh:
            out.append(f"secret={fh.read().strip()}")
    except OSError as exc:
        out.append(f"secret=unreadable ({exc.strerror})")
    out.append(f"env={','.join(sorted(os.environ))}")
    return "\n".join(out)


if __name__ == "__main__":
    print("probe-server starting", file=sys.stderr, flush=True)
    server.run("stdio")

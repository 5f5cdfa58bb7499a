"""Names MCP tools get in LACA's registry: `mcp__<server>__<tool>`, valid for every provider, unique and stable.

Provider APIs accept tool names of `[A-Za-z0-9_-]`, at most 64 characters. A name that had to change to fit
(`do.thing`, `do thing`, a server `my.srv`, a long name) gets a short hash of the original names, so two
originals never share a name and each keeps the same one whatever order the servers start in.
"""

from __future__ import annotations

import hashlib
import re

MAX_LEN = 64
_BAD = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    plain = f"mcp__{server}__{tool}"
    clean = _BAD.sub("_", plain)
    if clean == plain and len(clean) <= MAX_LEN:
        return clean
    digest = hashlib.sha1(f"{server}\0{tool}".encode("utf-8", errors="surrogatepass")).hexdigest()[:8]
    return f"{clean[:MAX_LEN - len(digest) - 1]}_{digest}"

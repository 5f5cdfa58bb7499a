"""Tools: one registry of specs (built-in, declared in tools.yaml, MCP) and one execution path (TEPS)."""

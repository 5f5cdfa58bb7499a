"""Types the policy shares with the rest of LACA. They live here so the policy imports only itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Literal

#: How the policy looks at a call: "bash" classifies parameters["command"]; "read"/"write" check the path;
#: "generic" goes by the tool's configured permission (declared and MCP tools).
ToolKind = Literal["bash", "read", "write", "generic"]
#: A configured permission: "always" runs without asking, "ask" asks, "never" refuses.
Permission = Literal["always", "ask", "never"]


class PolicyError(ValueError):
    """A request the policy cannot take (a grant that would be too wide, no such grant); the message says why.
    Callers outside the policy turn it into LACA's own errors."""


@dataclass(frozen=True)
class GrantOption:
    """What `a` would remember. Never wider than the request: an exact command, an explicit prefix, a tool."""

    kind: Literal["exact_command", "command_prefix", "tool", "path"]
    value: str  # the command, prefix, tool name or path
    tool_name: str
    label: str  # shown to the user before it is saved, e.g. "exactly: git push origin main"


def unique_prefix(key: str, names: Collection[str]) -> str | None:
    """The long option `key` names, whole or as GNU getopt_long's unique abbreviation; None when unknown or
    ambiguous."""
    if key in names:
        return key
    found = [k for k in names if k.startswith(key)]
    return found[0] if len(found) == 1 and key else None

"""What /tools and /mcp show: the tools with their source and permission, one tool's description and
parameters, the MCP servers' state. Names and descriptions can come from an MCP server: shown safely."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from framework_core.ui.safe_text import visible

if TYPE_CHECKING:
    from framework_core.tools.base import ToolSpec
    from framework_core.tools.mcp_state import ServerStatus

_POLICY = {"bash": "policy (safe runs, others ask)", "read": "policy (runs, flags outside)", "write": "asks",
           "generic": "asks"}


def _permission(spec: "ToolSpec") -> str:
    return spec.permission or _POLICY[spec.kind]


def _origin(spec: "ToolSpec") -> str:
    """Where a tool comes from, with its own name on its MCP server."""
    if spec.server:
        return f"mcp:{visible(spec.server)} · {visible(spec.remote_name or spec.name)}"
    return spec.source


def tool_table(tools: list["ToolSpec"]) -> Table:
    table = Table("tool", "source", "permission", "description", box=None)
    table.columns[0].no_wrap = True  # a name is never cut; the description gives way, with an ellipsis
    for spec in sorted(tools, key=lambda s: (s.source != "builtin", s.name)):
        first = (spec.description.splitlines() or [""])[0]
        table.add_row(spec.name, _origin(spec), _permission(spec),  # cut at the column's width, with an ellipsis
                      Text(visible(first), no_wrap=True, overflow="ellipsis"))
    return table


def tool_detail(spec: "ToolSpec | None", name: str, tools: list["ToolSpec"]) -> Any:
    """One tool's description and parameters; `spec` is None when no tool has that name (close ones are named)."""
    if spec is None:
        close = sorted(s.name for s in tools if name.lower() in s.name.lower())
        hint = f" Did you mean: {', '.join(close[:5])}?" if close else " /tools lists them."
        return Text(f"No tool named '{visible(name)}'.{hint}", style="laca.warn")
    head = Text(spec.name, style="bold")
    head.append(f"  ({_origin(spec)}; permission: {_permission(spec)})", style="laca.dim")
    params = Table("parameter", "type", "required", "description", box=None, title="Parameters",
                   title_justify="left")
    for row in _rows(spec.parameters or {}):
        params.add_row(*(visible(cell) for cell in row))
    body = params if params.row_count else Text("No parameters.", style="laca.dim")
    return Group(head, Text(visible(spec.description.strip())), body)


def _rows(schema: dict[str, Any], prefix: str = "", depth: int = 0) -> list[tuple[str, str, str, str]]:
    """(name, type, required, description) for each parameter; the fields of an object (or of an array's
    objects) follow it as `name.field` (`name[].field`), three levels deep at most."""
    rows = []
    required = set(schema.get("required") or [])
    for pname, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        described = str(prop.get("description") or "")
        if "default" in prop:
            described += f"{' ' if described else ''}(default: {json.dumps(prop['default'], ensure_ascii=False)})"
        name = f"{prefix}{pname}"
        rows.append((name, _type_of(prop), "yes" if pname in required else "", described))
        inner = prop.get("items") if prop.get("type") == "array" else prop
        if depth < 2 and isinstance(inner, dict) and isinstance(inner.get("properties"), dict):
            rows += _rows(inner, f"{name}[]." if inner is not prop else f"{name}.", depth + 1)
    return rows


def _type_of(prop: dict[str, Any]) -> str:
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = " | ".join(map(str, kind))
    if "enum" in prop:
        return f"{kind or 'one of'}: {', '.join(map(str, prop['enum']))}"
    if kind == "array" and isinstance(prop.get("items"), dict):
        return f"array of {_type_of(prop['items'])}"
    return str(kind or ("one of several" if "anyOf" in prop or "oneOf" in prop else "any"))


def mcp_table(statuses: list["ServerStatus"]) -> Any:
    table = Table("server", "state", "tools", "note", box=None)
    notes: list[Text] = []
    for st in statuses:
        note = st.error or str(st.log_path)
        if st.instructions:
            note += " · instructions in the system prompt"
        table.add_row(visible(st.name), st.state, visible(", ".join(st.tools)) or "-", visible(note))
        notes += [Text(f"  {visible(st.name)}: {visible(n)}", style="laca.dim") for n in st.notes]
    return Group(table, *notes)

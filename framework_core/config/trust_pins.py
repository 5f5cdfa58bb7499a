"""An MCP server's tool definitions, pinned when it is trusted.

A workspace's server is trusted by its entry (command, arguments, the files it runs); what it then offers the
model (each tool's name, description and input schema) is pinned in the same trust record the first time the
trusted server lists its tools. A later listing that differs (a tool's description rewritten to steer the
model, a schema widened, a tool added) is not used: its tools stay out of the session, the change is said
with the server's name, and it is recorded as seen, so the next trust question (REPL) shows it and a yes pins
the new definitions. `--trust` and the user's `trusted_workspaces` take the new definitions as they come.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from framework_core.config.trust import TrustStore

#: Called with a server's name and its tools (name, description, input_schema); answers None to use them,
#: or the line that says why they are not used.
Vetter = Callable[[str, list[dict[str, Any]]], "str | None"]


def definitions(tools: list[dict[str, Any]]) -> dict[str, str]:
    """{tool name: digest of its description and input schema}."""
    from framework_core.config.trust_runs import digest_of

    return {str(t.get("name")): digest_of({"description": t.get("description") or "",
                                           "input_schema": t.get("input_schema") or {}}) for t in tools}


def change(old: dict[str, str], new: dict[str, str]) -> str:
    """`changed: a, b; new: c; gone: d`."""
    parts = [(label, sorted(names)) for label, names in (
        ("changed", [n for n in new if n in old and old[n] != new[n]]),
        ("new", [n for n in new if n not in old]), ("gone", [n for n in old if n not in new])) if names]
    return "; ".join(f"{label}: {', '.join(names)}" for label, names in parts) or "reordered"


def pin_note(record: dict[str, Any]) -> str | None:
    """What the trust question adds for a server whose definitions changed since it was trusted."""
    seen = record.get("tools_seen")
    if not isinstance(seen, dict):
        return None
    return f"its tool definitions changed: {seen.get('change', '?')}"


def carry_pins(old: Any, new: dict[str, Any]) -> dict[str, Any]:
    """A record made again on a yes: the definitions last seen become the pin; an unchanged entry keeps its
    pin; a changed entry is pinned afresh at its first listing."""
    if not isinstance(old, dict):
        return new
    seen = old.get("tools_seen")
    if isinstance(seen, dict) and isinstance(seen.get("tools"), dict):
        new["tools"] = seen["tools"]
    elif old.get("digest") == new["digest"] and isinstance(old.get("tools"), dict):
        new["tools"] = old["tools"]
    return new


def check(store: "TrustStore", workspace: Path, key: str, tools: list[dict[str, Any]], *,
          accept: bool) -> str | None:
    """None when `tools` are the pinned definitions (pinning them when there are none yet, or when `accept`);
    else what changed, recorded as seen for the next trust question."""
    now = definitions(tools)
    try:
        with store.edit() as data:
            return _check_in(data, workspace, key, now, accept=accept)
    except OSError:  # a read-only home: judged on what is there; the pin holds for this run only
        return _check_in(store._read(), workspace, key, now, accept=accept)


def _check_in(data: dict[str, Any], workspace: Path, key: str, now: dict[str, Any], *,
              accept: bool) -> str | None:
    entry = data["workspaces"].get(str(workspace.resolve()))
    items = entry.get("items") if isinstance(entry, dict) else None
    record = items.get(key) if isinstance(items, dict) else None
    if not isinstance(record, dict):
        return None  # not a trusted workspace item (the user's own server): nothing to pin
    pinned = record.get("tools")
    if isinstance(pinned, dict) and pinned == now:
        return None
    if accept or not isinstance(pinned, dict):
        record["tools"] = now
        record.pop("tools_seen", None)
        return None
    what = change(pinned, now)
    record["tools_seen"] = {"tools": now, "change": what}
    return what


def vetter(store: "TrustStore", workspace: Path, keys: dict[str, str], *, accept: bool,
           interactive: bool) -> Vetter:
    """The check for the servers named in `keys` (server name -> its trust key); others pass."""
    def vet(server: str, tools: list[dict[str, Any]]) -> str | None:
        key = keys.get(server)
        if key is None:
            return None
        what = check(store, workspace, key, tools, accept=accept)
        if what is None:
            return None
        after = ("LACA asks about it when you start here again" if interactive
                 else "start the REPL here to review it, or pass --trust")
        return (f"MCP server '{server}' changed its tool definitions since you trusted it ({what}); its tools are "
                f"not used: {after}.")
    return vet

"""/show-permissions: every rule and session grant with its source and scope, and per-tool settings."""

from __future__ import annotations

from typing import Any


def describe_state(state: Any, tools: list[Any]) -> str:
    lines = ["Permissions"]
    dangerous = ("ON (each Dangerous command asks, default No)" if state.allow_dangerous
                 else "off (Dangerous commands are blocked)")
    lines.append(f"  allow-dangerous: {dangerous}")
    lines.append("  Safe read-only commands run without asking; other commands and every file write ask.")
    rules = list(getattr(state.rules, "rules", []) or [])
    lines.append("")
    lines.append(f"Rules ({len(rules)}):" if rules
                 else "Rules: none (add allow/deny rules in ~/.config/laca/rules.yaml or .laca/rules.yaml; "
                      "deny beats allow)")
    for rule in rules:
        describe = getattr(rule, "describe", None)
        lines.append("  " + (describe() if callable(describe) else str(rule)))
    grants = state.grants.list()
    lines.append("")
    lines.append(f"Session grants ({len(grants)}), remove one with /revoke N:" if grants else "Session grants: none")
    for n, grant in grants:
        lines.append(f"  [{n}] {grant.label}   (tool {grant.tool_name}, this session only)")
    configured = [s for s in tools if s.permission is not None]
    if configured:
        lines.append("")
        lines.append("Per-tool settings:")
        for spec in configured:
            lines.append(f"  {spec.name}: {spec.permission}   ({spec.source})")
    return "\n".join(lines)

"""Workspace trust: what a workspace brings that can run code, widen permissions or read files is used only
after the user has seen it and said yes, and only as it was when they said yes.

A workspace's additions are its MCP servers (`.mcp.json`, `mcp_servers:` in its `framework_config.yaml`),
its declared tools (`tools.yaml`), its rules (`.laca/rules.yaml`) and the settings of its config file that
widen what LACA does (providers and keys, rule and tool files, context files, environment pass-through,
the sandbox). Each is recorded with a digest when trusted; on a later start one that is new or changed is
not used until the user approves it again (the REPL asks about just those; `-p` skips them with one line).
The user's own config and `--config` files are theirs and always trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from framework_core.errors import ConfigError

STORE_NAME = "trust.json"
#: Workspace config keys that widen what LACA does; everything else in that file (ui, persona, retry, ...)
#: is harmless and always applies. Entries of the two mappings are judged one by one.
GATED_MAPPINGS = ("mcp_servers", "llm_settings")
GATED_KEYS = (("tools_files",), ("context_definition_file",), ("api_key_env_var",), ("sandbox",),
              ("teps_settings", "allowlist_file"), ("teps_settings", "rule_files"), ("teps_settings", "keep_env"),
              ("teps_settings", "scrub_env_patterns"))
NEVER_FROM_WORKSPACE = ("trusted_workspaces",)
# `${VAR}` / `${VAR:-default}` in an MCP server's settings: a variable of the user's environment it is given
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}")


@dataclass(frozen=True)
class Addition:
    key: str  # "mcp:git", "tool:word_count", "rule:allow-tests", "config:teps_settings.keep_env"
    kind: str  # shown to the user: "MCP server", "declared tool", "rule", "setting"
    summary: str  # one line: what it is, as the user needs to judge it
    digest: str


def digest_of(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:32]


# ---- what a workspace brings ---------------------------------------------------------------------------

def config_additions(layer: dict[str, Any]) -> list[tuple[Addition, tuple[str, ...]]]:
    """The gated values of a workspace config layer, each with its key path."""
    out: list[tuple[Addition, tuple[str, ...]]] = []
    for top in GATED_MAPPINGS:
        entries = layer.get(top)
        if isinstance(entries, dict):
            for name, value in entries.items():
                kind = "MCP server" if top == "mcp_servers" else "provider"
                out.append((Addition(f"config:{top}.{name}", kind, _describe(top, name, value), digest_of(value)),
                            (top, str(name))))
    for path in GATED_KEYS:
        setting: Any = layer
        for part in path:
            setting = setting.get(part) if isinstance(setting, dict) else None
        if setting is not None:
            dotted = ".".join(path)
            out.append((Addition(f"config:{dotted}", "setting", f"{dotted}: {_short(setting)}", digest_of(setting)),
                        path))
    return out


def filter_layer(layer: dict[str, Any], approved: frozenset[str]) -> dict[str, Any]:
    """The workspace layer without the gated values that are not approved (a copy; the input is kept)."""
    out = json.loads(json.dumps(layer, default=str))
    for key in NEVER_FROM_WORKSPACE:
        out.pop(key, None)
    for addition, path in config_additions(layer):
        if addition.key in approved:
            continue
        parent: Any = out
        for part in path[:-1]:
            parent = parent.get(part) if isinstance(parent, dict) else None
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
    return out


def file_additions(workspace: Path) -> list[Addition]:
    """MCP servers of `.mcp.json`, tools of `tools.yaml`, rules of `.laca/rules.yaml` (files that fail to
    parse are left to the normal load, which names the problem)."""
    out: list[Addition] = []
    if (workspace / ".mcp.json").is_file():
        from framework_core.config.yaml_load import load_json

        try:
            data = load_json(workspace / ".mcp.json", what=".mcp.json")
        except ConfigError:
            data = None
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        for name, value in (servers or {}).items():
            out.append(Addition(f"mcp:{name}", "MCP server", _describe("mcp_servers", name, value), digest_of(value)))
    if (workspace / "tools.yaml").is_file():
        out += _tool_additions(workspace / "tools.yaml")
    if (workspace / ".laca" / "rules.yaml").is_file():
        out += _rule_additions(workspace / ".laca" / "rules.yaml")
    return out


def _tool_additions(path: Path) -> list[Addition]:
    from framework_core.config.yaml_load import load_yaml

    try:
        items = load_yaml(path, what="tools file").data
    except ConfigError:
        return []
    out = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("name"):
            cfg = item["config"] if isinstance(item.get("config"), dict) else {}
            what = (f"runs {' '.join(map(str, cfg.get('command') or []))}" if item.get("type") == "cli"
                    else f"calls {cfg.get('method', 'GET')} {cfg.get('base_url', '?')}")
            ask = "asks first" if item.get("requires_approval", True) else "runs WITHOUT asking"
            out.append(Addition(f"tool:{item['name']}", "declared tool", f"{item['name']}: {what} ({ask})",
                                digest_of(item)))
    return out


def _rule_additions(path: Path) -> list[Addition]:
    from framework_core.config.rule_files import load_rule_file

    try:
        rules = load_rule_file(path).rules
    except ConfigError:
        return []
    return [Addition(f"rule:{r.name}", "rule", r.describe().replace(f" ({r.source})", ""), digest_of(r.describe()))
            for r in rules]


def _describe(top: str, name: Any, value: Any) -> str:
    if not isinstance(value, dict):
        return f"{name}: {_short(value)}"
    if top == "llm_settings":
        keys = ", ".join(f"{k}={value[k]}" for k in ("type", "base_url", "model", "api_key_env_var") if k in value)
        return f"{name}: {keys}"
    if value.get("url"):
        where = f"connects to {value['url']}"
    else:
        where = "runs " + " ".join([str(value.get("command", "?")), *map(str, value.get("args") or [])])
    env = sorted((value.get("env") or {}).keys()) if isinstance(value.get("env"), dict) else []
    headers = sorted((value.get("headers") or {}).keys()) if isinstance(value.get("headers"), dict) else []
    given = sorted(set(_VAR.findall(json.dumps(value, default=str))))
    unconfined = " — OUTSIDE the sandbox (sandbox: false)" if value.get("sandbox") is False else ""
    return (f"{name}: {where}" + (f" (env: {', '.join(env)})" if env else "")
            + (f" (headers: {', '.join(headers)})" if headers else "")
            + (f" — is given your environment variable(s) {', '.join(given)}" if given else "") + unconfined
            + (f" — is offered the folders {_short(value['roots'])} as roots" if value.get("roots") else ""))


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- the store -----------------------------------------------------------------------------------------

@dataclass
class Pending:
    addition: Addition
    previous: str | None  # the summary the user trusted before, when it changed


@dataclass
class TrustDecision:
    """Which additions this session may use, and what was left out (for one line in `-p`, a note in the REPL)."""

    approved: frozenset[str] = frozenset()
    skipped: list[Pending] = field(default_factory=list)

    def allows(self, key: str) -> bool:
        return key in self.approved

    def skipped_line(self, workspace: Path) -> str | None:
        if not self.skipped:
            return None
        names = ", ".join(f"{p.addition.kind} {p.addition.key.split(':', 1)[1]}"
                          + (" (changed)" if p.previous is not None else "") for p in self.skipped)
        return (f"Not used, not trusted yet: {names} from the workspace {workspace}. Start the REPL there to "
                "review them, or pass --trust.")


class TrustStore:
    """`trust.json` in LACA's data directory (hidden from commands by the sandbox)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"workspaces": {}}
        return data if isinstance(data, dict) and isinstance(data.get("workspaces"), dict) else {"workspaces": {}}

    def recorded(self, workspace: Path) -> dict[str, dict[str, str]]:
        entry = self._read()["workspaces"].get(str(workspace.resolve()), {})
        items = entry.get("items") if isinstance(entry, dict) else None
        return items if isinstance(items, dict) else {}

    def pending(self, workspace: Path, additions: Iterable[Addition]) -> tuple[set[str], list[Pending]]:
        """(keys trusted as they are now, additions new or changed since the user trusted them)."""
        seen = self.recorded(workspace)
        ok: set[str] = set()
        pending: list[Pending] = []
        for a in additions:
            old = seen.get(a.key)
            if isinstance(old, dict) and old.get("digest") == a.digest:
                ok.add(a.key)
            else:
                pending.append(Pending(a, old.get("summary") if isinstance(old, dict) else None))
        return ok, pending

    def record(self, workspace: Path, additions: Iterable[Addition]) -> None:
        """Remember these additions as trusted (atomic write; a failure leaves the old store)."""
        data = self._read()
        entry = data["workspaces"].setdefault(str(workspace.resolve()), {})
        items = entry.setdefault("items", {})
        for a in additions:
            items[a.key] = {"digest": a.digest, "summary": a.summary, "kind": a.kind}
        entry["trusted_at"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.path)


def listed_by_user(workspace: Path, listed: Iterable[Any]) -> bool:
    """Whether the user's own `trusted_workspaces` names this workspace."""
    return any(Path(os.path.expanduser(p)).resolve() == workspace.resolve() for p in listed if isinstance(p, str))


def trusted_by_user_config(workspace: Path) -> bool:
    """Read only the user's config file for `trusted_workspaces` (cheap; a broken file is reported later)."""
    from framework_core.config.dirs import user_config_path
    from framework_core.config.yaml_load import load_yaml_mapping

    path = user_config_path()
    if not path.is_file():
        return False
    try:
        listed = load_yaml_mapping(path).data.get("trusted_workspaces") or []
    except (ConfigError, AttributeError):
        return False
    return listed_by_user(workspace, listed if isinstance(listed, list) else [])


def default_store() -> TrustStore:
    from framework_core.config.dirs import user_data_dir

    return TrustStore(user_data_dir() / STORE_NAME)


def decide(workspace: Path, additions: list[Addition], store: TrustStore, *, trust_all: bool) -> TrustDecision:
    """Without asking: what was trusted as it is now, plus everything when the user said so (flag, config)."""
    ok, pending = store.pending(workspace, additions)
    if trust_all and pending:
        try:
            store.record(workspace, [p.addition for p in pending])
        except OSError:
            pass  # still trusted for this run; remembering failed (read-only home)
        return TrustDecision(frozenset(ok | {p.addition.key for p in pending}))
    return TrustDecision(frozenset(ok), pending)

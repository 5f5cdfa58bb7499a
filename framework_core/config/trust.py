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

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from framework_core.config.trust_pins import carry_pins, pin_note
from framework_core.config.trust_runs import describe_files, digest_of, mcp_argv, run_files
from framework_core.errors import ConfigError

if TYPE_CHECKING:
    from framework_core.config.trust_files import WorkspaceFiles

STORE_NAME = "trust.json"
#: Workspace config keys that widen what LACA does; everything else in that file (ui, persona, retry, ...)
#: is harmless and always applies. Entries of the two mappings are judged one by one.
GATED_MAPPINGS = ("mcp_servers", "llm_settings")
GATED_KEYS = (("tools_files",), ("context_definition_file",), ("api_key_env_var",), ("sandbox",),
              ("teps_settings", "allowlist_file"), ("teps_settings", "rule_files"), ("teps_settings", "keep_env"),
              ("teps_settings", "scrub_env_patterns"))
NEVER_FROM_WORKSPACE = ("trusted_workspaces",)
#: Gated settings that name files: the workspace files they name are trusted with them (their digests).
FILE_KEYS = (("tools_files",), ("context_definition_file",), ("teps_settings", "allowlist_file"),
             ("teps_settings", "rule_files"))
# `${VAR}` / `${VAR:-default}` in an MCP server's settings: a variable of the user's environment it is given
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}")


@dataclass(frozen=True)
class Addition:
    key: str  # "mcp:git", "tool:word_count", "rule:allow-tests", "config:teps_settings.keep_env"
    kind: str  # shown to the user: "MCP server", "declared tool", "rule", "setting"
    summary: str  # one line: what it is, as the user needs to judge it
    digest: str
    files: dict[str, str] = field(default_factory=dict, compare=False)  # the code it runs: path -> digest




# ---- what a workspace brings ---------------------------------------------------------------------------

def config_additions(layer: dict[str, Any], workspace: Path | None = None, files: "WorkspaceFiles | None" = None
                     ) -> list[tuple[Addition, tuple[str, ...]]]:
    """The gated values of a workspace config layer, each with its key path (an MCP server's digest covers the
    workspace files it runs when `workspace` is given)."""
    out: list[tuple[Addition, tuple[str, ...]]] = []
    for top in GATED_MAPPINGS:
        entries = layer.get(top)
        if isinstance(entries, dict):
            for name, value in entries.items():
                if top == "mcp_servers":
                    out.append((server_addition(f"config:{top}.{name}", name, value, workspace, files),
                                (top, str(name))))
                    continue
                out.append((Addition(f"config:{top}.{name}", "provider", _describe(top, name, value),
                                     digest_of(value)), (top, str(name))))
    for path in GATED_KEYS:
        setting: Any = layer
        for part in path:
            setting = setting.get(part) if isinstance(setting, dict) else None
        if setting is not None:
            dotted = ".".join(path)
            named = {}  # a rule, tool or context file of the workspace: trusted as it is
            if workspace is not None and path in FILE_KEYS:
                named = run_files(setting if isinstance(setting, list) else [setting], workspace, None,
                                  files.file_digest if files is not None else None)
            out.append((Addition(f"config:{dotted}", "setting",
                                 f"{dotted}: {_short(setting)}" + describe_files(named, "names"),
                                 digest_of({"entry": setting, "files": named}) if named else digest_of(setting)),
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


def file_additions(workspace: Path, files: "WorkspaceFiles | None" = None) -> list[Addition]:
    """MCP servers of `.mcp.json`, tools of `tools.yaml`, rules of `.laca/rules.yaml`, from `files` (the texts
    read once; read now without them). Files that fail to parse are left to the normal load, which names
    the problem."""
    from framework_core.config import trust_files as tf

    files = files if files is not None and files.for_workspace(workspace) else tf.WorkspaceFiles.read(workspace)
    out: list[Addition] = []
    text = _text(files, tf.MCP_JSON)
    if text is not None:
        from framework_core.config.yaml_load import parse_json_doc

        try:
            data = parse_json_doc(text, files.path(tf.MCP_JSON)).data
        except ConfigError:
            data = None
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        for name, value in (servers if isinstance(servers, dict) else {}).items():
            out.append(server_addition(f"mcp:{name}", name, value, files.workspace, files))
    text = _text(files, tf.TOOLS)
    if text is not None:
        out += _tool_additions(files.path(tf.TOOLS), text, files)
    text = _text(files, tf.RULES)
    if text is not None:
        out += _rule_additions(files.path(tf.RULES), text)
    return out


def _text(files: "WorkspaceFiles", name: str) -> str | None:
    try:
        return files.text(name)
    except ConfigError:
        return None  # the load names the problem


def server_addition(key: str, name: Any, value: Any, workspace: Path | None,
                    files: "WorkspaceFiles | None" = None) -> Addition:
    """An MCP server, trusted together with the workspace files its command line names (their digests)."""
    runs = {}
    if workspace is not None and isinstance(value, dict) and not value.get("url"):
        cwd = value.get("cwd") if isinstance(value.get("cwd"), str) else None
        runs = run_files(mcp_argv(value), workspace, cwd, files.file_digest if files is not None else None)
    digest = digest_of({"entry": value, "runs": runs}) if runs else digest_of(value)
    summary = _describe("mcp_servers", name, value) + describe_files(runs)
    if runs and isinstance(value, dict) and value.get("network") is None and value.get("sandbox") is not False:
        summary = summary.replace(" · network: yes ·", " · network: no (its code is in this workspace; "
                                  "network: true in its entry gives it the network) ·", 1)
    return Addition(key, "MCP server", summary, digest, runs)


def _tool_additions(path: Path, text: str, files: "WorkspaceFiles") -> list[Addition]:
    from framework_core.config.yaml_load import parse_yaml

    try:
        items = parse_yaml(text, path).data
    except ConfigError:
        return []
    out = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("name"):
            cfg = item["config"] if isinstance(item.get("config"), dict) else {}
            cli = item.get("type") == "cli"
            command: list[Any] = cfg["command"] if isinstance(cfg.get("command"), list) else []
            what = (f"runs {' '.join(map(str, command))}" if cli
                    else f"calls {cfg.get('method', 'GET')} {cfg.get('base_url', '?')}")
            ask = "asks first" if item.get("requires_approval", True) else "runs WITHOUT asking"
            net = ("network: yes" if item.get("network") is True else "network: no") if cli else "network: yes"
            runs = run_files(command, path.parent, None, files.file_digest) if cli else {}
            digest = digest_of({"entry": item, "runs": runs}) if runs else digest_of(item)
            out.append(Addition(f"tool:{item['name']}", "declared tool",
                                f"{item['name']}: {what} ({ask}) · {net}" + describe_files(runs), digest,
                                runs))
    return out


def _rule_additions(path: Path, text: str) -> list[Addition]:
    from framework_core.config.rule_files import load_rule_file

    try:
        rules = load_rule_file(path, text).rules
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
    return (f"{name}: {where}" + (f" (env: {', '.join(env)})" if env else "")
            + (f" (headers: {', '.join(headers)})" if headers else "")
            + (f" — is given your environment variable(s) {', '.join(given)}" if given else "") + _reach(value)
            + (f" · roots: {_short(value['roots'])}, with the workspace's access" if value.get("roots") else ""))


def _reach(value: dict[str, Any]) -> str:
    """What a server may reach: the network, and the workspace (read-only unless `workspace: write`)."""
    if value.get("url"):
        return " · network: yes (a remote server)"
    if value.get("sandbox") is False:
        return " — OUTSIDE the sandbox (sandbox: false): your own permissions, network: yes, writes anywhere"
    net = "network: no" if value.get("network") is False else "network: yes"
    ws = ("WRITES the workspace directly (workspace: write; no overlay, no undo)" if value.get("workspace") == "write"
          else "workspace read-only")
    return f" · {net} · {ws}"


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- the store -----------------------------------------------------------------------------------------

@dataclass
class Pending:
    addition: Addition
    previous: str | None  # the summary the user trusted before, when it changed
    note: str | None = None  # what changed besides the entry (an MCP server's tool definitions)


@dataclass
class TrustDecision:
    """Which additions this session may use, and what was left out (for one line in `-p`, a note in the REPL)."""

    approved: frozenset[str] = frozenset()
    skipped: list[Pending] = field(default_factory=list)
    trust_all: bool = False  # --trust or the user's trusted_workspaces: whatever the workspace brings
    files: "WorkspaceFiles | None" = None  # the texts decided on: what the session uses (never read again)

    def allows(self, key: str) -> bool:
        return key in self.approved

    def skipped_line(self, workspace: Path) -> str | None:
        if not self.skipped:
            return None
        names = ", ".join(f"{p.addition.kind} {p.addition.key.split(':', 1)[1]}"
                          + (f" ({p.note})" if p.note else " (changed)" if p.previous is not None else "")
                          for p in self.skipped)
        return (f"Not used, not trusted yet: {names} from the workspace {workspace}. Start the REPL there to "
                "review them, or pass --trust.")


class TrustStore:
    """`trust.json` in LACA's data directory (hidden from commands by the sandbox), read and written through
    `JsonStore`: one writer at a time under a lock, atomic replace, the shape checked on read; a damaged file is
    moved aside and said, with what is lost, never silently replaced."""

    def __init__(self, path: Path) -> None:
        from framework_core.config.json_store import JsonStore

        self.path = path
        self.store = JsonStore(path, what="workspace trust store", check=_checked_store,
                               empty=lambda: {"workspaces": {}}, lost=_lost_trust, max_depth=64)

    @property
    def problems(self) -> list[str]:
        return self.store.problems

    def _read(self) -> dict[str, Any]:
        try:
            data: dict[str, Any] = self.store.read()
        except OSError:
            return {"workspaces": {}}
        return data

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
            if isinstance(old, dict) and old.get("digest") == a.digest and not old.get("tools_seen"):
                ok.add(a.key)
            else:
                notes = [n for n in (changed_files(old, a), pin_note(old) if isinstance(old, dict) else None) if n]
                pending.append(Pending(a, old.get("summary") if isinstance(old, dict) else None,
                                       "; ".join(notes) or None))
        return ok, pending

    def record(self, workspace: Path, additions: Iterable[Addition]) -> None:
        """Remember these additions as trusted: read, changed and written back under the store's lock (so two
        LACAs trusting at once keep both decisions), atomically (a failure leaves the old store)."""
        with self.store.update() as data:
            entry = data["workspaces"].setdefault(str(workspace.resolve()), {})
            items = entry.setdefault("items", {})
            for a in additions:
                record: dict[str, Any] = {"digest": a.digest, "summary": a.summary, "kind": a.kind}
                if a.files:
                    record["files"] = dict(a.files)  # to name what changed at the next start
                items[a.key] = carry_pins(items.get(a.key), record)
            entry["trusted_at"] = time.strftime("%Y-%m-%dT%H:%M:%S")

    def edit(self):  # -> ContextManager[dict]
        """Read-modify-write of the whole store under its lock (the pins of tool definitions use it)."""
        return self.store.update()


def changed_files(old: Any, now: Addition, limit: int = 8) -> str | None:
    """Which files of a trusted item's code changed since the user trusted it (named, up to `limit`)."""
    before = old.get("files") if isinstance(old, dict) else None
    if not isinstance(before, dict) or not now.files:
        return None
    changed = sorted(p for p in set(before) | set(now.files) if before.get(p) != now.files.get(p))
    if not changed:
        return None
    more = f" and {len(changed) - limit} more" if len(changed) > limit else ""
    return "changed since you trusted it: " + ", ".join(changed[:limit]) + more


def _checked_store(data: Any) -> dict[str, Any]:
    """The trust store's shape: {"workspaces": {path: {"items": {key: {"digest": str, ...}}, ...}}}. Extra keys
    are kept (a later LACA may record more of an item)."""
    if not isinstance(data, dict) or not isinstance(data.get("workspaces"), dict):
        raise ValueError('no "workspaces" object at the top')
    for where, entry in data["workspaces"].items():
        if not isinstance(entry, dict):
            raise ValueError(f"the entry of {where} is not an object")
        items = entry.setdefault("items", {})
        if not isinstance(items, dict):
            raise ValueError(f'"items" of {where} is not an object')
        for key, item in items.items():
            if not isinstance(item, dict) or not isinstance(item.get("digest"), str):
                raise ValueError(f"item {key} of {where} has no digest")
            if not isinstance(item.get("summary", ""), str) or not isinstance(item.get("kind", ""), str):
                raise ValueError(f"item {key} of {where} has a summary or kind that is not text")
    return data


def _lost_trust(loose: Any) -> str:
    spaces = loose.get("workspaces") if isinstance(loose, dict) else None
    if isinstance(spaces, dict) and spaces:
        named = ", ".join(map(str, list(spaces)[:3])) + (" …" if len(spaces) > 3 else "")
        return (f"the trust you gave {len(spaces)} workspace(s) ({named}); LACA asks about what they bring "
                "again (or pass --trust)")
    return "every workspace's trust it recorded; LACA asks about what a workspace brings again (or pass --trust)"


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


def decide(workspace: Path, additions: list[Addition], store: TrustStore, *, trust_all: bool,
           answered: dict[str, str] | None = None, files: "WorkspaceFiles | None" = None) -> TrustDecision:
    """Without asking: what was trusted as it is now, plus everything when the user said so (flag, config),
    plus what the user said yes to at the trust question (`answered`: key -> the digest of what was shown)."""
    ok, pending = store.pending(workspace, additions)
    yes = [p for p in pending if trust_all or (answered or {}).get(p.addition.key) == p.addition.digest]
    if yes:
        try:
            store.record(workspace, [p.addition for p in yes])
        except OSError:
            pass  # still trusted for this run; remembering failed (read-only home)
    return TrustDecision(frozenset(ok | {p.addition.key for p in yes}), [p for p in pending if p not in yes],
                         trust_all=trust_all, files=files)

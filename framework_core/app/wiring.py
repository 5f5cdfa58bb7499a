"""Build the parts of one session from a loaded config: DCM, tool registry, policy, TEPS, MCP, agent."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from framework_core.core.approval import Approver
from framework_core.config.load import LoadedConfig
from framework_core.config.dirs import user_config_dir, user_data_dir, user_state_dir
from framework_core.core.agent import Agent
from framework_core.errors import ConfigError
from framework_core.core.events import EventSink, Notice
from framework_core.core.facade import Facade
from framework_core.core.session import MessageManager

USER_RULES = "rules.yaml"
WORKSPACE_RULES = Path(".laca") / "rules.yaml"
WORKSPACE_TOOLS = "tools.yaml"


@dataclass
class Parts:
    agent: Agent
    facade: Facade  # what front ends hold
    warnings: list[str]


def rule_file_paths(loaded: LoadedConfig) -> list[Path]:
    from framework_core.config.rule_files import settings_rule_files

    paths = settings_rule_files(loaded.config.teps_settings)
    for extra in (user_config_dir() / USER_RULES, loaded.workspace / WORKSPACE_RULES):
        if extra.is_file() and extra not in paths:
            paths.append(extra)
    return paths


def tool_file_paths(loaded: LoadedConfig) -> list[Path]:
    paths = [Path(p) for p in loaded.config.tools_files]
    ws = (loaded.workspace / WORKSPACE_TOOLS).resolve()
    if ws.is_file() and ws not in [p.resolve() for p in paths]:
        paths.append(ws)
    return paths


def build_policy_state(loaded: LoadedConfig):  # -> PolicyState
    from framework_core.config.rule_files import load_policy

    auto = str(loaded.workspace / WORKSPACE_RULES)  # read because it is there, not because the user named it
    return load_policy(rule_file_paths(loaded),
                       keep=lambda r: r.source != auto or loaded.trust.allows(f"rule:{r.name}"))


def build_registry(loaded: LoadedConfig):  # -> ToolRegistry
    from framework_core.tools.builtin import builtin_registry

    registry = builtin_registry()
    paths = tool_file_paths(loaded)
    if paths:
        from framework_core.tools.declared import load_tools_file

        for path in paths:
            if not path.is_file():
                raise ConfigError(f"tools file not found: {path}. Fix tools_files in framework_config.yaml.")
            auto = path.resolve() == (loaded.workspace / WORKSPACE_TOOLS).resolve() and str(path) not in [
                str(Path(p)) for p in loaded.config.tools_files]
            for spec in load_tools_file(path):
                if auto and not loaded.trust.allows(f"tool:{spec.name}"):
                    continue  # the workspace's own tools.yaml: only what the user trusted
                if spec.name in registry:
                    raise ConfigError(f"tool '{spec.name}' is defined twice", path=str(path))
                registry.register(spec)
    return registry


def mcp_servers(loaded: LoadedConfig) -> dict:
    servers = dict(loaded.config.mcp_servers)
    if (loaded.workspace / ".mcp.json").is_file():
        from framework_core.tools.mcp import load_mcp_json

        for name, settings in load_mcp_json(loaded.workspace).items():
            if loaded.trust.allows(f"mcp:{name}"):  # a workspace's servers start only once trusted
                servers.setdefault(name, settings)
    return {n: s for n, s in servers.items() if s.active}  # `enabled: false` or .mcp.json's `disabled: true`


def build_sandbox(loaded: LoadedConfig):  # -> Sandbox
    from framework_core.sandbox.sandbox import Sandbox

    cfg = loaded.config.sandbox
    return Sandbox(cfg.profile, loaded.workspace, protected_extra=tuple(cfg.protected_paths),
                   hidden_extra=tuple(cfg.hidden_paths),
                   laca_dirs=(user_config_dir(), user_data_dir(), user_state_dir()),  # state: the overlays
                   use_overlay=cfg.overlay)


def build_undo(loaded: LoadedConfig, session: MessageManager):  # -> UndoStore
    """In the session's folder, so that `--continue` can still undo; in a temporary one without a transcript."""
    import tempfile

    from framework_core.sandbox.undo_store import UndoStore

    limit = loaded.config.sandbox.undo_max_mb * 1024 * 1024
    if session.transcript is not None:
        try:
            return UndoStore(session.transcript.path.with_suffix(".undo"), limit)
        except OSError:
            pass  # a read-only or full data dir: undo for this run only
    return UndoStore(tempfile.mkdtemp(prefix="laca-undo-"), limit)


def context_roots(loaded: LoadedConfig) -> list[Path]:
    """Where context documents may come from: the workspace and the shipped defaults, plus the folder of a
    context file the user named themselves (their config, --config, LACA_CONTEXT_FILE, a flag); never elsewhere
    for a context file a workspace brings."""
    from framework_core.config.shipped import shipped_dir

    roots = [loaded.workspace, shipped_dir()]
    if loaded.source_of(("context_definition_file",)).startswith(("user", "--config", "env", "flag")):
        roots.append(Path(loaded.config.context_definition_file).expanduser().resolve().parent)
    return roots


def bind_results(teps, agent: Agent) -> None:
    """Tool results are sized for the active model's window, and cut ones saved in the session's own folder
    (where the runner saves cut command output), the one place outside the workspace readFile reads freely."""
    from framework_core.tools import spill

    teps.context.outputs_dir = spill.default_limits().spill_dir
    teps.context.context_window = lambda: agent.caps.context_window


def build_agent(loaded: LoadedConfig, *, events: EventSink, approver: Approver, session: MessageManager,
                start_mcp: bool = True, elicit: "Callable[[Any], Any] | None" = None) -> Parts:
    """`elicit` answers an MCP server's request for input (a terminal form); without it the capability is not
    offered to servers."""
    from framework_core.dcm import DynamicContextManager
    from framework_core.teps import TEPSEngine

    cfg = loaded.config
    dcm = DynamicContextManager(cfg.context_definition_file, workspace=loaded.workspace,
                                agents_md_max_bytes=cfg.ui.agents_md_max_bytes, roots=context_roots(loaded))
    if cfg.default_persona not in dcm.persona_ids():
        raise dcm.unknown_persona(cfg.default_persona)  # a missing context file is named as the cause
    registry = build_registry(loaded)
    sandbox = build_sandbox(loaded)
    teps = TEPSEngine(cfg.teps_settings, registry=registry, workspace=loaded.workspace, approver=approver,
                      policy=build_policy_state(loaded), events=events, audit=session.record, sandbox=sandbox,
                      undo=build_undo(loaded, session))
    mcp = None
    servers = mcp_servers(loaded) if start_mcp else {}
    if servers:
        from framework_core.tools.mcp import McpManager

        mcp = McpManager(servers, registry, user_data_dir() / "logs", loaded.workspace)
        mcp.wrapper = lambda name, s: sandbox.server_wrapper(network=s.network) if s.sandbox else ()
        mcp.elicit = elicit
        mcp.oauth.interactive = elicit is not None  # a browser sign-in needs someone at the terminal (the REPL)
        mcp.start()
    agent = Agent(cfg, dcm=dcm, teps=teps, session=session, events=events, mcp=mcp)
    bind_results(teps, agent)
    warnings = list(dcm.warnings)
    notice = sandbox.unavailable_notice()  # probes the sandbox here, off the prompt's thread
    if notice:
        warnings.append(notice)
    for warning in warnings:
        events(Notice("warning", warning))
    facade = Facade(agent, workspace=loaded.workspace, new_session=lambda a: fresh_session(loaded, a))
    return Parts(agent, facade, warnings)


def key_env_vars(loaded: "LoadedConfig") -> list[str]:
    cfg = loaded.config
    names = {p.api_key_env_var for p in cfg.llm_settings.values() if p.api_key_env_var}
    if cfg.api_key_env_var:
        names.add(cfg.api_key_env_var)
    return sorted(names)


def fresh_session(loaded: "LoadedConfig", agent: "Agent") -> "MessageManager":
    """A new session for /clear, started with the agent's provider, model and persona, its command output
    kept in its own folder."""
    from framework_core.config.dirs import user_data_dir
    from framework_core.core.session import open_session, secrets_in_env
    from framework_core.tools import spill

    session = open_session(user_data_dir(), secrets_to_mask=secrets_in_env(key_env_vars(loaded)))
    session.start({"workspace": str(loaded.workspace), "provider": agent.provider_name,
                   "model": agent.provider.model, "persona": agent.persona_id, "pid": os.getpid()})
    teps = loaded.config.teps_settings
    where = spill.session_spill_dir(session.transcript.path) if session.transcript is not None else None
    spill.configure(where, max_bytes=teps.output_max_bytes, session_budget=teps.output_session_max_bytes)
    agent.teps.context.outputs_dir = spill.default_limits().spill_dir
    return session

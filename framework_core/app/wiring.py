"""Build the parts of one session from a loaded config: DCM, tool registry, policy, TEPS, MCP, agent."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from framework_core.core.approval import Approver
from framework_core.config.load import LoadedConfig
from framework_core.config.dirs import user_data_dir
from framework_core.core import construct
from framework_core.core.agent import Agent
from framework_core.core.construct import (build_policy_state, build_registry, build_sandbox,  # shared with TEPS
                                         workspace_text)
from framework_core.core.events import EventSink, Notice
from framework_core.core.facade import Facade
from framework_core.core.session import MessageManager
from framework_core.errors import ConfigError


@dataclass
class Parts:
    agent: Agent  # the turn loop and its parts, for the app layer's own wiring and tests of internals
    facade: Facade  # what front ends hold: the agent is private to it
    warnings: list[str]


def mcp_servers(loaded: LoadedConfig) -> dict:
    servers = dict(loaded.config.mcp_servers)
    if (loaded.workspace / ".mcp.json").is_file():
        from framework_core.tools.mcp import load_mcp_json

        for name, settings in load_mcp_json(loaded.workspace, workspace_text(loaded, ".mcp.json")).items():
            if loaded.trust.allows(f"mcp:{name}"):  # a workspace's servers start only once trusted
                servers.setdefault(name, settings)
    return {n: _network_decided(loaded, n, s) for n, s in servers.items()
            if s.active}  # `enabled: false` or .mcp.json's `disabled: true`


def _network_decided(loaded: LoadedConfig, name: str, settings: Any) -> Any:
    """A server whose code the workspace brings gets the network only when its entry says `network: true` (the
    trust question showed it); any other gets it unless its entry says `network: false`."""
    if settings.network is not None:
        return settings
    here = False
    if settings.command and _workspace_server(loaded, name):
        from framework_core.config.trust_runs import run_files

        here = bool(run_files([settings.command, *settings.args], loaded.workspace, settings.cwd))
    return settings.model_copy(update={"network": not here})


def tool_pins(loaded: LoadedConfig, servers: dict, *, interactive: bool):  # -> trust_pins.Vetter
    """The workspace's own servers have their tool definitions pinned in the trust record when trusted."""
    from framework_core.config import trust_pins
    from framework_core.config.trust import default_store

    keys = {}
    for name in servers:
        if name not in loaded.config.mcp_servers:
            keys[name] = f"mcp:{name}"  # from .mcp.json
        elif _workspace_server(loaded, name):
            keys[name] = f"config:mcp_servers.{name}"
    return trust_pins.vetter(default_store(), loaded.workspace, keys, accept=loaded.trust.trust_all,
                             interactive=interactive)


def script_check(loaded: LoadedConfig, servers: dict) -> Callable[[str], str | None]:
    """Before each start of a workspace server: the workspace files it runs are still those trusted (a script
    an approved command rewrote mid-session is not run by the server's restart)."""
    from framework_core.config.trust_runs import refused, run_files

    files = loaded.trust.files
    trusted = {name: run_files([s.command, *s.args], loaded.workspace, s.cwd,
                               files.file_digest if files is not None else None)
               for name, s in servers.items() if s.command and _workspace_server(loaded, name)}

    def check(name: str) -> str | None:
        if name not in trusted:
            return None
        s = servers[name]
        now = run_files([s.command, *s.args], loaded.workspace, s.cwd)
        large = refused(now)
        if large:
            return (f"MCP server '{name}' not started: its code root {', '.join(large)} is too large for LACA to "
                    "bind trust to (see the trust question); move the server's program to a folder of its own.")
        changed = sorted(p for p in set(trusted[name]) | set(now) if trusted[name].get(p) != now.get(p))
        if not changed:
            return None
        return (f"MCP server '{name}' not started: {', '.join(changed)} changed since you trusted it. Start LACA "
                "again here to be asked about the change.")
    return check


def _workspace_server(loaded: LoadedConfig, name: str) -> bool:
    return name not in loaded.config.mcp_servers or loaded.source_of(("mcp_servers", name)).startswith("workspace")


def build_undo(loaded: LoadedConfig, session: MessageManager):  # -> UndoStore
    """In the session's folder, so that `--continue` can still undo; in a temporary one without a transcript."""
    folder = session.transcript.path.with_suffix(".undo") if session.transcript is not None else None
    return construct.build_undo(loaded, folder)


def build_audit_log(loaded: LoadedConfig, session: MessageManager, events: EventSink):  # -> AuditLog
    """The workspace's audit log in the data folder (core/audit.py); a failure to write it is said once."""
    from framework_core.core.audit import AuditLog, log_path
    from framework_core.core.session import secrets_in_env

    log = AuditLog(log_path(user_data_dir(), loaded.workspace), loaded.workspace, session_id=session.session_id,
                   mask=secrets_in_env(key_env_vars(loaded)))
    log.on_problem = lambda message: events(Notice("warning", message))
    return log


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
    """Tool results are sized for the active model's window. Where cut ones are saved is decided in one place,
    `ToolContext.output_folder`: the session's own folder that `spill.configure` set (where the runner saves cut
    command output), the one place outside the workspace readFile reads freely."""
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
                      undo=build_undo(loaded, session), audit_log=build_audit_log(loaded, session, events))
    mcp = None
    servers = mcp_servers(loaded) if start_mcp else {}
    if servers:
        from framework_core.tools.mcp import McpManager
        from framework_core.tools.mcp_resources import root_paths

        mcp = McpManager(servers, registry, user_data_dir() / "logs", loaded.workspace)
        mcp.wrapper = lambda name, s: (sandbox.server_wrapper(network=s.network is not False,
                                                              write=s.workspace == "write",
                                                              roots=root_paths(s, loaded.workspace),
                                                              program=(s.command or "", *s.args))
                                       if s.sandbox else ())
        mcp.keep_env = tuple(cfg.teps_settings.keep_env)
        mcp.elicit = elicit
        mcp.vet_tools = tool_pins(loaded, servers, interactive=elicit is not None)
        mcp.vet_launch = script_check(loaded, servers)
        mcp.oauth.interactive = elicit is not None  # a browser sign-in needs someone at the terminal (the REPL)
        mcp.start()
    agent = Agent(cfg, dcm=dcm, teps=teps, session=session, events=events, mcp=mcp)
    bind_results(teps, agent)
    warnings = list(dcm.warnings)
    notice = sandbox.unavailable_notice()  # probes the sandbox here, off the prompt's thread
    if notice:
        warnings.append(notice)
    home_notice = sandbox.home_notice()
    if home_notice:
        warnings.append(home_notice)
    for warning in warnings:
        events(Notice("warning", warning))
    facade = Facade(agent, workspace=loaded.workspace, new_session=lambda a: fresh_session(loaded, a),
                    reopen=lambda a, ref: reopen_session(loaded, a, ref))
    return Parts(agent, facade, warnings)


def key_env_vars(loaded: "LoadedConfig") -> list[str]:
    cfg = loaded.config
    names = {p.api_key_env_var for p in cfg.llm_settings.values() if p.api_key_env_var}
    if cfg.api_key_env_var:
        names.add(cfg.api_key_env_var)
    return sorted(names)


def reopen_session(loaded: "LoadedConfig", agent: "Agent", ref: str) -> tuple["MessageManager", list[str], dict]:
    """/resume ID: an earlier session of this workspace, opened to go on (its command output in its own folder).
    Returns the session, what to say about it, and its last provider, model and persona."""
    from framework_core.core.session import find_session_by_prefix
    from framework_core.config.dirs import user_data_dir
    from framework_core.core.session import resume_session, secrets_in_env

    data = user_data_dir()
    path = find_session_by_prefix(data, ref)
    if path.stem == agent.session.session_id:
        raise ConfigError(f"{path.stem} is this session")
    session, loaded_session = resume_session(data, path, secrets_in_env(key_env_vars(loaded)), fork=False)
    session.record({"type": "resumed", "pid": os.getpid(), "messages": len(loaded_session.messages)})
    _spill_for(loaded, session)
    return session, loaded_session.warnings, dict(loaded_session.meta)


def _spill_for(loaded: "LoadedConfig", session: "MessageManager") -> None:
    """Command output and cut results a session saves go into that session's own folder (ToolContext.output_folder
    reads it from here)."""
    from framework_core.tools import spill

    teps = loaded.config.teps_settings
    where = spill.session_spill_dir(session.transcript.path) if session.transcript is not None else None
    spill.configure(where, max_bytes=teps.output_max_bytes, session_budget=teps.output_session_max_bytes)


def fresh_session(loaded: "LoadedConfig", agent: "Agent") -> "MessageManager":
    """A new session for /clear, started with the agent's provider, model and persona, its command output
    kept in its own folder."""
    from framework_core.config.dirs import user_data_dir
    from framework_core.core.session import open_session, secrets_in_env

    session = open_session(user_data_dir(), secrets_to_mask=secrets_in_env(key_env_vars(loaded)))
    session.start({"workspace": str(loaded.workspace), "provider": agent.provider_name,
                   "model": agent.provider.model, "persona": agent.persona_id, "pid": os.getpid()})
    _spill_for(loaded, session)
    if agent.teps.audit_log is not None:
        agent.teps.audit_log.session_id = session.session_id
    return session

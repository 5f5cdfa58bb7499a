"""The one object a front end talks to.

The REPL, one-shot `-p` and any later front end hold a `Facade` and nothing else of the core: every action a user
can take (a turn, a switch of provider, model, persona or mode, dry run, allow-dangerous, grants, undo, a new
session, closing) is one call here, and what the status line shows is one frozen `Status` record. Front ends never
reach into the agent's parts (TEPS, the session, the policy, the registry, MCP); a test in the suite checks that
`ui/` does not. The app layer builds the façade (`app/wiring.py`) and hands in what only it can make (a new
session for /clear).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from framework_core.core.accounting import status_total
from framework_core.core.facade_mcp import McpCatalogFacade
from framework_core.errors import LacaError

if TYPE_CHECKING:
    from framework_core.config.models import UiSettings
    from framework_core.core.agent import Agent
    from framework_core.core.events import Notice
    from framework_core.core.events import TurnOutcome
    from framework_core.core.session import MessageManager
    from framework_core.dcm import LoadedDocument
    from framework_core.lial_core import Usage
    from framework_core.lial_core import ToolResult
    from framework_core.sandbox.undo_store import EntryInfo, RevertResult
    from framework_core.tools.base import ToolSpec
    from framework_core.tools.mcp_state import ServerStatus


@dataclass(frozen=True)
class Status:
    """What the status line and the prompt show, read in one call."""

    provider: str
    model: str
    persona: str
    mode: str
    dry_run: bool
    allow_dangerous: bool
    not_saved: bool
    no_api_key: bool
    sandbox: str  # the profile in force, or why there is none
    sandbox_active: bool
    context_percent: float
    totals: str  # all tokens so far, and the cost where prices are known
    session_id: str
    auto_ready: bool = True  # auto mode can run commands without asking (Sandbox.is_complete()); else they ask


@dataclass(frozen=True)
class Closed:
    """How closing went: the session's id and, when it could not be written, why."""

    session_id: str
    problem: str | None


class Facade(McpCatalogFacade):
    """Everything a front end may do with a conversation."""

    def __init__(self, agent: "Agent", *, workspace: Path,
                 new_session: Callable[["Agent"], "MessageManager"],
                 reopen: Callable[["Agent", str], tuple["MessageManager", list[str], dict]] | None = None) -> None:
        self.agent = agent  # for the app layer and tests; front ends use the methods below
        self.workspace = workspace
        self._new_session = new_session
        self._reopen = reopen
        self._context_cache: tuple[tuple, int] | None = None
        self._closed: Closed | None = None

    # ---- the conversation ------------------------------------------------------------------------
    def turn(self, text: str) -> "TurnOutcome":
        """One user message and everything it leads to (tool calls, compaction); the history stays valid."""
        return self.agent.run_turn(text)

    def run_user_command(self, command: str) -> "ToolResult":
        """`!cmd`: the user's own command, sandboxed as an approved one; the model sees it with the next message."""
        return self.agent.run_user_command(command)

    def note_for_model(self, text: str) -> None:
        self.agent.note_for_model(text)

    def repair_history(self) -> None:
        """After an interruption outside a turn: every tool call answered, the history valid for the provider."""
        self.agent.session.repair()

    def new_session(self) -> tuple[str, str | None]:
        """/clear: close this session (kept, resumable) and go on in a new one with the same tools, grants, mode
        and undo store. Returns the old session's id and why it could not be saved (None when it was)."""
        closed = self._close_session()
        self.agent.replace_session(self._new_session(self.agent))
        return closed.session_id, closed.problem

    def resume_session(self, ref: str) -> tuple[Closed, list[str]]:
        """/resume ID: close this session (kept, resumable) and go on in an earlier one of this workspace, with the
        provider, model and persona it last used. Raises ConfigError for an unknown or ambiguous id. Returns how
        closing went and what to say (the resumed session's warnings, a provider that cannot be used now)."""
        from framework_core.errors import ConfigError

        if self._reopen is None:
            raise ConfigError("this front end cannot switch sessions")
        session, notes, meta = self._reopen(self.agent, ref.strip())
        closed = self._close_session()
        self.agent.replace_session(session)
        return closed, notes + self.adopt(meta)

    def recap(self) -> list[str]:
        """The last exchange of the conversation: what the user asked and how the reply began."""
        from framework_core.core.session import recap

        return recap(self.agent.session)

    def adopt(self, meta: dict, *, persona: bool = True, provider: bool = True, model: bool = True) -> list[str]:
        """Go on with the provider, model and persona a resumed session last used (each unless told not to).
        Returns notes for what could not be restored."""
        from framework_core.errors import ConfigError

        notes: list[str] = []
        wanted_persona = meta.get("persona")
        if persona and wanted_persona and wanted_persona != self.persona and wanted_persona in self.personas():
            self.set_persona(wanted_persona)
        name, wanted_model = meta.get("provider"), meta.get("model")
        if provider and name and name in self.providers():
            try:
                if name != self.provider_name:
                    self.set_provider(name, wanted_model if model else None)
                elif model and wanted_model and wanted_model != self.model:
                    self.set_model(wanted_model)
            except ConfigError as exc:
                notes.append(f"The session used {name}, which cannot be used now ({exc}); going on with "
                             f"{self.provider_name}.")
        return notes

    def close(self) -> Closed:
        """End the session: MCP servers stopped, the sandbox's temporary folders removed, the provider, model
        and persona recorded for --continue, the transcript written. Safe to call twice."""
        if self._closed is None:
            if self.agent.mcp is not None:
                self.agent.mcp.close()
            self.agent.teps.sandbox.close()  # its runtime folder in TMPDIR: left as it was found
            self._closed = self._close_session()
        return self._closed

    def _close_session(self) -> Closed:
        agent = self.agent
        agent.session.record({"type": "meta", "provider": agent.provider_name, "model": agent.provider.model,
                              "persona": agent.persona_id})  # --continue goes on with these
        return Closed(agent.session.session_id, agent.session.close())

    @property
    def session_id(self) -> str:
        return self.agent.session.session_id

    @property
    def memory_only(self) -> str | None:
        """Why the session is kept in memory only (the disk refused it), or None."""
        return self.agent.session.memory_only

    # ---- provider, model, persona ----------------------------------------------------------------
    @property
    def provider_name(self) -> str:
        return self.agent.provider_name

    @property
    def model(self) -> str:
        return self.agent.provider.model

    @property
    def provider_type(self) -> str:
        return self.agent.provider.type

    @property
    def key_env_var(self) -> str | None:
        return self.agent.provider.api_key_env_var

    def providers(self) -> list[str]:
        return sorted(self.agent.config.llm_settings)

    def configured_models(self) -> list[str]:
        return list(self.agent.provider.models)

    def set_provider(self, name: str, model: str | None = None) -> None:
        self.agent.set_provider(name, model)

    def set_model(self, model: str) -> list[str]:
        """Switch the model; returns the notes about its profile (each shown once in the session)."""
        self.agent.set_model(model)
        notes = list(self.agent.caps.notes)
        self.agent.said_notes.update(notes)
        return notes

    def model_description(self) -> str:
        from framework_core.adapters.profiles import describe

        return describe(self.agent.caps)

    def server_models(self, wait_s: float = 0.0) -> list[str] | str | None:
        """The models the provider's server offers, an error message, or None while still fetching."""
        from framework_core.adapters.model_list import server_models

        agent = self.agent
        key = (agent.provider_name, f"{agent.provider.type} {agent.provider.base_url or ''}")
        return server_models(key, lambda: agent.adapter, wait_s=wait_s)

    @property
    def persona(self) -> str:
        return self.agent.persona_id

    def personas(self) -> list[str]:
        return self.agent.dcm.persona_ids()

    def set_persona(self, persona_id: str) -> None:
        self.agent.set_persona(persona_id)

    def warm_up(self, *, provider: bool = True) -> None:
        """Get the tools ready in the background and, with `provider`, import the provider's SDK (see
        `Agent.warm_up`)."""
        self.agent.warm_up(provider=provider)

    # ---- modes ------------------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return self.agent.teps.mode

    def set_mode(self, mode: str) -> None:
        self.agent.set_mode(mode)

    @property
    def auto_ready(self) -> bool:
        """Auto mode runs commands without asking only in a complete sandbox (Sandbox.is_complete())."""
        return self.agent.teps.sandbox.is_complete()

    def next_mode(self) -> str:
        """Shift-Tab: ask → accept-edits → plan → auto → ask. Returns the new mode."""
        from framework_core.core.fate import CYCLE

        mode = CYCLE[(CYCLE.index(self.mode) + 1) % len(CYCLE)]
        self.set_mode(mode)
        return mode

    @property
    def dry_run(self) -> bool:
        return self.agent.teps.dry_run

    def set_dry_run(self, on: bool) -> None:
        self.agent.teps.dry_run = on

    @property
    def can_preview(self) -> bool:
        """Commands can run in an overlay and show their changes before they are applied."""
        return self.agent.teps.sandbox.overlay

    @property
    def allow_dangerous(self) -> bool:
        return self.agent.teps.policy.allow_dangerous

    def set_allow_dangerous(self, on: bool) -> None:
        self.agent.teps.policy.allow_dangerous = on

    # ---- permissions ------------------------------------------------------------------------------
    def grants(self) -> list[tuple[int, str]]:
        """This session's `a` grants, numbered as /revoke takes them."""
        return [(n, grant.label) for n, grant in self.agent.teps.policy.grants.list()]

    def revoke(self, number: int) -> str:
        """Remove a session grant; returns its label. Raises LacaError naming the valid numbers."""
        from framework_core.policy.kinds import PolicyError

        try:
            return self.agent.teps.policy.grants.revoke(number).label
        except PolicyError as exc:
            raise LacaError(str(exc)) from None

    def permissions_text(self) -> str:
        from framework_core.core.permissions_text import describe_state

        return describe_state(self.agent.teps.policy, self.tools())

    def add_rules(self, rules: list[Any]) -> None:
        """Rules for this run only (--allow)."""
        self.agent.teps.policy.rules.rules += rules

    # ---- undo --------------------------------------------------------------------------------------
    def changes(self) -> list["EntryInfo"]:
        """What /undo can revert, newest first."""
        return self.agent.teps.undo.entries()

    def undo_notices(self) -> list[str]:
        """What the undo store found at start (damaged records set aside, interrupted applies), said once."""
        return self.agent.teps.undo.take_notices()

    def undo(self, count: int, *, force: bool = False) -> "RevertResult":
        return self.agent.teps.undo.revert(count, force=force)

    # ---- tools, MCP, context -------------------------------------------------------------------------
    def tools(self) -> list["ToolSpec"]:
        return list(self.agent.teps.registry.all())

    def tool(self, name: str) -> "ToolSpec | None":
        """A tool by its name, or by its own name on its MCP server when only one server has a tool so named."""
        found = self.agent.teps.registry.get(name)
        if found is None:
            by_remote = [s for s in self.tools() if s.remote_name == name]
            found = by_remote[0] if len(by_remote) == 1 else None
        return found

    def mcp_status(self) -> list["ServerStatus"] | None:
        """The MCP servers' state, or None when none is configured."""
        return self.agent.mcp.status() if self.agent.mcp is not None else None

    def mcp_restart(self, name: str) -> None:
        """Start an MCP server again (a new browser sign-in when it asks for one and has no valid tokens)."""
        if self.agent.mcp is not None:
            self.agent.mcp.restart(name)

    def mcp_logout(self, name: str) -> tuple[list[Path], Path]:
        """Forget an MCP server's stored sign-in and stop it: the files deleted, and the folder tokens live in."""
        mcp = self.agent.mcp
        if mcp is None:
            raise LacaError("no MCP servers are configured")
        gone = mcp.oauth.forget(name)
        mcp.stop_server(name, f"signed out; /mcp login {name} signs in again")
        return gone, mcp.oauth.token_folder()

    def on_mcp_notice(self, poke: Callable[[], None]) -> None:
        """Call `poke` (from any thread) when an MCP server has something to say: failed, restarted, new tools."""
        if self.agent.mcp is not None:
            self.agent.mcp.on_notice = poke

    def has_mcp_notices(self) -> bool:
        return self.agent.mcp is not None and self.agent.mcp.has_notices()

    def take_mcp_notices(self) -> list["Notice"]:
        """What MCP servers said since last asked, each said once (here or with the next request)."""
        from framework_core.core.events import Notice

        if self.agent.mcp is None:
            return []
        # the MCP manager's levels are Notice's: info, warning, error
        return [Notice(level, text) for level, text in self.agent.mcp.take_notices()]  # type: ignore[arg-type]

    def documents(self) -> list["LoadedDocument"]:
        return list(self.agent.dcm.documents())

    def reload_workspace_instructions(self) -> None:
        self.agent.dcm.reload_workspace_instructions()

    def usage_report(self) -> str:
        from framework_core.core.compaction import usage_report

        return usage_report(self.agent)

    def compact(self) -> str:
        from framework_core.core.compaction import compact

        return compact(self.agent, force=True)

    def last_turn_usage(self) -> tuple["Usage", int] | None:
        """The last turn's tokens and requests (compaction's included), as /tokens counts them."""
        turns = self.agent.session.ledger.turns
        return (turns[-1].usage, turns[-1].requests) if turns else None

    def session_usage(self) -> tuple["Usage", int]:
        """The session's tokens and requests (more than this process's after --continue)."""
        return self.agent.session.usage, self.agent.session.ledger.requests

    def cost(self, usage: "Usage") -> float | None:
        """What `usage` cost at the active model's prices, or None where they are unknown."""
        return self.agent.caps.prices.cost(usage)

    @property
    def ui(self) -> "UiSettings":
        return self.agent.config.ui

    @property
    def screen_output_lines(self) -> int:
        return self.agent.config.teps_settings.screen_output_lines

    # ---- status ------------------------------------------------------------------------------------
    def status(self) -> Status:
        agent = self.agent
        sandbox = agent.teps.sandbox
        return Status(
            provider=agent.provider_name, model=agent.provider.model, persona=agent.persona_id,
            mode=agent.teps.mode, dry_run=agent.teps.dry_run, allow_dangerous=agent.teps.policy.allow_dangerous,
            not_saved=bool(agent.session.write_error), no_api_key=agent.key_problem is not None,
            sandbox=sandbox.describe(), sandbox_active=sandbox.active, context_percent=self._context_percent(),
            totals=status_total(agent.session.usage, agent.caps.prices), session_id=agent.session.session_id,
            auto_ready=self.auto_ready)

    def _context_percent(self) -> float:
        """Percent of the window the next request takes (the measure /tokens and compaction use), computed again
        only when the conversation or the model changed: the status line redraws on every key."""
        from framework_core.core.compaction import context_used

        agent = self.agent
        last = agent.session.last_usage
        key = (id(agent.session), len(agent.session.messages), agent.context_mark, last.context_tokens,
               last.output_tokens, agent.provider_name, agent.provider.model)
        if self._context_cache is None or self._context_cache[0] != key:
            self._context_cache = (key, context_used(agent))
        window = agent.caps.context_window
        return 100 * self._context_cache[1] / window if window else 0.0


"""The one object a front end talks to.

The REPL, one-shot `-p` and any later front end hold a `Facade` and nothing else of the core: every action a user
can take (a turn, a switch of provider, model, persona or mode, dry run, allow-dangerous, grants, undo, a new
session, closing) is one call here, and what the status line shows is one frozen `Status` record. Front ends never
reach into the agent's parts (TEPS, the session, the policy, the registry, MCP); a test in the suite checks that
`ui/` does not. The app layer builds the façade (`app/wiring.py`) and hands in what only it can make (a new
session for /clear). The agent is private here: each operation goes to the part that owns it (the turn loop,
TEPS, the active model, MCP) through that part's public methods.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from framework_core.core.facade_mcp import McpCatalogFacade
from framework_core.core.status import Closed, Status
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


__all__ = ["Closed", "Facade", "Status"]  # the records front ends read come from here


class Facade(McpCatalogFacade):
    """Everything a front end may do with a conversation."""

    def __init__(self, agent: "Agent", *, workspace: Path,
                 new_session: Callable[["Agent"], "MessageManager"],
                 reopen: Callable[["Agent", str], tuple["MessageManager", list[str], dict]] | None = None) -> None:
        self._agent = agent
        self._teps = agent.teps
        self._llm = agent.llm
        self._mcp = agent.mcp
        self._dcm = agent.dcm
        self._config = agent.config
        self.workspace = workspace
        self._new_session = new_session
        self._reopen = reopen
        self._closed: Closed | None = None

    # ---- the conversation ------------------------------------------------------------------------
    def turn(self, text: str) -> "TurnOutcome":
        """One user message and everything it leads to (tool calls, compaction); the history stays valid."""
        return self._agent.run_turn(text)

    def run_user_command(self, command: str) -> "ToolResult":
        """`!cmd`: the user's own command, sandboxed as an approved one; the model sees it with the next message."""
        return self._agent.run_user_command(command)

    def note_for_model(self, text: str) -> None:
        self._agent.note_for_model(text)

    def repair_history(self) -> None:
        """After an interruption outside a turn: every tool call answered, the history valid for the provider."""
        self._agent.repair_history()

    def new_session(self) -> tuple[str, str | None]:
        """/clear: close this session (kept, resumable) and go on in a new one with the same tools, grants, mode
        and undo store. Returns the old session's id and why it could not be saved (None when it was)."""
        closed = self._agent.close_session()
        self._agent.replace_session(self._new_session(self._agent))
        self._teps.forget_reads()
        return closed.session_id, closed.problem

    def resume_session(self, ref: str) -> tuple[Closed, list[str]]:
        """/resume ID: close this session (kept, resumable) and go on in an earlier one of this workspace, with the
        provider, model and persona it last used. Raises ConfigError for an unknown or ambiguous id. Returns how
        closing went and what to say (the resumed session's warnings, a provider that cannot be used now)."""
        from framework_core.errors import ConfigError

        if self._reopen is None:
            raise ConfigError("this front end cannot switch sessions")
        session, notes, meta = self._reopen(self._agent, ref.strip())
        closed = self._agent.close_session()
        self._agent.replace_session(session)
        self._teps.forget_reads()
        return closed, notes + self.adopt(meta)

    def recap(self) -> list[str]:
        """The last exchange of the conversation: what the user asked and how the reply began."""
        from framework_core.core.session import recap

        return recap(self._agent.session)

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
            self._closed = self._agent.close()
        return self._closed

    @property
    def session_id(self) -> str:
        return self._agent.session.session_id

    @property
    def memory_only(self) -> str | None:
        """Why the session is kept in memory only (the disk refused it), or None."""
        return self._agent.session.memory_only

    # ---- provider, model, persona ----------------------------------------------------------------
    @property
    def provider_name(self) -> str:
        return self._llm.name

    @property
    def model(self) -> str:
        return self._llm.settings.model

    @property
    def provider_type(self) -> str:
        return self._llm.settings.type

    @property
    def key_env_var(self) -> str | None:
        return self._llm.settings.api_key_env_var

    def providers(self) -> list[str]:
        return self._llm.providers()

    def configured_models(self) -> list[str]:
        return list(self._llm.settings.models)

    def set_provider(self, name: str, model: str | None = None) -> None:
        self._agent.set_provider(name, model)

    def set_model(self, model: str) -> list[str]:
        """Switch the model; returns the notes about its profile (each shown once in the session)."""
        self._agent.set_model(model)
        return self._agent.take_model_notes()

    def model_description(self) -> str:
        return self._llm.describe()

    def server_models(self, wait_s: float = 0.0) -> list[str] | str | None:
        """The models the provider's server offers, an error message, or None while still fetching."""
        return self._llm.server_models(wait_s)

    @property
    def persona(self) -> str:
        return self._agent.persona_id

    def personas(self) -> list[str]:
        return self._dcm.persona_ids()

    def set_persona(self, persona_id: str) -> None:
        self._agent.set_persona(persona_id)

    def warm_up(self, *, provider: bool = True) -> None:
        """Get the tools ready in the background and, with `provider`, import the provider's SDK (see
        `Agent.warm_up`)."""
        self._agent.warm_up(provider=provider)

    # ---- modes ------------------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return self._teps.mode

    def set_mode(self, mode: str) -> None:
        self._agent.set_mode(mode)

    @property
    def auto_ready(self) -> bool:
        """Auto mode runs commands without asking only in a complete sandbox (Sandbox.is_complete())."""
        return self._teps.auto_ready

    def next_mode(self) -> str:
        """Shift-Tab: ask → accept-edits → plan → auto → ask. Returns the new mode."""
        from framework_core.core.fate import CYCLE

        mode = CYCLE[(CYCLE.index(self.mode) + 1) % len(CYCLE)]
        self.set_mode(mode)
        return mode

    @property
    def dry_run(self) -> bool:
        return self._teps.dry_run

    def set_dry_run(self, on: bool) -> None:
        self._teps.dry_run = on

    @property
    def can_preview(self) -> bool:
        """Commands can run in an overlay and show their changes before they are applied."""
        return self._teps.can_preview

    @property
    def allow_dangerous(self) -> bool:
        return self._teps.allow_dangerous

    def set_allow_dangerous(self, on: bool) -> None:
        self._teps.allow_dangerous = on

    # ---- permissions ------------------------------------------------------------------------------
    def grants(self) -> list[tuple[int, str]]:
        """This session's `a` grants, numbered as /revoke takes them."""
        return self._teps.grants()

    def revoke(self, number: int) -> str:
        """Remove a session grant; returns its label. Raises LacaError naming the valid numbers."""
        return self._teps.revoke(number)

    def permissions_text(self) -> str:
        return self._teps.permissions_text()

    def add_rules(self, rules: list[Any]) -> None:
        """Rules for this run only (--allow)."""
        self._teps.add_rules(rules)

    # ---- undo --------------------------------------------------------------------------------------
    def changes(self) -> list["EntryInfo"]:
        """What /undo can revert, newest first."""
        return self._teps.changes()

    def undo_notices(self) -> list[str]:
        """What the undo store found at start (damaged records set aside, interrupted applies), said once."""
        return self._teps.undo_notices()

    def undo(self, count: int, *, force: bool = False) -> "RevertResult":
        return self._teps.revert(count, force=force)

    # ---- tools, MCP, context -------------------------------------------------------------------------
    def tools(self) -> list["ToolSpec"]:
        return self._teps.tools()

    def tool(self, name: str) -> "ToolSpec | None":
        """A tool by its name, or by its own name on its MCP server when only one server has a tool so named."""
        return self._teps.tool(name)

    def mcp_status(self) -> list["ServerStatus"] | None:
        """The MCP servers' state, or None when none is configured."""
        return self._mcp.status() if self._mcp is not None else None

    def mcp_restart(self, name: str) -> None:
        """Start an MCP server again (a new browser sign-in when it asks for one and has no valid tokens)."""
        if self._mcp is not None:
            self._mcp.restart(name)

    def mcp_logout(self, name: str) -> tuple[list[Path], Path]:
        """Forget an MCP server's stored sign-in and stop it: the files deleted, and the folder tokens live in."""
        if self._mcp is None:
            raise LacaError("no MCP servers are configured")
        gone = self._mcp.oauth.forget(name)
        self._mcp.stop_server(name, f"signed out; /mcp login {name} signs in again")
        return gone, self._mcp.oauth.token_folder()

    def on_mcp_notice(self, poke: Callable[[], None]) -> None:
        """Call `poke` (from any thread) when an MCP server has something to say: failed, restarted, new tools."""
        if self._mcp is not None:
            self._mcp.on_notice = poke

    def has_mcp_notices(self) -> bool:
        return self._mcp is not None and self._mcp.has_notices()

    def take_mcp_notices(self) -> list["Notice"]:
        """What MCP servers said since last asked, each said once (here or with the next request)."""
        from framework_core.core.events import Notice

        if self._mcp is None:
            return []
        # the MCP manager's levels are Notice's: info, warning, error
        return [Notice(level, text) for level, text in self._mcp.take_notices()]  # type: ignore[arg-type]

    def documents(self) -> list["LoadedDocument"]:
        return list(self._dcm.documents())

    def reload_workspace_instructions(self) -> None:
        self._dcm.reload_workspace_instructions()

    def usage_report(self) -> str:
        return self._agent.usage_report()

    def compact(self) -> str:
        return self._agent.compact()

    def last_turn_usage(self) -> tuple["Usage", int] | None:
        """The last turn's tokens and requests (compaction's included), as /tokens counts them."""
        return self._agent.session.ledger.last()

    def session_usage(self) -> tuple["Usage", int]:
        """The session's tokens and requests (more than this process's after --continue)."""
        session = self._agent.session
        return session.usage, session.ledger.requests

    def cost(self, usage: "Usage") -> float | None:
        """What `usage` cost at the active model's prices, or None where they are unknown."""
        return self._llm.cost(usage)

    @property
    def ui(self) -> "UiSettings":
        return self._config.ui

    @property
    def screen_output_lines(self) -> int:
        return self._teps.settings.screen_output_lines

    # ---- status ------------------------------------------------------------------------------------
    def status(self) -> Status:
        return self._agent.status()

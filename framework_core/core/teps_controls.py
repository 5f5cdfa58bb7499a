"""What a session reads and changes of TEPS besides running calls: allow-dangerous, grants and rules, undo,
the tools, the sandbox's state, and the one result budget. `TEPSEngine` (teps.py) inherits it, so the façade
asks TEPS instead of reaching into its policy, undo store, registry or sandbox."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from framework_core.errors import LacaError

if TYPE_CHECKING:
    from framework_core.lial_core import ToolResult
    from framework_core.policy.decide import PolicyState
    from framework_core.sandbox.sandbox import Sandbox
    from framework_core.sandbox.undo_store import EntryInfo, RevertResult, UndoStore
    from framework_core.tools.base import ToolContext, ToolRegistry, ToolSpec
    from framework_core.tools.result_budget import Saver


class TepsControls:
    policy: "PolicyState"
    registry: "ToolRegistry"
    sandbox: "Sandbox"
    undo: "UndoStore"
    context: "ToolContext"

    # ---- permissions ---------------------------------------------------------------------------------
    @property
    def allow_dangerous(self) -> bool:
        return self.policy.allow_dangerous

    @allow_dangerous.setter
    def allow_dangerous(self, on: bool) -> None:
        self.policy.allow_dangerous = on

    def grants(self) -> list[tuple[int, str]]:
        """This session's `a` grants, numbered as /revoke takes them."""
        return [(n, grant.label) for n, grant in self.policy.grants.list()]

    def revoke(self, number: int) -> str:
        """Remove a session grant; returns its label. Raises LacaError naming the valid numbers."""
        from framework_core.policy.kinds import PolicyError

        try:
            return self.policy.grants.revoke(number).label
        except PolicyError as exc:
            raise LacaError(str(exc)) from None

    def add_rules(self, rules: list[Any]) -> None:
        """Rules for this run only (--allow)."""
        self.policy.rules.rules += rules

    def permissions_text(self) -> str:
        from framework_core.core.permissions_text import describe_state

        return describe_state(self.policy, self.tools())

    # ---- undo ----------------------------------------------------------------------------------------
    def changes(self) -> list["EntryInfo"]:
        """What /undo can revert, newest first."""
        return self.undo.entries()

    def revert(self, count: int, *, force: bool = False) -> "RevertResult":
        return self.undo.revert(count, force=force)

    def undo_notices(self) -> list[str]:
        """What the undo store found at start (damaged records set aside, interrupted applies), said once."""
        return self.undo.take_notices()

    # ---- tools and the sandbox -----------------------------------------------------------------------
    def forget_reads(self) -> None:
        """A new conversation's model has read no file yet: the edit tools ask it to read first."""
        self.context.reads.clear()

    def tools(self) -> list["ToolSpec"]:
        return list(self.registry.all())

    def tool(self, name: str) -> "ToolSpec | None":
        """A tool by its name, or by its own name on its MCP server when only one server has a tool so named."""
        found = self.registry.get(name)
        if found is None:
            by_remote = [s for s in self.registry.all() if s.remote_name == name]
            found = by_remote[0] if len(by_remote) == 1 else None
        return found

    @property
    def auto_ready(self) -> bool:
        """Auto mode runs commands without asking only in a complete sandbox (Sandbox.is_complete())."""
        return self.sandbox.is_complete()

    @property
    def can_preview(self) -> bool:
        """Commands can run in an overlay and show their changes before they are applied."""
        return self.sandbox.overlay

    def sandbox_state(self) -> tuple[str, bool]:
        """The sandbox profile in force (or why there is none), and whether one is active."""
        return self.sandbox.describe(), self.sandbox.active

    # ---- the result budget ---------------------------------------------------------------------------
    def saver(self, prefix: str) -> "Saver | None":
        """Saves a cut text's whole where every cut result goes (the session's folder), for a later readFile."""
        return self.context.saver(prefix)

    def bounded(self, result: "ToolResult") -> "ToolResult":
        """`result` within the one result budget as the model reads it (tools/result_budget.py), the whole of
        a cut text saved for paging. Every result passes here: a model's calls and `!cmd` alike."""
        from framework_core.tools.result_budget import bound_result

        return bound_result(result, self.context.result_budget(), self.saver(f"{result.tool_name}-result"))

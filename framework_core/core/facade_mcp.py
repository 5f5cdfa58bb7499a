"""The part of the façade for what MCP servers offer besides tools: resources (`@server:uri`) and prompts
(`/mcp__server__prompt`). `Facade` inherits it; front ends see one object."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from framework_core.errors import LacaError

if TYPE_CHECKING:
    from framework_core.teps import TEPSEngine
    from framework_core.tools.mcp import McpManager
    from framework_core.tools.mcp_resources import PromptInfo, PromptText, ResourceInfo


class McpCatalogFacade:
    _mcp: "McpManager | None"
    _teps: "TEPSEngine"

    def mcp_resources(self) -> list["ResourceInfo"]:
        """The resources (and URI templates) ready MCP servers list, for `@server:uri`."""
        return self._mcp.resources.resources() if self._mcp is not None else []

    def read_mcp_resource(self, server: str, uri: str) -> dict[str, Any]:
        """A resource as the model would get it: {"content": text within the output budget, "cut"?, "images"?}.
        Raises LacaError with the reason it could not be read."""
        if self._mcp is None:
            raise LacaError("no MCP servers are configured")
        budget = self._teps.settings.output_budget_chars
        return self._mcp.resources.read(server, uri, budget=budget)

    def mcp_prompts(self) -> list["PromptInfo"]:
        """The prompts ready MCP servers offer: slash commands `/mcp__server__prompt`."""
        return self._mcp.resources.prompts() if self._mcp is not None else []

    def get_mcp_prompt(self, server: str, name: str, args: dict[str, str]) -> "PromptText":
        """A server's prompt filled with `args`, as the text of one user message. Raises LacaError."""
        if self._mcp is None:
            raise LacaError("no MCP servers are configured")
        return self._mcp.resources.get_prompt(server, name, args)

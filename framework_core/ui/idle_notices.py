"""MCP notices said while the prompt waits: printed above it, the line being typed kept as it was.

The MCP client queues what happens to its servers (a server failing or restarting, a changed tool list, a
logged error) and calls its `on_notice` hook from its own thread. Here that hook asks the prompt to redraw;
before the redraw, on the prompt's own loop, the queued notices are taken and printed through prompt_toolkit's
`in_terminal` (which hides the prompt, lets the output scroll above it, and draws it again with what was
typed). Notices are taken once: those that come while no prompt runs (during a turn) are said by the agent
at its next request, or here as soon as the next prompt is drawn.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable

from framework_core.events import Notice

if TYPE_CHECKING:
    from framework_core.core import Agent
    from framework_core.tools.mcp import McpManager


class IdleNotices:
    """Ties one prompt application to the MCP client of whichever agent is current (it is built later)."""

    def __init__(self, app: Any, agent: Callable[[], "Agent | None"], show: Callable[[Notice], None]) -> None:
        self.app = app
        self._agent = agent  # must not block: the agent may still be starting
        self._show = show
        self._mcp: McpManager | None = None
        self._task: asyncio.Task[None] | None = None
        app.before_render += self._before_render

    def _watch(self) -> "McpManager | None":
        """The current agent's MCP client, with our hook set on it (moved when the agent changes)."""
        agent = self._agent()
        mcp = getattr(agent, "mcp", None) if agent is not None else None
        if mcp is not self._mcp:
            if self._mcp is not None and self._mcp.on_notice == self._poke:
                self._mcp.on_notice = None
            self._mcp = mcp
            if mcp is not None:
                mcp.on_notice = self._poke
        return mcp

    def _poke(self) -> None:
        """Any thread: ask for a redraw (nothing happens while no prompt runs)."""
        self.app.invalidate()

    def _before_render(self, app: Any) -> None:
        """On the prompt's loop, before each redraw: say what is queued, once."""
        mcp = self._watch()
        if mcp is None or app.is_done or (self._task is not None and not self._task.done()):
            return
        if mcp.has_notices():
            self._task = app.create_background_task(self._say(mcp))

    async def _say(self, mcp: "McpManager") -> None:
        from prompt_toolkit.application import in_terminal

        async with in_terminal():
            for level, text in mcp.take_notices():  # taken only once the terminal is ours: a cancel loses none
                self._show(Notice(level, text))  # type: ignore[arg-type]


def watch_idle_notices(app: Any, agent: Callable[[], "Agent | None"], show: Callable[[Notice], None]) -> IdleNotices:
    """Say MCP notices above `app`'s prompt while it waits for input."""
    return IdleNotices(app, agent, show)

"""MCP notices that cannot wait for the next request (a sign-in address), shown above the prompt at once."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from framework_core.ui.repl import Repl


def watch_mcp_news(repl: "Repl") -> None:
    """While the prompt waits, an urgent MCP notice is drawn above it; during a turn it waits for the next
    request, as every MCP notice does."""
    agent = repl._agent
    mcp = agent.mcp if agent is not None else None
    if mcp is None:
        return

    def show() -> None:  # on the prompt's loop
        from prompt_toolkit.application import run_in_terminal

        from framework_core.events import Notice

        def draw() -> None:
            for level, text in mcp.take_notices():
                repl.renderer(Notice(level, text))  # type: ignore[arg-type]
        run_in_terminal(draw)

    def news() -> None:  # on the MCP loop
        session = repl._session
        app = session.app if session is not None else None
        loop = getattr(app, "loop", None)
        if app is not None and app.is_running and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(show)
    mcp.watch_news(news)

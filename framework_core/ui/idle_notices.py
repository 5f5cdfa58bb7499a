"""MCP notices said while the prompt waits: printed above it, the line being typed kept as it was.

The MCP client queues what happens to its servers (a server failing or restarting, a changed tool list, a
logged error) and calls its `on_notice` hook from its own thread. Here that hook asks the prompt to redraw;
before the redraw, on the prompt's own loop, the queued notices are taken and printed above the prompt (it is
erased, the output scrolls above it, and it is drawn again with what was typed). Notices are taken once: those
that come while no prompt runs (during a turn) are said by the agent at its next request, or here as soon as
the next prompt is drawn.

This is prompt_toolkit's `in_terminal` without its switch of the terminal to cooked mode: printing needs no
input, and a key typed while the terminal is cooked is echoed by the terminal itself and its Enter turned
into a newline (ICRNL), so an Enter pressed as a notice printed added a line instead of sending the message.
Nothing awaits between erasing and redrawing, so no key is read meanwhile: it waits in the terminal, raw.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # only named in annotations: the REPL imports this module before its prompt
    from framework_core.core.events import Notice
    from framework_core.core.facade import Facade


class IdleNotices:
    """Ties one prompt application to the MCP client of the session's façade (it is built later)."""

    def __init__(self, app: Any, facade: Callable[[], "Facade | None"], show: Callable[[Notice], None]) -> None:
        self.app = app
        self._facade = facade  # must not block: the session may still be starting
        self._show = show
        self._watched: Facade | None = None
        self._task: asyncio.Task[None] | None = None
        app.before_render += self._before_render

    def _watch(self) -> "Facade | None":
        """The façade once it exists, with our hook set on its MCP client (once)."""
        facade = self._facade()
        if facade is not None and facade is not self._watched:
            self._watched = facade
            facade.on_mcp_notice(self._poke)
        return facade

    def _poke(self) -> None:
        """Any thread: ask for a redraw (nothing happens while no prompt runs)."""
        self.app.invalidate()

    def _before_render(self, app: Any) -> None:
        """On the prompt's loop, before each redraw: say what is queued, once."""
        facade = self._watch()
        if facade is None or app.is_done or (self._task is not None and not self._task.done()):
            return
        if facade.has_mcp_notices():
            self._task = app.create_background_task(self._say(facade))

    async def _say(self, facade: "Facade") -> None:
        app = self.app
        if app.output.responds_to_cpr:
            await app.renderer.wait_for_cpr_responses()  # a late answer must not land inside the notices
        app.renderer.erase()
        try:
            for notice in facade.take_mcp_notices():  # taken only once the prompt is erased: a cancel loses none
                self._show(notice)
        finally:
            app.renderer.reset()
            app.invalidate()  # drawn again below the notices, with what was typed


def watch_idle_notices(app: Any, facade: Callable[[], "Facade | None"],
                       show: Callable[[Notice], None]) -> IdleNotices:
    """Say MCP notices above `app`'s prompt while it waits for input."""
    return IdleNotices(app, facade, show)

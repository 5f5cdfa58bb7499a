"""One MCP tool call, driven from the main thread: progress lines, the server's questions, errors as results.

The call itself runs on the MCP loop; the main thread waits on a queue that carries the call's progress
notifications (shown as output lines), any request of the server for user input (answered here, where the
terminal is), and the call's end. Ctrl-C cancels the call (the SDK tells the server), never the server.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import queue
import time
from typing import TYPE_CHECKING, Any

from framework_core.errors import ToolError
from framework_core.tools.mcp_content import EXTENSIONS, convert
from framework_core.tools.mcp_names import tool_name
from framework_core.tools.mcp_state import _Server, describe
from framework_core.tools.result_budget import DEFAULT_BUDGET, bound, budget_for_window, save_bytes

if TYPE_CHECKING:
    from pathlib import Path

    from framework_core.tools.base import ToolContext
    from framework_core.tools.mcp import McpManager

GRACE_S = 5.0  # beyond the SDK's own request timeout, before the main thread stops waiting
#: A call that keeps reporting progress may run this many times its `call_timeout_s` in all (the timeout is the
#: longest silence: each progress notification starts it again, as Claude Code's MCP client does).
PROGRESS_EXTENDS = 10
_SDK_CLOSED = "Connection closed"  # the SDK's own message for a connection that ended under a request


class CallRunner:
    def __init__(self, manager: "McpManager") -> None:
        self.manager = manager
        self._queue: queue.SimpleQueue[tuple[str, Any]] | None = None

    def run(self, server: _Server, remote: str, args: dict[str, Any], ctx: "ToolContext | None",
            retried: bool = False) -> dict[str, Any]:
        conn, timeout = server.conn, server.settings.call_timeout_s
        q: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()

        async def progress(done: float, total: float | None, message: str | None) -> None:
            q.put(("progress", progress_text(done, total, message)))

        self._queue = q  # before the call starts: the server may ask for input at once
        most = timeout * PROGRESS_EXTENDS  # the SDK's bound; the silence between answers is bounded in _wait
        future = asyncio.run_coroutine_threadsafe(conn.call(remote, args, most, progress), self.manager.loop)
        future.add_done_callback(lambda _: q.put(("done", None)))
        try:
            result = self._wait(future, q, ctx, timeout, most + GRACE_S)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise ToolError(self._timed_out(server, remote, timeout)) from None
        except KeyboardInterrupt:
            future.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - every failure becomes a result the model can read
            if not retried and self._links_opened(exc):  # the server asked for them first: the call goes again
                return self.run(server, remote, args, ctx, retried=True)
            raise self._failure(server, remote, exc, timeout) from None
        finally:
            self._queue = None
        return self._result(server, remote, result, ctx)

    def _wait(self, future: Any, q: queue.SimpleQueue[tuple[str, Any]], ctx: "ToolContext | None", quiet: float,
              most: float) -> Any:
        """The call's result. Raises TimeoutError after `quiet` seconds without progress (a question the user is
        answering does not count), or after `most` seconds in all."""
        start = time.monotonic()
        deadline, last = start + quiet, ""
        while True:
            remaining = min(deadline, start + most) - time.monotonic()
            if remaining <= 0:
                raise concurrent.futures.TimeoutError()
            try:
                kind, payload = q.get(timeout=remaining)
            except queue.Empty:
                continue
            if kind == "done":
                return future.result()
            if kind == "progress":
                deadline = time.monotonic() + quiet
                if payload != last and ctx is not None and ctx.on_output is not None:
                    ctx.on_output(payload + "\n")
                    last = payload
            elif kind == "elicit":
                self._answer(*payload)
                deadline = time.monotonic() + quiet

    def _result(self, server: _Server, remote: str, result: Any, ctx: "ToolContext | None") -> dict[str, Any]:
        converted = convert(result.content, result.structured_content)
        if server.catalog is not None and server.catalog.has_resources and \
                any(getattr(c, "type", "") == "resource_link" for c in result.content or []):
            converted.text += f"\n(a linked resource is read with {tool_name(server.name, 'readMcpResource')})"
        configured = (server.settings.output_budget_chars
                      or (ctx.settings.output_budget_chars if ctx else DEFAULT_BUDGET))
        save = ctx.saver("mcp-result") if ctx is not None else self.manager.save  # readable by readFile
        bounded = bound(converted.text, budget_for_window(configured, self.manager.window()), save)
        if result.is_error:
            details = bounded.text or "(no details)"
            raise ToolError(f"{remote} on MCP server '{server.name}' reported an error: {details}")
        data: dict[str, Any] = {"content": bounded.text}
        if bounded.cut:
            data["cut"] = "cut: " + bounded.summary()
        if converted.images:
            folder = ctx.output_folder() if ctx is not None else self.manager.outputs_dir
            data["images"] = [keep_image(image, folder) for image in converted.images]
        return data

    def _failure(self, server: _Server, remote: str, exc: Exception, timeout: float) -> ToolError:
        from mcp.shared.exceptions import MCPError
        from mcp_types.jsonrpc import CONNECTION_CLOSED, REQUEST_TIMEOUT
        from pydantic import ValidationError

        lost = server.lost is not None and server.lost.is_set()
        if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED and str(exc.error.message) == _SDK_CLOSED:
            lost = True
        if lost:
            self.manager.connection_lost(server)
            return ToolError(f"MCP server '{server.name}' lost its connection during the call to {remote} "
                             f"({describe(exc, server)}); it is being restarted. The call may or may not have "
                             f"taken effect. See {server.log_path}")
        if isinstance(exc, MCPError) and exc.code == REQUEST_TIMEOUT:
            return ToolError(self._timed_out(server, remote, timeout))
        if links := url_elicitations(exc):
            wanted = "; ".join(f"{link.url} ({link.message})" for link in links)
            return ToolError(f"{remote} on MCP server '{server.name}' did not run: it needs the user to open "
                             f"{wanted} first, and that was not done. Ask the user to open it, then call again.")
        if isinstance(exc, MCPError):
            return ToolError(f"{remote} on MCP server '{server.name}' failed: {exc.error.message} "
                             f"(JSON-RPC error {exc.code})")
        if isinstance(exc, ValidationError):
            err = exc.errors()[0]
            return ToolError(f"{remote} on MCP server '{server.name}' answered with something that is not a valid "
                             f"MCP result ({'.'.join(map(str, err['loc']))}: {err['msg']})")
        return ToolError(f"{remote} on MCP server '{server.name}' failed: {describe(exc, server)}")

    @staticmethod
    def _timed_out(server: _Server, remote: str, timeout: float) -> str:
        return (f"{remote} on MCP server '{server.name}' did not answer within {timeout:g} s (progress notifications "
                f"extend that, up to {timeout * PROGRESS_EXTENDS:g} s in all); the call was cancelled and the server "
                "keeps running (raise call_timeout_s in its config for longer calls)")

    def _links_opened(self, exc: Exception) -> bool:
        """A call refused until the user opens links (JSON-RPC -32042, URL elicitation required): asked here, on
        the main thread, as a server's request for input would be. True when the user opened every one."""
        links = url_elicitations(exc)
        if not links or self.manager.elicit is None:
            return False
        for link in links:
            try:
                answer = self.manager.elicit(link)
            except Exception:  # noqa: BLE001 - a broken form opens nothing
                return False
            if getattr(answer, "action", None) != "accept":
                return False
        return True

    # ---- a server's request for user input, answered on the main thread ------------------------------
    async def elicit_on_main(self, params: Any) -> Any:
        import mcp_types as types

        q, answer = self._queue, self.manager.elicit
        if q is None or answer is None:
            return types.ElicitResult(action="decline")
        reply: concurrent.futures.Future[Any] = concurrent.futures.Future()
        q.put(("elicit", (params, reply)))
        return await asyncio.wrap_future(reply)

    def _answer(self, params: Any, reply: concurrent.futures.Future[Any]) -> None:
        import mcp_types as types

        try:
            result = self.manager.elicit(params) if self.manager.elicit else None
        except Exception:  # noqa: BLE001 - a broken form declines; the call goes on
            result = None
        reply.set_result(result if result is not None else types.ElicitResult(action="decline"))


def url_elicitations(exc: BaseException) -> list[Any]:
    """The links (ElicitRequestURLParams) a call's JSON-RPC -32042 error asks the user to open; [] otherwise."""
    from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError
    from mcp_types import URL_ELICITATION_REQUIRED
    from pydantic import ValidationError

    if not isinstance(exc, MCPError) or exc.code != URL_ELICITATION_REQUIRED:
        return []
    try:
        return list(UrlElicitationRequiredError.from_error(exc.error).elicitations)
    except (ValidationError, ValueError, TypeError, AttributeError):
        return []


def keep_image(image: dict[str, str], folder: "Path | None") -> dict[str, str]:
    """The image with `path`: where it is saved in the session's folder, named in the note a model that takes
    no images reads instead (and in /last). Not saved (no folder, a full disk): no path."""
    if folder is None:
        return image
    try:
        path = save_bytes(folder, base64.b64decode(image["data"]), "mcp-image", EXTENSIONS.get(image["mime_type"], ""))
    except (OSError, ValueError):
        return image
    return {**image, "path": path}


def progress_text(done: float, total: float | None, message: str | None) -> str:
    amount = f"{100 * done / total:.0f}%" if total else f"{done:g}"
    return f"progress {amount}" + (f": {message}" if message else "")
